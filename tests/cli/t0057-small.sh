#!/usr/bin/env bash
# Small ones of issue 27 item 9: `utrace pipe | head` ends with head; top
# shows the events of a library loaded after it attached; ps after a top
# session answers in every column, also beside busy loops.  (A read of the
# mount that never answers ENODEV for a busy process: t0055.)
. "$(dirname "$0")/lib.sh"

DEMO="$UTRACE_BUILD/tests/stall-demo"
LIB="$UTRACE_BUILD/tests/libstall-lib.so"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$TMP/run"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; rm -rf "$TMP"' EXIT

"$SAMPLE" --run 0 > /dev/null 2> "$TMP/sample.err" &
P=$!
pids+=("$P")
wait_traceable "$P" "$TMP/sample.err"
"$UTRACE" enable -p "$P" "demo:*"

check "utrace pipe | head -4: pipe ends with head, quietly" bash -c '
	s=$(date +%s%N)
	timeout 30 bash -c "\"\$0\" pipe -p \$1 2> \"\$2/pipe.err\" | head -4 > \"\$2/pipe.out\"" \
		"$0" "$1" "$2"; st=$?
	e=$(( ($(date +%s%N) - s) / 1000000 ))
	echo "# exit $st after $e ms; stderr: $(wc -l < "$2/pipe.err") lines" >&2
	head -3 "$2/pipe.err" >&2
	[ $st = 0 ] && [ "$(wc -l < "$2/pipe.out")" = 4 ] && [ ! -s "$2/pipe.err" ]' \
	"$UTRACE" "$P" "$TMP"

# A program whose events come with a library it loads after top attached
# (a server starting): top switches them on as they register.
D="$TMP/late"
mkdir "$D"
"$DEMO" "$LIB" "$D" > /dev/null 2> "$TMP/late.err" &
L=$!
pids+=("$L")
wait_for [ -e "$D/ready" ]
wait_traceable "$L" "$TMP/late.err"
"$UTRACE" top -p "$L" -n 12 -d 0.5 --stdio > "$TMP/top.out" 2> "$TMP/top.err" &
T=$!
pids+=("$T")
# top has switched the events on (its first snapshot comes after that)
wait_for grep -q "UtraceTop:" "$TMP/top.out"
touch "$D/again" "$D/go"
wait_for [ -e "$D/took" ]
touch "$D/end"
wait "$T"
touch "$D/stop"
wait "$L"
check "top shows the events of a library loaded after it attached" bash -c '
	cat "$0/top.err" >&2; grep -c "stall:stall_" "$0/top.out" >&2
	grep -q "stall:stall_" "$0/top.out"' "$TMP"

# ps right after top sessions, two busy loops beside
loops=()
for k in 1 2; do
	( exec timeout 120 sh -c 'while :; do :; done' ) &
	loops+=($!)
done
pids+=("${loops[@]}")
bad=0
for i in 1 2 3 4 5; do
	"$UTRACE" top -p "$P" -n 1 -d 0.2 --stdio > /dev/null 2>> "$TMP/top2.err"
	"$UTRACE" ps > "$TMP/ps.$i" 2>> "$TMP/ps.err"
	grep -qE "^ *$P sample .*\?" "$TMP/ps.$i" && bad=$((bad + 1))
done
kill "${loops[@]}" 2> /dev/null
check "ps right after a top session, beside two busy loops: no '?' (5 times)" bash -c '
	[ "$0" = 0 ] || cat "$1"/ps.* >&2; [ "$0" = 0 ]' "$bad" "$TMP"

done_testing
