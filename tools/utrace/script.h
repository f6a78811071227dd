/* SPDX-License-Identifier: MIT */
/* The printer of `utrace script`, shared with show, pipe and mount. */
#ifndef UTRACE_TOOL_SCRIPT_H
#define UTRACE_TOOL_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <utrace/utrace.h>

#include "setevent.h"
#include "file-reader.h"

enum out_mode { OUT_TEXT, OUT_FIELDS, OUT_JSON };

/* A growing byte buffer (script's output, convert's trace.dat metadata).
 * When memory runs out, nomem is set and what comes after is dropped. */
struct obuf {
	char *p;
	size_t len, cap;
	bool nomem;
};

void ob_grow(struct obuf *b, size_t n);

static inline void ob_reserve(struct obuf *b, size_t n)
{
	if (__builtin_expect(b->len + n > b->cap, 0))
		ob_grow(b, n);
}

static inline void ob_put(struct obuf *b, const void *s, size_t n)
{
	ob_reserve(b, n);
	if (b->len + n > b->cap)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

struct script_opts {
	const char *input;
	enum out_mode mode;
	struct utrace__set_event_match *ev;
	char **ev_text;
	bool *ev_matched;
	size_t nr_ev;
	bool quiet;          /* no summary lines on stderr (live buffers) */
	/* "##### CPU N buffer started ####" before the first event of each
	 * CPU but the first line, as the kernel's trace file does when its
	 * buffer was overrun (live buffers in overwrite mode) */
	bool annotate_cpus;
};

/* Print the events of an open trace file; the exit status (0 or 1). */
int script_run(const struct script_opts *o, struct utrace__tf *tf, FILE *out);

/*
 * Vetting for other writers (utrace convert): 1 when `utrace script` would
 * use the format / print the event, 0 when it would refuse it (*why says
 * why), or -ENOMEM.  The vetter keeps its own libtraceevent handle and
 * tells formats apart (system, name and text) through their priv
 * pointers; script_vet_user() gives the caller a slot of its own for each
 * distinct format (NULL at first).
 */
struct script_vet;
struct script_vet *script_vet_new(struct utrace__tf *tf);
void **script_vet_user(struct script_vet *v, struct utrace__tf_format *f);
int script_vet_format(struct script_vet *v, struct utrace__tf_format *f, char *why,
		      size_t whylen);
int script_vet_event(struct script_vet *v, const struct utrace__tf_item *it, char *why,
		     size_t whylen);
void script_vet_free(struct script_vet *v);

#endif /* UTRACE_TOOL_SCRIPT_H */
