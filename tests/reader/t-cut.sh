#!/usr/bin/env bash
# A trace file cut short (the recorder killed with SIGKILL, a full disk,
# or any prefix of a file) prints the events of the whole pages in it, with
# their times, and says once that it is cut: status 0, as perf and
# trace-cmd do with a truncated file.  No sleep decides anything here: each
# step waits for a condition (a line of the program, the file's size), up
# to a generous limit.
. "$UTRACE_SRC/tests/cli/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"
CHECK="$UTRACE_SRC/tests/stress/check-trace.py"

# wait_until SECONDS COMMAND...: until COMMAND succeeds (polled)
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || { echo "# waited in vain for: $*" >&2; return 1; }
		sleep 0.01
	done
}
has_line() { grep -q "$2" "$1" 2> /dev/null; }
size_at_least() { [ -f "$1" ] && [ "$(stat -c %s "$1")" -ge "$2" ]; }

# nev JSON: the events in 'utrace script --json' output ([LOST] markers
# have no fields)
nev() { grep -c '"fields":' "$1"; }

# cut_said ERR FILE JSON: the cut said once on stderr, with the count of
# events printed; nothing else but the count of events lost
cut_said() {
	[ "$(grep -c 'file cut short' "$1")" -eq 1 ] &&
	grep -qE "^utrace: '$2': file cut short at byte [0-9]+ \(the recording did not end cleanly\): printed the $(nev "$3") events before it$" "$1" &&
	! grep -v -e 'file cut short' -e ' events lost (see the \[LOST\] lines)$' "$1" | grep -q .
}

# (a) The program fires 50000 events (about 345 full pages and one partly
# filled) and sleeps; once the recorder has written 1 MB (240 pages), it is
# killed with SIGKILL.  Every event of the whole pages prints, each time
# between the CLOCK_MONOTONIC readings the program took around them all.
idle() {
	local pid st
	"$UTRACE" record -o "$TMP/a.dat" -- "$RB" idle 50000 600 > "$TMP/a.fired" 2> /dev/null &
	pid=$!
	wait_until 60 has_line "$TMP/a.fired" '^fired' &&
	wait_until 60 size_at_least "$TMP/a.dat" 1000000 || { kill -9 "$pid"; return 1; }
	kill -9 "$pid"
	wait "$pid"
	st=$?
	kill "$(awk '$1 == "fired" { print $2 }' "$TMP/a.fired")"
	[ "$st" -eq 137 ] &&
	"$UTRACE" script -i "$TMP/a.dat" --json > "$TMP/a.json" 2> "$TMP/err" &&
	cut_said "$TMP/err" "$TMP/a.dat" "$TMP/a.json" &&
	[ "$(nev "$TMP/a.json")" -ge 34000 ] &&
	python3 "$CHECK" "$TMP/a.dat" "$TMP/a.fired" --cut > "$TMP/a.check" &&
	grep -q "in file $(nev "$TMP/a.json") " "$TMP/a.check" &&
	sed -n 's/.*"time":\([0-9]*\).*/\1/p' "$TMP/a.json" > "$TMP/a.times" &&
	awk 'FNR == NR { if ($1 == "span") { lo = $2 - 200000; hi = $3 + 200000 } next }
	     $1 < lo || $1 > hi {
		printf "# time %.0f not in [%.0f, %.0f]\n", $1, lo, hi > "/dev/stderr"; bad = 1; exit }
	     FNR > 1 && $1 < last { print "# time goes back" > "/dev/stderr"; bad = 1; exit }
	     { last = $1 } END { exit bad }' "$TMP/a.fired" "$TMP/a.times"
}
check "recorder killed (SIGKILL) while the program idles: its pages print, timed" idle

