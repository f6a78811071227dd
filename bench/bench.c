/* SPDX-License-Identifier: MIT */
/*
 * The call-site benchmark: one loop per case, each in a noinline function
 * so that callgrind counts it on its own and objdump can show it.  The
 * same file is built three times (see meson.build):
 *
 *   bench-utrace           -DBENCH_UTRACE                   cases empty flag utrace_off utrace_on
 *   bench-utrace-disabled  -DBENCH_UTRACE -DUTRACE_DISABLE  cases empty utrace_disabled
 *   bench-lttng            -DBENCH_LTTNG                    cases empty lttng_off lttng_on
 *
 * Usage:
 *   bench-X cases                   the cases this build has
 *   bench-X time N RUNS CASE...     RUNS rounds; each round times every CASE
 *                                   once over N iterations (round-robin, so
 *                                   noise spreads over all cases); prints
 *                                   "TIME <case> <run> <n> <ns>" lines
 *   bench-X count N CASE            runs the empty loop and CASE's loop N
 *                                   times each, for valgrind --tool=callgrind
 *
 * utrace_on registers an empty probe with register_trace_bench_ev();
 * lttng_on needs an LTTng session with bench:bench_ev enabled (bench/run.sh
 * makes one) and waits up to 20 s for the event to be switched on.
 *
 * Every loop has the same skeleton: a 64-bit counter, passed (with its low
 * 32 bits) as the event's arguments so they vary, and an empty asm that
 * uses the counter and clobbers "memory", so the compiler can neither
 * merge, hoist nor drop iterations, nor give the empty loop another shape.
 * Speeds are printed, never checked: this is not a test.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"
#if defined(BENCH_UTRACE)
#include "bench-events.h"
#ifdef UTRACE_DISABLE
#define BENCH_TRACE_CASE "utrace_disabled"
#else
#define BENCH_TRACE_CASE "utrace_off"
#define BENCH_ON_CASE "utrace_on"
#endif
#define BENCH_TRACE(a, b) trace_bench_ev((a), (b))
#elif defined(BENCH_LTTNG)
#include "bench-lttng-tp.h"
#define BENCH_TRACE_CASE "lttng_off"
#define BENCH_ON_CASE "lttng_on"
#define BENCH_TRACE(a, b) tracepoint(bench, bench_ev, (a), (b))
#else
#error "build with -DBENCH_UTRACE or -DBENCH_LTTNG"
#endif

/* The raw baseline's flag: never set, read once per iteration. */
volatile int bench_flag;

BENCH_NOINLINE void bench_sink(uint64_t a, uint32_t b);
BENCH_NOINLINE void bench_loop_empty(uint64_t n);
BENCH_NOINLINE void bench_loop_flag(uint64_t n);
BENCH_NOINLINE void bench_loop_trace(uint64_t n);

/* What the flag baseline would call; never reached. */
BENCH_NOINLINE void bench_sink(uint64_t a, uint32_t b)
{
	__asm__ __volatile__("" : : "r"(a), "r"(b) : "memory");
}

/* Baseline: the loop alone. */
BENCH_NOINLINE void bench_loop_empty(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		BENCH_BARRIER(i);
}

/* Baseline: an inline 'if (volatile flag)' guarding a call, as unlikely
 * as the tracepoint's own check. */
BENCH_NOINLINE void bench_loop_flag(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (__builtin_expect(bench_flag, 0))
			bench_sink(i, (uint32_t)i);
		BENCH_BARRIER(i);
	}
}

/* The call site under test: utrace's trace_bench_ev() (compiled in or,
 * with UTRACE_DISABLE, compiled out) or LTTng-UST's tracepoint(). */
BENCH_NOINLINE void bench_loop_trace(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		BENCH_TRACE(i, (uint32_t)i);
		BENCH_BARRIER(i);
	}
}

enum bench_kind { K_EMPTY, K_FLAG, K_TRACE, K_ON };

struct bench_case {
	const char *name;
	enum bench_kind kind;
};

static const struct bench_case bench_cases[] = {
	{ "empty", K_EMPTY },
#if defined(BENCH_UTRACE) && !defined(UTRACE_DISABLE)
	{ "flag", K_FLAG },
#endif
	{ BENCH_TRACE_CASE, K_TRACE },
#ifdef BENCH_ON_CASE
	{ BENCH_ON_CASE, K_ON },
#endif
};
#define NR_CASES (sizeof(bench_cases) / sizeof(bench_cases[0]))

