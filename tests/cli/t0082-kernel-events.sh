#!/usr/bin/env bash
# Kernel events in a recording (utrace record -e sched:...): the kernel's
# sched events of the traced process tree and the sample's own events in
# one file on one clock, read back alike by utrace script, the trace.dat
# export through trace-cmd report and the public reader API; the
# recorder's tracing instance removed afterwards, the system's tracing
# left as it was; without the rights, a clear error and the user events
# all the same.  Needs root and tracefs (mounted here if it is not).
. "$(dirname "$0")/lib.sh"
COUNT="$UTRACE_BUILD/samples/count-events"

[ "$(id -u)" -eq 0 ] || skip_all "kernel events need root (this runs as uid $(id -u))"
T=/sys/kernel/tracing
if [ ! -e "$T/available_events" ]; then
	mount -t tracefs nodev "$T" 2> /dev/null ||
		skip_all "tracefs is not mounted at $T and cannot be mounted here"
fi
[ -w "$T/instances" ] || skip_all "$T/instances is not writable (no tracing instances)"
grep -qx 'sched:sched_switch' "$T/available_events" ||
	skip_all "the kernel has no sched:sched_switch event"

# The top instance's state, to check it is unchanged afterwards.
top_state() {
	local f
	for f in tracing_on set_event current_tracer trace_clock set_event_pid \
		options/event-fork options/record-tgid buffer_size_kb; do
		printf '%s: %s\n' "$f" "$(cat "$T/$f" 2> /dev/null | tr '\n' ' ')"
	done
}
top_state > "$TMP/top-before"

# No instance of a recorder that has ended: other tests' recorders may be
# running beside this one (t0041-t0046 record kernel events too), and
# their instances are theirs while they run.
no_instance_left() {
	local p
	for p in $(ls "$T/instances" | sed -n 's/^utrace-record-//p'); do
		kill -0 "$p" 2> /dev/null || return 1
	done
}

KEV=(-e sched:sched_process_fork -e sched:sched_process_exec
     -e sched:sched_process_exit -e sched:sched_switch)
# a shell that forks a child running the sample, waits, then runs it again
CMD=(sh -c "\"$SAMPLE\" & wait; exec \"$SAMPLE\"")

record() {
	"$UTRACE" record -o "$TMP/k.dat" "${KEV[@]}" -e 'sample-trace:*' -- "${CMD[@]}" \
		> /dev/null 2> "$TMP/err" &&
	grep -q ' 0 lost' "$TMP/err" &&
	grep -qE '^utrace record: [1-9][0-9]* kernel events, 0 lost$' "$TMP/err" &&
	sed -nE 's/^utrace record: started pid ([0-9]+) .*/\1/p' "$TMP/err" > "$TMP/root"
}
check "record kernel and user events of a command that forks" record

check "no utrace-record-* instance is left" no_instance_left
top_unchanged() {
	top_state > "$TMP/top-after" && same "$TMP/top-after" "$TMP/top-before"
}
check "the top instance's tracing state is unchanged" top_unchanged

script_out() {
	"$UTRACE" script -i "$TMP/k.dat" > "$TMP/script" 2> "$TMP/err" && [ ! -s "$TMP/err" ]
}
check "utrace script reads the file without a word" script_out

# Field by field: the kernel events belong to the traced tree (the
# command and what it forked, by the fork events), sched_switch to a
# switch from or into it; a fork of each sample process comes before its
# first user event; both kinds are there in the counts expected.
tree() {
	python3 - "$TMP/script" "$(cat "$TMP/root")" <<'EOF'
import re, sys
L = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d{3})\] \S{5}\s+(\d+)\.(\d{6}): (\w+): (.*)$')
root = int(sys.argv[2])
ev = []
for line in open(sys.argv[1]):
    m = L.match(line)
    if not m:
        print('# cannot read: ' + line.rstrip()); sys.exit(1)
    comm, tid, cpu, s, us, name, text = m.groups()
    ev.append((int(s) * 10**6 + int(us), int(tid), name, text))
tree = {root}
fork_at = {}
for t, tid, name, text in ev:
    if name == 'sched_process_fork':
        f = dict(kv.split('=', 1) for kv in text.split() if '=' in kv)
        if tid not in tree or int(f['pid']) != tid:
            print('# fork outside the tree: %d %s' % (tid, text)); sys.exit(1)
        tree.add(int(f['child_pid']))
        fork_at[int(f['child_pid'])] = t
