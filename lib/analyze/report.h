/* SPDX-License-Identifier: MIT */
/*
 * The aggregation of `utrace report` (report.c): events counted by sort
 * keys (comm, pid, tid, event, cpu, [EVENT.]FIELD[/raw]) and the latency
 * between paired events, printed in the layout of `perf report --stdio`.
 * The aggregation takes one item at a time (utrace__report_item()), so
 * that a live reader (`utrace top`) can feed it from pools as the file
 * reader does.  Internal to the reader library.
 */
#ifndef UTRACE_READER_REPORT_H
#define UTRACE_READER_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler.h"
#include "file-reader.h"

enum utrace__rkey_kind {
	UTRACE__RKEY_COMM,
	UTRACE__RKEY_PID,
	UTRACE__RKEY_TID,
	UTRACE__RKEY_EVENT,
	UTRACE__RKEY_CPU,
	UTRACE__RKEY_FIELD,             /* a field of the events that have it */
};

/* One --sort key; the strings point into the caller's argument. */
struct utrace__rkey {
	enum utrace__rkey_kind kind;
	char *event;                    /* FIELD: "name" or "sys:name", NULL: any */
	char *field;                    /* FIELD: the field's name */
	bool raw;                       /* FIELD/raw: the value, not as printed */
};

/*
 * One --latency BEGIN.FIELD:END.FIELD, or BEGIN:END without fields (the
 * fields NULL): an END pairs with the innermost BEGIN still open on its
 * thread, as function_graph pairs a function's entry and return (entry and
 * return probes, recursion included).
 */
struct utrace__rlatency {
	char *begin, *begin_field;      /* "name" or "sys:name", field */
	char *end, *end_field;
	const char *text;               /* as given, for the header */
};

struct utrace__print_opts;

struct utrace__report_opts {
	struct utrace__rkey *keys;
	size_t nr_keys;
	struct utrace__rlatency *lat;
	size_t nr_lat;
	bool one_table;                 /* top: one table over all the events,
					 * a column for every key */
	bool show_nr;                   /* -n: a Samples column (perf's) */
	/* -e: the events whose counts are shown (their -e tokens, as
	 * utrace script's, utrace__print_select()); NULL: every event.
	 * --latency's events pair whether selected or not. */
	struct utrace__print_opts *select;
};

/*
 * Parse a --sort list ("comm,event", "req_end.path/raw") into *keys (the
 * strings are copied; free with utrace__report_keys_free()).  0, -ENOMEM,
 * or -EINVAL with *bad set to the offending entry's offset in s.
 */
int utrace__report_parse_sort(const char *s, struct utrace__rkey **keys, size_t *nr,
			      size_t *bad) UTRACE_HIDDEN;
void utrace__report_keys_free(struct utrace__rkey *keys, size_t nr) UTRACE_HIDDEN;
/* Parse "BEGIN.FIELD:END.FIELD", or "BEGIN:END" (each "name" or
 * "sys:name", both the same form) into l (copied): 0, -ENOMEM or -EINVAL. */
int utrace__report_parse_latency(const char *s, struct utrace__rlatency *l) UTRACE_HIDDEN;
void utrace__report_latency_free(struct utrace__rlatency *l) UTRACE_HIDDEN;

struct utrace__report;

/* A report on the events of tf (its formats); NULL when out of memory. */
struct utrace__report *utrace__report_new(const struct utrace__report_opts *o,
					  struct utrace__tf *tf) UTRACE_HIDDEN;
/* Count one item (an event or a lost-events marker): 0 or -ENOMEM.  The
 * record must stay readable until utrace__report_print() (a file's
 * mapping does). */
int utrace__report_item(struct utrace__report *r, const struct utrace__tf_item *it) UTRACE_HIDDEN;
/* Print what was counted: 0, -ENOMEM or -EIO. */
int utrace__report_print(struct utrace__report *r, FILE *out) UTRACE_HIDDEN;
void utrace__report_free(struct utrace__report *r) UTRACE_HIDDEN;

