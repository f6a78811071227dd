#!/usr/bin/env bash
# Two threads of one process with the same tid in one recording: the
# kernel hands a tid out again once its pid counter wraps at pid_max
# (32768 on many machines, this one too), which a long recording of a
# program that makes threads all day meets, and CI's churn test met
# beside other tests (t0011: "thread 5692: page 0 twice", the later
# thread's events left out by every reader).  rb-stress reuse sets the
# tid allocator back (ns_last_pid: root) until a second thread gets the
# first one's tid.  Every event of both must be read.
. "$(dirname "$0")/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"
CHECK="$UTRACE_SRC/tests/stress/check-trace.py"
[ -w /proc/sys/kernel/ns_last_pid ] ||
	skip_all "cannot set the next tid (/proc/sys/kernel/ns_last_pid needs root)"

"$UTRACE" record -o "$TMP/r.dat" -- "$RB" reuse 2000 > "$TMP/fired" 2> "$TMP/err"
check "recorded" test $? = 0
grep -q '^reused ' "$TMP/fired" ||
	skip_all "the kernel did not give the tid again in 50 tries (another process took it)"
reused=$(sed -n 's/^reused //p' "$TMP/fired")
# (the threads between, that did not get the tid, fired 2,000 each too)
total=$(awk '$1 == "fired" { n += $3 } END { print n }' "$TMP/fired")
check "two threads of one tid ($total events in all): no page twice, fired = in file + lost" \
	python3 "$CHECK" "$TMP/r.dat" "$TMP/fired"
check "utrace script prints all $total, no problem reported" bash -c '
	n=$("$0" script -i "$1" 2> "$2" | grep -c " rb_ev: seq=")
	[ "$n" = "$3" ] && [ ! -s "$2" ]' "$UTRACE" "$TMP/r.dat" "$TMP/serr" "$total"
check "tid $reused: the later thread's events come after the earlier one's" bash -c '
	"$0" script -i "$1" 2> /dev/null | grep " rb_ev: seq=.* tid=$3 " |
		sed -nE "s/.* seq=([0-9]+) .*/\1/p" > "$2.seqs"
	# each thread numbers its own events from 0: 0..1999 twice, in order
	seq 0 1999 > "$2.one"; cat "$2.one" "$2.one" | cmp -s - "$2.seqs"' \
	"$UTRACE" "$TMP/r.dat" "$TMP/s" "$reused"
done_testing
