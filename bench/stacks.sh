#!/usr/bin/env bash
# The cost of record -g (issue 32): instructions (valgrind's callgrind,
# repeatable, unlike times) per recorded event of tests/cli/stack-demo.c
# fired at the bottom of 16 frames (its "deep N 16" command, -O2 with
# frame pointers), recorded by utrace record without a stack, with
# --call-graph fp and with --call-graph dwarf.  Per event: the
# difference between a run of N events and a run of none, over N.
#
#   bench/stacks.sh BUILD-DIR [N]      (default N 20000)
set -eu
B=$(cd "${1:?usage: bench/stacks.sh BUILD-DIR [N]}" && pwd)
N=${2:-20000}
U=$B/tools/utrace/utrace
P=$B/tests/stack-demo-O2fp
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export UTRACE_RUNTIME_DIR=$T/run
mkdir -m 700 "$UTRACE_RUNTIME_DIR"

# ir OPTS N: the program's instructions for N events
ir() {
	rm -f "$T/ff" "$T/cg"
	mkfifo "$T/ff"
	# shellcheck disable=SC2086
	"$U" record $1 -o "$T/x.dat" -- valgrind --tool=callgrind --smc-check=all \
		--callgrind-out-file="$T/cg" "$P" "$T/ff" "$T/out" "$B/tests/libstack-dl.so" \
		> /dev/null 2>&1 &
	printf 'deep %s 16\nquit\n' "$2" > "$T/ff"
	wait $!
	awk '/^summary:/ { print $2 }' "$T/cg"
}

per_event() {
	local a b
	a=$(ir "$1" 0)
	b=$(ir "$1" "$N")
	echo $(( (b - a) / N ))
}
plain=$(per_event "")
fp=$(per_event "--call-graph fp")
dw=$(per_event "--call-graph dwarf")
echo "instructions per event, 16 frames deep ($N events, callgrind):"
echo "  no stack:            $plain"
echo "  --call-graph fp:     $fp  ($(awk "BEGIN { printf \"%.2f\", $fp / $plain }")x)"
echo "  --call-graph dwarf:  $dw  ($(awk "BEGIN { printf \"%.2f\", $dw / $plain }")x," \
     "$(awk "BEGIN { printf \"%.0f\", ($dw - $plain) / 18 }") a frame)"
