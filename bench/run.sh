#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/run.sh - what does a utrace call site cost, next to LTTng-UST?
#
# Builds libutrace and the benchmark programs (bench/meson.build) in
# bench/out/build, counts instructions per call with callgrind, times
# 100M-call loops, disassembles the loops, and writes bench/RESULTS.md.
# Takes about two minutes.  Needs meson, ninja, a C compiler, valgrind,
# objdump, python3 and liblttng-ust-dev; clang and lttng-tools are used
# when present.
#
# Knobs (environment):
#   BENCH_N=100000000        iterations of each timed run
#   BENCH_RUNS=5             timed runs of each case
#   BENCH_CG_N=1000000       iterations under callgrind
#   BENCH_LTTNG_ON_N=10000000, BENCH_LTTNG_ON_RUNS=5, BENCH_LTTNG_ON_CG_N=100000
#                            the same for LTTng switched on (much slower)
#   BENCH_NO_LTTNG_ON=1      do not start lttng-sessiond
#   CC, CLANG                compilers (default cc, clang)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
out=$here/out
build=$out/build

N=${BENCH_N:-100000000}
RUNS=${BENCH_RUNS:-5}
CG_N=${BENCH_CG_N:-1000000}
LTTNG_ON_N=${BENCH_LTTNG_ON_N:-10000000}
LTTNG_ON_RUNS=${BENCH_LTTNG_ON_RUNS:-5}
LTTNG_ON_CG_N=${BENCH_LTTNG_ON_CG_N:-100000}
CC=${CC:-cc}
CLANG=${CLANG:-clang}
PYTHON=${PYTHON:-python3}

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

for tool in meson ninja valgrind objdump "$PYTHON" pkg-config; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
pkg-config --exists lttng-ust || die "liblttng-ust-dev is missing"

# Nothing may switch the events on behind our back.
unset UTRACE_EVENTS UTRACE_PRINT

start=$(date +%s)
mkdir -p "$out"
rm -rf "$out/data"
mkdir -p "$out/data" "$out/data/cg" "$out/data/disasm"
data=$out/data

# ---------------------------------------------------------------- build
say "building in $build"
if [ -f "$build/build.ninja" ]; then
	meson configure "$build" -Dbench=true -Dtests=false >/dev/null
else
	meson setup "$build" "$top" -Dbench=true -Dtests=false \
		>"$out/meson-setup.log" 2>&1 ||
		{ cat "$out/meson-setup.log" >&2; die "meson setup failed"; }
fi
ninja -C "$build" bench/bench-utrace bench/bench-utrace-disabled \
	bench/bench-lttng >"$out/ninja.log" 2>&1 ||
	{ cat "$out/ninja.log" >&2; die "build failed"; }

# label:binary pairs; every binary answers 'cases', 'time' and 'count'.
bins=(
	"utrace:$build/bench/bench-utrace"
	"utrace-disabled:$build/bench/bench-utrace-disabled"
	"lttng:$build/bench/bench-lttng"
)

# The call site compiled by clang as well.  The file with
# CREATE_TRACE_POINTS is compiled by clang if it can be, else by cc.
common=(-O2 -g -std=c17 -D_GNU_SOURCE -DBENCH_UTRACE
	-I"$top/include" -I"$top/include/utrace/compat" -I"$here")
: >"$data/clang.txt"
if command -v "$CLANG" >/dev/null; then
	clang_out=$out/clang
	mkdir -p "$clang_out"
	if "$CLANG" "${common[@]}" -c "$here/bench-events.c" \
		-o "$clang_out/bench-events.o" 2>"$data/clang-events.log"; then
		echo "events_cc clang" >>"$data/clang.txt"
	else
		echo "events_cc cc" >>"$data/clang.txt"
		"$CC" "${common[@]}" -c "$here/bench-events.c" \
			-o "$clang_out/bench-events.o"
	fi
	if "$CLANG" "${common[@]}" -Wall -Wextra -c "$here/bench.c" \
		-o "$clang_out/bench.o" 2>"$data/clang-bench.log" &&
	   "$CLANG" -o "$clang_out/bench-utrace-clang" "$clang_out/bench.o" \
		"$clang_out/bench-events.o" -L"$build/lib" \
		-Wl,-rpath,"$build/lib" -lutrace -lurcu-bp -lpthread \
		2>>"$data/clang-bench.log"; then
		bins+=("utrace-clang:$clang_out/bench-utrace-clang")
		echo "built yes" >>"$data/clang.txt"
	else
		echo "built no" >>"$data/clang.txt"
		say "clang build failed, see $data/clang-bench.log"
	fi
fi

# ---------------------------------------------------------- disassembly
for lb in "${bins[@]}"; do
	label=${lb%%:*} bin=${lb#*:}
	for fn in bench_loop_empty bench_loop_flag bench_loop_trace; do
		objdump -d --no-show-raw-insn --disassemble="$fn" "$bin" |
			sed -n "/^[0-9a-f]* <$fn>:/,/^\$/p" \
			>"$data/disasm/$label.$fn.txt"
	done
done

# ------------------------------------------------------------ callgrind
# Instructions of one loop function and all it calls (--toggle-collect),
# run N times; bench.py subtracts the empty loop of the same binary.
loop_fn() {
	case $1 in
	empty) echo bench_loop_empty ;;
	flag) echo bench_loop_flag ;;
	*) echo bench_loop_trace ;;
	esac
}

