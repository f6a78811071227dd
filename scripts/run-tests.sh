#!/usr/bin/env bash
# The whole test suite: gcc and clang builds (warnings are errors), then
# the tests again under AddressSanitizer + UndefinedBehaviorSanitizer, and
# the concurrency tests under ThreadSanitizer.  Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
passed=0
failed=0
log=$root/build-tests.log
: > "$log"

# run NAME BUILDDIR 'meson setup options' 'meson test options'
run() {
	local name=$1 dir=$2 setup=$3 testopts=$4
	echo "== $name"
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		if ! meson setup "$dir" $setup >> "$log" 2>&1; then
			echo "$name: meson setup failed (see $log)"
			failed=$((failed + 1))
			return
		fi
	fi
	if ! ninja -C "$dir" >> "$log" 2>&1; then
		echo "$name: build failed (see $log)"
		grep -E "error|FAILED" "$log" | tail -20
		failed=$((failed + 1))
		return
	fi
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs $testopts 2>&1 | tee -a "$log" |
		grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):'
	local json=$dir/meson-logs/testlog.json
	local p f
	p=$(python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["result"] in ("OK","SKIP","EXPECTEDFAIL")))' "$json")
	f=$(python3 -c 'import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["result"] not in ("OK","SKIP","EXPECTEDFAIL")))' "$json")
	# a log that cannot be read hides nothing: it counts as a failure
	if ! [[ "$p" =~ ^[0-9]+$ && "$f" =~ ^[0-9]+$ ]]; then
		echo "$name: cannot read $json: counted as one failure"
		p=0
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

run "gcc" build-gcc "" ""
# The compile tests drive gcc and clang themselves: once is enough; so
# are the Debian packages (suite package), built from the tree itself.
# The kernel conformance run (suite ctl) tests the kernel: once too.
# The churn test's five runs of 3,000 threads are the gcc build's; two
# runs show the clang-built writer under the same hammer (t0011 took 297 s
# of the clang leg with five, on a loaded machine).
UTRACE_CHURN_RUNS=2 CC=clang CXX=clang++ run "clang" build-clang "" "--no-suite compile --no-suite ctl --no-suite package"
# Records are 4-byte aligned, as in the kernel's ring buffer, so 8-byte
# fields are stored at 4-byte aligned addresses (fine on x86-64): UBSan's
# alignment check is left out; every other check stops the test.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run "gcc, ASan+UBSan" build-asan "-Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fno-sanitize=alignment -Dcpp_args=-fno-sanitize=alignment" "--no-suite compile --no-suite ctl --no-suite package"
# A fork child of a traced process starts its own control agent thread
# (as LTTng-UST starts its listener threads after fork); TSan refuses
# threads started after a multi-threaded fork unless told otherwise.
export TSAN_OPTIONS=die_after_fork=0
run "gcc, TSan (concurrency tests)" build-tsan "-Db_sanitize=thread -Db_lundef=false" "--suite concurrency"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
