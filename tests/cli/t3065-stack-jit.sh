#!/usr/bin/env bash
# A JIT's frames in a stack (issue 32): stack-demo's jit command calls
# sd_leaf from code it wrote at run time and named in /tmp/perf-PID.map,
# as JITs do for perf; utrace script and report -g name that frame from
# the map (read at report time, as perf report does): jitted_fn+0xoff.
. "$(dirname "$0")/lib.sh"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph fp -o "$TMP/j.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2fp" \
	"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/rec.err" &
r=$!
printf 'jit\nquit\n' > "$TMP/ff"
wait "$r"
pid=$(sed -n 's/^utrace record: started pid \([0-9]*\) .*/\1/p' "$TMP/rec.err")
trap 'rm -rf "$TMP"; [ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"' EXIT
if grep -q "jit failed" "$TMP/out"; then
	skip_all "no executable memory for the JIT's code here"
fi
check "the program wrote its perf map" test -s "/tmp/perf-$pid.map"
check "script: the JIT's frame named from the map, between sd_leaf and its caller" bash -c '
	"$0" script -i "$1" > "$2/s.txt" &&
	grep -A2 "<user stack trace>" "$2/s.txt" | sed -n 2,3p | tr "\n" " " |
	grep -Eq "^ => sd_leaf\+0x[0-9a-f]+/0x[0-9a-f]+  => jitted_fn\+0x15/0x1a $"' \
	"$UTRACE" "$TMP/j.dat" "$TMP"
check "report -g: jitted_fn calls sd_leaf" bash -c '
	"$0" report -g -i "$1" | grep -A1 -- "---sd_leaf" | grep -q "^ *jitted_fn$"' \
	"$UTRACE" "$TMP/j.dat"
rm -f "/tmp/perf-$pid.map"
check "without the map, the frame is its address (the kernel's <...> form)" bash -c '
	"$0" script -i "$1" | grep -A2 "<user stack trace>" | grep -Eq "^ => <[0-9a-f]{16}>$"' \
	"$UTRACE" "$TMP/j.dat"
done_testing
