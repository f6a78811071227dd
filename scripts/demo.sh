#!/usr/bin/env bash
# Build utrace and trace the tutorial program: its events, printed as lines
# of the kernel's trace file, then one event's format file.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d build ] || meson setup build > /dev/null
ninja -C build > /dev/null

echo '$ UTRACE_EVENTS="sample-trace:foo_bar,foo_with_template_print,foo_bar_with_cond" UTRACE_PRINT=stderr build/samples/sample'
UTRACE_EVENTS="sample-trace:foo_bar,foo_with_template_print,foo_bar_with_cond" \
UTRACE_PRINT=stderr build/samples/sample
echo
echo '$ build/samples/sample --format foo_bar    # as events/<sys>/<ev>/format reads in tracefs'
build/samples/sample --format foo_bar
