#!/usr/bin/env bash
# A corrupt frame pointer chain never crashes the traced program (issue
# 32): stack-demo's badfp command fires its event under sd_badfp, which
# hands sd_leaf a frame pointer that is unmapped (0xdeadbeef000), odd (1),
# or points at stack bytes of 0x41 (a chain of garbage inside the stack).
# With --call-graph fp (the checked walk) the program runs on and each
# stack ends where the chain breaks, after sd_leaf sd_badfp; with
# --call-graph dwarf (the CFI does not depend on %rbp) the stack is whole;
# either way the next event's stack is right again.  Also -O2 without
# frame pointers under fp: no garbage frame taken from the stack itself.
# And a handler on an alternate signal stack (sigaltstack) with a frame
# pointer into the unmapped gap between the heap and the stack: its stack
# is walked on the alternate stack only (fp), or whole (dwarf).
. "$(dirname "$0")/lib.sh"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"

# rec VARIANT MODE: record badfp then chain; the program's exit status
rec() {
	rm -f "$TMP/ff"
	mkfifo "$TMP/ff"
	"$UTRACE" record --call-graph "$2" -o "$TMP/$1-$2.dat" -- "$UTRACE_BUILD/tests/stack-demo-$1" \
		"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
	local r=$!
	printf 'badfp\nchain\nquit\n' > "$TMP/ff"
	wait "$r"
}

for m in fp dwarf; do
	check "$m: the program runs on through three corrupt chains (exit 0)" rec O2fp "$m"
	stacks "$TMP/O2fp-$m.dat" > "$TMP/$m.stacks"
	sed "s/^/# $m: /" "$TMP/$m.stacks"
	check "$m: four stacks, the three under sd_badfp from the call site" bash -c '
		[ "$(wc -l < "$1")" = 4 ] && [ "$(grep -c "^sd_leaf sd_badfp\( \|$\)" "$1")" = 3 ]' \
		_ "$TMP/$m.stacks"
	check "$m: the next event's stack is whole again" \
		bash -c 'sed -n 4p "$1" | grep -q "^sd_leaf sd_inner sd_middle sd_outer sd_chain main"' \
		_ "$TMP/$m.stacks"
done
check "fp: each corrupt chain ends the stack within a frame of sd_badfp" bash -c '
	[ "$(grep "^sd_leaf sd_badfp" "$1" | awk "NF > 3" | wc -l)" = 0 ]' _ "$TMP/fp.stacks"
check "dwarf: the corrupt frame pointer does not matter (sd_badfps main follow)" bash -c '
	[ "$(grep -c "^sd_leaf sd_badfp sd_badfps main" "$1")" = 3 ]' _ "$TMP/dwarf.stacks"
rec O2 fp
if sanitizer_build; then
	n=$((n + 1)); echo "ok $n # SKIP a sanitizer build: its programs keep frame pointers and instrumented frames"
else
check "fp on -O2 without frame pointers: runs, and no frame is an address of the stack" bash -c '
	"$0" script -i "$1" > "$2/o2.txt" && [ "$(grep -c "<user stack trace>" "$2/o2.txt")" = 4 ] &&
	! grep -Eq "^ => <00007ff[c-f]" "$2/o2.txt"' "$UTRACE" "$TMP/O2-fp.dat" "$TMP"
fi
for m in fp dwarf; do
	rm -f "$TMP/ff"
	mkfifo "$TMP/ff"
	"$UTRACE" record --call-graph "$m" -o "$TMP/alt-$m.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2fp" \
		"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
	r=$!
	printf 'altsig\nchain\nquit\n' > "$TMP/ff"
	check "$m: a handler on an alternate signal stack, a corrupt frame pointer: runs on" wait "$r"
	stacks "$TMP/alt-$m.dat" > "$TMP/alt-$m.stacks"
	sed "s/^/# altsig $m: /" "$TMP/alt-$m.stacks"
done
check "fp: the handler's stack from the call site, on the alternate stack" \
	bash -c 'sed -n 1p "$1" | grep -qx "sd_leaf sd_badfp"' _ "$TMP/alt-fp.stacks"
check "dwarf: the handler's stack through sd_on_altsig" \
	bash -c 'sed -n 1p "$1" | grep -q "^sd_leaf sd_badfp sd_on_altsig"' _ "$TMP/alt-dwarf.stacks"
done_testing
