/* SPDX-License-Identifier: MIT */
/*
 * Events for `utrace hist` (t0084), always the same ones (hist-fire.h),
 * with N tick events (default 200), for a table that overflows size=128.
 * The last kmalloc comes from a real function of the program
 * (hist_demo_alloc), for .sym.
 *
 *   hist-demo [N]
 */
#include <stdlib.h>

#define CREATE_TRACE_POINTS
#include "hist-trace.h"
#include "hist-fire.h"

__attribute__((noinline)) void hist_demo_alloc(size_t n);

__attribute__((noinline)) void hist_demo_alloc(size_t n)
{
	trace_kmalloc((unsigned long)&hist_demo_alloc + 4, NULL, n, n, 0x10);
}

int main(int argc, char **argv)
{
	hist_fire(hist_demo_alloc, argc > 1 ? atoi(argv[1]) : 200);
	return 0;
}