# (b) Killed while two threads fire as fast as they can: the program goes
# on to its end without the recorder; the file holds a prefix of it.
firing() {
	local pid st
	"$UTRACE" record -o "$TMP/b.dat" -- "$RB" threads 2 3000000 > "$TMP/b.fired" 2> /dev/null &
	pid=$!
	wait_until 60 size_at_least "$TMP/b.dat" 2000000 || { kill -9 "$pid"; return 1; }
	kill -9 "$pid"
	wait "$pid"
	st=$?
	[ "$st" -eq 137 ] &&
	wait_until 120 eval '[ "$(grep -c "^fired" "$TMP/b.fired")" -eq 2 ]' &&
	"$UTRACE" script -i "$TMP/b.dat" --json > "$TMP/b.json" 2> "$TMP/err" &&
	cut_said "$TMP/err" "$TMP/b.dat" "$TMP/b.json" &&
	[ "$(nev "$TMP/b.json")" -ge 1000 ] &&
	python3 "$CHECK" "$TMP/b.dat" "$TMP/b.fired" --cut > "$TMP/b.check" &&
	grep -q "in file $(nev "$TMP/b.json") " "$TMP/b.check" &&
	sed -n 's/.*"time":\([0-9]*\).*/\1/p' "$TMP/b.json" |
		awk 'NR > 1 && $1 < last { bad = 1 } $1 == 0 { bad = 1 } { last = $1 } END { exit bad }'
}
check "recorder killed (SIGKILL) while the program fires: a prefix, in order, timed" firing

# (c) A full disk: a 2 MiB tmpfs.  The recorder says so once and carries
# on without writing; the program runs to its end (status 0); the file
# prints what it holds; written + lost = fired.
full_disk() {
	local st
	"$UTRACE" record -o "$TMP/fs/c.dat" -- "$RB" threads 2 200000 > "$TMP/c.fired" \
		2> "$TMP/c.err"
	st=$?
	cp "$TMP/c.err" "$TMP/err"
	[ "$st" -eq 1 ] &&
	[ "$(grep -c '^fired' "$TMP/c.fired")" -eq 2 ] &&
	[ "$(grep -c "^utrace record: cannot write '$TMP/fs/c.dat': No space left on device; recording stopped at byte [0-9]* (the file up to there is readable); the command goes on, its events from now on are counted lost$" "$TMP/c.err")" -eq 1 ] &&
	! grep -qE 'exited with status|killed by signal' "$TMP/c.err" &&
	awk '$1 == "fired" { f += $3 }
	     /^utrace record: [0-9]+ events written, [0-9]+ lost/ { w = $3; l = $6 }
	     END { if (w + l != f || l == 0) { printf "# written %d + lost %d != fired %d\n", w, l, f > "/dev/stderr"; exit 1 } }' \
		"$TMP/c.fired" "$TMP/c.err" &&
	"$UTRACE" script -i "$TMP/fs/c.dat" --json > "$TMP/c.json" 2> "$TMP/err" &&
	cut_said "$TMP/err" "$TMP/fs/c.dat" "$TMP/c.json" &&
	grep -q "^utrace record: $(nev "$TMP/c.json") events written" "$TMP/c.err" &&
	python3 "$CHECK" "$TMP/fs/c.dat" "$TMP/c.fired" --cut > /dev/null
}
mkdir -p "$TMP/fs"
if [ "$(id -u)" -ne 0 ]; then
	n=$((n + 1)); echo "ok $n # SKIP a full disk: mounting a 2 MiB tmpfs needs root"
elif ! mount -t tmpfs -o size=2m utrace-test "$TMP/fs" 2> /dev/null; then
	n=$((n + 1)); echo "ok $n # SKIP a full disk: cannot mount a tmpfs here"
else
	check "a full disk: one clear message, the program unharmed, the file readable" full_disk
	umount "$TMP/fs"
fi

# (d) Every prefix of a real recording (cut at each record boundary and
# inside records) prints exactly the events of its whole pages, as the
# whole file prints them, and says it is cut.
prefixes() {
	env "$@" "$UTRACE" record -o "$TMP/d.dat" -- "$RB" threads 2 3000 > /dev/null 2>&1 &&
	mkdir -p "$TMP/d" &&
	python3 "$UTRACE_SRC/tests/reader/cut-prefixes.py" "$UTRACE" "$TMP/d.dat" "$TMP/d" \
		$([ $# -gt 0 ] && echo --exact) 2> "$TMP/err"
}
check "every prefix of a file (TSC time): the events of its whole pages" prefixes
check "every prefix of a file (UTRACE_CLOCK=mono): the whole file's lines" \
	prefixes UTRACE_CLOCK=mono
done_testing
