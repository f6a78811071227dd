#!/usr/bin/env bash
# The tutorial program's events, printed as the kernel's trace file lines,
# against a golden file; and the same through stderr.
. "$(dirname "$0")/lib.sh"
GOLDEN="$UTRACE_SRC/tests/data/sample.golden"

run_to_file() {
	UTRACE_EVENTS='sample-trace:*' UTRACE_PRINT="$TMP/trace.txt" "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	[ ! -s "$TMP/err" ] &&
	normalize "$TMP/trace.txt" > "$TMP/norm" &&
	same "$TMP/norm" "$GOLDEN"
}
check "UTRACE_PRINT=file matches the golden file" run_to_file

line_layout() {
	# %16s-%-7d [%03d] ..... %5lu.%06lu: name: text, as the kernel prints
	grep -vqE '^ {10}sample-[0-9]+ +\[[0-9]{3}\] \.\.\.\.\. +[0-9]{1,5}\.[0-9]{6}: [a-z_]+: ' "$TMP/trace.txt" && return 1
	awk '{ if (substr($0, 17, 1) != "-" || substr($0, 25, 2) != " [") exit 1 }' "$TMP/trace.txt"
}
check "lines have the kernel's column layout" line_layout

run_to_stderr() {
	UTRACE_EVENTS='sample-trace:*' UTRACE_PRINT=stderr "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	normalize "$TMP/err" > "$TMP/norm" &&
	same "$TMP/norm" "$GOLDEN" &&
	grep -q "plain probe saw 10" "$TMP/out"
}
check "UTRACE_PRINT=stderr prints the same lines" run_to_stderr

appends() {
	UTRACE_EVENTS='foo_bar_with_fn' UTRACE_PRINT="$TMP/two.txt" "$SAMPLE" > /dev/null &&
	UTRACE_EVENTS='foo_bar_with_fn' UTRACE_PRINT="$TMP/two.txt" "$SAMPLE" > /dev/null &&
	[ "$(wc -l < "$TMP/two.txt")" -eq 8 ]
}
check "a second run appends to the file" appends

nothing_when_off() {
	UTRACE_PRINT="$TMP/off.txt" "$SAMPLE" > /dev/null 2> "$TMP/err" &&
	[ ! -s "$TMP/off.txt" ] && [ ! -s "$TMP/err" ]
}
check "no events switched on: nothing printed, nothing said" nothing_when_off
done_testing
