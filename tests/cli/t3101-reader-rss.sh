#!/usr/bin/env bash
# Issue 33 item 5: the readers stream.  A trace file is mapped and its
# pages are given back as they are read (lib/reader/file-reader.c,
# DROP_EVERY, 16 MiB), so the resident memory of script, report, hist and
# a converter stays far below the file's size.  A file of 4,000,000
# events (about 100 MB) is recorded here; before, each reader's peak RSS
# was the file's size and more (105 MB for 97.5 MB).  Their output is the
# same as that of the file read from a pipe (read into memory: nothing
# given back).
. "$(dirname "$0")/lib.sh"
sanitizer_build && skip_all "a sanitizer build: its allocator's quarantine keeps freed memory resident"

export UTRACE_RUNTIME_DIR=$TMP/run
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
F=$TMP/big.dat
RSS="$UTRACE_SRC/tests/cli/maxrss.py"
N=4000000

# (a loaded machine may lose some: the size is what counts here, so a
# recording that lost so many that the file is small is made again with
# twice the events and a 64 MiB buffer: a CI run beside other work lost
# 1.1 M of 4 M)
check "record $N events" bash -c '
	rec() {
		"$0" record -e fast:fast_pair -o "$1" "${@:5}" -- "$2" pairs $3 > /dev/null \
			2> "$4/err" && grep -q "events written" "$4/err"
	}
	rec "$@" || exit 1
	[ $(( $(stat -c %s "$1") / 1024 )) -gt 80000 ] && exit 0
	echo "# $(tail -n 1 "$4/err"): again" >&2
	rec "$1" "$2" $(($3 * 2)) "$4" -m 64M' "$UTRACE" "$F" "$UTRACE_BUILD/tests/fast-demo" $N "$TMP"
[ -s "$F" ] || { done_testing; exit; }
size_kb=$(( $(stat -c %s "$F") / 1024 ))
echo "# file: $size_kb KiB"

# rss NAME LIMIT-KIB CMD...: CMD's peak RSS is below LIMIT-KIB
rss() {
	local name=$1 limit=$2 kb
	shift 2
	kb=$(python3 "$RSS" "$@" 2> "$TMP/err") || return 1
	echo "# $name: $kb KiB resident" >&2
	[ "$kb" -lt "$limit" ]
}
limit=$((size_kb / 2))
check "the file is larger than twice the limit" test "$size_kb" -gt 80000
check "script: peak RSS below half the file" rss script $limit "$UTRACE" script -i "$F"
check "report: peak RSS below half the file" rss report $limit "$UTRACE" report -i "$F" --sort event
check "hist: peak RSS below half the file" rss hist $limit \
	"$UTRACE" hist -i "$F" fast:fast_pair "hist:keys=b.log2"
check "convert --format json: peak RSS below half the file" rss json $limit \
	"$UTRACE" convert -i "$F" -o /dev/null --format json

# The same events, read from the mapped file and from a pipe (in memory):
# the pages that went and came back are the file's.
check "script of the file = script of the file through a pipe" bash -c '
	"$0" script -i "$1" | md5sum > "$2/a" && cat "$1" | "$0" script -i /dev/stdin | md5sum > "$2/b" &&
	cmp -s "$2/a" "$2/b"' "$UTRACE" "$F" "$TMP"
done_testing
