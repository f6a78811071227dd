#!/usr/bin/env bash
# utrace enter: a command that sees a process's tree as /sys/kernel/tracing,
# used as a user would (cat, echo, trace-cmd), and nothing changed outside.
. "$(dirname "$0")/lib.sh"

need_fuse
if [ "$(id -u)" != 0 ] && ! unshare -Ur true 2> /dev/null; then
	skip_all "not root, and unprivileged user namespaces are off"
fi

export UTRACE_RUNTIME_DIR="$TMP/run"
SP=
cleanup() {
	[ -n "$SP" ] && kill "$SP" 2> /dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
LOG="$TMP/sample.log"
"$SAMPLE" --run 0 --log "$LOG" > /dev/null 2> "$TMP/sample.err" &
SP=$!
wait_traceable "$SP" "$TMP/sample.err"
T=/sys/kernel/tracing
before=$(ls -d /tmp/utrace-enter.* 2> /dev/null | wc -l)

if ! "$UTRACE" enter -p "$SP" -- true 2> "$TMP/err"; then
	skip_all "cannot enter here: $(head -n 1 "$TMP/err")"
fi

check "available_events there is the program's" bash -c '
	"$1" enter -p "$2" -- cat /sys/kernel/tracing/available_events > "$3/in" &&
	"$1" list -p "$2" > "$3/list" && grep -qx "demo:demo_request" "$3/in" &&
	[ "$(wc -l < "$3/in")" = "$(grep -c . "$3/list")" ]' _ "$UTRACE" "$SP" "$TMP"
check "/sys/kernel/debug/tracing too, where debugfs is mounted" bash -c '
	grep -q " /sys/kernel/debug debugfs " /proc/mounts || exit 0
	"$1" enter -p "$2" -- cat /sys/kernel/debug/tracing/available_events |
		grep -qx "demo:demo_request"' _ "$UTRACE" "$SP"
check "echo into set_event there, the events come: trace there and utrace show" bash -c '
	"$1" enter -p "$2" -- sh -c "echo demo:demo_request > $4/set_event" &&
	wait_for has_lines "$3" $(( $(log_lines "$3") + 3 )) &&
	"$1" enter -p "$2" -- cat $4/trace > "$5/trace" &&
	grep -q "demo_request: id=" "$5/trace" &&
	"$1" show -p "$2" | grep -q "demo_request: id=" &&
	"$1" enter -p "$2" -- cat $4/set_event | grep -qx "demo:demo_request"' \
	_ "$UTRACE" "$SP" "$LOG" "$T" "$TMP"
check "outside, /sys/kernel/tracing is untouched" bash -c '
	! grep -q "^demo:" /sys/kernel/tracing/available_events 2> /dev/null &&
	! grep -q " /sys/kernel/tracing fuse" /proc/mounts'
check "the command's exit status is enter's; a signal gives 128+N" bash -c '
	"$1" enter -p "$2" -- sh -c "exit 7"; [ $? = 7 ] &&
	"$1" enter -p "$2" -- sh -c "kill -TERM \$\$"; [ $? = 143 ]' _ "$UTRACE" "$SP"
check "no -p: usage error 129; a process that is not traceable: 1, one line" bash -c '
	"$1" enter -- true 2> "$2/e1"; [ $? = 129 ] && grep -q "no process given" "$2/e1" &&
	"$1" enter -p $$ -- true 2> "$2/e2"; [ $? = 1 ] && [ "$(wc -l < "$2/e2")" = 1 ] &&
	grep -q "not traceable" "$2/e2"' _ "$UTRACE" "$TMP"
# A killed enter cannot unmount: its mount server, alone in enter's mount
# namespace, must end by itself (--exit-with) or it stays for good.
check "a SIGKILLed enter leaves no mount server and no command behind" bash -c '
	"$1" enter -p "$2" -- sleep 61.25 &
	e=$!
	wait_for pgrep -f "mount --exit-with $e " > /dev/null &&
	wait_for pgrep -fx "sleep 61.25" > /dev/null || exit 1
	kill -KILL $e; wait $e
	pkill -fx "sleep 61.25"
	wait_for bash -c "! pgrep -f \"[m]ount --exit-with $e \" > /dev/null"' _ "$UTRACE" "$SP"
check "no mount or directory is left behind" bash -c '
	[ "$(ls -d /tmp/utrace-enter.* 2> /dev/null | wc -l)" = "$1" ] &&
	! grep -q "utrace-enter" /proc/mounts' _ "$before"

if command -v trace-cmd > /dev/null; then
	check "trace-cmd list -e: the program's events" bash -c '
		"$1" enter -p "$2" -- trace-cmd list -e > "$3/tc-list" 2> "$3/err" &&
		grep -qx "demo:demo_request" "$3/tc-list" &&
		cmp -s <(sort "$3/tc-list") <(sort "$3/in")' _ "$UTRACE" "$SP" "$TMP"
	check "trace-cmd show: the trace" bash -c '
		"$1" enter -p "$2" -- trace-cmd show > "$3/tc-show" 2> "$3/err" &&
		head -n 1 "$3/tc-show" | grep -qx "# tracer: nop" &&
		grep -q "demo_request: id=" "$3/tc-show"' _ "$UTRACE" "$SP" "$TMP"
	# Without -d, trace-cmd start, record and stream write 1 to
	# /proc/sys/kernel/ftrace_enabled (set_ftrace_proc()) and stop ("Can't
	# enable ftrace") where they cannot: enter gives the command a copy of
	# its own (issue 28 item 17)
	check "/proc/sys/kernel/ftrace_enabled: the command's own, writable; the kernel's untouched" bash -c '
		[ -e /proc/sys/kernel/ftrace_enabled ] || exit 0
		was=$(cat /proc/sys/kernel/ftrace_enabled)
		[ "$("$1" enter -p "$2" -- sh -c "cat /proc/sys/kernel/ftrace_enabled &&
			echo 0 > /proc/sys/kernel/ftrace_enabled &&
			cat /proc/sys/kernel/ftrace_enabled" 2> "$3/err" | tr "\n" " ")" = "$was 0 " ] &&
		[ "$(cat /proc/sys/kernel/ftrace_enabled)" = "$was" ] &&
		[ ! -s "$3/err" ]' _ "$UTRACE" "$SP" "$TMP"
	check "trace-cmd start (no -d), show, stop, reset" bash -c '
		"$1" disable -p "$2" "*:*" > /dev/null &&
		"$1" enter -p "$2" -- sh -c "trace-cmd start -e demo:demo_tick &&
			cat $4/set_event" > "$3/tc-start" 2> "$3/err" &&
		grep -qx "demo:demo_tick" "$3/tc-start" &&
		wait_for bash -c "\"\$1\" show -p \$2 | grep -q demo_tick:" _ "$1" "$2" &&
		"$1" enter -p "$2" -- trace-cmd show 2>> "$3/err" | grep -q "demo_tick: count=" &&
		"$1" enter -p "$2" -- sh -c "trace-cmd stop && trace-cmd reset" 2>> "$3/err"' \
		_ "$UTRACE" "$SP" "$TMP" "$T"
	check "trace-cmd record (no -d), report: the program's events" bash -c '
		rm -f "$3/rec0.dat" &&
		"$1" enter -p "$2" -- trace-cmd record -e "demo:*" -o "$3/rec0.dat" sleep 1 \
			> "$3/tc-rec" 2> "$3/err" &&
		trace-cmd report -i "$3/rec0.dat" 2>> "$3/err" | grep -q "demo_tick: *count=" &&
		"$1" enter -p "$2" -- trace-cmd reset > /dev/null 2>> "$3/err"' \
		_ "$UTRACE" "$SP" "$TMP"
	check "trace-cmd stream (no -d): the events as they come" bash -c '
		"$1" enter -p "$2" -- timeout -s INT 3 trace-cmd stream -e demo:demo_tick \
			> "$3/tc-stream" 2> "$3/err"
		grep -q "demo_tick: *count=" "$3/tc-stream" &&
		! grep -q "Can.t enable ftrace" "$3/err" &&
		"$1" enter -p "$2" -- trace-cmd reset > /dev/null 2>> "$3/err"' \
		_ "$UTRACE" "$SP" "$TMP"
	check "trace-cmd start -d, show, stop, reset" bash -c '
		"$1" disable -p "$2" "*:*" > /dev/null &&
		"$1" enter -p "$2" -- sh -c "trace-cmd start -d -e demo:demo_tick &&
			cat $4/set_event" > "$3/tc-start" 2> "$3/err" &&
		grep -qx "demo:demo_tick" "$3/tc-start" &&
		wait_for bash -c "\"\$1\" show -p \$2 | grep -q demo_tick:" _ "$1" "$2" &&
		"$1" enter -p "$2" -- trace-cmd show 2>> "$3/err" | grep -q "demo_tick: count=" &&
		"$1" enter -p "$2" -- sh -c "trace-cmd stop && cat $4/tracing_on" > "$3/tc-stop" 2>> "$3/err" &&
		[ "$(cat "$3/tc-stop")" = 0 ] &&
		"$1" enter -p "$2" -- sh -c "trace-cmd reset && cat $4/set_event $4/tracing_on" \
			> "$3/tc-reset" 2>> "$3/err" && [ "$(cat "$3/tc-reset")" = 1 ]' \
		_ "$UTRACE" "$SP" "$TMP" "$T"
	check "trace-cmd record -d, report: the program's events" bash -c '
		rm -f "$3/rec.dat" &&
		"$1" enter -p "$2" -- trace-cmd record -d -e "demo:*" -o "$3/rec.dat" sleep 1 \
			> "$3/tc-rec" 2> "$3/err" &&
		trace-cmd report -i "$3/rec.dat" > "$3/tc-report" 2>> "$3/err" &&
		grep -q "demo_tick: *count=" "$3/tc-report" &&
		"$1" enter -p "$2" -- trace-cmd reset > /dev/null 2>> "$3/err"' \
		_ "$UTRACE" "$SP" "$TMP"
	# trace-cmd (up to 3.1) reads /proc/kallsyms twice, for its size and
	# then its text, and gives up when they differ; it changes whenever a
	# BPF program comes or goes anywhere on the machine (under load,
	# "error in size of file '/proc/kallsyms'").  enter gives the command
	# a copy taken at its start, and a copy of kptr_restrict, which
	# trace-cmd sets to 0 and back (issue 27 item 10).
	if python3 "$UTRACE_SRC/tests/cli/bpf-churn.py" --check 2> /dev/null; then
		rm -f "$TMP/churn.stop"
		python3 "$UTRACE_SRC/tests/cli/bpf-churn.py" "$TMP/churn.stop" > "$TMP/churn.out" &
		churn=$!
		wait_for grep -q ready "$TMP/churn.out"
		check "BPF programs come and go: /proc/kallsyms changes outside, not in enter" bash -c '
			a=$(wc -c < /proc/kallsyms); b=$a
			for i in $(seq 50); do b=$(wc -c < /proc/kallsyms); [ "$b" != "$a" ] && break; done
			[ "$a" != "$b" ] || { echo "# outside: no change seen" >&2; exit 1; }
			"$1" enter -p "$2" -- sh -c "a=\$(wc -c < /proc/kallsyms); sleep 0.3;
				b=\$(wc -c < /proc/kallsyms); [ \$a = \$b ] && [ \$a -gt 0 ]"' \
			_ "$UTRACE" "$SP"
		check "trace-cmd record -d while BPF programs come and go (3 times)" bash -c '
			for i in 1 2 3; do
				rm -f "$3/k.dat"
				"$1" enter -p "$2" -- trace-cmd record -d -e "demo:*" -o "$3/k.dat" \
					sleep 0.3 > /dev/null 2> "$3/err" || exit 1
				trace-cmd report -i "$3/k.dat" 2>> "$3/err" | grep -q "demo_tick: *count=" ||
					exit 1
			done
			"$1" enter -p "$2" -- trace-cmd reset > /dev/null 2>> "$3/err"' \
			_ "$UTRACE" "$SP" "$TMP"
		touch "$TMP/churn.stop"
		wait "$churn"
	else
		n=$((n + 1)); echo "ok $n # SKIP no BPF here (root, a JIT and bpf_jit_kallsyms)"
		n=$((n + 1)); echo "ok $n # SKIP no BPF here (root, a JIT and bpf_jit_kallsyms)"
	fi
	check "kptr_restrict written in enter stays there" bash -c '
		before=$(cat /proc/sys/kernel/kptr_restrict)
		"$1" enter -p "$2" -- sh -c "grep -q \" /proc/sys/kernel/kptr_restrict \" /proc/mounts &&
			echo \$(( (\$(cat /proc/sys/kernel/kptr_restrict) + 1) % 3 )) > /proc/sys/kernel/kptr_restrict" &&
		[ "$(cat /proc/sys/kernel/kptr_restrict)" = "$before" ]' _ "$UTRACE" "$SP"
	# trace-cmd record splices per_cpu/cpuN/trace_pipe_raw after a
	# select(): the mount stores the pages in the file's cache there, so
	# its per-CPU files grow while it runs (on kernels without "fuse: use
	# copy_splice_read() for FOPEN_DIRECT_IO" splice read nothing until
	# the end); every event once, in order (a page read in two parts by
	# two CPUs' readers lost the first part before)
	check "trace-cmd record: events come while it runs (splice), each once" bash -c '
		rm -f "$3"/live.dat* "$3/stop"
		from=$(log_lines "$4")
		"$1" enter -p "$2" -- trace-cmd record -d -e demo:demo_request -s 100000 \
			-o "$3/live.dat" sh -c "while [ ! -e $3/stop ]; do sleep 0.1; done" \
			> "$3/tc-live" 2> "$3/err" &
		rec=$!
		grown() { [ "$(cat "$1"/live.dat.cpu* 2> /dev/null | wc -c)" -gt 0 ]; }
		wait_for grown "$3"; got=$?
		running=no; kill -0 $rec 2> /dev/null && [ ! -s "$3/live.dat" ] && running=yes
		touch "$3/stop"; wait $rec || exit 1
		[ $got = 0 ] && [ $running = yes ] || { echo "# no data while recording"; exit 1; }
		trace-cmd report -i "$3/live.dat" 2>> "$3/err" |
			sed -nE "s/.*demo_request: +id=([0-9]+) .*/\1/p" > "$3/live-ids" &&
		[ "$(wc -l < "$3/live-ids")" -gt 5 ] &&
		[ "$(tail -n 1 "$3/live-ids")" -ge "$from" ] &&
		# (what the buffer held from before has older ids)
		sort -n "$3/live-ids" | awk -v f="$from" "\$1 < f { next }
			n++ && \$1 != p + 1 { bad = 1 } { p = \$1 } END { exit bad || n < 5 }" ||
		{ echo "# ids from $from not each once: $(sort -n "$3/live-ids" | tr "\n" " " | head -c 300)"; exit 1; }
		"$1" enter -p "$2" -- trace-cmd reset > /dev/null 2>> "$3/err"' \
		_ "$UTRACE" "$SP" "$TMP" "$LOG"
	# extract takes the pages per_cpu/cpuN/trace_pipe_raw gives, in ns:
	# the same events at the same times as utrace show prints
	check "trace-cmd extract, report: the times of utrace show" bash -c '
		rm -f "$3/ext.dat" &&
		"$1" enter -p "$2" -- trace-cmd start -d -e demo:demo_tick > /dev/null 2> "$3/err" &&
		wait_for bash -c "\"\$1\" show -p \$2 | grep -q demo_tick:" _ "$1" "$2" &&
		"$1" enter -p "$2" -- trace-cmd stop 2>> "$3/err" &&
		"$1" show -p "$2" | grep -o "[0-9]*\.[0-9]*: demo_tick: count=[0-9]*" | sort > "$3/ext-show" &&
		"$1" enter -p "$2" -- trace-cmd extract -o "$3/ext.dat" > /dev/null 2>> "$3/err" &&
		trace-cmd report -i "$3/ext.dat" 2>> "$3/err" |
			grep -o "[0-9]*\.[0-9]*: demo_tick: *count=[0-9]*" | sed "s/: */: /g" |
			sort > "$3/ext-report" &&
		[ -s "$3/ext-show" ] && cmp "$3/ext-show" "$3/ext-report" &&
		"$1" enter -p "$2" -- trace-cmd reset > /dev/null 2>> "$3/err"' \
		_ "$UTRACE" "$SP" "$TMP"
else
	echo "# trace-cmd is not installed: its checks are skipped"
fi

"$UTRACE" disable -p "$SP" 'demo:*' > /dev/null 2>&1
done_testing
