#!/usr/bin/env bash
# utrace mount: the tracefs files of a running program through FUSE, used
# with the commands of the kernel's documentation (Documentation/trace/
# events.rst, ftrace.rst) and compared with what the kernel does
# (reference/tracefs-kernel).  'wr' does one write() and prints its
# result exactly as the reference's tools/wr.c does.
. "$(dirname "$0")/lib.sh"

need_fuse
command -v python3 > /dev/null || skip_all "python3 is missing"

# Only our own processes: a runtime directory of our own.
mount_setup

# wrs: one write() per input line "FLAG<TAB>FILE<TAB>STRING", FLAG being
# - (neither), a (O_APPEND) or t (O_TRUNC); STRING takes C escapes.  One
# python for many writes: it is slow to start.  wr [-a|-t] FILE STRING: one.
wrs() {
	python3 -c '
import errno, os, sys
for line in sys.stdin.read().split("\n"):
    if not line:
        continue
    flag, path, s = line.split("\t", 2)
    fl = os.O_WRONLY | {"-": 0, "a": os.O_APPEND, "t": os.O_TRUNC}[flag]
    b = s.encode().decode("unicode_escape").encode("latin-1")
    fd = os.open(path, fl)
    try:
        r = os.write(fd, b)
        print("write(%d bytes) = %d" % (len(b), r))
    except OSError as e:
        print("write(%d bytes) = -1 %s (%s)" % (len(b), errno.errorcode[e.errno],
                                              os.strerror(e.errno)))
    os.close(fd)
    sys.stdout.flush()
'
}
wr() {
	local flag=-
	case $1 in -a) flag=a; shift ;; -t) flag=t; shift ;; esac
	printf '%s\t%s\t%s\n' "$flag" "$1" "$2" | wrs
}
export -f wr wrs

# The sample logs each demo_request it fires in $LOG: the checks wait on
# that (wait_for, lib.sh) rather than sleep a guessed time.
LOG="$TMP/sample.log"
"$SAMPLE" --run 0 --log "$LOG" > /dev/null 2> "$TMP/sample.err" &
SP=$!
pids+=("$SP")
wait_traceable "$SP" "$TMP/sample.err"
if ! "$UTRACE" mount "$MNT" 2> "$TMP/err"; then
	skip_all "cannot mount here: $(head -n 1 "$TMP/err")"
fi
D="$MNT/$SP"

check "mount returns once DIR is mounted (fuse.utrace)" \
	grep -q " $MNT fuse.utrace " /proc/self/mounts

check "the process appears as <pid>/ and <comm>-<pid> -> <pid>" bash -c '
	wait_for test -d "$1/$2" && [ "$(readlink "$1/sample-$2")" = "$2" ] &&
	ls "$1" | grep -qx "$2" && ls "$1" | grep -qx "sample-$2" &&
	[ -f "$1/sample-$2/set_event" ]' _ "$MNT" "$SP"

check "the files of a tracefs instance, with its modes and size 0" bash -c '
	cd "$1" &&
	[ "$(ls | tr "\n" " ")" = "README available_events available_filter_functions available_tracers buffer_size_kb buffer_total_size_kb current_tracer dynamic_events enabled_functions error_log events function_profile_enabled instances max_graph_depth options per_cpu saved_cmdlines set_event set_event_notrace_pid set_event_pid set_ftrace_filter set_ftrace_notrace set_ftrace_notrace_pid set_ftrace_pid set_graph_function snapshot synthetic_events trace trace_clock trace_marker trace_marker_raw trace_options trace_pipe trace_stat tracing_on uprobe_events uprobe_profile " ] &&
	[ "$(ls events | tr "\n" " ")" = "demo enable ftrace header_event header_page sample-trace " ] &&
	[ "$(ls events/demo | tr "\n" " ")" = "demo_request demo_tick enable filter " ] &&
	[ "$(ls events/demo/demo_tick | tr "\n" " ")" = "enable filter format hist id trigger " ] &&
	[ "$(stat -c "%A %s" set_event trace_pipe events/demo/demo_tick/format . | tr "\n" " ")" = "-rw-r----- 0 -r--r----- 0 -r--r----- 0 drwxr-x--- 0 " ]' _ "$D"

# The kernel's text (ring_buffer_print_page_header(), _entry_header());
# this one's when tracefs is there, else the 4096-byte page's.
printf '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n' > "$TMP/header_page"
[ -r /sys/kernel/tracing/events/header_page ] && [ "$(getconf PAGESIZE)" = 4096 ] &&
	cat /sys/kernel/tracing/events/header_page > "$TMP/header_page" 2> /dev/null
check "events/header_page and header_event: the kernel's" bash -c '
	cmp "$1/events/header_page" "$2/header_page" &&
	[ "$(head -n 1 "$1/events/header_event")" = "# compressed entry header" ] &&
	grep -q "data max type_len  == 28$" "$1/events/header_event" &&
	{ [ ! -r /sys/kernel/tracing/events/header_event ] ||
	  cmp "$1/events/header_event" /sys/kernel/tracing/events/header_event; }' _ "$D" "$TMP"

