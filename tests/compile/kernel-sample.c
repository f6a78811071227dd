/* SPDX-License-Identifier: MIT */
/*
 * The kernel's tutorial header, samples/trace_events/trace-events-sample.h
 * from Debian's linux-source, built unchanged (t0007): this program gives
 * it the few kernel things it uses that are not tracing (a CPU mask type,
 * strlcpy, the possible CPUs) and the registration callbacks its
 * TRACE_EVENT_FN()s name, then fires every event, as the kernel's sample
 * module does, N times.
 *
 *   kernel-sample N
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR_CPUS 64
#define BITS_PER_BYTE 8
typedef struct cpumask {
	unsigned long bits[NR_CPUS / (BITS_PER_BYTE * sizeof(long))];
} cpumask_t;
#define cpumask_bits(m) ((m)->bits)
#define nr_cpumask_bits NR_CPUS

static inline unsigned int num_possible_cpus(void)
{
	return 4;
}

static inline size_t strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len >= size ? size - 1 : len;

		memcpy(dst, src, n);
		dst[n] = 0;
	}
	return len;
}

#define CREATE_TRACE_POINTS
#include "trace-events-sample.h"

static int regs;

int foo_bar_reg(void)
{
	regs++;
	return 0;
}

void foo_bar_unreg(void)
{
	regs--;
}

static void fire_foo_bar(int cnt, const int *array, const char *str, const cpumask_t *cpus,
			 const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	trace_foo_bar("hello", cnt, array, str, cpus, fmt, &va);
	va_end(va);
}

int main(int argc, char **argv)
{
	static const char *const strings[] = { "a", "bb", "ccc", "dddd", "eeeee" };
	cpumask_t cpus = { { 0x5 } };
	unsigned long bitmask[1] = { 0xdeadbeefUL };
	int n = argc > 1 ? atoi(argv[1]) : 3, cnt, i;

	for (cnt = 0; cnt < n; cnt++) {
		int array[6], len = cnt % 5;

		for (i = 0; i < len; i++)
			array[i] = i + 1;
		array[i] = 0;
		fire_foo_bar(cnt, array, strings[len], &cpus, "iter=%d", cnt);
		trace_foo_with_template_simple("HELLO", cnt);
		trace_foo_bar_with_cond("Some times print", cnt);
		trace_foo_with_template_cond("prints other times", cnt);
		trace_foo_with_template_print("I have to be different", cnt);
		trace_foo_rel_loc("Hello __rel_loc", cnt, bitmask, &cpus);
		trace_foo_bar_with_fn("Look at me", cnt);
		trace_foo_with_template_fn("Look at me too", cnt);
	}
	printf("fired %d rounds, %d registered\n", n, regs);
	return 0;
}
