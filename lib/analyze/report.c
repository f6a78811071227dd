/* SPDX-License-Identifier: MIT */
/*
 * `utrace report` (report.h): events counted by sort keys, in the layout
 * of `perf report --stdio` (tools/perf/ui/stdio/hist.c, util/sort.c):
 *
 *   # Samples: 6  of event 'app:req_end'
 *   # Event count (approx.): 6
 *   #
 *   # Overhead  Command          path
 *   # ........  .......  ..........
 *   #
 *       50.00%  app        /api/items
 *
 * and the latency between paired events, with a log2 histogram in the
 * layout of bpftrace's hist().
 *
 * How it keeps up with a large file (docs/design-notes.md, "report"):
 * nothing per event goes through libtraceevent.  Each distinct format is
 * looked at once: the offset, size and kind of every field a key names
 * are cached in its struct rev.  Per event, the sort keys are packed into
 * a few bytes (ids of interned strings, numbers, the raw bytes of a
 * field) and counted in an open-addressing hash table; a row keeps a
 * pointer to its first record.  Only when the table is printed, once per
 * row, is a field printed as its event prints it (tep_print_event(), as
 * perf does for its dynamic sort keys).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "formats.h"
#include "hash.h"
#include "latcols.h"
#include "table.h"
#include "obuf.h"
#include "print.h"
#include "problems.h"
#include "report.h"

/* ------------------------------------------------------------ parsing */

static int add_key(struct utrace__rkey **keys, size_t *nr, const char *s, size_t len)
{
	static const struct { const char *name; enum utrace__rkey_kind kind; } fixed[] = {
		{ "comm", UTRACE__RKEY_COMM }, { "pid", UTRACE__RKEY_PID },
		{ "tid", UTRACE__RKEY_TID }, { "event", UTRACE__RKEY_EVENT },
		{ "cpu", UTRACE__RKEY_CPU },
	};
	struct utrace__rkey *k, *a = realloc(*keys, (*nr + 1) * sizeof(*a));
	const char *dot, *slash, *end = s + len;
	size_t i;

	if (!a)
		return -ENOMEM;
	*keys = a;
	k = &a[*nr];
	memset(k, 0, sizeof(*k));
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (strlen(fixed[i].name) == len && !strncmp(fixed[i].name, s, len)) {
			k->kind = fixed[i].kind;
			(*nr)++;
			return 0;
		}
	/* [EVENT.]FIELD[/raw]: EVENT is "name" or "sys:name" */
	k->kind = UTRACE__RKEY_FIELD;
	slash = memchr(s, '/', len);
	if (slash) {
		if ((size_t)(end - slash) != 4 || strncmp(slash, "/raw", 4))
			return -EINVAL;
		k->raw = true;
		end = slash;
	}
	dot = memchr(s, '.', (size_t)(end - s));
	if (dot) {
		if (dot == s || memchr(dot + 1, '.', (size_t)(end - dot - 1)))
			return -EINVAL;
		k->event = strndup(s, (size_t)(dot - s));
		if (!k->event)
			return -ENOMEM;
		s = dot + 1;
	}
	if (s == end || memchr(s, ':', (size_t)(end - s))) {
		free(k->event);
		return -EINVAL;
	}
	k->field = strndup(s, (size_t)(end - s));
	if (!k->field) {
		free(k->event);
		return -ENOMEM;
	}
	(*nr)++;
	return 0;
}

int utrace__report_parse_sort(const char *s, struct utrace__rkey **keys, size_t *nr,
			      size_t *bad)
{
	const char *p = s;

	for (;;) {
		size_t n = strcspn(p, ", ");
		int r = 0;

		if (n)
			r = add_key(keys, nr, p, n);
		if (r < 0) {
			*bad = (size_t)(p - s);
			return r;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	if (!*nr) {
		*bad = 0;
		return -EINVAL;
	}
	return 0;
}

void utrace__report_keys_free(struct utrace__rkey *keys, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		free(keys[i].event);
		free(keys[i].field);
	}
	free(keys);
}

/* "EV.FIELD" at s (n bytes): EV non-empty, FIELD non-empty, no '.' in it */
static int split_ev_field(const char *s, size_t n, char **ev, char **field)
{
	const char *dot = memchr(s, '.', n);

	if (!dot || dot == s || dot + 1 == s + n || memchr(dot + 1, '.', (size_t)(s + n - dot - 1)))
		return -EINVAL;
	*ev = strndup(s, (size_t)(dot - s));
	*field = strndup(dot + 1, (size_t)(s + n - dot - 1));
	return *ev && *field ? 0 : -ENOMEM;
}

int utrace__report_parse_latency(const char *s, struct utrace__rlatency *l)
{
	const char *dot = strchr(s, '.'), *colon;
	int r;

	memset(l, 0, sizeof(*l));
	l->text = s;
	if (!dot) {
		/* BEGIN:END, or SYS:BEGIN:SYS:END: no fields, nested pairs;
		 * the names around each ':' not empty */
		size_t n = 0, len = strlen(s), i;

		for (i = 0; i < len; i++)
			if (s[i] == ':' && (!i || s[i - 1] == ':' || i + 1 == len || n++ > 3))
				return -EINVAL;
		if (n != 1 && n != 3)
			return -EINVAL;
		colon = s;
		for (i = 0; i <= n / 2; i++)
			colon = strchr(colon + !!i, ':');
		l->begin = strndup(s, (size_t)(colon - s));
		l->end = strdup(colon + 1);
		if (!l->begin || !l->end) {
			utrace__report_latency_free(l);
			return -ENOMEM;
		}
		return 0;
	}
	/* the first field's name ends at the ':' after the first '.' */
	if (!(colon = strchr(dot, ':')))
		return -EINVAL;
	r = split_ev_field(s, (size_t)(colon - s), &l->begin, &l->begin_field);
	if (!r)
		r = split_ev_field(colon + 1, strlen(colon + 1), &l->end, &l->end_field);
	if (!r && (strchr(l->begin_field, ':') || strchr(l->end_field, ':')))
		r = -EINVAL;
	if (r)
		utrace__report_latency_free(l);
	return r;
}

void utrace__report_latency_free(struct utrace__rlatency *l)
{
	free(l->begin);
	free(l->begin_field);
	free(l->end);
	free(l->end_field);
	l->begin = l->begin_field = l->end = l->end_field = NULL;
}

/* ------------------------------------------------------------ tables */

/* A field of one event, as a key reads it from the record. */
struct rfield {
	struct tep_format_field *f;     /* NULL: the event has no such field */
	uint32_t off, size;
	bool dyn, rel, str, is_signed;
	bool num;                       /* a number of 1, 2, 4 or 8 bytes */
};

/* A record a row was first seen in, for printing its fields (a file's
 * records stay mapped until the end). */
struct rref {
	const unsigned char *rec;
	struct utrace__tf_format *format;
	const struct utrace__tf_process *proc;
	uint32_t len, cpu;
};

/* The durations of a latency row. */
struct lvals {
	uint64_t *v;
	size_t nr, cap;
};

/* A row: the packed key, its count, the records it was first seen in. */
struct row {
	uint64_t hash;
	uint32_t key_off, key_len;
	uint64_t count;
	struct rref ref[2];             /* [0]: the event (or begin), [1]: end */
	struct lvals *lat;              /* latency rows: the durations */
};

struct table {
	struct row *rows;
	size_t nr, cap;
	struct utrace__table index;     /* the keys' hashes to rows */
	unsigned char *keys;            /* the packed keys, one after another */
	size_t keys_len, keys_cap;
	uint64_t total;
};

#define FC_SIZE 64

/* The distinct format of an event, as the report sees it. */
struct rev {
	struct utrace__fmt *e;
	uint32_t id;
	bool usable;
	char *label;                    /* "sys:name" */
	struct rfield *kf;              /* one per sort key */
	bool kf_none;                   /* no key is a field of this event:
					 * its key is that of the fixed keys */
	bool kf_all;                    /* every key but 'event' is a field of
					 * it: a latency's group key is in the
					 * key of its count row */
	bool kf_one;                    /* the one key is a field of it */
	struct table tab;               /* its rows (per-event blocks) */
	struct rfield *lat_id;          /* per --latency: the id field */
	uint8_t *lat_role;              /* per --latency: 1 begin, 2 end */
	bool shown;                     /* counted in the tables (-e) */
	/* the row of its last event, when no key is a field: the same
	 * thread, comms and CPU make the same key (count_event()) */
	const void *c_thread;           /* NULL: none yet */
	uint32_t c_comm, c_pcomm, c_cpu;
	size_t c_row;
	uint32_t fc[FC_SIZE];           /* kf_one: rows (+ 1) by the field's
					 * length and end bytes (count_event()) */
};

/* A begin waiting for its end. */
struct pending {
	uint64_t hash;                  /* 0: empty slot */
	uint64_t time;
	uint32_t key_off, id_len;       /* id bytes (not a number) */
	uint32_t pid;
	uint32_t crow;                  /* the begin's count row: its key holds
					 * the begin's fields */
	uint64_t idv;                   /* the id when it is a number */
	struct rref ref;
	struct rev *ev;
	size_t carry;                   /* a begin of an earlier report
					 * (utrace__report_carry_in()): its
					 * index + 1; no ref, ev, crow */
};

/* An end paired with a carried begin: its cells are made at carry_out. */
struct cmatch {
	size_t carry;
	uint64_t d;
	struct rref ref;
	uint32_t key_off, key_len;      /* the end's group key, in cm_keys */
};

struct lat {
	const struct utrace__rlatency *spec;
	struct table groups;
	struct pending *p;
	size_t np, nslots;
	unsigned char *keys;            /* pending ids that are not numbers
					 * (never compacted) */
	size_t keys_len, keys_cap;
	/* the group of a begin count row, when the group key is all in that
	 * row's key (its rev's kf_all): [rev id][count row] = group row + 1 */
	uint32_t **gc;
	size_t *gc_n, nr_gc;
	uint64_t pairs, unmatched_begin, unmatched_end, replaced;
	bool begin_seen, end_seen;
	struct cmatch *cm;              /* ends paired with carried begins */
	size_t ncm, cap_cm;
	unsigned char *cm_keys;
	size_t cm_keys_len, cm_keys_cap;
	/* the group of the last end, as rev's c_* (no field key) */
	const void *c_thread;
	uint32_t c_comm, c_pcomm, c_cpu;
	size_t c_row;
	/* BEGIN:END without fields: the begins open on each thread; a begin
	 * waits under the id (tid, its depth) */
	struct ldepth *dp;
	size_t ndp, dp_slots;
	char *missing;                  /* an event of it without its field */
};

/* A thread's open begins (lat_depth()). */
struct ldepth {
	uint64_t key;                   /* (pid << 32 | tid) + 1; 0: empty */
	uint32_t depth;
};

/* interned strings (comm names) */
struct strtab {
	char **s;
	size_t nr, cap;
	struct utrace__table index;     /* the strings' hashes to ids */
};

/* thread -> comm ids, by pointer */
struct tcache {
	const void *thread;
	uint32_t comm, pcomm;
};

struct utrace__report {
	const struct utrace__report_opts *o;
	struct utrace__fmts fmts;
	const char *name;
	struct rev **evs;
	size_t nr_evs, cap_evs;
	bool combined;                  /* 'event' is a key: one table */
	bool no_field_key;              /* keys of comm, pid, tid, event, cpu only */
	struct table all;
	struct strtab comms;
	struct tcache *tc;               /* open addressing by thread address */
	size_t ntc, tc_slots;
	const void *last_thread;
	uint32_t last_comm, last_pcomm;
	struct lat *lat;
	unsigned char *kb;              /* the key being built */
	size_t kb_len, kb_cap;
	uint64_t lost;
	bool lost_unknown;
	struct trace_seq seq;
	bool nomem;
	char problem[256];              /* one_table: the latest problem */
};

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = UTRACE_HASH_INIT;
	size_t i;

	/* FNV-1a, 8 bytes at a time folded: the keys are short */
	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		h = (h ^ v) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	h ^= h >> 32;
	return h ? h : 1;
}

