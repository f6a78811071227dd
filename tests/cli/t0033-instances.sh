#!/usr/bin/env bash
# utrace mount: instances/<name>/ (mkdir, rmdir), trace instances with
# buffers, enables, filters and tracing_on of their own, as the kernel's
# tracefs has them (Documentation/trace/ftrace.rst, "Instances").  The
# errno values are the ones this machine's kernel gives (checked by hand
# with python's os.mkdir/os.rmdir on /sys/kernel/tracing/instances).
. "$(dirname "$0")/lib.sh"

need_fuse
command -v python3 > /dev/null || skip_all "python3 is missing"

export UTRACE_RUNTIME_DIR="$TMP/run"
MNT="$TMP/mnt"
mkdir -p "$MNT"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null
	done
	if grep -q " $MNT fuse" /proc/self/mounts 2> /dev/null; then
		fusermount3 -u "$MNT" 2> /dev/null || umount -l "$MNT" 2> /dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

# errno_of OP PATH: the errno name an os.OP(PATH) gives, or "ok"
errno_of() {
	python3 -c '
import errno, os, sys
try:
    getattr(os, sys.argv[1])(sys.argv[2])
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1" "$2"
}
# events FILE: the trace lines of FILE (no header)
events() {
	grep -v '^#' "$1"
}
export -f errno_of events

"$SAMPLE" --run 0 > /dev/null 2> "$TMP/sample.err" &
SP=$!
pids+=("$SP")
wait_traceable "$SP" "$TMP/sample.err"
if ! "$UTRACE" mount "$MNT" 2> "$TMP/err"; then
	skip_all "cannot mount here: $(head -n 1 "$TMP/err")"
fi
D="$MNT/$SP"
I="$D/instances"
wait_for test -d "$I"

check "instances/ is an empty directory, mode 0750, at first" bash -c '
	[ "$(stat -c %A "$1")" = drwxr-x--- ] && [ -z "$(ls -A "$1")" ]' _ "$I"

check "mkdir instances/foo makes an instance with the kernel's instance files" bash -c '
	mkdir "$1/foo" && [ "$(ls "$1")" = foo ] &&
	[ "$(ls "$1/foo" | tr "\n" " ")" = "available_tracers buffer_size_kb buffer_total_size_kb current_tracer error_log events options per_cpu set_event set_event_notrace_pid set_event_pid snapshot trace trace_clock trace_marker trace_marker_raw trace_options trace_pipe tracing_on " ] &&
	[ "$(stat -c %A "$1/foo")" = drwxr-x--- ] &&
	[ -f "$1/foo/events/demo/demo_tick/enable" ] && [ -d "$1/foo/per_cpu/cpu0" ] &&
	[ "$(cat "$1/foo/tracing_on")" = 1 ] && [ -z "$(cat "$1/foo/set_event")" ]' _ "$I"

check "mkdir of an existing instance: EEXIST; rmdir of none: ENOENT (as the kernel)" bash -c '
	[ "$(errno_of mkdir "$1/foo")" = EEXIST ] &&
	[ "$(errno_of rmdir "$1/nope")" = ENOENT ]' _ "$I"

check "names the kernel takes: spaces and colons; 255 bytes, not 256" bash -c '
	[ "$(errno_of mkdir "$1/a b:c")" = ok ] && [ -d "$1/a b:c" ] &&
	[ "$(errno_of rmdir "$1/a b:c")" = ok ] && [ ! -e "$1/a b:c" ] &&
	long=$(printf "%0255d" 0) &&
	[ "$(errno_of mkdir "$1/$long")" = ok ] && [ "$(errno_of rmdir "$1/$long")" = ok ] &&
	[ "$(errno_of mkdir "$1/${long}0")" = ENAMETOOLONG ]' _ "$I"

check "nothing else can be made inside an instance or the process directory" bash -c '
	[ "$(errno_of mkdir "$1/foo/x")" = EACCES ] &&
	[ "$(errno_of mkdir "$1/foo/events/x")" = EACCES ] &&
	[ "$(errno_of mkdir "$2/x")" = EACCES ] &&
	[ "$(errno_of rmdir "$2/events")" = EACCES ]' _ "$I" "$D"

