/* SPDX-License-Identifier: MIT */
/*
 * Events for `utrace hist` (t0084), always the same ones: ten kmalloc
 * events from four call sites (hit 1, 2, 3 and 4 times) and one more, six task events
 * of three tasks, and N tick events (default 200) with n = 0..N-1 and
 * delta = n - 100, for a table that overflows size=128.  The last kmalloc
 * comes from a real function of the program (hist_demo_alloc), for .sym.
 *
 *   hist-demo [N]
 */
#include <stdlib.h>

#define CREATE_TRACE_POINTS
#include "hist-trace.h"

__attribute__((noinline)) void hist_demo_alloc(size_t n);

__attribute__((noinline)) void hist_demo_alloc(size_t n)
{
	trace_kmalloc((unsigned long)&hist_demo_alloc + 4, NULL, n, n, 0x10);
}

int main(int argc, char **argv)
{
	static const struct {
		unsigned long site;
		size_t req, alloc;
		unsigned int gfp;
	} km[] = {
		{ 0xffffffff8125d1a0UL, 24, 32, 0xcc0 },
		{ 0xffffffffa02c6a11UL, 8, 8, 0x400 },
		{ 0xffffffff8125d1a0UL, 24, 32, 0xcc0 },
		{ 0xffffffff813b2e77UL, 512, 512, 0xdc0 },
		{ 0xffffffff81601c5eUL, 4096, 4096, 0xcc0 },
		{ 0xffffffff8125d1a0UL, 100, 128, 0xcc0 },
		{ 0xffffffff81601c5eUL, 4096, 4096, 0xcc0 },
		{ 0xffffffff813b2e77UL, 1000, 1024, 0xdc0 },
		{ 0xffffffff81601c5eUL, 3000, 4096, 0xcc0 },
		{ 0xffffffff81601c5eUL, 4096, 4096, 0xcc0 },
	};
	static const struct {
		const char *comm;
		int pid, prio;
		const char *path;
	} tasks[] = {
		{ "bash", 100, 120, "/bin/ls" }, { "sshd", 200, 120, "/usr/sbin/sshd" },
		{ "bash", 101, 110, "/bin/cat" }, { "bash", 100, 120, "/bin/ls" },
		{ "bash", 101, 110, "/bin/cat" }, { "bash", 100, 120, "/bin/ls" },
	};
	int n = argc > 1 ? atoi(argv[1]) : 200, i;
	unsigned int j;

	for (j = 0; j < sizeof(km) / sizeof(km[0]); j++)
		trace_kmalloc(km[j].site, (void *)(0x1000UL * (j + 1)), km[j].req, km[j].alloc,
			      km[j].gfp);
	hist_demo_alloc(16);
	for (j = 0; j < sizeof(tasks) / sizeof(tasks[0]); j++)
		trace_task(tasks[j].comm, tasks[j].pid, tasks[j].prio, tasks[j].path);
	for (i = 0; i < n; i++)
		trace_tick(i, (long)i - 100);
	return 0;
}
