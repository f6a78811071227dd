# SPDX-License-Identifier: MIT
# Shared helpers of the end-to-end tests (after git's t/test-lib.sh).
# Each tNNNN-*.sh sources this, runs checks with 'check', and ends with
# 'done_testing'.  UTRACE_BUILD and UTRACE_SRC come from meson.
set -u
: "${UTRACE_BUILD:?run through meson test}"
: "${UTRACE_SRC:?run through meson test}"
UTRACE="$UTRACE_BUILD/tools/utrace/utrace"
SAMPLE="$UTRACE_BUILD/samples/sample"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/utrace-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset UTRACE_EVENTS UTRACE_PRINT
n=0
failed=0

check() {
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		# what the failing step said, for the log
		[ -s "$TMP/err" ] && sed 's/^/# /' "$TMP/err" | tail -n 30
		failed=$((failed + 1))
	fi
}

# same FILE EXPECTED-FILE: compare, showing the difference
same() {
	if ! diff -u "$2" "$1" >&2; then
		return 1
	fi
}

# Trace lines without the parts that change from run to run: pid, CPU and
# timestamp ("            comm-pid     [cpu] ..... sec.usec: rest").
normalize() {
	sed -E 's/^ *([^ ]+)-[0-9]+ +\[[0-9]{3}\] (.....) +[0-9]+\.[0-9]{6}: /\1-PID [CPU] \2 TIME: /' "$@"
}

done_testing() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit $?
}
