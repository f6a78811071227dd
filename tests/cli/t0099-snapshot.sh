#!/usr/bin/env bash
# The mount's snapshot file (the kernel's tracing_snapshot_write() and
# s_show()): freed at first, with the kernel's help text; echo 1 takes a
# copy of the buffer (kept by the mount), read as the trace file reads;
# it stays as it was while the buffer goes on; echo 2 empties it, echo 0
# frees it; anything but a number is EINVAL.  The snapshot trigger: the
# program's agent copies its buffer at the event, the mount reads the copy.
. "$(dirname "$0")/lib.sh"
mount_demo "$UTRACE_BUILD/tests/req-demo" loop
wait_for test -e "$D/snapshot" || { echo "not ok - no snapshot file"; exit 1; }

help() {
	printf '%s\n' "# tracer: nop" "#" "#" "# * Snapshot is $1 *" "#" "# Snapshot commands:" \
"# echo 0 > snapshot : Clears and frees snapshot buffer" \
"# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated." \
"#                      Takes a snapshot of the main buffer." \
"# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)" \
"#                      (Doesn't have to be '2' works with any number that" \
"#                       is not a '0' or '1')"
}
export -f help same
check "freed at first: the kernel's help text, mode -rw-r-----; an instance's too" bash -c '
	cat "$1/snapshot" > "$2/s" && help freed > "$2/want" && same "$2/s" "$2/want" &&
	[ "$(stat -c %A "$1/snapshot")" = "-rw-r-----" ] &&
	[ ! -e "$1/instances/x" ] && mkdir "$1/instances/x" &&
	cat "$1/instances/x/snapshot" > "$2/s" && same "$2/s" "$2/want" &&
	rmdir "$1/instances/x"' _ "$D" "$TMP"
check "echo 1 of an empty buffer: allocated, empty (the help again)" bash -c '
	echo 1 > "$1/snapshot" && cat "$1/snapshot" > "$2/s" && help allocated > "$2/want" &&
	same "$2/s" "$2/want"' _ "$D" "$TMP"
check "echo 1 with events: the trace file as it was, byte for byte" bash -c '
	echo 1 > "$1/events/reqdemo/enable" &&
	wait_for bash -c "[ \$(grep -c req_end \"\$0/trace\") -ge 30 ]" "$1" &&
	echo 0 > "$1/tracing_on" && sleep 0.2 &&
	cat "$1/trace" > "$2/t" && echo 1 > "$1/snapshot" && cat "$1/snapshot" > "$2/s1" &&
	same "$2/s1" "$2/t" && grep -q "^# entries-in-buffer/entries-written: " "$2/s1" &&
	[ "$(grep -c "req_begin: id=" "$2/s1")" -ge 30 ]' _ "$D" "$TMP"
check "it stays while the buffer goes on, and tracing_on is left as it was" bash -c '
	[ "$(cat "$1/tracing_on")" = 0 ] && echo 1 > "$1/tracing_on" &&
	wait_for bash -c "[ \$(grep -c req_end \"\$0/trace\") -gt \$(grep -c req_end \"\$1\") ]" "$1" "$2/t" &&
	cat "$1/snapshot" > "$2/s2" && same "$2/s2" "$2/s1" &&
	echo 1 > "$1/snapshot" && cat "$1/snapshot" > "$2/s3" && ! cmp -s "$2/s3" "$2/s1" &&
	[ "$(cat "$1/tracing_on")" = 1 ]' _ "$D" "$TMP"
check "echo 2 empties it (allocated), echo 0 frees it, echo x is EINVAL" bash -c '
	echo 2 > "$1/snapshot" && cat "$1/snapshot" > "$2/s" && help allocated > "$2/want" &&
	same "$2/s" "$2/want" &&
	echo 0 > "$1/snapshot" && cat "$1/snapshot" > "$2/s" && help freed > "$2/want" &&
	same "$2/s" "$2/want" &&
	! echo x > "$1/snapshot" 2> "$2/e" && grep -q "Invalid argument" "$2/e"' _ "$D" "$TMP"
check "the trace file is not changed by a snapshot (a copy, not the kernel's swap)" bash -c '
	echo 0 > "$1/tracing_on" && sleep 0.2 && cat "$1/trace" > "$2/a" &&
	echo 1 > "$1/snapshot" && cat "$1/trace" > "$2/b" && same "$2/a" "$2/b" &&
	echo 0 > "$1/snapshot"' _ "$D" "$TMP"
