/* SPDX-License-Identifier: MIT */
/*
 * Fires the %p-extension events of pfmt-events.h with fixed values, so
 * that the printed text is known: pfmt-demo [N [LIB|- [hold]]]
 *
 * With LIB (pfmt-lib), it then dlopen()s LIB and fires pfmt_sym with
 * LIB's pfmt_lib_fn: a function of a library loaded after the start.
 * With "hold" it then waits to be killed (for the live readers).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "pfmt-events.h"

/* static: only the program's .symtab names it */
static __attribute__((noinline)) void pfmt_worker(int i)
{
	static const unsigned char ip4[4] = { 192, 168, 1, 20 };
	static const unsigned char ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const unsigned char mac[6] = { 0x00, 0x1b, 0x21, 0x3a, 0x4f, 0x5e };
	static const unsigned char uuid[16] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
						0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

	trace_pfmt_sym((void *)pfmt_worker, (char *)(void *)pfmt_worker + 16);
	trace_pfmt_net(0x2dUL + (unsigned long)i * 0, ip4, ip6, mac, uuid);
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 1;

	for (i = 0; i < n; i++)
		pfmt_worker(i);
	if (argc > 2 && strcmp(argv[2], "-")) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		char *fn;

		if (!h || !(fn = dlsym(h, "pfmt_lib_fn"))) {
			fprintf(stderr, "pfmt-demo: %s\n", dlerror());
			return 1;
		}
		trace_pfmt_sym(fn, fn + 4);
	}
	if (argc > 3 && !strcmp(argv[3], "hold")) {
		/* the tests' cue: every event has fired */
		printf("fired\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
