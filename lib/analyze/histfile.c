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
 * to the earlier one.  Triggers with the same `name=` share the table of
 * the first (the kernel's named triggers): each event's records go into
 * it, each prints it under its own trigger info; a later one of other
 * fields is refused.
 *
 * Triggers may be on several events (each after its EVENT argument), with
 * variables, references to another trigger's variables ($x, or
 * SYS.EVENT.$x: an earlier trigger's), onmatch(), onmax() and onchange()
 * actions, and synthetic events defined by the caller: the records are
 * then read in time order, and an action's synthetic record goes, nested,
 * through the triggers of its synthetic event, as in the traced program.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "formats.h"
#include "hist.h"
#include "histfile.h"
#include "problems.h"
#include "stacktab.h"
#include "synthdef.h"

/* One distinct format of the event, and each trigger parsed for it. */
struct hev {
	struct utrace__fmt *e;
	struct utrace__hist **h;         /* [nr_triggers], NULL: not in use */
};

struct table {
	struct utrace__hist *h;          /* the first format's */
	struct utrace__hist_map *m;      /* NULL: share's */
	struct table *share;             /* name=: the first of the name, or NULL */
	const char *system, *event;      /* its event's */
	bool paused;
	bool used;                       /* not folded into an earlier one */
	bool vars;                       /* variables, references or actions */
};

/* A synthetic event of the caller's (-s): its records are made by actions. */
struct synth {
	struct utrace__synth_def d;
	struct utrace__hist **h;         /* [nr_triggers], NULL: not on it */
};

struct histfile {
	const struct utrace__histfile_opts *o;
	const char *name;
	struct utrace__fmts fmts;
	struct utrace__tf *tf;
	struct hev *evs;
	size_t nr_evs;
	struct synth *synths;
	struct table *t;
	unsigned int depth;              /* nested synthetic records */
	/* what the parser asks (a parsed trigger keeps a pointer to it
	 * until it is freed) */
	struct utrace__hist_env env;
	/* keys=stacktrace: each event waits for its stack (the record
	 * after it in its thread), one per thread */
	bool stacks;
	uint64_t nr_stacks;              /* stack records seen */
	struct utrace__stacktab stacktab;
	struct pend *pend;
	size_t nr_pend;
};

struct pend {
	const void *proc;
	uint32_t tid;
	bool full;
	struct hev *v;
	struct utrace__hist_ctx ctx;
	unsigned char *rec;              /* a copy */
	uint32_t len, cap;
	uint64_t stack[UTRACE__HIST_STACK_DEPTH];
};

#define SYNTH_DEPTH_MAX 4                /* as the traced program's */

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

/* The table a trigger adds to: its own, or its name's. */
static struct utrace__hist_map *table_map(const struct table *tb)
{
	return tb->share ? tb->share->m : tb->m;
}

/* Say why a trigger is refused: the kernel's errno and error_log entry. */
static void refused(const struct histfile *hf, const char *system, const char *event,
		    const char *text, const struct utrace__hist_error *err)
{
	char *log = utrace__hist_error_text(system, event, text, err);

	if (!err->logged && err->msg[0])
		utrace__say("utrace: hist trigger for '%s:%s' refused: %s\n", system, event,
			    err->msg);
	else
		utrace__say("utrace: hist trigger for '%s:%s' refused: %s%s\n",
			    system, event, strerror(-err->err),
			    log ? "; error_log:" : " (the kernel logs nothing)");
	if (log)
		utrace__say("%s", log);
	free(log);
	(void)hf;
}

/* The caller's synthetic event that @want names ("synthetic:NAME" or
 * "NAME"), or NULL. */
static struct synth *synth_named(const struct histfile *hf, const char *want)
{
	size_t i;

	if (!strncmp(want, "synthetic:", 10))
		want += 10;
	else if (strchr(want, ':'))
		return NULL;
	for (i = 0; i < hf->o->nr_synth; i++)
		if (!strcmp(hf->synths[i].d.name, want))
			return &hf->synths[i];
	return NULL;
}

/* Find the formats of the event @want: 0, or 1 (said) when there are none. */
static int find_event(struct histfile *hf, struct utrace__tf *tf, const char *want)
{
	struct utrace__tf_format *f;
	const char *sys = NULL;
	size_t i, j, found = 0;

	if (synth_named(hf, want))
		return 0;
	for (i = 0; (f = utrace__tf_format(tf, i)); i++) {
		struct utrace__fmt *e;
		struct hev *a;

		if (!event_matches(want, f->system, f->name))
			continue;
		e = utrace__fmts_get(&hf->fmts, f);
		if (!e)
			return -ENOMEM;
		if (sys && strcmp(sys, e->system)) {
			utrace__say("utrace: '%s' names events of systems '%s' and '%s' in '%s': "
				    "give SYSTEM:EVENT\n", want, sys, e->system, hf->name);
			return 1;
		}
		sys = e->system;
		found++;
		if (e->user)
			continue;
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
		/* the array moved while it grew: point the formats at it again */
		for (j = 0; j < hf->nr_evs; j++)
			hf->evs[j].e->user = &hf->evs[j];
	}
	if (!found) {
		utrace__say("utrace: no event in '%s' matches '%s' (the events in the file: "
			    "utrace script --list -i '%s')\n", hf->name, want, hf->name);
		return 1;
	}
	return 0;
}

/* ---- what the parser asks: earlier triggers' variables, events, synthetic events ---- */

static int env_find_var(void *arg, const char *system, const char *event, const char *name,
			const void **owner, unsigned int *idx, const struct utrace__hist_var **var)
{
	struct histfile *hf = arg;
	size_t t;
	unsigned int j;

	for (t = 0; t < hf->o->nr_triggers; t++) {
		const struct table *tb = &hf->t[t];

		if (!tb->used || (system && (strcmp(system, tb->system) ||
					     strcmp(event, tb->event))))
			continue;
		for (j = 0; j < tb->h->nr_vars; j++)
			if (!strcmp(tb->h->vars[j].name, name)) {
				*owner = tb;
				*idx = j;
				*var = &tb->h->vars[j];
				return 0;
			}
	}
	return -ENOENT;
}

static void *env_get_synth(void *arg, const char *name, const struct utrace_event_field **f,
			   unsigned int *nr)
{
	struct histfile *hf = arg;
	size_t i;

	for (i = 0; i < hf->o->nr_synth; i++)
		if (!strcmp(hf->synths[i].d.name, name)) {
			*f = hf->synths[i].d.ef;
			*nr = hf->synths[i].d.nr;
			return &hf->synths[i];
		}
	return NULL;
}

static bool env_find_event(void *arg, const char *system, const char *event)
{
	struct histfile *hf = arg;
	struct utrace__tf_format *f;
	size_t i;

	if (!strcmp(system, "synthetic") && synth_named(hf, event))
		return true;
	for (i = 0; (f = utrace__tf_format(hf->tf, i)); i++)
		if (!strcmp(f->system, system) && !strcmp(f->name, event))
			return true;
	return false;
}

/* Define the caller's synthetic events: 0, or 1 (said). */
static int define_synths(struct histfile *hf)
{
	size_t i, j;

	hf->synths = calloc(hf->o->nr_synth + 1, sizeof(*hf->synths));
	if (!hf->synths)
		return -ENOMEM;
	for (i = 0; i < hf->o->nr_synth; i++) {
		struct synth *sy = &hf->synths[i];
		char *log = NULL;
		int r = utrace__synth_def_parse(hf->o->synth[i], &sy->d, &log);

		if (r == 0)
			for (j = 0; j < i; j++)
				if (!strcmp(hf->synths[j].d.name, sy->d.name))
					r = utrace__synth_refuse(&log, hf->o->synth[i],
								 "Event already exists",
								 sy->d.name, -EEXIST);
		if (r == 0)
			sy->h = calloc(hf->o->nr_triggers + 1, sizeof(struct utrace__hist *));
		if (r == 0 && !sy->h)
			r = -ENOMEM;
		if (r == -ENOMEM && !log)
			return -ENOMEM;
		if (r < 0) {
			utrace__say("utrace: synthetic event '%s' refused: %s%s\n",
				    hf->o->synth[i], strerror(-r), log ? "; error_log:" : "");
			if (log)
				utrace__say("%s", log);
			free(log);
			return 1;
		}
	}
	return 0;
}

/* One trigger for one format (or synthetic event): 0, 1 (said) or -ENOMEM. */
static int parse_one(struct histfile *hf, size_t t, const struct hev *v,
		     const struct utrace_event_field *fields, unsigned int nr,
		     const struct utrace__filter_syms *syms, struct utrace__hist **out)
{
	const char *text = hf->o->triggers[t];
	struct utrace__hist_error err;
	struct table *tb = &hf->t[t];
	int r;

	r = utrace__hist_parse_full(text, fields, nr, syms, &hf->env, out, &err);
	if (r == -ENOMEM && !err.msg[0]) {
		utrace__hist_error_fini(&err);
		return -ENOMEM;
	}
	if (r < 0) {
		refused(hf, v ? v->e->system : "synthetic", v ? v->e->name : tb->event, text,
			&err);
		utrace__hist_error_fini(&err);
		return 1;
	}
	if (!tb->h) {
		tb->h = *out;
	} else if (!utrace__hist_same_layout(tb->h, *out)) {
		utrace__say("utrace: the formats of '%s:%s' in '%s' differ in the fields "
			    "of '%s'\n", tb->system, tb->event, hf->name, text);
		return 1;
	}
	return 0;
}

/* Parse trigger t for every format: 0, 1 (said) or -ENOMEM. */
static int parse_trigger(struct histfile *hf, size_t t)
{
	const char *text = hf->o->triggers[t], *want = hf->o->events[t];
	struct table *tb = &hf->t[t];
	struct synth *sy = synth_named(hf, want);
	struct table *named = NULL;
	size_t i, j;
	int r;

	if (sy) {
		tb->system = "synthetic";
		tb->event = sy->d.name;
		r = parse_one(hf, t, NULL, sy->d.ef, sy->d.nr, NULL, &sy->h[t]);
		if (r)
			return r;
	}
	for (i = 0; !sy && i < hf->nr_evs; i++) {
		struct hev *v = &hf->evs[i];
		const struct utrace__tf_process *proc = v->e->first->proc;
		struct utrace__filter_syms syms = { utrace__proc_sym_by_name, utrace__proc_sym_by_addr,
						    (void *)proc };
		struct utrace_event_field *fields;
		unsigned int nr = 0;

		if (!event_matches(want, v->e->system, v->e->name))
			continue;
		if (!v->e->state && utrace__fmts_parse(&hf->fmts, v->e) < 0)
			return -ENOMEM;
		if (v->e->state < 0 || !v->e->ev)
			continue;        /* utrace__fmts_parse() said why */
		fields = utrace__fmt_fields(v->e->ev, &nr);
		if (!fields)
			return -ENOMEM;
		tb->system = v->e->system;
		tb->event = v->e->name;
		r = parse_one(hf, t, v, fields, nr, &syms, &v->h[t]);
		free(fields);
		if (r)
			return r;
	}
	if (!tb->h) {
		utrace__say("utrace: no usable format of '%s' in '%s'\n", want, hf->name);
		return 1;
	}
	/* find_named_trigger(): the first table of the name */
	for (j = 0; tb->h->name && j < t && !named; j++)
		if (hf->t[j].used && !hf->t[j].share && hf->t[j].h->name &&
		    !strcmp(hf->t[j].h->name, tb->h->name))
			named = &hf->t[j];
	if (named && !utrace__hist_compatible(named->h, tb->h)) {
		struct utrace__hist_error err = { .err = -EINVAL, .logged = true };

		err.pos = utrace__hist_errpos(text, tb->h->name);
		snprintf(err.msg, sizeof(err.msg), "Named hist trigger doesn't match existing "
			 "named trigger (includes variables)");
		refused(hf, tb->system, tb->event, text, &err);
		return 1;
	}
	/* as the kernel's hist_register_trigger() and
	 * existing_hist_update_only(): a trigger of the same event, of the
	 * same name (none: unnamed); a name no trigger has yet is new */
	for (j = 0; j < t && (!tb->h->name || named); j++) {
		struct table *old = &hf->t[j];

		if (!old->used || strcmp(old->system, tb->system) ||
		    strcmp(old->event, tb->event) ||
		    (named ? old != named && old->share != named : old->h->name != NULL) ||
		    !utrace__hist_same(old->h, tb->h))
			continue;
		if (tb->h->pause || tb->h->cont || tb->h->clear) {
			if (tb->h->pause)
				old->paused = true;
			else if (tb->h->cont)
				old->paused = false;
			else if (named)
				/* hist_clear(): every trigger of the name runs */
				for (i = 0; i < t; i++)
					if (&hf->t[i] == named || hf->t[i].share == named)
						hf->t[i].paused = false;
			return 0;
		}
		{
			struct utrace__hist_error err = { .err = -EEXIST, .logged = true };

			snprintf(err.msg, sizeof(err.msg), "Hist trigger already exists");
			refused(hf, tb->system, tb->event, text, &err);
		}
		return 1;
	}
	if (tb->h->cont || tb->h->clear) {
		struct utrace__hist_error err = { .err = -ENOENT, .logged = true };

		snprintf(err.msg, sizeof(err.msg), "Can't clear or continue a nonexistent hist "
			 "trigger");
		refused(hf, tb->system, tb->event, text, &err);
		return 1;
	}
	if (named) {
		/* the shared table's size */
		for (i = 0; i < hf->nr_evs; i++)
			if (hf->evs[i].h[t])
				hf->evs[i].h[t]->bits = named->h->bits;
		if (sy)
			sy->h[t]->bits = named->h->bits;
		tb->share = named;
	} else {
		tb->m = utrace__hist_map_new(tb->h);
		if (!tb->m)
			return -ENOMEM;
	}
	tb->paused = tb->h->pause;
	tb->used = true;
	tb->vars = tb->h->nr_vars || tb->h->nr_refs || tb->h->action || tb->h->track;
	return 0;
}

static void add_record(struct histfile *hf, struct utrace__hist *const *hs, const void *rec,
		       uint32_t len, const struct utrace__hist_ctx *ctx);

/* An action's synthetic record, through its event's triggers (nested). */
static void fire(struct histfile *hf, struct synth *sy, const uint64_t *vals, const void *from,
		 uint32_t from_len, const struct utrace__hist_ctx *ctx)
{
	unsigned char rec[UTRACE_EVENT_MAX];
	unsigned int size = utrace__synth_def_size(&sy->d, vals);

	if (hf->depth >= SYNTH_DEPTH_MAX)
		return;
	/* the common fields: the firing record's pid, flags and preempt count */
	memset(rec, 0, 8);
	if (from_len >= 8)
		memcpy(rec + 2, (const unsigned char *)from + 2, 6);
	utrace__synth_def_fill(&sy->d, rec, size, vals);
	hf->depth++;
	add_record(hf, sy->h, rec, size, ctx);
	hf->depth--;
}

/* A record into the tables of the triggers parsed for its format (hs[t]). */
static void add_record(struct histfile *hf, struct utrace__hist *const *hs, const void *rec,
		       uint32_t len, const struct utrace__hist_ctx *ctx)
{
	struct utrace__hist_map *maps[UTRACE__HIST_REFS_MAX];
	struct utrace__hist_fire fi;
	size_t t;
	unsigned int i;
	int r;

	for (t = 0; t < hf->o->nr_triggers; t++) {
		const struct utrace__hist *h = hs[t];

		if (!hf->t[t].used || hf->t[t].paused || !h)
			continue;
		if (!hf->t[t].vars) {
			utrace__hist_add(table_map(&hf->t[t]), h, rec, len, ctx);
			continue;
		}
		for (i = 0; i < h->nr_refs; i++)
			maps[i] = table_map(h->refs[i].owner);
		r = utrace__hist_add_vars(table_map(&hf->t[t]), h, rec, len, ctx, maps, &fi);
		if (r > 0 && (r & 1))
			fire(hf, h->action->target, fi.params[0], rec, len, ctx);
		if (r > 0 && (r & 2))
			fire(hf, h->track->target, fi.params[1], rec, len, ctx);
	}
}

static struct pend *pend_of(struct histfile *hf, const void *proc, uint32_t tid)
{
	struct pend *v;
	size_t i;

	for (i = 0; i < hf->nr_pend; i++)
		if (hf->pend[i].proc == proc && hf->pend[i].tid == tid)
			return &hf->pend[i];
	v = realloc(hf->pend, (hf->nr_pend + 1) * sizeof(*v));
	if (!v)
		return NULL;
	hf->pend = v;
	memset(&v[hf->nr_pend], 0, sizeof(v[0]));
	v[hf->nr_pend].proc = proc;
	v[hf->nr_pend].tid = tid;
	return &v[hf->nr_pend++];
}

/* The event that waited for its stack, with what it got (nr frames). */
static void pend_flush(struct histfile *hf, struct pend *p, const uint64_t *ips, uint32_t nr)
{
	if (!p->full)
		return;
	p->full = false;
	if (nr > UTRACE__HIST_STACK_DEPTH)
		nr = UTRACE__HIST_STACK_DEPTH;
	if (ips && nr)
		memcpy(p->stack, ips, 8 * nr);
	p->ctx.stack = p->stack;
	p->ctx.nr_stack = ips ? nr : 0;
	add_record(hf, p->v->h, p->rec, p->len, &p->ctx);
}

/* keys=stacktrace: a stack record gives the event before it its stack; an
 * event waits for the record after it. */
static bool stack_item(struct histfile *hf, const struct utrace__tf_item *it)
{
	uint32_t tid = it->thread ? it->thread->tid : it->proc ? it->proc->pid : 0, nr = 0;
	enum utrace__stack_kind kind;
	const uint64_t *ips = NULL;
	uint64_t v[8];
	struct pend *p;

	if (!hf->stacks || it->kind != UTRACE__TF_EVENT || !it->format)
		return false;
	p = pend_of(hf, it->proc, tid);
	if (!p)
		return false;
	kind = utrace__stack_kind(it->format->system, it->format->name);
	if (kind != UTRACE__STACK_NONE) {
		if (utrace__stacktab_item(&hf->stacktab, it->proc, kind, it->rec, it->len, &ips,
					  &nr) < 0)
			ips = NULL;
	} else if (!strcmp(it->format->system, "ftrace") &&
		   !strcmp(it->format->name, "user_stack")) {
		for (; nr < 8 && 16 + 8 * (nr + 1) <= it->len; nr++) {
			memcpy(&v[nr], it->rec + 16 + 8 * nr, 8);
			if (!v[nr])
				break;
		}
		ips = v;
	} else {
		pend_flush(hf, p, NULL, 0);
		return false;
	}
	hf->nr_stacks++;
	pend_flush(hf, p, ips, nr);
	return true;
}

static void add_item(struct histfile *hf, const struct utrace__tf_item *it)
{
	struct utrace__hist_ctx ctx = { 0 };
	struct utrace__fmt *e;
	struct hev *v;

	if (stack_item(hf, it))
		return;
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
	if (hf->stacks) {
		struct pend *p = pend_of(hf, it->proc, it->thread ? it->thread->tid :
							it->proc ? it->proc->pid : 0);

		if (p && p->cap < it->len) {
			unsigned char *n = realloc(p->rec, it->len);

			if (n) {
				p->rec = n;
				p->cap = it->len;
			}
		}
		if (p && p->cap >= it->len) {
			p->full = true;
			p->v = v;
			p->ctx = ctx;
			memcpy(p->rec, it->rec, it->len);
			p->len = it->len;
			return;
		}
	}
	add_record(hf, v->h, it->rec, it->len, &ctx);
}

int utrace__hist_file(const struct utrace__histfile_opts *o, struct utrace__tf *tf, FILE *out)
{
	struct histfile hf = { .o = o, .name = utrace__tf_name(tf), .tf = tf };
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	size_t i, t, n = 0;
	bool ordered = false;
	int e = 0, status = 0;

	hf.env = (struct utrace__hist_env){ &hf, env_find_var, env_get_synth, NULL, env_find_event };

	if (!utrace__tf_readable(tf))
		return 1;
	hf.t = calloc(o->nr_triggers + 1, sizeof(*hf.t));
	if (!hf.t || utrace__fmts_init(&hf.fmts, tf) < 0) {
		free(hf.t);
		utrace__say("utrace: '%s': out of memory\n", hf.name);
		return 1;
	}
	if (utrace__tf_error(tf)) {
		utrace__problem(&hf.fmts.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&hf.fmts.pr, utrace__tf_nr_bad(tf) - 1);
	}
	e = define_synths(&hf);
	for (t = 0; e == 0 && t < o->nr_triggers; t++)
		e = find_event(&hf, tf, o->events[t]);
	for (t = 0; e == 0 && t < o->nr_triggers; t++)
		e = parse_trigger(&hf, t);
	if (e > 0) {
		status = 1;
		goto out;
	}
	/* times and the order between events matter to variables and to
	 * common_timestamp; plain counts take the faster unordered read */
	for (t = 0; e == 0 && t < o->nr_triggers; t++) {
		if (hf.t[t].used && (hf.t[t].vars || hf.t[t].h->timestamps))
			ordered = true;
		if (hf.t[t].used && hf.t[t].h->stacks)
			ordered = hf.stacks = true;
	}
	if (e == 0)
		e = ordered ? utrace__tf_iter_new(tf, &it) : utrace__tf_iter_new_unordered(tf, &it);
	while (e >= 0 && (e = utrace__tf_iter_next(it, &item)) > 0)
		add_item(&hf, &item);
	for (i = 0; i < hf.nr_pend; i++)
		pend_flush(&hf, &hf.pend[i], NULL, 0);
	if (e >= 0 && hf.stacks && !hf.nr_stacks) {
		utrace__say("utrace: '%s' has no call stacks for keys=stacktrace (record with "
			    "utrace record -g)\n", hf.name);
		status = 1;
		goto out;
	}
	for (t = 0; e >= 0 && t < o->nr_triggers; t++) {
		struct utrace__hist_print_opts po = { .sym = entry_sym, .paused = hf.t[t].paused,
						      .syscall = o->syscall, .info = hf.t[t].h };

		if (!hf.t[t].used)
			continue;
		if (n++ && fputs("\n\n", out) == EOF)
			e = -EIO;
		if (e >= 0)
			e = utrace__hist_print(table_map(&hf.t[t]), &po, out);
	}
	if (e == -ENOMEM) {
		utrace__say("utrace: '%s': out of memory\n", hf.name);
		status = 1;
	} else if (e < 0 || fflush(out) != 0 || ferror(out)) {
		utrace__say("utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	if (utrace__tf_cut(tf, NULL) && utrace__tf_warning(tf))
		utrace__say("utrace: %s: counted the events before it\n",
			    utrace__tf_warning(tf));
out:
	for (i = 0; i < hf.nr_pend; i++)
		free(hf.pend[i].rec);
	free(hf.pend);
	utrace__stacktab_free(&hf.stacktab);
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
	for (i = 0; hf.synths && i < o->nr_synth; i++) {
		for (t = 0; hf.synths[i].h && t < o->nr_triggers; t++)
			utrace__hist_free(hf.synths[i].h[t]);
		free(hf.synths[i].h);
		utrace__synth_def_fini(&hf.synths[i].d);
	}
	free(hf.synths);
	free(hf.t);
	utrace__fmts_fini(&hf.fmts);
	return status;
}
