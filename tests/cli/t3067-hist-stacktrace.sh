#!/usr/bin/env bash
# hist:keys=stacktrace (issue 32, issue 28 item 1): the kernel's stacktrace
# key, live (a trigger on a running stack-demo -O2, the stack unwound in
# the process at each event) and offline (utrace hist -i on a recording
# made with --call-graph dwarf): one entry per distinct call chain, printed
# as the kernel's hist file prints it ("{ stacktrace:", one frame a line
# "%pS", "} hitcount: N").
. "$(dirname "$0")/lib.sh"
mount_setup
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
DL="$UTRACE_BUILD/tests/libstack-dl.so"

# the table as the kernel prints it, libc's unnamed addresses as ADDR,
# the offsets (gcc's and clang's code differ) as OFF
cat > "$TMP/want" <<'W'
# event histogram
#
# trigger info: hist:keys=stacktrace:vals=hitcount:sort=hitcount:size=2048 [active]
#

{ stacktrace:
         sd_leaf+OFF
         sdlib_inner+OFF
         sdlib_outer+OFF
         main+OFF
         ADDR
         __libc_start_main+OFF
         _start+OFF
} hitcount:          1
{ stacktrace:
         sd_leaf+OFF
         sd_inner+OFF
         sd_middle+OFF
         sd_outer+OFF
         sd_chain+OFF
         main+OFF
         ADDR
         __libc_start_main+OFF
         _start+OFF
} hitcount:          2

Totals:
    Hits: 3
    Entries: 2
    Dropped: 0
W
norm() {
	sed -E 's/^( +)0x[0-9a-f]+$/\1ADDR/; s/\+0x[0-9a-f]+\/0x[0-9a-f]+$/+OFF/' "$@"
}
export -f norm

mkfifo "$TMP/ff"
"$UTRACE_BUILD/tests/stack-demo-O2" "$TMP/ff" "$TMP/out" "$DL" > /dev/null 2> "$TMP/demo.err" &
P=$!
pids+=("$P")
k=0
wait_traceable "$P" "$TMP/demo.err"
if ! "$UTRACE" trigger -p "$P" stackdemo:hit 'hist:keys=stacktrace' 2> "$TMP/err"; then
	check "live: the trigger is taken" false
else
	send chain
	send chain
	send lib
	check "live: one entry per call chain, as the kernel's hist file" bash -c '
		"$0" hist -p "$1" stackdemo:hit > "$2/live" && norm "$2/live" > "$2/live.n" &&
		diff -u "$2/want" "$2/live.n" >&2' "$UTRACE" "$P" "$TMP"
fi
echo quit > "$TMP/ff"
wait "$P"

rm -f "$TMP/ff"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph dwarf -o "$TMP/r.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2" \
	"$TMP/ff" "$TMP/out2" "$DL" > /dev/null 2> "$TMP/err" &
r=$!
printf 'chain\nchain\nlib\nquit\n' > "$TMP/ff"
wait "$r"
check "offline: utrace hist -i on a recording with stacks, the same table" bash -c '
	"$0" hist -i "$1/r.dat" stackdemo:hit "hist:keys=stacktrace" > "$1/off" &&
	norm "$1/off" > "$1/off.n" && diff -u "$1/want" "$1/off.n" >&2' "$UTRACE" "$TMP"
check "offline: keys=stacktrace,where: the stack beside another key" bash -c '
	"$0" hist -i "$1/r.dat" stackdemo:hit "hist:keys=where,stacktrace" > "$1/two" &&
	grep -c "^{ where:          1, stacktrace:$" "$1/two" | grep -qx 1 &&
	grep -c "^{ where:          2, stacktrace:$" "$1/two" | grep -qx 1' "$UTRACE" "$TMP"
done_testing
