#!/usr/bin/env bash
# The public reader API (libutrace-reader(3)) through samples/count-events,
# linked with the shared library: its counts of a recording of the sample
# against those of `utrace script`.
. "$(dirname "$0")/lib.sh"
COUNT="$UTRACE_BUILD/samples/count-events"

record() {
	"$UTRACE" record -o "$TMP/s.dat" -- "$SAMPLE" > /dev/null 2> "$TMP/err" &&
	grep -q ' 0 lost' "$TMP/err"
}
check "record the sample" record

counts() {
	"$COUNT" "$TMP/s.dat" > "$TMP/counts" 2> "$TMP/err" &&
	[ ! -s "$TMP/err" ] &&
	sort "$TMP/counts" > "$TMP/api" &&
	"$UTRACE" script -i "$TMP/s.dat" --json 2> "$TMP/err" |
		sed -E 's/^\{"name":"([^"]*)".*/\1/' | sort | uniq -c |
		awk '{ print $2, $1 }' > "$TMP/script" &&
	[ -s "$TMP/script" ] &&
	same "$TMP/api" "$TMP/script"
}
check "count-events counts what utrace script prints" counts

missing() {
	! "$COUNT" "$TMP/nonexistent.dat" > /dev/null 2> "$TMP/err" &&
	grep -q "No such file" "$TMP/err"
}
check "a missing file is an error" missing

exports() {
	local so="$UTRACE_BUILD/lib/libutrace-reader.so"
	command -v nm > /dev/null || return 0
	nm -D --defined-only "$so" | awk '{ print $3 }' > "$TMP/syms" &&
	[ -s "$TMP/syms" ] &&
	! grep -vE '^utrace_(reader|record)_' "$TMP/syms"
}
check "the shared library exports only utrace_reader_* and utrace_record_*" exports
done_testing
