#!/usr/bin/env bash
# Issue 28 item 15: triggers in instances, trace_marker's triggers
# (events/ftrace/print/trigger) and the snapshot of an instance, through
# the mount, as the kernel's tracefs has them (trace_events_trigger.c:
# a trigger file per event and instance, acting on its instance;
# tracing_mark_write(): print's triggers on the text without the newline
# the marker adds, the record kept when a traceoff fires) and as the
# kernel's ftracetest uses them (trigger-trace-marker-hist.tc,
# trigger-trace-marker-synthetic.tc, 00basic/snapshot.tc in an instance).
. "$(dirname "$0")/lib.sh"
mount_demo "$UTRACE_BUILD/tests/req-demo" loop
wait_for test -d "$E/reqdemo" || { echo "not ok - no events directory"; exit 1; }
I="$D/instances/foo"
IE="$I/events"
export D E I IE TMP
export -f same

AVAIL="# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist"
grep -q "stacktrace" "$E/reqdemo/req_end/trigger" ||
	AVAIL="# traceon traceoff snapshot enable_event disable_event enable_hist disable_hist hist"
export AVAIL
none() {
	[ "$(cat "$1")" = "# Available triggers:
$AVAIL" ]
}
export -f none

check "an instance's events have trigger and hist files; the instance a snapshot file; print a trigger and hist file" bash -c '
	mkdir "$I" &&
	[ "$(ls "$IE/reqdemo/req_end" | tr "\n" " ")" = "enable filter format hist id trigger " ] &&
	[ "$(ls "$E/ftrace/print" | tr "\n" " ")" = "format hist id trigger " ] &&
	[ "$(ls "$IE/ftrace/print" | tr "\n" " ")" = "format hist id trigger " ] &&
	[ "$(ls "$E/ftrace/raw_data" | tr "\n" " ")" = "format id " ] &&
	[ -f "$I/snapshot" ] && none "$IE/reqdemo/req_end/trigger" && none "$E/ftrace/print/trigger"'

check "traceoff in the instance: its tracing_on goes to 0, the top level's stays 1" bash -c '
	echo traceoff > "$IE/reqdemo/req_end/trigger" &&
	[ "$(cat "$IE/reqdemo/req_end/trigger")" = "traceoff:unlimited" ] &&
	none "$E/reqdemo/req_end/trigger" &&
	wait_for grep -qx 0 "$I/tracing_on" && [ "$(cat "$D/tracing_on")" = 1 ] &&
	echo "!traceoff" >> "$IE/reqdemo/req_end/trigger" && echo 1 > "$I/tracing_on" &&
	none "$IE/reqdemo/req_end/trigger"'

check "soft mode is the instance's: 0* there, 0 at the top level" bash -c '
	echo "traceon if status == 404" > "$IE/reqdemo/req_end/trigger" &&
	[ "$(cat "$IE/reqdemo/req_end/enable")" = "0*" ] && [ "$(cat "$E/reqdemo/req_end/enable")" = 0 ] &&
	echo "traceon if status == 404" > "$E/reqdemo/req_end/trigger" &&
	[ "$(cat "$E/reqdemo/req_end/enable")" = "0*" ] &&
	echo "!traceon" >> "$E/reqdemo/req_end/trigger" && [ "$(cat "$E/reqdemo/req_end/enable")" = 0 ] &&
	[ "$(cat "$IE/reqdemo/req_end/enable")" = "0*" ] &&
	echo "!traceon" >> "$IE/reqdemo/req_end/trigger" && [ "$(cat "$IE/reqdemo/req_end/enable")" = 0 ]'

check "enable_event:reqdemo:req_begin:1 in the instance: 1* there, its events in its trace only" bash -c '
	echo > "$D/trace" && echo > "$I/trace" &&
	echo "enable_event:reqdemo:req_begin:1" > "$IE/reqdemo/req_end/trigger" &&
	wait_for grep -qx "enable_event:reqdemo:req_begin:count=0" "$IE/reqdemo/req_end/trigger" &&
	[ "$(cat "$IE/reqdemo/req_begin/enable")" = "1*" ] &&
	[ "$(cat "$E/reqdemo/req_begin/enable")" = 0 ] &&
	wait_for grep -q "req_begin: id=" "$I/trace" && ! grep -q "req_begin: id=" "$D/trace" &&
	echo "!enable_event:reqdemo:req_begin" >> "$IE/reqdemo/req_end/trigger" &&
	echo 0 > "$IE/reqdemo/req_begin/enable" && echo > "$I/trace"'

B='hist:keys=common_pid:ts0=common_timestamp.usecs'
L='hist:keys=common_pid:l=common_timestamp.usecs-$ts0'
export B L
check "a hist trigger in the instance: its table there; the top level has none" bash -c '
	echo "hist:keys=status" > "$IE/reqdemo/req_end/trigger" &&
	wait_for grep -qE "^\{ status: +200 \} hitcount: +[0-9]+$" "$IE/reqdemo/req_end/hist" &&
	[ ! -s "$E/reqdemo/req_end/hist" ] && none "$E/reqdemo/req_end/trigger"'

check "variables are the instance's: \$ts0 of the instance is not the top level's" bash -c '
	echo "$B" > "$IE/reqdemo/req_begin/trigger" &&
	echo "$L" >> "$IE/reqdemo/req_end/trigger" &&
	grep -q "l=common_timestamp.usecs-\$ts0" "$IE/reqdemo/req_end/trigger" &&
	! echo "$L" >> "$E/reqdemo/req_end/trigger" 2> /dev/null &&
	tail -n 3 "$D/error_log" | head -n 1 | grep -q "hist:reqdemo:req_end: error: Couldn'\''t find variable"'

check "rmdir with triggers: they go with the instance; a new one of the name has none" bash -c '
	rmdir "$I" && mkdir "$I" && none "$IE/reqdemo/req_end/trigger" &&
	none "$IE/reqdemo/req_begin/trigger" && [ "$(cat "$IE/reqdemo/req_begin/enable")" = 0 ] &&
	[ "$(cat "$E/reqdemo/req_begin/enable")" = 0 ] && [ "$(cat "$E/reqdemo/req_end/enable")" = 0 ]'

# ftracetest's trigger-trace-marker-hist.tc, at the top level and in the instance
check "trace_marker hist: 10 writes, hitcount 10 (top level and instance)" bash -c '
	for d in "$D" "$I"; do
		echo "hist:keys=common_pid" > "$d/events/ftrace/print/trigger" &&
		for i in $(seq 1 10); do echo hello > "$d/trace_marker"; done &&
		grep -q "hitcount: *10$" "$d/events/ftrace/print/hist" &&
		echo "!hist:keys=common_pid" >> "$d/events/ftrace/print/trigger" || exit 1
	done'

check "trace_marker filter: buf is the text without the added newline; the traceoff keeps its line" bash -c '
	echo > "$D/trace" &&
	echo "traceoff if buf == \"stop\"" > "$E/ftrace/print/trigger" &&
	[ "$(cat "$E/ftrace/print/trigger")" = "traceoff:unlimited if buf == \"stop\"" ] &&
	echo stop > "$D/trace_marker" && [ "$(cat "$D/tracing_on")" = 1 ] &&
	echo -n stop > "$D/trace_marker" && [ "$(cat "$D/tracing_on")" = 0 ] &&
	[ "$(grep -c "tracing_mark_write: stop$" "$D/trace")" = 2 ] &&
	! echo more > "$D/trace_marker" 2> "$TMP/e" && grep -q "Bad file descriptor" "$TMP/e" &&
	echo "!traceoff" >> "$E/ftrace/print/trigger" && echo 1 > "$D/tracing_on"'

# ftracetest's trigger-trace-marker-synthetic.tc
check "trace_marker to trace_marker latency: onmatch(ftrace.print).latency(\$lat); > keeps hist triggers whose variables are read" bash -c '
	echo "latency u64 lat" > "$D/synthetic_events" &&
	echo "hist:keys=common_pid:ts0=common_timestamp.usecs if buf == \"start\"" > "$E/ftrace/print/trigger" &&
	echo "hist:keys=common_pid:lat=common_timestamp.usecs-\$ts0:onmatch(ftrace.print).latency(\$lat) if buf == \"end\"" >> "$E/ftrace/print/trigger" &&
	echo "hist:keys=common_pid,lat:sort=lat" > "$E/synthetic/latency/trigger" &&
	echo -n start > "$D/trace_marker" && echo -n end > "$D/trace_marker" &&
	[ "$(grep -c "hitcount: *1$" "$E/ftrace/print/hist")" = 2 ] &&
	grep -q "hitcount: *1$" "$E/synthetic/latency/hist" &&
	echo "!hist:keys=common_pid,lat:sort=lat" >> "$E/synthetic/latency/trigger" &&
	: > "$E/ftrace/print/trigger" && [ "$(grep -c "^hist:" "$E/ftrace/print/trigger")" = 2 ] &&
	echo "!hist:keys=common_pid:lat=common_timestamp.usecs-\$ts0:onmatch(ftrace.print).latency(\$lat) if buf == \"end\"" >> "$E/ftrace/print/trigger" &&
	echo "!hist:keys=common_pid:ts0=common_timestamp.usecs if buf == \"start\"" >> "$E/ftrace/print/trigger" &&
	none "$E/ftrace/print/trigger" && echo "!latency" >> "$D/synthetic_events"'

check "the instance's snapshot trigger on trace_marker: allocated at once, the marker's line in its copy, the top level's freed" bash -c '
	echo > "$I/trace" &&
	grep -q "^# \* Snapshot is freed \*$" "$I/snapshot" &&
	echo snapshot > "$IE/ftrace/print/trigger" &&
	grep -q "^# \* Snapshot is allocated \*$" "$I/snapshot" &&
	echo "hello >1<" > "$I/trace_marker" &&
	[ "$(grep -v "^#" "$I/snapshot" | sed "s/.*tracing_mark_write: //")" = "hello >1<" ] &&
	grep -q "^# \* Snapshot is freed \*$" "$D/snapshot" &&
	echo "!snapshot" >> "$IE/ftrace/print/trigger" && echo 0 > "$I/snapshot"'

check "snapshot:1 on an event in the instance: a copy of the instance's buffer" bash -c '
	echo 1 > "$IE/reqdemo/req_begin/enable" &&
	wait_for grep -q "req_begin: id=" "$I/trace" &&
	echo "snapshot:1" > "$IE/reqdemo/req_end/trigger" &&
	wait_for grep -q "req_begin: id=" "$I/snapshot" && ! grep -q "req_end: id=" "$I/snapshot" &&
	grep -q "^# \* Snapshot is freed \*$" "$D/snapshot" &&
	echo "!snapshot" >> "$IE/reqdemo/req_end/trigger" && echo 0 > "$IE/reqdemo/req_begin/enable"'

# ftracetest's 00basic/snapshot.tc, in the instance
check "the instance's snapshot file: echo 1 allocates and takes, tracing_on left as it was" bash -c '
	echo > "$I/trace" && echo 0 > "$I/tracing_on" && echo 1 > "$I/snapshot" &&
	grep -q "Snapshot is allocated" "$I/snapshot" && [ "$(cat "$I/tracing_on")" = 0 ] &&
	echo 1 > "$I/tracing_on" && echo 1 > "$I/snapshot" && [ "$(cat "$I/tracing_on")" = 1 ] &&
	grep -q "^# \* Snapshot is freed \*$" "$D/snapshot" && echo 0 > "$I/snapshot" &&
	rmdir "$I"'
done_testing
