#!/usr/bin/env bash
# An unlimited snapshot trigger on a hot event (issue 27, item 6): the
# agent coalesces the requests (one copy in flight, the next no sooner
# than four times a copy's time after it), so it is not pinned copying,
# and a busy agent never makes a file look absent: writes through the
# mount never get ENOENT or ENODEV, and the CLI never says "not traceable".
. "$(dirname "$0")/lib.sh"
need_fuse
trigger_demo
"$UTRACE" mount "$MNT" 2> "$TMP/err" || skip_all "no mount here ($(head -n 1 "$TMP/err"))"
D="$MNT/$P"
E="$D/events/histdemo/tick"

check "an unlimited snapshot trigger on tick, tick on" bash -c '
	echo snapshot > "$0/trigger" && echo 1 > "$0/enable" &&
	grep -qx "snapshot:unlimited" "$0/trigger"' "$E"

# the storm: ticks until told to stop (the command returns when they are
# fired; a new one is sent while the checks run)
storm() {
	while [ ! -e "$TMP/calm" ]; do
		echo "ticks 2000000" > "$TMP/ff" || break
	done
}
storm &
S=$!
pids+=("$S")
# the agent thread's CPU time (ticks) and the time
agent_ticks() {
	local t
	for t in /proc/"$P"/task/*; do
		[ "$(cat "$t/comm" 2> /dev/null)" = utrace-agent ] || continue
		awk '{ print $14 + $15 }' "$t/stat"
	done
}
wait_for grep -q "^snapshot" "$E/trigger"
sleep 0.5
a0=$(agent_ticks); t0=$(date +%s%N)

# writers (and readers) through the mount, 24 at once (more than the
# agent's queue of 16 connections); each counts the writes that failed
# with a file said absent (ENOENT, ENODEV)
writer() {
	local i bad=0 other=0 e
	for i in $(seq 42); do
		if ! e=$( { echo 1 > "$D/tracing_on"; } 2>&1) ||
		   ! e=$( { echo 1 > "$E/enable"; } 2>&1) ||
		   ! e=$( { cat "$E/format" "$D/set_event" > /dev/null; } 2>&1); then
			case $e in
			*"No such file"*|*"No such device"*) bad=$((bad + 1)) ;;
			*) other=$((other + 1)) ;;
			esac
			echo "$e" >> "$TMP/werr.$1"
		fi
	done
	echo "$bad $other" > "$TMP/w.$1"
}
wp=()
for w in $(seq 24); do writer $w & wp+=($!); done
# and the CLI meanwhile
cli_bad=0
for i in $(seq 20); do
	"$UTRACE" list -p "$P" > /dev/null 2>> "$TMP/cli.err" || cli_bad=$((cli_bad + 1))
done
wait "${wp[@]}"
a1=$(agent_ticks); t1=$(date +%s%N)
touch "$TMP/calm"
echo "# agent thread: $(( (a1 - a0) * 100000000000 / $(getconf CLK_TCK) / (t1 - t0 + 1) ))% of a core over $(( (t1 - t0) / 1000000 )) ms; load: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$TMP"/w.* | awk '{ b += $1; o += $2 } END { print "# writes said absent: " b ", other errors: " o }'

check "2016 writes and reads through the mount during the storm: none said absent" bash -c '
	cat "$0"/werr.* 2> /dev/null | sort | uniq -c | head -5 >&2
	[ "$(cat "$0"/w.* | awk "{ b += \$1 } END { print b }")" = 0 ]' "$TMP"
check "utrace list -p answered every time (never 'not traceable')" bash -c '
	cat "$0/cli.err" >&2; [ "$1" = 0 ] && ! grep -q "not traceable" "$0/cli.err"' "$TMP" "$cli_bad"
check "the snapshot file holds ticks" bash -c '
	wait_for grep -q "tick: n=" "$0/snapshot"' "$D"
kill "$S" 2> /dev/null
wait "$S" 2> /dev/null

done_testing
