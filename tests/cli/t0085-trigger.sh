#!/usr/bin/env bash
# Live triggers (the kernel's events/<sys>/<ev>/trigger and hist files):
# `utrace trigger -p`, `utrace hist -p` and the mount's files on a running
# tests/cli/trigger-demo.c, which fires hist-demo's events (shaped like
# histogram.rst's kmem:kmalloc) on command.  The hist tables are the
# golden outputs of t0084 (histogram.rst's examples), here aggregated
# inside the process; the other triggers (traceon, traceoff, enable_event,
# disable_event) with their counts, filters and readback as
# trace_events_trigger.c prints them; the soft mode (enable reads "0*");
# and threads firing while triggers come and go.
. "$(dirname "$0")/lib.sh"
trigger_demo
# live_hist EVENT < EXPECTED: utrace hist -p prints exactly EXPECTED
live_hist() {
	cat > "$TMP/want.txt"
	"$UTRACE" hist -p "$P" "$1" > "$TMP/got.txt" 2> "$TMP/err" &&
		same "$TMP/got.txt" "$TMP/want.txt"
}

# stacktrace needs libunwind (a build without it does not offer it)
AVAIL="# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist disable_hist hist"
if ! "$UTRACE" trigger -p "$P" kmalloc | grep -q stacktrace; then
	AVAIL="# traceon traceoff snapshot enable_event disable_event enable_hist disable_hist hist"
	echo "# this build has no libunwind: no stacktrace trigger, its checks are left out"
