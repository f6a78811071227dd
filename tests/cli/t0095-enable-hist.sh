#!/usr/bin/env bash
# The kernel's enable_hist and disable_hist triggers (events.rst,
# trace_events_hist.c's hist_enable_trigger()), live in
# tests/cli/trigger-demo.c: a hit of one event pauses or runs every hist
# trigger of another, with an optional count (taken at each firing, as
# hist_enable_count_trigger() does) and filter; their readback
# (event_enable_trigger_print()), their errors (event_enable_trigger_parse(),
# event_enable_register_trigger()), the mount's O_TRUNC (hist_enable_unreg_all())
# and threads firing while the target's hist triggers come and go.
. "$(dirname "$0")/lib.sh"
trigger_demo
# hits EVENT: the Hits of each of the event's tables, space apart
hits() {
	"$UTRACE" hist -p "$P" "$1" | sed -n 's/^    Hits: //p' | tr '\n' ' '
}
# refused EVENT COMMAND ERRNO-TEXT: the command fails with exactly that line
refused() {
	! "$UTRACE" trigger -p "$P" "$1" "$2" 2> "$TMP/err" &&
		[ "$(cat "$TMP/err")" = "utrace: process $P: trigger '$2' for '$1' refused: $3" ]
}
TICK_INFO='hist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048'

check "the empty trigger file lists enable_hist and disable_hist as the kernel's" bash -c '
	"$0" trigger -p "$1" tick > "$2/t" && [ "$(head -n 1 "$2/t")" = "# Available triggers:" ] &&
	sed -n 2p "$2/t" | grep -Eqx "# traceon traceoff snapshot (stacktrace )?enable_event disable_event enable_hist disable_hist hist"' \
	"$UTRACE" "$P" "$TMP"
check "--help lists them" bash -c '
	"$0" trigger --help | grep -q "^  enable_hist:SYS:EVENT\[:N\] \[if FILTER\]" &&
	"$0" trigger --help | grep -q "^  disable_hist:SYS:EVENT\[:N\] \[if FILTER\]"' "$UTRACE"

# a hist on tick; disable_hist:histdemo:tick on task
trig tick "hist:keys=common_pid" > /dev/null
send "ticks 10"
check "a hist on tick counts: Hits 10" test "$(hits tick)" = "10 "
check "disable_hist:histdemo:tick on task: readback :unlimited" bash -c '
	"$0" trigger -p "$1" task "disable_hist:histdemo:tick" &&
	[ "$("$0" trigger -p "$1" task)" = "disable_hist:histdemo:tick:unlimited" ]' "$UTRACE" "$P"
