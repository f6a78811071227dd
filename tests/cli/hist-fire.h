/* SPDX-License-Identifier: MIT */
/*
 * The events of hist-demo (t0084) and trigger-demo (t0085), always the
 * same ones: ten kmalloc events from four call sites (hit 1, 2, 3 and 4
 * times) and one more from 'alloc', a real function of the program (for
 * .sym), six task events of three tasks, and 'ticks' tick events with
 * n = 0..ticks-1 and delta = n - 100.  Included after hist-trace.h.
 * Never inlined: t0085's user stack starts in it, then its caller, with
 * gcc and clang alike (gcc inlined it and clang did not; gcc may
 * still clone it as hist_fire.constprop.0).
 */
#ifndef HIST_FIRE_H
#define HIST_FIRE_H

#include <stddef.h>

static __attribute__((noinline)) void hist_fire(void (*alloc)(size_t n), int ticks)
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
	unsigned int j;
	int i;

	for (j = 0; j < sizeof(km) / sizeof(km[0]); j++)
		trace_kmalloc(km[j].site, (void *)(0x1000UL * (j + 1)), km[j].req, km[j].alloc,
			      km[j].gfp);
	alloc(16);
	for (j = 0; j < sizeof(tasks) / sizeof(tasks[0]); j++)
		trace_task(tasks[j].comm, tasks[j].pid, tasks[j].prio, tasks[j].path);
	for (i = 0; i < ticks; i++)
		trace_tick(i, (long)i - 100);
}

#endif /* HIST_FIRE_H */
