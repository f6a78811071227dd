#!/usr/bin/env bash
# utrace record: what the program fired is in the file or counted lost,
# per thread, with signal handlers firing events in the middle of others,
# in discard and overwrite modes; crashes, fork and exec lose nothing.
. "$(dirname "$0")/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"
CHECK="$UTRACE_SRC/tests/stress/check-trace.py"

record() { # record FILE FIRED [record options --] ARGS...
	local f=$1 fired=$2
	shift 2
	"$UTRACE" record -o "$f" "$@" > "$fired" 2> "$TMP/rec.err"
}

check "threads + signals, default buffer: fired = in file + lost" bash -c '
	"$0" record -o "$3/a.dat" -- "$1" threads 2 200000 > "$3/a.fired" 2> "$3/err" &&
	python3 "$2" "$3/a.dat" "$3/a.fired"' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "small buffer in discard mode: loss is exact and reported" bash -c '
	"$0" record -m 16K -o "$3/b.dat" -- "$1" threads 2 200000 > "$3/b.fired" 2> "$3/err" &&
	python3 "$2" "$3/b.dat" "$3/b.fired" --expect-loss &&
	grep -qE "utrace record: [0-9]+ events written, [1-9][0-9]* lost" "$3/err" &&
	grep -qE "^utrace record: [0-9]+\.[0-9]% of the events were lost: .* a larger buffer \(-m\)" "$3/err"' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "small buffer in overwrite mode: fired = in file + lost" bash -c '
	"$0" record -m 16K --overwrite -o "$3/c.dat" -- "$1" threads 2 200000 > "$3/c.fired" 2> "$3/err" &&
	python3 "$2" "$3/c.dat" "$3/c.fired"' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "8 threads, some ending before others start (thread slots reused), overwrite" bash -c '
	"$0" record -m 16K --overwrite -o "$3/m.dat" -- "$1" threads 8 20000 > "$3/m.fired" 2> "$3/err" &&
	python3 "$2" "$3/m.dat" "$3/m.fired"' "$UTRACE" "$RB" "$CHECK" "$TMP"

for how in segv abort kill; do
	check "killed by $how after 5000 events: all 5000 are in the file" bash -c '
		"$0" record -o "$3/d.dat" -- "$1" crash "$4" 5000 > "$3/d.fired" 2> "$3/err";
		python3 "$2" "$3/d.dat" "$3/d.fired" --expect-no-loss &&
		grep -qE "was killed by signal|exited with status" "$3/err"' "$UTRACE" "$RB" "$CHECK" "$TMP" "$how"
done

check "fork: parent and child each have their own events" bash -c '
	"$0" record -o "$3/e.dat" -- "$1" fork 3000 > "$3/e.fired" 2> "$3/err" &&
	python3 "$2" "$3/e.dat" "$3/e.fired" --expect-no-loss &&
	grep -q "2 processes" "$3/err"' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "exec: events before and after exec, one pid, two images" bash -c '
	"$0" record -o "$3/f.dat" -- "$1" exec 3000 > "$3/f.fired" 2> "$3/err";
	python3 "$2" "$3/f.dat" "$3/f.fired" --expect-no-loss &&
	grep -q "6000 events written" "$3/err"' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "-e selects events: only rb_long recorded" bash -c '
	RB_NO_SIGNALS=1 "$0" record -e rbstress:rb_long -o "$3/g.dat" -- "$1" threads 1 10000 > /dev/null 2> "$3/err" &&
	grep -q "^utrace record: 10 events written, 0 lost" "$3/err" &&
	! grep -q "of the events were lost" "$3/err"' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "--duration stops a command that runs on" bash -c '
	start=$(date +%s%N)
	"$0" record --duration 0.5 -o "$3/h.dat" -- sleep 30 2> "$3/err"
	end=$(date +%s%N)
	# (well under the 30 s the command would run; room for a loaded machine)
	[ $(( (end - start) / 1000000 )) -lt 10000 ] && grep -q "killed by signal 15" "$3/err"' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "--idle: the recorder at SCHED_IDLE, the command not; fired = in file + lost" bash -c '
	"$0" record --idle -o "$3/n.dat" -- sh -c "
		# the recorder switches after it forked the command: wait for it
		i=0; while [ \"\$(cut -d\" \" -f41 /proc/\$PPID/stat)\" != 5 ] && [ \$i -lt 600 ]; do
			sleep 0.05; i=\$((i + 1)); done
		cut -d\" \" -f41 /proc/\$PPID/stat > \"$3/n.policy\"
		cut -d\" \" -f41 /proc/\$\$/stat >> \"$3/n.policy\"
		exec \"$1\" threads 2 100000" > "$3/n.fired" 2> "$3/err" &&
	[ "$(tr "\n" " " < "$3/n.policy")" = "5 0 " ] &&
	python3 "$2" "$3/n.dat" "$3/n.fired"' "$UTRACE" "$RB" "$CHECK" "$TMP"

# The SIGINT goes once the command has done its events and become 'sleep
# 30' (it was sent after a fixed second, which a loaded machine could take
# to start the command).  The recording must then stop well before the
# sleep would end: in under 10 s (it takes milliseconds; 10 s is room for
# a loaded machine, not a measure of speed).
sleeping() { # sleeping PID: PID's child has become 'sleep'
	local c
	c=$(pgrep -P "$1") && [ "$(cat "/proc/$c/comm" 2> /dev/null)" = sleep ]
}
sigint() {
	"$UTRACE" record -o "$TMP/i.dat" -- sh -c '"$0" fork 500 > "$1"; exec sleep 30' "$RB" "$TMP/i.fired" 2> "$TMP/err" &
	local rec=$! start end
	wait_for sleeping $rec || { kill -INT $rec; wait $rec; return 1; }
	start=$(date +%s%N)
	kill -INT $rec
	wait $rec || return 1
	end=$(date +%s%N)
	[ $(( (end - start) / 1000000 )) -lt 10000 ] &&
	python3 "$CHECK" "$TMP/i.dat" "$TMP/i.fired" --expect-no-loss
}
check "SIGINT stops the recording cleanly and keeps the events" sigint

check "TSC time stamps, converted, agree with CLOCK_MONOTONIC" bash -c '
	"$0" record -o "$3/k.dat" -- "$1" clock > "$3/k.fired" 2> "$3/err" &&
	python3 "$2" "$3/k.dat" "$3/k.fired" --clock' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "UTRACE_CLOCK=mono: the vDSO clock, in ns" bash -c '
	UTRACE_CLOCK=mono "$0" record -o "$3/l.dat" -- "$1" clock > "$3/l.fired" 2> "$3/err" &&
	python3 "$2" "$3/l.dat" "$3/l.fired" --clock' "$UTRACE" "$RB" "$CHECK" "$TMP"

check "bad options: one clear line, exit 129" bash -c '
	"$0" record -m 12Q -- true 2> "$1/err"; [ $? -eq 129 ] &&
	[ "$(cat "$1/err")" = "utrace record: bad buffer size '\''12Q'\'': give bytes with an optional K, M or G, from 16K to 64G" ] &&
	"$0" record 2> "$1/err"; [ $? -eq 129 ] && grep -q "no command to run" "$1/err"' "$UTRACE" "$TMP"

check "a command that cannot run: 255 (as perf), no file (t2805)" bash -c '
	"$0" record -o "$1/j.dat" -- /nonexistent/cmd 2> "$1/err"; [ $? = 255 ] &&
	grep -q "cannot run '\''/nonexistent/cmd'\''" "$1/err" && [ ! -e "$1/j.dat" ]' "$UTRACE" "$TMP"
done_testing
