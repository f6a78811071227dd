/* SPDX-License-Identifier: MIT */
#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "rundir.h"

#include <stddef.h>
#include <sys/rseq.h>
#include <time.h>

#include "pool.h"

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

/* The calibration points themselves (the pool's table of them is calib.c's). */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* How far clock 'id' is ahead of CLOCK_MONOTONIC, ns: from the tightest
 * of a few mono/id/mono reads (one preempted half-way is not taken).  The
 * offsets change only in steps (a suspend, a clock set, of a second or
 * so): a measure within STICKY_NS of the one before (*prev, NULL: none;
 * 0 is an offset like any other, the usual one of CLOCK_BOOTTIME) is
 * that one, so that the times of one segment and the next do not differ
 * by the measure's jitter. */
#define STICKY_NS 1000000
static int64_t clock_offset(clockid_t id, const int64_t *prev)
{
	uint64_t best = UINT64_MAX;
	int64_t off = 0;
	int i;

	for (i = 0; i < 4; i++) {
		uint64_t a = utrace__mono_ns();
		uint64_t o = clock_ns(id);
		uint64_t b = utrace__mono_ns();

		if (b - a < best) {
			best = b - a;
			off = (int64_t)(o - (a + (b - a) / 2));
		}
	}
	if (prev && off - *prev < STICKY_NS && *prev - off < STICKY_NS)
		return *prev;
	return off;
}

void utrace__calib_measure(struct utrace_calib_point *pt, struct utrace_calib_ext *x,
			   const struct utrace_calib_ext *prev)
{
	uint64_t best = UINT64_MAX;
	int i;

	/* The tightest of a few rdtsc between two clock reads: a read
	 * preempted or interrupted half-way is not taken.  With 'x', the
	 * same for CLOCK_MONOTONIC_RAW (a rate apart from NTP's). */
	for (i = 0; i < 4; i++) {
		uint64_t a = utrace__mono_ns();
		uint64_t t = __builtin_ia32_rdtsc();
		uint64_t b = utrace__mono_ns();

		if (b - a < best) {
			best = b - a;
			pt->tsc = t;
			pt->ns = a + (b - a) / 2;
		}
	}
	if (!x)
		return;
	best = UINT64_MAX;
	for (i = 0; i < 4; i++) {
		uint64_t a = clock_ns(CLOCK_MONOTONIC_RAW);
		uint64_t t = __builtin_ia32_rdtsc();
		uint64_t b = clock_ns(CLOCK_MONOTONIC_RAW);

		if (b - a < best) {
			best = b - a;
			x->tsc = t;
			x->raw = a + (b - a) / 2;
		}
	}
	x->boot = clock_offset(CLOCK_BOOTTIME, prev ? &prev->boot : NULL);
	x->tai = clock_offset(CLOCK_TAI, prev ? &prev->tai : NULL);
	x->point = pt->tsc;
}
