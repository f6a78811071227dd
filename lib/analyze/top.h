/* SPDX-License-Identifier: MIT */
/*
 * `utrace top` (top.c): the table of `utrace report` kept over the images
 * of running processes' buffers that the tool takes one after another, and
 * the screen that shows it, in the layout of `perf top --stdio`.
 * Internal to the reader library.
 */
#ifndef UTRACE_READER_TOP_H
#define UTRACE_READER_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler.h"
#include "file-reader.h"
#include "report.h"

struct utrace__top;

/* o (its one_table set) must outlive the handle; cumulative: counts since
 * the start, else per interval.  NULL when out of memory. */
struct utrace__top *utrace__top_new(const struct utrace__report_opts *o, bool cumulative)
	UTRACE_HIDDEN;
void utrace__top_free(struct utrace__top *t) UTRACE_HIDDEN;

/* Count the events of one image of the buffers (tf may go after): 0 or
 * -ENOMEM. */
int utrace__top_add(struct utrace__top *t, struct utrace__tf *tf) UTRACE_HIDDEN;

struct utrace__top_screen {
	double seconds;                 /* the interval's length */
	const char *what;               /* "pid 1234", "3 processes" */
	unsigned int rows, cols;        /* the terminal's; 0: no limit */
};

/* One snapshot: the header line, then the table (and each --latency's),
 * cut to the screen; 0, -ENOMEM or -EIO. */
int utrace__top_print(struct utrace__top *t, const struct utrace__top_screen *s, FILE *out)
	UTRACE_HIDDEN;

/* The next interval begins (per interval: the counts start again). */
void utrace__top_next(struct utrace__top *t) UTRACE_HIDDEN;

#endif /* UTRACE_READER_TOP_H */
