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
};

/*
 * Print what the buffers hold now (LIVE_CONSUME: what was not read yet),
 * merged in time order, as lines of the kernel's trace file.  Returns the
 * number of events printed, or a negative errno.
 */
long live_print(struct live *lv, unsigned int flags, FILE *out);

/* Empty the buffers (the trace file opened with O_TRUNC). */
int live_clear(struct live *lv);

/*
 * Consuming readers of a pool (utrace pipe, the mount's trace_pipe, the
 * recorder) take turns: each holds an open file description lock on the
 * pool's memfd while it takes pages and moves read offsets, so every event
 * goes to one of them, as with the kernel's trace_pipe.  The memfd must be
 * opened again for that (a new open file description: the descriptors
 * that came from the agent all share the agent's one): live_lock_open()
 * does it through /proc, -1 if it cannot, and the reader then goes
 * without the lock.  live_consumer_lock() takes (blocking) or gives up the
 * turn; on a file system without OFD locks it closes the descriptor and
 * sets it to -1.  The kernel lets go of the lock of a reader that dies.
 */
int live_lock_open(int pool_fd);
void live_consumer_lock(int *lock_fd, bool take);

#endif /* UTRACE_TOOL_LIVE_H */
