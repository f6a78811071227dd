#!/usr/bin/env bash
# trace_clock: the kernel's clock choices, computed by the readers from the
# TSC and the pool's calibration points (mono, mono_raw, boot, tai,
# x86-tsc, and local/global/perf as mono_raw), the same for every reader
# of the process (the mount's trace, utrace show, a recording), the
# buffer reset on a change as the kernel does; utrace script --clock.
. "$(dirname "$0")/lib.sh"

need_fuse
command -v python3 > /dev/null || skip_all "python3 is missing"

mount_setup

LOG="$TMP/sample.log"
"$SAMPLE" --run 0 --log "$LOG" > /dev/null 2> "$TMP/sample.err" &
SP=$!
pids+=("$SP")
wait_traceable "$SP" "$TMP/sample.err"
# A process timed with CLOCK_MONOTONIC (no TSC): mono only.
UTRACE_CLOCK=mono "$SAMPLE" --run 0 > /dev/null 2> "$TMP/mono.err" &
MP=$!
pids+=("$MP")
wait_traceable "$MP" "$TMP/mono.err"
if ! "$UTRACE" mount "$MNT" 2> "$TMP/err"; then
	skip_all "cannot mount here: $(head -n 1 "$TMP/err")"
fi
D="$MNT/$SP"
wait_for test -f "$D/trace_clock"
grep -q '^flags.* constant_tsc' /proc/cpuinfo && grep -q '^flags.* cx16' /proc/cpuinfo ||
	skip_all "no invariant TSC here: utrace times with CLOCK_MONOTONIC (mono only)"

# clock NAME: choose it (one write), then wait for new events.
clock() {
	printf '%s' "$1" > "$D/trace_clock" || return 1
	wait_for has_lines "$LOG" $(( $(log_lines "$LOG") + 20 ))
}
# The time of the last demo_request of a trace text.
last_time() {
	sed -nE 's/.*\] \.\.\.\.\. +([0-9.]+): demo_request.*/\1/p' "$1" | tail -n 1
}
# A clock now, seconds (python's clock_gettime).
now() {
	python3 -c 'import sys, time; print("%.6f" % time.clock_gettime(getattr(time, sys.argv[1])))' "$1"
}
export -f clock last_time now
export D LOG SP MP UTRACE TMP
printf 'demo:demo_request' > "$D/set_event"

check "trace_clock lists the clocks utrace can give, [mono] chosen" bash -c '
	[ "$(cat "$D/trace_clock")" = "local global perf [mono] mono_raw boot tai x86-tsc" ]'
check "a process without the TSC has [mono] only, and refuses the others" bash -c '
	[ "$(cat "$1/$2/trace_clock")" = "[mono]" ] &&
	! printf boot > "$1/$2/trace_clock" 2> /dev/null &&
	printf mono > "$1/$2/trace_clock"' _ "$MNT" "$MP"
check "an unknown clock, and counter/uptime (not offered), are EINVAL" bash -c '
	! printf bogus > "$D/trace_clock" 2> "$TMP/e1" && grep -q "Invalid argument" "$TMP/e1" &&
	! printf counter > "$D/trace_clock" 2> /dev/null &&
	! printf uptime > "$D/trace_clock" 2> /dev/null &&
	grep -q "\[mono\]" "$D/trace_clock"'

check "x86-tsc: chosen, listed in brackets, times are counts (no decimal point)" bash -c '
	before=$(sed -nE "s/.*demo_request: id=([0-9]+).*/\1/p" "$D/trace" | tail -n 1)
	clock x86-tsc &&
	[ "$(cat "$D/trace_clock")" = "local global perf mono mono_raw boot tai [x86-tsc]" ] &&
	cat "$D/trace" > "$TMP/tsc" &&
	grep -qE "\] \.\.\.\.\. +[0-9]{9,}: demo_request" "$TMP/tsc" &&
	! grep -qE "\] \.\.\.\.\. +[0-9]+\.[0-9]+: demo_request" "$TMP/tsc" &&
	# the buffer was reset: no event from before the change
	first=$(sed -nE "s/.*demo_request: id=([0-9]+).*/\1/p" "$TMP/tsc" | head -n 1) &&
	[ -n "$first" ] && { [ -z "$before" ] || [ "$first" -gt "$before" ]; }'
check "x86-tsc: utrace show and per_cpu/*/trace give the same counts" bash -c '
	cat "$D/trace" > "$TMP/a" && "$UTRACE" show -p "$SP" > "$TMP/b" &&
	cat "$D"/per_cpu/cpu*/trace > "$TMP/c" &&
	norm() { sed -nE "s/.*\] \.\.\.\.\. +([0-9]+): demo_request: id=([0-9]+).*/\2 \1/p" "$1" | sort; }
	norm "$TMP/a" > "$TMP/a1" && norm "$TMP/b" > "$TMP/b1" && norm "$TMP/c" > "$TMP/c1" &&
	n=$(join "$TMP/a1" "$TMP/b1" | wc -l) && [ "$n" -gt 10 ] &&
	[ "$(join "$TMP/a1" "$TMP/b1" | awk "\$2 != \$3" | wc -l)" = 0 ] &&
	[ "$(join "$TMP/a1" "$TMP/c1" | awk "\$2 != \$3" | wc -l)" = 0 ]'

