#!/usr/bin/env bash
# The function profiler (issue 31 item 2): function_profile_enabled and
# trace_stat/function<N>, one per CPU as the kernel's, in the mount: the
# kernel's header and columns (Function, Hit, Time, Avg, s^2), sorted by
# time, the largest first; hits counted at the patchable sites whatever
# the current tracer, set_ftrace_filter choosing them; times as the
# function_graph profiler's (options/graph-time: 1 a function's time with
# its children's, 0 without); 0 stops counting and keeps the table, 0 to 1
# empties it; any number but 0 is 1, a word is EINVAL.
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
need_fuse
mount_setup
fifo_start "$UTRACE_BUILD/tests/fprofile-prog"
"$UTRACE" mount "$MNT" 2> "$TMP/err" || skip_all "no mount here ($(head -n 1 "$TMP/err"))"
D="$MNT/$P"
export D

# errno of one write
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
# FIELD FUNC: a column of FUNC's lines summed over every CPU's file
# (2 hits, 3 time in us)
col() {
	cat "$D"/trace_stat/function* | awk -v f="$2" -v c="$1" \
		'$1 == f { s += $c } END { printf "%d\n", s }'
}
export -f wr col

NCPU=$(getconf _NPROCESSORS_CONF)
check "function_profile_enabled is 0; trace_stat has function0..function$((NCPU - 1)); the modes (TRACE_MODE_WRITE)" bash -c '
	[ "$(cat "$D/function_profile_enabled")" = 0 ] &&
	[ "$(ls "$D/trace_stat" | sort -V | tr "\n" " ")" = "$(seq -f "function%g" 0 $(($1 - 1)) | tr "\n" " ")" ] &&
	[ ! -e "$D/trace_stat/function$1" ] &&
	[ "$(stat -c %A "$D/trace_stat" "$D/trace_stat/function0" "$D/function_profile_enabled" | tr "\n" " ")" = "drwxr-x--- -rw-r----- -rw-r----- " ]' _ "$NCPU"

check "function0: the kernel's header, and nothing counted" bash -c '
	printf "  Function                               Hit    Time            Avg             s^2\n  --------                               ---    ----            ---             ---\n" > "$1/want" &&
	cmp "$1/want" "$D/trace_stat/function0"' _ "$TMP"

check "a word is EINVAL, so is 0x1 (base 10); 2 is 1 (!!val); the sites go on with the tracer nop" bash -c '
	[ "$(wr "$D/function_profile_enabled" x t)" = EINVAL ] &&
	[ "$(wr "$D/function_profile_enabled" 0x1 t)" = EINVAL ] &&
	[ "$(cat "$D/function_profile_enabled")" = 0 ] &&
	[ "$(wr "$D/function_profile_enabled" 2 t)" = ok ] &&
	[ "$(cat "$D/function_profile_enabled")" = 1 ] &&
	[ "$(cat "$D/current_tracer")" = nop ] &&
	grep -qx "top (1)" "$D/enabled_functions"'

fsend "top 100"
check "hits: top 100, mid 100, leaf 200 (the CPUs' files summed)" bash -c '
	[ "$(col 2 top)" = 100 ] && [ "$(col 2 mid)" = 100 ] && [ "$(col 2 leaf)" = 200 ]'

check "each line in the kernel's columns; each file sorted by time, the largest first" \
	python3 -c '
import glob, re, sys
line = re.compile(r"^  (.{30})  ([ 0-9]{9}[0-9])    " +
                  r"(?:(\d{1,6}\.\d{1,3}|\d{7,}) us {1,4}    ){2}(?:\d{1,6}\.\d{1,3}|\d{7,}) us {1,4}$")
n = 0
for f in glob.glob(sys.argv[1] + "/trace_stat/function*"):
    rows = open(f).read().split("\n")[2:-1]
    times = []
    for r in rows:
        m = line.match(r)
        if not m:
            sys.exit("bad line in %s: %r" % (f, r))
        times.append(float(r.split()[2]))
        n += 1
    if times != sorted(times, reverse=True):
        sys.exit("not sorted by time: %s %r" % (f, times))
