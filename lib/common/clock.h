/* SPDX-License-Identifier: MIT */
/*
 * Time and CPU for the writer's fast path.
 *
 * Time: the TSC where it is invariant (CPUID 0x80000007 EDX bit 8) and the
 * clock source trusts it, else CLOCK_MONOTONIC through the vDSO.  Here an
 * rdtsc costs about 8 ns and the vDSO clock 26 ns.  Writers store raw
 * ticks; the recorder stores calibration points and readers convert, so no
 * traced program ever waits for a calibration.
 *
 * CPU: the kernel keeps the current CPU in the thread's rseq area, which
 * glibc registers (2.35 and later); reading it is one load.  Without rseq,
 * sched_getcpu().
 */
#ifndef UTRACE_RINGBUF_CLOCK_H
#define UTRACE_RINGBUF_CLOCK_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/rseq.h>

#include "compiler.h"
#include "pool.h"

/* enum utrace_clock of this process */
extern int utrace__clock_tsc UTRACE_HIDDEN;
/* Where the thread's rseq cpu_id is, from the thread pointer; 0 without
 * rseq (a process-wide constant, so one load instead of glibc's two). */
extern long utrace__rseq_cpu_off UTRACE_HIDDEN;

static inline uint64_t utrace__clock_now(void)
{
	if (__builtin_expect(utrace__clock_tsc, 1))
		return __builtin_ia32_rdtsc();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/**
 * utrace__mono_ns() - CLOCK_MONOTONIC now, in nanoseconds.
 *
 * The clock of calibration points, timeouts and deadlines everywhere
 * (runtime, reader, tools); through the vDSO, so no system call.
 */
static inline uint64_t utrace__mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint32_t utrace__cpu(void)
{
	long off = utrace__rseq_cpu_off;

	if (__builtin_expect(off != 0, 1)) {
		int32_t cpu = __atomic_load_n((const int32_t *)
					      ((char *)__builtin_thread_pointer() + off),
					      __ATOMIC_RELAXED);

		if (cpu >= 0)
			return (uint32_t)cpu;
	}
	int c = sched_getcpu();
	return c < 0 ? 0 : (uint32_t)c;
}

/* A calibration point now: the TSC and CLOCK_MONOTONIC read together
 * (the pool keeps them: calib.c); with 'x', what goes beside it (CLOCK_MONOTONIC_RAW, the
 * offsets of CLOCK_BOOTTIME and CLOCK_TAI; 'prev': the entry before, or
 * NULL). */
struct utrace_calib_point;
struct utrace_calib_ext;
void utrace__calib_measure(struct utrace_calib_point *pt, struct utrace_calib_ext *x,
			   const struct utrace_calib_ext *prev) UTRACE_HIDDEN;

/**
 * utrace__trace_clock_name() - the kernel's name of an enum utrace_trace_clock
 * @id: the clock
 *
 * Return: "mono", "x86-tsc", ...; NULL for an unknown id.
 */
const char *utrace__trace_clock_name(uint32_t id) UTRACE_HIDDEN;

/**
 * utrace__trace_clock_parse() - the enum utrace_trace_clock of a name
 * @name: a name of trace_clock
 *
 * Return: the clock, or -EINVAL.
 */
int utrace__trace_clock_parse(const char *name) UTRACE_HIDDEN;

/* Whether the clock counts nanoseconds (the kernel's in_ns): the others
 * are printed as a plain count. */
bool utrace__trace_clock_in_ns(uint32_t id) UTRACE_HIDDEN;

/* Decide the clock once, at start (a CPUID and a file read). */
void utrace__clock_init(void) UTRACE_HIDDEN;

#endif /* UTRACE_RINGBUF_CLOCK_H */
