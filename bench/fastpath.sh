#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/fastpath.sh - the recorded event's fast path, before and after.
#
# Builds two trees side by side: BENCH_BASE (a commit, default the
# merge-base with main; "none" to skip it) exported with `git archive`,
# and the work tree, each with its bench programs (bench/meson.build), and
# measures in one run, round-robin, on the same machine state:
#
#   - the two-integer event (bench_ev) and the string event (bench_str: a
#     u32 and a path of 7 to 28 bytes) under `utrace record` (1 thread,
#     default buffer), ns/event and bytes/event on disk;
#   - the same events written with no recorder (UTRACE_EVENTS, own buffer,
#     overwrite): the writer alone;
#   - the raw store of each (bench-record-raw, BENCH_EV=str for strings);
#   - LTTng-UST, a session to disk, each event (when lttng-sessiond runs
#     or can be started);
#   - the raw store's calibration: with 16..64 independent one-cycle
#     instructions added to each event, and without its rdtsc (what an
#     instruction beside rdtsc costs, and what the 1.15x target allows);
#   - instructions per event with callgrind, under `utrace record`.
#
# Writes bench/out/fastpath/fastpath.md and puts it into bench/RESULTS.md
# between the "fastpath" markers (appended the first time).
#
# Knobs: BENCH_BASE, BENCH_FP_N=10000000 (events per run), BENCH_FP_RUNS=5,
# BENCH_FP_CG_N=100000, BENCH_NO_LTTNG_ON=1.
set -euo pipefail
# callgrind with rewritten jump-label sites (see run.sh)
export UTRACE_NO_JUMP_LABEL=0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
out=$here/out/fastpath
N=${BENCH_FP_N:-10000000}
RUNS=${BENCH_FP_RUNS:-5}
CG_N=${BENCH_FP_CG_N:-100000}
base=${BENCH_BASE:-$(git -C "$top" merge-base HEAD main 2>/dev/null || echo none)}