sys.exit(0 if n >= 3 else "only %d lines" % n)' "$D"

fsend "outer 30"
check "graph-time 1 (the default): outer() holds slow()'s 30 ms; one call: s^2 0" bash -c '
	[ "$(cat "$D/options/graph-time")" = 1 ] &&
	[ "$(col 2 outer)" = 1 ] && [ "$(col 2 slow)" = 1 ] &&
	[ "$(col 3 outer)" -ge 30000 ] && [ "$(col 3 slow)" -ge 30000 ] &&
	cat "$D"/trace_stat/function* | grep -E "^  outer " | grep -qE " 0\.000 us +$"'

check "0 stops counting and keeps the table" bash -c '
	[ "$(wr "$D/function_profile_enabled" 0 t)" = ok ] &&
	[ "$(cat "$D/function_profile_enabled")" = 0 ] &&
	[ "$(cat "$D/enabled_functions")" = "" ]'
fsend "top 10"
check "(the calls after it are not counted)" bash -c '[ "$(col 2 top)" = 100 ]'

check "0 to 1 empties the table; 1 again keeps it" bash -c '
	[ "$(wr "$D/function_profile_enabled" 1 t)" = ok ] &&
	[ "$(col 2 top)" = 0 ] && [ "$(col 2 outer)" = 0 ]'
fsend "top 5"
check "(counted from 0)" bash -c '
	[ "$(col 2 top)" = 5 ] && [ "$(wr "$D/function_profile_enabled" 1 t)" = ok ] &&
	[ "$(col 2 top)" = 5 ]'

check "graph-time 0: a function's own time, without its children's" bash -c '
	[ "$(wr "$D/options/graph-time" 0 t)" = ok ] &&
	[ "$(cat "$D/options/graph-time")" = 0 ] &&
	[ "$(wr "$D/options/graph-time" 2 t)" = EINVAL ] &&
	[ "$(wr "$D/function_profile_enabled" 0 t)" = ok ] &&
	[ "$(wr "$D/function_profile_enabled" 1 t)" = ok ]'
fsend "outer 30"
check "(outer() under 30 ms, slow() at least)" bash -c '
	[ "$(col 3 slow)" -ge 30000 ] && [ "$(col 3 outer)" -lt 30000 ] &&
	[ "$(wr "$D/options/graph-time" 1 t)" = ok ]'

check "set_ftrace_filter chooses what is counted" bash -c '
	[ "$(wr "$D/set_ftrace_filter" top t)" = ok ] &&
	[ "$(wr "$D/function_profile_enabled" 0 t)" = ok ] &&
	[ "$(wr "$D/function_profile_enabled" 1 t)" = ok ] &&
	[ "$(cat "$D/enabled_functions")" = "top (1)" ]'
fsend "top 7"
check "(top 7, mid and leaf not counted)" bash -c '
	[ "$(col 2 top)" = 7 ] && [ "$(col 2 mid)" = 0 ] && [ "$(col 2 leaf)" = 0 ]'

check "the function_graph tracer and the profiler together" bash -c '
	[ "$(wr "$D/set_ftrace_filter" "" t)" = ok ] &&
	[ "$(wr "$D/current_tracer" function_graph t)" = ok ]'
fsend "top 3"
check "(both see the calls; the tracer off, the sites stay for the profiler)" bash -c '
	[ "$(col 2 leaf)" = 6 ] &&
	wait_for grep -Eq "^ [0-9]+\) +[ +!#*@$] +[0-9]+\.[0-9]+ us +\|    leaf\(\);$" "$D/trace" &&
	[ "$(wr "$D/current_tracer" nop t)" = ok ] && grep -qx "leaf (1)" "$D/enabled_functions"'

check "profiler off, tracer nop: every site a NOP, the program runs on" bash -c '
	[ "$(wr "$D/function_profile_enabled" 0 t)" = ok ] &&
	[ "$(cat "$D/enabled_functions")" = "" ] && kill -0 "$1"' _ "$P"
fsend "top 1"
exec 3>&-
check "the program ran every command" bash -c '
	[ "$(grep -c "^ok" "$1/out")" = "$2" ]' _ "$TMP" "$k"

done_testing
