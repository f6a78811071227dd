#!/usr/bin/env bash
# record -g in a second thread and in a fork child (issue 32): a thread's
# stack is walked within its own stack's bounds (fp and dwarf) and ends in
# sd_thread; a fork child starts its table of stacks afresh, so its first
# stack is defined in its own process even when the parent had the same
# one (--max-stack 5 makes the parent's and the child's chains equal):
# nothing prints as "[stack N not in the file]".
. "$(dirname "$0")/lib.sh"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"

for m in fp dwarf; do
	rm -f "$TMP/ff"
	mkfifo "$TMP/ff"
	"$UTRACE" record --call-graph "$m" --max-stack 5 -o "$TMP/$m.dat" -- \
		"$UTRACE_BUILD/tests/stack-demo-O2fp" "$TMP/ff" "$TMP/out" \
		"$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
	r=$!
	printf 'chain\nthread\nfork\nquit\n' > "$TMP/ff"
	wait "$r"
	stacks "$TMP/$m.dat" > "$TMP/$m.stacks"
	sed "s/^/# $m: /" "$TMP/$m.stacks"
	check "$m: a second thread's stack, from the call site to sd_thread" bash -c '
		sed -n 2p "$1" | grep -qx "sd_leaf sd_inner sd_middle sd_outer sd_thread"' _ "$TMP/$m.stacks"
	check "$m: the fork child's stack equal to the parent's is defined in the child" bash -c '
		[ "$(wc -l < "$1")" = 3 ] && ! grep -q MISSING "$1" &&
		[ "$(sed -n 3p "$1")" = "sd_leaf sd_inner sd_middle sd_outer sd_chain" ] &&
		[ "$(sed -n 1p "$1")" = "sd_leaf sd_inner sd_middle sd_outer sd_chain" ]' _ "$TMP/$m.stacks"
done
done_testing
