#!/usr/bin/env bash
# The traced program sees what it sees without utrace (issue 28, item 10):
# a preloaded cat opens its file as descriptor 3, as without libutrace
# (it was 12: the agent's socket and pipes, the pool, the recorder's
# socket came first); utrace's own descriptors sit at 1000 and above; the
# agent is one thread named utrace-agent; and in a kernel trace of a
# libutrace program the agent's birth reads comm=utrace-agent
# child_comm=utrace-agent, apart from the program's own forks (root and
# tracefs for that part).
. "$(dirname "$0")/lib.sh"
LIB="$UTRACE_BUILD/lib/libutrace.so"
RB="$UTRACE_BUILD/tests/rb-stress"
# A sanitizer build's libutrace.so preloaded into a program that is not
# one: the sanitizers' runtimes first (as t0061 runs its programs).
san_pre=$(ldd "$LIB" 2> /dev/null |
	awk '/lib(a|ub|t)san\.so/ { printf "%s%s", sep, $3; sep = ":" }')
PRE=$LIB
if [ -n "$san_pre" ]; then
	PRE="$san_pre:$LIB"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0"
fi
# utrace record preloads libutrace itself, before what LD_PRELOAD holds
with_san() {
	if [ -n "$san_pre" ]; then
		env LD_PRELOAD="$san_pre" "$@"
	else
		"$@"
	fi
}
export UTRACE_RUNTIME_DIR="$TMP/rt"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
echo hello > "$TMP/file"

# What the user ran: a return probe on libc's open() in cat, recorded.
cat_fd() {
	with_san "$UTRACE" record -o "$TMP/cat.dat" \
		--probe 'r:fdt/open_ret libc.so.6:open $retval:s32' \
		-- cat "$TMP/file" > "$TMP/out" 2> "$TMP/err" &&
	[ "$(cat "$TMP/out")" = hello ] &&
	"$UTRACE" script -i "$TMP/cat.dat" > "$TMP/script" 2>> "$TMP/err" &&
	grep -q ' open_ret: .* arg1=3$' "$TMP/script" || {
		cat "$TMP/script" >> "$TMP/err"; return 1; }
}
check "utrace record --probe: cat opens its file as descriptor 3 (a pool and a recorder beside)" cat_fd

# A preloaded cat held open on a FIFO: its file is descriptor 3, utrace's
# descriptors are 1000 and above, and below 1000 it has what a cat without
# libutrace has (what this shell passes down too).
mkfifo "$TMP/fifo"
low_fds() { # PID: its descriptors below 1000 (fd 3 is checked by fd3)
	ls "/proc/$1/fd" | awk '$1 < 1000' | sort -n
}
held_cat() { # NAME COMMAND...: start it (a cat on the FIFO), then hold the FIFO (fd 7)
	local name=$1
	shift
	"$@" > "$TMP/$name.out" 2>> "$TMP/err" &
	eval "${name}_pid=$!"
	# read-write: never blocks, even if the cat is gone already
	exec 7<> "$TMP/fifo"
}
release_cat() { # NAME: write a line, close, wait
	local pid
	eval "pid=\$${1}_pid"
	echo bye >&7
	exec 7>&-
	wait "$pid" && [ "$(cat "$TMP/$1.out")" = bye ]
}
fd3() { [ "$(readlink "/proc/$1/fd/3")" = "$TMP/fifo" ]; }
agent_runs() { cat /proc/"$1"/task/*/comm 2> /dev/null | grep -qx utrace-agent; }
started() { # PID: the agent listens and runs, the program has opened its file
	wait_for fd3 "$1" && wait_for test -S "$UTRACE_RUNTIME_DIR/$1.sock" &&
	wait_for agent_runs "$1"
}
# the tasks: cat and utrace-agent (a sanitizer adds a thread of its own,
# started with the first thread the program starts: named as the agent)
tasks_ok() {
	if [ -z "$san_pre" ]; then
		printf 'cat\nutrace-agent\n' > "$TMP/tasks.expected" &&
		same "$1" "$TMP/tasks.expected"
	else
		grep -qx cat "$1" && grep -qx utrace-agent "$1"
	fi
}
preloaded_view() {
	held_cat plain cat "$TMP/fifo" &&
	wait_for fd3 "$plain_pid" && low_fds "$plain_pid" > "$TMP/plain.fds" &&
	release_cat plain &&
	held_cat pre env LD_PRELOAD="$PRE" cat "$TMP/fifo" &&
	started "$pre_pid" &&
	low_fds "$pre_pid" > "$TMP/pre.fds" &&
	ls /proc/"$pre_pid"/fd > "$TMP/pre.all" &&
	cat /proc/"$pre_pid"/task/*/comm | sort > "$TMP/pre.tasks" &&
	release_cat pre &&
	same "$TMP/pre.fds" "$TMP/plain.fds" &&
	# utrace's: the agent's socket and two pipes (four ends), all high
	[ "$(awk '$1 >= 1000' "$TMP/pre.all" | wc -l)" -ge 5 ] &&
	tasks_ok "$TMP/pre.tasks"
}
check "a preloaded cat: fd 3 is its file, the rest as without utrace, utrace's at 1000+, tasks cat and utrace-agent" preloaded_view