# Each ns clock: the last event lies between the clock read before the
# events (less a second for the reader's slack) and after the read.
for c in mono:CLOCK_MONOTONIC mono_raw:CLOCK_MONOTONIC_RAW boot:CLOCK_BOOTTIME \
	 tai:CLOCK_TAI local:CLOCK_MONOTONIC_RAW; do
	check "${c%%:*}: times are ${c#*:} seconds" bash -c '
		t0=$(now "$2") && clock "$1" && grep -q "\[$1\]" "$D/trace_clock" &&
		cat "$D/trace" > "$TMP/t" && t1=$(now "$2") && t=$(last_time "$TMP/t") &&
		[ -n "$t" ] && case $t in *.*) ;; *) false ;; esac &&
		awk -v a="$t0" -v t="$t" -v b="$t1" "BEGIN { exit !(t >= a - 1 && t <= b + 0.001) }" ||
		{ echo "# $1: $t0 <= $t <= $t1 does not hold"; false; }' _ "${c%%:*}" "${c#*:}"
done

check "boot: utrace show gives the mount's times" bash -c '
	clock boot && cat "$D/trace" > "$TMP/a" && "$UTRACE" show -p "$SP" > "$TMP/b" &&
	norm() { sed -nE "s/.*\] \.\.\.\.\. +([0-9.]+): demo_request: id=([0-9]+).*/\2 \1/p" "$1" | sort; }
	norm "$TMP/a" > "$TMP/a1" && norm "$TMP/b" > "$TMP/b1" &&
	[ "$(join "$TMP/a1" "$TMP/b1" | wc -l)" -gt 10 ] &&
	[ "$(join "$TMP/a1" "$TMP/b1" | awk "\$2 != \$3" | wc -l)" = 0 ]'

check "a recording carries the clock; script --clock shows it in another" bash -c '
	clock x86-tsc &&
	timeout 60 "$UTRACE" record -p "$SP" -e demo:demo_request --duration 1 -o "$TMP/r.dat" \
		> /dev/null 2>&1 &&
	"$UTRACE" script -i "$TMP/r.dat" > "$TMP/s" &&
	grep -qE "\] \.\.\.\.\. +[0-9]{9,}: demo_request" "$TMP/s" &&
	"$UTRACE" script -i "$TMP/r.dat" --clock mono > "$TMP/m" &&
	grep -qE "\] \.\.\.\.\. +[0-9]+\.[0-9]{6}: demo_request" "$TMP/m" &&
	[ "$(wc -l < "$TMP/s")" = "$(wc -l < "$TMP/m")" ] &&
	"$UTRACE" script -i "$TMP/r.dat" --clock boot > /dev/null &&
	"$UTRACE" script -i "$TMP/r.dat" --clock mono_raw > /dev/null'
check "script --clock: an unknown name is a usage error (129)" bash -c '
	"$UTRACE" script -i "$TMP/r.dat" --clock bogus 2> "$TMP/e"; [ $? = 129 ] &&
	grep -q "unknown clock .bogus." "$TMP/e"'
check "script --clock on a process timed without the TSC: one clear line" bash -c '
	timeout 60 "$UTRACE" record -p "$MP" -e demo:demo_request --duration 1 -o "$TMP/m.dat" \
		> /dev/null 2>&1 &&
	! "$UTRACE" script -i "$TMP/m.dat" --clock x86-tsc > /dev/null 2> "$TMP/e" &&
	[ "$(wc -l < "$TMP/e")" = 1 ] && grep -q "cannot show .x86-tsc. times" "$TMP/e" &&
	"$UTRACE" script -i "$TMP/m.dat" --clock mono | grep -q demo_request'
if command -v trace-cmd > /dev/null; then
	check "trace.dat export: in mono whatever the recording's clock (trace-cmd reads that)" bash -c '
		"$UTRACE" convert -i "$TMP/r.dat" -o "$TMP/r.tdat" > /dev/null 2>&1 &&
		trace-cmd dump --options -i "$TMP/r.tdat" 2>&1 | grep -q "perf \[mono\] mono_raw" &&
		trace-cmd report -i "$TMP/r.tdat" 2> /dev/null | grep -E "demo_request" > "$TMP/rep" &&
		"$UTRACE" script -i "$TMP/r.dat" --clock mono > "$TMP/sm" &&
		[ "$(grep -oE "[0-9]+\.[0-9]{6}: +demo_request" "$TMP/rep" | head -n 5 | cut -d: -f1)" = \
		  "$(grep -oE "[0-9]+\.[0-9]{6}: +demo_request" "$TMP/sm" | head -n 5 | cut -d: -f1)" ]'
fi

printf mono > "$D/trace_clock"
done_testing
