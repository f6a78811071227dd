/* SPDX-License-Identifier: MIT */
#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "rundir.h"

#include <stddef.h>
#include <sys/rseq.h>

int utrace__clock_tsc;
long utrace__rseq_cpu_off;

/*
 * The TSC is used when the CPU says it is invariant (constant rate, runs in
 * every C-state).  UTRACE_CLOCK=mono forces the vDSO clock.  A recorder
 * checks the result: its calibration points show whether ticks and
 * CLOCK_MONOTONIC advanced together.
 */
void utrace__clock_init(void)
{
	unsigned int a, b, c, d;
	const char *env = utrace__getenv("UTRACE_CLOCK");

	/* glibc 2.35+ registers rseq for every thread at the same offset. */
	if (__rseq_size > 0)
		utrace__rseq_cpu_off = (long)__rseq_offset + (long)offsetof(struct rseq, cpu_id);
	utrace__clock_tsc = 0;
	if (env && strcmp(env, "mono") == 0)
		return;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return;
	/* The calibration table takes CMPXCHG16B (CPUID.1:ECX[13]). */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 13)))
		return;
	utrace__clock_tsc = 1;
}

/*
 * The kernel's trace clocks that utrace can compute from what it stores
 * (docs/tracefs-differences.md): trace.c's trace_clocks[] order, less
 * counter and uptime (no such count exists in a user-space process).
 */
static const struct {
	const char *name;
	bool in_ns;
} trace_clocks[UTRACE_TCLOCK_NR] = {
	[UTRACE_TCLOCK_MONO] = { "mono", true },
	[UTRACE_TCLOCK_LOCAL] = { "local", true },
	[UTRACE_TCLOCK_GLOBAL] = { "global", true },
	[UTRACE_TCLOCK_PERF] = { "perf", true },
	[UTRACE_TCLOCK_MONO_RAW] = { "mono_raw", true },
	[UTRACE_TCLOCK_BOOT] = { "boot", true },
	[UTRACE_TCLOCK_TAI] = { "tai", true },
	[UTRACE_TCLOCK_X86_TSC] = { "x86-tsc", false },
};

const char *utrace__trace_clock_name(uint32_t id)
{
	return id < UTRACE_TCLOCK_NR ? trace_clocks[id].name : NULL;
}

int utrace__trace_clock_parse(const char *name)
{
	int i;

	for (i = 0; i < UTRACE_TCLOCK_NR; i++)
		if (!strcmp(name, trace_clocks[i].name))
			return i;
	return -EINVAL;
}

bool utrace__trace_clock_in_ns(uint32_t id)
{
	return id >= UTRACE_TCLOCK_NR || trace_clocks[id].in_ns;
}
