/* SPDX-License-Identifier: MIT */
/* The exporters of `utrace convert`, one export-<format>.c each.  Internal
 * to the reader library. */
#ifndef UTRACE_READER_EXPORT_H
#define UTRACE_READER_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "file-reader.h"
#include "formats.h"

/*
 * Write what can be read of the open trace file 'tf' to 'out' as a
 * trace-cmd trace.dat (version 7, not compressed; docs/trace-dat-export.md).
 * Says what is wrong on stderr; returns the exit status (0 or 1).
 */
int utrace__export_tracedat(struct utrace__tf *tf, const char *out) UTRACE_HIDDEN;

/*
 * Write the open trace file 'tf' to 'out' as one self-contained HTML page:
 * a timeline per thread, the events' lines and fields, and the begin/end
 * pairs of 'slices' ("BEGIN.FIELD:END.FIELD" each) with their latency
 * histograms (docs/html-export.md).  Says what is wrong on stderr;
 * returns the exit status (0 or 1).
 */
int utrace__export_html(struct utrace__tf *tf, const char *out, const char *const *slices,
			size_t nr_slices) UTRACE_HIDDEN;

/*
 * Write the open trace file 'tf' as a CTF 1.8 trace in the directory 'out'
 * (made; it may exist if empty): 'metadata' and one stream file per CPU
 * (docs/ctf-export.md).  Says what is wrong on stderr; the exit status.
 */
int utrace__export_ctf(struct utrace__tf *tf, const char *out) UTRACE_HIDDEN;

/*
 * Write the open trace file 'tf' as an SQLite database 'out' (replaced):
 * a table per event, processes, threads, events, lost and the view
 * all_events (docs/utrace-convert.1).  Not in libutrace-reader: in the
 * tool's own export-sqlite library, the one user of libsqlite3.
 */
int utrace__export_sqlite(struct utrace__tf *tf, const char *out);

/*
 * What the streamed exports (json, perfetto) make of chosen events:
 * --slice "BEGIN.FIELD:END.FIELD" pairs a begin event with the end event
 * whose FIELD has the same value on the same thread (BEGIN and END in
 * the set_event forms "system:name" or "name"); --counter "EVENT.FIELD"
 * makes a counter of a numeric field, per process.
 */
struct utrace__export_opts {
	const char *const *slices;
	size_t nr_slices;
	const char *const *counters;
	size_t nr_counters;
};

/* The --slice / --counter texts well formed?  0, or -EINVAL with the
 * reason in why ("--slice 'x': ..."). */
int utrace__export_opts_check(const struct utrace__export_opts *o, char *why,
			      size_t whylen) UTRACE_HIDDEN;

/*
 * Write the events of 'tf' to 'out' as Chrome's JSON trace event format
 * (export-json.c) or as a Perfetto protobuf trace (export-perfetto.c),
 * streamed: memory does not grow with the trace.  Say what is wrong on
 * stderr; return the exit status (0 or 1).
 */
int utrace__export_json(struct utrace__tf *tf, const char *out,
			const struct utrace__export_opts *o) UTRACE_HIDDEN;
int utrace__export_perfetto(struct utrace__tf *tf, const char *out,
			    const struct utrace__export_opts *o) UTRACE_HIDDEN;

#endif /* UTRACE_READER_EXPORT_H */
