#!/usr/bin/env bash
# Build utrace and trace the tutorial program three ways: printing its
# events as it runs, recording them into a trace file and printing the file,
# and showing one event's format file.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d build ] || meson setup build > /dev/null
ninja -C build > /dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() {
	echo "\$ $*"
	"$@"
	echo
}

echo '$ UTRACE_EVENTS="sample-trace:foo_bar,foo_with_template_print" UTRACE_PRINT=stderr build/samples/sample'
UTRACE_EVENTS="sample-trace:foo_bar,foo_with_template_print" UTRACE_PRINT=stderr build/samples/sample
echo
run build/tools/utrace/utrace record -e 'sample-trace:*' -o "$tmp/sample.dat" -- build/samples/sample
run build/tools/utrace/utrace script -i "$tmp/sample.dat" -e foo_bar_with_cond -e foo_with_template_print
run build/samples/sample --format foo_bar

# A running program, controlled from outside as the kernel's tracefs files
# would be: list its events, switch two on, filter one, read its buffer.
build/samples/sample --run 3 > /dev/null &
pid=$!
for _ in $(seq 100); do
	build/tools/utrace/utrace list -p "$pid" > /dev/null 2>&1 && break
	sleep 0.05
done
run build/tools/utrace/utrace ps
echo "\$ build/tools/utrace/utrace enable -p $pid 'demo:*'"
build/tools/utrace/utrace enable -p "$pid" 'demo:*'
echo
echo "\$ build/tools/utrace/utrace filter -p $pid demo_tick 'prio == 125 && stage ~ \"b*\"'"
build/tools/utrace/utrace filter -p "$pid" demo_tick 'prio == 125 && stage ~ "b*"'
echo
sleep 0.5
echo "\$ build/tools/utrace/utrace show -p $pid | tail -4"
build/tools/utrace/utrace show -p "$pid" | tail -4
echo
echo "\$ build/tools/utrace/utrace filter -p $pid demo_tick 'prio > abc'"
build/tools/utrace/utrace filter -p "$pid" demo_tick 'prio > abc' || true
kill "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true
