#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/run.sh - what does a utrace call site cost, next to LTTng-UST,
# and what does recording an event cost?
#
# Builds libutrace, the utrace tool and the benchmark programs
# (bench/meson.build) in bench/out/build, counts instructions per call with
# callgrind, times 100M-call loops, disassembles the loops; then records a
# two-field event fired 10M times per thread with `utrace record`, with an
# LTTng session to disk and into a raw per-thread array, times reading the
# traces back (with `utrace hist`, and `utrace report --latency` on a
# recording of begin/end pairs of its own), and writes bench/RESULTS.md.
# Takes about three minutes on two cores.  Needs meson, ninja, a C
# compiler, valgrind, objdump, python3 and liblttng-ust-dev; clang,
# lttng-tools, babeltrace2, trace-cmd and perf are used when present.
#
# Whether the recorder keeps up with a burst (lost events and its CPU per
# event, quiet and beside two busy loops, before/after): bench/keepup.sh,
# which writes a section of its own into RESULTS.md; this script keeps it.
#
# Knobs (environment):
#   BENCH_N=100000000        iterations of each timed run
#   BENCH_RUNS=5             timed runs of each case
#   BENCH_CG_N=1000000       iterations under callgrind
#   BENCH_LTTNG_ON_N=10000000, BENCH_LTTNG_ON_RUNS=5, BENCH_LTTNG_ON_CG_N=100000
#                            the same for LTTng switched on (much slower)
#   BENCH_NO_LTTNG_ON=1      do not start lttng-sessiond (no LTTng on rows,
#                            no LTTng recording)
#   BENCH_REC_N=10000000     events per thread of each recording run
#   BENCH_REC_RUNS=5         recording runs of each case
#   BENCH_REC_CG_N=100000    events of the recorded path under callgrind
#   BENCH_READ_RUNS=3        timed runs of each trace reader
#   BENCH_LAT_PAIRS=2500000  begin/end pairs of the latency report's trace
#   BENCH_LONG_SECS=10       seconds of the sustained run (0: skip it)
#   BENCH_FILT_N=2000000     events of each filter case per round
#   BENCH_FILT_RUNS=5        rounds of the filter cases
#   BENCH_FILT_CG_N=100000   events of each filter case under callgrind
#   BENCH_CTL_TOGGLES=50     switch-ons timed by the control-latency run
#   BENCH_KEEP_TRACES=1      keep the last trace files in bench/out/rec (~1 GB)
#   CC, CLANG                compilers (default cc, clang)
#
# bench/fastpath.sh measures the writer's fast path before and after a
# change, with the string event too, in a run of its own; its section of
# RESULTS.md is kept when this script rewrites the file, with the sections
# after it.
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
REC_N=${BENCH_REC_N:-10000000}
REC_RUNS=${BENCH_REC_RUNS:-5}
REC_CG_N=${BENCH_REC_CG_N:-100000}
LONG_SECS=${BENCH_LONG_SECS:-10}
READ_RUNS=${BENCH_READ_RUNS:-3}
LAT_PAIRS=${BENCH_LAT_PAIRS:-2500000}
FILT_N=${BENCH_FILT_N:-2000000}
FILT_RUNS=${BENCH_FILT_RUNS:-5}
FILT_CG_N=${BENCH_FILT_CG_N:-100000}
CTL_TOGGLES=${BENCH_CTL_TOGGLES:-50}
CC=${CC:-cc}
CLANG=${CLANG:-clang}
PYTHON=${PYTHON:-python3}