count() { # label bin case n
	local label=$1 bin=$2 c=$3 n=$4 fn f
	fn=$(loop_fn "$c")
	f=$data/cg/$label.$c.out
	if valgrind --tool=callgrind --callgrind-out-file="$f" \
		--collect-atstart=no --toggle-collect="$fn" \
		"$bin" count "$n" "$c" >"$f.log" 2>&1; then
		echo "COUNT $label $c $n $(awk '/^(summary|totals):/ { print $2; exit }' "$f")" \
			>>"$data/counts.txt"
	else
		say "callgrind of $label $c failed, see $f.log"
	fi
}

say "counting instructions with callgrind (N=$CG_N)"
: >"$data/counts.txt"
for lb in "${bins[@]}"; do
	label=${lb%%:*} bin=${lb#*:}
	for c in $("$bin" cases); do
		[ "$c" = lttng_on ] && continue
		count "$label" "$bin" "$c" "$CG_N"
	done
done

# --------------------------------------------------------------- timing
say "timing: $RUNS runs of $N iterations per case"
: >"$data/times.txt"
for ((r = 0; r < RUNS; r++)); do
	for lb in "${bins[@]}"; do
		label=${lb%%:*} bin=${lb#*:}
		cases=()
		for c in $("$bin" cases); do
			[ "$c" = lttng_on ] || cases+=("$c")
		done
		"$bin" time "$N" 1 "${cases[@]}" |
			sed "s/^TIME /TIME $label /; s/ 0 \([0-9]* [0-9]*\)\$/ $r \1/" \
			>>"$data/times.txt"
	done
done

# ------------------------------------------------------ LTTng switched on
# A session daemon of our own (unless one runs already), a snapshot
# (flight-recorder) session so that nothing is written to disk, one
# per-user buffer channel with the default sizes.
lttng_bin=$build/bench/bench-lttng
session=utrace-bench-$$
sessiond_pid=
session_made=
status_file=$data/lttng-on.txt
: >"$status_file"

lttng_cleanup() {
	if [ -n "$session_made" ]; then
		lttng destroy "$session" >/dev/null 2>&1 || true
		session_made=
	fi
	if [ -n "$sessiond_pid" ]; then
		kill "$sessiond_pid" 2>/dev/null || true
		wait "$sessiond_pid" 2>/dev/null || true
		sessiond_pid=
	fi
}
trap lttng_cleanup EXIT

lttng_on() {
	if [ -n "${BENCH_NO_LTTNG_ON:-}" ]; then
		echo "status skipped (BENCH_NO_LTTNG_ON set)" >>"$status_file"
		return
	fi
	if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null; then
		echo "status unavailable (lttng-tools is not installed)" >>"$status_file"
		return
	fi
	if lttng list >/dev/null 2>&1; then
		echo "sessiond existing" >>"$status_file"
	else
		lttng-sessiond --no-kernel >"$data/lttng-sessiond.log" 2>&1 &
		sessiond_pid=$!
		echo "sessiond started" >>"$status_file"
		local i
		for ((i = 0; i < 100; i++)); do
			lttng list >/dev/null 2>&1 && break
			kill -0 "$sessiond_pid" 2>/dev/null || break
			sleep 0.1
		done
		if ! lttng list >/dev/null 2>&1; then
			echo "status unavailable (lttng-sessiond did not start: $(tail -n 1 "$data/lttng-sessiond.log"))" \
				>>"$status_file"
			return
		fi
	fi
	if ! { lttng create "$session" --snapshot -o "$out/lttng-snapshot" &&
	       session_made=1 &&
	       lttng enable-event -u -s "$session" bench:bench_ev &&
	       lttng start "$session"; } >"$data/lttng-session.log" 2>&1; then
		echo "status unavailable (could not set up a session, see $data/lttng-session.log)" \
			>>"$status_file"
		return
	fi
	say "timing LTTng switched on: $LTTNG_ON_RUNS runs of $LTTNG_ON_N iterations"
	if ! "$lttng_bin" time "$LTTNG_ON_N" "$LTTNG_ON_RUNS" lttng_on 2>"$data/lttng-on.log" |
		sed "s/^TIME /TIME lttng /" >>"$data/times.txt"; then
		echo "status unavailable (the event did not switch on, see $data/lttng-on.log)" \
			>>"$status_file"
		return
	fi
	if ! grep -q '^TIME lttng lttng_on ' "$data/times.txt"; then
		echo "status unavailable (the event did not switch on, see $data/lttng-on.log)" \
			>>"$status_file"
		return
	fi
	say "counting LTTng switched on with callgrind (N=$LTTNG_ON_CG_N)"
	count lttng "$lttng_bin" lttng_on "$LTTNG_ON_CG_N"
	lttng list "$session" >"$data/lttng-session-list.txt" 2>&1 || true
	echo "status ok" >>"$status_file"
}
lttng_on
lttng_cleanup

# --------------------------------------------------------------- report
end=$(date +%s)
{
	echo "seconds $((end - start))"
	echo "n $N"
	echo "runs $RUNS"
	echo "cg_n $CG_N"
	echo "lttng_on_n $LTTNG_ON_N"
	echo "lttng_on_runs $LTTNG_ON_RUNS"
	echo "lttng_on_cg_n $LTTNG_ON_CG_N"
	echo "cc $CC"
	echo "clang $CLANG"
} >"$data/params.txt"
"$PYTHON" "$here/report.py" "$data" "$here/RESULTS.md" "$top" "$build"
say "wrote $here/RESULTS.md"