check "per_cpu/cpuN/ for each possible CPU, with the kernel's files and modes" bash -c '
	n=$(getconf _NPROCESSORS_CONF) &&
	[ "$(ls "$1/per_cpu" | wc -l)" = "$n" ] && [ -d "$1/per_cpu/cpu$((n - 1))" ] &&
	[ ! -e "$1/per_cpu/cpu$n" ] &&
	[ "$(ls "$1/per_cpu/cpu0" | tr "\n" " ")" = "buffer_size_kb stats trace trace_pipe trace_pipe_raw " ] &&
	[ "$(cd "$1/per_cpu/cpu0" && stat -c "%A" buffer_size_kb stats trace trace_pipe trace_pipe_raw | tr "\n" " ")" = "-rw-r----- -r--r----- -rw-r----- -r--r----- -r--r----- " ] &&
	[ "$(cat "$1/per_cpu/cpu0/buffer_size_kb")" = "$(cat "$1/buffer_size_kb")" ] &&
	sed "s/[0-9. ]*$//" "$1/per_cpu/cpu0/stats" | tr "\n" "|" | grep -qx "entries:|overrun:|commit overrun:|bytes:|oldest event ts:|now ts:|dropped events:|read events:|"' _ "$D"

cat > "$TMP/available" << 'EOF'
sample-trace:foo_bar
sample-trace:foo_bar_with_cond
sample-trace:foo_bar_with_fn
sample-trace:foo_with_template_simple
sample-trace:foo_with_template_cond
sample-trace:foo_with_template_fn
sample-trace:foo_with_template_print
demo:demo_tick
demo:demo_request
EOF
check "available_events: sys:event in registration order" same "$D/available_events" "$TMP/available"

check "nothing is enabled at start: set_event empty, enable files 0" bash -c '
	cd "$1" && [ ! -s set_event ] && [ "$(wc -c < set_event)" = 0 ] &&
	[ "$(cat events/enable events/demo/enable events/demo/demo_tick/enable | tr "\n" " ")" = "0 0 0 " ]' _ "$D"

check "echo 1 > events/<sys>/<ev>/enable: 1, X in the system and at the top" bash -c '
	cd "$1" && echo 1 > events/demo/demo_tick/enable &&
	[ "$(cat events/demo/demo_tick/enable events/demo/enable events/enable events/sample-trace/enable | tr "\n" " ")" = "1 X X 0 " ] &&
	[ "$(cat set_event)" = demo:demo_tick ] &&
	[ "$(od -An -c events/demo/enable | tr -d " ")" = "X\n" ]' _ "$D"

check "echo '<sys>:*' > set_event replaces; '!<ev>' >> set_event removes one" bash -c '
	cd "$1" && echo "sample-trace:*" > set_event && [ "$(wc -l < set_event)" = 7 ] &&
	[ "$(cat events/demo/enable events/sample-trace/enable | tr "\n" " ")" = "0 1 " ] &&
	echo "!foo_bar" >> set_event && [ "$(wc -l < set_event)" = 6 ] &&
	! grep -qx sample-trace:foo_bar set_event &&
	[ "$(cat events/sample-trace/foo_bar/enable)" = 0 ]' _ "$D"

check "echo > set_event clears; the name forms of the kernel" bash -c '
	cd "$1" && echo > set_event && [ "$(wc -c < set_event)" = 0 ] &&
	echo "*:demo_tick" > set_event && echo ":demo_request" >> set_event &&
	[ "$(cat set_event | tr "\n" " ")" = "demo:demo_tick demo:demo_request " ] &&
	echo demo_request > set_event && [ "$(cat set_event)" = demo:demo_request ] &&
	echo demo > set_event && [ "$(wc -l < set_event)" = 2 ] &&
	echo "demo:" > set_event && [ "$(wc -l < set_event)" = 2 ] &&
	echo "*:*" > set_event && [ "$(wc -l < set_event)" = 9 ] && [ "$(cat events/enable)" = 1 ] &&
	echo "!*:*" >> set_event && [ "$(wc -c < set_event)" = 0 ] && [ "$(cat events/enable)" = 0 ]' _ "$D"

check "set_event: readback in registration order, not write order" bash -c '
	cd "$1" && echo demo:demo_request > set_event && echo sample-trace:foo_bar >> set_event &&
	[ "$(cat set_event | tr "\n" " ")" = "sample-trace:foo_bar demo:demo_request " ]' _ "$D"

check "set_event errors: EINVAL, and > has cleared before the write failed" bash -c '
	cd "$1" && echo demo:demo_tick > set_event &&
	! echo foo:bar > set_event 2> "$2/err" && grep -q "Invalid argument" "$2/err" &&
	[ "$(wc -c < set_event)" = 0 ] &&
	echo demo:demo_tick > set_event && ! echo nosuchevent >> set_event 2> /dev/null &&
	! echo "demo:demo_t*" >> set_event 2> /dev/null && ! echo "*" >> set_event 2> /dev/null &&
	! echo "DEMO:demo_tick" >> set_event 2> /dev/null &&
	! echo "demo:demo_tick:extra" >> set_event 2> /dev/null &&
	echo "" >> set_event && [ "$(cat set_event)" = demo:demo_tick ]' _ "$D" "$TMP"

