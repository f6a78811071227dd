/* SPDX-License-Identifier: MIT */
/*
 * The event formats of a trace file, as the printer uses them (formats.c):
 * a cache of the distinct formats, each parsed once into one libtraceevent
 * handle under an id of our own, and the vetting of formats and records
 * that keeps libtraceevent from reading outside a record.  Also the vetter
 * for other writers (utrace convert).  Internal to the reader library.
 */
#ifndef UTRACE_READER_FORMATS_H
#define UTRACE_READER_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "file-reader.h"
#include "problems.h"
#include "table.h"

struct tep_handle;
struct tep_event;
struct tep_format_field;
struct tep_print_arg;

#define UTRACE__SLACK 64         /* zeroed bytes after each record copy */

struct utrace__check;

/* One distinct format: (system, name, text after the ID line). */
struct utrace__filter;

struct utrace__fmt {
	uint64_t hash;
	const char *system, *name, *body;
	struct utrace__tf_format *first; /* for messages */
	bool selected;
	int state;                       /* 0: not parsed, 1: ready, -1: refused */
	uint16_t id;                     /* ours, in the tep handle */
	struct tep_event *ev;
	struct utrace__check *checks;
	size_t nr_checks, cap_checks;
	uint32_t fixed_end;              /* the fixed fields end here */
	struct tep_format_field *last_field;
	struct tep_format_field **dyn;   /* __data_loc / __rel_loc fields */
	size_t nr_dyn;
	const char *refused;             /* why state is -1 */
	char *vet_why;                   /* the message, for a vetter */
	void *user;                      /* a vetter's caller's */
	struct utrace__filter *filter;   /* script --filter's program, or NULL */
	/* a uprobe event's (lib/probe), printed as the kernel prints them:
	 * 0 not looked at, 1 it is one, -1 it is not */
	int probe_state;
	struct utrace__probe_def *probe;
};

/* The symbol of a process holding addr, for %ps / %pS: 0, or -ENOENT. */
typedef int (*utrace__syms_fn)(void *ctx, const struct utrace__tf_process *proc,
			       uint64_t addr, const char **name, uint64_t *start, uint64_t *size);

/* The formats of one trace file. */
struct utrace__fmts {
	struct utrace__tf *tf;
	const char *name;                /* the file's, for messages */
	struct tep_handle *tep;
	struct utrace__table index;      /* the formats' hashes to all[] */
	size_t nr, cap;
	struct utrace__fmt **all;
	uint32_t next_id;
	utrace__syms_fn syms;            /* names for %pS (NULL: none) */
	void *syms_ctx;
	unsigned char *scratch;          /* the record copy */
	size_t scratch_cap;
	/* which formats are selected (NULL: all) */
	bool (*select)(const void *arg, const char *system, const char *name);
	const void *select_arg;
	struct utrace__problems pr;      /* the first described, the others counted */
	char *capture;                   /* problems are written here instead */
	size_t capture_len;
};

/* A record copy checked against its format (d: the scratch copy). */
struct utrace__rec {
	const unsigned char *d;
	uint32_t size;
	struct utrace__fmt *e;
	char *why;
	size_t whylen;
	bool failed;
	const struct utrace__tf_process *proc;   /* that wrote it */
	utrace__syms_fn syms;            /* names for %pS, or NULL */
	void *syms_ctx;
};

/* Set up a zeroed struct (its pr may be set already: the libtraceevent
 * handle) and tear down (zeroed again); -ENOMEM or -EINVAL. */
int utrace__fmts_init(struct utrace__fmts *c, struct utrace__tf *tf) UTRACE_HIDDEN;
void utrace__fmts_fini(struct utrace__fmts *c) UTRACE_HIDDEN;

/* Say a problem through c->pr (or into c->capture). */
void utrace__fmts_problem(struct utrace__fmts *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3))) UTRACE_HIDDEN;

/* The distinct format of 'f' (kept in f->priv); NULL: out of memory. */
struct utrace__fmt *utrace__fmts_get(struct utrace__fmts *c,
				     struct utrace__tf_format *f) UTRACE_HIDDEN;

/* Parse a format into the handle (once); e->state says how it went, a
 * refused format is said as a problem.  0, or -ENOMEM. */
