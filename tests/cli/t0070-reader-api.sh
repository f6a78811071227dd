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

# What traced programs load carries no consumer code: no trace file reader
# or writer, no control client, no page decoder, no pool draining (issue
# 11), not even as hidden symbols.
runtime_only() {
	local so="$UTRACE_BUILD/lib/libutrace.so"
	command -v nm > /dev/null || return 0
	nm --defined-only "$so" | awk '{ print $3 }' > "$TMP/syms" &&
	grep -q '^utrace_tp_reserve$' "$TMP/syms" &&
	! grep -E -e '^utrace__(tf|tfw|ctl|live|fmts|printer|vet|export)_|^utrace__print_(file|prefix)$' \
		-e '^utrace__rb_(init|load|next|count_events|page_cut)$|^utrace__pool_(drain|take_full|scan|peek|consumed)$|^utrace_reader_' \
		"$TMP/syms" > "$TMP/err"
}
check "libutrace.so holds no reader, client or consumer code" runtime_only

# SQLite is the tool's (utrace convert --format sqlite): neither library
# needs it, nor holds its export.
no_sqlite() {
	local so
	command -v readelf > /dev/null && command -v nm > /dev/null || return 0
	for so in "$UTRACE_BUILD/lib/libutrace.so" "$UTRACE_BUILD/lib/libutrace-reader.so"; do
		readelf -d "$so" > "$TMP/dyn" && grep -q NEEDED "$TMP/dyn" &&
		! grep -i sqlite "$TMP/dyn" &&
		! nm "$so" | grep -E 'sqlite3_|utrace__export_sqlite' || return 1
	done
}
check "neither library depends on libsqlite3" no_sqlite
done_testing
