#!/usr/bin/env bash
# utrace record -g -p PID (issue 32): a running program's events carry
# their call stacks while the recorder is attached (its libutrace switches
# them on at the attach, UTRACE_CTL_STACKS) and stop carrying them when it
# goes, even killed; a program started with UTRACE_STACKS set otherwise is
# refused in one line and records on as it was.
. "$(dirname "$0")/lib.sh"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
DL="$UTRACE_BUILD/tests/libstack-dl.so"

# demo VARIANT [ENV...]: stack-demo-VARIANT in the background (P, k, $TMP/ff)
demo() {
	local v=$1
	shift
	rm -f "$TMP/ff" "$TMP/out"
	mkfifo "$TMP/ff"
	env "$@" "$UTRACE_BUILD/tests/stack-demo-$v" "$TMP/ff" "$TMP/out" "$DL" \
		> /dev/null 2> "$TMP/demo.err" &
	P=$!
	pids+=("$P")
	k=0
	wait_traceable "$P" "$TMP/demo.err"
}
# on N: the program has N events switched on (utrace ps's ON)
on() { "$UTRACE" ps | grep -qE "^ *$P +[^ ]+ +[0-9]+ +$1 "; }
# recording OUT OPTIONS...: utrace record -p $P in the background (R), its
# events switched on; the buffer emptied first (a recording takes what it
# held, the earlier recordings' events)
recording() {
	local out=$1
	shift
	"$UTRACE" clear -p "$P" || return 1
	"$UTRACE" record -p "$P" "$@" -o "$out" 2> "$TMP/rec.err" &
	R=$!
	wait_for on 1
}

demo O2fp
recording "$TMP/fp.dat" -g
send chain
send signal
send chain
kill -INT "$R"
wait "$R"
check "-g -p: the recorder ends well" test $? = 0
stacks "$TMP/fp.dat" > "$TMP/fp.stacks"
sed 's/^/# fp: /' "$TMP/fp.stacks"
check "-g -p: each event has its stack, the chain exactly from the call site" bash -c '
	[ "$(wc -l < "$1")" = 3 ] &&
	sed -n 1p "$1" | grep -q "^sd_leaf sd_inner sd_middle sd_outer sd_chain main\( \|$\)" &&
	sed -n 2p "$1" | grep -q "^sd_leaf sd_on_signal " &&
	[ "$(sed -n 1p "$1")" = "$(sed -n 3p "$1")" ]' _ "$TMP/fp.stacks"
check "-g -p: the second occurrence of a stack is a reference (ftrace:stack_ref)" bash -c '
	"$0" script -i "$1" --fields > "$2/fields" &&
	[ "$(grep -c " stack: id=" "$2/fields")" = 2 ] &&
	[ "$(grep -c " stack_ref: id=" "$2/fields")" = 1 ]' "$UTRACE" "$TMP/fp.dat" "$TMP"

# after it: a recording without -g has no stacks (they went off with it)
wait_for on 0
recording "$TMP/plain.dat"
send chain
kill -INT "$R"
wait "$R"
check "after the -g recorder (and utrace clear): the next recording has its one event (not the cleared ones) and no stack" bash -c '
	"$0" script -i "$1" --fields > "$2/plain" &&
	[ "$(grep -c "stackdemo:hit\| hit:" "$2/plain")" = 1 ] &&
	! grep -q "stack: id=\|stack_ref: id=\|user stack trace" "$2/plain"' \
	"$UTRACE" "$TMP/plain.dat" "$TMP"

# a -g recorder killed: its stacks go off too
recording "$TMP/killed.dat" -g
send chain
kill -KILL "$R"
wait "$R" 2> /dev/null
wait_for on 0
recording "$TMP/plain2.dat"
send chain
kill -INT "$R"
wait "$R"
check "a -g recorder killed: the next recording has no stack" bash -c '
	"$0" script -i "$1" --fields > "$2/plain2" && [ -s "$2/plain2" ] &&
	! grep -q "stack: id=\|stack_ref: id=\|user stack trace" "$2/plain2"' \
	"$UTRACE" "$TMP/plain2.dat" "$TMP"

# dwarf on -O2 code without frame pointers, through a dlopen()ed module
# (loaded before: one loaded during a recording is told to the recorder
# within a second, by the agent's look)
echo quit > "$TMP/ff"
wait "$P"
demo O2
send dl
recording "$TMP/dw.dat" --call-graph dwarf
send chain
send dl
kill -INT "$R"
wait "$R"
stacks "$TMP/dw.dat" > "$TMP/dw.stacks"
sed 's/^/# dwarf: /' "$TMP/dw.stacks"
check "--call-graph dwarf -p: the chain, and through a dlopen()ed module" bash -c '
	[ "$(wc -l < "$1")" = 2 ] && sed -n 1p "$1" | grep -q "^sd_leaf sd_inner sd_middle sd_outer sd_chain main " &&
	sed -n 2p "$1" | grep -q "^sd_leaf sddl_inner sddl_outer main "' _ "$TMP/dw.stacks"
echo quit > "$TMP/ff"
wait "$P"

# a program whose stacks UTRACE_STACKS switched on: another mode is
# refused in one line; the same one records, and they stay on after
demo O2fp UTRACE_STACKS=fp,4096
"$UTRACE" record -p "$P" --call-graph dwarf -o "$TMP/busy.dat" 2> "$TMP/busy.err"
rc=$?
cat "$TMP/busy.err" >&2
check "UTRACE_STACKS=fp,4096 and --call-graph dwarf -p: refused in one line, saying why" bash -c '
	[ "$2" != 0 ] && [ "$(wc -l < "$1")" = 1 ] &&
	grep -q "cannot record call stacks: .*UTRACE_STACKS" "$1"' _ "$TMP/busy.err" "$rc"
wait_for on 0
recording "$TMP/same.dat" --call-graph fp,4096
send chain
kill -INT "$R"
wait "$R"
recording "$TMP/after.dat"
send chain
kill -INT "$R"
wait "$R"
check "UTRACE_STACKS's own mode: recorded with stacks, and they stay on after" bash -c '
	[ "$(stacks "$1" | grep -c "^sd_leaf sd_inner")" = 1 ] &&
	[ "$(stacks "$2" | grep -c "^sd_leaf sd_inner")" = 1 ]' _ "$TMP/same.dat" "$TMP/after.dat"
echo quit > "$TMP/ff"
wait "$P"
check "the program ran every command and ended well" test $? = 0

done_testing