# An event on in the instance only goes to the instance's buffer, and
# one on at the top level only goes to the top level's.
echo demo:demo_tick > "$I/foo/set_event"
echo demo:demo_request > "$D/set_event"
wait_for bash -c '[ "$(events "$1/foo/trace" | wc -l)" -ge 20 ] &&
	[ "$(events "$2/trace" | wc -l)" -ge 5 ]' _ "$I" "$D"
events "$I/foo/trace" > "$TMP/inst"
events "$D/trace" > "$TMP/top"

check "an event on only in the instance is in the instance's trace, not the top's" bash -c '
	grep -q "demo_tick: count=" "$1" && ! grep -q "demo_tick" "$2"' _ "$TMP/inst" "$TMP/top"
check "and an event on only at the top level is not in the instance's" bash -c '
	grep -q "demo_request" "$2" && ! grep -q "demo_request" "$1"' _ "$TMP/inst" "$TMP/top"
check "each reads back its own set_event and enable files" bash -c '
	[ "$(cat "$1/foo/set_event")" = demo:demo_tick ] &&
	[ "$(cat "$2/set_event")" = demo:demo_request ] &&
	[ "$(cat "$1/foo/events/demo/demo_tick/enable")" = 1 ] &&
	[ "$(cat "$2/events/demo/demo_tick/enable")" = 0 ] &&
	[ "$(cat "$1/foo/events/demo/enable")" = X ]' _ "$I" "$D"

# Both on, each with its own filter: each buffer keeps what its filter
# takes, and the same event shows the same time in both.
echo 'count & 1' > "$D/events/demo/demo_tick/filter"
echo 'stage == "busy"' > "$I/foo/events/demo/demo_tick/filter"
echo demo:demo_tick >> "$D/set_event"
: > "$D/trace"
: > "$I/foo/trace"
wait_for bash -c '[ "$(events "$1/foo/trace" | wc -l)" -ge 10 ] &&
	[ "$(events "$2/trace" | grep -c demo_tick)" -ge 10 ]' _ "$I" "$D"
events "$I/foo/trace" > "$TMP/inst"
events "$D/trace" | grep demo_tick > "$TMP/top"

check "each filter file reads back its own expression" bash -c '
	[ "$(cat "$1/events/demo/demo_tick/filter")" = "count & 1" ] &&
	[ "$(cat "$2/foo/events/demo/demo_tick/filter")" = "stage == \"busy\"" ]' _ "$D" "$I"
check "the top level keeps odd counts only, the instance busy stages only" bash -c '
	! sed -E "s/.*count=([0-9]+).*/\1/" "$2" | grep -q "[02468]$" &&
	! grep -v "stage=busy" "$1" | grep -q . &&
	grep -q "stage=idle" "$2"' _ "$TMP/inst" "$TMP/top"
# (The instance's pool starts with the top level's calibration points and
# takes the next ones on the same schedule; while the pools are young the
# points of each are measured apart, so allow 50 us.)
check "an event in both buffers is the same line in both, at the same time" python3 -c '
import re, sys
def load(f):
    out = {}
    for line in open(f):
        m = re.match(r"^(.*\] \.{5}) +([0-9]+\.[0-9]+): (demo_tick: count=([0-9]+) .*)$", line)
        if m:
            out[m.group(4)] = (m.group(1), float(m.group(2)), m.group(3))
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
both = set(a) & set(b)
worst = max([abs(a[k][1] - b[k][1]) for k in both] or [0])
print("# %d events in both, times at most %.6f s apart" % (len(both), worst))
sys.exit(not both or worst > 50e-6 or any(a[k][0] != b[k][0] or a[k][2] != b[k][2] for k in both))
' "$TMP/inst" "$TMP/top"

check "buffer_size_kb of the instance is its own" bash -c '
	top=$(cat "$2/buffer_size_kb") && echo 64 > "$1/foo/buffer_size_kb" &&
	[ "$(cat "$1/foo/buffer_size_kb")" -ge 64 ] && [ "$(cat "$1/foo/buffer_size_kb")" -lt 80 ] &&
	[ "$(cat "$2/buffer_size_kb")" = "$top" ] && [ "$top" != "$(cat "$1/foo/buffer_size_kb")" ]' _ "$I" "$D"

