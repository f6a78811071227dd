#!/usr/bin/env bash
# The inlined writer (issue 16, include/utrace/tracepoint.h): strings of
# every length from 0 to 70 bytes, with both forms of __assign_str, and a
# NULL string, recorded byte for byte; a long run of two-integer events,
# every one in the file, in order, fields intact; the same text through
# UTRACE_PRINT (the library's path: a print destination turns the inline
# path off) as from a recording (the inline path); filters on the inline
# path (the record written in place, then filtered: a rejected one is
# taken back): one comparison, two, a string == and a glob.  (Setting a
# filter on a running process: t0013.)
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

# A filter on the event (set before its first event): the inline path
# writes the record, runs the filter on it and takes rejected ones back.
filtered() {
	"$UTRACE" record -m 64M -e 'fast:fast_pair' --filter 'fast:fast_pair:b < 300' \
		-o "$TMP/f.dat" -- "$DEMO" pairs $N > /dev/null 2> "$TMP/err" || return 1
	"$UTRACE" script -i "$TMP/f.dat" 2>> "$TMP/err" |
		awk '/fast_pair: / { split($0, f, " b="); if (f[2] != n) bad = 1; n++ }
		     END { if (bad || n != 300) { print n " events after the filter"; exit 1 } }' \
		>> "$TMP/err"
}
check "a filter on the event still applies" filtered

# Two comparisons: b in [100, 300), every one in order.
filtered2() {
	"$UTRACE" record -m 64M -e 'fast:fast_pair' \
		--filter 'fast:fast_pair:b >= 100 && b < 300' \
		-o "$TMP/f2.dat" -- "$DEMO" pairs $N > /dev/null 2> "$TMP/err" || return 1
	"$UTRACE" script -i "$TMP/f2.dat" 2>> "$TMP/err" |
		awk 'BEGIN { n = 100 }
		     /fast_pair: / { split($0, f, " b="); if (f[2] != n) bad = 1; n++ }
		     END { if (bad || n != 300) { print n " after the filter"; exit 1 } }' \
		>> "$TMP/err"
}
check "a two-comparison filter on the inline path" filtered2

# A timer signal's handler fires the event in the middle of the loop's
# (nested: it goes to the stash, then into the page after the outer
# event), with a filter that keeps the odd b: every odd one of the loop in
# order, and of the handler's, none lost, no even one.
filtered_signals() {
	local fired
	"$UTRACE" record -m 64M -e 'fast:fast_pair' --filter 'fast:fast_pair:b & 1' \
		-o "$TMP/fsig.dat" -- "$DEMO" signals 2000000 > "$TMP/fired" 2> "$TMP/err" ||
		return 1
	fired=$(cat "$TMP/fired")
	[ "$fired" -gt 0 ] || { echo "no signal fired" >> "$TMP/err"; return 1; }
	"$UTRACE" script -i "$TMP/fsig.dat" 2>> "$TMP/err" |
		awk -v fired="$fired" '
			BEGIN { i = 1 }
			/fast_pair: / {
				split($0, f, "fast_pair: a=");
				split(f[2], g, " b=");
				a = g[1] + 0; b = g[2] + 0
				if (a >= 2^40) {
					if (b != 2^31 + (a - 2^40) || b % 2 == 0) { print "handler: " $0; bad = 1; exit }
					h++
					next
				}
				if (a != b || a != i) { print "loop event " i ": " $0; bad = 1; exit }
				i += 2
			}
			END {
				if (!bad && i != 2000001) { print "loop: up to " i; bad = 1 }
				if (!bad && h != int(fired / 2)) { print "handler: " h " of " int(fired / 2); bad = 1 }
				exit bad
			}' >> "$TMP/err"
}
check "a filter with a signal handler's events nested in the loop's" filtered_signals

# Strings: == and a glob on the __string field; the others are taken back.
filtered_str() { # filter expected-n...
	local flt=$1
	shift
	"$UTRACE" record -e 'fast:fast_str' --filter "fast:fast_str:$flt" \
		-o "$TMP/fs.dat" -- "$DEMO" strings > /dev/null 2> "$TMP/err" || return 1
	"$UTRACE" script -i "$TMP/fs.dat" 2>> "$TMP/err" |
		sed -n 's/.*\(fast_str: .*\)$/\1/p' > "$TMP/fs.got"
	expected_strings | grep '^fast_str: ' | awk -v want="$*" '
		BEGIN { split(want, w, " "); for (i in w) keep["n=" w[i]] = 1 }
		{ if ($2 in keep) print }' > "$TMP/fs.want"
	[ -s "$TMP/fs.want" ] && cmp "$TMP/fs.want" "$TMP/fs.got" >> "$TMP/err" 2>&1
}
check 'a string == filter on the inline path' filtered_str 's == "def"' 3
check 'a string glob filter on the inline path' filtered_str 's ~ "ab*"' 26 52
check 'a glob and a comparison' filtered_str 's ~ "*z*" && n < 30' $(seq 13 29)

done_testing