fi
export AVAIL
check "an event without triggers: the kernel's list of the commands" bash -c '
	[ "$("$0" trigger -p "$1" histdemo:kmalloc)" = "# Available triggers:
$AVAIL" ]' "$UTRACE" "$P"

check "--help: utrace trigger's commands, utrace hist's -p" bash -c '
	"$0" trigger --help | grep -q "^usage: utrace trigger -p PID... EVENT \[COMMAND\]" &&
	"$0" trigger --help | grep -q "enable_event:SYS:EVENT\[:N\]" &&
	"$0" hist --help | grep -q "^       utrace hist -p PID... EVENT"' "$UTRACE"
check "bad use: no process, no event, too many commands (129); an unknown event (1)" bash -c '
	"$0" trigger kmalloc traceon 2> /dev/null; [ $? = 129 ] || exit 1
	"$0" trigger -p "$1" 2> /dev/null; [ $? = 129 ] || exit 1
	"$0" trigger -p "$1" kmalloc traceon traceoff 2> /dev/null; [ $? = 129 ] || exit 1
	"$0" hist -p "$1" -i x.dat kmalloc 2> /dev/null; [ $? = 129 ] || exit 1
	"$0" trigger -p "$1" nosuch traceon 2> "$2/e"; [ $? = 1 ] &&
	[ "$(cat "$2/e")" = "utrace: process $1 has no event '\''nosuch'\''" ]' "$UTRACE" "$P" "$TMP"

check "histogram.rst's first trigger is taken and read back as the kernel prints it" bash -c '
	"$0" trigger -p "$1" kmalloc "hist:key=call_site:val=bytes_req if gfp_flags != 0x10" &&
	[ "$("$0" trigger -p "$1" kmalloc)" = "hist:keys=call_site:vals=hitcount,bytes_req:sort=hitcount:size=2048 if gfp_flags != 0x10 [active]" ]' \
	"$UTRACE" "$P"

check "a second trigger on the event (.hex, values=a,b, sort=.descending)" \
	trig histdemo:kmalloc 'hist:keys=call_site.hex:values=bytes_req,bytes_alloc:sort=bytes_alloc.descending if gfp_flags != 16'

send fire
check "utrace hist -p: both tables, aggregated in the process, \\n\\n apart (histogram.rst)" \
	live_hist histdemo:kmalloc <<'EOF'
# event histogram
#
# trigger info: hist:keys=call_site:vals=hitcount,bytes_req:sort=hitcount:size=2048 if gfp_flags != 0x10 [active]
#

{ call_site: 18446744072101849617 } hitcount:          1  bytes_req:          8
{ call_site: 18446744071582723703 } hitcount:          2  bytes_req:       1512
{ call_site: 18446744071581323680 } hitcount:          3  bytes_req:        148
{ call_site: 18446744071585143902 } hitcount:          4  bytes_req:      15288

Totals:
    Hits: 10
    Entries: 4
    Dropped: 0


# event histogram
#
# trigger info: hist:keys=call_site.hex:vals=hitcount,bytes_req,bytes_alloc:sort=bytes_alloc.descending:size=2048 if gfp_flags != 16 [active]
#

{ call_site: ffffffff81601c5e } hitcount:          4  bytes_req:      15288  bytes_alloc:      16384
{ call_site: ffffffff813b2e77 } hitcount:          2  bytes_req:       1512  bytes_alloc:       1536
{ call_site: ffffffff8125d1a0 } hitcount:          3  bytes_req:        148  bytes_alloc:        192
{ call_site: ffffffffa02c6a11 } hitcount:          1  bytes_req:          8  bytes_alloc:          8

Totals:
    Hits: 10
    Entries: 4
    Dropped: 0
EOF

check "the same trigger again: EEXIST and the kernel's error_log entry" bash -c '
	! "$0" trigger -p "$1" kmalloc "hist:key=call_site:val=bytes_req if gfp_flags != 0x10" 2> "$2/e" &&
	[ "$(cat "$2/e")" = "utrace: process $1: trigger '\''hist:key=call_site:val=bytes_req if gfp_flags != 0x10'\'' for '\''kmalloc'\'' refused: File exists; error_log:
hist:histdemo:kmalloc: error: Hist trigger already exists
  Command: hist:key=call_site:val=bytes_req if gfp_flags != 0x10
           ^" ]' "$UTRACE" "$P" "$TMP"

check "a field the event lacks: EINVAL, the caret under it" bash -c '
	! "$0" trigger -p "$1" kmalloc "hist:keys=call_site:vals=nosuch" 2> "$2/e" &&
	grep -qx "utrace: process $1: trigger .* refused: Invalid argument; error_log:" "$2/e" &&
	[ "$(tail -n 3 "$2/e")" = "hist:histdemo:kmalloc: error: Couldn'\''t find field
  Command: hist:keys=call_site:vals=nosuch
                                    ^" ]' "$UTRACE" "$P" "$TMP"

check ":cont of a trigger that does not exist: ENOENT" bash -c '
	! "$0" trigger -p "$1" kmalloc "hist:keys=bytes_req:cont" 2> "$2/e" &&
	grep -q "refused: No such file or directory; error_log:" "$2/e" &&
	grep -qx "hist:histdemo:kmalloc: error: Can'\''t clear or continue a nonexistent hist trigger" "$2/e"' \
	"$UTRACE" "$P" "$TMP"

# pause, cont and clear name the trigger by its fields and filter
T1='hist:key=call_site:val=bytes_req if gfp_flags != 0x10'
T1_INFO='hist:keys=call_site:vals=hitcount,bytes_req:sort=hitcount:size=2048 if gfp_flags != 0x10'
hits() { # hits EVENT: the Hits of each table, space apart
	"$UTRACE" hist -p "$P" "$1" | sed -n 's/^    Hits: //p' | tr '\n' ' '
}
check ":pause: [paused], and its table stops counting while the other goes on" bash -c '
	"$0" trigger -p "$1" kmalloc "${2/ if/:pause if}" &&
	"$0" trigger -p "$1" kmalloc | grep -qxF "$3 [paused]"' "$UTRACE" "$P" "$T1" "$T1_INFO"
send fire
check "... Hits: 10 (paused) and 20" test "$(hits kmalloc)" = "10 20 "
check ":cont: [active] again, counting" bash -c '
	"$0" trigger -p "$1" kmalloc "${2/ if/:cont if}" &&
	"$0" trigger -p "$1" kmalloc | grep -qxF "$3 [active]"' "$UTRACE" "$P" "$T1" "$T1_INFO"
send fire
check "... Hits: 20 and 30" test "$(hits kmalloc)" = "20 30 "
check ":clear empties the table" bash -c '
	"$0" trigger -p "$1" kmalloc "${2/ if/:clear if}" &&
	"$0" hist -p "$1" kmalloc | sed -n "1,/^Totals/p" | grep -c "^{" | grep -qx 0' "$UTRACE" "$P" "$T1"
check "... Hits: 0 and 30" test "$(hits kmalloc)" = "0 30 "
check "!hist:... removes that one trigger" bash -c '
	"$0" trigger -p "$1" kmalloc "!$2" &&
	[ "$("$0" trigger -p "$1" kmalloc | wc -l)" = 1 ] &&
	"$0" trigger -p "$1" kmalloc | grep -q "^hist:keys=call_site.hex:"' "$UTRACE" "$P" "$T1"

# traceon/traceoff: the kernel's readback, counts going down only when
# they switch tracing, filters on the record
check "traceoff:1 if n == 150, and a hist of tick: readback in the kernel's order" bash -c '
	"$0" trigger -p "$1" tick "traceoff:1 if n == 150" &&
	"$0" trigger -p "$1" tick "hist:keys=n.log2" &&
	[ "$("$0" trigger -p "$1" tick)" = "traceoff:count=1 if n == 150
hist:keys=n.log2:vals=hitcount:sort=hitcount:size=2048 [active]" ]' "$UTRACE" "$P"
check "a second traceon/traceoff on the event: EEXIST, nothing logged" bash -c '
	! "$0" trigger -p "$1" tick "traceon" 2> "$2/e" &&
	[ "$(cat "$2/e")" = "utrace: process $1: trigger '\''traceon'\'' for '\''tick'\'' refused: File exists" ]' \
	"$UTRACE" "$P" "$TMP"
check "bad commands: EINVAL (unknown command, bad count, 'if' missing, unknown event)" bash -c '
	for c in "traceonn" "traceoff:x" "traceoff:1 n == 3" "enable_event:histdemo:nosuch" \
		 "enable_event:histdemo" "disable_event"; do
		"$0" trigger -p "$1" kmalloc "$c" 2> "$2/e" && return 1
		grep -q "refused: Invalid argument$" "$2/e" || { cat "$2/e"; exit 1; }
	done' "$UTRACE" "$P" "$TMP"
check "a trigger's bad filter: EINVAL with the filter's error_log entry" bash -c '
	! "$0" trigger -p "$1" kmalloc "traceon if bytes_req >> 3" 2> "$2/e" &&
	grep -q "refused: Invalid argument; error_log:" "$2/e" &&
	grep -q "^event filter parse error" "$2/e"' "$UTRACE" "$P" "$TMP"

send fire
check "traceoff fired once (count=0) and the hist counted every tick, by log2" bash -c '
	"$0" trigger -p "$1" tick | grep -qx "traceoff:count=0 if n == 150" &&
	"$0" hist -p "$1" tick > "$2/t" &&
	grep -qx "{ n: ~ 2^8  } hitcount:         71" "$2/t" &&
	grep -qx "    Hits: 200" "$2/t"' "$UTRACE" "$P" "$TMP"

# enable_event: the target is held in soft mode and recorded only once
# the trigger fired; the triggering event itself is not recorded
check "enable_event:histdemo:task:1 and disable_event on tick: readback" bash -c '
	"$0" trigger -p "$1" kmalloc "enable_event:histdemo:task:1 if bytes_req == 512" &&
	"$0" trigger -p "$1" kmalloc | grep -qx "enable_event:histdemo:task:count=1 if bytes_req == 512"' \
	"$UTRACE" "$P"
check "traceon:2 on task: tracing back on at its first event (readback)" bash -c '
	"$0" trigger -p "$1" task "traceon:2" &&
	"$0" trigger -p "$1" task | grep -qx "traceon:count=2"' "$UTRACE" "$P"
if [ "${AVAIL/stacktrace/}" != "$AVAIL" ]; then
	# on task, after its traceon (tracing is off until then: a stack
	# taken while it is off is dropped, as in the kernel); with a filter,
	# so it runs after the record (the kernel's post-call)
	check "stacktrace:2 if pid == 200: readback, newest first" bash -c '
		"$0" trigger -p "$1" task "stacktrace:2 if pid == 200" &&
		[ "$("$0" trigger -p "$1" task)" = "stacktrace:count=2 if pid == 200
traceon:count=2" ]' "$UTRACE" "$P"
fi
send fire
check "after a fire: task on (count=0), tracing back on (traceon:count=1)" bash -c '
	"$0" trigger -p "$1" kmalloc | grep -qx "enable_event:histdemo:task:count=0 if bytes_req == 512" &&
	"$0" trigger -p "$1" task | grep -qx "traceon:count=1"' "$UTRACE" "$P"
check "the buffer holds the task events and no kmalloc nor tick (held, not on)" bash -c '
	"$0" show -p "$1" > "$2/show" &&
	[ "$(grep -c "task: comm=" "$2/show")" = 6 ] &&
	! grep -q "kmalloc:\|tick:" "$2/show"' "$UTRACE" "$P" "$TMP"
if [ "${AVAIL/stacktrace/}" != "$AVAIL" ]; then
	check "stacktrace: one ftrace:user_stack record, from the function that fired the event out" bash -c '
		"$0" trigger -p "$1" task | grep -qx "stacktrace:count=1 if pid == 200" &&
		[ "$(grep -c " <user stack trace>$" "$2/show")" = 1 ] &&
		grep -A3 " <user stack trace>$" "$2/show" > "$2/stack" &&
		sed -n 2p "$2/stack" | grep -Eq "^ => hist_fire(\.[a-z0-9.]+)?\+0x[0-9a-f]+/0x[0-9a-f]+$" &&
		grep -Eqx " => main\+0x[0-9a-f]+/0x[0-9a-f]+" "$2/stack"' \
		"$UTRACE" "$P" "$TMP"
	check "stacktrace: the record is the kernel's ftrace:user_stack (tgid, caller[8])" bash -c '
		"$0" list -p "$1" --format ftrace:user_stack > "$2/fmt" &&
		grep -qxF "	field:unsigned int tgid;	offset:8;	size:4;	signed:0;" "$2/fmt" &&
		grep -qxF "	field:unsigned long caller[8];	offset:16;	size:64;	signed:0;" "$2/fmt" &&
		grep -q "^print fmt: \"\\\\t=> %ps\\\\n" "$2/fmt"' "$UTRACE" "$P" "$TMP"
	trig task '!stacktrace' > /dev/null
fi
check "!enable_event removes it; the other triggers stay" bash -c '
	"$0" trigger -p "$1" kmalloc "!enable_event:histdemo:task" &&
	! "$0" trigger -p "$1" kmalloc | grep -q enable_event' "$UTRACE" "$P"

# The mount's files: the same triggers through write(2) and read(2).
if "$UTRACE" mount "$MNT" 2> "$TMP/err"; then
	E="$MNT/$P/events/histdemo"
	check "mount: trigger and hist files, modes -rw-r----- and -r--r-----" bash -c '
		wait_for test -e "$1/kmalloc/trigger" &&
		[ "$(stat -c %A "$1/kmalloc/trigger" "$1/kmalloc/hist" | tr "\n" " ")" = "-rw-r----- -r--r----- " ]' \
		_ "$E"
	check "mount: the hist file is what utrace hist -p prints" bash -c '
		"$0" hist -p "$1" tick > "$3/a" && cat "$2/tick/hist" > "$3/b" && cmp -s "$3/a" "$3/b" &&
		grep -q "^# trigger info: hist:keys=n.log2:" "$3/b"' "$UTRACE" "$P" "$E" "$TMP"
	check "mount: enable reads 0* (1* when on) for an event a trigger holds, set_event lists it" bash -c '
		cat "$1/kmalloc/enable" "$1/task/enable" "$1/enable" "$2/set_event" > "$3/err"
		[ "$(cat "$1/kmalloc/enable")" = "0*" ] &&
		[ "$(cat "$1/task/enable")" = "1*" ] && [ "$(cat "$1/enable")" = "1" ] &&
		grep -qx "histdemo:kmalloc" "$2/set_event"' _ "$E" "$MNT/$P" "$TMP"
	check "mount: echo >> trigger adds, its readback has it" bash -c '
		echo "hist:keys=bytes_alloc:sort=bytes_alloc" >> "$1/kmalloc/trigger" &&
		grep -qx "hist:keys=bytes_alloc:vals=hitcount:sort=bytes_alloc:size=2048 \[active\]" "$1/kmalloc/trigger"' \
		_ "$E"
	check "mount: a refused write is EINVAL and error_log has the entry with its caret" bash -c '
		! echo "hist:keys=bogus" >> "$1/kmalloc/trigger" 2> "$3/e" &&
		grep -q "Invalid argument" "$3/e" &&
		tail -n 3 "$2/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //" > "$3/log" &&
		[ "$(cat "$3/log")" = "hist:histdemo:kmalloc: error: Couldn'\''t find field
  Command: hist:keys=bogus
                     ^" ]' _ "$E" "$MNT/$P" "$TMP"
	check "mount: name= on kmalloc and task; one of other fields is EINVAL with its error_log entry" bash -c '
		echo "hist:name=m:keys=common_pid" >> "$1/kmalloc/trigger" &&
		echo "hist:name=m:keys=common_pid if pid == 100" >> "$1/task/trigger" &&
		! echo "hist:name=m:keys=pid" >> "$1/task/trigger" 2> "$3/e" &&
		grep -q "Invalid argument" "$3/e" &&
		tail -n 3 "$2/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //" > "$3/log" &&
		[ "$(cat "$3/log")" = "hist:histdemo:task: error: Named hist trigger doesn'\''t match existing named trigger (includes variables)
  Command: hist:name=m:keys=pid
                ^" ]' _ "$E" "$MNT/$P" "$TMP"
	send fire
	check "mount: both hist files show the one table: 11 kmallocs + 3 tasks of pid 100" bash -c '
		sed -n "/^# trigger info: hist:name=m:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 \[active\]$/,\$p" \
			"$1/kmalloc/hist" > "$2/k" &&
		sed -n "/^# trigger info: hist:name=m:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 if pid == 100 \[active\]$/,\$p" \
			"$1/task/hist" > "$2/t" &&
		grep -qx "    Hits: 14" "$2/k" && [ "$(sed 1d "$2/k")" = "$(sed 1d "$2/t")" ] &&
		echo "!hist:name=m:keys=common_pid if pid == 100" >> "$1/task/trigger" &&
		grep -qx "    Hits: 14" "$1/kmalloc/hist" && [ ! -s "$1/task/hist" ]' _ "$E" "$TMP"
	check "mount: > trigger removes the hist triggers only (the kernel's O_TRUNC)" bash -c '
		: > "$1/tick/trigger" &&
		[ "$(cat "$1/tick/trigger")" = "traceoff:count=0 if n == 150" ] &&
		: > "$1/kmalloc/trigger" &&
		[ "$(cat "$1/kmalloc/trigger")" = "# Available triggers:
$AVAIL" ] && [ ! -s "$1/kmalloc/hist" ] &&
		[ "$(cat "$1/kmalloc/enable")" = "0" ]' _ "$E"
	check "mount: an instance's events have trigger and hist files, empty at first" bash -c '
		mkdir "$1/instances/i1" && [ "$(ls "$1/instances/i1/events/histdemo/tick" | tr "\n" " ")" = "enable filter format hist id trigger " ] &&
		[ "$(cat "$1/instances/i1/events/histdemo/tick/trigger")" = "# Available triggers:
$AVAIL" ] && [ ! -s "$1/instances/i1/events/histdemo/tick/hist" ] &&
		rmdir "$1/instances/i1"' _ "$MNT/$P"
	# a fork child has no instance: the triggers of the parent's must not
	# run in it, nor show in an instance the child makes at their place
	mkdir "$MNT/$P/instances/i2"
	echo "enable_event:histdemo:kmalloc" > "$MNT/$P/instances/i2/events/histdemo/tick/trigger"
	echo "hist:keys=n" > "$MNT/$P/instances/i2/events/histdemo/tick/trigger"
	send "fork 20"
	wait_for grep -q "^child " "$TMP/out"
	C=$(sed -n "s/^child //p" "$TMP/out")
	pids+=("$C")
	check "mount: a fork child has none of the parent's instances' triggers, nor an instance it makes" bash -c '
		wait_for test -d "$1/instances" && [ -z "$(ls "$1/instances")" ] &&
		mkdir "$1/instances/j" &&
		[ "$(cat "$1/instances/j/events/histdemo/tick/trigger")" = "# Available triggers:
$AVAIL" ] && [ ! -s "$1/instances/j/events/histdemo/tick/hist" ] &&
		[ "$(cat "$1/instances/j/events/histdemo/kmalloc/enable")" = 0 ] &&
		[ "$(cat "$1/instances/j/events/histdemo/tick/enable")" = 0 ] &&
		rmdir "$1/instances/j" &&
		grep -q "^enable_event:histdemo:kmalloc:unlimited$" "$2/instances/i2/events/histdemo/tick/trigger" &&
		rmdir "$2/instances/i2"' _ "$MNT/$C" "$MNT/$P"
	fusermount3 -u "$MNT" 2> /dev/null
else
	echo "# no mount here ($(head -n 1 "$TMP/err")): the mount's checks are left out"
fi

# Threads firing while triggers are added, paused, cleared and removed:
# nothing crashes, and a trigger added after the storm counts exactly.
trig tick '!traceoff' > /dev/null
"$UTRACE" trigger -p "$P" tick '!hist:keys=n.log2' 2> /dev/null
echo "threads 4 50000" > "$TMP/ff"
k=$((k + 1))
(
	for i in $(seq 1 15); do
		"$UTRACE" trigger -p "$P" tick "hist:keys=n:vals=delta:size=256"
		"$UTRACE" trigger -p "$P" tick "traceon:$i if n == $i"
		"$UTRACE" trigger -p "$P" tick "hist:keys=n:vals=delta:size=256:pause"
		"$UTRACE" trigger -p "$P" tick "hist:keys=common_pid.execname"
		"$UTRACE" trigger -p "$P" tick "hist:name=storm:keys=common_pid if n > 10"
		"$UTRACE" trigger -p "$P" task "hist:name=storm:keys=common_pid"
		"$UTRACE" trigger -p "$P" tick "hist:name=storm:keys=common_pid:clear if n > 10"
		"$UTRACE" trigger -p "$P" tick "hist:keys=n:vals=delta:size=256:clear"
		"$UTRACE" trigger -p "$P" tick "enable_event:histdemo:task"
		"$UTRACE" trigger -p "$P" tick "hist:keys=n:vals=delta:size=256:cont"
		"$UTRACE" hist -p "$P" tick > /dev/null
		"$UTRACE" trigger -p "$P" tick "!hist:keys=n:vals=delta:size=256"
		"$UTRACE" trigger -p "$P" tick "!traceon"
		"$UTRACE" trigger -p "$P" tick "!hist:keys=common_pid.execname"
		"$UTRACE" trigger -p "$P" tick "!hist:name=storm:keys=common_pid if n > 10"
		"$UTRACE" hist -p "$P" task > /dev/null
		"$UTRACE" trigger -p "$P" task "!hist:name=storm:keys=common_pid"
		"$UTRACE" trigger -p "$P" tick "!enable_event:histdemo:task"
	done
) > /dev/null 2> "$TMP/storm.err"
check "storm: 15 rounds of add/pause/clear/cont/remove (named tables too) while 4 threads fire" bash -c '
	wait_for grep -qx "done $2" "$1/out" && kill -0 "$3" && [ ! -s "$1/storm.err" ]' \
	_ "$TMP" "$k" "$P"
check "storm: the event is left with no trigger and not held" bash -c '
	[ "$("$0" trigger -p "$1" tick | head -n 1)" = "# Available triggers:" ]' "$UTRACE" "$P"
trig tick 'hist:keys=common_pid.execname:vals=delta' > /dev/null
send "threads 3 1000"
check "after the storm: 3 threads x 1000 ticks counted exactly, sums right" bash -c '
	"$0" hist -p "$1" tick > "$2/h" &&
	grep -qx "    Hits: 3000" "$2/h" && grep -qx "    Dropped: 0" "$2/h" &&
	grep -qE "^\{ common_pid: trigger-demo +\[ *[0-9]+\] \} hitcount:       1000  delta:     399500$" "$2/h" &&
	[ "$(grep -c "^{" "$2/h")" = 3 ]' "$UTRACE" "$P" "$TMP"

# Signal handlers fire the event inside the thread's own events: the
# nested record (the writer's stash) goes through the triggers too.
trig tick '!hist:keys=common_pid.execname:vals=delta' > /dev/null
trig tick 'hist:keys=n.log2:vals=delta' > /dev/null
send "signals 200000"
check "signal handlers' events, nested in the thread's, are counted: Hits = ticks + handler ticks" bash -c '
	s=$(sed -n "s/^signals //p" "$2/out" | tail -n 1) && [ "$s" -gt 0 ] &&
	"$0" hist -p "$1" tick > "$2/h" &&
	grep -qx "    Hits: $((200000 + s))" "$2/h" && grep -qx "    Dropped: 0" "$2/h"' \
	"$UTRACE" "$P" "$TMP"

# Named triggers (histogram.rst, "name="): hist triggers of two events
# with the same name share one table; both events add to it, each event's
# hist file shows it (under its own trigger info: its filter, its pause);
# a later trigger of other fields is refused; the table stays while a
# trigger still uses it.
trig tick '!hist:keys=n.log2:vals=delta' > /dev/null
trig kmalloc '!hist:keys=call_site.hex:values=bytes_req,bytes_alloc:sort=bytes_alloc.descending if gfp_flags != 16' > /dev/null
NAMED='hist:name=foo:keys=common_pid:vals=hitcount:sort=hitcount:size=2048'
check "named: a trigger on kmalloc and one of the same name on tick (with its own filter)" bash -c '
	"$0" trigger -p "$1" kmalloc "hist:name=foo:keys=common_pid" &&
	"$0" trigger -p "$1" tick "hist:name=foo:keys=common_pid:size=256 if n < 3" &&
	[ "$("$0" trigger -p "$1" kmalloc)" = "$2 [active]" ] &&
	[ "$("$0" trigger -p "$1" tick)" = "$2 if n < 3 [active]" ]' "$UTRACE" "$P" "$NAMED"
send fire
send "ticks 10"
check "named: one table, the hits of both events: 11 kmallocs + 3 and 3 ticks with n < 3" bash -c '
	"$0" hist -p "$1" kmalloc > "$2/h" &&
	[ "$(sed -n 3p "$2/h")" = "# trigger info: $3 [active]" ] &&
	grep -qxE "\{ common_pid: +$1 \} hitcount: +17" "$2/h" &&
	grep -qx "    Hits: 17" "$2/h" && grep -qx "    Entries: 1" "$2/h"' \
	"$UTRACE" "$P" "$TMP" "$NAMED"
check "named: tick's hist file shows the same table, under tick's trigger info" bash -c '
	"$0" hist -p "$1" tick > "$2/h2" &&
	[ "$(sed -n 3p "$2/h2")" = "# trigger info: $3 if n < 3 [active]" ] &&
	[ "$(sed -n "5,\$p" "$2/h")" = "$(sed -n "5,\$p" "$2/h2")" ]' \
	"$UTRACE" "$P" "$TMP" "$NAMED"
check "named: a trigger of other fields under that name: EINVAL, the kernel's error_log entry" bash -c '
	! "$0" trigger -p "$1" task "hist:name=foo:keys=pid" 2> "$2/e" &&
	[ "$(cat "$2/e")" = "utrace: process $1: trigger '\''hist:name=foo:keys=pid'\'' for '\''task'\'' refused: Invalid argument; error_log:
hist:histdemo:task: error: Named hist trigger doesn'\''t match existing named trigger (includes variables)
  Command: hist:name=foo:keys=pid
                ^" ] &&
	! "$0" trigger -p "$1" task "hist:name=foo:keys=common_pid:vals=prio" 2> /dev/null &&
	! "$0" trigger -p "$1" task | grep -q "^hist:"' "$UTRACE" "$P" "$TMP"
check "named: the same one again on its event: EEXIST" bash -c '
	! "$0" trigger -p "$1" tick "hist:name=foo:keys=common_pid if n < 3" 2> "$2/e" &&
	grep -qx "hist:histdemo:tick: error: Hist trigger already exists" "$2/e"' \
	"$UTRACE" "$P" "$TMP"
check "named: :pause pauses that event's trigger only" bash -c '
	"$0" trigger -p "$1" tick "hist:name=foo:keys=common_pid:pause if n < 3" &&
	[ "$("$0" trigger -p "$1" tick)" = "$2 if n < 3 [paused]" ] &&
	[ "$("$0" trigger -p "$1" kmalloc)" = "$2 [active]" ]' "$UTRACE" "$P" "$NAMED"
send fire
check "... kmalloc's hits still go in: 17 + 11" bash -c '
	"$0" hist -p "$1" tick | grep -qx "    Hits: 28"' "$UTRACE" "$P"
check "named: removing kmalloc's keeps the table for tick's" bash -c '
	"$0" trigger -p "$1" kmalloc "!hist:name=foo:keys=common_pid" &&
	[ "$("$0" trigger -p "$1" kmalloc | head -n 1)" = "# Available triggers:" ] &&
	"$0" hist -p "$1" tick | grep -qx "    Hits: 28" &&
	"$0" trigger -p "$1" tick "hist:name=foo:keys=common_pid:cont if n < 3"' "$UTRACE" "$P"
send fire
check "... which counts on: 28 + 3" bash -c '
	"$0" hist -p "$1" tick > "$2/h" && grep -qx "    Hits: 31" "$2/h" &&
	grep -qxE "\{ common_pid: +$1 \} hitcount: +31" "$2/h"' "$UTRACE" "$P" "$TMP"
check "named: a new trigger of the name joins the table; :clear empties it for both" bash -c '
	"$0" trigger -p "$1" kmalloc "hist:name=foo:keys=common_pid:pause" &&
	"$0" hist -p "$1" kmalloc | grep -qx "    Hits: 31" &&
	"$0" trigger -p "$1" tick "hist:name=foo:keys=common_pid:clear if n < 3" &&
	"$0" hist -p "$1" kmalloc | grep -qx "    Hits: 0" &&
	"$0" hist -p "$1" tick | grep -qx "    Hits: 0" &&
	[ "$("$0" trigger -p "$1" kmalloc)" = "$2 [active]" ]' "$UTRACE" "$P" "$NAMED"
check "named: once the last one goes, the name is free for other fields" bash -c '
	"$0" trigger -p "$1" kmalloc "!hist:name=foo:keys=common_pid" &&
	"$0" trigger -p "$1" tick "!hist:name=foo:keys=common_pid if n < 3" &&
	"$0" trigger -p "$1" task "hist:name=foo:keys=pid" &&
	"$0" trigger -p "$1" task | grep -qxF "hist:name=foo:keys=pid:vals=hitcount:sort=hitcount:size=2048 [active]" &&
	"$0" trigger -p "$1" task "!hist:name=foo:keys=pid" &&
	! "$0" trigger -p "$1" task | grep -q "^hist:"' "$UTRACE" "$P"

echo quit > "$TMP/ff"
check "the demo ends cleanly" bash -c 'wait_for bash -c "! kill -0 $1 2> /dev/null"' _ "$P"
wait "$P"
check "... with status 0 and nothing on its stderr" bash -c '[ "$1" = 0 ] && [ ! -s "$2" ] || { cp "$2" "$3"; false; }' _ $? "$TMP/demo.err" "$TMP/err"

done_testing
