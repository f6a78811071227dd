/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the benchmark programs. */
#ifndef UTRACE_BENCH_UTIL_H
#define UTRACE_BENCH_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The loops under test stay functions of their own (callgrind counts them
 * by name), and every loop has the same shape: an up-counting i kept live
 * and in place. */
#if defined(__has_attribute)
#if __has_attribute(noclone)
#define BENCH_NOINLINE __attribute__((noinline, noclone))
#endif
#endif
#ifndef BENCH_NOINLINE
#define BENCH_NOINLINE __attribute__((noinline))
#endif
#define BENCH_BARRIER(i) __asm__ __volatile__("" : : "r"(i) : "memory")

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A positive decimal count, or exit 2 naming the program. */
static inline uint64_t parse_u64(const char *prog, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0) {
		fprintf(stderr, "%s: bad number '%s'\n", prog, s);
		exit(2);
	}
	return v;
}

#endif /* UTRACE_BENCH_UTIL_H */