static int grow_bytes(unsigned char **p, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 4096;
	unsigned char *n;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*p, c);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

static int kb_grow(struct utrace__report *r, size_t need)
{
	return grow_bytes(&r->kb, &r->kb_cap, need);
}

/* The key being built: a few bytes per key, so inline and no call. */
static inline int kb_put(struct utrace__report *r, const void *p, size_t n)
{
	if (__builtin_expect(r->kb_len + n > r->kb_cap, 0) && kb_grow(r, r->kb_len + n) < 0)
		return -ENOMEM;
	memcpy(r->kb + r->kb_len, p, n);
	r->kb_len += n;
	return 0;
}

/* The row of key (k, n), made when new; NULL when out of memory. */
static struct row *table_get(struct table *t, const unsigned char *k, size_t n, uint64_t h,
			     bool *made)
{
	struct row *row;
	size_t pos, j;

	*made = false;
	pos = utrace__table_start(&t->index, h);
	while (utrace__table_next(&t->index, h, &pos, &j)) {
		row = &t->rows[j];
		if (row->key_len == n && (!n || !memcmp(t->keys + row->key_off, k, n)))
			return row;
	}
	if (t->nr == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 64;
		struct row *a = realloc(t->rows, c * sizeof(*a));

		if (!a)
			return NULL;
		t->rows = a;
		t->cap = c;
	}
	if (n && grow_bytes(&t->keys, &t->keys_cap, t->keys_len + n) < 0)
		return NULL;
	if (utrace__table_add(&t->index, h, t->nr) < 0)
		return NULL;
	row = &t->rows[t->nr];
	memset(row, 0, sizeof(*row));
	row->hash = h;
	row->key_off = (uint32_t)t->keys_len;
	row->key_len = (uint32_t)n;
	if (n) {
		memcpy(t->keys + t->keys_len, k, n);
		t->keys_len += n;
	}
	t->nr++;
	*made = true;
	return row;
}

static void table_fini(struct table *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		if (t->rows[i].lat) {
			free(t->rows[i].lat->v);
			free(t->rows[i].lat);
		}
	free(t->rows);
	utrace__table_free(&t->index);
	free(t->keys);
	memset(t, 0, sizeof(*t));
}

static int intern(struct strtab *st, const char *s, uint32_t *id)
{
	uint64_t h = utrace__hash_str(UTRACE_HASH_INIT, s);
	size_t pos = utrace__table_start(&st->index, h), j;

	while (utrace__table_next(&st->index, h, &pos, &j))
		if (!strcmp(st->s[j], s)) {
			*id = (uint32_t)j;
			return 0;
		}
	if (st->nr == st->cap) {
		size_t c = st->cap ? st->cap * 2 : 32;
		char **a = realloc(st->s, c * sizeof(*a));

		if (!a)
			return -ENOMEM;
		st->s = a;
		st->cap = c;
	}
	st->s[st->nr] = strdup(s);
	if (!st->s[st->nr] || utrace__table_add(&st->index, h, st->nr) < 0) {
		free(st->s[st->nr]);
		return -ENOMEM;
	}
	*id = (uint32_t)st->nr++;
	return 0;
}

/* The comm ids of the item's thread and process: the last thread's, or
 * from a table by the thread's address (threads come in runs). */
static int thread_comms(struct utrace__report *r, const struct utrace__tf_item *it)
{
	uint64_t h;
	struct tcache *t;
	const char *pc;
	size_t j;

	if (it->thread == r->last_thread)
		return 0;
	h = ((uint64_t)(uintptr_t)it->thread * 0x9e3779b97f4a7c15ULL) >> 20;
	if ((r->ntc + 1) * 2 > r->tc_slots) {
		size_t n = r->tc_slots ? r->tc_slots * 2 : 64, i;
		struct tcache *a = calloc(n, sizeof(*a));

		if (!a)
			return -ENOMEM;
		for (i = 0; i < r->tc_slots; i++) {
			uint64_t hh = ((uint64_t)(uintptr_t)r->tc[i].thread *
				       0x9e3779b97f4a7c15ULL) >> 20;

			if (!r->tc[i].thread)
				continue;
			for (j = hh & (n - 1); a[j].thread; j = (j + 1) & (n - 1))
				;
			a[j] = r->tc[i];
		}
		free(r->tc);
		r->tc = a;
		r->tc_slots = n;
	}
	for (j = h & (r->tc_slots - 1); r->tc[j].thread; j = (j + 1) & (r->tc_slots - 1))
		if (r->tc[j].thread == it->thread)
			break;
	t = &r->tc[j];
	if (!t->thread) {
		pc = it->proc->comm && it->proc->comm[0] ? it->proc->comm : "<...>";
		if (intern(&r->comms, utrace__item_comm(it), &t->comm) < 0 ||
		    intern(&r->comms, pc, &t->pcomm) < 0)
			return -ENOMEM;
		t->thread = it->thread;
		r->ntc++;
	}
	r->last_thread = it->thread;
	r->last_comm = t->comm;
	r->last_pcomm = t->pcomm;
	return 0;
}

/* ------------------------------------------------------------ events */

/* "name" or "sys:name" names this event */
static bool ev_is(const struct rev *v, const char *spec)
{
	const char *c = strchr(spec, ':');

	if (!c)
		return !strcmp(v->e->name, spec);
	return strlen(v->e->system) == (size_t)(c - spec) &&
	       !strncmp(v->e->system, spec, (size_t)(c - spec)) && !strcmp(v->e->name, c + 1);
}

static void resolve_field(const struct rev *v, const char *name, struct rfield *rf)
{
	struct tep_format_field *f = tep_find_field(v->e->ev, name);

	memset(rf, 0, sizeof(*rf));
	if (!f)
		return;
	rf->f = f;
	rf->off = (uint32_t)f->offset;
	rf->size = (uint32_t)f->size;
	rf->dyn = f->flags & TEP_FIELD_IS_DYNAMIC;
	rf->rel = f->flags & TEP_FIELD_IS_RELATIVE;
	rf->str = (f->flags & TEP_FIELD_IS_STRING) ||
		  ((f->flags & TEP_FIELD_IS_ARRAY) && strstr(f->type, "char"));
	rf->is_signed = f->flags & TEP_FIELD_IS_SIGNED;
	if (rf->dyn && rf->size != 4 && rf->size != 2)
		rf->f = NULL;                   /* not a layout we can read */
	rf->num = rf->f && !rf->dyn && !rf->str && !(f->flags & TEP_FIELD_IS_ARRAY) &&
		  (rf->size == 1 || rf->size == 2 || rf->size == 4 || rf->size == 8);
}

