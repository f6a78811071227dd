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

/* Internal to the reader library (its static archive's tier): none of it
 * is exported from libutrace-reader.so. */
#pragma GCC visibility push(hidden)

struct utrace__ctl;
struct utrace__tf;
struct live;

/* Open the buffers of the processes (their pools are made if needed). */
int live_open(struct utrace__ctl *const *ctls, size_t n, struct live **out);
void live_close(struct live *lv);
/* Read pool_fd, a copy of c's process's pool (the snapshot trigger's),
 * with that process's formats, its events up to until (the pool's clock;
 * 0: all of them). */
int live_open_copy(struct utrace__ctl *c, int pool_fd, uint64_t until, struct live **out);
/* Read one more process from now on (utrace top -a): 0 or -errno. */
int live_add(struct live *lv, struct utrace__ctl *c);
/* Stop reading the processes that have exited and were read out (after
 * the live_take() that found them gone); how many.  Their controls stay
 * the caller's. */
size_t live_drop_gone(struct live *lv);
/* live_drop_gone(), telling fn each control dropped (utrace agent). */
size_t live_drop_gone_each(struct live *lv, void (*fn)(void *arg, struct utrace__ctl *c),
			   void *arg);

enum {
	LIVE_HEADER = 1,   /* the kernel's "# tracer: nop" header first (trace) */
	LIVE_CONSUME = 2,  /* mark what is printed as read (trace_pipe) */
	LIVE_NO_IRQ_INFO = 4, /* header and lines without the flags column (noirq-info) */
	/* the other trace_options that change the text (the kernel's
	 * print_trace_line() and trace_default_header()) */
	LIVE_RAW = 8,         /* raw */
	LIVE_HEX = 16,        /* hex */
	LIVE_NO_CONTEXT = 32, /* nocontext-info */
	LIVE_LATENCY = 64,    /* latency-format */
	LIVE_TGID = 128,      /* record-tgid */
	LIVE_VERBOSE = 256,   /* verbose */
	/* function_graph's options (the kernel's TRACE_GRAPH_PRINT_*) */
	LIVE_FG_OVERRUN = 1 << 9,      /* funcgraph-overrun */
	LIVE_FG_NO_CPU = 1 << 10,      /* nofuncgraph-cpu */
	LIVE_FG_NO_OVERHEAD = 1 << 11, /* nofuncgraph-overhead */
	LIVE_FG_PROC = 1 << 12,        /* funcgraph-proc */
	LIVE_FG_NO_DURATION = 1 << 13, /* nofuncgraph-duration */
	LIVE_FG_ABSTIME = 1 << 14,     /* funcgraph-abstime */
	LIVE_FG_TAIL = 1 << 15,        /* funcgraph-tail */
};

/*
 * Print what the buffers hold now (LIVE_CONSUME: what was not read yet),
 * merged in time order, as lines of the kernel's trace file.  Returns the
 * number of events printed, or a negative errno.
 */
long live_print(struct live *lv, unsigned int flags, FILE *out);

/*
 * Take what the buffers hold (as LIVE_CONSUME) as one trace file, given
 * to fn (utrace export).  A process that has exited is read once more,
 * for the events of its last pages.  Returns the number of events taken
 * (0: none, fn not called), fn's negative result, or a negative errno
 * (a process is gone, and was read out).
 */
struct utrace__tf;
long live_take(struct live *lv, int (*fn)(void *arg, struct utrace__tf *tf), void *arg);

/* Read the events of CPU 'cpu' only (-1: all, the default). */
/* The tracer the trace header names ("# tracer: NAME"; NULL: nop), and
 * function_graph's column header. */
void live_set_tracer(struct live *lv, const char *name) UTRACE_HIDDEN;
void live_set_cpu(struct live *lv, int cpu);

/*
 * Take what the buffers hold (as LIVE_CONSUME) as kernel ring-buffer
 * pages of one CPU stream, times in CLOCK_MONOTONIC ns (per_cpu/cpuN/
 * trace_pipe_raw).  *pages (owned by lv, valid until the next call) gets
 * the pages; returns their bytes (a multiple of the page size) or -errno.
 */
long live_raw(struct live *lv, unsigned char **pages);

/* per_cpu/cpuN/stats: what can be counted of the CPU read. */
struct live_stats {
	uint64_t entries, bytes;     /* in the buffer, not read */
	uint64_t oldest_ns;          /* the oldest of them; 0: none */
	uint64_t overrun;            /* overwritten since the last clear (the process's) */
	uint64_t dropped;            /* lost when no page was free (the process's) */
	uint64_t read;               /* consumed by this program's readers */
};
int live_stats(struct live *lv, struct live_stats *st);

/* Empty the buffers (the trace file opened with O_TRUNC). */
int live_clear(struct live *lv);

/*
 * The snapshot file (the kernel's tracing_snapshot()): a copy of the pages
 * the buffers hold now, as a trace file image of its own, read later as
 * the trace file is.  The buffers are left as they are (not consumed).
 * live_snapshot() sets *out to NULL when they hold no event.
 */
struct live_snap;
int live_snapshot(struct live *lv, struct live_snap **out);
/* Its lines after the trace file's header (flags: LIVE_NO_IRQ_INFO);
 * the events printed, 0 (nothing printed) for an empty one or NULL. */
long live_snap_print(const struct live_snap *s, unsigned int flags, FILE *out);
void live_snap_free(struct live_snap *s);

#pragma GCC visibility pop

#endif /* UTRACE_TOOL_LIVE_H */
