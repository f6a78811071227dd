#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/probe.sh - what does a dynamic probe hit cost (issue 12)?
#
# Builds bench/bench-probe (bench/meson.build) in bench/out/build, as
# bench/run.sh does, times a function called in a loop bare, with a probe
# placed as a jump (empty handler; a handler reading two register
# arguments), with a probe placed as a breakpoint, and with the kernel's
# uprobe (root, tracefs: a private instance), in the thread's CPU time;
# then, under `utrace record`, a probe event recording two register
# arguments next to a static two-field event (bench_ev) of the same run;
# counts with callgrind the instructions a jump hit runs (trampoline,
# dispatcher, handler); writes bench/RESULTS-probe.md.  About a minute.
#
# Knobs: BENCH_PROBE_N=20000000 calls per timed run, BENCH_PROBE_RUNS=5
# runs (the best is kept), BENCH_PROBE_CG_N=100000 calls under callgrind,
# BENCH_PROBE_REC_N=1000000 calls per recorded run (each event is written
# to the trace file, removed at the end).
set -euo pipefail

N=${BENCH_PROBE_N:-20000000} RUNS=${BENCH_PROBE_RUNS:-5} CG_N=${BENCH_PROBE_CG_N:-100000}
REC_N=${BENCH_PROBE_REC_N:-1000000}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$here/out build=$here/out/build

die() { printf 'bench-probe: %s\n' "$*" >&2; exit 1; }
say() { printf 'bench-probe: %s\n' "$*" >&2; }

for tool in meson ninja valgrind callgrind_annotate; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
mkdir -p "$out"
# the build directory of bench/run.sh, shared with it
[ -f "$build/build.ninja" ] ||
	meson setup "$build" "$here/.." -Dbench=true -Dtests=false \
		>"$out/meson-setup.log" 2>&1 ||
	die "meson setup failed (see $out/meson-setup.log)"
meson configure "$build" -Dbench=true -Dtests=false >/dev/null
ninja -C "$build" bench/bench-probe tools/utrace/utrace >"$out/ninja-probe.log" 2>&1 ||
	die "build failed (see $out/ninja-probe.log)"
bin=$build/bench/bench-probe
utrace=$build/tools/utrace/utrace
# a runtime directory of its own, as bench/run.sh: the machine is shared,
# and another session's utrace (a mount, a control test) could otherwise
# reach this process and send its events through the library's slow path
export UTRACE_RUNTIME_DIR=$out/run
mkdir -p "$UTRACE_RUNTIME_DIR"
chmod 700 "$UTRACE_RUNTIME_DIR"
# the probe event of the recorded case: two register arguments
probe_def="p:grp/add probed a=%di:s32 b=%si:s32"
# (UTRACE_PROBES, not --probe: bench-probe has libutrace linked in, and
# --probe would preload a second copy, which places its own probe: two
# hits a call)
rec() { # recorded under utrace record, the probe on probed()
	UTRACE_PROBES="$probe_def" "$utrace" record -o "$out/probe-rec.dat" -- "$@" \
		2>"$out/probe-rec.log"
}

say "timing ($N calls, best of $RUNS)"
times=$("$bin" "$N" "$RUNS")
echo "$times" >&2
say "recorded: a probe event next to a static one ($REC_N calls, best of $RUNS)"
rtimes=$(rec "$bin" "$REC_N" "$RUNS" record) ||
	{ cat "$out/probe-rec.log" >&2; die "the recorded case failed"; }
echo "$rtimes" >&2

