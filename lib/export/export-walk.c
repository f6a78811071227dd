/* SPDX-License-Identifier: MIT */
/*
 * The walk of the exports that write events one by one: json, perfetto,
 * ctf and sqlite (export-walk.h).
 *
 * Slices.  Each thread keeps a stack of its open slices, as Perfetto's
 * and Chrome's thread tracks nest them.  A --slice begin event pushes a
 * slice with the value of its key field; an end event closes the slice
 * on top of its thread's stack when that slice is of the same --slice
 * and has the same key value.  Anything else is an instant:
 *
 *     thread 7:  begin(id=1)  begin(id=2)  end(id=2)  end(id=9)  end(id=1)
 *                B            B            E          instant    E
 *
 * an end whose begin is not the innermost open slice (overlapping pairs,
 * a begin on another thread, no begin at all) stays an instant, since a
 * track cannot show it as a slice.  A begin whose end never comes stays
 * open to the end of the trace.  At most MAX_DEPTH slices are open on a
 * thread; more begins are instants (said once).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>

#include "export-walk.h"
#include "problems.h"
#include "setevent.h"

#define MAX_DEPTH 1000
#define FLUSH_AT (1 << 16)

struct xw_counter {
	char *text;
	struct utrace__xspec ev;
	const char *given;
};

/* An open slice: its --slice and its key (a number, or bytes). */
struct xw_open {
	int slice;
	bool is_num;
	uint64_t num;
	unsigned char *bytes;
	uint32_t len;
};

struct xw_thread {
	struct xw_open *open;
	uint32_t depth, cap;
};

/* --- the --slice and --counter texts --- */

