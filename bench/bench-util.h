/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the benchmark programs. */
#ifndef UTRACE_BENCH_UTIL_H
#define UTRACE_BENCH_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