check "tracing_on of the instance is its own" bash -c '
	echo 0 > "$1/foo/tracing_on" && [ "$(cat "$1/foo/tracing_on")" = 0 ] &&
	[ "$(cat "$2/tracing_on")" = 1 ] && : > "$1/foo/trace" && : > "$2/trace" &&
	wait_for bash -c "[ \"\$(events \"$2/trace\" | grep -c demo_tick)\" -ge 10 ]" &&
	[ "$(events "$1/foo/trace" | wc -l)" -eq 0 ] &&
	echo 1 > "$1/foo/tracing_on" &&
	wait_for bash -c "[ \"\$(events \"$1/foo/trace\" | wc -l)\" -ge 3 ]"' _ "$I" "$D"

check "trace_clock of the instance is its own (x86-tsc there, mono at the top)" bash -c '
	grep -qw x86-tsc "$1/foo/trace_clock" || exit 0   # no invariant TSC: mono only
	echo x86-tsc > "$1/foo/trace_clock" && grep -q "\[x86-tsc\]" "$1/foo/trace_clock" &&
	grep -q "\[mono\]" "$2/trace_clock" &&
	wait_for bash -c "events \"$1/foo/trace\" | grep -qE \" [0-9]+: [a-z_]+: \"" &&
	! events "$1/foo/trace" | grep -qE " [0-9]+\.[0-9]{6}: " &&
	events "$2/trace" | grep -qE " [0-9]+\.[0-9]{6}: " &&
	echo mono > "$1/foo/trace_clock" && grep -q "\[mono\]" "$1/foo/trace_clock"' _ "$I" "$D"

check "set_event_pid of the instance is its own" bash -c '
	echo 1 > "$1/foo/set_event_pid" && [ "$(cat "$1/foo/set_event_pid")" = 1 ] &&
	[ -z "$(cat "$2/set_event_pid")" ] && : > "$1/foo/trace" && : > "$2/trace" &&
	wait_for bash -c "[ \"\$(events \"$2/trace\" | grep -c demo_tick)\" -ge 10 ]" &&
	[ "$(events "$1/foo/trace" | wc -l)" -eq 0 ] &&
	echo "$3" > "$1/foo/set_event_pid" &&
	wait_for bash -c "[ \"\$(events \"$1/foo/trace\" | wc -l)\" -ge 3 ]" &&
	: > "$1/foo/set_event_pid"' _ "$I" "$D" "$SP"

check "error_log is the instance's own" bash -c '
	: > "$1/foo/error_log" && : > "$2/error_log" &&
	! echo "nosuchfield == 1" > "$1/foo/events/demo/demo_tick/filter" 2> /dev/null &&
	grep -q "nosuchfield" "$1/foo/error_log" && [ -z "$(cat "$2/error_log")" ] &&
	echo 0 > "$1/foo/events/demo/demo_tick/filter"' _ "$I" "$D"

check "trace_marker of the instance writes into its buffer only" bash -c '
	echo "hello instance" > "$1/foo/trace_marker" && echo "hello top" > "$2/trace_marker" &&
	grep -q "tracing_mark_write: hello instance$" "$1/foo/trace" &&
	! grep -q "hello top" "$1/foo/trace" &&
	grep -q "tracing_mark_write: hello top$" "$2/trace" &&
	! grep -q "hello instance" "$2/trace"' _ "$I" "$D"

check "trace_pipe of the instance gives its events" bash -c '
	timeout 20 grep -m 3 demo_tick "$1/foo/trace_pipe" > "$2/pipe" &&
	[ "$(grep -c "demo_tick" "$2/pipe")" -eq 3 ]' _ "$I" "$TMP"