# (the copy is the agent's, made after the event while the program goes
# on: it ends at the trigger's event all the same, as the kernel's swap)
check "the snapshot trigger: the buffer as it was at the event (snapshot:1 if ...)" bash -c '
	echo 1 > "$1/tracing_on" && echo 0 > "$1/snapshot" &&
	n=$(grep "req_end: id=" "$1/trace" | tail -n 1 | sed -E "s/.*id=([0-9]+) .*/\1/") &&
	echo "snapshot:1 if id > $((n + 30))" > "$1/events/reqdemo/req_end/trigger" &&
	# (read back as the kernel shows it; a slow build may have fired it
	# already: count=0)
	case "$(cat "$1/events/reqdemo/req_end/trigger")" in
	"snapshot:count=1 if id > $((n + 30))" | "snapshot:count=0 if id > $((n + 30))") ;;
	*) exit 1 ;;
	esac
	wait_for grep -q "^snapshot:count=0 " "$1/events/reqdemo/req_end/trigger" &&
	wait_for bash -c "[ \$(grep -c \"req_end: id=\" \"\$0/trace\") -gt 0 ] && grep -q \"req_end: id=$((n + 60)) \" \"\$0/trace\"" "$1" &&
	cat "$1/snapshot" > "$2/s" &&
	last=$(grep "req_end: id=" "$2/s" | tail -n 1 | sed -E "s/.*id=([0-9]+) .*/\1/") &&
	grep -q "^# entries-in-buffer/entries-written: " "$2/s" &&
	[ "$last" = $((n + 31)) ] &&
	cat "$1/snapshot" > "$2/s2" && same "$2/s2" "$2/s" &&
	echo "!snapshot" >> "$1/events/reqdemo/req_end/trigger"' _ "$D" "$TMP"
check "snapshot trigger errors: a second one is EEXIST, snapshot+1 EINVAL (as the kernel)" bash -c '
	echo snapshot > "$1/events/reqdemo/req_end/trigger" &&
	! echo snapshot >> "$1/events/reqdemo/req_end/trigger" 2> "$2/e" && grep -q "File exists" "$2/e" &&
	! echo snapshot+1 >> "$1/events/reqdemo/req_end/trigger" 2> "$2/e" && grep -q "Invalid argument" "$2/e" &&
	echo "!snapshot" >> "$1/events/reqdemo/req_end/trigger" &&
	echo 0 > "$1/snapshot" && help freed > "$2/want" && cat "$1/snapshot" > "$2/s" && same "$2/s" "$2/want"' _ "$D" "$TMP"
B='hist:keys=path:ts0=common_timestamp.usecs'
M='hist:keys=path:l=common_timestamp.usecs-$ts0:onmax($l).snapshot()'
export B M
# (the hist is read once, in the wait, and checked as read: a later
# maximum may change its Details.  The copy itself is the agent's, made
# just after the event that asked for it: wait for it too)
check "onmax(\$l).snapshot(): a snapshot at a new maximum; the hist's Details block, as the kernel's" bash -c '
	echo 0 > "$1/snapshot" && echo "$B" >> "$1/events/reqdemo/req_begin/trigger" &&
	echo "$M" >> "$1/events/reqdemo/req_end/trigger" &&
	wait_for bash -c "cat \"\$0/events/reqdemo/req_end/hist\" > \"\$1/h\" &&
		grep -A2 \"^Snapshot taken\" \"\$1/h\" | grep -q \"path: /slow\"" "$1" "$2" &&
	[ "$(grep -c "^	max: " "$2/h")" = 0 ] &&
	grep -A1 "^Snapshot taken (see tracing/snapshot).  Details:$" "$2/h" | tail -n 1 |
		grep -Eq "^	triggering value \{ onmax\(\\\$l\) \}: +[0-9]+	triggered by event with key: \{ path: /slow +\}$" &&
	v=$(grep "triggering value" "$2/h" | sed -E "s/.*\}: +([0-9]+)	.*/\1/") && [ "$v" -ge 4000 ] &&
	wait_for grep -q "req_end: id=[0-9]* path=/slow" "$1/snapshot" &&
	echo "!$M" >> "$1/events/reqdemo/req_end/trigger" && echo "!$B" >> "$1/events/reqdemo/req_begin/trigger" &&
	echo 0 > "$1/snapshot"' _ "$D" "$TMP"
fusermount3 -u "$MNT" 2> /dev/null
done_testing