static const struct bench_case *find_case(const char *name)
{
	for (size_t i = 0; i < NR_CASES; i++)
		if (strcmp(bench_cases[i].name, name) == 0)
			return &bench_cases[i];
	fprintf(stderr, "bench: no case '%s' in this build\n", name);
	exit(2);
}

#if defined(BENCH_UTRACE) && !defined(UTRACE_DISABLE)
static void empty_probe(void *data, u64 a, u32 b)
{
	(void)data;
	(void)a;
	(void)b;
}

static void switch_on(void)
{
	int ret = register_trace_bench_ev(empty_probe, NULL);

	if (ret || !trace_bench_ev_enabled()) {
		fprintf(stderr, "bench: register_trace_bench_ev: %d\n", ret);
		exit(1);
	}
}

static void switch_off(void)
{
	int ret = unregister_trace_bench_ev(empty_probe, NULL);

	if (ret) {
		fprintf(stderr, "bench: unregister_trace_bench_ev: %d\n", ret);
		exit(1);
	}
	tracepoint_synchronize_unregister();
}

static int is_on(void)
{
	return trace_bench_ev_enabled();
}
#elif defined(BENCH_LTTNG)
static void switch_on(void)
{
	/* The session daemon switches the event on when the program has
	 * registered with it, which can take a while (longer under valgrind). */
	for (int i = 0; i < 2000 && !tracepoint_enabled(bench, bench_ev); i++)
		usleep(10000);
	if (!tracepoint_enabled(bench, bench_ev)) {
		fprintf(stderr, "bench: LTTng event bench:bench_ev is not on "
			"(no session daemon or session?)\n");
		exit(3);
	}
}

static void switch_off(void)
{
}

static int is_on(void)
{
	return tracepoint_enabled(bench, bench_ev) != 0;
}
#else
static void switch_on(void)
{
}

static void switch_off(void)
{
}

static int is_on(void)
{
	return 0;
}
#endif

static void run_case(const struct bench_case *c, uint64_t n)
{
	switch (c->kind) {
	case K_EMPTY:
		bench_loop_empty(n);
		break;
	case K_FLAG:
		bench_loop_flag(n);
		break;
	case K_TRACE:
	case K_ON:
		bench_loop_trace(n);
		break;
	}
}

/* Off cases must really be off: an event switched on from the
 * environment (UTRACE_EVENTS) or a session would spoil the figures. */
static void check_state(const struct bench_case *c)
{
	if (c->kind == K_TRACE && is_on()) {
		fprintf(stderr, "bench: %s: the event is on; unset UTRACE_EVENTS "
			"and stop LTTng sessions\n", c->name);
		exit(1);
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: bench cases | time N RUNS CASE... | count N CASE\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "cases") == 0) {
		for (size_t i = 0; i < NR_CASES; i++)
			printf("%s\n", bench_cases[i].name);
		return 0;
	}
	if (argc >= 5 && strcmp(argv[1], "time") == 0) {
		uint64_t n = parse_u64("bench", argv[2]), runs = parse_u64("bench", argv[3]);
		uint64_t warm = n / 100 ? n / 100 : 1;
		int nc = argc - 4;

		for (int k = 0; k < nc; k++)
			find_case(argv[4 + k]);
		/* Spin for 0.2 s first, so that the first case timed does not
		 * pay for a cold CPU (clock ramp-up, cold caches). */
		for (uint64_t t0 = now_ns(); now_ns() - t0 < 200000000u;)
			bench_loop_empty(1000000);
		for (uint64_t r = 0; r < runs; r++) {
			for (int k = 0; k < nc; k++) {
				const struct bench_case *c = find_case(argv[4 + k]);
				uint64_t t0, t1;

				if (c->kind == K_ON)
					switch_on();
				else
					check_state(c);
				run_case(c, warm);
				t0 = now_ns();
				run_case(c, n);
				t1 = now_ns();
				if (c->kind == K_ON)
					switch_off();
				printf("TIME %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				       c->name, r, n, t1 - t0);
				fflush(stdout);
			}
		}
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "count") == 0) {
		uint64_t n = parse_u64("bench", argv[2]);
		const struct bench_case *c = find_case(argv[3]);

		if (c->kind == K_ON)
			switch_on();
		else
			check_state(c);
		bench_loop_empty(n);
		if (c->kind != K_EMPTY)
			run_case(c, n);
		if (c->kind == K_ON)
			switch_off();
		printf("COUNT %s %" PRIu64 "\n", c->name, n);
		return 0;
	}
	return usage();
}