int utrace__fmts_parse(struct utrace__fmts *c, struct utrace__fmt *e) UTRACE_HIDDEN;

/*
 * Copy the record of 'it' into c->scratch, common_type set to e's id and
 * UTRACE__SLACK zeroed bytes after it, and check it as libtraceevent will
 * read it ('printing': through tep_print_event(), not only its fields).
 * Returns 1, 0 when it fails (*why says why), or -ENOMEM; *r describes
 * the copy.
 */
int utrace__fmts_check(struct utrace__fmts *c, struct utrace__fmt *e,
		       const struct utrace__tf_item *it, bool printing,
		       struct utrace__rec *r, char *why, size_t whylen) UTRACE_HIDDEN;

/*
 * The same for the event of a stream item, a failure said through c->pr
 * ("'x.dat': record at offset N: event at offset M: 'sys:name': why"):
 * 1, 0 (said), or -ENOMEM.
 */
int utrace__fmts_check_item(struct utrace__fmts *c, struct utrace__fmt *e,
			    const struct utrace__tf_item *it, bool printing,
			    struct utrace__rec *r) UTRACE_HIDDEN;

/* Say that the event of 'it' has no format (unless its FORMAT record was
 * bad: the reader said that). */
void utrace__fmts_no_format(struct utrace__fmts *c, const struct utrace__tf_item *it)
	UTRACE_HIDDEN;

/* An event's fields as the filter compiler and the hist trigger parser
 * take them (after the four common ones; pointers are numbers); a
 * malloc()ed array (the strings are the handle's), NULL when out of
 * memory. */
struct utrace_event_field;
struct utrace_event_field *utrace__fmt_fields(const struct tep_event *ev, unsigned int *nr)
	UTRACE_HIDDEN;

/* '.function' of a recording (struct utrace__filter_syms, ctx: the
 * process): its SYMBOL records, by name or holding an address; 0 or
 * -ENOENT. */
int utrace__proc_sym_by_name(void *ctx, const char *name, uint64_t *start, uint64_t *size)
	UTRACE_HIDDEN;
int utrace__proc_sym_by_addr(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size)
	UTRACE_HIDDEN;

/* A worker's start on a file: its warning said, and false (the reason
 * said) when it has not even a header. */
bool utrace__tf_readable(struct utrace__tf *tf) UTRACE_HIDDEN;

/* A little-endian number of 1, 2, 4 or 8 bytes (0 for other sizes). */
uint64_t utrace__read_num(const unsigned char *p, int size) UTRACE_HIDDEN;

/*
 * Vetting for other writers (utrace convert): 1 when `utrace script` would
 * use the format / print the event, 0 when it would refuse it (*why says
 * why), or -ENOMEM.  The vetter keeps its own libtraceevent handle and
 * tells formats apart (system, name and text) through their priv
 * pointers; utrace__vet_user() gives the caller a slot of its own for each
 * distinct format (NULL at first).
 */
struct utrace__vet;
struct utrace__vet *utrace__vet_new(struct utrace__tf *tf) UTRACE_HIDDEN;
void **utrace__vet_user(struct utrace__vet *v, struct utrace__tf_format *f) UTRACE_HIDDEN;
int utrace__vet_format(struct utrace__vet *v, struct utrace__tf_format *f, char *why,
		       size_t whylen) UTRACE_HIDDEN;
int utrace__vet_event(struct utrace__vet *v, const struct utrace__tf_item *it, char *why,
		      size_t whylen) UTRACE_HIDDEN;
void utrace__vet_free(struct utrace__vet *v) UTRACE_HIDDEN;

/* For the fuzz target: quiet sanitizer deaths in the child that parses a
 * format first, and a cache of its verdicts (a fork per format per input
 * would make fuzzing crawl).  NULL unless set. */
extern void (*utrace__parse_child_hook)(void) UTRACE_HIDDEN;
extern int (*utrace__parse_verdict_get)(const char *text, const char *sys) UTRACE_HIDDEN;
extern void (*utrace__parse_verdict_put)(const char *text, const char *sys,
					 int verdict) UTRACE_HIDDEN;

#endif /* UTRACE_READER_FORMATS_H */
