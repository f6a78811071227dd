#!/usr/bin/env bash
# The inlined writer (issue 16, include/utrace/tracepoint.h): strings of
# every length from 0 to 70 bytes, with both forms of __assign_str, and a
# NULL string, recorded byte for byte; a long run of two-integer events,
# every one in the file, in order, fields intact; the same text through
# UTRACE_PRINT (the library's path: a print destination turns the inline
# path off) as from a recording (the inline path); a filter set on a
# running event still filters (the inline path leaves filtered events to
# the library).  (Setting a filter on a running process: t0013.)
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/fast-demo"

# fast_str and fast_str2 lines as the demo fires them
expected_strings() {
	python3 -c '
for n in range(71):
    s = "".join(chr(97 + (n + i) % 26) for i in range(n))
    print("fast_str: n=%d s=%s" % (n, s))
    print("fast_str2: n=%d s=%s" % (n, s))
print("fast_str: n=999 s=(null)")'
}

# The fast_str and fast_str2 lines of a trace listing, from the event's
# name on, the padding after the name squeezed.
events_of() {
	sed -nE 's/.*: (fast_str2?): +/\1: /p' "$@"
}

strings_recorded() {
	expected_strings > "$TMP/want" &&
	"$UTRACE" record -e 'fast:*' -o "$TMP/s.dat" -- "$DEMO" strings > /dev/null 2> "$TMP/err" &&
	"$UTRACE" script -i "$TMP/s.dat" > "$TMP/s.txt" 2>> "$TMP/err" &&
	events_of "$TMP/s.txt" > "$TMP/got" &&
	same "$TMP/got" "$TMP/want"
}
check "strings of 0 to 70 bytes and NULL, both __assign_str forms, recorded exactly" strings_recorded

# The record itself: the __data_loc word and the bytes, as libtraceevent
# reads them (trace-cmd report of the trace.dat export), when trace-cmd is
# there.
strings_tracecmd() {
	command -v trace-cmd > /dev/null || return 0
	"$UTRACE" convert -i "$TMP/s.dat" --format trace.dat -o "$TMP/s.trace.dat" 2> "$TMP/err" &&
	trace-cmd report -i "$TMP/s.trace.dat" 2>> "$TMP/err" |
		events_of | sed 's/ *$//' > "$TMP/tc" &&
	sed 's/ *$//' "$TMP/want" > "$TMP/want2" &&
	same "$TMP/tc" "$TMP/want2"
}
check "trace-cmd reads the same strings from the trace.dat export" strings_tracecmd

printed_same() {
	UTRACE_EVENTS='fast:*' UTRACE_PRINT="$TMP/print.txt" "$DEMO" strings 2> "$TMP/err" &&
	events_of "$TMP/print.txt" > "$TMP/pgot" &&
	same "$TMP/pgot" "$TMP/want"
}
check "UTRACE_PRINT (the library's path) prints the same strings" printed_same

# 300,000 events: about 1,800 pages, so page switches (the library's)
# between runs of inline events.  A pool of 64 MiB holds them all.
N=300000
pairs() {
	local line
	"$UTRACE" record -m 64M -e 'fast:fast_pair' -o "$TMP/p.dat" -- "$DEMO" pairs $N \
		> /dev/null 2> "$TMP/err" || return 1
	line=$(grep -E '^utrace record: [0-9]+ events written' "$TMP/err")
	case $line in
	"utrace record: $N events written, 0 lost,"*) ;;
	*) echo "summary: $line" >> "$TMP/err"; return 1 ;;
	esac
	"$UTRACE" script -i "$TMP/p.dat" 2>> "$TMP/err" |
		awk -v n=$N '
			/fast_pair: / {
				split($0, f, "fast_pair: a=");
				split(f[2], g, " b=");
				if (g[1] != i || g[2] != i) { print "event " i ": " $0; bad = 1; exit }
				i++
			}
			END { if (!bad && i != n) { print i " events, not " n; bad = 1 } exit bad }
		' >> "$TMP/err"
}
check "$N two-integer events: all in the file, in order, a and b intact" pairs

# A filter on the event (set before its first event): the iterator leaves
# the event to the library's path, which filters.
filtered() {
	"$UTRACE" record -m 64M -e 'fast:fast_pair' --filter 'fast:fast_pair:b < 300' \
		-o "$TMP/f.dat" -- "$DEMO" pairs $N > /dev/null 2> "$TMP/err" || return 1
	"$UTRACE" script -i "$TMP/f.dat" 2>> "$TMP/err" |
		awk '/fast_pair: / { split($0, f, " b="); if (f[2] != n) bad = 1; n++ }
		     END { if (bad || n != 300) { print n " events after the filter"; exit 1 } }' \
		>> "$TMP/err"
}
check "a filter on the event still applies" filtered

done_testing
