/* SPDX-License-Identifier: MIT */
/*
 * The walk that the exports writing events one by one share
 * (export-walk.c): export-json.c, export-perfetto.c, export-ctf.c and
 * export-sqlite.c.  It reads the merged stream of the trace file, checks
 * each event as `utrace script --json` does and describes its fields
 * (fields.h), pairs --slice begins and ends, picks out --counter values,
 * says the problems, and hands each step to a writer.  A streamed writer
 * (json, perfetto) appends its bytes to an output buffer, the file 'out'
 * that the walk opens and flushes every 64 KiB; a writer with its own
 * output (ctf: a directory, sqlite: a database) passes no 'out'.  What it
 * keeps is per format, per thread and per open slice, never per event:
 * memory does not grow with the trace.
 */
#ifndef UTRACE_READER_EXPORT_WALK_H
#define UTRACE_READER_EXPORT_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "fields.h"
#include "file-reader.h"
#include "formats.h"
#include "obuf.h"
#include "setevent.h"
#include "table.h"

/*
 * The EVENT.FIELD of a --slice or --counter, EVENT in the set_event forms
 * ("name", "system:name", "system:*", ...), and a --slice
 * "BEGIN.FIELD:END.FIELD": one parser for the html page (which pairs
 * per process, latest begin first) and the walk (which pairs per thread,
 * innermost first).
 */
struct utrace__xspec {
	struct utrace__set_event_match m;
	const char *event;               /* EVENT as given */
	const char *field;
	bool matched;                    /* an event of the file is this */
};

struct utrace__xslice {
	char *text;                      /* a copy the specs point into: free() */
	struct utrace__xspec b, e;
	const char *given;
};

/* Parse 'given' into x: 0, -EINVAL (not of the form), -ENOMEM; free(x->text)
 * in every case. */
int utrace__xslice_parse(const char *given, struct utrace__xslice *x) UTRACE_HIDDEN;

/* A distinct event format, as the exports see it. */
struct utrace__xfmt {
	struct utrace__fmt *e;           /* e->system, e->name */
	struct utrace__fdesc *fields;    /* every field after the common ones */
	size_t nr_fields;
	int begin, end;                  /* the --slice it begins / ends, or -1 */
	const struct utrace__fdesc *begin_key, *end_key;
	size_t *counters;                /* the --counter entries it feeds */
	const struct utrace__fdesc **counter_field;
	size_t nr_counters;
	void *user;                      /* the writer's (freed with free()) */
};

enum utrace__xkind {
	UTRACE__X_INSTANT,               /* an event */
	UTRACE__X_BEGIN,                 /* a --slice begin */
	UTRACE__X_END,                   /* the end of the innermost open slice */
};

/* One event, checked and ready to write. */
struct utrace__xev {
	const struct utrace__tf_item *it;
	struct utrace__xfmt *xf;
	const struct utrace__rec *r;     /* the record copy its fields are read from */
	enum utrace__xkind kind;
	size_t thread, proc;             /* indexes in w->thr, w->proc */
	uint32_t pid, tid;               /* tid: the pid for a process's own records */
};

struct utrace__xwalk;

/*
 * What a writer does at each step; those it has no use for may be NULL
 * (start, format, counter, end).  A writer's failure: it sets w->err to a
 * negative code (and says why, except -ENOMEM, which the walk says); the
 * walk then ends.
 */
struct utrace__xwriter {
	/* Every distinct format of the file that libtraceevent takes, once,
	 * in file order, before start() (the walk then describes them all up
	 * front; without format(), at their first event). */
	void (*format)(struct utrace__xwalk *w, struct utrace__xfmt *xf);
	/* Before the first item; 'first' is its time (0: the file has none). */
	void (*start)(struct utrace__xwalk *w, uint64_t first);
	void (*event)(struct utrace__xwalk *w, const struct utrace__xev *ev);
	/* Counter 'c' of the event has value v (a number). */
	void (*counter)(struct utrace__xwalk *w, const struct utrace__xev *ev, size_t c,
			const struct utrace__fval *v);
	/* Events lost before this point (it->lost; 0: not known how many). */
	void (*lost)(struct utrace__xwalk *w, const struct utrace__xev *ev);
	void (*end)(struct utrace__xwalk *w);
};

struct utrace__xwalk {
	struct utrace__tf *tf;
	const char *name;                /* the input's, for messages */
	struct utrace__obuf ob;          /* what the writer appends to */
	const struct utrace__xwriter *wr;
	void *ctx;                       /* the writer's */
	const char *const *counter_text; /* --counter entries, as given */
	size_t nr_counters;
	/* every thread and process: the file's (utrace__tf_thread(),
	 * _process(), in their order), then those of kernel events' tasks
	 * that are not among them, then the kernel's own (kthread) */
	const struct utrace__tf_thread **thr;
	const struct utrace__tf_process **proc;
	size_t nr_threads, nr_procs;
	size_t kthread;                  /* the kernel's own items', or SIZE_MAX */
	struct utrace__tf_thread kthr;
	struct utrace__tf_process kproc;
	/* the rest is the walk's own (export-walk.c) */
	struct utrace__fmts fmts;
	struct utrace__xslice *slices;
	size_t nr_slices;
	struct xw_counter *counters;
	struct xw_thread *threads;
	struct utrace__table index;      /* thread and process pointers to their indexes */
	size_t *thread_proc;             /* the process of each thread */
	size_t max_depth_said;
	int fd;                          /* -1: the writer has its own output */
	int werr;
	int err;                         /* the writer's failure (negative) */
};

/* The thread name the exports show: its own, its process's, or NULL. */
const char *utrace__xw_thread_name(const struct utrace__tf_thread *t) UTRACE_HIDDEN;
/* A thread's id, its process's pid for a process's own records. */
uint32_t utrace__xw_tid(const struct utrace__tf_thread *t) UTRACE_HIDDEN;

/*
 * Walk 'tf' into 'out' (NULL: the writer has its own output) with writer
 * 'wr' (ctx: its state), 'o' its --slice and --counter (NULL: none).
 * The exit status: 0, or 1 after saying what was wrong.
 */
int utrace__export_walk(struct utrace__tf *tf, const char *out,
			const struct utrace__export_opts *o, const struct utrace__xwriter *wr,
			void *ctx) UTRACE_HIDDEN;

#endif /* UTRACE_READER_EXPORT_WALK_H */
