/* SPDX-License-Identifier: MIT */
/*
 * `utrace hist` (histfile.h): the triggers are parsed against each
 * distinct format of the event in the file (programs may lay the same
 * event out differently), each with the kernel's errors; the records are
 * then read once, in file order, each going into every table through
 * the field offsets of its own format, and the tables are printed as the
 * kernel's hist file prints them.  The triggers are taken as written to
 * the trigger file one after the other before the events happened: a
 * second identical one is refused, a later pause, cont or clear applies
 * to the earlier one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "formats.h"
#include "hist.h"
#include "histfile.h"

/* One distinct format of the event, and each trigger parsed for it. */
struct hev {
	struct utrace__fmt *e;
	struct utrace__hist **h;         /* [nr_triggers], NULL: not in use */
};

struct table {
	struct utrace__hist *h;          /* the first format's */
	struct utrace__hist_map *m;
	bool paused;
	bool used;                       /* not folded into an earlier one */
};

struct histfile {
	const struct utrace__histfile_opts *o;
	const char *name;
	struct utrace__fmts fmts;
	struct hev *evs;
	size_t nr_evs;
	struct table *t;
};

static bool event_matches(const char *want, const char *system, const char *name)
{
	const char *colon = strchr(want, ':');

	if (!colon)
		return !strcmp(want, name);
	return strlen(system) == (size_t)(colon - want) &&
	       !strncmp(want, system, (size_t)(colon - want)) && !strcmp(colon + 1, name);
}

/* .sym and .sym-offset: the symbols of the process that made the entry. */
static int entry_sym(void *arg, const void *owner, uint64_t addr, const char **name,
		     uint64_t *start, uint64_t *size)
{
	(void)arg;
	if (!owner)
		return -ENOENT;
	return utrace__tf_sym_lookup(NULL, owner, addr, name, start, size);
}

/* Say why a trigger is refused: the kernel's errno and error_log entry. */
static void refused(const struct histfile *hf, const struct hev *v, const char *text,
		    const struct utrace__hist_error *err)
{
	char *log = utrace__hist_error_text(v->e->system, v->e->name, text, err);

	if (!err->logged && err->msg[0])
		fprintf(stderr, "utrace: hist trigger for '%s:%s' refused: %s\n", v->e->system,
			v->e->name, err->msg);
	else
		fprintf(stderr, "utrace: hist trigger for '%s:%s' refused: %s%s\n",
			v->e->system, v->e->name, strerror(-err->err),
			log ? "; error_log:" : " (the kernel logs nothing)");
	if (log)
		fputs(log, stderr);
	free(log);
	(void)hf;
}

