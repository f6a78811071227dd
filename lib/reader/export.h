/* SPDX-License-Identifier: MIT */
/* The exporters of `utrace convert`, one export-<format>.c each.  Internal
 * to the reader library. */
#ifndef UTRACE_READER_EXPORT_H
#define UTRACE_READER_EXPORT_H

#include "compiler.h"
#include "file-reader.h"

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

#endif /* UTRACE_READER_EXPORT_H */