send "ticks 5"
check "... before task fires, tick still counts: Hits 15, [active]" bash -c '
	[ "$(sed -n "s/^    Hits: //p" <("$0" hist -p "$1" tick))" = 15 ] &&
	[ "$("$0" trigger -p "$1" tick)" = "$2 [active]" ]' "$UTRACE" "$P" "$TICK_INFO"
send fire
check "after task fired: tick's hist is [paused], its 200 ticks not counted (Hits 15)" bash -c '
	[ "$("$0" trigger -p "$1" tick)" = "$2 [paused]" ] &&
	"$0" hist -p "$1" tick > "$3/h" && grep -qx "    Hits: 15" "$3/h" &&
	grep -qxE "\{ common_pid: +$1 \} hitcount: +15" "$3/h"' "$UTRACE" "$P" "$TICK_INFO" "$TMP"
send "ticks 7"
check "... and stays paused: Hits 15" test "$(hits tick)" = "15 "

check "enable_hist:histdemo:tick:1 if bytes_req == 512 on kmalloc: readback" bash -c '
	"$0" trigger -p "$1" kmalloc "enable_hist:histdemo:tick:1 if bytes_req == 512" &&
	[ "$("$0" trigger -p "$1" kmalloc)" = "enable_hist:histdemo:tick:count=1 if bytes_req == 512" ]' \
	"$UTRACE" "$P"
check "!disable_hist:histdemo:tick removes task's (its trigger file is empty again)" bash -c '
	"$0" trigger -p "$1" task "!disable_hist:histdemo:tick" &&
	[ "$("$0" trigger -p "$1" task | head -n 1)" = "# Available triggers:" ]' "$UTRACE" "$P"
send "ticks 3"
check "... tick is still paused until kmalloc fires: Hits 15" test "$(hits tick)" = "15 "
send fire
check "kmalloc of 512 bytes fired it: count=0, tick [active], its 200 ticks counted (Hits 215)" bash -c '
	[ "$("$0" trigger -p "$1" kmalloc)" = "enable_hist:histdemo:tick:count=0 if bytes_req == 512" ] &&
	[ "$("$0" trigger -p "$1" tick)" = "$2 [active]" ] &&
	[ "$(sed -n "s/^    Hits: //p" <("$0" hist -p "$1" tick))" = 215 ]' "$UTRACE" "$P" "$TICK_INFO"

# Counts: hist_enable_count_trigger() takes one at each firing, whether or
# not the hist was already in that state (unlike enable_event's, which
# counts only the changes).  task fires 3 times with pid 100 per fire.
check "disable_hist:histdemo:tick:4 if pid == 100 on task, a second hist on tick" bash -c '
	"$0" trigger -p "$1" task "disable_hist:histdemo:tick:4 if pid == 100" &&
	"$0" trigger -p "$1" tick "hist:keys=n.log2" &&
	[ "$("$0" trigger -p "$1" task)" = "disable_hist:histdemo:tick:count=4 if pid == 100" ]' \
	"$UTRACE" "$P"
send fire
check "after a fire: count=1 (3 firings, 1 change); both hists of tick paused, uncounted" bash -c '
	[ "$("$0" trigger -p "$1" task)" = "disable_hist:histdemo:tick:count=1 if pid == 100" ] &&
	[ "$("$0" trigger -p "$1" tick)" = "$2 [paused]
hist:keys=n.log2:vals=hitcount:sort=hitcount:size=2048 [paused]" ] &&
	[ "$(sed -n "s/^    Hits: //p" <("$0" hist -p "$1" tick) | tr "\n" " ")" = "215 0 " ]' \
	"$UTRACE" "$P" "$TICK_INFO"
check ":cont runs the first again (the kernel's same flag)" bash -c '
	"$0" trigger -p "$1" tick "hist:keys=common_pid:cont" &&
	"$0" trigger -p "$1" tick | grep -qxF "$2 [active]"' "$UTRACE" "$P" "$TICK_INFO"
send fire
check "the last count pauses it at the first pid 100: count=0, Hits 215 0" bash -c '
	[ "$("$0" trigger -p "$1" task)" = "disable_hist:histdemo:tick:count=0 if pid == 100" ] &&
	"$0" trigger -p "$1" tick | grep -qxF "$2 [paused]" &&
	[ "$(sed -n "s/^    Hits: //p" <("$0" hist -p "$1" tick) | tr "\n" " ")" = "215 0 " ]' \
	"$UTRACE" "$P" "$TICK_INFO"
trig tick "hist:keys=common_pid:cont" > /dev/null
trig tick "hist:keys=n.log2:cont" > /dev/null
send fire
check "with its count spent it no longer acts: both count the fire's ticks (415 200)" \
	test "$(hits tick)" = "415 200 "
trig task '!disable_hist:histdemo:tick' > /dev/null

# Errors, as event_enable_trigger_parse() and event_enable_register_trigger()
check "an unknown target event: EINVAL (find_event_file())" \
	refused kmalloc "enable_hist:histdemo:nosuch" "Invalid argument"
check "bad forms: EINVAL (no SYS:EVENT, no EVENT, a bad count, 'if' missing, empty count)" bash -c '
	for c in "enable_hist" "disable_hist:histdemo" "enable_hist:histdemo:tick:x" \
		 "enable_hist:histdemo:tick:1 pid == 3" "disable_hist:histdemo:tick:" "enable_hist:nosys:tick"; do
		! "$0" trigger -p "$1" task "$c" 2> "$2/e" &&
		[ "$(cat "$2/e")" = "utrace: process $1: trigger '\''$c'\'' for '\''task'\'' refused: Invalid argument" ] ||
		{ echo "$c:"; cat "$2/e"; exit 1; }
	done' "$UTRACE" "$P" "$TMP"
check "a bad filter: EINVAL with the filter's error_log entry" bash -c '
	! "$0" trigger -p "$1" task "enable_hist:histdemo:tick if nosuch == 3" 2> "$2/e" &&
	grep -q "refused: Invalid argument; error_log:" "$2/e" &&
	grep -q "^event filter parse error" "$2/e"' "$UTRACE" "$P" "$TMP"
check "the same target again: EEXIST" \
	refused kmalloc "enable_hist:histdemo:tick:3" "File exists"
check "disable_hist of that target: EEXIST too (one type, ETT_HIST_ENABLE)" \
	refused kmalloc "disable_hist:histdemo:tick" "File exists"
check "enable_event of that target and enable_hist of another: taken (other type, other target)" bash -c '
	"$0" trigger -p "$1" kmalloc "enable_event:histdemo:tick" &&
	"$0" trigger -p "$1" kmalloc "disable_hist:histdemo:task" &&
	[ "$("$0" trigger -p "$1" kmalloc)" = "disable_hist:histdemo:task:unlimited
enable_event:histdemo:tick:unlimited
enable_hist:histdemo:tick:count=0 if bytes_req == 512" ]' "$UTRACE" "$P"
check "!disable_hist:histdemo:tick removes the enable_hist of tick (same type, as the kernel)" bash -c '
	"$0" trigger -p "$1" kmalloc "!disable_hist:histdemo:tick" &&
	"$0" trigger -p "$1" kmalloc "!enable_event:histdemo:tick" &&
	[ "$("$0" trigger -p "$1" kmalloc)" = "disable_hist:histdemo:task:unlimited" ] || exit 1
	"$0" trigger -p "$1" kmalloc "!enable_hist:histdemo:nothere" 2> /dev/null; [ $? = 1 ] &&
	"$0" trigger -p "$1" kmalloc "!enable_hist:histdemo:tick"' "$UTRACE" "$P"
trig kmalloc '!disable_hist:histdemo:task' > /dev/null

# The mount's trigger file: write(2), read(2), and O_TRUNC removing the
# hist triggers and enable_hist/disable_hist only (hist_unreg_all(),
# hist_enable_unreg_all()); the target is held in soft mode ("0*").
if "$UTRACE" mount "$MNT" 2> "$TMP/err"; then
	E="$MNT/$P/events/histdemo"
	check "mount: echo enable_hist >> trigger; the target task is held (enable 0*)" bash -c '
		wait_for test -e "$1/kmalloc/trigger" &&
		echo "disable_hist:histdemo:task:2 if bytes_req > 1000" >> "$1/kmalloc/trigger" &&
		echo "traceoff:5" >> "$1/kmalloc/trigger" &&
		echo "hist:keys=bytes_req" >> "$1/kmalloc/trigger" &&
		[ "$(cat "$1/kmalloc/trigger")" = "traceoff:count=5
disable_hist:histdemo:task:count=2 if bytes_req > 1000
hist:keys=bytes_req:vals=hitcount:sort=hitcount:size=2048 [active]" ] &&
		[ "$(cat "$1/task/enable")" = "0*" ]' _ "$E"
	check "mount: a refused write is EEXIST" bash -c '
		! echo "enable_hist:histdemo:task" >> "$1/kmalloc/trigger" 2> "$2/e" &&
		grep -q "File exists" "$2/e"' _ "$E" "$TMP"
	check "mount: > trigger removes hist and disable_hist, keeps traceoff; task let go" bash -c '
		: > "$1/kmalloc/trigger" &&
		[ "$(cat "$1/kmalloc/trigger")" = "traceoff:count=5" ] &&
		[ "$(cat "$1/task/enable")" = "0" ] &&
		echo "!traceoff" >> "$1/kmalloc/trigger"' _ "$E"
	fusermount3 -u "$MNT" 2> /dev/null
else
	echo "# no mount here ($(head -n 1 "$TMP/err")): the mount's checks are left out"
fi

# Threads firing tick while tick's and kmalloc's hist triggers come and go,
# and tick's own enable_hist (of tick) and disable_hist (of kmalloc), run
# at nearly every tick, read those lists and store their pause: nothing
# crashes, and a hist set after the storm counts exactly.  The rounds go
# on until the threads are done (at least one; a round takes about as long
# as a batch here).
trig tick '!hist:keys=common_pid' > /dev/null
trig tick '!hist:keys=n.log2' > /dev/null
trig tick 'enable_hist:histdemo:tick if n > 3' > /dev/null
trig tick 'disable_hist:histdemo:kmalloc if n > 5' > /dev/null
# six batches of 2 threads x 1000000 ticks, one after the other (3 to 9
# rounds); under TSan, where that took 80 s, four of 2 x 250000
if ldd "$UTRACE_BUILD/tests/trigger-demo" | grep -q libtsan; then
	printf 'threads 2 250000\n%.0s' 1 2 3 4 > "$TMP/ff"
	k=$((k + 4))
else
	printf 'threads 2 1000000\n%.0s' 1 2 3 4 5 6 > "$TMP/ff"
	k=$((k + 6))
fi
rounds=0
while [ "$rounds" = 0 ] || ! grep -qx "done $k" "$TMP/out"; do
	rounds=$((rounds + 1))
	"$UTRACE" trigger -p "$P" tick "hist:keys=n:vals=delta:size=256"
	"$UTRACE" trigger -p "$P" kmalloc "hist:keys=bytes_req"
	"$UTRACE" trigger -p "$P" tick "hist:keys=n:vals=delta:size=256:pause"
	"$UTRACE" trigger -p "$P" tick "hist:keys=common_pid.execname"
	"$UTRACE" trigger -p "$P" kmalloc "hist:keys=call_site:pause"
	"$UTRACE" hist -p "$P" tick > /dev/null
	"$UTRACE" trigger -p "$P" tick "!hist:keys=n:vals=delta:size=256"
	"$UTRACE" trigger -p "$P" kmalloc "!hist:keys=bytes_req"
	"$UTRACE" trigger -p "$P" tick "!disable_hist:histdemo:kmalloc"
	"$UTRACE" trigger -p "$P" tick "!hist:keys=common_pid.execname"
	"$UTRACE" trigger -p "$P" kmalloc "!hist:keys=call_site"
	"$UTRACE" trigger -p "$P" tick "disable_hist:histdemo:kmalloc if n > 5"
	[ "$rounds" -ge 2000 ] && break
done > /dev/null 2> "$TMP/storm.err"
echo "# storm: $rounds rounds while the threads fired"
check "storm: hist triggers added/paused/removed under enable_hist/disable_hist, 2 threads firing" bash -c '
	wait_for grep -qx "done $2" "$1/out" && kill -0 "$3" && [ ! -s "$1/storm.err" ]' \
	_ "$TMP" "$k" "$P"
check "storm: tick has its two triggers left, kmalloc none" bash -c '
	[ "$("$0" trigger -p "$1" tick)" = "disable_hist:histdemo:kmalloc:unlimited if n > 5
enable_hist:histdemo:tick:unlimited if n > 3" ] &&
	[ "$("$0" trigger -p "$1" kmalloc | head -n 1)" = "# Available triggers:" ]' "$UTRACE" "$P"
trig tick '!disable_hist:histdemo:kmalloc' > /dev/null
trig tick '!enable_hist:histdemo:tick' > /dev/null
trig tick 'enable_hist:histdemo:tick if n == 7' > /dev/null
trig tick 'hist:keys=common_pid.execname:vals=delta:pause' > /dev/null
send "ticks 1000"
check "after the storm: a paused hist of tick, run by tick's own enable_hist after n == 7: 992 ticks" bash -c '
	"$0" hist -p "$1" tick > "$2/h" &&
	grep -qx "# trigger info: hist:keys=common_pid.execname:vals=hitcount,delta:sort=hitcount:size=2048 \[active\]" "$2/h" &&
	grep -qx "    Hits: 992" "$2/h" && grep -qx "    Dropped: 0" "$2/h" &&
	grep -qE "^\{ common_pid: trigger-demo +\[ *$1\] \} hitcount:        992  delta:     400272$" "$2/h"' \
	"$UTRACE" "$P" "$TMP"

echo quit > "$TMP/ff"
check "the demo ends cleanly" bash -c 'wait_for bash -c "! kill -0 $1 2> /dev/null"' _ "$P"
wait "$P"
check "... with status 0 and nothing on its stderr" bash -c '[ "$1" = 0 ] && [ ! -s "$2" ] || { cp "$2" "$3"; false; }' _ $? "$TMP/demo.err" "$TMP/err"

done_testing
