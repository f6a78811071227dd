/* SPDX-License-Identifier: MIT */
/* The exporters of `utrace convert`, one export-<format>.c each.  Internal
 * to the reader library. */
#ifndef UTRACE_READER_EXPORT_H
#define UTRACE_READER_EXPORT_H

#include <stdbool.h>
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

/* --- what the exporters that write fields share (export-walk.c) --- */

/*
 * A field of an event as the exports write it, the way `utrace script
 * --fields` prints it: a number, a string (char arrays, __data_loc
 * char[]), a fixed array or a variable-length sequence of numbers (other
 * arrays; a struct or a field of odd size is an array of bytes).
 */
enum utrace__xkind { UTRACE__X_NUM, UTRACE__X_STR, UTRACE__X_ARRAY, UTRACE__X_SEQ };

struct utrace__xfield {
	const char *name;                /* as in the format */
	enum utrace__xkind kind;
	unsigned int es;                 /* bytes of a number or element: 1, 2, 4, 8 */
	bool is_signed;
	bool hex;                        /* a pointer: shown in hex where it can be */
	unsigned int count;              /* elements of a fixed array */
	const struct tep_format_field *f;
};

/* A field's value in a checked record. */
struct utrace__xval {
	uint64_t num;                    /* UTRACE__X_NUM, sign-extended */
	const unsigned char *p;          /* the others: bytes ... */
	uint32_t n;                      /* ... their number (a string: up to its NUL) */
};

/* The fields after the common ones (*nr of them, in a malloc()ed
 * vector), or NULL when out of memory. */
struct utrace__xfield *utrace__xfields(const struct utrace__fmt *e, unsigned int *nr)
	UTRACE_HIDDEN;
void utrace__xvalue(const struct utrace__xfield *x, const struct utrace__rec *r,
		    struct utrace__xval *v) UTRACE_HIDDEN;

/*
 * The reading all field-writing exports share: every distinct format of
 * the file that libtraceevent takes goes to format() once, in file order,
 * before the first event; then each event, checked as `utrace script
 * --fields` checks it, to event(), and each lost-events marker to lost().
 * Bad records and formats are said (first in full, the others counted)
 * and left out.  A callback returns 0 or a negative code that ends the
 * walk (-ENOMEM is said here; others the callback said).  Returns the
 * exit status so far (0 or 1).
 */
struct utrace__xwalk {
	void *ctx;
	int (*format)(void *ctx, struct utrace__fmt *e);
	int (*event)(void *ctx, const struct utrace__tf_item *it, struct utrace__fmt *e,
		     const struct utrace__rec *r);
	int (*lost)(void *ctx, const struct utrace__tf_item *it);
};
int utrace__xwalk(struct utrace__tf *tf, const struct utrace__xwalk *w) UTRACE_HIDDEN;

#endif /* UTRACE_READER_EXPORT_H */