say() { printf 'fastpath: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
unset UTRACE_EVENTS UTRACE_PRINT

mkdir -p "$out"
data=$out/data
rm -rf "$data"
mkdir -p "$data"

build_tree() { # src build
	if [ ! -f "$2/build.ninja" ]; then
		meson setup "$2" "$1" -Dbench=true -Dtests=false >"$2.setup.log" 2>&1 ||
			{ cat "$2.setup.log" >&2; die "meson setup of $1 failed"; }
	fi
	nice ninja -C "$2" bench/bench-record-utrace bench/bench-record-lttng \
		bench/bench-record-raw tools/utrace/utrace >"$2.ninja.log" 2>&1 ||
		{ cat "$2.ninja.log" >&2; die "build of $1 failed"; }
}

trees=(new)
build_tree "$top" "$out/build-new"
if [ "$base" != none ]; then
	# The base's library and tool, with this tree's bench programs (the
	# string event did not exist before).
	rm -rf "$out/src-base"
	mkdir -p "$out/src-base"
	git -C "$top" archive "$base" | tar -x -C "$out/src-base"
	cp "$here"/bench-record.c "$here"/bench-events.h "$here"/bench-lttng-tp.h \
		"$out/src-base/bench/"
	rm -rf "$out/build-base"
	build_tree "$out/src-base" "$out/build-base"
	trees=(base new)
fi

# LTTng: a session daemon of our own if none runs.
lttng_ok=
sessiond_pid=
if [ -z "${BENCH_NO_LTTNG_ON:-}" ] && command -v lttng >/dev/null &&
	command -v lttng-sessiond >/dev/null; then
	if ! lttng list >/dev/null 2>&1; then
		lttng-sessiond --no-kernel >"$data/sessiond.log" 2>&1 &
		sessiond_pid=$!
		for _ in $(seq 100); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
	fi
	lttng list >/dev/null 2>&1 && lttng_ok=1
fi
cleanup() {
	[ -n "$sessiond_pid" ] && kill "$sessiond_pid" 2>/dev/null || true
}
trap cleanup EXIT

# RESULT tree case ev run ns bytes_per_event lost
rec_utrace() { # tree ev run
	local b=$out/build-$1 f=$data/$1-$2.dat line
	rm -f "$f"
	BENCH_EV=$2 BENCH_PIN=$(($3 % 2)) "$b/tools/utrace/utrace" record -o "$f" -- \
		"$b/bench/bench-record-utrace" run "$N" 1 >"$data/out" 2>"$data/err" ||
		{ say "utrace record ($1 $2) failed"; cat "$data/err" >&2; return 0; }
	line=$(grep -E '^utrace record: [0-9]+ events written' "$data/err" | tail -n 1)
	local w l
	w=$(echo "$line" | sed -E 's/^utrace record: ([0-9]+) events written, ([0-9]+) lost.*/\1/')
	l=$(echo "$line" | sed -E 's/^utrace record: ([0-9]+) events written, ([0-9]+) lost.*/\2/')
	echo "RESULT $1 record $2 $3 $(awk '{print $4/$3}' "$data/out") \
$(awk -v s="$(stat -c %s "$f")" -v w="$w" 'BEGIN{print s/w}') $l" >>"$data/results.txt"
	rm -f "$f"
}

rec_pool() { # tree ev run
	local b=$out/build-$1
	BENCH_EV=$2 BENCH_PIN=$(($3 % 2)) UTRACE_EVENTS='bench:*' UTRACE_RUNTIME_DIR="$data/run" \
		"$b/bench/bench-record-utrace" run "$N" 1 >"$data/out" 2>"$data/err" ||
		{ say "writer alone ($1 $2) failed"; return 0; }
	echo "RESULT $1 pool $2 $3 $(awk '{print $4/$3}' "$data/out") - -" >>"$data/results.txt"
}

rec_raw() { # ev run
	BENCH_EV=$1 BENCH_PIN=$(($2 % 2)) "$out/build-new/bench/bench-record-raw" run "$N" 1 \
		>"$data/out" || { say "raw ($1) failed"; return 0; }
	echo "RESULT - raw $1 $2 $(awk '{print $4/$3}' "$data/out") - -" >>"$data/results.txt"
}

# The raw store's calibration (two-integer event): K independent one-cycle
# instructions added to each event (case padK), and the store without its
# rdtsc (case notsc); see bench-record.c.
rec_cal() { # run
	local k
	for k in 16 32 48 64 notsc; do
		if [ "$k" = notsc ]; then
			BENCH_RAW_TSC=0 BENCH_PIN=$(($1 % 2)) "$out/build-new/bench/bench-record-raw" \
				run "$N" 1 >"$data/out" || { say "raw calibration failed"; return 0; }
		else
			BENCH_RAW_PAD=$k BENCH_PIN=$(($1 % 2)) "$out/build-new/bench/bench-record-raw" \
				run "$N" 1 >"$data/out" || { say "raw calibration failed"; return 0; }
			k=pad$k
		fi
		echo "RESULT - $k int $1 $(awk '{print $4/$3}' "$data/out") - -" >>"$data/results.txt"
	done
}

rec_lttng() { # ev run
	local s=fastpath-$$-$2 dir=$data/lttng-$1
	rm -rf "$dir"
	{ lttng create "$s" --output="$dir" && lttng enable-event -u -s "$s" 'bench:*' &&
	  lttng start "$s"; } >"$data/lttng.log" 2>&1 || { say "lttng session failed"; return 0; }
	BENCH_EV=$1 BENCH_PIN=$(($2 % 2)) "$out/build-new/bench/bench-record-lttng" run "$N" 1 \
		>"$data/out" 2>"$data/err" || say "lttng ($1) failed"
	lttng stop "$s" >>"$data/lttng.log" 2>&1 || true
	local disc
	disc=$(lttng list "$s" 2>/dev/null | sed -nE 's/.*Discarded events: ([0-9]+).*/\1/p' | head -n 1)
	lttng destroy "$s" >>"$data/lttng.log" 2>&1 || true
	[ -s "$data/out" ] &&
		echo "RESULT - lttng $1 $2 $(awk '{print $4/$3}' "$data/out") \
$(du -sb "$dir" | awk -v n="$N" '{print $1/n}') ${disc:-?}" >>"$data/results.txt"
	rm -rf "$dir"
}

: >"$data/results.txt"
echo "LOAD start $(cut -d' ' -f1-3 /proc/loadavg)" >>"$data/results.txt"
for r in $(seq 0 $((RUNS - 1))); do
	say "round $((r + 1)) of $RUNS"
	for ev in int str; do
		rec_raw "$ev" "$r"
		for t in "${trees[@]}"; do
			rec_utrace "$t" "$ev" "$r"
			rec_pool "$t" "$ev" "$r"
		done
		[ -n "$lttng_ok" ] && rec_lttng "$ev" "$r"
	done
	rec_cal "$r"
done

# Instructions per event: callgrind of the event loop minus the empty loop,
# under `utrace record` (every event goes into the pool's pages).
count() { # label prog ev [tree]
	local f=$data/cg-$1-$3 fn=bench_rec_loop
	[ "$3" = str ] && fn=bench_rec_loop_str
	local pre=()
	[ -n "${4:-}" ] && pre=("$out/build-$4/tools/utrace/utrace" record -o "$data/cg.dat" --)
	for g in "$fn" bench_rec_loop_empty; do
		BENCH_EV=$3 "${pre[@]}" valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$f.$g" \
			--collect-atstart=no --toggle-collect="$g" "$2" count "$CG_N" \
			>/dev/null 2>"$f.$g.log" || { say "callgrind $1 $3 failed"; return 0; }
	done
	local a e
	a=$(grep -E '^(summary|totals):' "$f.$fn" | head -n 1 | awk '{print $2}')
	e=$(grep -E '^(summary|totals):' "$f.bench_rec_loop_empty" | head -n 1 | awk '{print $2}')
	echo "CG $1 $3 $(awk -v a="$a" -v e="$e" -v n="$CG_N" 'BEGIN{printf "%.2f", (a-e)/n}')" \
		>>"$data/results.txt"
	callgrind_annotate --inclusive=no "$f.$fn" 2>/dev/null | sed -n '1,40p' >"$f.annotate"
	rm -f "$data/cg.dat"
}
echo "LOAD end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$data/results.txt"
say "callgrind"
for ev in int str; do
	count raw "$out/build-new/bench/bench-record-raw" "$ev"
	for t in "${trees[@]}"; do
		count "$t" "$out/build-$t/bench/bench-record-utrace" "$ev" "$t"
	done
done

python3 "$here/fastpath-report.py" "$data/results.txt" "$base" "$N" "$RUNS" "$CG_N" \
	"$data" >"$out/fastpath.md"
python3 - "$here/RESULTS.md" "$out/fastpath.md" <<'EOF'
import sys
res, part = sys.argv[1], open(sys.argv[2]).read()
begin, end = '<!-- fastpath: begin -->\n', '<!-- fastpath: end -->\n'
s = open(res).read()
block = begin + part + end
if begin in s and end in s:
    s = s[:s.index(begin)] + block + s[s.index(end) + len(end):]
else:
    s = s.rstrip('\n') + '\n\n' + block
open(res, 'w').write(s)
EOF
say "wrote $out/fastpath.md and its section of bench/RESULTS.md"