/* "event 'sys:ev' has no field 'f' (its fields: a, b)", malloc()ed. */
static char *no_field_text(const struct rev *v, const char *field)
{
	struct tep_format_field **f = tep_event_fields(v->e->ev);
	struct utrace__obuf b = { 0 };

	utrace__ob_printf(&b, "event '%s' has no field '%s' (its fields: ", v->label, field);
	for (size_t i = 0; f && f[i]; i++)
		utrace__ob_printf(&b, "%s%s", i ? ", " : "", f[i]->name);
	utrace__ob_printf(&b, "%s)", f && f[0] ? "" : "none");
	utrace__ob_putc(&b, 0);
	free(f);
	if (b.nomem) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

static struct rev *rev_of(struct utrace__report *r, const struct utrace__tf_item *it)
{
	struct utrace__fmt *e;
	struct rev *v;
	size_t i;

	if (!it->format)
		return NULL;
	e = utrace__fmts_get(&r->fmts, it->format);
	if (!e) {
		r->nomem = true;
		return NULL;
	}
	if (e->user)
		return e->user;
	v = calloc(1, sizeof(*v));
	if (!v || asprintf(&v->label, "%s:%s", e->system, e->name) < 0) {
		free(v);
		r->nomem = true;
		return NULL;
	}
	if (r->nr_evs == r->cap_evs) {
		size_t c = r->cap_evs ? r->cap_evs * 2 : 16;
		struct rev **a = realloc(r->evs, c * sizeof(*a));

		if (!a) {
			free(v->label);
			free(v);
			r->nomem = true;
			return NULL;
		}
		r->evs = a;
		r->cap_evs = c;
	}
	v->e = e;
	v->id = (uint32_t)r->nr_evs;
	r->evs[r->nr_evs++] = v;
	e->user = v;
	e->selected = true;
	if (!e->state && utrace__fmts_parse(&r->fmts, e) < 0) {
		r->nomem = true;
		return v;
	}
	v->usable = e->state > 0 && e->ev;
	v->shown = !r->o->select || utrace__print_select(r->o->select, e->system, e->name);
	v->kf = calloc(r->o->nr_keys + 1, sizeof(*v->kf));
	v->lat_id = calloc(r->o->nr_lat + 1, sizeof(*v->lat_id));
	v->lat_role = calloc(r->o->nr_lat + 1, 1);
	if (!v->kf || !v->lat_id || !v->lat_role) {
		r->nomem = true;
		v->usable = false;
		return v;
	}
	if (!v->usable)
		return v;
	for (i = 0; i < r->o->nr_keys; i++) {
		const struct utrace__rkey *k = &r->o->keys[i];

		if (k->kind == UTRACE__RKEY_FIELD && (!k->event || ev_is(v, k->event)))
			resolve_field(v, k->field, &v->kf[i]);
	}
	v->kf_one = r->o->nr_keys == 1 && v->kf[0].f;
	v->kf_none = true;
	v->kf_all = true;
	for (i = 0; i < r->o->nr_keys; i++) {
		if (v->kf[i].f)
			v->kf_none = false;
		else if (r->o->keys[i].kind != UTRACE__RKEY_EVENT)
			v->kf_all = false;
	}
	for (i = 0; i < r->o->nr_lat; i++) {
		const struct utrace__rlatency *l = &r->o->lat[i];

		const char *field;

		if (ev_is(v, l->begin)) {
			v->lat_role[i] = 1;
			r->lat[i].begin_seen = true;
		} else if (ev_is(v, l->end)) {
			v->lat_role[i] = 2;
			r->lat[i].end_seen = true;
		}
		field = v->lat_role[i] == 1 ? l->begin_field : l->end_field;
		if (!v->lat_role[i] || !field)
			continue;               /* (no field: nested pairs) */
		resolve_field(v, field, &v->lat_id[i]);
		if (v->lat_id[i].f)
			continue;
		if (r->o->one_table)
			utrace__fmts_problem(&r->fmts, "'%s': event '%s' has no field '%s' for "
				"--latency %s", r->name, v->label, field, l->text);
		else if (!r->lat[i].missing && !(r->lat[i].missing = no_field_text(v, field)))
			r->nomem = true;
		v->lat_role[i] = 0;
	}
	return v;
}

static void set_ref(struct rref *ref, const struct utrace__tf_item *it)
{
	*ref = (struct rref){ it->rec, it->format, it->proc, it->len, it->cpu };
}

static inline uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The bytes of a field in a record: 0, or -1 when they are not inside it. */
static int field_bytes(const struct rfield *rf, const unsigned char *rec, uint32_t len,
		       const unsigned char **p, uint32_t *n)
{
	uint32_t o, sz;

	if (rf->off + rf->size > len)
		return -1;
	if (!rf->dyn) {
		*p = rec + rf->off;
		*n = rf->size;
		if (rf->str)
			*n = (uint32_t)strnlen((const char *)*p, *n);
		return 0;
	}
	if (rf->size == 4) {
		uint32_t v = rd32(rec + rf->off);

		o = v & 0xffff;
		sz = v >> 16;
	} else {
		o = (uint32_t)rec[rf->off] | (uint32_t)rec[rf->off + 1] << 8;
		sz = len > o ? len - o : 0;
	}
	if (rf->rel)
		o += rf->off + rf->size;
	if (o > len || sz > len - o)
		return -1;
	*p = rec + o;
	*n = rf->str ? (uint32_t)strnlen((const char *)*p, sz) : sz;
	return 0;
}

/* A field's value into the key: a presence byte, a length, the bytes. */
static int kb_field(struct utrace__report *r, const struct rfield *rf,
		    const struct utrace__tf_item *it)
{
	const unsigned char *p;
	unsigned char hdr[3] = { 0, 0, 0 };
	uint32_t n;

	if (!rf->f || field_bytes(rf, it->rec, it->len, &p, &n) < 0)
		return kb_put(r, hdr, 1);
	if (n > 0xffff)
		n = 0xffff;
	hdr[0] = 1;
	hdr[1] = (unsigned char)n;
	hdr[2] = (unsigned char)(n >> 8);
	if (kb_put(r, hdr, 3) < 0)
		return -ENOMEM;
	return kb_put(r, p, n);
}

static int kb_u32(struct utrace__report *r, uint32_t v)
{
	return kb_put(r, &v, 4);
}

/* The non-field keys of an item. */
static int kb_fixed(struct utrace__report *r, const struct utrace__rkey *k,
		    const struct utrace__tf_item *it, const struct rev *v)
{
	switch (k->kind) {
	case UTRACE__RKEY_COMM:
		return kb_u32(r, r->last_comm);
	case UTRACE__RKEY_PID:
		return kb_u32(r, it->proc->pid) | kb_u32(r, r->last_pcomm);
	case UTRACE__RKEY_TID:
		return kb_u32(r, it->thread->tid) | kb_u32(r, r->last_comm);
	case UTRACE__RKEY_EVENT:
		return kb_u32(r, v->id);
	case UTRACE__RKEY_CPU:
		return kb_u32(r, it->cpu);
	case UTRACE__RKEY_FIELD:
		break;
	}
	return 0;
}

/* The table an event is counted in: its own, or the one of all (with the
 * key 'event'); an event -e leaves out (counted for --latency only) in
 * its own, never printed. */
static inline struct table *tab_of(struct utrace__report *r, struct rev *v)
{
	return r->combined && v->shown ? &r->all : &v->tab;
}

/* Count an event; *rowp: the index of its row in its table. */
static int count_event(struct utrace__report *r, struct rev *v, const struct utrace__tf_item *it,
		       size_t *rowp)
{
	struct table *t = tab_of(r, v);
	const unsigned char *fp;
	uint32_t fn, fslot = FC_SIZE;
	struct row *row;
	size_t i;
	bool made;

	/* Events come in runs of one thread: without field keys (or none
	 * that this event has), the key of an event of this format on the
	 * thread, comms and CPU of its last one is that one's (the CPU
	 * compared even when it is not a key). */
	if (v->kf_none && it->thread == v->c_thread && r->last_comm == v->c_comm &&
	    r->last_pcomm == v->c_pcomm && it->cpu == v->c_cpu) {
		*rowp = v->c_row;
		row = &t->rows[v->c_row];
		goto count;
	}
	/* One field key (--sort req_begin.path): a few values, met again and
	 * again; the row last seen with a value of this length and these
	 * end bytes, if its key is the value, without packing or hashing. */
	if (v->kf_one && field_bytes(&v->kf[0], it->rec, it->len, &fp, &fn) == 0 &&
	    fn <= 0xffff) {
		fslot = (fn ^ (fn ? (uint32_t)fp[0] << 3 ^ (uint32_t)fp[fn - 1] << 5 : 0)) %
			FC_SIZE;
		if (v->fc[fslot]) {
			const unsigned char *k;

			row = &t->rows[v->fc[fslot] - 1];
			k = t->keys + row->key_off;
			if (row->key_len == fn + 3 && k[0] == 1 && (uint32_t)(k[1] | k[2] << 8) == fn &&
			    !memcmp(k + 3, fp, fn)) {
				*rowp = v->fc[fslot] - 1;
				goto count;
			}
		}
	}
	r->kb_len = 0;
	for (i = 0; i < r->o->nr_keys; i++) {
		const struct utrace__rkey *k = &r->o->keys[i];
		int e = k->kind == UTRACE__RKEY_FIELD ? kb_field(r, &v->kf[i], it) :
			kb_fixed(r, k, it, v);

		if (e < 0)
			return -ENOMEM;
	}
	row = table_get(t, r->kb, r->kb_len, hash_bytes(r->kb, r->kb_len), &made);
	if (!row)
		return -ENOMEM;
	if (made)
		set_ref(&row->ref[0], it);
	*rowp = (size_t)(row - t->rows);
	if (fslot < FC_SIZE)
		v->fc[fslot] = (uint32_t)*rowp + 1;
	if (v->kf_none) {
		v->c_thread = it->thread;
		v->c_comm = r->last_comm;
		v->c_pcomm = r->last_pcomm;
		v->c_cpu = it->cpu;
		v->c_row = *rowp;
	}
count:
	row->count++;
	t->total++;
	if (t != &v->tab)
		v->tab.total++;
	return 0;
}

/* ------------------------------------------------------------ latency */

static int lat_rehash(struct lat *l)
{
	size_t n = l->nslots ? l->nslots * 2 : 256, i;
	struct pending *p = calloc(n, sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (i = 0; i < l->nslots; i++) {
		size_t j;

		if (!l->p[i].hash)
			continue;
		for (j = l->p[i].hash & (n - 1); p[j].hash; j = (j + 1) & (n - 1))
			;
		p[j] = l->p[i];
	}
	free(l->p);
	l->p = p;
	l->nslots = n;
	return 0;
}

/* Take slot j out of the linear-probing table (backward shift). */
static void lat_delete(struct lat *l, size_t j)
{
	size_t m = l->nslots - 1, k = j;

	l->p[j].hash = 0;
	for (;;) {
		size_t home;

		k = (k + 1) & m;
		if (!l->p[k].hash)
			break;
		home = l->p[k].hash & m;
		if ((k > j && (home <= j || home > k)) || (k < j && (home <= j && home > k))) {
			l->p[j] = l->p[k];
			l->p[k].hash = 0;
			j = k;
		}
	}
	l->np--;
}

/* Find the pending begin of (pid, id): its slot or -1 (*empty: the
 * empty slot the probe ended at); the id is idv, or the n bytes at k
 * when it is not a number (n 0: a number). */
static inline long lat_find(struct lat *l, const unsigned char *k, size_t n, uint64_t h,
			    uint32_t pid, uint64_t idv, size_t *empty)
{
	size_t j;

	*empty = 0;
	if (!l->nslots)
		return -1;
	for (j = h & (l->nslots - 1); l->p[j].hash; j = (j + 1) & (l->nslots - 1)) {
		const struct pending *pd = &l->p[j];

		if (pd->hash == h && pd->pid == pid && pd->idv == idv && pd->id_len == n &&
		    (!n || !memcmp(l->keys + pd->key_off, k, n)))
			return (long)j;
	}
	*empty = j;
	return -1;
}

static inline uint64_t num_hash(uint64_t pid, uint64_t idv)
{
	uint64_t h = (pid ^ (idv * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

	h ^= h >> 33;
	return h ? h : 1;
}

static inline uint32_t item_tid(const struct utrace__tf_item *it)
{
	return it->thread ? it->thread->tid : it->proc->pid;
}

/* The count of begins open on a thread (BEGIN:END without fields), made
 * 0 when first asked; NULL when out of memory. */
static uint32_t *lat_depth(struct lat *l, uint32_t pid, uint32_t tid)
{
	uint64_t key = ((uint64_t)pid << 32 | tid) + 1, h;
	size_t j;

	if ((l->ndp + 1) * 2 > l->dp_slots) {
		size_t n = l->dp_slots ? l->dp_slots * 2 : 64, i;
		struct ldepth *a = calloc(n, sizeof(*a));

		if (!a)
			return NULL;
		for (i = 0; i < l->dp_slots; i++) {
			if (!l->dp[i].key)
				continue;
			h = num_hash(l->dp[i].key, 0);
			for (j = h & (n - 1); a[j].key; j = (j + 1) & (n - 1))
				;
			a[j] = l->dp[i];
		}
		free(l->dp);
		l->dp = a;
		l->dp_slots = n;
	}
	h = num_hash(key, 0);
	for (j = h & (l->dp_slots - 1); l->dp[j].key; j = (j + 1) & (l->dp_slots - 1))
		if (l->dp[j].key == key)
			return &l->dp[j].depth;
	l->dp[j].key = key;
	l->ndp++;
	return &l->dp[j].depth;
}

/* The pairing key of a nested begin or end: its thread and depth. */
static inline void lat_nest_key(struct utrace__report *r, const struct utrace__tf_item *it,
				uint32_t depth, uint32_t *len, uint64_t *h, uint64_t *idv)
{
	r->kb_len = 0;
	*idv = (uint64_t)item_tid(it) << 32 | depth;
	*len = 0;
	*h = num_hash(it->proc->pid, *idv);
}

/*
 * The pairing key of an item: its process and its id, a number in *idv
 * (the common case: no bytes, *len 0), else the id field's bytes packed
 * into r->kb (*len of them); *h their hash.
 */
static inline int lat_id_key(struct utrace__report *r, const struct rfield *idf,
		      const struct utrace__tf_item *it, uint32_t *len, uint64_t *h,
		      uint64_t *idv)
{
	uint64_t pid = it->proc->pid;

	r->kb_len = 0;
	*idv = 0;
	if (idf->num && idf->off + idf->size <= it->len) {
		const unsigned char *p = it->rec + idf->off;

		/* little-endian; a constant size each, so no call */
		if (idf->size == 8) {
			memcpy(idv, p, 8);
		} else if (idf->size == 4) {
			uint32_t x;

			memcpy(&x, p, 4);
			*idv = x;
		} else if (idf->size == 2) {
			uint16_t x;

			memcpy(&x, p, 2);
			*idv = x;
		} else {
			*idv = *p;
		}
		*len = 0;
		*h = num_hash(pid, *idv);
		return 0;
	}
	if (kb_field(r, idf, it) < 0)
		return -ENOMEM;
	*len = (uint32_t)r->kb_len;
	*h = hash_bytes(r->kb, *len) ^ (pid * 0x9e3779b97f4a7c15ULL);
	if (!*h)
		*h = 1;
	return 0;
}

/* A begin: its id, and its count row (crow), whose key has its fields. */
static int lat_begin(struct utrace__report *r, struct lat *l, size_t li, struct rev *v,
		     const struct utrace__tf_item *it, size_t crow)
{
	uint32_t id_len;
	uint64_t h, idv;
	long j;
	size_t i;

	if (!l->spec->begin_field) {
		uint32_t *depth = lat_depth(l, it->proc->pid, item_tid(it));

		if (!depth)
			return -ENOMEM;
		lat_nest_key(r, it, ++*depth, &id_len, &h, &idv);
	} else if (lat_id_key(r, &v->lat_id[li], it, &id_len, &h, &idv) < 0) {
		return -ENOMEM;
	}
	/* room first (at most half full), so that a miss's probe ends at
	 * the slot the begin goes to */
	if ((l->np + 1) * 2 > l->nslots && lat_rehash(l) < 0)
		return -ENOMEM;
	j = lat_find(l, r->kb, id_len, h, it->proc->pid, idv, &i);
	if (j >= 0) {
		/* a second begin before the end: the first stays unmatched */
		l->unmatched_begin++;
		lat_delete(l, (size_t)j);
		for (i = h & (l->nslots - 1); l->p[i].hash; i = (i + 1) & (l->nslots - 1))
			;
	}
	if (r->kb_len && grow_bytes(&l->keys, &l->keys_cap, l->keys_len + r->kb_len) < 0)
		return -ENOMEM;
	l->p[i].hash = h;
	l->p[i].time = it->time;
	l->p[i].key_off = (uint32_t)l->keys_len;
	l->p[i].id_len = id_len;
	l->p[i].pid = it->proc->pid;
	l->p[i].crow = (uint32_t)crow;
	l->p[i].idv = idv;
	set_ref(&l->p[i].ref, it);
	l->p[i].ev = v;
	l->p[i].carry = 0;
	if (r->kb_len) {
		memcpy(l->keys + l->keys_len, r->kb, r->kb_len);
		l->keys_len += r->kb_len;
	}
	l->np++;
	return 0;
}

static const unsigned char *skip_field(const unsigned char *p)
{
	return p[0] ? p + 3 + (p[1] | p[2] << 8) : p + 1;
}

/* Past key k's bytes in a packed count key (count_event(), kb_fixed()). */
static const unsigned char *skip_key(const struct utrace__rkey *k, const unsigned char *p)
{
	switch (k->kind) {
	case UTRACE__RKEY_PID:
	case UTRACE__RKEY_TID:
		return p + 8;
	case UTRACE__RKEY_FIELD:
		return skip_field(p);
	default:
		return p + 4;
	}
}

/* The group row cached for the begin's count row, or NULL. */
static struct row *lat_gc_get(struct lat *l, uint32_t id, size_t crow)
{
	if (id >= l->nr_gc || crow >= l->gc_n[id] || !l->gc[id][crow])
		return NULL;
	return &l->groups.rows[l->gc[id][crow] - 1];
}

static int lat_gc_put(struct lat *l, uint32_t id, size_t crow, size_t grow)
{

	if (id >= l->nr_gc) {
		size_t n = id + 16, i;
		uint32_t **a = realloc(l->gc, n * sizeof(*a));
		size_t *b;

		if (!a)
			return -ENOMEM;
		l->gc = a;
		b = realloc(l->gc_n, n * sizeof(*b));
		if (!b)
			return -ENOMEM;
		l->gc_n = b;
		for (i = l->nr_gc; i < n; i++) {
			l->gc[i] = NULL;
			l->gc_n[i] = 0;
		}
		l->nr_gc = n;
	}
	if (crow >= l->gc_n[id]) {
		size_t n = l->gc_n[id] ? l->gc_n[id] : 64;
		uint32_t *a;

		while (n <= crow)
			n *= 2;
		a = realloc(l->gc[id], n * sizeof(*a));
		if (!a)
			return -ENOMEM;
		memset(a + l->gc_n[id], 0, (n - l->gc_n[id]) * sizeof(*a));
		l->gc[id] = a;
		l->gc_n[id] = n;
	}
	l->gc[id][crow] = (uint32_t)grow + 1;
	return 0;
}

/*
 * A latency group's key into r->kb: fields from the begin pd when it has
 * them (the key of its count row has them), else from the end it; comm,
 * pid, tid and cpu from the end.  pd NULL: all from the end.
 */
static int lat_group_key(struct utrace__report *r, struct rev *v,
			 const struct utrace__tf_item *it, const struct pending *pd)
{
	const struct table *bt;
	const unsigned char *bk = NULL;
	size_t i;

	r->kb_len = 0;
	if (pd && r->o->nr_keys) {
		bt = tab_of(r, pd->ev);
		bk = bt->keys + bt->rows[pd->crow].key_off;
	}
	for (i = 0; i < r->o->nr_keys; i++) {
		const struct utrace__rkey *k = &r->o->keys[i];
		const unsigned char *bf = bk;
		int e = 0;

		if (bk)
			bk = skip_key(k, bk);
		if (k->kind == UTRACE__RKEY_EVENT)
			continue;
		if (k->kind != UTRACE__RKEY_FIELD)
			e = kb_fixed(r, k, it, v);
		else if (pd && pd->ev->kf[i].f)
			e = kb_put(r, bf, (size_t)(bk - bf));
		else
			e = kb_field(r, &v->kf[i], it);
		if (e < 0)
			return -ENOMEM;
	}
	return 0;
}

/* An end paired with a begin of an earlier report: its group key (all
 * from the end) kept for carry_out. */
static int lat_end_carried(struct utrace__report *r, struct lat *l, struct rev *v,
			   const struct utrace__tf_item *it, const struct pending *pd)
{
	struct cmatch *m;

	if (lat_group_key(r, v, it, NULL) < 0 ||
	    (r->kb_len && grow_bytes(&l->cm_keys, &l->cm_keys_cap,
				     l->cm_keys_len + r->kb_len) < 0))
		return -ENOMEM;
	if (l->ncm == l->cap_cm) {
		size_t c = l->cap_cm ? l->cap_cm * 2 : 16;

		m = realloc(l->cm, c * sizeof(*m));
		if (!m)
			return -ENOMEM;
		l->cm = m;
		l->cap_cm = c;
	}
	m = &l->cm[l->ncm++];
	m->carry = pd->carry;
	m->d = it->time >= pd->time ? it->time - pd->time : 0;
	set_ref(&m->ref, it);
	m->key_off = (uint32_t)l->cm_keys_len;
	m->key_len = (uint32_t)r->kb_len;
	if (r->kb_len)
		memcpy(l->cm_keys + l->cm_keys_len, r->kb, r->kb_len);
	l->cm_keys_len += r->kb_len;
	return 0;
}

/* @crow: the end's count row */
static int lat_end(struct utrace__report *r, struct lat *l, size_t li, struct rev *v,
		   const struct utrace__tf_item *it, size_t crow)
{
	struct pending *pd;
	struct row *row;
	uint32_t id_len;
	uint64_t h, d, idv;
	size_t i;
	long j;
	bool made;

	if (!l->spec->end_field) {
		uint32_t *depth = lat_depth(l, it->proc->pid, item_tid(it));

		if (!depth)
			return -ENOMEM;
		if (!*depth) {
			l->unmatched_end++;
			return 0;
		}
		lat_nest_key(r, it, (*depth)--, &id_len, &h, &idv);
	} else if (lat_id_key(r, &v->lat_id[li], it, &id_len, &h, &idv) < 0) {
		return -ENOMEM;
	}
	j = lat_find(l, r->kb, id_len, h, it->proc->pid, idv, &i);
	if (j < 0) {
		l->unmatched_end++;
		return 0;
	}
	pd = &l->p[j];
	if (pd->carry) {
		if (lat_end_carried(r, l, v, it, pd) < 0)
			return -ENOMEM;
		lat_delete(l, (size_t)j);
		return 0;
	}
	d = it->time >= pd->time ? it->time - pd->time : 0;
	if (r->no_field_key && it->thread == l->c_thread && r->last_comm == l->c_comm &&
	    r->last_pcomm == l->c_pcomm && it->cpu == l->c_cpu) {
		row = &l->groups.rows[l->c_row];
		goto add;
	}
	/* the group key all from the begin's count row: that row's group;
	 * none from the begin (all from the end, as the end's count row):
	 * the end's count row's group (events of different ids, so the two
	 * share the cache) */
	if (pd->ev->kf_all)
		row = lat_gc_get(l, pd->ev->id, pd->crow);
	else if (pd->ev->kf_none)
		row = lat_gc_get(l, v->id, crow);
	else
		row = NULL;
	if (row)
		goto add;
	if (lat_group_key(r, v, it, pd) < 0)
		return -ENOMEM;
	row = table_get(&l->groups, r->kb, r->kb_len, hash_bytes(r->kb, r->kb_len), &made);
	if (!row)
		return -ENOMEM;
	if (pd->ev->kf_all) {
		if (lat_gc_put(l, pd->ev->id, pd->crow, (size_t)(row - l->groups.rows)) < 0)
			return -ENOMEM;
	} else if (pd->ev->kf_none) {
		if (lat_gc_put(l, v->id, crow, (size_t)(row - l->groups.rows)) < 0)
			return -ENOMEM;
	}
	if (made) {
		row->ref[0] = pd->ref;
		set_ref(&row->ref[1], it);
		row->lat = calloc(1, sizeof(*row->lat));
		if (!row->lat)
			return -ENOMEM;
	}
	if (r->no_field_key) {
		l->c_thread = it->thread;
		l->c_comm = r->last_comm;
		l->c_pcomm = r->last_pcomm;
		l->c_cpu = it->cpu;
		l->c_row = (size_t)(row - l->groups.rows);
	}
add:
	if (row->lat->nr == row->lat->cap) {
		size_t c = row->lat->cap ? row->lat->cap * 2 : 16;
		uint64_t *a = realloc(row->lat->v, c * sizeof(*a));

		if (!a)
			return -ENOMEM;
		row->lat->v = a;
		row->lat->cap = c;
	}
	row->lat->v[row->lat->nr++] = d;
	row->count++;
	l->groups.total++;
	l->pairs++;
	lat_delete(l, (size_t)j);
	return 0;
}

/* ------------------------------------------------------------ the API */

struct utrace__report *utrace__report_new(const struct utrace__report_opts *o,
					  struct utrace__tf *tf)
{
	struct utrace__report *r = calloc(1, sizeof(*r));
	size_t i;

	if (!r)
		return NULL;
	r->o = o;
	r->name = utrace__tf_name(tf);
	trace_seq_init(&r->seq);
	r->lat = calloc(o->nr_lat + 1, sizeof(*r->lat));
	if (!r->lat || utrace__fmts_init(&r->fmts, tf) < 0) {
		utrace__report_free(r);
		return NULL;
	}
	for (i = 0; i < o->nr_lat; i++)
		r->lat[i].spec = &o->lat[i];
	if (o->one_table) {
		r->fmts.pr.quiet = true;
		r->fmts.pr.keep = r->problem;
		r->fmts.pr.keep_len = sizeof(r->problem);
	}
	r->no_field_key = true;
	for (i = 0; i < o->nr_keys; i++) {
		if (o->keys[i].kind == UTRACE__RKEY_EVENT)
			r->combined = true;
		if (o->keys[i].kind == UTRACE__RKEY_FIELD)
			r->no_field_key = false;
	}
	if (o->one_table)
		r->combined = true;
	return r;
}

int utrace__report_item(struct utrace__report *r, const struct utrace__tf_item *it)
{
	struct rev *v;
	size_t i, crow;

	if (it->kind == UTRACE__TF_LOST) {
		if (it->lost)
			r->lost += it->lost;
		else
			r->lost_unknown = true;
		return 0;
	}
	if (!it->format) {
		if (!it->format_rejected)
			utrace__fmts_problem(&r->fmts, "'%s': record at offset %llu: event at "
				"offset %llu: %s %u has no %s for event id %u", r->name,
				(unsigned long long)it->page_offset,
				(unsigned long long)it->offset, UTRACE__TF_NO_FORMAT_ARGS(it));
		return 0;
	}
	v = it->format->priv ? ((struct utrace__fmt *)it->format->priv)->user : NULL;
	if (!v)
		v = rev_of(r, it);
	if (r->nomem)
		return -ENOMEM;
	if (!v || !v->usable)
		return 0;
	if (!v->shown) {
		/* left out by -e: counted only for --latency */
		for (i = 0; i < r->o->nr_lat && !v->lat_role[i]; i++)
			;
		if (i == r->o->nr_lat)
			return 0;
	}
	if (thread_comms(r, it) < 0 || count_event(r, v, it, &crow) < 0)
		return -ENOMEM;
	for (i = 0; i < r->o->nr_lat; i++) {
		int e = 0;

		if (v->lat_role[i] == 1)
			e = lat_begin(r, &r->lat[i], i, v, it, crow);
		else if (v->lat_role[i] == 2)
			e = lat_end(r, &r->lat[i], i, v, it, crow);
		if (e < 0)
			return -ENOMEM;
	}
	return 0;
}

void utrace__report_free(struct utrace__report *r)
{
	size_t i, j;

	if (!r)
		return;
	for (i = 0; i < r->nr_evs; i++) {
		table_fini(&r->evs[i]->tab);
		free(r->evs[i]->kf);
		free(r->evs[i]->lat_id);
		free(r->evs[i]->lat_role);
		free(r->evs[i]->label);
		free(r->evs[i]);
	}
	free(r->evs);
	table_fini(&r->all);
	if (r->lat)
		for (i = 0; i < r->o->nr_lat; i++) {
			table_fini(&r->lat[i].groups);
			free(r->lat[i].p);
			free(r->lat[i].keys);
			for (j = 0; j < r->lat[i].nr_gc; j++)
				free(r->lat[i].gc[j]);
			free(r->lat[i].gc);
			free(r->lat[i].gc_n);
			free(r->lat[i].cm);
			free(r->lat[i].cm_keys);
			free(r->lat[i].dp);
			free(r->lat[i].missing);
		}
	free(r->lat);
	for (i = 0; i < r->comms.nr; i++)
		free(r->comms.s[i]);
	free(r->comms.s);
	utrace__table_free(&r->comms.index);
	free(r->tc);
	free(r->kb);
	if (r->seq.buffer)
		trace_seq_destroy(&r->seq);
	utrace__fmts_fini(&r->fmts);
	free(r);
}

/* ------------------------------------------------------------ printing */

/* One printed table: rows of cells. */
struct ptab {
	size_t ncols;
	char **head;                    /* column headers */
	bool *right;                    /* right-aligned columns */
	size_t *width;
	char ***cell;                   /* [row][col] */
	double *num;                    /* [row * ncols + col]: a number's value, or NAN */
	uint64_t *count;
	size_t *order;
	size_t nrows;
};

static char *xstrndup(struct utrace__report *r, const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		r->nomem = true;
	return p;
}

/* A field as its event prints it (perf's dynamic sort key): the value
 * after "name=" in the event's text, else libtraceevent's print of the
 * field alone; raw: the number (or the string). */
static char *field_text(struct utrace__report *r, struct rev *v, const struct rfield *rf,
			const unsigned char *kp, bool raw, const struct rref *ref)
{
	struct utrace__tf_item it = { .kind = UTRACE__TF_EVENT, .rec = ref->rec, .len = ref->len,
				      .format = ref->format, .proc = ref->proc, .cpu = ref->cpu };
	uint32_t n = kp[1] | kp[2] << 8;
	const unsigned char *p = kp + 3;
	struct utrace__rec rec;
	struct tep_record tr;
	char why[256], *s = NULL;

	if (!kp[0])
		return xstrndup(r, "", 0);
	if (raw || !rf->f) {
		if (rf->str)
			return xstrndup(r, (const char *)p, n);
		if (!rf->dyn && (n == 1 || n == 2 || n == 4 || n == 8) &&
		    !(rf->f && (rf->f->flags & TEP_FIELD_IS_ARRAY))) {
			uint64_t u = utrace__read_num(p, (int)n);

			if (rf->is_signed && n < 8 && (u >> (n * 8 - 1)) & 1)
				u |= ~0ULL << (n * 8);
			if (asprintf(&s, rf->is_signed ? "%" PRId64 : "%" PRIu64, u) < 0)
				s = NULL;
		} else {
			uint32_t i;
			struct utrace__obuf b = { 0 };

			for (i = 0; i < n; i++)
				utrace__ob_printf(&b, "%s%02x", i ? " " : "", p[i]);
			utrace__ob_putc(&b, 0);
			s = b.nomem ? NULL : b.p;
			if (b.nomem)
				free(b.p);
		}
		if (!s)
			r->nomem = true;
		return s;
	}
	if (utrace__fmts_check(&r->fmts, v->e, &it, true, &rec, why, sizeof(why)) <= 0)
		return field_text(r, v, rf, kp, true, ref);
	memset(&tr, 0, sizeof(tr));
	tr.data = (void *)rec.d;
	tr.size = (int)it.len;
	tr.cpu = (int)it.cpu;
	trace_seq_reset(&r->seq);
	tep_print_event(r->fmts.tep, &r->seq, &tr, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&r->seq);
	if (r->seq.state == TRACE_SEQ__GOOD) {
		size_t nl = strlen(rf->f->name);
		const char *t = r->seq.buffer;

		while (t && *t) {
			size_t w = strcspn(t, " ");

			if (w > nl && !strncmp(t, rf->f->name, nl) && t[nl] == '=')
				return xstrndup(r, t + nl + 1, w - nl - 1);
			t += w;
			t += strspn(t, " ");
		}
		trace_seq_reset(&r->seq);
		tep_print_field(&r->seq, (void *)rec.d, rf->f);
		trace_seq_terminate(&r->seq);
		if (r->seq.state == TRACE_SEQ__GOOD)
			return xstrndup(r, r->seq.buffer, r->seq.len);
	}
	return field_text(r, v, rf, kp, true, ref);
}

/* Whether a key has a column for this table's events (perf leaves out a
 * dynamic key's column in the blocks of events without the field); lat:
 * the latency's index (its begin and end events), or -1. */
static bool key_shown(struct utrace__report *r, size_t k, struct rev *only, long lat)
{
	const struct utrace__rkey *key = &r->o->keys[k];
	size_t i;

	if (lat >= 0 && key->kind == UTRACE__RKEY_EVENT)
		return false;
	if (key->kind != UTRACE__RKEY_FIELD || r->o->one_table)
		return true;
	if (only)
		return only->kf && only->kf[k].f;
	for (i = 0; i < r->nr_evs; i++)
		if (r->evs[i]->kf && r->evs[i]->kf[k].f &&
		    (lat < 0 ? r->evs[i]->shown : r->evs[i]->lat_role[lat]))
			return true;
	return false;
}

static char *key_header(const struct utrace__rkey *k)
{
	switch (k->kind) {
	case UTRACE__RKEY_COMM:
		return strdup("Command");
	case UTRACE__RKEY_PID:
		return strdup("    Pid:Command");
	case UTRACE__RKEY_TID:
		return strdup("    Tid:Command");
	case UTRACE__RKEY_EVENT:
		return strdup("Event");
	case UTRACE__RKEY_CPU:
		return strdup("CPU");
	case UTRACE__RKEY_FIELD:
		break;
	}
	return strdup(k->field);
}

static uint32_t get_u32(const unsigned char **p)
{
	uint32_t v = rd32(*p);

	*p += 4;
	return v;
}

/*
 * The cells of one row; latency rows read a field from the begin record
 * when the begin event has it, else from the end record.  Keys not shown
 * take their bytes from the key.
 */
static int row_cells(struct utrace__report *r, const struct table *t, const struct row *row,
		     bool latency, const bool *shown, char **cells)
{
	const unsigned char *p = row->key_len ? t->keys + row->key_off : NULL;
	size_t i, c = 0;

	for (i = 0; i < r->o->nr_keys; i++) {
		const struct utrace__rkey *k = &r->o->keys[i];
		char *s = NULL;
		uint32_t a, b;

		switch (k->kind) {
		case UTRACE__RKEY_COMM:
			s = strdup(r->comms.s[get_u32(&p)]);
			break;
		case UTRACE__RKEY_PID:
		case UTRACE__RKEY_TID:
			a = get_u32(&p);
			b = get_u32(&p);
			if (asprintf(&s, "%7u:%s", a, r->comms.s[b]) < 0)
				s = NULL;
			break;
		case UTRACE__RKEY_EVENT:
			if (latency)
				continue;
			s = strdup(r->evs[get_u32(&p)]->label);
			break;
		case UTRACE__RKEY_CPU:
			if (asprintf(&s, "%03u", get_u32(&p)) < 0)
				s = NULL;
			break;
		case UTRACE__RKEY_FIELD: {
			const struct rref *ref = &row->ref[0];
			struct rev *v = ((struct utrace__fmt *)ref->format->priv)->user;

			if (latency && !v->kf[i].f) {
				ref = &row->ref[1];
				v = ((struct utrace__fmt *)ref->format->priv)->user;
			}
			s = field_text(r, v, &v->kf[i], p, k->raw, ref);
			p = skip_field(p);
			break;
		}
		}
		if (!s) {
			r->nomem = true;
			return -ENOMEM;
		}
		if (!shown[i]) {
			free(s);
			continue;
		}
		cells[c++] = s;
	}
	return 0;
}

/* A cell's number (for the order of rows), or NAN when it is not one. */
static double cell_num(const char *s)
{
	const char *d = s + strspn(s, " ");

	if (*d == '-')
		d++;
	if (!*d || strspn(d, "0123456789") != strlen(d))
		return NAN;
	return strtod(s, NULL);
}

static const struct ptab *sort_tab;
static const double *sort_key;

/* by count (or the latency's mean) down, then the cells up */
static int cmp_rows(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb, i;
	double x = sort_key ? sort_key[a] : (double)sort_tab->count[a];
	double y = sort_key ? sort_key[b] : (double)sort_tab->count[b];

	if (x != y)
		return x > y ? -1 : 1;
	for (i = 0; i < sort_tab->ncols; i++) {
		double u = sort_tab->num[a * sort_tab->ncols + i];
		double v = sort_tab->num[b * sort_tab->ncols + i];
		int c;

		if (!isnan(u) && !isnan(v))
			c = u < v ? -1 : u > v;
		else
			c = strcmp(sort_tab->cell[a][i], sort_tab->cell[b][i]);
		if (c)
			return c;
	}
	return 0;
}

/* A table's cells and column headers. */
static void free_text(char ***cell, size_t nrows, char **head, size_t ncols)
{
	size_t i, j;

	for (i = 0; cell && i < nrows; i++) {
		for (j = 0; cell[i] && j < ncols; j++)
			free(cell[i][j]);
		free(cell[i]);
	}
	for (j = 0; head && j < ncols; j++)
		free(head[j]);
	free(cell);
	free(head);
}

static void ptab_free(struct ptab *pt)
{
	free_text(pt->cell, pt->nrows, pt->head, pt->ncols);
	free(pt->right);
	free(pt->width);
	free(pt->num);
	free(pt->count);
	free(pt->order);
	memset(pt, 0, sizeof(*pt));
}

/* The key columns of a table (their headers, widths, cells). */
static int ptab_build(struct utrace__report *r, struct ptab *pt, const struct table *t,
		      struct rev *only, long lat)
{
	bool latency = lat >= 0;
	bool *shown = calloc(r->o->nr_keys + 1, sizeof(*shown));
	size_t i, j, c = 0, maxcomm = 0;

	memset(pt, 0, sizeof(*pt));
	if (!shown)
		return -ENOMEM;
	for (i = 0; i < r->o->nr_keys; i++)
		if ((shown[i] = key_shown(r, i, only, lat)))
			pt->ncols++;
	pt->nrows = t->nr;
	pt->head = calloc(pt->ncols + 1, sizeof(*pt->head));
	pt->right = calloc(pt->ncols + 1, sizeof(*pt->right));
	pt->width = calloc(pt->ncols + 1, sizeof(*pt->width));
	pt->cell = calloc(t->nr + 1, sizeof(*pt->cell));
	pt->count = calloc(t->nr + 1, sizeof(*pt->count));
	pt->order = calloc(t->nr + 1, sizeof(*pt->order));
	pt->num = calloc(t->nr * pt->ncols + 1, sizeof(*pt->num));
	if (!pt->head || !pt->right || !pt->width || !pt->cell || !pt->count || !pt->order ||
	    !pt->num)
		goto nomem;
	for (i = 0; i < r->o->nr_keys; i++) {
		const struct utrace__rkey *k = &r->o->keys[i];

		if (!shown[i])
			continue;
		pt->head[c] = key_header(k);
		if (!pt->head[c])
			goto nomem;
		pt->right[c] = k->kind == UTRACE__RKEY_FIELD;
		pt->width[c] = strlen(pt->head[c]);
		if (k->kind == UTRACE__RKEY_FIELD) {
			/* perf's hde_width(): at least a hex number's width */
			const struct rfield *rf = NULL;

			for (j = 0; j < r->nr_evs && !rf; j++)
				if ((!only || r->evs[j] == only) && r->evs[j]->kf && r->evs[j]->kf[i].f)
					rf = &r->evs[j]->kf[i];
			if (rf && !rf->str && pt->width[c] < rf->size * 2 + 2)
				pt->width[c] = rf->size * 2 + 2;
			else if (rf && rf->str && !rf->dyn && pt->width[c] < rf->size)
				pt->width[c] = rf->size;
		}
		c++;
	}
	for (i = 0; i < t->nr; i++) {
		pt->cell[i] = calloc(pt->ncols + 1, sizeof(char *));
		if (!pt->cell[i] || row_cells(r, t, &t->rows[i], latency, shown, pt->cell[i]) < 0)
			goto nomem;
		pt->count[i] = t->rows[i].count;
		pt->order[i] = i;
		for (j = 0; j < pt->ncols; j++) {
			size_t w = strlen(pt->cell[i][j]);

			if (pt->width[j] < w)
				pt->width[j] = w;
			pt->num[i * pt->ncols + j] = cell_num(pt->cell[i][j]);
		}
	}
	/* perf: Command as wide as the longest comm, Pid:Command 8 more */
	for (c = 0, i = 0; i < r->o->nr_keys; i++) {
		if (!shown[i])
			continue;
		if (r->o->keys[i].kind == UTRACE__RKEY_COMM && maxcomm < pt->width[c])
			maxcomm = pt->width[c];
		c++;
	}
	for (c = 0, i = 0; i < r->o->nr_keys; i++) {
		if (!shown[i])
			continue;
		if ((r->o->keys[i].kind == UTRACE__RKEY_PID ||
		     r->o->keys[i].kind == UTRACE__RKEY_TID) && pt->width[c] < maxcomm + 8)
			pt->width[c] = maxcomm + 8;
		c++;
	}
	free(shown);
	return 0;
nomem:
	free(shown);
	r->nomem = true;
	return -ENOMEM;
}

static void put_cell(struct utrace__obuf *b, const struct ptab *pt, size_t col, const char *s)
{
	utrace__ob_printf(b, pt->right[col] ? "%*s" : "%-*s", (int)pt->width[col], s);
}

static void put_dots(struct utrace__obuf *b, size_t n)
{
	while (n--)
		utrace__ob_putc(b, '.');
}

/* "N" as perf's convert_unit(): 1000 and more in K, M, G */
static void put_samples(struct utrace__obuf *b, uint64_t n)
{
	char unit = ' ';

	if (n > 1000) {
		n /= 1000;
		unit = 'K';
	}
	if (n > 1000) {
		n /= 1000;
		unit = 'M';
	}
	if (n > 1000) {
		n /= 1000;
		unit = 'G';
	}
	utrace__ob_printf(b, "# Samples: %" PRIu64 "%c", n, unit);
}

static void print_block(struct utrace__report *r, struct utrace__obuf *b, const char *what,
			const struct table *t, struct rev *only)
{
	struct ptab pt;
	size_t i, j;

	if (ptab_build(r, &pt, t, only, -1) < 0) {
		ptab_free(&pt);
		return;
	}
	put_samples(b, t->total);
	utrace__ob_printf(b, " of %s\n# Event count (approx.): %" PRIu64 "\n#\n# Overhead",
			  what, t->total);
	/* -n: perf's Samples column, 12 wide */
	if (r->o->show_nr)
		utrace__ob_printf(b, "  %12s", "Samples");
	for (j = 0; j < pt.ncols; j++) {
		utrace__ob_puts(b, "  ");
		put_cell(b, &pt, j, pt.head[j]);
	}
	utrace__ob_puts(b, "\n# ........");
	if (r->o->show_nr)
		utrace__ob_puts(b, "  ............");
	for (j = 0; j < pt.ncols; j++) {
		utrace__ob_puts(b, "  ");
		put_dots(b, pt.width[j]);
	}
	utrace__ob_puts(b, "\n#\n");
	sort_tab = &pt;
	sort_key = NULL;
	qsort(pt.order, pt.nrows, sizeof(*pt.order), cmp_rows);
	for (i = 0; i < pt.nrows; i++) {
		size_t k = pt.order[i];

		utrace__ob_printf(b, "   %6.2f%%", t->total ? 100.0 * (double)pt.count[k] /
				  (double)t->total : 0.0);
		if (r->o->show_nr)
			utrace__ob_printf(b, "  %12" PRIu64, pt.count[k]);
		for (j = 0; j < pt.ncols; j++) {
			utrace__ob_puts(b, "  ");
			put_cell(b, &pt, j, pt.cell[k][j]);
		}
		utrace__ob_putc(b, '\n');
	}
	utrace__ob_puts(b, "\n\n");
	ptab_free(&pt);
}

/* bpftrace's hist_index_label(): 2^p with K, M, G, T, P, E for 2^10s */
static void hist_label(char *buf, size_t len, unsigned int p)
{
	static const char suffix[] = "\0KMGTPE";
	unsigned int d = p / 10;

	if (d)
		snprintf(buf, len, "%llu%c", 1ULL << (p - 10 * d), suffix[d]);
	else
		snprintf(buf, len, "%llu", 1ULL << p);
}

/* bpftrace's hist() of a row's durations (ns) */
static void print_hist(struct utrace__obuf *b, const uint64_t *v, size_t n)
{
	uint64_t bucket[66] = { 0 }, max = 0;
	int lo = -1, hi = -1, i;
	size_t k;

	for (k = 0; k < n; k++) {
		/* 1: [0], 2: [1], i >= 3: [2^(i-2), 2^(i-1)) */
		int idx = v[k] == 0 ? 1 : 2 + 63 - __builtin_clzll(v[k]);

		bucket[idx]++;
	}
	for (i = 0; i < 66; i++) {
		if (bucket[i] && lo < 0)
			lo = i;
		if (bucket[i])
			hi = i;
		if (bucket[i] > max)
			max = bucket[i];
	}
	for (i = lo; lo >= 0 && i <= hi; i++) {
		char label[48], a[16], c[16];
		int bar = (int)((double)bucket[i] / (double)max * 52);

		if (i == 1) {
			snprintf(label, sizeof(label), "[0]");
		} else if (i == 2) {
			snprintf(label, sizeof(label), "[1]");
		} else {
			hist_label(a, sizeof(a), (unsigned int)(i - 2));
			hist_label(c, sizeof(c), (unsigned int)(i - 1));
			snprintf(label, sizeof(label), "[%s, %s)", a, c);
		}
		utrace__ob_printf(b, "%-16s%8" PRIu64 " |", label, bucket[i]);
		for (k = 0; k < 52; k++)
			utrace__ob_putc(b, (int)k < bar ? '@' : ' ');
		utrace__ob_puts(b, "|\n");
	}
}

static void print_latency(struct utrace__report *r, struct utrace__obuf *b, size_t li)
{
	struct lat *l = &r->lat[li];
	char (*st)[UTRACE__LAT_COLS][UTRACE__LAT_CELL] = NULL;
	size_t w[UTRACE__LAT_COLS], i, j;
	double *mean = NULL;
	struct ptab pt;

	if (l->spec->begin_field)
		utrace__ob_printf(b, "# Latency: %s.%s -> %s.%s\n", l->spec->begin,
				  l->spec->begin_field, l->spec->end, l->spec->end_field);
	else
		utrace__ob_printf(b, "# Latency: %s -> %s, innermost per thread\n",
				  l->spec->begin, l->spec->end);
	utrace__ob_printf(b, "# Pairs: %" PRIu64 "  Unmatched begins: %" PRIu64
			  "  Unmatched ends: %" PRIu64 "\n#\n", l->pairs,
			  l->unmatched_begin + l->np, l->unmatched_end);
	if (ptab_build(r, &pt, &l->groups, NULL, (long)li) < 0)
		goto out;
	st = calloc(pt.nrows + 1, sizeof(*st));
	mean = calloc(pt.nrows + 1, sizeof(*mean));
	if (!st || !mean) {
		r->nomem = true;
		goto out;
	}
	for (j = 0; j < UTRACE__LAT_COLS; j++)
		w[j] = strlen(utrace__lat_heads[j]);
	for (i = 0; i < pt.nrows; i++) {
		struct row *row = &l->groups.rows[i];

		mean[i] = utrace__lat_cells(row->lat->v, row->lat->nr, st[i], w);
	}
	utrace__ob_puts(b, "#");
	for (j = 0; j < pt.ncols; j++) {
		utrace__ob_puts(b, j ? "  " : " ");
		put_cell(b, &pt, j, pt.head[j]);
	}
	for (j = 0; j < UTRACE__LAT_COLS; j++)
		utrace__ob_printf(b, "%s%*s", pt.ncols || j ? "  " : " ", (int)w[j], utrace__lat_heads[j]);
	utrace__ob_puts(b, "\n#");
	for (j = 0; j < pt.ncols; j++) {
		utrace__ob_puts(b, j ? "  " : " ");
		put_dots(b, pt.width[j]);
	}
	for (j = 0; j < UTRACE__LAT_COLS; j++) {
		utrace__ob_puts(b, pt.ncols || j ? "  " : " ");
		put_dots(b, w[j]);
	}
	utrace__ob_puts(b, "\n#\n");
	sort_tab = &pt;
	sort_key = mean;
	qsort(pt.order, pt.nrows, sizeof(*pt.order), cmp_rows);
	for (i = 0; i < pt.nrows; i++) {
		size_t k = pt.order[i];

		for (j = 0; j < pt.ncols; j++) {
			utrace__ob_puts(b, "  ");
			put_cell(b, &pt, j, pt.cell[k][j]);
		}
		for (j = 0; j < UTRACE__LAT_COLS; j++)
			utrace__ob_printf(b, "  %*s", (int)w[j], st[k][j]);
		utrace__ob_putc(b, '\n');
	}
	utrace__ob_putc(b, '\n');
	for (i = 0; i < pt.nrows; i++) {
		size_t k = pt.order[i];

		utrace__ob_puts(b, "@latency_ns");
		for (j = 0; j < pt.ncols; j++)
			utrace__ob_printf(b, "%s%s", j ? ", " : "[", pt.cell[k][j]);
		utrace__ob_puts(b, pt.ncols ? "]:\n" : ":\n");
		print_hist(b, l->groups.rows[k].lat->v, l->groups.rows[k].lat->nr);
		utrace__ob_putc(b, '\n');
	}
	utrace__ob_putc(b, '\n');
out:
	sort_key = NULL;
	free(st);
	free(mean);
	ptab_free(&pt);
}

int utrace__report_print(struct utrace__report *r, FILE *out)
{
	struct utrace__obuf b = { 0 };
	size_t i;
	int ret = 0;

	utrace__ob_printf(&b, "#\n# Total Lost Samples: %" PRIu64 "%s\n#\n", r->lost,
			  r->lost_unknown ? " (and more, not counted)" : "");
	if (r->combined && r->all.total) {
		struct utrace__obuf names = { 0 };
		char *what = NULL;
		size_t n = 0;

		for (i = 0; i < r->nr_evs; i++)
			if (r->evs[i]->tab.total && r->evs[i]->shown)
				utrace__ob_printf(&names, "%s%s", n++ ? ", " : "",
						  r->evs[i]->label);
		utrace__ob_putc(&names, 0);
		if (names.nomem || asprintf(&what, "%s '%s'", n > 1 ? "events" : "event",
					    names.p) < 0) {
			r->nomem = true;
		} else {
			print_block(r, &b, what, &r->all, NULL);
			free(what);
		}
		free(names.p);
	} else if (!r->combined) {
		for (i = 0; i < r->nr_evs; i++) {
			char *what = NULL;

			if (!r->evs[i]->tab.total || !r->evs[i]->shown)
				continue;
			if (asprintf(&what, "event '%s'", r->evs[i]->label) < 0) {
				r->nomem = true;
				break;
			}
			print_block(r, &b, what, &r->evs[i]->tab, r->evs[i]);
			free(what);
		}
	}
	for (i = 0; i < r->o->nr_lat; i++)
		print_latency(r, &b, i);
	if (b.nomem || r->nomem)
		ret = -ENOMEM;
	else if (b.len && fwrite(b.p, 1, b.len, out) != b.len)
		ret = -EIO;
	free(b.p);
	return ret;
}

int utrace__report_rows(struct utrace__report *r, long lat, struct utrace__report_rows *out)
{
	const struct table *t = lat < 0 ? &r->all : &r->lat[lat].groups;
	struct ptab pt;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (ptab_build(r, &pt, t, NULL, lat) < 0) {
		ptab_free(&pt);
		return -ENOMEM;
	}
	if (lat >= 0) {
		out->lat = calloc(pt.nrows + 1, sizeof(*out->lat));
		out->nr_lat = calloc(pt.nrows + 1, sizeof(*out->nr_lat));
		if (!out->lat || !out->nr_lat) {
			free(out->lat);
			free(out->nr_lat);
			ptab_free(&pt);
			return -ENOMEM;
		}
		for (i = 0; i < pt.nrows; i++) {
			struct lvals *lv = t->rows[i].lat;

			out->lat[i] = lv->v;
			out->nr_lat[i] = lv->nr;
			memset(lv, 0, sizeof(*lv));     /* the caller's now */
		}
	}
	out->ncols = pt.ncols;
	out->nrows = pt.nrows;
	out->head = pt.head;
	out->right = pt.right;
	out->cell = pt.cell;
	out->count = pt.count;
	pt.head = NULL;
	pt.right = NULL;
	pt.cell = NULL;
	pt.count = NULL;
	pt.nrows = 0;
	pt.ncols = 0;
	ptab_free(&pt);
	return 0;
}

void utrace__report_rows_free(struct utrace__report_rows *rows)
{
	size_t i;

	for (i = 0; rows->lat && i < rows->nrows; i++)
		free(rows->lat[i]);
	free_text(rows->cell, rows->nrows, rows->head, rows->ncols);
	free(rows->right);
	free(rows->count);
	free(rows->lat);
	free(rows->nr_lat);
	memset(rows, 0, sizeof(*rows));
}

uint64_t utrace__report_lost(const struct utrace__report *r, bool *unknown)
{
	*unknown = r->lost_unknown;
	return r->lost;
}

uint64_t utrace__report_problems(const struct utrace__report *r, const char **last)
{
	*last = r->problem;
	return r->fmts.pr.count;
}

void utrace__report_lat_counts(const struct utrace__report *r, size_t li, uint64_t *pairs,
			       uint64_t *unmatched_begin, uint64_t *unmatched_end)
{
	const struct lat *l = &r->lat[li];

	*pairs = l->pairs;
	*unmatched_begin = l->unmatched_begin + l->np;
	*unmatched_end = l->unmatched_end;
}

int utrace__report_carry_in(struct utrace__report *r, size_t li, const struct utrace__rpend *p,
			    size_t n)
{
	struct lat *l = &r->lat[li];
	size_t k, i;

	for (k = 0; k < n; k++) {
		const struct utrace__rpend *b = &p[k];

		if ((l->np + 1) * 2 > l->nslots && lat_rehash(l) < 0)
			return -ENOMEM;
		if (lat_find(l, b->id, b->id_len, b->hash, b->pid, b->idv, &i) >= 0)
			continue;       /* never: one report's begins differ */
		if (b->id_len && grow_bytes(&l->keys, &l->keys_cap, l->keys_len + b->id_len) < 0)
			return -ENOMEM;
		l->p[i] = (struct pending){ .hash = b->hash, .time = b->time, .idv = b->idv,
					    .key_off = (uint32_t)l->keys_len,
					    .id_len = b->id_len, .pid = b->pid, .carry = k + 1 };
		if (b->id_len)
			memcpy(l->keys + l->keys_len, b->id, b->id_len);
		l->keys_len += b->id_len;
		l->np++;
		if (!l->spec->begin_field) {
			/* a nested begin's id is (tid, depth): its thread is
			 * that deep at least */
			uint32_t *depth = lat_depth(l, b->pid, (uint32_t)(b->idv >> 32));

			if (!depth)
				return -ENOMEM;
			if (*depth < (uint32_t)b->idv)
				*depth = (uint32_t)b->idv;
		}
	}
	return 0;
}

/* A waiting begin of this report: its cells of the fields it has. */
static int pend_cells(struct utrace__report *r, const struct pending *pd, char **cells)
{
	const unsigned char *bk = r->o->nr_keys ? r->all.keys + r->all.rows[pd->crow].key_off
					       : NULL;
	size_t i, c = 0;

	for (i = 0; i < r->o->nr_keys; i++) {
		const struct utrace__rkey *k = &r->o->keys[i];
		const unsigned char *bf = bk;

		bk = skip_key(k, bk);
		if (k->kind == UTRACE__RKEY_EVENT)
			continue;
		if (k->kind == UTRACE__RKEY_FIELD && pd->ev->kf[i].f) {
			cells[c] = field_text(r, pd->ev, &pd->ev->kf[i], bf, k->raw, &pd->ref);
			if (!cells[c])
				return -ENOMEM;
		}
		c++;
	}
	return 0;
}

int utrace__report_carry_out(struct utrace__report *r, size_t li, struct utrace__rcarry *out)
{
	struct lat *l = &r->lat[li];
	bool *shown = calloc(r->o->nr_keys + 1, sizeof(*shown));
	size_t i, n = 0;

	memset(out, 0, sizeof(*out));
	if (!shown)
		return -ENOMEM;
	for (i = 0; i < r->o->nr_keys; i++) {
		shown[i] = true;
		if (r->o->keys[i].kind != UTRACE__RKEY_EVENT)
			out->ncols++;
	}
	out->replaced = l->unmatched_begin;
	out->pend = calloc(l->np + 1, sizeof(*out->pend));
	out->match = calloc(l->ncm + 1, sizeof(*out->match));
	if (!out->pend || !out->match)
		goto nomem;
	for (i = 0; i < l->nslots; i++) {
		const struct pending *pd = &l->p[i];
		struct utrace__rpend *b = &out->pend[n];

		if (!pd->hash)
			continue;
		*b = (struct utrace__rpend){ .hash = pd->hash, .time = pd->time, .idv = pd->idv,
					     .pid = pd->pid, .from = pd->carry };
		out->npend = ++n;
		if (pd->carry)
			continue;
		b->id_len = pd->id_len;
		b->cells = calloc(out->ncols + 1, sizeof(*b->cells));
		if (!b->cells || (pd->id_len && !(b->id = malloc(pd->id_len))) ||
		    pend_cells(r, pd, b->cells) < 0)
			goto nomem;
		if (pd->id_len)
			memcpy(b->id, l->keys + pd->key_off, pd->id_len);
	}
	for (i = 0; i < l->ncm; i++) {
		const struct cmatch *m = &l->cm[i];
		struct table t = { .keys = l->cm_keys };
		struct row row = { .key_off = m->key_off, .key_len = m->key_len,
				   .ref = { m->ref, m->ref } };
		struct utrace__rmatch *o = &out->match[i];

		o->from = m->carry - 1;
		o->d = m->d;
		o->cells = calloc(out->ncols + 1, sizeof(*o->cells));
		out->nmatch = i + 1;
		if (!o->cells || row_cells(r, &t, &row, true, shown, o->cells) < 0)
			goto nomem;
	}
	free(shown);
	return 0;
nomem:
	free(shown);
	utrace__report_carry_free(out);
	return -ENOMEM;
}

void utrace__report_carry_free(struct utrace__rcarry *c)
{
	size_t i, j;

	for (i = 0; c->pend && i < c->npend; i++) {
		for (j = 0; c->pend[i].cells && j < c->ncols; j++)
			free(c->pend[i].cells[j]);
		free(c->pend[i].cells);
		free(c->pend[i].id);
	}
	for (i = 0; c->match && i < c->nmatch; i++) {
		for (j = 0; c->match[i].cells && j < c->ncols; j++)
			free(c->match[i].cells[j]);
		free(c->match[i].cells);
	}
	free(c->pend);
	free(c->match);
	memset(c, 0, sizeof(*c));
}

int utrace__report_file(const struct utrace__report_opts *o, struct utrace__tf *tf, FILE *out)
{
	struct utrace__tf_iter *it = NULL;
	struct utrace__report *r = NULL;
	struct utrace__tf_item item;
	const char *name = utrace__tf_name(tf);
	int e = 0, status = 0;
	size_t i;

	if (!utrace__tf_readable(tf))
		return 1;
	r = utrace__report_new(o, tf);
	if (!r) {
		utrace__say("utrace: '%s': out of memory\n", name);
		return 1;
	}
	if (utrace__tf_error(tf)) {
		utrace__problem(&r->fmts.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&r->fmts.pr, utrace__tf_nr_bad(tf) - 1);
	}
	/* -e entries that name events of the file, records or not */
	for (i = 0; o->select && utrace__tf_format(tf, i); i++)
		utrace__print_select(o->select, utrace__tf_format(tf, i)->system,
				     utrace__tf_format(tf, i)->name);
	/* counts need no order; latencies need time order */
	e = o->nr_lat ? utrace__tf_iter_new(tf, &it) : utrace__tf_iter_new_unordered(tf, &it);
	while (e >= 0 && (e = utrace__tf_iter_next(it, &item)) > 0)
		e = utrace__report_item(r, &item);
	for (i = 0; e >= 0 && i < o->nr_lat; i++)
		if (!r->lat[i].begin_seen || !r->lat[i].end_seen) {
			utrace__say("utrace: no event in '%s' matches '%s' of --latency %s\n",
				    name, r->lat[i].begin_seen ? o->lat[i].end : o->lat[i].begin,
				    o->lat[i].text);
			status = 1;
		} else if (r->lat[i].missing) {
			/* no pair could be made: said, not a table of none */
			utrace__say("utrace: '%s': %s: --latency %s pairs its events by "
				    "that field\n", name, r->lat[i].missing, o->lat[i].text);
			status = 1;
		}
	/* as utrace script: an -e entry that selects no event of the file */
	for (i = 0; e >= 0 && o->select && i < o->select->nr_ev; i++)
		if (!o->select->ev_matched[i]) {
			utrace__say("utrace: no event in '%s' matches '%s'\n", name,
				    o->select->ev_text[i]);
			status = 1;
		}
	/* perf refuses a sort key no event has; so does this, once the
	 * events of the file have been seen */
	for (i = 0; e >= 0 && r->nr_evs && i < o->nr_keys; i++) {
		const struct utrace__rkey *k = &o->keys[i];
		bool seen = false;

		if (k->kind != UTRACE__RKEY_FIELD)
			continue;
		for (size_t j = 0; j < r->nr_evs && !seen; j++)
			seen = r->evs[j]->kf && r->evs[j]->kf[i].f &&
			       (r->evs[j]->shown || o->nr_lat);
		if (seen)
			continue;
		if (k->event)
			utrace__say("utrace: no event '%s' with a field '%s' in '%s' (--sort "
				    "%s.%s)\n", k->event, k->field, name, k->event, k->field);
		else
			utrace__say("utrace: no event in '%s' has a field '%s' (--sort %s; "
				    "keys: comm, pid, tid, event, [EVENT.]FIELD[/raw])\n", name,
				    k->field, k->field);
		status = 1;
	}
	if (e >= 0 && !status)
		e = utrace__report_print(r, out);
	if (e == -ENOMEM) {
		utrace__say("utrace: '%s': out of memory\n", name);
		status = 1;
	} else if (e == -EIO || fflush(out) != 0 || ferror(out)) {
		utrace__say("utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	if (utrace__tf_cut(tf, NULL) && utrace__tf_warning(tf))
		utrace__say("utrace: %s: reported the events before it\n",
			    utrace__tf_warning(tf));
	utrace__problems_end(&r->fmts.pr, name, "the records or events concerned were left out");
	if (r->fmts.pr.count)
		status = 1;
	utrace__tf_iter_free(it);
	utrace__report_free(r);
	return status;
}
