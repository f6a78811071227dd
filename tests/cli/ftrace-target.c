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
 * Its thread moves to the next CPU it may run on every 500 rounds (about
 * 0.15 s): each CPU's trace_stat/functionN changes within any second, as
 * on a kernel where every CPU schedules (func_profile_stat.tc reads
 * function0 only; a thread left on CPU 1 for a second failed it).
 *
 *   ftrace-target        print nothing; run until SIGTERM or SIGINT
 */
#include <sched.h>
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

/* The next CPU of 'all' after the one of 'at' (-1: the first). */
static int next_cpu(const cpu_set_t *all, int at)
{
	int i;

	for (i = 1; i <= CPU_SETSIZE; i++)
		if (CPU_ISSET((at + i) % CPU_SETSIZE, all))
			return (at + i) % CPU_SETSIZE;
	return -1;
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
	cpu_set_t all, one;
	int cpu = -1;

	if (sched_getaffinity(0, sizeof(all), &all))
		CPU_ZERO(&all);
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
		if (n % 500 == 0 && CPU_COUNT(&all) > 1) {
			cpu = next_cpu(&all, cpu);
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
	}
	return 0;
}
