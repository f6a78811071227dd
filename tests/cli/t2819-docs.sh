#!/usr/bin/env bash
# Issue 28 item 19: what the docs say is what utrace does.
#  - README said "Coming next: CTF export, dynamic probes": both exist;
#  - utrace-record(1) said both that kernel events are filtered by
#    --filter and that they are recorded unfiltered (the first is true:
#    checked on the kernel when this runs as root);
#  - README and utrace-report(1) gave report's speed as 50 and 30 million
#    events a second; they now give the figures measured for the design
#    notes (not timed here: a test does not assert speed), and the same.
. "$(dirname "$0")/lib.sh"
S="$UTRACE_SRC"
cd "$TMP" || exit 1

check "README promises no CTF export or dynamic probes to come (both exist)" bash -c '
	! grep -qi "coming next.*\(ctf\|dynamic probe\)" "$1/README.md" &&
	"$UTRACE" convert --help | grep -q ctf && "$UTRACE" probe --help > /dev/null' _ "$S"
check "utrace-record(1) does not say kernel events are unfiltered" bash -c '
	! man -l "$1/docs/utrace-record.1" 2> /dev/null | tr -s " \n" "  " |
		grep -qi "kernel events are recorded unfiltered"' _ "$S"

# the kernel filters them: a filter that matches none of the shell's forks
T=/sys/kernel/tracing
if [ "$(id -u)" = 0 ] && [ -w "$T/instances" ]; then
	"$UTRACE" record -o f1.dat -e sched:sched_process_fork -- bash -c 'ls > /dev/null; ls > /dev/null' \
		> /dev/null 2> e1.txt
	"$UTRACE" record -o f2.dat -e sched:sched_process_fork \
		--filter 'sched:sched_process_fork:child_comm == "nomatch"' \
		-- bash -c 'ls > /dev/null; ls > /dev/null' > /dev/null 2> e2.txt
	cp e2.txt "$TMP/err"
	check "--filter on a kernel event: the kernel filters it, as the page says" bash -c '
		grep -q "^utrace record: 2 kernel events" e1.txt &&
		grep -q "^utrace record: 0 kernel events" e2.txt'
else
	n=$((n + 1)); echo "ok $n # SKIP kernel events need root and tracefs"
fi

# report's speed: one figure, the one measured in the design notes
check "README, utrace-report(1) and the design notes give report's speed alike" bash -c '
	r=$(tr -s " \n" "  " < "$1/README.md" | grep -o "at 40 to 50 million events a CPU-second (about 16 with latencies") &&
	m=$(man -l "$1/docs/utrace-report.1" 2> /dev/null | tr -s " \n" "  " |
		grep -o "40 to 50 million events a CPU-second here (by comm and event, or a string field), about 16 million with --latency") &&
	tr -s " \n" "  " < "$1/docs/design-notes.md" |
		grep -q "README and utrace-report(1) now say 40 to 50 M (about 16 with latencies) per CPU-second" &&
	! tr -s " \n" "  " < "$1/README.md" | grep -q "some 50 million events a second"' _ "$S"

done_testing
