#!/usr/bin/env bash
# function_graph's options (issue 31 item 2) in the mount's options/, as
# the kernel's trace_functions_graph.c prints them: funcgraph-cpu,
# -overhead, -duration (on by default), -proc, -abstime, -tail, -overrun
# (off), changing the header and the lines of trace while the tracer is
# function_graph (tests/cli/fprofile-prog.c); none in trace_options.
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
need_fuse
mount_setup
fifo_start "$UTRACE_BUILD/tests/fprofile-prog"
"$UTRACE" mount "$MNT" 2> "$TMP/err" || skip_all "no mount here ($(head -n 1 "$TMP/err"))"
D="$MNT/$P"
export D P

# the header's two column lines
hdr() { sed -n 3,4p "$D/trace" | tr "\n" ";"; }
export -f hdr

check "the options are there with the kernel's defaults, not in trace_options" bash -c '
	for o in cpu overhead duration irqs; do [ "$(cat "$D/options/funcgraph-$o")" = 1 ] || exit 1; done &&
	for o in proc abstime tail overrun; do [ "$(cat "$D/options/funcgraph-$o")" = 0 ] || exit 1; done &&
	! grep -q funcgraph "$D/trace_options"'

echo "top slow" > "$D/set_graph_function"
echo function_graph > "$D/current_tracer"
fsend "top 1"
fsend "outer 20"
wait_for grep -q "slow();" "$D/trace"

# (slow() sleeps 20 ms: on a loaded machine it can take over 100 ms, whose
# mark is @, or over 1 s, $; and any function can cross 10 us, +)
check "the defaults: CPU and duration, a mark on 20 ms" bash -c '
	[ "$(hdr)" = "# CPU  DURATION                  FUNCTION CALLS;# |     |   |                     |   |   |   |;" ] &&
	grep -Eq "^ [0-9]+\) +[*@\$] +[0-9]{5,}\.[0-9]{2} us \|  slow\(\);$" "$D/trace" &&
	grep -Eq "^ [0-9]+\) +\|  top\(\) \{$" "$D/trace" &&
	grep -Eq "^ [0-9]+\) +([-+!#*@\$] +)?[0-9.]+ us +\|  \}$" "$D/trace"'

check "funcgraph-proc: TASK/PID, the comm cut to 7 and centred" bash -c '
	echo 1 > "$D/options/funcgraph-proc" &&
	[ "$(hdr)" = "# CPU  TASK/PID         DURATION                  FUNCTION CALLS;# |     |    |           |   |                     |   |   |   |;" ] &&
	grep -Eq "^ [0-9]+\) +fprofil-$P +\| +\|  top\(\) \{$" "$D/trace" &&
	echo 0 > "$D/options/funcgraph-proc"'

check "funcgraph-abstime: the time first" bash -c '
	echo 1 > "$D/options/funcgraph-abstime" &&
	[ "$(hdr)" = "#     TIME        CPU  DURATION                  FUNCTION CALLS;#      |          |     |   |                     |   |   |   |;" ] &&
	grep -Eq "^ *[0-9]+\.[0-9]{6} \|   [0-9]+\) +\|  top\(\) \{$" "$D/trace" &&
	echo 0 > "$D/options/funcgraph-abstime"'

check "nofuncgraph-cpu, nofuncgraph-duration" bash -c '
	echo 0 > "$D/options/funcgraph-cpu" && echo 0 > "$D/options/funcgraph-duration" &&
	[ "$(hdr)" = "#               FUNCTION CALLS;#               |   |   |   |;" ] &&
	grep -qx "top() {" "$D/trace" && grep -qx "    leaf();" "$D/trace" &&
	grep -qx "slow();" "$D/trace" &&
	echo 1 > "$D/options/funcgraph-cpu" && echo 1 > "$D/options/funcgraph-duration"'

check "nofuncgraph-overhead: no mark" bash -c '
	echo 0 > "$D/options/funcgraph-overhead" &&
	grep -Eq "^ [0-9]+\) +[0-9]{5,}\.[0-9]{2} us \|  slow\(\);$" "$D/trace" &&
	echo 1 > "$D/options/funcgraph-overhead"'

check "funcgraph-tail: the function after each }; funcgraph-overrun: the count" bash -c '
	echo 1 > "$D/options/funcgraph-tail" &&
	grep -Eq "^ [0-9]+\) +([-+!#*@\$] +)?[0-9.]+ us +\|  \} /\* top \*/$" "$D/trace" &&
	echo 1 > "$D/options/funcgraph-overrun" &&
	grep -A1 -E "\} /\* top \*/$" "$D/trace" | grep -qx " (Overruns: 0)" &&
	echo 0 > "$D/options/funcgraph-tail" && echo 0 > "$D/options/funcgraph-overrun" &&
	! grep -q "/\*" "$D/trace"'

check "a word is EINVAL" bash -c '! echo 2 > "$D/options/funcgraph-tail" 2> /dev/null'
echo nop > "$D/current_tracer"
exec 3>&-

done_testing