kern = {'sched_process_fork', 'sched_process_exec', 'sched_process_exit', 'sched_switch'}
n_k = n_u = 0
first_user = {}
execs = []
for t, tid, name, text in ev:
    if name in kern:
        n_k += 1
        if name == 'sched_switch':
            p = int(re.search(r'prev_pid=(\d+)', text).group(1))
            q = int(re.search(r'next_pid=(\d+)', text).group(1))
            if p not in tree and q not in tree:
                print('# a switch of no traced task: ' + text); sys.exit(1)
        elif tid not in tree:
            print('# %s of pid %d, not of the tree %s' % (name, tid, sorted(tree))); sys.exit(1)
        if name == 'sched_process_exec':
            execs.append(text)
    else:
        n_u += 1
        first_user.setdefault(tid, t)
if n_u != 48:
    print('# %d user events, not 48' % n_u); sys.exit(1)
if len(first_user) != 2:
    print('# user events of %d processes, not 2' % len(first_user)); sys.exit(1)
if sum('samples/sample ' in e for e in execs) != 2 or not any('/sh ' in e for e in execs):
    print('# execs: %s' % execs); sys.exit(1)
# the first sample was forked by the shell; the second is the shell itself
forked = [p for p in first_user if p != root]
if len(forked) != 1 or forked[0] not in fork_at or not fork_at[forked[0]] < first_user[forked[0]]:
    print('# no fork before the first event of %s: %s %s' % (forked, fork_at, first_user)); sys.exit(1)
if root not in first_user:
    print('# the exec()ed shell (pid %d) has no user event' % root); sys.exit(1)
print('# %d kernel events, %d user events, tree %s' % (n_k, n_u, sorted(tree)))
EOF
}
check "kernel events only of the traced tree; the fork before the child's events" tree

# name counts: script, the reader API, trace-cmd report of the export
script_counts() {
	sed -E 's/^.*\] \S{5} +[0-9]+\.[0-9]{6}: ([a-z_0-9]+): .*/\1/' "$TMP/script" |
		sort | uniq -c | awk '{ print $2, $1 }'
}
api_counts() {
	"$COUNT" "$TMP/k.dat" > "$TMP/api.raw" 2> "$TMP/err" && [ ! -s "$TMP/err" ] &&
	sed -E 's/^[^:]*:([^ ]*) /\1 /' "$TMP/api.raw" | sort > "$TMP/api" &&
	script_counts | sort > "$TMP/script-counts" &&
	grep -q '^sched_switch ' "$TMP/api" && grep -q '^foo_bar ' "$TMP/api" &&
	same "$TMP/api" "$TMP/script-counts"
}
check "utrace_reader_next() gives both kinds, as many as script prints" api_counts

api_systems() {
	grep -q '^sched:sched_process_fork ' "$TMP/api.raw" &&
	grep -q '^sample-trace:foo_bar ' "$TMP/api.raw"
}
check "the reader API names kernel events by their kernel system" api_systems

if command -v trace-cmd > /dev/null; then
	tracecmd() {
		"$UTRACE" convert -i "$TMP/k.dat" -o "$TMP/k.tdat" 2> "$TMP/err" &&
		[ ! -s "$TMP/err" ] &&
		trace-cmd report "$TMP/k.tdat" > "$TMP/report" 2> "$TMP/err" &&
		grep -vE '^(cpus=|CPU:)' "$TMP/report" |
			sed -E 's/^.*\] +[0-9]+\.[0-9]+: +([a-z_0-9]+): .*/\1/' |
			sort | uniq -c | awk '{ print $2, $1 }' | sort > "$TMP/report-counts" &&
		same "$TMP/report-counts" "$TMP/script-counts"
	}
	check "trace-cmd report of the trace.dat export has both kinds, as many" tracecmd
else
	echo "ok $((n += 1)) # SKIP trace-cmd is not installed"
fi

bad_event() {
	! "$UTRACE" record -o "$TMP/bad.dat" -e sched:no_such_event -e 'sample-trace:*' \
		-- "$SAMPLE" > /dev/null 2> "$TMP/err" &&
	grep -q "no kernel event matches 'sched:no_such_event'" "$TMP/err" &&
	no_instance_left
}
check "a kernel event that does not exist: an error, no instance left" bad_event

explicit() {
	"$UTRACE" record -o "$TMP/x.dat" -e kernel:sched:sched_process_exec \
		-e user:sample-trace:foo_bar -- "$SAMPLE" > /dev/null 2> "$TMP/err" &&
	"$COUNT" "$TMP/x.dat" | sort > "$TMP/x" &&
	printf 'sample-trace:foo_bar 4\nsched:sched_process_exec 1\n' > "$TMP/x.want" &&
	same "$TMP/x" "$TMP/x.want"
}
check "kernel: and user: prefixes say which events are meant" explicit