static bool is_ident(const char *s, size_t n)
{
	size_t i;

	if (!n || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	for (i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* "EVENT.FIELD" in s[0..n) (NUL-terminated after it when 'cut'). */
static bool parse_spec(char *s, size_t n, struct utrace__xspec *sp, bool cut)
{
	char *dot = NULL;
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '.')
			dot = s + i;
	if (!dot || dot == s || !is_ident(dot + 1, (size_t)(s + n - dot - 1)))
		return false;
	if (utrace__parse_set_event(s, (size_t)(dot - s), &sp->m) || !sp->m.set)
		return false;
	if (cut)
		s[n] = 0;
	*dot = 0;                        /* sp->m has lengths */
	sp->event = s;
	sp->field = dot + 1;
	sp->matched = false;
	return true;
}

/* BEGIN.FIELD:END.FIELD; 'text' is modified (the specs point into it). */
static bool parse_slice(char *text, struct utrace__xslice *x)
{
	char *dot = strchr(text, '.'), *colon;

	if (!dot)
		return false;
	colon = strchr(dot, ':');
	if (!colon)
		return false;
	return parse_spec(colon + 1, strlen(colon + 1), &x->e, false) &&
	       parse_spec(text, (size_t)(colon - text), &x->b, true);
}

int utrace__xslice_parse(const char *given, struct utrace__xslice *x)
{
	x->given = given;
	x->text = strdup(given);
	if (!x->text)
		return -ENOMEM;
	return parse_slice(x->text, x) ? 0 : -EINVAL;
}

int utrace__export_opts_check(const struct utrace__export_opts *o, char *why, size_t whylen)
{
	struct utrace__xslice x;
	struct utrace__xspec sp;
	size_t i;
	char *t;
	bool ok;
	int r;

	for (i = 0; i < o->nr_slices; i++) {
		r = utrace__xslice_parse(o->slices[i], &x);
		free(x.text);
		if (r == -ENOMEM)
			return r;
		if (r < 0) {
			snprintf(why, whylen, "bad --slice '%s': give BEGIN.FIELD:END.FIELD, "
				 "each event 'name' or 'system:name'", o->slices[i]);
			return -EINVAL;
		}
	}
	for (i = 0; i < o->nr_counters; i++) {
		t = strdup(o->counters[i]);
		if (!t)
			return -ENOMEM;
		ok = parse_spec(t, strlen(t), &sp, false);
		free(t);
		if (!ok) {
			snprintf(why, whylen, "bad --counter '%s': give EVENT.FIELD, the event "
				 "'name' or 'system:name'", o->counters[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* --- threads and processes: their indexes, by address --- */

static uint64_t phash(const void *p)
{
	return utrace__hash_u64((uint64_t)(uintptr_t)p);
}

static void hput(struct utrace__xwalk *w, const void *p, size_t v)
{
	/* room was reserved for every process and thread */
	(void)utrace__table_put(&w->index, phash(p), v);
}

/* The index of p, or SIZE_MAX. */
static size_t hget(const struct utrace__xwalk *w, const void *p)
{
	return utrace__table_get(&w->index, phash(p), SIZE_MAX);
}

/*
 * The thread of the kernel's own items (the losses of its per-CPU
 * streams, which no task is named for): the task 0 of the kernel events
 * if there is one, else "kernel", pid and tid 0, added once.
 */
static size_t kernel_thread(struct utrace__xwalk *w)
{
	size_t i, pi;

	if (w->kthread != SIZE_MAX)
		return w->kthread;
	for (i = 0; i < w->nr_threads; i++)
		if (!w->thr[i]->tid && !w->thr[i]->proc->pid)
			return w->kthread = i;
	for (pi = 0; pi < w->nr_procs && w->proc[pi]->pid; pi++)
		;
	w->kproc.comm = "kernel";
	w->kproc.exe = "";
	w->kthr.proc = &w->kproc;
	if (pi == w->nr_procs)
		w->proc[w->nr_procs++] = &w->kproc;
	w->thr[w->nr_threads] = &w->kthr;
	w->thread_proc[w->nr_threads] = pi;
	return w->kthread = w->nr_threads++;
}

/*
 * The threads and processes the exports show: the file's, then the tasks
 * of its kernel events (file-reader.h) that are not among them.  A task
 * whose tid is a thread's of the file (the traced program's kernel
 * events) is that thread; one whose thread group is a process already
 * there is in it.  A scan for each task: the file has few threads, and
 * the kernel's tasks (those its events name) few thread groups.
 */
static int index_threads(struct utrace__xwalk *w)
{
	const struct utrace__tf_thread *t;
	size_t i, nr_k = 0, nt;

	while (utrace__tf_process(w->tf, w->nr_procs))
		w->nr_procs++;
	while (utrace__tf_thread(w->tf, w->nr_threads))
		w->nr_threads++;
	while (utrace__tf_ktask(w->tf, nr_k))
		nr_k++;
	if (utrace__table_reserve(&w->index, w->nr_procs + w->nr_threads + 2 * nr_k) < 0)
		return -ENOMEM;
	w->thr = calloc(w->nr_threads + nr_k + 2, sizeof(*w->thr));
	w->proc = calloc(w->nr_procs + nr_k + 2, sizeof(*w->proc));
	w->threads = calloc(w->nr_threads + nr_k + 2, sizeof(*w->threads));
	w->thread_proc = calloc(w->nr_threads + nr_k + 2, sizeof(*w->thread_proc));
	if (!w->thr || !w->proc || !w->threads || !w->thread_proc)
		return -ENOMEM;
	for (i = 0; i < w->nr_procs; i++) {
		w->proc[i] = utrace__tf_process(w->tf, i);
		hput(w, w->proc[i], i);
	}
	for (i = 0; (t = utrace__tf_thread(w->tf, i)); i++) {
		w->thr[i] = t;
		hput(w, t, i);
		w->thread_proc[i] = hget(w, t->proc);
	}
	nt = w->nr_threads;
	for (i = 0; (t = utrace__tf_ktask(w->tf, i)); i++) {
		size_t ti, pi;

		for (pi = 0; pi < w->nr_procs && w->proc[pi]->pid != t->proc->pid; pi++)
			;
		for (ti = 0; ti < nt && !(w->thr[ti]->tid == t->tid &&
					  w->thr[ti]->proc->pid == t->proc->pid); ti++)
			;
		if (pi == w->nr_procs)
			w->proc[w->nr_procs++] = t->proc;
		hput(w, t->proc, pi);
		if (ti == nt) {
			ti = w->nr_threads++;
			w->thr[ti] = t;
			w->thread_proc[ti] = pi;
		}
		hput(w, t, ti);
	}
	for (i = 0; utrace__tf_format(w->tf, i); i++)
		if (hget(w, utrace__tf_format(w->tf, i)->proc) == SIZE_MAX)
			kernel_thread(w);        /* kernel events, their streams */
	return 0;
}

const char *utrace__xw_thread_name(const struct utrace__tf_thread *t)
{
	if (t->comm && t->comm[0])
		return t->comm;
	if (t->proc->comm && t->proc->comm[0])
		return t->proc->comm;
	return NULL;
}

uint32_t utrace__xw_tid(const struct utrace__tf_thread *t)
{
	return t->tid ? t->tid : t->proc->pid;
}

/* --- formats --- */

static void xfmt_free(struct utrace__xfmt *xf)
{
	if (!xf)
		return;
	free(xf->fields);
	free(xf->counters);
	free(xf->counter_field);
	free(xf->user);
	free(xf);
}

/* The field 'name' of xf, or NULL (said as a problem). */
static const struct utrace__fdesc *spec_field(struct utrace__xwalk *w, struct utrace__xfmt *xf,
					      const char *name, const char *opt,
					      const char *given)
{
	size_t i;

	for (i = 0; i < xf->nr_fields; i++)
		if (!strcmp(xf->fields[i].name, name))
			return &xf->fields[i];
	utrace__fmts_problem(&w->fmts, "'%s': event '%s:%s' has no field '%s' (%s '%s'): "
			     "its events are kept as they are", w->name, xf->e->system,
			     xf->e->name, name, opt, given);
	return NULL;
}

/* What the exports make of a parsed format; NULL: out of memory. */
static struct utrace__xfmt *xfmt_new(struct utrace__xwalk *w, struct utrace__fmt *e)
{
	struct utrace__xfmt *xf = calloc(1, sizeof(*xf));
	struct tep_format_field *f;
	size_t i, n = 0;

	if (!xf)
		return NULL;
	xf->e = e;
	xf->begin = xf->end = -1;
	for (f = e->ev->format.fields; f; f = f->next)
		n++;
	xf->fields = calloc(n + 1, sizeof(*xf->fields));
	xf->counters = calloc(w->nr_counters + 1, sizeof(*xf->counters));
	xf->counter_field = calloc(w->nr_counters + 1, sizeof(*xf->counter_field));
	if (!xf->fields || !xf->counters || !xf->counter_field) {
		xfmt_free(xf);
		return NULL;
	}
	for (f = e->ev->format.fields; f; f = f->next)
		utrace__fdesc_init(&xf->fields[xf->nr_fields++], f);
	for (i = 0; i < w->nr_slices; i++) {
		struct utrace__xslice *s = &w->slices[i];

		if (xf->end < 0 && utrace__set_event_matches(&s->e.m, e->system, e->name)) {
			xf->end_key = spec_field(w, xf, s->e.field, "--slice", s->given);
			if (xf->end_key)
				xf->end = (int)i;
		}
		if (xf->begin < 0 && utrace__set_event_matches(&s->b.m, e->system, e->name)) {
			xf->begin_key = spec_field(w, xf, s->b.field, "--slice", s->given);
			if (xf->begin_key)
				xf->begin = (int)i;
		}
	}
	for (i = 0; i < w->nr_counters; i++) {
		struct xw_counter *c = &w->counters[i];
		const struct utrace__fdesc *d;

		if (!utrace__set_event_matches(&c->ev.m, e->system, e->name))
			continue;
		d = spec_field(w, xf, c->ev.field, "--counter", c->given);
		if (d && d->kind != UTRACE__FVAL_NUM) {
			utrace__fmts_problem(&w->fmts, "'%s': field '%s' of '%s:%s' is not a "
					     "number (--counter '%s'): no counter", w->name,
					     c->ev.field, e->system, e->name, c->given);
			d = NULL;
		}
		if (d) {
			xf->counters[xf->nr_counters] = i;
			xf->counter_field[xf->nr_counters++] = d;
		}
	}
	return xf;
}

/* --- slices --- */

static void key_of(const struct utrace__fdesc *d, const struct utrace__rec *r,
		   struct xw_open *k)
{
	struct utrace__fval v;

	utrace__fdesc_read(d, r, &v);
	k->is_num = v.kind == UTRACE__FVAL_NUM;
	k->num = v.num;
	k->bytes = (unsigned char *)v.p;
	k->len = k->is_num ? 0 : v.len;
}

/* Whether the event closes the innermost slice of its thread (popped). */
static bool slice_end(struct xw_thread *t, const struct utrace__xfmt *xf,
		      const struct utrace__rec *r)
{
	struct xw_open k, *top;

	if (xf->end < 0 || !t->depth)
		return false;
	top = &t->open[t->depth - 1];
	key_of(xf->end_key, r, &k);
	if (top->slice != xf->end || top->is_num != k.is_num ||
	    (k.is_num ? top->num != k.num :
	     top->len != k.len || memcmp(top->bytes, k.bytes, k.len)))
		return false;
	free(top->bytes);
	t->depth--;
	return true;
}

/* Open a slice: 1, 0 when the thread has too many open, -ENOMEM. */
static int slice_begin(struct xw_thread *t, const struct utrace__xfmt *xf,
		       const struct utrace__rec *r)
{
	struct xw_open k;

	if (t->depth >= MAX_DEPTH)
		return 0;
	if (t->depth == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 8;
		struct xw_open *n = realloc(t->open, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->open = n;
		t->cap = cap;
	}
	key_of(xf->begin_key, r, &k);
	k.slice = xf->begin;
	if (!k.is_num) {
		unsigned char *copy = malloc(k.len ? k.len : 1);

		if (!copy)
			return -ENOMEM;
		memcpy(copy, k.bytes, k.len);
		k.bytes = copy;
	} else {
		k.bytes = NULL;
	}
	t->open[t->depth++] = k;
	return 1;
}

/* --- the output --- */

static int flush(struct utrace__xwalk *w)
{
	const char *p = w->ob.p;
	size_t n = w->ob.len;

	while (n) {
		ssize_t r = write(w->fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			w->werr = r < 0 ? errno : EIO;
			return -EIO;
		}
		p += r;
		n -= (size_t)r;
	}
	w->ob.len = 0;
	return 0;
}

/* --- the walk --- */

/* An event of the stream: checked, read, paired, written.  0 or -ENOMEM. */
static int walk_event(struct utrace__xwalk *w, const struct utrace__tf_item *it,
		      struct utrace__xev *ev)
{
	struct utrace__fmt *e;
	struct utrace__xfmt *xf;
	struct utrace__rec r;
	struct xw_thread *t;
	size_t i;
	int ok;

	if (!it->format) {
		utrace__fmts_no_format(&w->fmts, it);
		return 0;
	}
	e = utrace__fmts_get(&w->fmts, it->format);
	if (!e)
		return -ENOMEM;
	if (!e->state && utrace__fmts_parse(&w->fmts, e) < 0)
		return -ENOMEM;
	if (e->state < 0)
		return 0;                /* utrace__fmts_parse() said why */
	ok = utrace__fmts_check_item(&w->fmts, e, it, false, &r);
	if (ok <= 0)
		return ok;
	if (!e->user && !(e->user = xfmt_new(w, e)))
		return -ENOMEM;
	xf = e->user;
	ev->xf = xf;
	ev->r = &r;
	ev->kind = UTRACE__X_INSTANT;
	t = &w->threads[ev->thread];
	if (slice_end(t, xf, &r)) {
		ev->kind = UTRACE__X_END;
	} else if (xf->begin >= 0) {
		ok = slice_begin(t, xf, &r);
		if (ok < 0)
			return ok;
		if (ok)
			ev->kind = UTRACE__X_BEGIN;
		else if (!w->max_depth_said++)
			utrace__fmts_problem(&w->fmts, "'%s': thread %u has %u slices open: "
				"later begins are kept as instants", w->name, ev->tid, MAX_DEPTH);
	}
	w->wr->event(w, ev);
	for (i = 0; i < xf->nr_counters; i++) {
		struct utrace__fval v;

		utrace__fdesc_read(xf->counter_field[i], &r, &v);
		if (w->wr->counter)
			w->wr->counter(w, ev, xf->counters[i], &v);
	}
	return 0;
}

/* For a writer with format(): every distinct format of the file that
 * libtraceevent takes, in file order, before the first event. */
static int every_format(struct utrace__xwalk *w)
{
	struct utrace__tf_format *f;
	struct utrace__fmt *e;
	size_t i;

	for (i = 0; (f = utrace__tf_format(w->tf, i)); i++) {
		e = utrace__fmts_get(&w->fmts, f);
		if (!e)
			return -ENOMEM;
		if (e->state)
			continue;        /* seen */
		if (utrace__fmts_parse(&w->fmts, e) < 0)
			return -ENOMEM;
		if (e->state < 0)
			continue;        /* said why */
		e->user = xfmt_new(w, e);
		if (!e->user)
			return -ENOMEM;
		w->wr->format(w, e->user);
		if (w->ob.nomem || w->err)
			return w->ob.nomem ? -ENOMEM : w->err;
	}
	return 0;
}

static int walk(struct utrace__xwalk *w)
{
	struct utrace__tf_iter *it = NULL;
	const struct utrace__tf_thread *last = NULL;
	struct utrace__tf_item item;
	bool started = false;
	size_t thread = 0;
	int r;

	r = utrace__tf_iter_new(w->tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		struct utrace__xev ev = { .it = &item };

		if (!started) {
			if (w->wr->start)
				w->wr->start(w, item.time);
			started = true;
		}
		if (item.thread != last) {       /* events come in runs of a thread */
			last = item.thread;
			thread = hget(w, last);
			if (thread == SIZE_MAX)
				thread = kernel_thread(w);
		}
		ev.thread = thread;
		ev.proc = w->thread_proc[thread];
		ev.pid = item.proc->pid;
		ev.tid = utrace__xw_tid(item.thread);
		if (item.kind == UTRACE__TF_LOST)
			w->wr->lost(w, &ev);
		else if ((r = walk_event(w, &item, &ev)) < 0)
			break;
		if (w->ob.nomem || w->err) {
			r = w->ob.nomem ? -ENOMEM : w->err;
			break;
		}
		if (w->fd >= 0 && w->ob.len >= FLUSH_AT && flush(w) < 0) {
			r = -EIO;
			break;
		}
	}
	utrace__tf_iter_free(it);
	if (r < 0)
		return r;
	if (!started && w->wr->start)
		w->wr->start(w, 0);
	if (w->wr->end)
		w->wr->end(w);
	if (w->ob.nomem || w->err)
		return w->ob.nomem ? -ENOMEM : w->err;
	return w->fd >= 0 ? flush(w) : 0;
}

/* Parse the options, and check each names an event of the file: 0, or
 * -EINVAL said, or -ENOMEM. */
static int setup_specs(struct utrace__xwalk *w, const struct utrace__export_opts *o)
{
	struct utrace__tf_format *f;
	size_t i, j;
	int bad = 0;

	w->slices = calloc(o->nr_slices + 1, sizeof(*w->slices));
	w->counters = calloc(o->nr_counters + 1, sizeof(*w->counters));
	if (!w->slices || !w->counters)
		return -ENOMEM;
	for (i = 0; i < o->nr_slices; i++, w->nr_slices++) {
		int r = utrace__xslice_parse(o->slices[i], &w->slices[i]);

		if (r < 0)
			return r;        /* -EINVAL: utrace__export_opts_check() first */
	}
	for (i = 0; i < o->nr_counters; i++, w->nr_counters++) {
		w->counters[i].given = o->counters[i];
		w->counters[i].text = strdup(o->counters[i]);
		if (!w->counters[i].text)
			return -ENOMEM;
		if (!parse_spec(w->counters[i].text, strlen(w->counters[i].text),
				&w->counters[i].ev, false))
			return -EINVAL;
	}
	for (j = 0; (f = utrace__tf_format(w->tf, j)); j++) {
		for (i = 0; i < w->nr_slices; i++) {
			if (utrace__set_event_matches(&w->slices[i].b.m, f->system, f->name))
				w->slices[i].b.matched = true;
			if (utrace__set_event_matches(&w->slices[i].e.m, f->system, f->name))
				w->slices[i].e.matched = true;
		}
		for (i = 0; i < w->nr_counters; i++)
			if (utrace__set_event_matches(&w->counters[i].ev.m, f->system, f->name))
				w->counters[i].ev.matched = true;
	}
	/* as utrace script -e: a name that matches nothing is a mistake */
	for (i = 0; i < w->nr_slices; i++)
		if (!w->slices[i].b.matched || !w->slices[i].e.matched) {
			utrace__say("utrace: no event in '%s' matches the %s of --slice '%s'\n",
				    w->name, w->slices[i].b.matched ? "end" : "begin",
				    w->slices[i].given);
			bad = 1;
		}
	for (i = 0; i < w->nr_counters; i++)
		if (!w->counters[i].ev.matched) {
			utrace__say("utrace: no event in '%s' matches --counter '%s'\n",
				    w->name, w->counters[i].given);
			bad = 1;
		}
	if (bad)
		utrace__say("utrace: the events in the file: utrace script --list -i '%s'\n",
			    w->name);
	return bad ? -EINVAL : 0;
}

static void walk_fini(struct utrace__xwalk *w)
{
	size_t i;
	uint32_t d;

	for (i = 0; i < w->fmts.nr; i++) {
		xfmt_free(w->fmts.all[i]->user);
		w->fmts.all[i]->user = NULL;
	}
	for (i = 0; w->threads && i < w->nr_threads; i++) {
		for (d = 0; d < w->threads[i].depth; d++)
			free(w->threads[i].open[d].bytes);
		free(w->threads[i].open);
	}
	for (i = 0; i < w->nr_slices; i++)
		free(w->slices[i].text);
	for (i = 0; i < w->nr_counters; i++)
		free(w->counters[i].text);
	free(w->slices);
	free(w->counters);
	free(w->threads);
	free(w->thr);
	free(w->proc);
	free(w->thread_proc);
	utrace__table_free(&w->index);
	free(w->ob.p);
	utrace__fmts_fini(&w->fmts);
}

int utrace__export_walk(struct utrace__tf *tf, const char *out,
			const struct utrace__export_opts *o, const struct utrace__xwriter *wr,
			void *ctx)
{
	static const struct utrace__export_opts none;
	struct utrace__xwalk w = { .tf = tf, .name = utrace__tf_name(tf), .wr = wr, .ctx = ctx,
				   .fd = -1, .kthread = SIZE_MAX };
	struct stat st;
	int r = 0, status = 0;

	if (!o)
		o = &none;
	w.counter_text = o->counters;

	if (utrace__tf_warning(tf))
		utrace__say("utrace: %s\n", utrace__tf_warning(tf));
	if (utrace__tf_error(tf)) {
		utrace__problem(&w.fmts.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&w.fmts.pr, utrace__tf_nr_bad(tf) - 1);
	}
	if (!utrace__tf_page_size(tf)) {
		status = 1;              /* not even a header: said above */
		goto out;
	}
	if (utrace__fmts_init(&w.fmts, tf) < 0) {
		utrace__say("utrace: cannot set up libtraceevent\n");
		status = 1;
		goto out;
	}
	r = index_threads(&w);
	if (r >= 0)
		r = setup_specs(&w, o);
	if (r == -EINVAL) {
		status = 1;
		goto out;
	}
	if (r < 0)
		goto out;

	if (wr->format)
		r = every_format(&w);
	if (r < 0)
		goto out;
	if (!out) {
		r = walk(&w);
		goto out;
	}
	w.fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w.fd < 0) {
		utrace__say("utrace: cannot open '%s': %s\n", out, strerror(errno));
		status = 1;
		goto out;
	}
	r = walk(&w);
	if (close(w.fd) < 0 && !r) {
		w.werr = errno;
		r = -EIO;
	}
	if (r == -EIO)
		utrace__say("utrace: cannot write '%s': %s\n", out, strerror(w.werr));
	if (r < 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
		unlink(out);             /* no half-written file */
out:
	if (r == -ENOMEM)
		utrace__say("utrace: '%s': out of memory\n", w.name);
	if (r < 0)
		status = 1;
	utrace__problems_end(&w.fmts.pr, w.name, "the records or events concerned were "
			     "left out");
	if (w.fmts.pr.count)
		status = 1;
	walk_fini(&w);
	return status;
}
