/* SPDX-License-Identifier: MIT */
/*
 * The printer of `utrace script` (print.c), shared with show, pipe and
 * mount (live buffers) and the public utrace_record_print(): each event
 * as a line of the kernel's trace file, its fields (--fields), or one JSON
 * object.  Internal to the reader library.
 */
#ifndef UTRACE_READER_PRINT_H
#define UTRACE_READER_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler.h"
#include "file-reader.h"
#include "formats.h"
#include "obuf.h"
#include "setevent.h"

enum utrace__out_mode {
	UTRACE__OUT_TEXT,
	UTRACE__OUT_FIELDS,
	UTRACE__OUT_JSON,
	UTRACE__OUT_OTLP,    /* OTLP LogRecords in JSON (export-otlp.c), no newlines */
};

/* A --filter entry: the events it is for, and its expression. */
struct utrace__print_filter {
	struct utrace__set_event_match m;
	const char *text;    /* the whole EVENT:EXPRESSION entry */
	const char *expr;    /* the expression, in @text */
	bool matched;        /* an event of the file took it */
};

/* The kernel's trace options that change the trace text, as its
 * print_trace_line() applies them: hex, then raw, then the usual line,
 * with or without its context (comm, pid, CPU, flags and time) in one
 * of two layouts. */
enum {
	UTRACE__PF_RAW = 1 << 0,        /* raw: "pid cpu ts " and the event's raw print */
	UTRACE__PF_HEX = 1 << 1,        /* hex: the same in hex (takes over raw) */
	UTRACE__PF_NO_CONTEXT = 1 << 2, /* nocontext-info: the event's text alone */
	UTRACE__PF_LATENCY = 1 << 3,    /* latency-format: the latency tracers' columns */
	UTRACE__PF_TGID = 1 << 4,       /* record-tgid: "(tgid)" after the pid */
	UTRACE__PF_VERBOSE = 1 << 5,    /* verbose: latency-format's long columns */
	/* function_graph's lines (print_graph_prologue(), _duration(),
	 * print_graph_return()): the kernel's defaults are 0 */
	UTRACE__PF_FG_OVERRUN = 1 << 6,     /* funcgraph-overrun: " (Overruns: N)" */
	UTRACE__PF_FG_NO_CPU = 1 << 7,      /* nofuncgraph-cpu: no " N) " */
	UTRACE__PF_FG_NO_OVERHEAD = 1 << 8, /* nofuncgraph-overhead: no duration marks */
	UTRACE__PF_FG_PROC = 1 << 9,        /* funcgraph-proc: "comm-tid | " */
	UTRACE__PF_FG_NO_DURATION = 1 << 10, /* nofuncgraph-duration: no duration column */
	UTRACE__PF_FG_ABSTIME = 1 << 11,    /* funcgraph-abstime: "secs.usecs |  " first */
	UTRACE__PF_FG_TAIL = 1 << 12,       /* funcgraph-tail: "} / * func * /" */
};

struct utrace__print_opts {
	const char *input;
	enum utrace__out_mode mode;
	struct utrace__set_event_match *ev;
	char **ev_text;
	bool *ev_matched;
	size_t nr_ev;
	/* --filter: events pass their entry's expression (the last entry for
	 * an event wins); events without one pass */
	struct utrace__print_filter *filters;
	size_t nr_filters;
	bool quiet;          /* no summary lines on stderr (live buffers) */
	/* "##### CPU N buffer started ####" before the first event of each
	 * CPU but the first line, as the kernel's trace file does when its
	 * buffer was overrun (live buffers in overwrite mode) */
	bool annotate_cpus;
	/* no flags column, as the kernel's trace with its irq-info option off */
	bool no_irq_info;
	/* UTRACE__OUT_TEXT: the kernel's trace options that change the
	 * lines (UTRACE__PF_*), and latency-format's time origin (the
	 * buffer's last clear, in the times' clock; 0: none) */
	unsigned int pflags;
	uint64_t time_start;
	/* UTRACE__OUT_OTLP: added to the CLOCK_MONOTONIC times (Unix time
	 * ns); the observedTimeUnixNano; the utrace.seq of the next record
	 * (the caller moves it on) */
	int64_t otlp_time_offset;
	uint64_t otlp_observed;
	uint64_t otlp_seq;
};

/* Whether -e selects the event (and marks the matching -e as used). */
bool utrace__print_select(const struct utrace__print_opts *o, const char *system,
			  const char *name) UTRACE_HIDDEN;

/*
 * The kernel's line prefix, "%16s-%-7d [%03d] ..... %5lu.%06lu: " of the
 * comm, tid, cpu and time (ns; with !in_ns a count, "%12llu"), the one
 * writer of it in the tools.
 */
void utrace__print_prefix(struct utrace__obuf *b, const char *comm, uint32_t tid,
			  uint32_t cpu, uint64_t time, bool irq_info, bool in_ns) UTRACE_HIDDEN;

/* The name of the thread of an item: its THREAD name, its process's, or
 * "<...>" as the kernel says of an unknown one. */
const char *utrace__item_comm(const struct utrace__tf_item *it) UTRACE_HIDDEN;

/* Print the events of an open trace file; the exit status (0 or 1). */
int utrace__print_file(const struct utrace__print_opts *o, struct utrace__tf *tf,
		       FILE *out) UTRACE_HIDDEN;

/*
 * One item at a time (the public API): utrace__printer_item() appends the
 * item's line to the printer's buffer, or says a problem through
 * utrace__printer_fmts(p)->pr and appends nothing.  0, or -ENOMEM.
 */
struct utrace__printer;
struct utrace__printer *utrace__printer_new(const struct utrace__print_opts *o,
					    struct utrace__tf *tf) UTRACE_HIDDEN;
int utrace__printer_item(struct utrace__printer *p,
			 const struct utrace__tf_item *it) UTRACE_HIDDEN;
struct utrace__obuf *utrace__printer_buf(struct utrace__printer *p) UTRACE_HIDDEN;
struct utrace__fmts *utrace__printer_fmts(struct utrace__printer *p) UTRACE_HIDDEN;
void utrace__printer_free(struct utrace__printer *p) UTRACE_HIDDEN;

/* UTRACE__OUT_OTLP, after utrace__printer_item() appended a record: where
 * its attribute list ("[...]") lies in the printer's buffer (*len 0:
 * nothing was appended). */
void utrace__printer_otlp_attrs(struct utrace__printer *p, size_t *at, size_t *len)
	UTRACE_HIDDEN;
/* The value of field 'name' of the event just appended, as --fields
 * writes it, appended to 'b': 0, or -ENOENT (no such field, or no event). */
int utrace__printer_field_text(struct utrace__printer *p, const char *name,
			       struct utrace__obuf *b) UTRACE_HIDDEN;

#endif /* UTRACE_READER_PRINT_H */
