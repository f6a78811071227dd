#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/ftrace.sh [BUILD] - what does a traced function call cost (issue 31)?
#
# Counts with callgrind the instructions tests/fgraph-prog runs for
# 'loop N' (N calls of leaf(), built with -fpatchable-function-entry=5),
# at N and 2N calls, so that the difference over N is the cost of one call
# and nothing fixed: bare (five NOPs); with libutrace preloaded and the
# tracer nop; with the function tracer; with function_graph (an entry and
# an exit); and, when uftrace is installed, under `uftrace record -P .`
# (its dynamic patching of the same NOPs), counting the traced program's
# instructions only (its own callgrind file).  Events go to the process's
# own buffer (no recorder).  Instruction counts, not times: repeatable on
# a shared machine.  Writes bench/RESULTS-ftrace.md.
#
# BUILD: a build directory with tests (default: build next to bench/).
# Knob: BENCH_FTRACE_N=20000.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
N=${BENCH_FTRACE_N:-20000}
prog=$build/tests/fgraph-prog
lib=$build/lib/libutrace.so.0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

die() { printf 'bench-ftrace: %s\n' "$*" >&2; exit 1; }
command -v valgrind >/dev/null || die "valgrind is missing"
[ -x "$prog" ] && [ -e "$lib" ] || die "no $prog or $lib: build with tests first"
export UTRACE_RUNTIME_DIR=$out/run UTRACE_CONTROL=0
mkdir -m 700 "$UTRACE_RUNTIME_DIR"

# ir N ENV... : the instructions of 'fgraph-prog loop N' (its own file)
ir() {
	local n=$1 f
	shift
	rm -f "$out"/cg.*
	env "$@" valgrind --tool=callgrind --smc-check=all --trace-children=yes \
		--callgrind-out-file="$out/cg.%p" "${cmd[@]}" "$n" >/dev/null 2>&1 ||
		die "run failed: $* ${cmd[*]} $n"
	for f in "$out"/cg.*; do
		if grep -q "^cmd: *$prog loop" "$f"; then
			sed -n 's/^summary: //p' "$f"
			return
		fi
	done
	die "no callgrind file of $prog"
}

# per N ENV...: instructions per call, (Ir(2N) - Ir(N)) / N
per() {
	local a b
	a=$(ir "$N" "$@")
	b=$(ir $((2 * N)) "$@")
	echo $(((b - a) / N))
}

cmd=("$prog" loop)
bare=$(per UTRACE__NONE=1)
nop=$(per LD_PRELOAD="$lib" UTRACE_TRACER=nop)
fn=$(per LD_PRELOAD="$lib" UTRACE_TRACER=function UTRACE_NO_JUMP_LABEL=0)
fg=$(per LD_PRELOAD="$lib" UTRACE_TRACER=function_graph UTRACE_NO_JUMP_LABEL=0)
uf=-
if command -v uftrace >/dev/null; then
	cmd=(uftrace record -d "$out/uftrace.data" -P . "$prog" loop)
	uf=$(per UTRACE__NONE=1)
fi

{
	echo "# The function tracers' cost per call (bench/ftrace.sh)"
	echo
	echo "Instructions per call of leaf() in tests/fgraph-prog (callgrind, the"
	echo "traced program's own; (Ir(2N) - Ir(N)) / N, N = $N), the loop's own"
	echo "instructions included (the bare row):"
	echo
	echo "| run | instructions per call | over bare |"
	echo "|---|---|---|"
	echo "| bare (-fpatchable-function-entry=5: five NOPs) | $bare | 0 |"
	echo "| libutrace, current_tracer nop | $nop | $((nop - bare)) |"
	echo "| function | $fn | $((fn - bare)) |"
	echo "| function_graph (entry and exit) | $fg | $((fg - bare)) |"
	if [ "$uf" != - ]; then
		echo "| uftrace record -P . (entry and exit) | $uf | $((uf - bare)) |"
	fi
	echo
	echo "$(uname -r), $(valgrind --version), $(uftrace --version 2>/dev/null | head -n 1 || true)"
} > "$here/RESULTS-ftrace.md"
cat "$here/RESULTS-ftrace.md"
