#!/usr/bin/env bash
# Issue 28 item 4: a user who may not read the kernel's tracefs records
# the kernel's fork event of a shell, as perf's tracepoint example does:
#   utrace record -e sched:sched_process_fork -- bash -c '...'
# Nothing of what -e asked for can be recorded there: utrace says why
# (tracefs not readable) and exits 1, as perf fails, instead of exiting 0
# with 0 events and no word.  Run as nobody when the test is root.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# as_user CMD...: CMD as a user without access to tracefs
if [ "$(id -u)" = 0 ]; then
	command -v setpriv > /dev/null || skip_all "setpriv is missing (util-linux)"
	NB=65534
	chmod 711 "$TMP"
	mkdir -m 777 "$TMP/nb"
	mkdir -m 700 "$TMP/nb/run" && chown "$NB:$NB" "$TMP/nb/run"
	as_user() {
		setpriv --reuid=$NB --regid=$NB --clear-groups \
			env UTRACE_RUNTIME_DIR="$TMP/nb/run" "$@"
	}
	as_user test -x "$UTRACE" || skip_all "the build is not readable by uid $NB"
	as_user test -r /sys/kernel/tracing/events/sched &&
		skip_all "uid $NB may read tracefs here"
else
	[ -w /sys/kernel/tracing/instances ] && skip_all "this user may write tracefs"
	mkdir -m 700 "$TMP/nb" "$TMP/nb/run"
	as_user() { env UTRACE_RUNTIME_DIR="$TMP/nb/run" "$@"; }
fi
cd "$TMP/nb" || exit 1

as_user "$UTRACE" record -e sched:sched_process_fork -- bash -c 'ls > /dev/null; ls > /dev/null' \
	> out.txt 2> err.txt
rc=$?
cp err.txt "$TMP/err"
check "nothing -e asked for could be recorded: exit 1, as perf fails" test "$rc" = 1
check "... saying which entry and why (tracefs not readable)" bash -c '
	grep -qx "utrace record: nothing recorded for '\''sched:sched_process_fork'\''" err.txt &&
	grep -q "^utrace record: if an entry names kernel events (kernel:SYS:EVENT): kernel events need root or read/write access to /sys/kernel/tracing" err.txt'
check "the command ran all the same" grep -q "^utrace record: started pid" err.txt

# a program's own events, named by -e: recorded, status 0 as before
as_user "$UTRACE" record -o req.dat -e 'reqdemo:*' -- "$UTRACE_BUILD/tests/req-demo" 1 \
	> /dev/null 2> "$TMP/err"
check "an entry that matched the program's events: status 0" test $? = 0
# an entry for events the program has not, beside one it has: recorded
as_user "$UTRACE" record -o req2.dat -e 'reqdemo:req_end,sched:sched_process_fork' \
	-- "$UTRACE_BUILD/tests/req-demo" 1 > /dev/null 2> "$TMP/err"
check "one entry of two matched: status 0, the other named" bash -c '
	[ $1 = 0 ] && grep -q "matches '\''sched:sched_process_fork'\''" "$2/err"' _ $? "$TMP"

done_testing
