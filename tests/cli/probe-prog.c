/* SPDX-License-Identifier: MIT */
/*
 * A plain program, not built with utrace, for dynamic probes (t0085):
 * probe-prog N        calls add(i, 10 * i) and greet() N times, then exits;
 *                     greet() gets an unreadable pointer at i == 1
 * probe-prog N FILE   the same, then waits until FILE exists, then calls
 *                     them N times more, and waits for SIGTERM
 *
 * Built with PROBE_FAKE (probe-fake-prog), for the stand-in engine of
 * fake-engine.c: add() and greet() hand their registers to fake_fire()
 * at their entry, and add() at its "exit", as the engine's probes would.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PROBE_FAKE
#include <dlfcn.h>

#include "engine.h"

static void (*fire)(uintptr_t addr, struct utrace_probe_regs *regs);
#endif

int add(int a, int b);
size_t greet(const char *name);

__attribute__((noipa)) int add(int a, int b)
{
#ifdef PROBE_FAKE
	uint64_t stack[2] = { 0x1122, 0 };   /* the "return address" */
	struct utrace_probe_regs r = { 0 };

	r.di = (uint32_t)a;
	r.si = (uint32_t)b;
	r.sp = (uintptr_t)stack;
	if (fire)
		fire((uintptr_t)add, &r);
	r.ax = (uint32_t)(a + b);
	if (fire)
		fire((uintptr_t)add + 1000, &r);
#endif
	return a + b;
}

__attribute__((noipa)) size_t greet(const char *name)
{
#ifdef PROBE_FAKE
	struct utrace_probe_regs r = { 0 };

	r.di = (uintptr_t)name;
	if (fire)
		fire((uintptr_t)greet, &r);
#endif
	return (uintptr_t)name < 4096 ? 0 : strlen(name);
}

static void round_of(int n)
{
	long s = 0;

	for (int i = 0; i < n; i++) {
		s += add(i, 10 * i);
		s += (long)greet(i == 1 ? (const char *)16 : "world");
	}
	printf("sum=%ld\n", s);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

#ifdef PROBE_FAKE
	*(void **)&fire = dlsym(RTLD_DEFAULT, "fake_fire");
#endif
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
