/* SPDX-License-Identifier: MIT */
/*
 * Reading the buffers of running processes (utrace show, pipe, mount):
 * each process's pool is mapped, its pages are copied into a trace file
 * image in memory (docs/trace-file-format.md) and printed by the same code
 * as `utrace script`, so the lines are those of the kernel's trace file.
 */
#ifndef UTRACE_TOOL_LIVE_H
#define UTRACE_TOOL_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct utrace__ctl;
struct live;

/* Open the buffers of the processes (their pools are made if needed). */
int live_open(struct utrace__ctl *const *ctls, size_t n, struct live **out);
void live_close(struct live *lv);

enum {
	LIVE_HEADER = 1,   /* the kernel's "# tracer: nop" header first (trace) */
	LIVE_CONSUME = 2,  /* mark what is printed as read (trace_pipe) */
	LIVE_NO_IRQ_INFO = 4, /* header and lines without the flags column (noirq-info) */
};

/*
 * Print what the buffers hold now (LIVE_CONSUME: what was not read yet),
 * merged in time order, as lines of the kernel's trace file.  Returns the
 * number of events printed, or a negative errno.
 */
long live_print(struct live *lv, unsigned int flags, FILE *out);

/* Empty the buffers (the trace file opened with O_TRUNC). */
int live_clear(struct live *lv);

#endif /* UTRACE_TOOL_LIVE_H */