/*
 * A table as text, for a reader that keeps counts longer than the records
 * stay readable (`utrace top`: its images of the buffers go after each
 * read): the cells as they are printed, the counts, and for a latency's
 * groups every duration.  Everything is the caller's (free it with
 * utrace__report_rows_free()); the report keeps its counts.
 */
struct utrace__report_rows {
	size_t ncols, nrows;
	char **head;                    /* [col]: the column headers */
	bool *right;                    /* [col]: right-aligned */
	char ***cell;                   /* [row][col] */
	uint64_t *count;                /* [row] */
	uint64_t **lat;                 /* latency: [row] its durations (ns), */
	size_t *nr_lat;                 /* count[row] of them; else NULL */
};
/* lat -1: the counts (one_table), else the groups of --latency number lat;
 * 0 or -ENOMEM. */
int utrace__report_rows(struct utrace__report *r, long lat, struct utrace__report_rows *out)
	UTRACE_HIDDEN;
void utrace__report_rows_free(struct utrace__report_rows *rows) UTRACE_HIDDEN;
/* The lost events counted (*unknown: some were lost, how many not known). */
uint64_t utrace__report_lost(const struct utrace__report *r, bool *unknown) UTRACE_HIDDEN;
/* The problems met (records or formats left out), and the latest one
 * (one_table: they are not said on stderr, the screen is the caller's). */
uint64_t utrace__report_problems(const struct utrace__report *r, const char **last) UTRACE_HIDDEN;
/* The pairs of --latency number li, its begins left without an end (those
 * still waiting included) and its ends without a begin. */
void utrace__report_lat_counts(const struct utrace__report *r, size_t li, uint64_t *pairs,
			       uint64_t *unmatched_begin, uint64_t *unmatched_end) UTRACE_HIDDEN;

/*
 * Pairs across reports (`utrace top`: one report an image of the buffers,
 * a request's begin in one and its end in a later one).  The begins still
 * waiting at the end of a report go out as text and numbers, and come
 * into the next report before its events, where an end pairs with them as
 * with its own begins; the latency row of such a pair takes the begin's
 * cells for the fields the begin event has, the end's for the others.
 */
struct utrace__rpend {
	uint64_t hash, time, idv;       /* the pairing key as the report makes
					 * it, the begin's time */
	uint32_t pid, id_len;           /* id_len 0: the id is the number idv */
	unsigned char *id;              /* else its id_len bytes */
	char **cells;                   /* [col] the begin's cell, NULL where
					 * the column comes from the end */
	size_t from;                    /* out: the carried begin's index + 1,
					 * 0: one of this report */
};
struct utrace__rmatch {                 /* an end paired with a carried begin */
	size_t from;                    /* its index */
	uint64_t d;                     /* the latency (ns) */
	char **cells;                   /* [col] the cells of the end */
};
struct utrace__rcarry {
	struct utrace__rpend *pend;     /* the begins waiting at the end: the */
	size_t npend;                   /* carried ones with from only */
	struct utrace__rmatch *match;
	size_t nmatch;
	size_t ncols;                   /* cells in each (one_table's columns) */
	uint64_t replaced;              /* begins (carried or not) followed by
					 * another of the same key: unmatched */
};
/* Before the first item: the begins p[0..n) waiting for --latency li (their
 * ids copied; cells and from not read); 0 or -ENOMEM. */
int utrace__report_carry_in(struct utrace__report *r, size_t li, const struct utrace__rpend *p,
			    size_t n) UTRACE_HIDDEN;
/* After the last item, one_table only: what carries over (everything is
 * the caller's; free it with utrace__report_carry_free()); 0 or -ENOMEM. */
int utrace__report_carry_out(struct utrace__report *r, size_t li, struct utrace__rcarry *out)
	UTRACE_HIDDEN;
void utrace__report_carry_free(struct utrace__rcarry *c) UTRACE_HIDDEN;
/* The worker of `utrace report`: the whole file, problems on stderr;
 * returns the exit status (0 or 1). */
int utrace__report_file(const struct utrace__report_opts *o, struct utrace__tf *tf,
			FILE *out) UTRACE_HIDDEN;

#endif /* UTRACE_READER_REPORT_H */