# A soft RLIMIT_NOFILE below 1024: utrace's descriptors go to its upper
# half, the program's still start at 3.
low_limit() {
	held_cat lim sh -c 'ulimit -n 64 && LD_PRELOAD="$1" exec cat "$2"' sh "$PRE" "$TMP/fifo" &&
	started "$lim_pid" &&
	ls /proc/"$lim_pid"/fd > "$TMP/lim.all" &&
	release_cat lim &&
	[ "$(awk '$1 >= 32 && $1 < 64' "$TMP/lim.all" | wc -l)" -ge 5 ]
}
check "ulimit -n 64: utrace's descriptors at 32..63, the program's file at 3" low_limit

# The kernel's fork events of a libutrace program that forks once: two
# processes, so two agents, each born as utrace-agent (a sanitizer's own
# thread too, started with the first); one fork of the program's own.
T=/sys/kernel/tracing
if [ "$(id -u)" -ne 0 ]; then
	n=$((n + 2)); echo "ok $((n - 1)) # SKIP the kernel's sched_process_fork: needs root"
	echo "ok $n # SKIP the kernel's sched_process_fork: needs root"
elif [ ! -e "$T/available_events" ] && ! mount -t tracefs nodev "$T" 2> /dev/null; then
	n=$((n + 2)); echo "ok $((n - 1)) # SKIP the kernel's sched_process_fork: no tracefs at $T"
	echo "ok $n # SKIP the kernel's sched_process_fork: no tracefs at $T"
elif ! grep -qx 'sched:sched_process_fork' "$T/available_events"; then
	n=$((n + 2)); echo "ok $((n - 1)) # SKIP the kernel has no sched:sched_process_fork"
	echo "ok $n # SKIP the kernel has no sched:sched_process_fork"
else
	forks() {
		"$UTRACE" record -o "$TMP/k.dat" -e sched:sched_process_fork -- "$RB" fork 10 \
			> /dev/null 2> "$TMP/err" &&
		"$UTRACE" script -i "$TMP/k.dat" > "$TMP/k.txt" 2>> "$TMP/err" &&
		grep ' sched_process_fork: ' "$TMP/k.txt" > "$TMP/forks" &&
		agents=$(grep -c ' comm=utrace-agent pid=[0-9]* child_comm=utrace-agent ' \
			"$TMP/forks") &&
		[ "$(grep -c ' comm=rb-stress pid=[0-9]* child_comm=rb-stress ' "$TMP/forks")" -eq 1 ] &&
		if [ -z "$san_pre" ]; then
			[ "$agents" -eq 2 ] && [ "$(wc -l < "$TMP/forks")" -eq 3 ]
		else   # (and the sanitizer's own threads, in the recorder's child too)
			[ "$agents" -ge 2 ]
		fi || {
			cat "$TMP/k.txt" >> "$TMP/err"; return 1; }
	}
	check "sched_process_fork: the program's one fork, and each agent's born as utrace-agent" forks

	# the fork-counting user's one command: a kernel filter on child_comm
	own_forks() {
		"$UTRACE" record -o "$TMP/f.dat" -e sched:sched_process_fork \
			-f 'sched:sched_process_fork:child_comm != "utrace-agent"' -- "$RB" fork 10 \
			> /dev/null 2> "$TMP/err" &&
		"$UTRACE" script -i "$TMP/f.dat" > "$TMP/f.txt" 2>> "$TMP/err" &&
		[ "$(grep -c ' sched_process_fork: comm=rb-stress ' "$TMP/f.txt")" -eq 1 ] &&
		! grep -q 'child_comm=utrace-agent' "$TMP/f.txt" &&
		{ [ -n "$san_pre" ] || [ "$(wc -l < "$TMP/f.txt")" -eq 1 ]; } || {
			cat "$TMP/f.txt" >> "$TMP/err"; return 1; }
	}
	check "record -f 'child_comm != \"utrace-agent\"': the program's forks, counted right" own_forks
fi

done_testing
