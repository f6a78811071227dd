#!/usr/bin/env bash
# utrace script on what utrace record writes (tests/stress/rb-stress.c):
# every event fired is printed or counted on a [LOST] line, per thread;
# times are in order and between the CLOCK_MONOTONIC readings the program
# took around each event; fork and exec give their processes.
. "$UTRACE_SRC/tests/cli/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"

# reconcile TRACE-TEXT FIRED: printed + lost = fired ("fired TID N") in
# all, and per thread no more than fired.  (The recorder writes the events
# a process lost after its threads' pages as one LOST record of thread 0.)
reconcile() {
	awk '
	FNR == NR { if ($1 == "fired") fired[$2] += $3; next }
	{
		tid = $1; sub(/.*-/, "", tid)
		if (match($0, /\[LOST [0-9]+ EVENTS\]$/)) {
			n = substr($0, RSTART + 6); sub(/ .*/, "", n); seen[tid] += n
		} else {
			seen[tid]++
		}
	}
	END {
		bad = 0
		for (t in fired) {
			total_fired += fired[t]
			if (seen[t] > fired[t]) {
				printf "# thread %s: fired %d, printed or lost %d\n", t, fired[t], seen[t] > "/dev/stderr"
				bad = 1
			}
		}
		for (t in seen) {
			total_seen += seen[t]
			if (!(t in fired) && t != 0) {
				printf "# thread %s: %d lines, fired nothing\n", t, seen[t] > "/dev/stderr"
				bad = 1
			}
		}
		if (total_seen != total_fired) {
			printf "# fired %d, printed or lost %d\n", total_fired, total_seen > "/dev/stderr"
			bad = 1
		}
		exit bad
	}' "$2" "$1"
}

# in_order JSON-LINES: the "time" values never go back
in_order() {
	sed -n 's/.*"time":\([0-9]*\).*/\1/p' "$1" |
		awk 'NR > 1 && $1 < last { bad = 1 } { last = $1 } END { exit bad }'
}

threads() {
	"$UTRACE" record -o "$TMP/a.dat" -- "$RB" threads 4 20000 > "$TMP/a.fired" 2> /dev/null &&
	"$UTRACE" script -i "$TMP/a.dat" > "$TMP/a.txt" 2> "$TMP/err" &&
	reconcile "$TMP/a.txt" "$TMP/a.fired" &&
	"$UTRACE" script -i "$TMP/a.dat" --json > "$TMP/a.json" 2> /dev/null &&
	in_order "$TMP/a.json" &&
	[ "$(wc -l < "$TMP/a.json")" -eq "$(wc -l < "$TMP/a.txt")" ]
}
check "4 threads with signal handlers: every event printed or lost, in time order" threads

small() {
	"$UTRACE" record -m 16K $2 -o "$TMP/$1.dat" -- "$RB" threads 2 100000 \
		> "$TMP/$1.fired" 2> /dev/null &&
	"$UTRACE" script -i "$TMP/$1.dat" > "$TMP/$1.txt" 2> "$TMP/err" &&
	{ reconcile "$TMP/$1.txt" "$TMP/$1.fired" ||
	  { # which side is wrong: the file (independent reader) or the script
	    python3 "$UTRACE_SRC/tests/stress/check-trace.py" "$TMP/$1.dat" "$TMP/$1.fired" >&2
	    cp "$TMP/$1.dat" "$TMP/$1.fired" "${UTRACE_BUILD}/" 2>/dev/null; false; }; } &&
	{ ! grep -q '\[LOST' "$TMP/$1.txt" ||
	  grep -qE "^utrace: '$TMP/$1.dat': [0-9]+ events lost \(see the \[LOST\] lines\)$" "$TMP/err"; }
}
check "16K of buffer, discard: fired = printed + [LOST] lines" small b ""
check "16K of buffer, overwrite: fired = printed + [LOST] lines" small c --overwrite

# clock FILE SLACK [env]: each event's time within SLACK ns of the two
# CLOCK_MONOTONIC readings the program took around it
clock() {
	local f=$1 slack=$2
	shift 2
	env "$@" "$UTRACE" record -o "$TMP/$f.dat" -- "$RB" clock > "$TMP/$f.mono" 2> /dev/null &&
	"$UTRACE" script -i "$TMP/$f.dat" --json > "$TMP/$f.json" 2> /dev/null &&
	sed -n 's/.*"time":\([0-9]*\).*"seq":\([0-9]*\).*/\2 \1/p' "$TMP/$f.json" > "$TMP/$f.times" &&
	[ "$(wc -l < "$TMP/$f.times")" -eq 20 ] &&
	awk -v slack="$slack" '
	     FNR == NR { if ($1 == "mono") { lo[$2] = $3; hi[$2] = $4 } next }
	     { if ($2 < lo[$1] - slack || $2 > hi[$1] + slack) {
		printf "# event %d at %d, not in [%d, %d]\n", $1, $2, lo[$1], hi[$1] > "/dev/stderr"; bad = 1 } }
	     END { exit bad }' "$TMP/$f.mono" "$TMP/$f.times"
}
# TSC ticks go through two calibration points taken by the recorder: their
# error, not the conversion's, needs the slack (a wrong conversion is off
# by milliseconds)
check "TSC time: each event between the CLOCK_MONOTONIC readings around it" clock d 200000
check "UTRACE_CLOCK=mono: each event exactly between the readings" clock d2 0 UTRACE_CLOCK=mono

fork_exec() {
	"$UTRACE" record -o "$TMP/e.dat" -- "$RB" fork 300 > "$TMP/e.fired" 2> /dev/null &&
	"$UTRACE" script -i "$TMP/e.dat" --json > "$TMP/e.json" 2> /dev/null &&
	[ "$(sed -n 's/.*"pid":\([0-9]*\),.*/\1/p' "$TMP/e.json" | sort -u | wc -l)" -eq 2 ] &&
	"$UTRACE" script -i "$TMP/e.dat" > "$TMP/e.txt" 2> /dev/null &&
	reconcile "$TMP/e.txt" "$TMP/e.fired" &&
	"$UTRACE" record -o "$TMP/f.dat" -- "$RB" exec 300 > "$TMP/f.fired" 2> /dev/null
	"$UTRACE" script -i "$TMP/f.dat" > "$TMP/f.txt" 2> "$TMP/err" && [ ! -s "$TMP/err" ] &&
	[ "$(grep -c ': rb_ev: ' "$TMP/f.txt")" -eq 600 ]
}
check "fork: two processes; exec: one pid, two images, all events" fork_exec
done_testing
