#!/usr/bin/env bash
# Filters from the start (utrace record --filter, UTRACE_FILTER) and on
# files (utrace script --filter), in the kernel's filter language; and the
# pid that utrace record started.  The sample's demo_request ids count up
# from 0 at its start, so the first recorded id shows whether the filter
# held from the first event.
. "$(dirname "$0")/lib.sh"

ids() { # ids FILE [script options]: the demo_request ids, one a line
	local f=$1
	shift
	"$UTRACE" script -i "$f" -e demo:demo_request "$@" | sed -nE 's/.*demo_request: id=([0-9]+) .*/\1/p'
}

check "record --filter: only the events it passes, from the first one on" bash -c '
	"$0" record -e demo:demo_request --filter "demo:demo_request:id >= 5 && id < 9" \
		-o "$2/a.dat" -- "$1" --run 0.4 > /dev/null 2> "$2/err" &&
	"$0" script -i "$2/a.dat" | sed -nE "s/.*demo_request: id=([0-9]+) .*/\1/p" | tr "\n" " " > "$2/ids" &&
	[ "$(cat "$2/ids")" = "5 6 7 8 " ] &&
	grep -q "^utrace record: 4 events written, 0 lost" "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"

check "record prints the pid it started, the pid of the events in the file" bash -c '
	pid=$(sed -nE "s/^utrace record: started pid ([0-9]+) \(.*sample\)$/\1/p" "$1/err") &&
	[ -n "$pid" ] &&
	"$0" script -i "$1/a.dat" | head -1 | grep -q "sample-$pid "' "$UTRACE" "$TMP"

check "record --filter with a system glob and the event name alone; the last entry wins" bash -c '
	"$0" record --filter "demo:*:common_pid == 0" --filter "demo_request:path == \"/health\"" \
		-o "$2/b.dat" -- "$1" --run 0.3 > /dev/null 2> "$2/err" &&
	"$0" script -i "$2/b.dat" > "$2/b.txt" &&
	! grep -q "demo_tick:" "$2/b.txt" &&
	grep -q "demo_request:" "$2/b.txt" &&
	! grep "demo_request:" "$2/b.txt" | grep -qv "path=/health$"' "$UTRACE" "$SAMPLE" "$TMP"

check "a bad expression: one line with the kernel message and position, the program runs on unfiltered" bash -c '
	"$0" record -e demo:demo_request --filter "demo_request:id >> 5" \
		-o "$2/c.dat" -- "$1" --run 0.2 > /dev/null 2> "$2/err" &&
	grep -qx "utrace: UTRACE_FILTER: bad filter for '\''demo:demo_request'\'': Invalid value (did you forget quotes)? at position 5 of '\''id >> 5'\''; the event is not filtered" "$2/err" &&
	[ "$(grep -c UTRACE_FILTER "$2/err")" = 1 ] &&
	"$0" script -i "$2/c.dat" | head -1 | grep -q "demo_request: id=0 "' "$UTRACE" "$SAMPLE" "$TMP"

check "record --filter without EVENT: refused before anything runs" bash -c '
	"$0" record --filter "id > 5" -o "$2/d.dat" -- "$1" --run 0.1 2> "$2/err"
	[ $? = 129 ] && [ ! -e "$2/d.dat" ] &&
	grep -q "^utrace record: bad filter '\''id > 5'\'': give EVENT:EXPRESSION" "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"

check "record --filter naming no event of the program says so" bash -c '
	"$0" record --filter "demo:nosuch:x == 1" -o "$2/e.dat" -- "$1" --run 0.1 > /dev/null 2> "$2/err" &&
	grep -qx "utrace record: no event matches the filter '\''demo:nosuch:x == 1'\''" "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"

check "UTRACE_FILTER without the recorder: entries ; apart, a ; inside quotes kept" bash -c '
	UTRACE_EVENTS=demo:demo_request,demo:demo_tick UTRACE_PRINT=stderr \
	UTRACE_FILTER="demo_request:path == \"/health\" || path == \"a;b\"; demo:demo_tick: count < 3" \
		"$1" --run 0.3 > /dev/null 2> "$2/err" &&
	[ "$(grep -c "demo_tick:" "$2/err")" = 3 ] &&
	grep -q "demo_request: id=3 .*path=/health$" "$2/err" &&
	! grep "demo_request:" "$2/err" | grep -qv "path=/health$" &&
	! grep -q "^utrace:" "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"

check "UTRACE_FILTER: a malformed entry is said once, the others still apply" bash -c '
	UTRACE_EVENTS=demo:demo_request UTRACE_PRINT=stderr \
	UTRACE_FILTER="bogus; demo_request:id == 2" "$1" --run 0.2 > /dev/null 2> "$2/err" &&
	grep -qx "utrace: UTRACE_FILTER: malformed entry '\''bogus'\'': give EVENT:EXPRESSION" "$2/err" &&
	[ "$(grep -c "demo_request:" "$2/err")" = 1 ] && grep -q "demo_request: id=2 " "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"

check "script --filter on a file: the kernel grammar (ranges, globs, comm)" bash -c '
	"$0" record -o "$2/f.dat" -- "$1" --run 0.5 > /dev/null 2> "$2/err" &&
	"$0" script -i "$2/f.dat" -e demo:demo_request --filter "demo:demo_request:id > 3 && id <= 6" |
		sed -nE "s/.*id=([0-9]+) .*/\1/p" | tr "\n" " " > "$2/ids" &&
	[ "$(cat "$2/ids")" = "4 5 6 " ] &&
	"$0" script -i "$2/f.dat" -e demo_request --filter "demo_request:path ~ \"/api*\" && comm == \"sample\"" > "$2/api" &&
	[ -s "$2/api" ] && ! grep -qv "path=/api/v1/items$" "$2/api"' "$UTRACE" "$SAMPLE" "$TMP"