/* Find the formats of the event: 0, or 1 (said) when there are none. */
static int find_event(struct histfile *hf, struct utrace__tf *tf)
{
	struct utrace__tf_format *f;
	const char *sys = NULL;
	size_t i;

	for (i = 0; (f = utrace__tf_format(tf, i)); i++) {
		struct utrace__fmt *e;
		struct hev *a;

		if (!event_matches(hf->o->event, f->system, f->name))
			continue;
		e = utrace__fmts_get(&hf->fmts, f);
		if (!e)
			return -ENOMEM;
		if (e->user)
			continue;
		if (sys && strcmp(sys, e->system)) {
			fprintf(stderr, "utrace: '%s' names events of systems '%s' and '%s' in '%s': "
				"give SYSTEM:EVENT\n", hf->o->event, sys, e->system, hf->name);
			return 1;
		}
		sys = e->system;
		a = realloc(hf->evs, (hf->nr_evs + 1) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		hf->evs = a;
		a[hf->nr_evs].e = e;
		a[hf->nr_evs].h = calloc(hf->o->nr_triggers + 1, sizeof(struct utrace__hist *));
		if (!a[hf->nr_evs].h)
			return -ENOMEM;
		e->user = &a[hf->nr_evs];
		e->selected = true;
		hf->nr_evs++;
	}
	/* the array moved while it grew: point the formats at it again */
	for (i = 0; i < hf->nr_evs; i++)
		hf->evs[i].e->user = &hf->evs[i];
	if (!hf->nr_evs) {
		fprintf(stderr, "utrace: no event in '%s' matches '%s' (the events in the file: "
			"utrace script --list -i '%s')\n", hf->name, hf->o->event, hf->name);
		return 1;
	}
	return 0;
}

/* Parse trigger t for every format: 0, 1 (said) or -ENOMEM. */
static int parse_trigger(struct histfile *hf, size_t t)
{
	const char *text = hf->o->triggers[t];
	struct table *tb = &hf->t[t];
	size_t i, j;
	int r;

	for (i = 0; i < hf->nr_evs; i++) {
		struct hev *v = &hf->evs[i];
		const struct utrace__tf_process *proc = v->e->first->proc;
		struct utrace__filter_syms syms = { utrace__proc_sym_by_name, utrace__proc_sym_by_addr,
						    (void *)proc };
		struct utrace_event_field *fields;
		struct utrace__hist_error err;
		unsigned int nr = 0;

		if (!v->e->state && utrace__fmts_parse(&hf->fmts, v->e) < 0)
			return -ENOMEM;
		if (v->e->state < 0 || !v->e->ev)
			continue;        /* utrace__fmts_parse() said why */
		fields = utrace__fmt_fields(v->e->ev, &nr);
		if (!fields)
			return -ENOMEM;
		r = utrace__hist_parse(text, fields, nr, &syms, &v->h[t], &err);
		free(fields);
		if (r == -ENOMEM && !err.msg[0]) {
			utrace__hist_error_fini(&err);
			return -ENOMEM;
		}
		if (r < 0) {
			refused(hf, v, text, &err);
			utrace__hist_error_fini(&err);
			return 1;
		}
		if (!tb->h) {
			tb->h = v->h[t];
		} else if (!utrace__hist_same_layout(tb->h, v->h[t])) {
			fprintf(stderr, "utrace: the formats of '%s:%s' in '%s' differ in the fields "
				"of '%s'\n", v->e->system, v->e->name, hf->name, text);
			return 1;
		}
	}
	if (!tb->h) {
		fprintf(stderr, "utrace: no usable format of '%s' in '%s'\n", hf->o->event,
			hf->name);
		return 1;
	}
	/* as the kernel's hist_register_trigger() and
	 * existing_hist_update_only() */
	for (j = 0; j < t; j++) {
		struct table *old = &hf->t[j];

		if (!old->used || !utrace__hist_same(old->h, tb->h))
			continue;
		if (tb->h->pause || tb->h->cont || tb->h->clear) {
			if (tb->h->pause)
				old->paused = true;
			else if (tb->h->cont)
				old->paused = false;
			return 0;
		}
		{
			struct utrace__hist_error err = { .err = -EEXIST, .logged = true };

			snprintf(err.msg, sizeof(err.msg), "Hist trigger already exists");
			refused(hf, &hf->evs[0], text, &err);
		}
		return 1;
	}
	if (tb->h->cont || tb->h->clear) {
		struct utrace__hist_error err = { .err = -ENOENT, .logged = true };

		snprintf(err.msg, sizeof(err.msg), "Can't clear or continue a nonexistent hist "
			 "trigger");
		refused(hf, &hf->evs[0], text, &err);
		return 1;
	}
	tb->m = utrace__hist_map_new(tb->h);
	if (!tb->m)
		return -ENOMEM;
	tb->paused = tb->h->pause;
	tb->used = true;
	return 0;
}

static void add_item(struct histfile *hf, const struct utrace__tf_item *it)
{
	struct utrace__hist_ctx ctx;
	struct utrace__fmt *e;
	struct hev *v;
	size_t t;

	if (it->kind != UTRACE__TF_EVENT || !it->format || !it->format->priv)
		return;
	e = it->format->priv;
	v = e->user;
	if (!v || v->e != e)
		return;
	ctx.time = it->time;
	ctx.cpu = it->cpu;
	ctx.comm = it->thread && it->thread->comm ? it->thread->comm :
		   it->proc ? it->proc->comm : "";
	ctx.owner = it->proc;
	for (t = 0; t < hf->o->nr_triggers; t++)
		if (hf->t[t].used && !hf->t[t].paused && v->h[t])
			utrace__hist_add(hf->t[t].m, v->h[t], it->rec, it->len, &ctx);
}

int utrace__hist_file(const struct utrace__histfile_opts *o, struct utrace__tf *tf, FILE *out)
{
	struct histfile hf = { .o = o, .name = utrace__tf_name(tf) };
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	size_t i, t, n = 0;
	int e = 0, status = 0;

	if (!utrace__tf_readable(tf))
		return 1;
	hf.t = calloc(o->nr_triggers + 1, sizeof(*hf.t));
	if (!hf.t || utrace__fmts_init(&hf.fmts, tf) < 0) {
		free(hf.t);
		fprintf(stderr, "utrace: '%s': out of memory\n", hf.name);
		return 1;
	}
	if (utrace__tf_error(tf)) {
		utrace__problem(&hf.fmts.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&hf.fmts.pr, utrace__tf_nr_bad(tf) - 1);
	}
	e = find_event(&hf, tf);
	for (t = 0; e == 0 && t < o->nr_triggers; t++)
		e = parse_trigger(&hf, t);
	if (e > 0) {
		status = 1;
		goto out;
	}
	if (e == 0)
		e = utrace__tf_iter_new_unordered(tf, &it);
	while (e >= 0 && (e = utrace__tf_iter_next(it, &item)) > 0)
		add_item(&hf, &item);
	for (t = 0; e >= 0 && t < o->nr_triggers; t++) {
		struct utrace__hist_print_opts po = { .sym = entry_sym, .paused = hf.t[t].paused,
						      .syscall = o->syscall };

		if (!hf.t[t].used)
			continue;
		if (n++ && fputs("\n\n", out) == EOF)
			e = -EIO;
		if (e >= 0)
			e = utrace__hist_print(hf.t[t].m, &po, out);
	}
	if (e == -ENOMEM) {
		fprintf(stderr, "utrace: '%s': out of memory\n", hf.name);
		status = 1;
	} else if (e < 0 || fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	if (utrace__tf_cut(tf, NULL) && utrace__tf_warning(tf))
		fprintf(stderr, "utrace: %s: counted the events before it\n",
			utrace__tf_warning(tf));
out:
	utrace__problems_end(&hf.fmts.pr, hf.name, "the records or events concerned were left out");
	if (hf.fmts.pr.count)
		status = 1;
	utrace__tf_iter_free(it);
	for (t = 0; t < o->nr_triggers; t++)
		utrace__hist_map_free(hf.t[t].m);
	for (i = 0; i < hf.nr_evs; i++) {
		for (t = 0; t < o->nr_triggers; t++)
			utrace__hist_free(hf.evs[i].h[t]);
		free(hf.evs[i].h);
	}
	free(hf.evs);
	free(hf.t);
	utrace__fmts_fini(&hf.fmts);
	return status;
}
