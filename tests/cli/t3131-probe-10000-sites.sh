#!/usr/bin/env bash
# Issue 30 item 3: 10,000 sites placed in one round of patching (one int3
# round and one membarrier for all, as the jump labels: the engine's
# utrace__probe_attach_many()) and removed the same way, on a running
# program of 10,000 generated functions whose every result is checked
# before, during and after.  No time is asserted (a loaded machine): the
# times are said, and docs/design-notes.md has the measured ones.
. "$(dirname "$0")/lib.sh"
N=10000
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler ($CC)"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
cd "$TMP" || exit 1
"$UTRACE_SRC/tests/cli/many-funcs-gen.sh" $N prog.c
# -O0: each entry a push %rbp, so each jump covers several instructions
# (the round waits until no thread is inside any of them)
nice "$CC" -O0 -o prog prog.c || skip_all "the generated program does not compile"
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./prog -1 > run.txt 2> prog-err.txt &
PID=$!
trap 'kill $PID 2> /dev/null; rm -rf "$TMP"' EXIT
wait_traceable "$PID" prog-err.txt > "$TMP/err" 2>&1
now() { date +%s.%N; }
check "one glob: $N definitions in one event" bash -c '
	"$UTRACE" probe -p "$1" "p:big/f fn_*" 2> "$TMP/err" &&
	grep -q "'"$N"' definitions added" "$TMP/err"' _ "$PID"
t0=$(now)
check "all $N sites placed by one enable" "$UTRACE" enable -p "$PID" big:f
t1=$(now)
echo "# placed in $(awk -v a="$t0" -v b="$t1" "BEGIN { printf \"%.2f\", b - a }") s (wall time of utrace enable)"
"$UTRACE" probe -p "$PID" -l -v > lv.txt 2> "$TMP/err"
check "every site placed" bash -c '
	n=$(sed -n "s/^# sites: [0-9]* of \([0-9]*\) placed.*/\1/p" lv.txt)
	[ "$n" = '"$N"' ] && ! grep -q "not placed" lv.txt'
hit_all() {
	"$UTRACE" probe -p "$1" --profile > prof.txt 2> "$TMP/err" &&
	[ "$(awk '$2 == "f" && $3 > 0' prof.txt | wc -l)" = "$N" ]
}
check "every site hit" wait_for hit_all "$PID"
t0=$(now)
check "all off by one disable" "$UTRACE" disable -p "$PID" big:f
t1=$(now)
echo "# removed in $(awk -v a="$t0" -v b="$t1" "BEGIN { printf \"%.2f\", b - a }") s (wall time of utrace disable)"
check "every site removed" bash -c '
	"$UTRACE" probe -p "$1" -l -v > lv2.txt 2> "$TMP/err" &&
	[ "$(grep -c "not placed (the event is off)" lv2.txt)" = '"$N"' ]' _ "$PID"
# two more rounds after the removal, then every round's sum is checked
rounds_after() { [ "$(wc -l < run.txt)" -ge "$1" ]; }
r=$(wc -l < run.txt)
check "the program runs on" wait_for rounds_after $((r + 2))
kill "$PID"
check "every round's result right, before, during and after" bash -c '
	awk -v n='"$N"' "NF != 2 || \$2 != \$1 * n * (n + 1) / 2 + n { bad++ } END { exit bad || NR < 3 }" run.txt'
done_testing