# ftrace-target has sched:* events of its own (the kernel's names)
TARGET="$UTRACE_BUILD/tests/ftrace-target"
same_names() {
	"$UTRACE" record -o "$TMP/t.dat" -e sched:sched_switch --duration 0.5 -- "$TARGET" \
		> /dev/null 2> "$TMP/err" &&
	grep -q "'sched:sched_switch' names kernel events and events of pid [0-9]* too: the kernel's were recorded (user:sched:sched_switch records the program's)" "$TMP/err" &&
	grep -q ' 0 events written' "$TMP/err" &&
	grep -qE '^utrace record: [1-9][0-9]* kernel events' "$TMP/err" &&
	"$UTRACE" record -o "$TMP/u.dat" -e user:sched:sched_switch --duration 0.5 \
		-- "$TARGET" > /dev/null 2> "$TMP/err" &&
	! grep -q 'kernel events' "$TMP/err" &&
	grep -qE ' [1-9][0-9]* events written' "$TMP/err" &&
	"$UTRACE" script -i "$TMP/u.dat" 2> /dev/null | head -1 |
		grep -q 'sched_switch: prev_comm=ftrace-target'
}
check "a name both sides have: the kernel's, said; user: takes the program's" same_names

stale() {
	local dead
	true & dead=$!
	wait "$dead"
	mkdir "$T/instances/utrace-record-$dead" &&
	"$UTRACE" record -o "$TMP/s.dat" -e sched:sched_process_exec -- "$SAMPLE" \
		> /dev/null 2> "$TMP/err" &&
	grep -q "removed the tracing instance 'utrace-record-$dead' of a recorder" "$TMP/err" &&
	no_instance_left
}
check "a stale instance of a killed recorder is removed by the next" stale

# kernel_in FILE: the (growing) recording holds a sched_switch already
kernel_in() {
	"$COUNT" "$1" 2> /dev/null | grep -q '^sched:sched_switch '
}
gone() {
	! kill -0 "$1" 2> /dev/null
}
killed() {
	"$UTRACE" record -o "$TMP/kill.dat" -e sched:sched_switch -e 'demo:*' \
		-- "$SAMPLE" --run 0 --log "$TMP/kill.log" > /dev/null 2> "$TMP/kill.err" &
	local rec=$! child
	wait_for has_lines "$TMP/kill.log" 2 &&
	# kernel pages are read every 100 ms: killed before the first was
	# written, the file would have none (as it should) and nothing to check
	wait_for kernel_in "$TMP/kill.dat" &&
	ls "$T/instances" | grep -qx "utrace-record-$rec" &&
	child=$(sed -nE 's/^utrace record: started pid ([0-9]+) .*/\1/p' "$TMP/kill.err") &&
	# the command holds no file of the instance (it would keep it busy)
	! ls -l "/proc/$child/fd" | grep -q tracing &&
	kill -KILL "$rec"; wait "$rec" 2> /dev/null
	# (the command outlives its recorder: its end is waited for, though
	# it holds nothing of the instance)
	[ -n "$child" ] && kill "$child" 2> /dev/null && wait_for gone "$child"
	ls "$T/instances" | grep -qx "utrace-record-$rec" &&
	"$UTRACE" record -o "$TMP/s2.dat" -e sched:sched_process_exec -- "$SAMPLE" \
		> /dev/null 2> "$TMP/err" &&
	grep -q "removed the tracing instance 'utrace-record-$rec' of a recorder" "$TMP/err" &&
	no_instance_left &&
	"$COUNT" "$TMP/kill.dat" | grep -q '^sched:sched_switch '
}
check "a recorder killed with SIGKILL: its instance goes with the next; its file reads" killed

sigint() {
	"$UTRACE" record -o "$TMP/i.dat" -e sched:sched_switch -e 'demo:*' \
		-- "$SAMPLE" --run 0 --log "$TMP/i.log" > /dev/null 2> "$TMP/err" &
	local rec=$!
	wait_for has_lines "$TMP/i.log" 3 && kill -INT "$rec" && wait "$rec" &&
	no_instance_left &&
	"$COUNT" "$TMP/i.dat" > "$TMP/i.counts" &&
	grep -q '^sched:sched_switch ' "$TMP/i.counts" &&
	grep -q '^demo:demo_request ' "$TMP/i.counts"
}
check "Ctrl-C: the recording ends cleanly and the instance goes" sigint

attach() {
	"$SAMPLE" --run 0 --log "$TMP/p.log" > /dev/null 2>&1 &
	local pid=$!
	wait_traceable "$pid" &&
	"$UTRACE" record -o "$TMP/p.dat" -e sched:sched_switch -e 'demo:*' -p "$pid" \
		--duration 1 > /dev/null 2> "$TMP/err"
	local st=$?
	kill "$pid"; wait "$pid" 2> /dev/null
	[ "$st" -eq 0 ] && no_instance_left &&
	"$UTRACE" script -i "$TMP/p.dat" > "$TMP/p.script" 2> "$TMP/err" &&
	grep -qE -- "-$pid +\[[0-9]{3}\] .* demo_request: " "$TMP/p.script" &&
	grep -qE "sched_switch: .*(prev|next)_pid=$pid " "$TMP/p.script"
}
check "-p PID: a running process's kernel events with its own" attach