# rmdir while a file of the instance is open: EBUSY, as the kernel does.
check "rmdir while trace_pipe is open: EBUSY; after the close: removed" python3 -c '
import errno, os, sys
d = sys.argv[1]
for f in ("trace_pipe", "tracing_on", "events/demo/demo_tick/filter"):
    fd = os.open(d + "/foo/" + f, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.rmdir(d + "/foo")
        sys.exit("rmdir worked with %s open" % f)
    except OSError as e:
        if e.errno != errno.EBUSY:
            sys.exit("rmdir with %s open: %s" % (f, errno.errorcode[e.errno]))
    os.close(fd)
# a directory open does not hold it (the kernel: neither)
fd = os.open(d + "/foo/events", os.O_RDONLY)
os.rmdir(d + "/foo")
os.close(fd)
if os.path.exists(d + "/foo"):
    sys.exit("still there")
' "$I"

# (Under ThreadSanitizer, which cannot see membarrier(), the runtime cannot
# tell that no thread writes into the pool any more and keeps it mapped.)
if ldd "$SAMPLE" 2> /dev/null | grep -q libtsan; then
	n=$((n + 1))
	echo "ok $n # skip rmdir unmaps the pool: not under ThreadSanitizer"
else
	check "rmdir unmaps the instance's pool (one utrace-pool memfd left in maps)" bash -c '
		wait_for bash -c "[ \$(grep -c \"memfd:utrace-pool\" /proc/$1/maps) -eq 1 ]"' _ "$SP"
fi

check "the top level goes on after the rmdir, with its own filter" bash -c '
	: > "$1/trace" &&
	wait_for bash -c "[ \"\$(events \"$1/trace\" | grep -c demo_tick)\" -ge 5 ]" &&
	! events "$1/trace" | grep demo_tick | sed -E "s/.*count=([0-9]+).*/\1/" | grep -q "[02468]$"' _ "$D"

check "an instance made again under the same name starts afresh" bash -c '
	mkdir "$1/foo" && [ -z "$(cat "$1/foo/set_event")" ] &&
	[ "$(cat "$1/foo/events/demo/demo_tick/filter")" = none ] &&
	[ "$(events "$1/foo/trace" | wc -l)" -eq 0 ]' _ "$I"

check "at most 32 instances a process: the 33rd mkdir is ENOSPC, error_log says why" bash -c '
	for i in $(seq 2 32); do mkdir "$1/i$i" || exit 1; done
	[ "$(ls "$1" | wc -l)" -eq 32 ] && [ "$(errno_of mkdir "$1/i33")" = ENOSPC ] &&
	grep -q "instances: error: A process has at most 32 instances" "$1/../error_log" &&
	grep -q "Command: mkdir i33" "$1/../error_log" &&
	for i in $(seq 2 32); do rmdir "$1/i$i" || exit 1; done
	[ "$(ls "$1")" = foo ]' _ "$I"

# trace-cmd's -B (a buffer instance) through utrace enter: it makes the
# instance, records it and removes it, and leaves the top level alone.
if command -v trace-cmd > /dev/null && "$UTRACE" enter -p "$SP" -- true 2> /dev/null; then
	check "trace-cmd record -B: the events of the instance only, removed after" bash -c '
		set_before=$(cat "$4/set_event") &&
		"$1" enter -p "$2" -- trace-cmd record -d -B tcb -e "demo:demo_request" \
			-o "$3/b.dat" sleep 1 > "$3/tc.out" 2> "$3/err" &&
		trace-cmd report -i "$3/b.dat" > "$3/tc-report" 2>> "$3/err" &&
		grep -q "^tcb: .*demo_request: *id=" "$3/tc-report" &&
		! grep -v "^tcb:" "$3/tc-report" | grep -q "demo_" &&
		[ ! -e "$4/instances/tcb" ] && [ "$(cat "$4/set_event")" = "$set_before" ]' \
		_ "$UTRACE" "$SP" "$TMP" "$D"
else
	n=$((n + 1))
	echo "ok $n # skip trace-cmd record -B: no trace-cmd, or utrace enter cannot run here"
fi

# A process that exits while it has an instance with an open file.
echo demo:demo_tick > "$I/foo/set_event"
exec 7< "$I/foo/trace_pipe"
exec 8< "$D/trace_pipe"
kill -USR1 "$SP"        # (the sample's "end the run now")
wait "$SP"
rc=$?
check "the process exits normally (status 0) while an instance exists" bash -c '
	[ "$1" -eq 0 ] && ! grep -qi "sanitizer\|abort\|segv" "$2" ||
	{ echo "# status $1" && sed "s/^/# /" "$2" | head -n 60; false; }' _ "$rc" "$TMP/sample.err"
check "its directory goes; the instance's open trace_pipe then fails as the top level's" bash -c '
	wait_for bash -c "[ ! -e \"$1\" ]" &&
	a=$(timeout 10 cat <&7 2>&1 | tail -n 1; echo "${PIPESTATUS[0]}") &&
	b=$(timeout 10 cat <&8 2>&1 | tail -n 1; echo "${PIPESTATUS[0]}") &&
	{ echo "# instance: $a; top level: $b" | tr "\n" " "; echo; } && [ "$a" = "$b" ] && [ "${a##*$'"'"'\n'"'"'}" != 124 ]' _ "$D"
exec 7<&- 8<&-

done_testing
