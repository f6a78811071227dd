#!/usr/bin/env bash
# set_ftrace_pid and set_ftrace_notrace_pid (issue 31 item 2) in the mount,
# as the kernel's: "no pid" when empty, thread ids in order, '>' empties
# first, '>>' adds, trace_pid_write()'s errors (EINVAL for what is not a
# number, the list as before); the function tracer and the profiler see
# only the threads set_ftrace_pid lists (when it lists any) and none that
# set_ftrace_notrace_pid does (tests/cli/fprofile-prog.c).
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
need_fuse
mount_setup
fifo_start "$UTRACE_BUILD/tests/fprofile-prog"
"$UTRACE" mount "$MNT" 2> "$TMP/err" || skip_all "no mount here ($(head -n 1 "$TMP/err"))"
D="$MNT/$P"
export D P

wr() {
	python3 -c '
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | (os.O_APPEND if sys.argv[3] == "a" else os.O_TRUNC))
try:
    os.write(fd, sys.argv[2].encode())
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
os.close(fd)' "$@"
}
col() {
	cat "$D"/trace_stat/function* | awk -v f="$2" -v c="$1" \
		'$1 == f { s += $c } END { printf "%d\n", s }'
}
export -f wr col

check "both files read 'no pid' when empty" bash -c '
	[ "$(cat "$D/set_ftrace_pid")" = "no pid" ] &&
	[ "$(cat "$D/set_ftrace_notrace_pid")" = "no pid" ]'

check "ids in order; >> adds; > empties first; a write of nothing empties" bash -c '
	[ "$(wr "$D/set_ftrace_pid" "30 10" t)" = ok ] &&
	[ "$(cat "$D/set_ftrace_pid" | tr "\n" " ")" = "10 30 " ] &&
	[ "$(wr "$D/set_ftrace_pid" "20 10" a)" = ok ] &&
	[ "$(cat "$D/set_ftrace_pid" | tr "\n" " ")" = "10 20 30 " ] &&
	[ "$(wr "$D/set_ftrace_pid" "7" t)" = ok ] &&
	[ "$(cat "$D/set_ftrace_pid")" = 7 ] &&
	[ "$(wr "$D/set_ftrace_pid" "" t)" = ok ] &&
	[ "$(cat "$D/set_ftrace_pid")" = "no pid" ]'

check "what is not a number is EINVAL, and the list stays as it was" bash -c '
	[ "$(wr "$D/set_ftrace_notrace_pid" "5" t)" = ok ] &&
	[ "$(wr "$D/set_ftrace_notrace_pid" "6 abc" a)" = EINVAL ] &&
	[ "$(wr "$D/set_ftrace_notrace_pid" "-1" a)" = EINVAL ] &&
	[ "$(cat "$D/set_ftrace_notrace_pid")" = 5 ] &&
	[ "$(wr "$D/set_ftrace_notrace_pid" "" t)" = ok ]'

check "set_ftrace_pid: the main thread; the profiler and the function tracer on" bash -c '
	[ "$(wr "$D/set_ftrace_pid" "$P" t)" = ok ] &&
	[ "$(wr "$D/function_profile_enabled" 1 t)" = ok ] &&
	[ "$(wr "$D/current_tracer" function t)" = ok ]'
fsend "thread 50"
fsend "top 10"
check "(the main thread counted, the other not)" bash -c '
	[ "$(col 2 top)" = 10 ] && [ "$(col 2 tleaf)" = 0 ] &&
	wait_for grep -q " top <-main" "$D/trace" && ! grep -q " tleaf <-" "$D/trace"'

check "set_ftrace_notrace_pid: the main thread out, the others in" bash -c '
	[ "$(wr "$D/set_ftrace_pid" "" t)" = ok ] &&
	[ "$(wr "$D/set_ftrace_notrace_pid" "$P" t)" = ok ] &&
	[ "$(cat "$D/set_ftrace_notrace_pid")" = "$P" ]'
fsend "thread 40"
fsend "top 10"
check "(tleaf counted 40 times, top no more)" bash -c '
	[ "$(col 2 top)" = 10 ] && [ "$(col 2 tleaf)" = 40 ] &&
	wait_for grep -q " tleaf <-tloop" "$D/trace"'

check "both empty: every thread again" bash -c '
	[ "$(wr "$D/set_ftrace_notrace_pid" "" t)" = ok ] &&
	[ "$(cat "$D/set_ftrace_notrace_pid")" = "no pid" ]'
fsend "top 5"
fsend "thread 5"
check "(top 15, tleaf 45)" bash -c '[ "$(col 2 top)" = 15 ] && [ "$(col 2 tleaf)" = 45 ]'

check "off: the program runs on" bash -c '
	[ "$(wr "$D/function_profile_enabled" 0 t)" = ok ] &&
	[ "$(wr "$D/current_tracer" nop t)" = ok ] &&
	[ "$(cat "$D/enabled_functions")" = "" ] && kill -0 "$P"'
exec 3>&-

done_testing