list_kernel() {
	"$UTRACE" list -k 'sched:sched_sw*' > "$TMP/list" 2> "$TMP/err" &&
	grep -qx 'sched:sched_switch' "$TMP/list" && ! grep -vq '^sched:sched_sw' "$TMP/list"
}
check "utrace list -k lists the kernel's events" list_kernel

# Without the rights: a user who cannot write tracefs gets a clear error
# and a recording of the user events all the same.
if command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups \
	test -x "$UTRACE" 2> /dev/null; then
	# as_nobody ENTRY: record the sample with -e ENTRY -e 'sample-trace:*'
	as_nobody() {
		local d="$TMP/nobody"
		chmod 711 "$TMP" && mkdir -p "$d" && chown 65534:65534 "$d" &&
		(cd "$d" && env -u XDG_RUNTIME_DIR UTRACE_RUNTIME_DIR="$d/run" \
			setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$UTRACE" record -o "$d/n.dat" -e "$1" -e 'sample-trace:*' \
			-- "$SAMPLE") > /dev/null 2> "$TMP/err"
	}
	norights() {
		local d="$TMP/nobody"
		as_nobody kernel:sched:sched_switch &&
		grep -q "kernel events need root or read/write access to $T" "$TMP/err" &&
		grep -q "recording the utrace events only" "$TMP/err" &&
		"$COUNT" "$d/n.dat" > "$TMP/n.counts" &&
		grep -q '^sample-trace:foo_bar 4$' "$TMP/n.counts" &&
		! grep -q '^sched:' "$TMP/n.counts"
	}
	check "without the rights: a clear error, the user events recorded" norights
	norights_plain() {
		as_nobody sched:sched_switch &&
		grep -q "no event of pid [0-9]* (sample) matches 'sched:sched_switch'" "$TMP/err" &&
		grep -q "if an entry names kernel events (kernel:SYS:EVENT): kernel events need root" "$TMP/err"
	}
	check "without the rights, sched:... unknown to the program: the hint" norights_plain
else
	echo "ok $((n += 1)) # SKIP no setpriv, or user nobody cannot run the build's utrace"
fi

check "still no utrace-record-* instance left" no_instance_left
check "and the top instance's tracing state is still unchanged" top_unchanged
# --filter on kernel events: the kernel filters them in the recorder's
# instance; a refused expression or one naming no recorded kernel event
# stops the recording before the command starts, in one line.
kfilter() {
	"$UTRACE" record -o "$TMP/kf.dat" -e sched:sched_process_exec -e sched:sched_process_fork \
		--filter 'sched:sched_process_exec:filename ~ "*/true"' -- \
		sh -c '/bin/true; /bin/ls / > /dev/null; /bin/true' > /dev/null 2> "$TMP/kf-err" &&
	"$UTRACE" script -i "$TMP/kf.dat" > "$TMP/kf-script" 2>> "$TMP/kf-err" &&
	[ "$(grep -c 'sched_process_exec: filename=/bin/true ' "$TMP/kf-script")" = 2 ] &&
	! grep -q 'sched_process_exec: filename=/bin/ls' "$TMP/kf-script" &&
	[ "$(grep -c 'sched_process_fork:' "$TMP/kf-script")" -ge 3 ]
}
check "--filter on a kernel event: only its matches, other events unfiltered" kfilter
kfilter_bad() {
	! "$UTRACE" record -o "$TMP/kb.dat" -e sched:sched_process_exec \
		--filter 'sched:sched_process_exec:filename == /bin/true' -- true 2> "$TMP/kb-err" &&
	[ "$(wc -l < "$TMP/kb-err")" = 1 ] &&
	grep -q "bad filter for kernel event 'sched:sched_process_exec': Invalid value (did you forget quotes)? at position [0-9]* of 'filename == /bin/true'" "$TMP/kb-err" &&
	! "$UTRACE" record -o "$TMP/kb.dat" -e sched:sched_process_exec \
		--filter 'sched:sched_switch:prev_pid == 1' -- true 2> "$TMP/kb-err2" &&
	grep -q "no kernel event recorded matches the filter 'sched:sched_switch:prev_pid == 1'" "$TMP/kb-err2" &&
	! "$UTRACE" record -o "$TMP/kb.dat" --filter 'kernel:sched:sched_switch:prev_pid == 1' \
		-- true 2> "$TMP/kb-err3" &&
	grep -q "is for kernel events, and none is recorded" "$TMP/kb-err3" &&
	no_instance_left
}
check "a kernel filter refused: one line with the kernel's reason, nothing left" kfilter_bad

done_testing
