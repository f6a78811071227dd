#!/usr/bin/env bash
# utrace record -g / --call-graph (issue 32): the stack of every event of
# tests/cli/stack-demo.c, from the traced call site out, printed by
# utrace script as the kernel prints a stack trace; fp on code with frame
# pointers (-O0, -O2 -fno-omit-frame-pointer), dwarf on -O2 without them,
# through a linked library, a dlopen()ed module and a signal handler; each
# distinct stack stored once, so a hot event with its stack costs at most
# twice the bytes of the event alone; bad options are refused.
. "$(dirname "$0")/lib.sh"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
DL="$UTRACE_BUILD/tests/libstack-dl.so"

# rec VARIANT OUT CMDS [RECORD-OPTIONS...]: record stack-demo-VARIANT
# running CMDS (one a line)
rec() {
	local v=$1 out=$2 cmds=$3
	shift 3
	rm -f "$TMP/ff" "$TMP/out"
	mkfifo "$TMP/ff"
	"$UTRACE" record "$@" -o "$out" -- "$UTRACE_BUILD/tests/stack-demo-$v" "$TMP/ff" "$TMP/out" \
		"$DL" > /dev/null 2> "$TMP/err" &
	local r=$!
	printf '%s\nquit\n' "$cmds" > "$TMP/ff"
	wait "$r"
}

check "bad options: a mode not fp/dwarf, a bad SIZE, no frames (129, one line each)" bash -c '
	"$0" record --call-graph lbr -- true 2> "$1/e1"; [ $? = 129 ] || exit 1
	"$0" record --call-graph dwarf,7 -- true 2> "$1/e2"; [ $? = 129 ] || exit 1
	"$0" record --max-stack 0 -- true 2> "$1/e3"; [ $? = 129 ] || exit 1
	"$0" record --call-graph lbr -p 1 2> "$1/e4"; [ $? = 129 ] || exit 1
	[ "$(cat "$1"/e[1-4] | wc -l)" = 4 ] && grep -q "fp or dwarf" "$1/e1"' "$UTRACE" "$TMP"

for v in O0 O2fp; do
	rec "$v" "$TMP/$v.dat" "$(printf 'chain\nchain\nsignal')" -g
	stacks "$TMP/$v.dat" > "$TMP/$v.stacks"
	sed "s/^/# $v: /" "$TMP/$v.stacks"
	check "-g on $v: each event has its stack, the chain exactly from the call site" bash -c '
		[ "$(wc -l < "$1")" = 3 ] &&
		sed -n 1p "$1" | grep -q "^sd_leaf sd_inner sd_middle sd_outer sd_chain main\( \|$\)" &&
		[ "$(sed -n 1p "$1")" = "$(sed -n 2p "$1")" ] &&
		sed -n 3p "$1" | grep -q "^sd_leaf sd_on_signal "' _ "$TMP/$v.stacks"
done
check "-g: the second occurrence of a stack is a reference (ftrace:stack_ref), not a copy" bash -c '
	"$0" script -i "$1" --fields > "$2/fields" &&
	[ "$(grep -c " stack: id=" "$2/fields")" = 2 ] && [ "$(grep -c " stack_ref: id=" "$2/fields")" = 1 ]' \
	"$UTRACE" "$TMP/O2fp.dat" "$TMP"

check "--json: ftrace:stack's caller[] holds its nr frames (a flexible array)" python3 -c '
import json, subprocess, sys
out = subprocess.run([sys.argv[1], "script", "-i", sys.argv[2], "--json"], capture_output=True,
                     text=True, check=True).stdout
defs = [json.loads(l)["fields"] for l in out.splitlines() if "\"ftrace:stack\"" in l]
sys.exit(not defs or any(len(d["caller"]) != d["nr"] or d["nr"] < 5 for d in defs))
' "$UTRACE" "$TMP/O2fp.dat"

rec O2 "$TMP/dw.dat" "$(printf 'chain\nlib\ndl\nsignal')" --call-graph dwarf
stacks "$TMP/dw.dat" > "$TMP/dw.stacks"
sed "s/^/# dwarf O2: /" "$TMP/dw.stacks"
check "--call-graph dwarf on -O2 without frame pointers: the program's chain" \
	bash -c 'sed -n 1p "$1" | grep -q "^sd_leaf sd_inner sd_middle sd_outer sd_chain main "' _ "$TMP/dw.stacks"
check "--call-graph dwarf: through a linked library" \
	bash -c 'sed -n 2p "$1" | grep -q "^sd_leaf sdlib_inner sdlib_outer main "' _ "$TMP/dw.stacks"
check "--call-graph dwarf: through a dlopen()ed module" \
	bash -c 'sed -n 3p "$1" | grep -q "^sd_leaf sddl_inner sddl_outer main "' _ "$TMP/dw.stacks"
check "--call-graph dwarf: from a signal handler, through the signal frame" \
	bash -c 'sed -n 4p "$1" | grep -Eq "^sd_leaf sd_on_signal .* sd_raise main( |$)"' _ "$TMP/dw.stacks"
check "--max-stack 3: three frames" bash -c '
	rm -f "$1/ff"; mkfifo "$1/ff"
	"$0" record --call-graph dwarf --max-stack 3 -o "$1/m.dat" -- "$2" "$1/ff" "$1/out" "$3" \
		> /dev/null 2>&1 & printf "chain\nquit\n" > "$1/ff"; wait $!
	"$0" script -i "$1/m.dat" > "$1/m.txt" && [ "$(grep -c "^ => " "$1/m.txt")" = 3 ] &&
	grep -A3 "<user stack trace>" "$1/m.txt" | grep -q "^ => sd_middle+"' \
	"$UTRACE" "$TMP" "$UTRACE_BUILD/tests/stack-demo-O2" "$DL"

# The bytes an event costs: (N events - 1 event) recordings, with and
# without -g (the symbol tables a -g recording carries are the same for 1
# event and for N).
rec O2fp "$TMP/p1.dat" "loop 1"
rec O2fp "$TMP/pn.dat" "loop 20000"
rec O2fp "$TMP/g1.dat" "loop 1" -g
rec O2fp "$TMP/gn.dat" "loop 20000" -g
p=$(( $(stat -c %s "$TMP/pn.dat") - $(stat -c %s "$TMP/p1.dat") ))
g=$(( $(stat -c %s "$TMP/gn.dat") - $(stat -c %s "$TMP/g1.dat") ))
echo "# 19999 events: $p bytes without stacks, $g with (ratio $(awk "BEGIN { printf \"%.2f\", $g / $p }"))"
# (within 1%: the pages, 4080 bytes of records each, end at other events)
check "a hot event with its stack: at most 2x the bytes of the event alone" [ "$g" -le $((2 * p + p / 100)) ]
done_testing
