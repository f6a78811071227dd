/* SPDX-License-Identifier: MIT */
/* The exporters of `utrace convert`, one export-<format>.c each.  Internal
 * to the reader library. */
#ifndef UTRACE_READER_EXPORT_H
#define UTRACE_READER_EXPORT_H

#include <stddef.h>

#include "compiler.h"
#include "file-reader.h"

/*
 * Write what can be read of the open trace file 'tf' to 'out' as a
 * trace-cmd trace.dat (version 7, not compressed; docs/trace-dat-export.md).
 * Says what is wrong on stderr; returns the exit status (0 or 1).
 */
int utrace__export_tracedat(struct utrace__tf *tf, const char *out) UTRACE_HIDDEN;

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
