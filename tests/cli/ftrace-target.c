/* SPDX-License-Identifier: MIT */
/*
 * A program with the kernel's sched events (tests/data/kernel-events.h,
 * declared as include/trace/events/sched.h declares them) and its
 * signal:signal_generate (ftrace-signal.h) that fires each sched event
 * about 5000 times a second, as a kernel would, until killed: the target
 * of the kernel's ftracetest run through `utrace enter` (t0032), whose
 * event tests enable sched:* and expect at least three kinds of events.
 *
 * Built with -fpatchable-function-entry=5, with a schedule() (and two
 * more kernel names) it calls at each round: the function tracers' tests
 * of ftracetest filter on them.
 *
 *   ftrace-target        print nothing; run until SIGTERM or SIGINT
 */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "kernel-events.h"
#include "ftrace-signal.h"

static volatile sig_atomic_t done;
static volatile unsigned long rounds;

void schedule(void);
void _raw_spin_lock(void);
void mutex_unlock(void);

/* the kernel's "schedule is always good" (fgraph-filter.tc), and names
 * func-filter-glob.tc's globs look for ('*pin*lock', 'mutex*unl*') */
__attribute__((noinline)) void schedule(void)
{
	rounds++;
}

__attribute__((noinline)) void _raw_spin_lock(void)
{
	rounds++;
}

__attribute__((noinline)) void mutex_unlock(void)
{
	rounds++;
}

static void stop(int sig)
{
	(void)sig;
	done = 1;
}

int main(void)
{
	struct timespec d = { 0, 200000 };
	unsigned long n = 0;
	pid_t pid = getpid();

	signal(SIGTERM, stop);
	signal(SIGINT, stop);
	while (!done) {
		trace_sched_wakeup("ftrace-target", pid, 120, (int)(n & 1));
		trace_sched_switch("ftrace-target", pid, 120, 1, "swapper/0", 0, 120);
		trace_sched_process_fork("ftrace-target", pid, "ftrace-target", pid + 1);
		trace_sched_process_exec("/bin/true", pid + 1, pid + 1);
		if (!(n % 1000))
			trace_signal_generate(17, 1, "ftrace-target", pid, 1, 0);
		n++;
		schedule();
		_raw_spin_lock();
		mutex_unlock();
		nanosleep(&d, NULL);
	}
	return 0;
}
