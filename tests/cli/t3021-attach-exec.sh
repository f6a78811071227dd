#!/usr/bin/env bash
# Issue 30 item 1: attaching to a process in the middle of its execve().
# A program that execs itself in a loop (generations that live 1 to 5 ms,
# every fourth one 1 s) is attached to over and over while it runs: an
# attach that meets the exec (before it stops the program, while it holds
# it, or after it let it go) attaches to the new program, never reports
# the old one's agent ("listens in another runtime directory") nor calls
# into the old program's addresses, and the program runs all its
# generations and ends well.  Once with one thread, once with a second
# thread asleep (the one borrowed) while the main one execs, once the
# other way round (the main one borrowed while another execs), once with
# Debian's python3 execing itself; and utrace probe -p over and over.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 run
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler ($CC) to build a program without libutrace"
[ "$(uname -m)" = x86_64 ] || skip_all "the probe engine is x86-64 only"

# execloop G N THREADED: generation G lives a little (nanosleep; with
# THREADED 1, a spin while a second thread naps), then execs itself as
# G+1; with THREADED 2 the main thread naps and a second thread execs;
# generation N prints "done N"
cat > execloop.c <<'XEOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static char **av;
static int gen;
static void *execer(void *arg)
{
	char next[16];
	struct timespec ts = { 0, (1 + gen % 5) * 1000000L };

	if (gen % 4 == 3)
		ts = (struct timespec){ 1, 0 };
	nanosleep(&ts, NULL);
	snprintf(next, sizeof(next), "%d", gen + 1);
	execl("/proc/self/exe", av[0], next, av[2], "2", (char *)NULL);
	perror("execl");
	exit(3);
	return arg;
}
static void *nap(void *arg)
{
	for (;;) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return arg;
}
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
	int g = argc > 1 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 100;
	int threaded = argc > 3 && atoi(argv[3]);
	char next[16];
	double life = g % 4 == 3 ? 1.0 : 0.001 * (1 + g % 5), t0 = now();
	pthread_t t;

	if (g >= n) {
		printf("done %d\n", g);
		return 0;
	}
	if (threaded == 2) {
		/* the main thread waits (it is borrowed), a second one execs */
		av = argv;
		gen = g;
		if (pthread_create(&t, NULL, execer, NULL)) {
			perror("pthread_create");
			return 2;
		}
		for (;;) {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	if (threaded && pthread_create(&t, NULL, nap, NULL)) {
		perror("pthread_create");
		return 2;
	}
	while (now() - t0 < life) {
		if (!threaded) {
			struct timespec ts = { 0, 500000 };
			nanosleep(&ts, NULL);
		}
	}
	snprintf(next, sizeof(next), "%d", g + 1);
	execl("/proc/self/exe", argv[0], next, argc > 2 ? argv[2] : "100",
	      argc > 3 ? argv[3] : "0", (char *)NULL);
	perror("execl");
	return 3;
}
XEOF
"$CC" -O1 -pthread -o execloop execloop.c 2> err || skip_all "cannot build the test program: $(head -1 err)"

# A sanitizer build's libutrace cannot be loaded into a program without
# its runtime: each attach during the execs is refused in one line (that
# refusal, not another, even as the program changes under it), and the
# program runs on
if sanitizer_build; then
	./execloop 0 12 0 > san.out 2>&1 &
	P=$!
	: > san.bad
	while kill -0 $P 2> /dev/null && ! grep -q "^done" san.out; do
		"$UTRACE" attach $P > san.one 2>&1
		st=$?
		kill -0 $P 2> /dev/null && ! grep -q "^done" san.out || break
		{ [ $st = 1 ] && [ "$(wc -l < san.one)" = 1 ] &&
			grep -q "built with a sanitizer" san.one; } || cat san.one >> san.bad
	done
	wait $P
	echo $? > san.status
	check "a sanitizer build: each attach refused in one line, as the program execs" \
		bash -c '[ ! -s san.bad ] || { cat san.bad >&2; false; }'
	check "and the program ran its generations and ended well" \
		bash -c '[ "$(cat san.out) $(cat san.status)" = "done 12 0" ]'
	echo "# a sanitizer build: the attaching itself is tested in a plain build"
	done_testing
fi

# ptrace allowed here?  (Yama, a container without CAP_SYS_PTRACE)
sleep 30 &
p=$!
wait_for bash -c '[ "$(readlink /proc/$0/exe)" = "$(readlink -f "$(command -v sleep)")" ]' $p
if ! "$UTRACE" attach $p 2> probe.err; then
	kill $p
	grep -q "ptrace is not allowed\|cannot ptrace" probe.err &&
		skip_all "ptrace is not allowed here: $(head -1 probe.err)"
fi
kill $p
wait $p 2> /dev/null

# attach_one PID: utrace attach -v, or with HOW=probe, utrace probe -p
# adding two probes (an agent gone with its program as they are added:
# attached again, added again), or with HOW=record, record -p --probe for
# 0.3 s (the probes it could not remove at the end, gone with the
# program, are not said to "stay"); a hang (a deadlock with the execve())
# ends in 120 s, a failure
HOW=attach
attach_one() {
	if [ $HOW = record ]; then
		timeout -k 5 120 "$UTRACE" record -o rec.dat -p "$1" \
			--probe 'p:ex/nap libc.so.6:nanosleep' --duration 0.3
	elif [ $HOW = probe ]; then
		timeout -k 5 120 "$UTRACE" probe -p "$1" 'p:ex/nap libc.so.6:nanosleep' 'p:ex/cg libc.so.6:clock_gettime'
	else
		timeout -k 5 120 "$UTRACE" attach -v "$1"
	fi
}

# attach_loop NAME CMD...: run CMD (a program that execs itself) and
# attach to it until it ends; NAME.log gets each attach's messages,
# NAME.bad the failures of attaches made while it lived (an attach the
# program's end cut is not one: "no process", "ended")
attach_loop() {
	local name=$1 tries=0 ok=0
	shift
	"$@" > "$name.out" 2>&1 &
	local P=$!
	: > "$name.log"
	: > "$name.bad"
	while kill -0 $P 2> /dev/null && [ "$(cat /proc/$P/stat 2> /dev/null | awk '{ print $3 }')" != Z ]; do
		tries=$((tries + 1))
		if attach_one $P > "$name.one" 2>&1; then
			ok=$((ok + 1))
		elif kill -0 $P 2> /dev/null && ! grep -q "^done" "$name.out"; then
			cat "$name.one" >> "$name.bad"
		fi
		cat "$name.one" >> "$name.log"
	done
	wait $P
	echo $? > "$name.status"
	echo "# $name: $tries attaches, $ok attached, $(grep -c "ran a new program" "$name.log") met an exec"
	echo $ok > "$name.ok"
}

attach_loop one ./execloop 0 40 0
check "one thread: the program ran its 40 generations and ended well" \
	bash -c '[ "$(cat one.out) $(cat one.status)" = "done 40 0" ] || { cat one.out one.log >&2; false; }'
check "each attach made while it lived attached (none saw the old program's agent)" \
	bash -c '[ ! -s one.bad ] || { cat one.bad >&2; false; }'

attach_loop two ./execloop 0 40 1
check "two threads (the sleeping one borrowed, the main one execs): ended well" \
	bash -c '[ "$(cat two.out) $(cat two.status)" = "done 40 0" ] || { cat two.out two.log >&2; false; }'
check "each attach made while it lived attached" \
	bash -c '[ ! -s two.bad ] || { cat two.bad >&2; false; }'

# the main thread borrowed (it waits in nanosleep), another thread execs:
# the kernel ends the borrowed one, and its execve() waits until we, its
# tracer, reap it; a next attach (PTRACE_SEIZE) waits for that execve():
# a deadlock when the thread was not reaped (it hung once in a run)
attach_loop three ./execloop 0 40 2
check "another thread execs (the main one borrowed): ended well" \
	bash -c '[ "$(cat three.out) $(cat three.status)" = "done 40 0" ] || { cat three.out three.log >&2; false; }'
# (CI's clang leg once had 3 of 417 refused here, in one line each:
# "cannot open /proc/TID/mem: No such process", the borrowed thread ended
# by the other's execve(); and "has no libc.so.6 mapped", the process
# read inside the kernel's execve(), its auxiliary vector not written
# yet.  Both are attached again now (design notes, item 21).  Such a
# refusal leaves the program unharmed, as the check above says; more
# than 1 in 100 is a failure.)
check "each attach made while it lived attached (or, at most 1 in 100, refused in one line)" \
	bash -c '[ ! -s three.bad ] && exit 0; cat three.bad >&2
		[ $(grep -c . three.bad) -le $(( $(cat three.ok) / 100 )) ] &&
		! grep -qv "^utrace attach: process [0-9]*[: ]" three.bad'

HOW=probe
attach_loop pr ./execloop 0 40 0
HOW=attach
check "probe -p over and over: the program ran its 40 generations and ended well" \
	bash -c '[ "$(cat pr.out) $(cat pr.status)" = "done 40 0" ] || { cat pr.out pr.log >&2; false; }'
check "each probe -p made while it lived added its probes" \
	bash -c '[ ! -s pr.bad ] || { cat pr.bad >&2; false; }'

HOW=record
attach_loop rec ./execloop 0 40 0
HOW=attach
check "record -p --probe over and over: the program ran its 40 generations and ended well" \
	bash -c '[ "$(cat rec.out) $(cat rec.status)" = "done 40 0" ] || { cat rec.out rec.log >&2; false; }'
check "each recording made while it lived recorded, and said nothing false of its probes" \
	bash -c '[ ! -s rec.bad ] && ! grep "probes stay\|refused\|cannot remove" rec.log >&2 ||
		{ cat rec.bad >&2; false; }'

# Debian's python3, which execs itself the same way (its loader maps more
# libraries: a longer window in which the new program is not set up)
PY=/usr/bin/python3
if [ -x "$PY" ]; then
	cat > loop.py <<'XEOF'
import os, sys, time
g, n = int(sys.argv[1]), int(sys.argv[2])
if g >= n:
    print("done", g)
    sys.exit(0)
end = time.monotonic() + (1.0 if g % 4 == 3 else 0.001 * (1 + g % 5))
while time.monotonic() < end:
    time.sleep(0.0005)
os.execv(sys.executable, [sys.executable, sys.argv[0], str(g + 1), str(n)])
XEOF
	attach_loop py "$PY" loop.py 0 24
	check "python3 execing itself: ran its 24 generations and ended well" \
		bash -c '[ "$(cat py.out) $(cat py.status)" = "done 24 0" ] || { cat py.out py.log >&2; false; }'
	check "each attach made while it lived attached" \
		bash -c '[ ! -s py.bad ] || { cat py.bad >&2; false; }'
else
	n=$((n + 1)); echo "ok $n # SKIP no /usr/bin/python3"
	n=$((n + 1)); echo "ok $n # SKIP no /usr/bin/python3"
fi
# the race was met: attaches that found the process running another
# program than the one they looked at, and attached to that one (1 to 6
# in each part of a run, here; all parts together, never none)
check "attaches met an exec, and attached to the new program" \
	bash -c 'cat one.log two.log three.log py.log 2> /dev/null | grep -q "ran a new program (execve) as it was attached to"'
done_testing
