#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/keepup.sh - does `utrace record` keep up with a 10 M-event burst
# from one thread, with the default options, on a quiet machine and with
# two busy loops beside it?  Lost events and the recorder's CPU per event,
# for this tree and (BENCH_BEFORE=REV) for an older commit in the same
# run; writes its section of bench/RESULTS.md (bench/run.sh keeps it).
# Takes about a minute per round on two cores.
#
# Knobs (environment):
#   BENCH_BEFORE=REV        also build and measure commit REV ("before")
#   BENCH_KEEPUP_N=10000000 events of each burst
#   BENCH_KEEPUP_ROUNDS=5   rounds (each: every build, quiet then loaded)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
out=$here/out
build=$out/build
N=${BENCH_KEEPUP_N:-10000000}
ROUNDS=${BENCH_KEEPUP_ROUNDS:-5}
PYTHON=${PYTHON:-python3}

say() { printf 'keepup: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

for tool in meson ninja git "$PYTHON"; do
	command -v "$tool" >/dev/null || die "$tool is missing"
done
unset UTRACE_EVENTS UTRACE_PRINT UTRACE_BUFFER_SIZE UTRACE_BUFFER_MAX UTRACE_MODE
mkdir -p "$out"
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

# $1: source tree, $2: build directory
build_tree() {
	if [ -f "$2/build.ninja" ]; then
		meson configure "$2" -Dbench=true -Dtests=false >/dev/null
	else
		meson setup "$2" "$1" -Dbench=true -Dtests=false >"$out/keepup-setup.log" 2>&1 ||
			{ cat "$out/keepup-setup.log" >&2; die "meson setup of $1 failed"; }
	fi
	ninja -C "$2" tools/utrace/utrace bench/bench-record-utrace >"$out/keepup-ninja.log" 2>&1 ||
		{ cat "$out/keepup-ninja.log" >&2; die "the build in $2 failed"; }
}

say "building in $build"
build_tree "$top" "$build"
cases=("after:$build/tools/utrace/utrace:$build/bench/bench-record-utrace")
before=
if [ -n "${BENCH_BEFORE:-}" ]; then
	before=$(git -C "$top" rev-parse --short "$BENCH_BEFORE") ||
		die "BENCH_BEFORE: '$BENCH_BEFORE' is not a commit"
	src=$out/before-src
	# A build of another commit is started over: git archive gives the
	# files their commit's time, which ninja would take for up to date.
	if [ "$(cat "$out/before/keepup-commit" 2>/dev/null)" != "$before" ]; then
		rm -rf "$src" "$out/before"
		mkdir -p "$src"
		git -C "$top" archive "$before" | tar -x -C "$src"
	fi
	say "building $before in $out/before"
	build_tree "$src" "$out/before"
	echo "$before" >"$out/before/keepup-commit"
	cases=("before:$out/before/tools/utrace/utrace:$out/before/bench/bench-record-utrace"
	       "${cases[@]}")
fi
after=$(git -C "$top" rev-parse --short HEAD)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then
	after="$after+changes"
fi

data=$out/keepup.txt
: >"$data"
say "$ROUNDS rounds of a $N-event burst: ${#cases[@]} build(s), quiet and with 2 busy loops"
"$PYTHON" "$here/keepup.py" run "$data" "$ROUNDS" "$N" "$out/keepup.dat" "${cases[@]}"
"$PYTHON" "$here/keepup.py" report "$data" "$here/RESULTS.md" "n=$N" "rounds=$ROUNDS" \
	"before=$before" "after=$after" "load=$load" \
	"date=$(date -u '+%Y-%m-%d %H:%M UTC')"
say "wrote its section of $here/RESULTS.md (data: $data)"
