/* SPDX-License-Identifier: MIT */
/*
 * A plain program, not built with utrace, for dynamic probes (t0086):
 * probe-prog N        calls add(i, 10 * i) and greet() N times, then exits;
 *                     greet() gets an unreadable pointer at i == 1; prints
 *                     add_sema (an SDT-style semaphore: a probe given its
 *                     file offset as REFCTR counts it up while placed)
 * probe-prog N FILE   the same, then waits until FILE exists, then calls
 *                     them N times more, and waits for SIGTERM
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int add(int a, int b);
size_t greet(const char *name);

__attribute__((noinline)) int add(int a, int b)
{
	return a + b;
}

__attribute__((noinline)) size_t greet(const char *name)
{
	return (uintptr_t)name < 4096 ? 0 : strlen(name);
}

/* in a section of its own, as sys/sdt.h puts semaphores (.probes): it has
 * a file offset, which .bss would not */
__attribute__((section(".probes"), used)) volatile unsigned short add_sema = 0;

/* called through these, so that no compiler specializes them */
static int (*volatile add_p)(int, int) = add;
static size_t (*volatile greet_p)(const char *) = greet;

static void round_of(int n)
{
	long s = 0;

	printf("sema=%u\n", (unsigned int)add_sema);
	for (int i = 0; i < n; i++) {
		s += add_p(i, 10 * i);
		s += (long)greet_p(i == 1 ? (const char *)16 : "world");
	}
	printf("sum=%ld\n", s);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

	round_of(n);
	if (argc > 2) {
		while (access(argv[2], F_OK) != 0)
			usleep(20000);
		round_of(n);
		for (;;)
			pause();
	}
	return 0;
}