cat > "$TMP/wr.expect" << 'EOF'
write(33 bytes) = 15
write(33 bytes) = 15
write(1 bytes) = 1
write(7 bytes) = -1 EINVAL (Invalid argument)
write(22 bytes) = 21
write(21 bytes) = 15
demo:demo_tick
demo:demo_request
EOF
check "set_event takes ONE token per write() and returns the bytes it took" bash -c '
	cd "$1" && { printf "%s\t%s\t%s\n" t set_event "demo:demo_tick demo:demo_request\\n" \
		t set_event "demo:demo_tick demo:demo_request\\n" a set_event "\\n" \
		a set_event foo:bar a set_event "   demo:demo_request\\t\\n" \
		t set_event "demo:demo_tick\\0demo:x" | wrs
	echo demo:demo_request >> set_event; cat set_event; } > "$2/wr.out" &&
	diff -u "$2/wr.expect" "$2/wr.out" >&2' _ "$D" "$TMP"

check "echo 0 > events/enable switches everything off" bash -c '
	cd "$1" && echo "*:*" > set_event && echo 0 > events/enable &&
	[ "$(cat events/enable events/demo/enable events/demo/demo_tick/enable | tr "\n" " ")" = "0 0 0 " ] &&
	[ "$(wc -c < set_event)" = 0 ] &&
	echo 1 > events/demo/enable && [ "$(cat events/demo/enable events/enable | tr "\n" " ")" = "1 X " ] &&
	echo 0 > events/demo/enable' _ "$D"

enable_writes() {
	local f v
	for f in events/demo/demo_tick/enable events/demo/enable events/enable; do
		for v in 0 1 00 01 '1\n' 2 10 abc -1 ' 1' '1 ' 0x1 '1\n\n' '\n' X 1x; do
			printf -- '-\t%s\t%s\n' "$D/$f" "$v"
		done
		printf -- '-\t%s\t0\n' "$D/$f"
	done | wrs
}
for f in events/demo/demo_tick/enable events/demo/enable events/enable; do
	for v in 0 1 00 01 '1\n'; do
		printf 'write(%d bytes) = %d\n' "$(printf "%b" "$v" | wc -c)" "$(printf "%b" "$v" | wc -c)"
	done
	for v in 2 10 abc -1 ' 1' '1 ' 0x1 '1\n\n' '\n' X 1x; do
		printf 'write(%d bytes) = -1 EINVAL (Invalid argument)\n' "$(printf "%b" "$v" | wc -c)"
	done
	echo 'write(1 bytes) = 1'
done > "$TMP/enable.expect"
enable_writes > "$TMP/enable.out"
check "enable files take what kstrtoul takes, 0 or 1, at all three levels" \
	same "$TMP/enable.out" "$TMP/enable.expect"

