#!/usr/bin/env bash
# The function profiler, set_ftrace_pid and the funcgraph options through
# utrace enter, as a kernel user types them in /sys/kernel/tracing
# (issue 31 item 2; tests/cli/fprofile-prog.c).
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
need_fuse
if [ "$(id -u)" != 0 ] && ! unshare -Ur true 2> /dev/null; then
	skip_all "not root, and unprivileged user namespaces are off"
fi
mount_setup
fifo_start "$UTRACE_BUILD/tests/fprofile-prog"
if ! "$UTRACE" enter -p "$P" -- true 2> "$TMP/err"; then
	skip_all "cannot enter here: $(head -n 1 "$TMP/err")"
fi
: > "$TMP/err"
# tr_in: a shell command run in /sys/kernel/tracing through utrace enter
tr_in() { "$UTRACE" enter -p "$P" -- sh -c "cd /sys/kernel/tracing && $1"; }
export -f tr_in
export UTRACE P

check "echo 1 > function_profile_enabled; cat trace_stat/function*: the hits" bash -c '
	tr_in "echo 1 > function_profile_enabled" && [ "$(tr_in "cat function_profile_enabled")" = 1 ]'
fsend "top 20"
check "(top 20, leaf 40)" bash -c '
	tr_in "cat trace_stat/function*" > "$1/stat" &&
	[ "$(awk "\$1 == \"top\" { s += \$2 } END { print s }" "$1/stat")" = 20 ] &&
	[ "$(awk "\$1 == \"leaf\" { s += \$2 } END { print s }" "$1/stat")" = 40 ] &&
	head -n 1 "$1/stat" | grep -q "^  Function  *Hit    Time            Avg             s^2$"' _ "$TMP"

check "echo PID > set_ftrace_pid; echo abc >> it fails, the list stays" bash -c '
	tr_in "echo $P > set_ftrace_pid" && [ "$(tr_in "cat set_ftrace_pid")" = "$P" ] &&
	! tr_in "echo abc >> set_ftrace_pid" 2> /dev/null && [ "$(tr_in "cat set_ftrace_pid")" = "$P" ]'

check "echo function_graph > current_tracer" bash -c '
	tr_in "echo function_graph > current_tracer"'
fsend "top 1"
# the graph's leaf line of leaf(), with the thread: funcgraph-proc is an
# option of the mount, so set in the same session as the cat
has_leaf() {
	tr_in "echo 1 > options/funcgraph-proc && cat trace" |
		grep -Eq "^ [0-9]+\) +fprofil-$P +\| .*leaf\(\);$"
}
export -f has_leaf
check "(the line: fprofil-PID)" wait_for has_leaf

check "off again: nop, 0, no pid" bash -c '
	tr_in "echo nop > current_tracer && echo 0 > function_profile_enabled && echo > set_ftrace_pid" &&
	[ "$(tr_in "cat set_ftrace_pid")" = "no pid" ] && [ "$(tr_in "cat enabled_functions")" = "" ]'
exec 3>&-

done_testing