say "callgrind ($CG_N calls)"
cg=$out/probe.cg
cg_ir() { # CASE AWK-REGEX: instructions of the matching functions per call
	valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$cg" \
		"$bin" "$CG_N" 1 "$1" >/dev/null 2>"$out/probe-cg.log" ||
		{ cat "$out/probe-cg.log" >&2; die "callgrind failed"; }
	callgrind_annotate --auto=no "$cg" 2>/dev/null | awk -v n="$CG_N" -v re="$2" '
		$0 ~ re { gsub(",", "", $1); s += $1 }
		END { printf "%.1f", s / n }'
}
# the bare run calls target() N times; the jump run N times bare, then N
# times probed: target (the part left of it), the trampoline (no
# symbol: ???:0x...), the dispatcher and the handler
bare_ir=$(cg_ir bare "bench-probe.c:target")
jump_ir=$(cg_ir jump "bench-probe.c:target|[?][?][?]:0x|utrace__probe_dispatch|bench-probe.c:empty ")
hit_ir=$(awk -v j="$jump_ir" -v b="$bare_ir" 'BEGIN { printf "%.1f", j - 2 * b }')
# the recorded case: the static event's inlined iterator and writer; the
# probe event's hit (trampoline, dispatcher, handler, fetch, writer)
rec_cg() { # AWK-REGEX
	rec valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$cg" \
		"$bin" "$CG_N" 1 record >/dev/null ||
		{ cat "$out/probe-rec.log" >&2; die "callgrind (recorded) failed"; }
	callgrind_annotate --auto=no "$cg" 2>/dev/null | awk -v n="$CG_N" -v re="$1" '
		$0 ~ re { gsub(",", "", $1); s += $1 }
		END { printf "%.1f", s / n }'
}
static_ir=$(rec_cg "__traceiter_bench_ev")
probe_rec_ir=$(rec_cg "bench-probe.c:probed|[?][?][?]:0x|utrace__probe_dispatch|uprobes.c:|:on_hit|:record|fetch.c:|writer.c:utrace_tp|sched_getcpu|clock.h:utrace_tp")
probe_rec_ir=$(awk -v j="$probe_rec_ir" -v b="$bare_ir" 'BEGIN { printf "%.1f", j - b }')

val() { printf '%s\n' "$times" "$rtimes" | awk -v k="$1" '$1 == k { print $2; exit }'; }
add() { printf '%s\n' "$times" "$rtimes" | awk -v k="$1" '$1 == k { gsub("[(+)]", "", $3); print $3; exit }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.0f", a / b; else print "-" }'; }

kernel_add=$(add kernel)
jump_add=$(add jump)
{
	echo "# Dynamic probes: the cost of a hit (bench/probe.sh)"
	echo
	echo "Generated by \`bench/probe.sh\` on $(date -u +%Y-%m-%d) ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))."
	echo "ns: the calling thread's CPU time per call (CLOCK_THREAD_CPUTIME_ID, which"
	echo "counts the kernel's time too), best of $RUNS runs of $N calls (the"
	echo "breakpoint and kernel cases: N/100). Instructions: callgrind."
	echo
	echo "| case | ns per call | added by the probe | instructions added |"
	echo "|---|---|---|---|"
	echo "| bare call of target() | $(val bare) | - | ($bare_ir in target) |"
	echo "| probe as a jump, empty handler | $(val jump) | +$jump_add | +$hit_ir |"
	echo "| probe as a jump, handler reads %di %si | $(val jump2) | +$(add jump2) | |"
	echo "| probe as a jump saving the SIMD state (XSAVEC), empty handler | $(val jump-simd) | +$(add jump-simd) | |"
	echo "| bare call of tiny() (4 bytes) | $(val bare-tiny) | - | |"
	echo "| probe as a breakpoint (int3), empty handler | $(val int3) | +$(add int3) | |"
	echo "| the kernel's uprobe on target() | $(val kernel) | +${kernel_add:--} | |"
	echo
	echo "Recorded (\`utrace record\`), in one run, in turns ($REC_N calls each, best"
	echo "of $RUNS): the static two-field event bench_ev (the inlined writer) and"
	echo "the probe event \`$probe_def\` (a hit and its record), each next to"
	echo "the bare call:"
	echo
	echo "| case | ns per call | added | instructions added |"
	echo "|---|---|---|---|"
	echo "| static event bench_ev, recorded | $(echo "$rtimes" | awk '$1 == "static" { print $2 }') | +$(add static) | +$static_ir |"
	echo "| probe event, two register arguments, recorded | $(val probe-rec) | +$(add probe-rec) | +$probe_rec_ir |"
	echo
	echo "The kernel's uprobe costs $(ratio "${kernel_add:-0}" "$jump_add") times a jump probe's hit."
} >"$here/RESULTS-probe.md"
rm -f "$out/probe-rec.dat"
say "wrote $here/RESULTS-probe.md"