check "format is the event's format; id its ID" bash -c '
	cd "$1" && "$2" --format foo_bar > "$3/format.expect" &&
	cmp "$3/format.expect" events/sample-trace/foo_bar/format &&
	[ "$(cat events/sample-trace/foo_bar/id)" = "$(sed -n "s/^ID: //p" "$3/format.expect")" ] &&
	head -1 events/demo/demo_tick/format | grep -qx "name: demo_tick" &&
	wr events/demo/demo_tick/format x | grep -q EINVAL' _ "$D" "$SAMPLE" "$TMP"

printf 'path == /x\n         ^\nparse_error: Invalid value (did you forget quotes)?\n\n' > "$TMP/ferr.expect"
check "filter: none, the expression, the error text after a failed write" bash -c '
	cd "$1" && F=events/demo/demo_request/filter && [ "$(cat $F)" = none ] &&
	echo "bytes > 100" > $F && [ "$(cat $F)" = "bytes > 100" ] &&
	echo "  id   ==   3  " > $F && [ "$(cat $F)" = "  id   ==   3" ] &&
	: > error_log && ! echo "path == /x" > $F 2> "$2/err" && grep -q "Invalid argument" "$2/err" &&
	cmp "$2/ferr.expect" $F && echo 0 > $F && [ "$(cat $F)" = none ]' _ "$D" "$TMP"

check "filter errors carry the kernel's errno" bash -c '
	cd "$1" && F=events/demo/demo_request/filter &&
	wr $F "(id == 0" | grep -q ENOENT && wr $F "id == 0)" | grep -q EPERM &&
	wr $F "path == \"abc" | grep -q ESRCH && wr $F "id = 0" | grep -q EINVAL &&
	wr $F "0" | grep -qx "write(1 bytes) = 1" && [ "$(cat $F)" = none ]' _ "$D"

check "error_log: the failed filter, cleared only by an open with O_TRUNC" bash -c '
	cd "$1" && : > error_log && [ ! -s error_log ] &&
	! echo "path == /x" > events/demo/demo_request/filter 2> /dev/null &&
	grep -q "^\[ *[0-9]*\.[0-9]*\] event filter parse error: error: Invalid value (did you forget quotes)?$" error_log &&
	grep -qx "  Command: path == /x" error_log &&
	grep -qx "                    ^" error_log &&
	n=$(wc -c < error_log) && wr -a error_log abc | grep -qx "write(3 bytes) = 3" &&
	[ "$(wc -c < error_log)" = "$n" ] && echo x > error_log && [ ! -s error_log ] &&
	echo 0 > events/demo/demo_request/filter' _ "$D"

check "subsystem filter: the banner; set where the field exists" bash -c '
	cd "$1" && [ "$(head -1 events/demo/filter)" = "### global filter ###" ] &&
	[ "$(wc -l < events/demo/filter)" = 4 ] &&
	echo "bytes > 1" > events/demo/filter &&
	[ "$(cat events/demo/demo_request/filter)" = "bytes > 1" ] &&
	grep -q "^parse_error: Couldn.t find or set field in one of a subsystem.s events$" events/demo/demo_tick/filter &&
	echo 0 > events/demo/filter && [ "$(cat events/demo/demo_request/filter events/demo/demo_tick/filter | tr "\n" " ")" = "none none " ]' _ "$D"

cat > "$TMP/header" << 'EOF'
# tracer: nop
#
# entries-in-buffer/entries-written: N/N   #P:N
#
#                                _-----=> irqs-off/BH-disabled
#                               / _----=> need-resched
#                              | / _---=> hardirq/softirq
#                              || / _--=> preempt-depth
#                              ||| / _-=> migrate-disable
#                              |||| /     delay
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
EOF
check "trace: the kernel's header, then the event lines" bash -c '
	cd "$1" && echo > trace && echo 1 > events/demo/demo_tick/enable &&
	wait_for has_lines trace 11 " demo_tick: " && echo 0 > events/demo/demo_tick/enable && cat trace > "$2/trace" &&
	head -12 "$2/trace" | sed -E "3s/[0-9]+/N/g" | diff -u "$2/header" - >&2 &&
	[ "$(sed -n "13,\$p" "$2/trace" | grep -cvE "^ +sample-$3 +\[[0-9]{3}\] \.\.\.\.\. +[0-9]+\.[0-9]{6}: demo_tick: count=[0-9]+ stage=(idle|sleep|busy) prio=1[23][05]$")" = 0 ] &&
	[ "$(sed -n "13,\$p" "$2/trace" | wc -l)" -gt 10 ]' _ "$D" "$TMP" "$SP"

check "echo hello > trace_marker: a tracing_mark_write line in trace, as the kernel's" bash -c '
	cd "$1" && echo > trace && echo hello > trace_marker &&
	[ "$(stat -c %A trace_marker trace_marker_raw | tr "\n" " ")" = "--w--w---- --w--w---- " ] &&
	grep -v "^#" trace | grep -qxE " +utrace-agent-[0-9]+ +\[[0-9]{3}\] \.\.\.1\. +[0-9]+\.[0-9]{6}: tracing_mark_write: hello" &&
	grep -q "^# entries-in-buffer/entries-written: 1/1 " trace' _ "$D"

check "trace_marker: one write one event, its newlines kept, one added if none, cut at a NUL" bash -c '
	cd "$1" && echo > trace &&
	printf "%s\t%s\t%s\n" - trace_marker "two\\nlines\\n" - trace_marker "nonl" - trace_marker "tab\\there\\0after" | wrs > "$2/w" &&
	[ "$(cat "$2/w" | tr "\n" " ")" = "write(10 bytes) = 10 write(4 bytes) = 4 write(14 bytes) = 14 " ] &&
	grep -v "^#" trace | sed -E "s/^.*: tracing_mark_write: /M: /" > "$2/m" &&
	printf "M: two\nlines\nM: nonl\nM: tab\there\n" | cmp - "$2/m" >&2' _ "$D" "$TMP"

check "trace_marker: a long write is cut to what a record holds (3982 bytes)" bash -c '
	cd "$1" && echo > trace && python3 -c "import os; fd = os.open(\"trace_marker\", os.O_WRONLY); print(os.write(fd, b\"A\" * 5000))" > "$2/n" &&
	[ "$(cat "$2/n")" = 3982 ] && [ "$(grep -v "^#" trace | grep -o "A*$" | tr -d "\n" | wc -c)" = 3982 ]' _ "$D" "$TMP"

check "trace_marker_raw: an id and bytes, printed as the kernel's raw_data; shorter than the id EINVAL" bash -c '
	cd "$1" && echo > trace &&
	printf "%s\t%s\t%s\n" - trace_marker_raw "\\x34\\x12\\0\\0hello" - trace_marker_raw "\\x07\\0\\0\\0" - trace_marker_raw "ab" | wrs > "$2/w" &&
	[ "$(cat "$2/w" | tr "\n" " ")" = "write(9 bytes) = 9 write(4 bytes) = 4 write(2 bytes) = -1 EINVAL (Invalid argument) " ] &&
	[ "$(grep -v "^#" trace | sed -E "s/^.*\] \.\.\.1\. +[0-9.]+: //" | tr "\n" "|")" = "# 1234 buf: 68 65 6c 6c 6f 00 00 00|# 7 buf:|" ]' _ "$D" "$TMP"

check "trace_marker: EBADF while tracing_on is 0, EINVAL with the markers option off" bash -c '
	cd "$1" && echo 0 > tracing_on && wr trace_marker x | grep -q EBADF && echo 1 > tracing_on &&
	echo 0 > options/markers && wr trace_marker x | grep -q EINVAL && echo 1 > options/markers &&
	wr trace_marker x | grep -qx "write(1 bytes) = 1"' _ "$D"

# events/ftrace/print/format of the kernel (reference 04-format.txt), from its third line
printf '%s\n' 'format:' \
	'	field:unsigned short common_type;	offset:0;	size:2;	signed:0;' \
	'	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;' \
	'	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;' \
	'	field:int common_pid;	offset:4;	size:4;	signed:1;' '' \
	'	field:unsigned long ip;	offset:8;	size:8;	signed:0;' \
	'	field:char buf[];	offset:16;	size:0;	signed:0;' '' \
	'print fmt: "%ps: %s", (void *)REC->ip, REC->buf' > "$TMP/print.format"
check "events/ftrace: print and raw_data with the kernel's formats, never enabled nor listed" bash -c '
	cd "$1" && [ "$(ls events/ftrace | tr "\n" " ")" = "print raw_data " ] &&
	[ "$(ls events/ftrace/print | tr "\n" " ")" = "format hist id trigger " ] &&
	tail -n +3 events/ftrace/print/format | diff -u "$2/print.format" - >&2 &&
	! grep -q ftrace available_events && ! echo ftrace:print >> set_event 2> /dev/null &&
	! grep -q ftrace set_event && [ ! -e events/ftrace/enable ] && [ ! -e events/ftrace/print/enable ]' _ "$D" "$TMP"

check "trace: a write without O_TRUNC does nothing; echo > trace clears" bash -c '
	cd "$1" && n=$(grep -vc "^#" trace) && [ "$n" -gt 0 ] &&
	wr trace x | grep -qx "write(1 bytes) = 1" && [ "$(grep -vc "^#" trace)" = "$n" ] &&
	echo > trace && [ "$(grep -vc "^#" trace)" = 0 ] &&
	grep -q "^# entries-in-buffer/entries-written: 0/" trace' _ "$D"

# (while the program fires 10 requests, 100 ticks, with the event on)
check "tracing_on: 0 stops recording, any non-zero number starts it" bash -c '
	cd "$1" && [ "$(cat tracing_on)" = 1 ] && echo 0 > tracing_on && [ "$(cat tracing_on)" = 0 ] &&
	echo > trace && echo 1 > events/demo/demo_tick/enable && c=$(log_lines "$2") &&
	wait_for has_lines "$2" $((c + 10)) && echo 0 > events/demo/demo_tick/enable && [ "$(grep -vc "^#" trace)" = 0 ] &&
	wr tracing_on 5 | grep -qx "write(1 bytes) = 1" && [ "$(cat tracing_on)" = 1 ] &&
	wr tracing_on abc | grep -q EINVAL' _ "$D" "$LOG"

# set_event_pid and set_event_notrace_pid as the kernel's (checked on
# 6.18): sorted, one a line; > clears at the open, >> adds, a write adds
# all of its numbers or none; kstrtoul(s, 0); 2^30 and more EPERM.
for f in set_event_pid set_event_notrace_pid; do
	printf 't\t%s\t5 3 100\\n\n' "$f"
	printf 'a\t%s\t7 3\\n\n' "$f"
	printf 'a\t%s\t\\n\n' "$f"
	printf 'a\t%s\t9 x 10\n' "$f"
	printf 'a\t%s\t-1\n' "$f"
	printf 'a\t%s\t08\n' "$f"
	printf 'a\t%s\t1073741824\n' "$f"
	printf 'a\t%s\t18446744073709551616\n' "$f"
	printf 'a\t%s\t+0x10\\t4294967296\n' "$f"
	printf 'a\t%s\t1073741823\\n017\n' "$f"
done > "$TMP/pid.in"
check "set_event_pid, set_event_notrace_pid: empty, mode 0640" bash -c '
	cd "$1" && [ "$(stat -c "%A %s" set_event_pid set_event_notrace_pid | tr "\n" " ")" = "-rw-r----- 0 -rw-r----- 0 " ] &&
	[ "$(wc -c < set_event_pid)" = 0 ] && [ "$(wc -c < set_event_notrace_pid)" = 0 ]' _ "$D"
(cd "$D" && wrs < "$TMP/pid.in") > "$TMP/pid.out" 2>&1
for i in 1 2; do
	printf "write(%s bytes) = %s\n" 8 8 4 4 1 1 6 "-1 EINVAL (Invalid argument)" \
		2 "-1 EINVAL (Invalid argument)" 2 "-1 EINVAL (Invalid argument)" \
		10 "-1 EPERM (Operation not permitted)" 20 "-1 EINVAL (Invalid argument)" \
		16 16 14 14
done > "$TMP/pid.expect"
check "set_event_pid, set_event_notrace_pid: the kernel's parsing and errnos" \
	same "$TMP/pid.out" "$TMP/pid.expect"
check "set_event_pid, set_event_notrace_pid: ascending, once each; > clears first" bash -c '
	cd "$1" && [ "$(cat set_event_pid | tr "\n" " ")" = "0 3 5 7 15 16 100 1073741823 " ] &&
	[ "$(cat set_event_notrace_pid | tr "\n" " ")" = "0 3 5 7 15 16 100 1073741823 " ] &&
	echo > set_event_pid && [ "$(wc -c < set_event_pid)" = 0 ] &&
	! echo "5,3" > set_event_notrace_pid 2> /dev/null && [ "$(wc -c < set_event_notrace_pid)" = 0 ]' _ "$D"

# (the sample fires its demo events from its main thread, tid = pid;
# trace_marker is written by the agent thread, and not filtered by the lists;
# a filter in parentheses joins a list too)
check "set_event_pid: events of the listed threads only; notrace: none of them" bash -c '
	cd "$1" && F=events/demo/demo_request/filter && echo "bytes > 0" > $F &&
	echo 1 > events/demo/demo_request/enable &&
	echo "$3" > set_event_pid && echo > trace && wait_for has_lines trace 2 " demo_request: " &&
	[ "$(cat $F)" = "bytes > 0" ] && [ "$(cat set_event_pid)" = "$3" ] &&
	echo pidmark > trace_marker && grep -q " tracing_mark_write: pidmark$" trace &&
	other=$(ls /proc/$3/task | grep -vx "$3" | head -1) && [ -n "$other" ] &&
	echo "$other" > set_event_pid && echo > trace && c=$(log_lines "$2") &&
	wait_for has_lines "$2" $((c + 3)) && [ "$(grep -c " demo_request: " trace)" = 0 ] &&
	echo "$3" >> set_event_pid && wait_for has_lines trace 1 " demo_request: " &&
	echo > set_event_pid && echo "$3" > set_event_notrace_pid && echo > trace && c=$(log_lines "$2") &&
	wait_for has_lines "$2" $((c + 3)) && [ "$(grep -c " demo_request: " trace)" = 0 ] &&
	: > error_log && ! echo "path == /x" > $F 2> /dev/null && cmp "$4/ferr.expect" $F &&
	grep -qx "                    ^" error_log && echo > trace && c=$(log_lines "$2") &&
	wait_for has_lines "$2" $((c + 3)) && [ "$(grep -c " demo_request: " trace)" = 0 ] &&
	echo 0 > $F && [ "$(cat $F)" = none ] && echo > set_event_notrace_pid &&
	echo > trace && wait_for has_lines trace 1 " demo_request: " &&
	printf "%s" "(bytes > 0)" > $F && echo "$3" > set_event_pid &&
	[ "$(cat $F)" = "(bytes > 0)" ] && echo > trace && wait_for has_lines trace 1 " demo_request: " &&
	echo 0 > $F && echo > set_event_pid &&
	echo 0 > events/demo/demo_request/enable' _ "$D" "$LOG" "$SP" "$TMP"

check "current_tracer: nop; the function tracers and nop written, others EINVAL" bash -c '
	cd "$1" && [ "$(cat current_tracer)" = nop ] &&
	[ "$(cat available_tracers)" = "function_graph function nop" ] &&
	echo nop > current_tracer &&
	[ "$(stat -c %A current_tracer available_tracers | tr "\n" " ")" = "-rw-r----- -r--r----- " ] &&
	[ "$(wr current_tracer blk)" = "write(3 bytes) = -1 EINVAL (Invalid argument)" ] &&
	[ "$(wr current_tracer function)" = "write(8 bytes) = 8" ] &&
	[ "$(cat current_tracer)" = function ] &&
	[ "$(wr current_tracer "  nop \n")" = "write(7 bytes) = 7" ] &&
	[ "$(cat current_tracer)" = nop ]' _ "$D"

check "trace_clock: the clocks utrace computes, [mono]; stripped names, others EINVAL" bash -c '
	cd "$1" &&
	case $(cat trace_clock) in
	"[mono]"|"local global perf [mono] mono_raw boot tai x86-tsc") ;;
	*) false ;;
	esac &&
	echo mono > trace_clock &&
	[ "$(wr trace_clock "  mono \n")" = "write(8 bytes) = 8" ] &&
	[ "$(wr trace_clock counter)" = "write(7 bytes) = -1 EINVAL (Invalid argument)" ] &&
	[ "$(wr trace_clock bogus)" = "write(5 bytes) = -1 EINVAL (Invalid argument)" ]' _ "$D"

check "trace_options and options/: names, defaults, noNAME, 0/1, EINVAL" bash -c '
	cd "$1" && [ "$(wc -l < trace_options)" = 32 ] && [ "$(ls options | wc -l)" = 38 ] &&
	[ "$(head -n 3 trace_options | tr "\n" " ")" = "print-parent nosym-offset nosym-addr " ] &&
	[ "$(stat -c %A options/hex options | tr "\n" " ")" = "-rw-r----- drwxr-x--- " ] &&
	echo hex > trace_options && [ "$(cat options/hex)" = 1 ] &&
	echo 0 > options/hex && grep -qx nohex trace_options &&
	[ "$(wr trace_options bogus)" = "write(5 bytes) = -1 EINVAL (Invalid argument)" ] &&
	[ "$(wr options/hex 2)" = "write(1 bytes) = -1 EINVAL (Invalid argument)" ] &&
	[ ! -e options/record-cmd ] && grep -qx record-cmd trace_options' _ "$D"

check "options/overwrite is the buffer's mode, kept by the process" bash -c '
	cd "$1" && [ "$(cat options/overwrite)" = 1 ] &&
	echo nooverwrite > trace_options && [ "$(cat options/overwrite)" = 0 ] &&
	echo 1 > options/overwrite && grep -qx overwrite trace_options' _ "$D"

check "echo 0 > options/irq-info: trace without the flags column, as the kernel" bash -c '
	cd "$1" && echo 0 > options/irq-info &&
	grep -qx "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION" trace &&
	! grep -q "irqs-off" trace && echo 1 > options/irq-info && grep -q "irqs-off" trace' _ "$D"

check "other options are remembered by the process directory" bash -c '
	cd "$1" && echo noannotate > trace_options && [ "$(cat options/annotate)" = 0 ] &&
	echo annotate > trace_options && [ "$(cat options/annotate)" = 1 ]' _ "$D"

check "README: utrace's own, in the kernel's form, naming the files it has" bash -c '
	cd "$1" && head -n 1 README | grep -qx "tracing mini-HOWTO:" &&
	[ "$(stat -c %A README)" = "-r--r-----" ] &&
	sed -nE "s/^  ([a-z_]+)(\t| ).*/\1/p" README > "$2/readme-files" &&
	[ "$(wc -l < "$2/readme-files")" -ge 15 ] &&
	while read -r f; do [ -e "$f" ] || { echo "# README names $f, which is not here"; exit 1; }; done < "$2/readme-files" &&
	for k in kprobe_events tracing_cpumask timestamp_mode \
		 "e[:[<group>/][<event>]]" "place: [<module>:]<symbol>"; do
		! grep -qF "$k" README || { echo "# README names $k"; exit 1; }
	done' _ "$D" "$TMP"
# what ftracetest's tests look for ("requires: ...:README") for the
# features utrace has: a test without its line is skipped as UNSUPPORTED
check "README: the features ftracetest looks for" bash -c '
	cd "$1" && for k in "<var1>=<field|var_ref|numeric_literal>" \
		"char name[]'"'"' >> synthetic_events" "onchange(var)" "snapshot()" \
		"trace(<synthetic_event>" "s:[synthetic/]" "x8/16/32/64" "imm-value" \
		"imm-string" "\$arg<N>" "<type>\\[<array-size>\\]"; do
		grep -qF -- "$k" README || { echo "# README lacks $k"; exit 1; }
	done' _ "$D"

check "saved_cmdlines: '<tid> <comm>' of each thread, as the kernel prints it" bash -c '
	cd "$1" && grep -qx "$2 sample" saved_cmdlines &&
	[ "$(wc -l < saved_cmdlines)" = "$(ls /proc/$2/task | wc -l)" ] &&
	[ "$(stat -c %A saved_cmdlines)" = "-r--r-----" ]' _ "$D" "$SP"

check "buffer_size_kb and buffer_total_size_kb read the pool's size" bash -c '
	cd "$1" && s=$(cat buffer_size_kb) && [ "$s" -gt 0 ] &&
	[ "$(cat buffer_total_size_kb)" = "$s" ] && echo "$s" > buffer_size_kb &&
	wr buffer_size_kb 0 | grep -q EINVAL && wr buffer_size_kb 1k | grep -q EINVAL &&
	wr buffer_total_size_kb 100 | grep -q EINVAL' _ "$D"

# blocked PID: PID sleeps (in a read of trace_pipe, for the checks below)
blocked() {
	case $(sed -E 's/^[0-9]+ \(.*\) (.).*/\1/' "/proc/$1/stat" 2> /dev/null) in S|D) ;; *) false ;; esac
}
export -f blocked
# Another reader is blocked first, until killed (it was a 5 s timeout,
# which a slow second reader could outlast, started after a guessed 0.3 s).
# The second must end when its timeout kills it, not when something else
# wakes the file up: well within 10 s (the first reader blocks for good).
check "trace_pipe: blocks; timeout 2 cat trace_pipe exits 124 at once" bash -c '
	cd "$1" && echo 0 > events/enable || exit 1
	cat trace_pipe > /dev/null & r=$!; wait_for blocked $r
	start=$(date +%s%N); timeout 2 cat trace_pipe; rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 )); kill $r 2> /dev/null; wait
	echo "rc=$rc ms=$ms" >&2; [ $rc = 124 ] && [ $ms -lt 10000 ]' _ "$D"

# (each access had 1 s; 30 s is room for a loaded machine, while a mount
# stalled by the reader would stay stalled until it is killed)
check "trace_pipe: a blocked reader does not stall the rest of the mount" bash -c '
	cd "$1" || exit 1
	cat trace_pipe > /dev/null & r=$!; wait_for blocked $r
	timeout 30 cat tracing_on > /dev/null && timeout 30 ls events > /dev/null &&
	timeout 30 cat available_events > /dev/null; rc=$?
	kill $r; wait; exit $rc' _ "$D"

# Read with tracing_on 0, so that trace_pipe ends once it has given all
# (a reader that blocks on had a 1 s timeout to read everything in).
check "trace_pipe: consumes what it prints; trace is empty after it" bash -c '
	cd "$1" && echo > trace && echo 1 > events/demo/demo_request/enable &&
	wait_for has_lines trace 2 " demo_request: " && echo 0 > events/demo/demo_request/enable &&
	echo 0 > tracing_on && timeout 30 cat trace_pipe > "$2/pipe"; rc=$?; echo 1 > tracing_on
	[ $rc = 0 ] && [ "$(wc -l < "$2/pipe")" -ge 2 ] && ! grep -q "^#" "$2/pipe" &&
	[ "$(grep -cv "demo_request: id=" "$2/pipe")" = 0 ] &&
	[ "$(grep -vc "^#" trace)" = 0 ]' _ "$D" "$TMP"

check "trace_pipe: a short read gives a line's start, the next read only its rest" bash -c '
	cd "$1" && echo 1 > events/demo/demo_request/enable && wait_for has_lines trace 2 " demo_request: " &&
	echo 0 > events/demo/demo_request/enable && python3 -c "
import os, re, sys
fd = os.open(\"trace_pipe\", os.O_RDONLY)
a = os.read(fd, 20); b = os.read(fd, 4096); c = os.read(fd, 4096)
ok = len(a) == 20 and b.endswith(b\"\n\") and b.count(b\"\n\") == 1 and \
     re.match(rb\" +sample-[0-9]+ +\[[0-9]{3}\] .* demo_request: id=[0-9]+ bytes=[0-9]+ path=/\S*\n\", a + b) and \
     c.endswith(b\"\n\") and c.startswith(b\" \")
sys.exit(0 if ok else 1)"' _ "$D"

# The program runs until SIGUSR1 ends it normally, once the reader has
# read 4 lines (it ran for 1 s, which a loaded machine could spend before
# the reader started).
check "trace_pipe ends when its process exits, and the process disappears" bash -c '
	UTRACE_EVENTS=demo:demo_request "$2" --run 0 > /dev/null 2>&1 & p=$!
	wait_for traceable $p && wait_for test -d "$1/$p" || { kill $p; exit 1; }
	timeout 30 cat "$1/$p/trace_pipe" > "$3/exit.pipe" & c=$!
	wait_for has_lines "$3/exit.pipe" 4; kill -USR1 $p
	wait $c; rc=$?; wait $p
	[ $rc = 0 ] && [ "$(wc -l < "$3/exit.pipe")" -gt 3 ] &&
	[ ! -e "$1/$p" ] && [ ! -e "$1/sample-$p" ] && ! ls "$1" | grep -qx "$p"' _ "$MNT" "$SAMPLE" "$TMP"

check "mount: usage errors and a missing directory" bash -c '
	"$1" mount 2> "$2/err"; [ $? = 129 ] && grep -q "no directory given" "$2/err" &&
	"$1" mount "$2/nonexistent" 2> "$2/err"; [ $? = 1 ] &&
	grep -qx "utrace mount: cannot mount on '\''$2/nonexistent'\'': No such file or directory" "$2/err"' _ "$UTRACE" "$TMP"

check "utrace mount -u DIR unmounts; the server ends" bash -c '
	"$1" mount -u "$2" && ! grep -q " $2 fuse" /proc/self/mounts &&
	"$1" mount -u "$2" 2> "$3/err"; [ $? = 1 ] && grep -q "not a mounted FUSE filesystem" "$3/err"' \
	_ "$UTRACE" "$MNT" "$TMP"

check "SIGTERM to utrace mount -f unmounts cleanly" bash -c '
	"$1" mount -f "$2" & m=$!
	wait_for grep -q " $2 fuse" /proc/self/mounts
	[ -d "$2/$3" ] && kill -TERM $m && wait $m && ! grep -q " $2 fuse" /proc/self/mounts' \
	_ "$UTRACE" "$MNT" "$SP"

check "fusermount3 -u DIR unmounts a detached utrace mount" bash -c '
	"$1" mount "$2" && [ -d "$2/$3" ] && fusermount3 -u "$2" &&
	! grep -q " $2 fuse" /proc/self/mounts' _ "$UTRACE" "$MNT" "$SP"

# what the program said (a sanitizer's report), when anything failed
if [ "$failed" -ne 0 ] && [ -s "$TMP/sample.err" ]; then
	sed 's/^/# the sample: /' "$TMP/sample.err" | head -n 60
fi
done_testing
