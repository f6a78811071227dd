#!/usr/bin/env bash
# The kernel's own ftracetest (tools/testing/selftests/ftrace), unchanged,
# run through `utrace enter` against a program with the kernel's sched and
# signal events (ftrace-target): each test is expected to end as
# tests/ftrace/expected.txt says (PASS, or why not), and a test that
# passes there must pass.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "ftracetest runs as root only"
need_fuse

# The kernel's selftests: UTRACE_FTRACETEST names the directory, else
# they come out of Debian's linux-source package (lib.sh).
FT=${UTRACE_FTRACETEST:-}
if [ -z "$FT" ]; then
	kernel_source tools/testing/selftests/ftrace
	FT=$KSRC/tools/testing/selftests/ftrace
fi
[ -x "$FT/ftracetest" ] || skip_all "no ftracetest in $FT"
EXPECTED=$UTRACE_SRC/tests/ftrace/expected.txt

export UTRACE_RUNTIME_DIR="$TMP/run"
TP=
cleanup() {
	[ -n "$TP" ] && kill "$TP" 2> /dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
# The target at a higher priority (root): the trigger tests set a
# trigger, fork once and look at tracing_on a few ms later, so one of the
# target's events must come in between, which on a loaded machine (two
# busy loops beside CI) a target at the same priority as them missed.
nice -n -10 "$UTRACE_BUILD/tests/ftrace-target" 2> "$TMP/target.err" &
TP=$!
wait_traceable "$TP" "$TMP/target.err"

if ! timeout 60 "$UTRACE" enter -p "$TP" -- true 2> "$TMP/err"; then
	skip_all "cannot enter here: $(head -n 1 "$TMP/err")"
fi
# ftracetest takes the first tracefs of /proc/mounts: inside, the
# program's tree.  Its logs stay in $TMP.
# A run takes 20 to 40 s here; one that takes 240 s is stuck: say where
# (the test it was in, its log, the threads and their wait channels), end
# it, and run ftracetest once more (two CI-like runs under load were
# stuck here, with no output to tell why; none of some 60 runs since).
ftracetest_run() {
	local ftp
	rm -rf "$TMP/logs"
	(cd "$FT" && exec timeout -s KILL 300 "$UTRACE" enter -p "$TP" -- ./ftracetest -l "$TMP/logs") \
		> "$TMP/out" 2>&1 &
	ftp=$!
	for _ in $(seq 480); do
		kill -0 "$ftp" 2> /dev/null || break
		sleep 0.5
	done
	if ! kill -0 "$ftp" 2> /dev/null; then
		wait "$ftp" 2> /dev/null
		return 0
	fi
	echo "# ftracetest stuck after 240 s; its last lines:"
	tail -n 5 "$TMP/out" | sed 's/^/#   /'
	last=$(ls -t "$TMP"/logs/*.log 2> /dev/null | head -n 1)
	[ -n "$last" ] && { echo "# the log of the test it was in ($last):"; tail -n 30 "$last" | sed 's/^/#   /'; }
	echo "# threads (pid tid state wchan command):"
	ps -eLo pid,tid,stat,wchan:32,args | grep -E "utrace|ftrace|mkdir|rmdir|cat|sh" |
		grep -v grep | head -n 80 | sed 's/^/#   /'
	pkill -KILL -P "$ftp" 2> /dev/null
	kill -KILL "$ftp" 2> /dev/null
	wait "$ftp" 2> /dev/null
	return 1
}
ftracetest_run || { echo "# ftracetest: a second run"; ftracetest_run; }
# "[N] (instance)  description	[RESULT]" -> "RESULT<TAB>description"
sed -nE 's/^\[[0-9]+\] (.*)\t\[([A-Z]+)\]$/\2\t\1/p' "$TMP/out" > "$TMP/results"
grep '^# of ' "$TMP/out" | sed 's/^/# /'

check "ftracetest ran every test" bash -c '
	[ "$(wc -l < "$1/results")" -ge 100 ] && grep -q "^# of passed:" "$1/out"' _ "$TMP"

# The trigger tests look at tracing_on a few ms after the trigger's write
# and the shell's fork: the target's event must come in that window, and on
# a loaded machine (CI beside other work) it sometimes does not, as the
# nice above only makes rarer.  So a test expected to pass that did not is
# run once more (the whole ftracetest, its results file apart): it counts
# as passing when it passed then, and says so.
expected_pass_failed() {
	while IFS=$'\t' read -r want desc why; do
		[ "$want" = PASS ] || continue
		[ "${why#needs ping}" != "$why" ] && ! command -v ping > /dev/null && continue
		[ "$(awk -F'\t' -v d="$desc" '$2 == d { print $1; exit }' "$1")" = PASS ] || return 0
	done < "$EXPECTED"
	return 1
}
if expected_pass_failed "$TMP/results"; then
	mv "$TMP/out" "$TMP/out.1"
	echo "# ftracetest: a test expected to pass did not: a second run"
	ftracetest_run || ftracetest_run
	sed -nE 's/^\[[0-9]+\] (.*)\t\[([A-Z]+)\]$/\2\t\1/p' "$TMP/out" > "$TMP/results.2"
	mv "$TMP/out.1" "$TMP/out"
fi
touch "$TMP/results.2"

# Each expected result: "RESULT<TAB>description<TAB>why" (# comments).
while IFS=$'\t' read -r want desc why; do
	case $want in ''|'#'*) continue ;; esac
	got=$(awk -F'\t' -v d="$desc" '$2 == d { print $1; exit }' "$TMP/results")
	if [ "$want" = PASS ] && [ "${why#needs ping}" != "$why" ] && ! command -v ping > /dev/null; then
		echo "# ftracetest: $desc: $got (no ping here; $why)"
	elif [ "$want" = PASS ]; then
		if [ "$got" != PASS ]; then
			got2=$(awk -F'\t' -v d="$desc" '$2 == d { print $1; exit }' "$TMP/results.2")
			[ "$got2" = PASS ] && echo "# ftracetest: $desc: $got, then PASS on the second run"
			got=$got2
		fi
		check "ftracetest: $desc" [ "$got" = PASS ]
	elif [ "$got" = PASS ]; then
		echo "# ftracetest: $desc now passes (expected $want: $why): update tests/ftrace/expected.txt"
	else
		echo "# ftracetest: $desc: $got ($why)"
	fi
done < "$EXPECTED"
# Anything that failed and is not listed is a new failure.
check "no failure that tests/ftrace/expected.txt does not explain" bash -c '
	awk -F"\t" "\$1 == \"FAIL\" || \$1 == \"UNRESOLVED\" { print \$2 }" "$1/results" |
	while IFS= read -r d; do
		grep -qF "	$d	" "$2" || { echo "# unexplained: $d" >&2; exit 1; }
	done' _ "$TMP" "$EXPECTED"

done_testing
