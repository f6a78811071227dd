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