say() { printf 'bench: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# Jump-label call sites are rewritten under callgrind too (the counts are
# of the NOP, not of the load and branch libutrace falls back to under
# valgrind): valgrind checks all code for changes (--smc-check=all), and
# UTRACE_NO_JUMP_LABEL=0 tells libutrace so.
export UTRACE_NO_JUMP_LABEL=0

for tool in meson ninja valgrind objdump "$PYTHON" pkg-config; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
pkg-config --exists lttng-ust || die "liblttng-ust-dev is missing"

# Nothing may switch the events on behind our back.
unset UTRACE_EVENTS UTRACE_PRINT

start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
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
	bench/bench-lttng bench/bench-record-utrace bench/bench-record-lttng \
	bench/bench-record-raw bench/bench-filter tools/utrace/utrace \
	>"$out/ninja.log" 2>&1 ||
	{ cat "$out/ninja.log" >&2; die "build failed"; }

# label:binary pairs; every binary answers 'cases', 'time' and 'count'.
bins=(
	"utrace:$build/bench/bench-utrace"
	"utrace-disabled:$build/bench/bench-utrace-disabled"
	"lttng:$build/bench/bench-lttng"
)

# The call site compiled by clang as well.  The file with
# CREATE_TRACE_POINTS is compiled by clang if it can be, else by cc.
# DWARF 4: valgrind 3.19 gives up on the DWARF 5 that clang 14 writes for
# the CREATE_TRACE_POINTS file ("Possibly corrupted debuginfo file").
common=(-O2 -g -gdwarf-4 -std=c17 -D_GNU_SOURCE -DBENCH_UTRACE
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
	if valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$f" \
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

rec_session=

lttng_cleanup() {
	if [ -n "$rec_session" ]; then
		lttng destroy "$rec_session" >/dev/null 2>&1 || true
		rec_session=
	fi
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

# A session daemon for both LTTng parts: the on rows of the call-site
# table and the recording table.  Sets sessiond_status ("ok" or why not).
sessiond_status=
sessiond_up() {
	[ -n "$sessiond_status" ] && return
	if [ -n "${BENCH_NO_LTTNG_ON:-}" ]; then
		sessiond_status="skipped (BENCH_NO_LTTNG_ON set)"
		return
	fi
	if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null; then
		sessiond_status="unavailable (lttng-tools is not installed)"
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
			sessiond_status="unavailable (lttng-sessiond did not start: $(tail -n 1 "$data/lttng-sessiond.log"))"
			return
		fi
	fi
	sessiond_status=ok
}

lttng_on() {
	sessiond_up
	if [ "$sessiond_status" != ok ]; then
		echo "status $sessiond_status" >>"$status_file"
		return
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
# The snapshot session also enables bench:bench_ev: it must be gone
# before the recording runs, or LTTng would write every event twice.
if [ -n "$session_made" ]; then
	lttng destroy "$session" >/dev/null 2>&1 || true
	session_made=
fi

# ------------------------------------------------------------ recording
# The two-field event fired REC_N times per thread, really recorded:
#   utrace  under `utrace record -o FILE -- prog` (default buffer), 1 and 2
#           threads; the recorder's summary line gives events and lost
#   raw     no tracer, a 24-byte record per event into a per-thread array
#   lttng   an LTTng session writing to disk (default channel), 1 thread;
#           `lttng list` gives discarded events, babeltrace2 counts them
# One round runs every case once (round-robin, so that noise spreads);
# REC_RUNS rounds.  Only the last round's traces are kept, for reading.
utrace=$build/tools/utrace/utrace
rec=$out/rec
rdata=$data/rec
rm -rf "$rec"
mkdir -p "$rec" "$rdata"
: >"$rdata/times.txt"
: >"$rdata/files.txt"
: >"$rdata/counts.txt"
: >"$rdata/read.txt"
: >"$rdata/status.txt"

# Pinned threads: thread k of a 2-thread run on CPU k, and the 1-thread
# runs on CPU (round % 2), so that each thread of a 2-thread run can be set
# against one thread alone on the same CPU.  On these VMs one vCPU can run
# code 1.4x slower than the other for hours (a busy neighbour on the host),
# and unpinned runs then measure where the scheduler put the threads.  The
# recorder and the LTTng daemons are not pinned.
if [ "$(nproc)" -ge 2 ]; then rec_pin2=0,1; else rec_pin2=; fi
pin_for() { # threads run
	if [ -z "$rec_pin2" ]; then echo; elif [ "$1" -eq 2 ]; then echo "$rec_pin2"; else echo $(($2 % 2)); fi
}

rec_utrace() { # threads run [idle]
	local t=$1 r=$2 label=utrace${3:+-$3} f=$rec/utrace${3:+-$3}-$1t.dat line
	local opts=()
	[ "${3:-}" = idle ] && opts=(--idle)
	rm -f "$f"
	if ! BENCH_PIN=$(pin_for "$t" "$r") \
		"$utrace" record "${opts[@]}" -o "$f" -- "$build/bench/bench-record-utrace" run "$REC_N" "$t" \
		>"$rdata/$label-$t.out" 2>"$rdata/$label-$t.$r.err"; then
		say "utrace record ${opts[*]} ($t threads) failed, see $rdata/$label-$t.$r.err"
		return 0
	fi
	sed "s/^REC /REC $label $t $r /" "$rdata/$label-$t.out" >>"$rdata/times.txt"
	line=$(grep -E '^utrace record: [0-9]+ events written, [0-9]+ lost,' \
		"$rdata/$label-$t.$r.err" | tail -n 1) || true
	if [ -n "$line" ]; then
		# FILE label threads run bytes events lost
		echo "FILE $label $t $r $(stat -c %s "$f") $(echo "$line" |
			sed -E 's/^utrace record: ([0-9]+) events written, ([0-9]+) lost,.*/\1 \2/')" \
			>>"$rdata/files.txt"
	else
		say "no summary line from utrace record, see $rdata/$label-$t.$r.err"
	fi
	[ "$r" -eq $((REC_RUNS - 1)) ] && [ -z "${3:-}" ] || rm -f "$f"
}

# The writer alone: the same program with the event on from UTRACE_EVENTS
# and no recorder, so the process's own buffer (8 MiB, overwrite mode)
# takes every event and nothing copies it out meanwhile.  This separates
# the cost of writing an event from the cost of the recorder writing the
# file next to it (see the notes under the Recording table).
rec_pool() { # threads run
	BENCH_PIN=$(pin_for "$1" "$2") UTRACE_EVENTS='bench:*' UTRACE_RUNTIME_DIR="$rec/run" \
		"$build/bench/bench-record-utrace" run "$REC_N" "$1" 2>"$rdata/pool.$1.$2.err" |
		sed "s/^REC /REC utrace-pool $1 $2 /" >>"$rdata/times.txt" ||
		say "bench-record-utrace without a recorder failed, see $rdata/pool.$1.$2.err"
}

# The same with discard mode: once the 8 MiB are full every event is lost,
# so this times the lost path (what a full buffer costs the program).
rec_lost() { # run
	BENCH_PIN=$(pin_for 1 "$1") UTRACE_EVENTS='bench:*' UTRACE_MODE=discard UTRACE_RUNTIME_DIR="$rec/run" \
		"$build/bench/bench-record-utrace" run "$REC_N" 1 2>"$rdata/lost.$1.err" |
		sed "s/^REC /REC utrace-lost 1 $1 /" >>"$rdata/times.txt" ||
		say "bench-record-utrace in discard mode without a recorder failed, see $rdata/lost.$1.err"
}

rec_raw() { # threads run
	BENCH_PIN=$(pin_for "$1" "$2") "$build/bench/bench-record-raw" run "$REC_N" "$1" |
		sed "s/^REC /REC raw $1 $2 /" >>"$rdata/times.txt" ||
		say "bench-record-raw ($1 threads) failed"
}

lttng_rec_ok=
rec_lttng() { # run
	local r=$1 dir=$rec/lttng-1t s=utrace-bench-rec-$$-$1 disc ev counted
	[ -n "$lttng_rec_ok" ] || return 0
	rm -rf "$dir"
	if ! { lttng create "$s" --output="$dir" && rec_session=$s &&
	       lttng enable-event -u -s "$s" 'bench:*' &&
	       lttng start "$s"; } >"$rdata/lttng-session.$r.log" 2>&1; then
		say "could not set up an LTTng session, see $rdata/lttng-session.$r.log"
		echo "lttng unavailable (could not set up a session, see bench/out/data/rec/lttng-session.$r.log)" \
			>>"$rdata/status.txt"
		lttng_rec_ok=
		lttng_cleanup_rec
		return 0
	fi
	if ! BENCH_PIN=$(pin_for 1 "$r") "$build/bench/bench-record-lttng" run "$REC_N" 1 \
		>"$rdata/lttng.out" 2>"$rdata/lttng.$r.err"; then
		say "bench-record-lttng failed, see $rdata/lttng.$r.err"
		echo "lttng unavailable (the event did not switch on, see bench/out/data/rec/lttng.$r.err)" \
			>>"$rdata/status.txt"
		lttng_rec_ok=
		lttng_cleanup_rec
		return 0
	fi
	lttng stop "$s" >"$rdata/lttng-stop.$r.log" 2>&1 || true
	lttng list "$s" >"$rdata/lttng-list.$r.txt" 2>&1 || true
	lttng_cleanup_rec
	sed "s/^REC /REC lttng 1 $r /" "$rdata/lttng.out" >>"$rdata/times.txt"
	disc=$(awk '/Discarded events:/ { d += $3 } END { print d + 0 }' "$rdata/lttng-list.$r.txt")
	counted=-1
	if command -v babeltrace2 >/dev/null; then
		ev=$(babeltrace2 "$dir" -c sink.utils.counter 2>"$rdata/bt2-count.$r.err" |
			awk '/ Event messages$/ { e = $1 } END { print e }') || ev=
		if [ -n "$ev" ]; then counted=$ev; fi
	fi
	# LTTNG run bytes discarded counted-by-babeltrace2 (-1: not counted)
	echo "LTTNG $r $(du -sb "$dir" | cut -f1) $disc $counted" >>"$rdata/files.txt"
	[ "$r" -eq $((REC_RUNS - 1)) ] || rm -rf "$dir"
}

lttng_cleanup_rec() {
	if [ -n "$rec_session" ]; then
		lttng destroy "$rec_session" >/dev/null 2>&1 || true
		rec_session=
	fi
}

sessiond_up
if [ "$sessiond_status" = ok ]; then
	lttng_rec_ok=1
	echo "lttng ok" >>"$rdata/status.txt"
else
	echo "lttng $sessiond_status" >>"$rdata/status.txt"
fi

# How fast each CPU runs plain code (empty calls), before and after the
# rounds: on these VMs one vCPU can be much slower than the other for a
# while, which the pinned runs above show and this puts a number on.
cpu_check() { # before|after
	[ -n "$rec_pin2" ] || return 0
	for _ in 1 2 3; do
		for c in 0 1; do
			BENCH_PIN=$c "$build/bench/bench-record-raw" calls 100000000 |
				sed "s/^CALLS /CALLS $1 /" >>"$rdata/cpus.txt" || true
		done
	done
}
: >"$rdata/cpus.txt"

say "recording: $REC_RUNS rounds of $REC_N events per thread (utrace 1 and 2 threads, raw, LTTng)"
cpu_check before
for ((r = 0; r < REC_RUNS; r++)); do
	rec_utrace 1 "$r"
	rec_utrace 2 "$r"
	rec_utrace 2 "$r" idle
	rec_raw 1 "$r"
	rec_raw 2 "$r"
	rec_pool 1 "$r"
	rec_pool 2 "$r"
	rec_lost "$r"
	rec_lttng "$r"
done
cpu_check after
if [ -n "$lttng_rec_ok" ]; then
	cp "$rdata/lttng-list.$((REC_RUNS - 1)).txt" "$rdata/lttng-list.txt" 2>/dev/null || true
fi

# Ten seconds at full speed: one thread fires the event for LONG_SECS
# seconds under `utrace record` (default buffer, file on disk), then under
# an LTTng session to disk.  The program says how many it fired; the
# recorder's written + lost must add up to it.  The files (several GB) are
# removed at once.
rec_long() {
	local f=$rec/long.dat dir=$rec/lttng-long s=utrace-bench-long-$$ fired ns line disc
	local avail
	avail=$(df -Pk "$rec" | awk 'NR == 2 { print $4 }')
	if [ "$LONG_SECS" -le 0 ]; then
		echo "LONGSTATUS skipped (BENCH_LONG_SECS=0)" >>"$rdata/long.txt"
		return 0
	fi
	# The recorder writes at most about 2 GB/s here; keep 10 GB spare.
	if [ "$avail" -lt $(( (LONG_SECS * 2 + 10) * 1024 * 1024 )) ]; then
		echo "LONGSTATUS skipped (only $((avail / 1024)) MB free on bench/out)" >>"$rdata/long.txt"
		return 0
	fi
	say "sustained: one thread for $LONG_SECS s under utrace record${lttng_rec_ok:+, then LTTng}"
	rm -f "$f"
	if "$utrace" record -o "$f" -- "$build/bench/bench-record-utrace" for "$LONG_SECS" \
		>"$rdata/long-utrace.out" 2>"$rdata/long-utrace.err"; then
		read -r _ fired ns <"$rdata/long-utrace.out" || true
		line=$(grep -E '^utrace record: [0-9]+ events written, [0-9]+ lost,' \
			"$rdata/long-utrace.err" | tail -n 1) || true
		# LONG utrace fired written lost bytes ns
		[ -n "$line" ] && echo "LONG utrace $fired $(echo "$line" |
			sed -E 's/^utrace record: ([0-9]+) events written, ([0-9]+) lost,.*/\1 \2/') $(stat -c %s "$f") $ns" \
			>>"$rdata/long.txt"
	else
		say "utrace record for $LONG_SECS s failed, see $rdata/long-utrace.err"
	fi
	rm -f "$f"
	[ -n "$lttng_rec_ok" ] || return 0
	rm -rf "$dir"
	if { lttng create "$s" --output="$dir" && rec_session=$s &&
	     lttng enable-event -u -s "$s" 'bench:*' &&
	     lttng start "$s"; } >"$rdata/long-lttng-session.log" 2>&1 &&
	   "$build/bench/bench-record-lttng" for "$LONG_SECS" \
		>"$rdata/long-lttng.out" 2>"$rdata/long-lttng.err"; then
		lttng stop "$s" >/dev/null 2>&1 || true
		lttng list "$s" >"$rdata/long-lttng-list.txt" 2>&1 || true
		read -r _ fired ns <"$rdata/long-lttng.out" || true
		disc=$(awk '/Discarded events:/ { d += $3 } END { print d + 0 }' "$rdata/long-lttng-list.txt")
		# LONG lttng fired -1 discarded bytes ns
		echo "LONG lttng $fired -1 $disc $(du -sb "$dir" | cut -f1) $ns" >>"$rdata/long.txt"
	else
		say "the LTTng run for $LONG_SECS s failed, see $rdata/long-lttng*.log/err"
	fi
	lttng_cleanup_rec
	rm -rf "$dir"
}
: >"$rdata/long.txt"
rec_long
lttng_cleanup

# Where the bytes of the last utrace files go (record headers, pages).
for t in 1 2; do
	if [ -f "$rec/utrace-${t}t.dat" ]; then
		"$PYTHON" "$here/tracefile-stats.py" "$rec/utrace-${t}t.dat" \
			>"$rdata/filestats-${t}t.txt" 2>&1 || true
	fi
done
[ -n "${BENCH_KEEP_TRACES:-}" ] || rm -f "$rec/utrace-2t.dat"

# Instructions per event of the switched-on, recorded path: the event loop
# and the empty loop of the same program, each under callgrind (the loop
# function and all it calls), run under `utrace record`.  The raw store
# the same way, without a recorder.
rec_count() { # label function recorder(0/1)
	local label=$1 fn=$2 f=$rdata/cg.$1.$2.out
	local cmd=(valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$f"
		--collect-atstart=no --toggle-collect="$fn"
		"$build/bench/bench-record-$label" count "$REC_CG_N")
	if [ "$3" = 1 ]; then
		cmd=("$utrace" record -o "$rec/cg.dat" -- "${cmd[@]}")
	fi
	if "${cmd[@]}" >"$f.log" 2>&1; then
		echo "COUNT $label $fn $REC_CG_N $(awk '/^(summary|totals):/ { print $2; exit }' "$f")" \
			>>"$rdata/counts.txt"
	else
		say "callgrind of bench-record-$label $fn failed, see $f.log"
	fi
	rm -f "$rec/cg.dat"
}
say "counting the recorded path with callgrind (N=$REC_CG_N)"
for fn in bench_rec_loop_empty bench_rec_loop; do
	rec_count utrace "$fn" 1
	rec_count raw "$fn" 0
done

# ------------------------------------------------------------- filters
# The same two-field event, recorded the same way (`utrace record -o FILE
# -- prog`, default buffer), by bench-filter: libutrace linked statically
# so that the program sets bench:bench_ev's filter through its own agent
# (utrace__ctl_filter, the path of `utrace filter -p`).  One process runs
# FILT_RUNS rounds, each case once per round: no filter, one predicate
# that accepts / rejects every event, three predicates that accept /
# reject every event.  Then each case under callgrind, and the control
# latency: utrace__ctl_enable on a process firing the event in a loop.
fdata=$data/filt
mkdir -p "$fdata"
: >"$fdata/counts.txt"
filt_bin=$build/bench/bench-filter
filt_cases=(none accept1 reject1 accept3 reject3 hist histoff)
say "filters: $FILT_RUNS rounds of $FILT_N events per case (${filt_cases[*]})"
# -m 64M: room for a whole case (FILT_N events of 24 bytes), so that a
# recorder that falls behind on this shared machine makes no event lost
# (a lost event is cheaper and would flatter the figures).
if ! "$utrace" record -m 64M -o "$rec/filt.dat" -- "$filt_bin" filter "$FILT_N" "$FILT_RUNS" \
	"${filt_cases[@]}" >"$fdata/times.txt" 2>"$fdata/filter.err"; then
	say "bench-filter filter failed, see $fdata/filter.err"
fi
grep -E '^utrace record: [0-9]+ events written' "$fdata/filter.err" | tail -n 1 \
	>"$fdata/filter-summary.txt" || true
rm -f "$rec/filt.dat"
say "counting the filter cases with callgrind (N=$FILT_CG_N)"
filt_count() { # case function
	local c=$1 fn=$2 f=$fdata/cg.$1.$2.out
	if "$utrace" record -o "$rec/cg.dat" -- valgrind --tool=callgrind --smc-check=all \
		--callgrind-out-file="$f" --collect-atstart=no --toggle-collect="$fn" \
		"$filt_bin" count "$FILT_CG_N" "$c" >"$f.log" 2>&1; then
		echo "COUNT $c $fn $FILT_CG_N $(awk '/^(summary|totals):/ { print $2; exit }' "$f")" \
			>>"$fdata/counts.txt"
	else
		say "callgrind of bench-filter $c failed, see $f.log"
	fi
	rm -f "$rec/cg.dat"
}
filt_count none bench_filt_loop_empty
for c in "${filt_cases[@]}"; do
	filt_count "$c" bench_filt_loop
done
say "control latency: $CTL_TOGGLES switch-ons of a busy process"
if ! "$utrace" record -o "$rec/ctl.dat" -- "$filt_bin" latency "$CTL_TOGGLES" 500 2000 \
	>"$fdata/ctl.txt" 2>"$fdata/ctl.err"; then
	say "bench-filter latency failed, see $fdata/ctl.err"
fi
grep -E '^utrace record: [0-9]+ events written' "$fdata/ctl.err" | tail -n 1 \
	>"$fdata/ctl-summary.txt" || true
rm -f "$rec/ctl.dat"

# Reading the traces back: `utrace script` (when the built utrace has it)
# on the last 1-thread utrace file, babeltrace2 on the last LTTng trace,
# `trace-cmd report` on the trace.dat `utrace convert` makes of the same
# utrace file (the same events; the conversion itself is not timed).
now_ns() { date +%s%N; }
read_time() { # reader run events command...
	local name=$1 r=$2 ev=$3 t0 t1 rc=0
	shift 3
	t0=$(now_ns)
	"$@" >/dev/null 2>"$rdata/read-$name.$r.err" || rc=$?
	t1=$(now_ns)
	if [ "$rc" -ne 0 ]; then
		say "$name failed, see $rdata/read-$name.$r.err"
		echo "READSTATUS $name failed (exit status $rc, see bench/out/data/rec/read-$name.$r.err)" \
			>>"$rdata/read.txt"
		return 1
	fi
	echo "READ $name $r $ev $((t1 - t0))" >>"$rdata/read.txt"
}
ufile=$rec/utrace-1t.dat
uev=$(awk -v r=$((REC_RUNS - 1)) '$1 == "FILE" && $2 == "utrace" && $3 == 1 && $4 == r { print $6 }' \
	"$rdata/files.txt")
# read_utrace CMD: `utrace CMD -i FILE` on the last 1-thread utrace file,
# READ_RUNS times (script prints every event; report counts them by comm
# and event, the issue's 20 M events/s)
read_utrace() {
	local cmd=$1 r
	if ! "$utrace" --help 2>/dev/null | grep -qE "^ +$cmd( |\$)"; then
		echo "READSTATUS utrace-$cmd skipped (the built utrace has no '$cmd' command)" \
			>>"$rdata/read.txt"
	elif [ ! -f "$ufile" ] || [ -z "$uev" ]; then
		echo "READSTATUS utrace-$cmd skipped (no utrace trace file was recorded)" \
			>>"$rdata/read.txt"
	else
		say "reading: utrace $cmd, $READ_RUNS runs"
		for ((r = 0; r < READ_RUNS; r++)); do
			read_time "utrace-$cmd" "$r" "$uev" "$utrace" "$cmd" -i "$ufile" || break
		done
	fi
}
read_utrace script
read_utrace report
ldir=$rec/lttng-1t
lev=$(awk -v r=$((REC_RUNS - 1)) '$1 == "LTTNG" && $2 == r { print $5 }' "$rdata/files.txt")
if ! command -v babeltrace2 >/dev/null; then
	echo "READSTATUS babeltrace2 skipped (babeltrace2 is not installed)" >>"$rdata/read.txt"
elif [ ! -d "$ldir" ] || [ -z "$lev" ] || [ "$lev" -lt 0 ]; then
	echo "READSTATUS babeltrace2 skipped (no LTTng trace was recorded)" >>"$rdata/read.txt"
else
	say "reading: babeltrace2, $READ_RUNS runs"
	for ((r = 0; r < READ_RUNS; r++)); do
		read_time babeltrace2 "$r" "$lev" babeltrace2 "$ldir" || break
	done
fi
tfile=$rec/utrace-1t.trace.dat
if ! command -v trace-cmd >/dev/null; then
	echo "READSTATUS trace-cmd skipped (trace-cmd is not installed)" >>"$rdata/read.txt"
elif ! "$utrace" --help 2>/dev/null | grep -qE '^ +convert( |$)'; then
	echo "READSTATUS trace-cmd skipped (the built utrace has no 'convert' command)" \
		>>"$rdata/read.txt"
elif [ ! -f "$ufile" ] || [ -z "$uev" ]; then
	echo "READSTATUS trace-cmd skipped (no utrace trace file was recorded)" >>"$rdata/read.txt"
elif ! "$utrace" convert -i "$ufile" -o "$tfile" 2>"$rdata/convert.err"; then
	say "utrace convert failed, see $rdata/convert.err"
	echo "READSTATUS trace-cmd failed (utrace convert failed, see bench/out/data/rec/convert.err)" \
		>>"$rdata/read.txt"
else
	say "reading: trace-cmd report, $READ_RUNS runs"
	for ((r = 0; r < READ_RUNS; r++)); do
		read_time trace-cmd "$r" "$uev" trace-cmd report -i "$tfile" || break
	done
fi
# The offline hist triggers on the same file: `utrace hist` with one
# trigger keyed on the log2 of b, summing a (25 buckets); one untimed run
# first, whose Totals give the hits (READCHECK: it must see every event).
# The peer is the trace-cmd row above: trace-cmd has no offline hist, its
# `report` reading the same events is the figure to set against.
hist_trig='hist:keys=b.log2:vals=a'
if ! "$utrace" --help 2>/dev/null | grep -qE '^ +hist( |$)'; then
	echo "READSTATUS utrace-hist skipped (the built utrace has no 'hist' command)" \
		>>"$rdata/read.txt"
elif [ ! -f "$ufile" ] || [ -z "$uev" ]; then
	echo "READSTATUS utrace-hist skipped (no utrace trace file was recorded)" >>"$rdata/read.txt"
elif "$utrace" hist -i "$ufile" bench_ev "$hist_trig" >"$rdata/hist.txt" \
	2>"$rdata/hist.err"; then
	echo "READCHECK utrace-hist $(grep -E '^ +(Hits|Entries|Dropped):' "$rdata/hist.txt" |
		tr -s ' \n' ' ')" >>"$rdata/read.txt"
	say "reading: utrace hist, $READ_RUNS runs"
	for ((r = 0; r < READ_RUNS; r++)); do
		read_time utrace-hist "$r" "$uev" "$utrace" hist -i "$ufile" bench_ev \
			"$hist_trig" || break
	done
else
	echo "READSTATUS utrace-hist failed (see bench/out/data/rec/hist.err)" >>"$rdata/read.txt"
fi
# The latency report needs begin/end pairs: `bench-record-utrace pairs
# LAT_PAIRS` fires bench_ev (b: the id) and, 64 ids later, bench_str (n:
# the same id, one of 8 paths), recorded once by `utrace record -m 256M`
# (room for the whole burst: nothing lost).  Read by `utrace report
# --latency` sorted by the end's path, the same by its default key (comm),
# a plain `utrace report`, and `trace-cmd report` on its `utrace convert`;
# perf is asked too.
pfile=$rec/pairs.dat
ptfile=$rec/pairs.trace.dat
pev=
if ! "$utrace" report --help 2>/dev/null | grep -q -- '--latency'; then
	echo "READSTATUS utrace-latency skipped (the built utrace report has no --latency)" \
		>>"$rdata/read.txt"
elif ! "$utrace" record -m 256M -o "$pfile" -- "$build/bench/bench-record-utrace" \
	pairs "$LAT_PAIRS" >"$rdata/pairs.out" 2>"$rdata/pairs.err"; then
	say "utrace record of the pairs failed, see $rdata/pairs.err"
	echo "READSTATUS utrace-latency failed (utrace record of the pairs failed, see bench/out/data/rec/pairs.err)" \
		>>"$rdata/read.txt"
else
	line=$(grep -E '^utrace record: [0-9]+ events written, [0-9]+ lost,' \
		"$rdata/pairs.err" | tail -n 1) || true
	pev=$(echo "$line" | sed -nE 's/^utrace record: ([0-9]+) events written.*/\1/p')
	line=${line#utrace record: }
	echo "READCHECK pairs-file $LAT_PAIRS pairs fired; ${line%, \'*}" >>"$rdata/read.txt"
fi
lat_args=(--latency bench_ev.b:bench_str.n --sort bench_str.path)
if [ -n "$pev" ]; then
	if "$utrace" report -i "$pfile" "${lat_args[@]}" >"$rdata/latency.txt" \
		2>"$rdata/latency.err"; then
		echo "READCHECK utrace-latency $(grep -E '^# Pairs:' "$rdata/latency.txt" | tr -s ' ' ' ')" \
			>>"$rdata/read.txt"
	fi
	say "reading: utrace report --latency (by path, by comm) and utrace report on the pairs, $READ_RUNS runs each"
	for ((r = 0; r < READ_RUNS; r++)); do
		read_time utrace-latency "$r" "$pev" "$utrace" report -i "$pfile" "${lat_args[@]}" ||
			break
	done
	for ((r = 0; r < READ_RUNS; r++)); do
		read_time utrace-latency-comm "$r" "$pev" "$utrace" report -i "$pfile" \
			"${lat_args[@]:0:2}" || break
	done
	for ((r = 0; r < READ_RUNS; r++)); do
		read_time utrace-report-pairs "$r" "$pev" "$utrace" report -i "$pfile" || break
	done
	if ! command -v trace-cmd >/dev/null; then
		echo "READSTATUS trace-cmd-pairs skipped (trace-cmd is not installed)" >>"$rdata/read.txt"
	elif ! "$utrace" convert -i "$pfile" -o "$ptfile" 2>"$rdata/convert-pairs.err"; then
		echo "READSTATUS trace-cmd-pairs failed (utrace convert failed, see bench/out/data/rec/convert-pairs.err)" \
			>>"$rdata/read.txt"
	else
		say "reading: trace-cmd report on the pairs, $READ_RUNS runs"
		for ((r = 0; r < READ_RUNS; r++)); do
			read_time trace-cmd-pairs "$r" "$pev" trace-cmd report -i "$ptfile" || break
		done
	fi
	# perf reads its own perf.data only; say what it answers.
	if ! command -v perf >/dev/null; then
		echo "READSTATUS perf skipped (perf is not installed)" >>"$rdata/read.txt"
	elif [ -f "$ptfile" ]; then
		if perf report --stdio -i "$ptfile" >/dev/null 2>"$rdata/perf.err"; then
			echo "READSTATUS perf ran (perf report read the trace.dat: time it by hand)" \
				>>"$rdata/read.txt"
		else
			echo "READSTATUS perf cannot read it (\`perf report -i\` on the trace.dat: $(head -n 1 "$rdata/perf.err"))" \
				>>"$rdata/read.txt"
		fi
	fi
	rm -f "$ptfile"
fi
[ -n "${BENCH_KEEP_TRACES:-}" ] || rm -f "$pfile"
# `utrace convert --format ctf` and `--format sqlite` of the same file,
# timed as readers (the export reads every event and writes it again), the
# size of what each writes, and babeltrace2 on the CTF trace.
cdir=$rec/utrace-1t.ctf
cdb=$rec/utrace-1t.db
if ! "$utrace" convert --help 2>/dev/null | grep -q sqlite; then
	for n in convert-ctf convert-sqlite babeltrace2-ctf; do
		echo "READSTATUS $n skipped (the built utrace convert has no ctf or sqlite format)"
	done >>"$rdata/read.txt"
elif [ ! -f "$ufile" ] || [ -z "$uev" ]; then
	for n in convert-ctf convert-sqlite babeltrace2-ctf; do
		echo "READSTATUS $n skipped (no utrace trace file was recorded)"
	done >>"$rdata/read.txt"
else
	say "reading: utrace convert --format ctf, --format sqlite, $READ_RUNS runs each"
	for ((r = 0; r < READ_RUNS; r++)); do
		rm -rf "$cdir"
		read_time convert-ctf "$r" "$uev" "$utrace" convert -i "$ufile" --format ctf \
			-o "$cdir" || break
	done
	[ -f "$cdir/metadata" ] &&
		echo "READBYTES convert-ctf $(du -sb "$cdir" | cut -f1)" >>"$rdata/read.txt"
	for ((r = 0; r < READ_RUNS; r++)); do
		rm -f "$cdb"
		read_time convert-sqlite "$r" "$uev" "$utrace" convert -i "$ufile" --format sqlite \
			-o "$cdb" || break
	done
	[ -f "$cdb" ] && echo "READBYTES convert-sqlite $(stat -c %s "$cdb")" >>"$rdata/read.txt"
	rm -f "$cdb"
	echo "READBYTES utrace-script $(stat -c %s "$ufile")" >>"$rdata/read.txt"
	if ! command -v babeltrace2 >/dev/null; then
		echo "READSTATUS babeltrace2-ctf skipped (babeltrace2 is not installed)" \
			>>"$rdata/read.txt"
	elif [ -f "$cdir/metadata" ]; then
		say "reading: babeltrace2 on the CTF export, $READ_RUNS runs"
		for ((r = 0; r < READ_RUNS; r++)); do
			read_time babeltrace2-ctf "$r" "$uev" babeltrace2 "$cdir" || break
		done
	fi
	rm -rf "$cdir"
fi
# The exports to one file of the same utrace file: `utrace convert -f FMT`
# into a file beside it (its size, READBYTES, gives the bytes per event),
# timed as the readers above.
for fmt in html json perfetto; do
	name=convert-$fmt
	if ! "$utrace" convert --help 2>/dev/null | grep -qE "^ +$fmt: "; then
		echo "READSTATUS $name skipped (the built utrace cannot convert to $fmt)" \
			>>"$rdata/read.txt"
	elif [ ! -f "$ufile" ] || [ -z "$uev" ]; then
		echo "READSTATUS $name skipped (no utrace trace file was recorded)" >>"$rdata/read.txt"
	else
		say "exporting: utrace convert -f $fmt, $READ_RUNS runs"
		for ((r = 0; r < READ_RUNS; r++)); do
			read_time "$name" "$r" "$uev" "$utrace" convert -f "$fmt" -i "$ufile" \
				-o "$rec/export.$fmt" || break
		done
		[ -f "$rec/export.$fmt" ] &&
			echo "READBYTES $name $(stat -c %s "$rec/export.$fmt")" >>"$rdata/read.txt"
		rm -f "$rec/export.$fmt"
	fi
done
if [ -z "${BENCH_KEEP_TRACES:-}" ]; then
	rm -rf "$rec"
fi

# --------------------------------------------------------------- report
end=$(date +%s)
{
	echo "seconds $((end - start))"
	echo "load_start $load_start"
	echo "load_end $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
	echo "n $N"
	echo "runs $RUNS"
	echo "cg_n $CG_N"
	echo "lttng_on_n $LTTNG_ON_N"
	echo "lttng_on_runs $LTTNG_ON_RUNS"
	echo "lttng_on_cg_n $LTTNG_ON_CG_N"
	echo "rec_n $REC_N"
	echo "rec_runs $REC_RUNS"
	echo "rec_cg_n $REC_CG_N"
	echo "long_secs $LONG_SECS"
	echo "read_runs $READ_RUNS"
	echo "lat_pairs $LAT_PAIRS"
	echo "filt_n $FILT_N"
	echo "filt_runs $FILT_RUNS"
	echo "filt_cg_n $FILT_CG_N"
	echo "ctl_toggles $CTL_TOGGLES"
	echo "cc $CC"
	echo "clang $CLANG"
} >"$data/params.txt"
# The section of bench/fastpath.sh (before/after of the inlined writer)
# is its own run's: keep it, and the sections after it (the recorder's,
# the probe engine's, the stacks': measured by hand or by their own
# scripts, which this run does not redo).
fp=
if [ -f "$here/RESULTS.md" ]; then
	fp=$(sed -n '/^<!-- fastpath: begin -->$/,$p' "$here/RESULTS.md")
fi
"$PYTHON" "$here/report.py" "$data" "$here/RESULTS.md" "$top" "$build"
[ -n "$fp" ] && printf '\n%s\n' "$fp" >>"$here/RESULTS.md"
say "wrote $here/RESULTS.md"