check "script --filter: events of other names pass" bash -c '
	"$0" script -i "$1/f.dat" --filter "demo_request:id == 1" > "$1/all" &&
	[ "$(grep -c "demo_request:" "$1/all")" = 1 ] && grep -q "demo_tick:" "$1/all"' "$UTRACE" "$TMP"

check "script --filter and record --filter agree" bash -c '
	"$0" record -e demo:demo_request --filter "demo_request:bytes & 1 || id < 2" -o "$2/g.dat" -- "$1" --run 0.5 > /dev/null 2> "$2/err" &&
	"$0" script -i "$2/g.dat" | sed -E "s/^.*demo_request: //" > "$2/rec" &&
	"$0" script -i "$2/g.dat" --filter "demo_request:bytes & 1 || id < 2" | sed -E "s/^.*demo_request: //" > "$2/scr" &&
	[ -s "$2/rec" ] && cmp -s "$2/rec" "$2/scr" &&
	! grep -vE "id=[01] |bytes=[0-9]*[13579] " "$2/rec"' "$UTRACE" "$SAMPLE" "$TMP"

check "script --filter: a bad expression gives the kernel message and a caret, nothing printed" bash -c '
	"$0" script -i "$1/f.dat" --filter "demo_request:id >> 5" > "$1/out" 2> "$1/err"
	[ $? = 1 ] && [ ! -s "$1/out" ] &&
	printf "%s\n" "utrace: bad filter for '\''demo:demo_request'\'': Invalid value (did you forget quotes)?" "  id >> 5" "       ^" | diff -u - "$1/err" >&2' "$UTRACE" "$TMP"

check "script --filter naming no event of the file is an error" bash -c '
	"$0" script -i "$1/f.dat" --filter "nosuch:x == 1" > /dev/null 2> "$1/err"
	[ $? = 1 ] && grep -qx "utrace: no event in '\''$1/f.dat'\'' matches the filter '\''nosuch:x == 1'\''" "$1/err"' "$UTRACE" "$TMP"

check "script --filter .function on a file without symbols: one clear line, status 1" bash -c '
	"$0" script -i "$1/f.dat" --filter "demo_request:id.function == main" > "$1/out" 2> "$1/err"
	[ $? = 1 ] && [ ! -s "$1/out" ] && [ "$(wc -l < "$1/err")" = 1 ] &&
	grep -q "^utrace: .\.function. in the filter for .demo:demo_request. needs the symbols of pid [0-9]*, and .$1/f.dat. has none" "$1/err"' "$UTRACE" "$TMP"

# .function on a recording: its SYMBOL records (pfmt-demo's events print
# %ps, so the recording has them), the static pfmt_worker of the program
# and pfmt_lib_fn of a library dlopen()ed after the start.
DEMO="$UTRACE_BUILD/tests/pfmt-demo"
LIB="$UTRACE_BUILD/tests/libpfmt-lib.so"
"$UTRACE" record -e 'pfmt:*' -o "$TMP/p.dat" -- "$DEMO" 3 "$LIB" > /dev/null 2> "$TMP/p.err" ||
	cat "$TMP/p.err" >&2
sym() { "$UTRACE" script -i "$TMP/p.dat" -e pfmt:pfmt_sym "$@" | sed -nE "s/.*pfmt_sym: fn=([a-z_]+) .*/\1/p" | tr "\n" " "; }
export -f sym
export UTRACE TMP DEMO
check "script --filter 'fn.function == NAME': a static function of the program" bash -c '
	[ "$(sym --filter "pfmt_sym:fn.function == pfmt_worker")" = "pfmt_worker pfmt_worker pfmt_worker " ]'
check "script --filter 'fn.function != NAME', and a library loaded later" bash -c '
	[ "$(sym --filter "pfmt_sym:fn.function != pfmt_worker")" = "pfmt_lib_fn " ] &&
	[ "$(sym --filter "pfmt_sym:caller.function == pfmt_lib_fn")" = "pfmt_lib_fn " ]'
check "script --filter '.function == ADDRESS': any address inside the function" bash -c '
	a=$("$UTRACE" script -i "$TMP/p.dat" -e pfmt:pfmt_sym --fields | sed -nE "s/.*fn=([0-9]+) .*/\1/p" | head -n 1) &&
	[ -n "$a" ] &&
	[ "$(sym --filter "pfmt_sym:fn.function == $(( a + 3 ))")" = "pfmt_worker pfmt_worker pfmt_worker " ]'
check "script --filter '.function': an unknown name and a bad operator, with a caret" bash -c '
	"$UTRACE" script -i "$TMP/p.dat" --filter "pfmt_sym:fn.function == nosuch" > "$TMP/out" 2> "$TMP/err"
	[ $? = 1 ] && [ ! -s "$TMP/out" ] &&
	printf "%s\n" "utrace: bad filter for '\''pfmt:pfmt_sym'\'': Function not found" "  fn.function == nosuch" "                        ^" | diff -u - "$TMP/err" >&2 &&
	"$UTRACE" script -i "$TMP/p.dat" --filter "pfmt_sym:fn.function > main" > /dev/null 2> "$TMP/err"
	[ $? = 1 ] && grep -q "Invalid operator" "$TMP/err"'
check "record --filter '.function' works in the traced process (its own symbols)" bash -c '
	"$UTRACE" record -e pfmt:pfmt_sym --filter "pfmt_sym:fn.function == pfmt_worker" \
		-o "$TMP/q.dat" -- "$DEMO" 2 > /dev/null 2>&1 &&
	[ "$("$UTRACE" script -i "$TMP/q.dat" | grep -c "fn=pfmt_worker")" = 2 ]'

done_testing
