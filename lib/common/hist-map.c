/* SPDX-License-Identifier: MIT */
/*
 * Hist triggers (hist.h), the table: the kernel's tracing_map.
 *
 * THE TABLE
 *
 * As tracing_map: 2^bits entries in a pool, and an open-addressing array
 * of 2^(bits+1) slots of (hash, entry).  A writer hashes its key, probes
 * from hash >> shift, and claims an empty slot by a compare-and-swap of
 * its hash word from 0; the winner takes the next entry of the pool
 * (an atomic increment), copies the key in and publishes the entry with
 * a release store.  A writer that finds its hash in a slot whose entry is
 * not published yet waits for it (a few loads: the winner is between two
 * stores).  The pool running dry makes a drop: a new key then takes no
 * slot (checked before the compare-and-swap), so that at most half the
 * slots, plus one per writer that lost the race for the last entry, are
 * ever taken and a probe ends at an empty one soon.  Sums are relaxed
 * atomic additions.  Nothing is ever removed, except by clear, which needs the
 * writers stopped.
 *
 * What a writer changes in several words at once, the hist file's reader
 * (another thread: the agent's) must not see half done: an entry's
 * onmax()/onchange() value with the fields save() kept, and the table's
 * last .snapshot() value with its entry.  Each has a sequence count (a
 * seqlock): a writer takes it odd with a compare-and-swap, which keeps
 * the other writers out, stores the words and makes it even again; the
 * reader copies the words and tries again while the count was odd or
 * changed.  Every word is an atomic, so that there is no data race for the
 * reader to lose to, stored with release and loaded with acquire: a reader
 * that sees one word of a writer sees the count that writer made odd
 * (atomic_thread_fence() would do it with relaxed words, but
 * ThreadSanitizer does not support fences; on x86 both are plain moves).  Only
 * a new maximum (or a change) takes the count: the usual event reads the
 * value and leaves.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hist-internal.h"

/* ------------------------------------------------------------ the table */

/* The entry of a slot taken by a writer that then found no entry left. */
struct elt utrace__hist_dead_elt;

static struct elt *elt_at(const struct utrace__hist_map *m, uint32_t i)
{
	return (struct elt *)(m->pool + (size_t)i * m->elt_size);
}

struct utrace__hist_map *utrace__hist_map_new(const struct utrace__hist *h)
{
	struct utrace__hist_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->h = h;
	m->max_elts = 1u << h->bits;
	m->nr_slots = 2u << h->bits;
	m->elt_size = (sizeof(struct elt) + h->key_size + 7) & ~(size_t)7;
	m->elt_size += h->save_size + 2 * (size_t)h->vstr_size;
	m->pool = calloc(m->max_elts, m->elt_size);
	m->slots = calloc(m->nr_slots, sizeof(*m->slots));
	if (!m->pool || !m->slots) {
		utrace__hist_map_free(m);
		return NULL;
	}
	return m;
}

void utrace__hist_map_free(struct utrace__hist_map *m)
{
	if (!m)
		return;
	free(m->pool);
	free(m->slots);
	free(m);
}

void utrace__hist_map_clear(struct utrace__hist_map *m)
{
	memset(m->pool, 0, (size_t)m->max_elts * m->elt_size);
	memset(m->slots, 0, (size_t)m->nr_slots * sizeof(*m->slots));
	atomic_store(&m->next_elt, 0);
	atomic_store(&m->hits, 0);
	atomic_store(&m->drops, 0);
	atomic_store(&m->snap_seq, 0);
	atomic_store(&m->snap_val, 0);
	atomic_store(&m->snap_elt, NULL);
}

/* The seqlock of THE TABLE (above).  A writer finding another inside
 * spins, then yields (the other may be preempted), and gives up after
 * SEQ_WRITE_TRIES: the one inside is stopped (this thread, interrupted by
 * a signal whose handler's event is here), as in map_insert(). */
#define SEQ_SPINS 64
#define SEQ_WRITE_TRIES 4096

static bool seq_write_begin(_Atomic uint32_t *seq, uint32_t *s)
{
	uint32_t i, v;

	for (i = 0; i < SEQ_WRITE_TRIES; i++) {
		v = atomic_load_explicit(seq, memory_order_relaxed);
		if (!(v & 1) && atomic_compare_exchange_weak_explicit(seq, &v, v + 1,
								      memory_order_acquire,
								      memory_order_relaxed)) {
			*s = v + 1;
			return true;
		}
		if (i >= SEQ_SPINS)
			sched_yield();
	}
	return false;
}

static void seq_write_end(_Atomic uint32_t *seq, uint32_t s)
{
	atomic_store_explicit(seq, s + 1, memory_order_release);
}

uint32_t utrace__hist_seq_read_begin(const _Atomic uint32_t *seq)
{
	return atomic_load_explicit(seq, memory_order_acquire);
}

/* After the words are copied: true when they must be copied again (a
 * writer was in, or came).  The reader spins, yields, then sleeps 100 us
 * a try: a writer preempted inside, on a loaded machine, gets the time to
 * finish.  One stopped inside for good (in a debugger) costs the reader
 * about a second, then it keeps what it has. */
#define SEQ_READ_TRIES (SEQ_SPINS + 10000)

bool utrace__hist_seq_read_retry(const _Atomic uint32_t *seq, uint32_t s, unsigned int *tries)
{
	if (!(s & 1) && atomic_load_explicit(seq, memory_order_acquire) == s)
		return false;
	if (++*tries >= SEQ_READ_TRIES)
		return false;
	if (*tries > SEQ_SPINS) {
		struct timespec d = { 0, 100 * 1000 };

		nanosleep(&d, NULL);
	} else if (*tries > 16) {
		sched_yield();
	}
	return true;
}

/* An entry's save() area: words (every part of it is a multiple of 8). */
_Atomic uint64_t *utrace__hist_save_area(const struct utrace__hist *h, const struct elt *e)
{
	return (_Atomic uint64_t *)(uintptr_t)(e->key + ((h->key_size + 7) & ~7u));
}

/* An entry's string variables: two copies (words, each variable's at its
 * str_off), so that a reader never waits for a writer.  vstr_seq counts
 * writes by two (odd while one is inside); write number k (entered at
 * vstr_seq 2k - 1) fills copy k & 1, and the copy a reader takes at seq s
 * is (s >> 1) & 1: the last whole one.  Only the second writer after it
 * touches that copy again, so a reader is good unless seq went past
 * (s & ~1) + 2 while it copied: a writer preempted inside (a loaded
 * machine, a signal handler's event interrupting it) no longer tears what
 * readers see, as a single copy did. */
static _Atomic uint64_t *vstr_area(const struct utrace__hist *h, const struct elt *e,
				   uint32_t seq)
{
	return utrace__hist_save_area(h, e) + h->save_size / 8 + ((seq >> 1) & 1) * (h->vstr_size / 8);
}

/* The bytes save() keeps of a string field, its NUL included. */
uint32_t utrace__hist_save_cap(const struct utrace__hist_field *f)
{
	return f->size > UTRACE__HIST_STR_MAX - 1 ? UTRACE__HIST_STR_MAX : f->size + 1;
}

static uint32_t key_hash(const unsigned char *k, uint32_t n)
{
	uint32_t h = 2166136261u, i;

	for (i = 0; i < n; i++)
		h = (h ^ k[i]) * 16777619u;
	h ^= h >> 15;
	h *= 0x2c1b3c6dU;
	h ^= h >> 12;
	return h ? h : 1;
}

/* The entry of key, made if new; NULL when the pool is used up. */
static struct elt *map_insert(struct utrace__hist_map *m, const unsigned char *key,
			      const struct utrace__hist_ctx *ctx, bool create)
{
	uint32_t ks = m->h->key_size, h = key_hash(key, ks), i, n, idx;

	idx = h & (m->nr_slots - 1);
	for (n = 0; n < m->nr_slots; n++, idx = (idx + 1) & (m->nr_slots - 1)) {
		struct slot *s = &m->slots[idx];
		uint32_t sh = atomic_load_explicit(&s->hash, memory_order_acquire);
		struct elt *e;

		if (sh == h) {
			/* the winner is between its two stores: wait for it,
			 * or for it to give the slot back */
			for (i = 0; !(e = atomic_load_explicit(&s->elt, memory_order_acquire));
			     i++)
				if (i == 1u << 20)
					/* the winner is stopped (this thread,
					 * interrupted by a signal whose
					 * handler's event is here): a drop */
					return NULL;
			if (e != &utrace__hist_dead_elt && !memcmp(e->key, key, ks))
				return e;
			continue;
		}
		if (sh)
			continue;
		if (!create)
			return NULL;
		/* a new key, and no entry left: no slot is taken for it, so
		 * that probes stay short */
		if (atomic_load_explicit(&m->next_elt, memory_order_relaxed) >= m->max_elts)
			return NULL;
		if (!atomic_compare_exchange_strong_explicit(&s->hash, &sh, h,
							     memory_order_acq_rel,
							     memory_order_acquire)) {
			if (sh != h)
				continue;
			n--;                      /* look at this slot again */
			idx = (idx - 1) & (m->nr_slots - 1);
			continue;
		}
		i = atomic_fetch_add_explicit(&m->next_elt, 1, memory_order_relaxed);
		if (i >= m->max_elts) {
			/* lost the race for the last entry: the slot stays
			 * taken (freeing it could end a later probe before a
			 * key placed after it) */
			atomic_store_explicit(&s->elt, &utrace__hist_dead_elt, memory_order_release);
			return NULL;
		}
		e = elt_at(m, i);
		memcpy(e->key, key, ks);
		e->owner = ctx->owner;
		if (m->h->execname)
			snprintf(e->comm, sizeof(e->comm), "%s", ctx->comm ? ctx->comm : "");
		atomic_store_explicit(&s->elt, e, memory_order_release);
		return e;
	}
	return NULL;
}

uint64_t utrace__hist_read_num(const unsigned char *p, uint32_t size, bool is_signed)
{
	uint64_t v = 0;

	memcpy(&v, p, size);     /* little-endian */
	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	return v;
}

/* A field's number for an event (the kernel's hist_fn_call()). */
static uint64_t field_value(const struct utrace__hist *h, const struct utrace__hist_field *f,
			    const unsigned char *rec, const struct utrace__hist_ctx *ctx)
{
	uint64_t v;

	switch (f->src) {
	case UTRACE__HS_COUNTER:
		return 1;
	case UTRACE__HS_NUM:
		v = utrace__hist_read_num(rec + f->offset, f->size, f->is_signed);
		break;
	case UTRACE__HS_TIMESTAMP:
		v = h->ts_usecs ? (ctx->time + 500) / 1000 : ctx->time;
		break;
	case UTRACE__HS_CPU:
		v = ctx->cpu;
		break;
	default:
		return 0;
	}
	if (f->flags & UTRACE__HF_LOG2)
		v = v <= 1 ? 0 : (uint64_t)(64 - __builtin_clzll(v - 1));
	else if (f->flags & UTRACE__HF_BUCKET)
		v = v / f->buckets * f->buckets;
	return v;
}

/* A string field's bytes in the record (not NUL-terminated); false when
 * they would be outside it. */
static bool field_str(const struct utrace__hist_field *f, const unsigned char *r, uint32_t size,
		      const unsigned char **s, uint32_t *n)
{
	uint32_t loc;

	if (f->src == UTRACE__HS_STR) {
		*s = r + f->offset;
		*n = f->size;
		return true;
	}
	loc = (uint32_t)utrace__hist_read_num(r + f->offset, 4, false);
	*s = r + (loc & 0xffff);
	*n = loc >> 16;
	return (loc & 0xffff) + (uint64_t)*n <= size;
}

/* A string field copied NUL-terminated into out[cap]. */
static char *copy_str(const struct utrace__hist_field *f, const unsigned char *r, uint32_t size,
		      char *out, uint32_t cap)
{
	const unsigned char *s;
	uint32_t n, j;

	if (!field_str(f, r, size, &s, &n))
		n = 0;
	for (j = 0; j < n && j < cap - 1 && s[j]; j++)
		out[j] = (char)s[j];
	out[j] = 0;
	return out;
}

/* The record's key; false when it is no hit (filtered, too short). */
static bool make_key(const struct utrace__hist *h, const unsigned char *r, uint32_t size,
		     const struct utrace__hist_ctx *ctx, unsigned char *key)
{
	struct utrace__filter_ctx fc = { ctx->cpu, ctx->comm };
	unsigned int i;

	if (size < h->min_size || !utrace__filter_match(h->filter, r, size, &fc))
		return false;
	memset(key, 0, h->key_size);
	for (i = 0; i < h->nr_keys; i++) {
		const struct utrace__hist_field *k = &h->keys[i];
		const unsigned char *s = NULL;
		uint32_t n = 0, j;

		if (k->src == UTRACE__HS_STACK) {
			n = ctx->nr_stack < UTRACE__HIST_STACK_DEPTH ? ctx->nr_stack
								     : UTRACE__HIST_STACK_DEPTH;
			if (ctx->stack && n)
				memcpy(key + k->key_offset, ctx->stack, 8 * n);
			continue;
		}
		if (k->src == UTRACE__HS_STR || k->src == UTRACE__HS_DYNSTR) {
			if (!field_str(k, r, size, &s, &n))
				return false;     /* a string outside the record */
		} else {
			uint64_t v = field_value(h, k, r, ctx);

			memcpy(key + k->key_offset, &v, 8);
			continue;
		}
		if (n > k->key_size - 1)
			n = k->key_size - 1;
		for (j = 0; j < n && s[j]; j++)       /* strncpy() */
			key[k->key_offset + j] = s[j];
	}
	return true;
}

bool utrace__hist_add(struct utrace__hist_map *m, const struct utrace__hist *h, const void *rec,
		      uint32_t size, const struct utrace__hist_ctx *ctx)
{
	const unsigned char *r = rec;
	unsigned char key[KEY_SIZE_MAX];
	struct elt *e;
	unsigned int i;

	if (!h)
		h = m->h;
	if (!make_key(h, r, size, ctx, key))
		return false;
	atomic_fetch_add_explicit(&m->hits, 1, memory_order_relaxed);
	e = map_insert(m, key, ctx, true);
	if (!e) {
		atomic_fetch_add_explicit(&m->drops, 1, memory_order_relaxed);
		return true;
	}
	for (i = 0; i < h->nr_vals; i++)
		atomic_fetch_add_explicit(&e->sums[i], field_value(h, &h->vals[i], r, ctx),
					  memory_order_relaxed);
	return true;
}

static uint64_t operand_value(const struct utrace__hist *h, const struct utrace__hist_operand *o,
			      const unsigned char *r, const struct utrace__hist_ctx *ctx,
			      const uint64_t *refv, const uint64_t *own)
{
	if (o->ref >= 0)
		return refv[o->ref];
	if (o->ref == UTRACE__HO_OWN)
		return own[o->var];
	if (o->ref == UTRACE__HO_CONST)
		return o->constant;
	return field_value(h, &o->f, r, ctx);
}

/* A variable's expression for this record (the kernel's hist_fn_call()
 * down its tree: 3 operators at most, so a few levels). */
static uint64_t node_value(const struct utrace__hist *h, const struct utrace__hist_var *v,
			   unsigned int k, const unsigned char *r,
			   const struct utrace__hist_ctx *ctx, const uint64_t *refv,
			   const uint64_t *own)
{
	const struct utrace__hist_node *n = &v->n[k];
	uint64_t a;

	if (!n->op)
		return operand_value(h, &n->o, r, ctx, refv, own);
	a = node_value(h, v, n->a, r, ctx, refv, own);
	if (n->op == 'u')
		return (uint64_t)-(int64_t)a;
	return utrace__hist_fold(n, a, node_value(h, v, n->b, r, ctx, refv, own));
}

/*
 * A string operand for this record, NUL-terminated in out[cap]: a string
 * field (at most cap - 1 bytes, strscpy()), the comm of .execname,
 * another trigger's string variable (read into fire->refstr when the
 * references were resolved), or a string variable of this trigger (its
 * own operand again).
 */
static const char *operand_text(const struct utrace__hist *h, const struct utrace__hist_operand *o,
				const unsigned char *r, uint32_t size,
				const struct utrace__hist_ctx *ctx,
				const struct utrace__hist_fire *fire, char *out, uint32_t cap)
{
	const char *from = NULL;
	uint32_t j;

	if (o->ref >= 0)
		from = fire->refstr[o->ref];
	else if (o->ref == UTRACE__HO_OWN)
		return operand_text(h, &h->vars[o->var].n[0].o, r, size, ctx, fire, out, cap);
	else if (o->f.flags & UTRACE__HF_EXECNAME)
		from = ctx->comm ? ctx->comm : "";
	else
		return copy_str(&o->f, r, size, out, cap);
	for (j = 0; j + 1 < cap && from[j]; j++)
		out[j] = from[j];
	out[j] = 0;
	return out;
}

/* The string variables of an entry, written together under its vstr_seq
 * (the kernel strscpy()s each into the entry's own copy). */
static void vstr_store(const struct utrace__hist *h, struct elt *e, const unsigned char *r,
		       uint32_t size, const struct utrace__hist_ctx *ctx,
		       const struct utrace__hist_fire *fire)
{
	_Atomic uint64_t *w;
	uint64_t buf[UTRACE__HIST_STR_MAX / 8];
	uint32_t s, i, j, n;

	if (!seq_write_begin(&e->vstr_seq, &s))
		return;
	w = vstr_area(h, e, s + 1);	/* write number (s + 1) / 2 */
	for (i = 0; i < h->nr_vars; i++) {
		const struct utrace__hist_var *v = &h->vars[i];

		if (!v->is_str)
			continue;
		n = (v->str_cap + 7) / 8;
		memset(buf, 0, n * 8);
		operand_text(h, &v->n[0].o, r, size, ctx, fire, (char *)buf, v->str_cap);
		for (j = 0; j < n; j++)
			atomic_store_explicit(&w[v->str_off / 8 + j], buf[j], memory_order_release);
	}
	seq_write_end(&e->vstr_seq, s);
}

/* Another trigger's string variable v of entry e (its table's h), read
 * by a writer: the last whole copy (vstr_area() has why it stays whole),
 * taken again only when two writes came meanwhile; given up on (the copy
 * kept as it is) when writers keep coming for long. */
static void vstr_read(const struct utrace__hist *h, const struct utrace__hist_var *v,
		      const struct elt *e, char *out)
{
	const _Atomic uint64_t *w;
	uint64_t buf[UTRACE__HIST_STR_MAX / 8];
	uint32_t n = (v->str_cap + 7) / 8, s, j, tries = 0;

	do {
		s = utrace__hist_seq_read_begin(&e->vstr_seq);
		w = vstr_area(h, e, s) + v->str_off / 8;
		for (j = 0; j < n; j++)
			buf[j] = atomic_load_explicit(&w[j], memory_order_acquire);
		if (atomic_load_explicit(&e->vstr_seq, memory_order_acquire) - s <= 2 - (s & 1))
			break;
		if (++tries > SEQ_SPINS)
			sched_yield();
	} while (tries < 2 * SEQ_SPINS);
	memcpy(out, buf, n * 8);
	out[v->str_cap - 1] = 0;
}

/* check_track_val(): v is a new maximum, or a change, against old. */
static bool track_new(const struct utrace__hist_action *a, uint64_t v, uint64_t old)
{
	return a->handler == UTRACE__HA_ONMAX ? v > old : v != old;
}

/* cond_snapshot_update(): a snapshot when the value passes the check
 * against the last snapshot's too (a new maximum of the whole table); the
 * value and its entry change together (under snap_seq), as the kernel's
 * under tr->max_lock. */
static bool snap_update(struct utrace__hist_map *m, const struct utrace__hist_action *a,
			struct elt *e, uint64_t v)
{
	uint32_t s;
	bool ok;

	if (!track_new(a, v, atomic_load_explicit(&m->snap_val, memory_order_relaxed)) ||
	    !seq_write_begin(&m->snap_seq, &s))
		return false;
	ok = track_new(a, v, atomic_load_explicit(&m->snap_val, memory_order_relaxed));
	if (ok) {
		atomic_store_explicit(&m->snap_val, v, memory_order_release);
		atomic_store_explicit(&m->snap_elt, e, memory_order_release);
	}
	seq_write_end(&m->snap_seq, s);
	return ok;
}

/* An action's parameters: numbers, or the address of a string's copy. */
static void action_params(const struct utrace__hist *h, const struct utrace__hist_action *a,
			  const unsigned char *r, uint32_t size, const struct utrace__hist_ctx *ctx,
			  const uint64_t *refv, const uint64_t *own, struct utrace__hist_fire *fire,
			  unsigned int which)
{
	unsigned int i, n = 0;

	for (i = 0; i < a->nr_params; i++) {
		const struct utrace__hist_operand *o = &a->p[i];
		bool str = o->ref >= 0 ? h->refs[o->ref].is_str :
			   o->ref == UTRACE__HO_OWN ? h->vars[o->var].is_str :
			   o->ref == UTRACE__HO_FIELD &&
			   (o->f.flags & (UTRACE__HF_STRING | UTRACE__HF_EXECNAME));

		if (str)
			fire->params[which][i] =
				(uintptr_t)operand_text(h, o, r, size, ctx, fire, fire->str[which][n++],
							UTRACE__HIST_STR_MAX);
		else
			fire->params[which][i] = operand_value(h, o, r, ctx, refv, own);
	}
}

/* check_track_val(), save_track_val() for trace() and snapshot(): true
 * when v is a new maximum, or changed. */
static bool track_update(const struct utrace__hist_action *a, struct elt *e, uint64_t v)
{
	uint64_t old = atomic_load_explicit(&e->track, memory_order_relaxed);

	if (a->handler == UTRACE__HA_ONCHANGE)
		return v != old && atomic_exchange_explicit(&e->track, v, memory_order_relaxed) != v;
	while (v > old)
		if (atomic_compare_exchange_weak_explicit(&e->track, &old, v, memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	return false;
}

/* save_track_val() and save_track_data_vars() for save(): the value and
 * the fields kept with it change together, under the entry's track_seq
 * (the kernel's are not atomic with each other). */
static void track_save(const struct utrace__hist *h, const struct utrace__hist_action *a,
		       struct elt *e, uint64_t v, const unsigned char *r, uint32_t size,
		       const struct utrace__hist_ctx *ctx)
{
	_Atomic uint64_t *w = utrace__hist_save_area(h, e);
	uint64_t str[UTRACE__HIST_STR_MAX / 8];
	uint32_t s, i, j, n;

	if (!track_new(a, v, atomic_load_explicit(&e->track, memory_order_relaxed)) ||
	    !seq_write_begin(&e->track_seq, &s))
		return;
	if (!track_new(a, v, atomic_load_explicit(&e->track, memory_order_relaxed))) {
		seq_write_end(&e->track_seq, s);
		return;
	}
	atomic_store_explicit(&e->track, v, memory_order_release);
	for (i = 0; i < a->nr_params; i++) {
		const struct utrace__hist_field *f = &a->p[i].f;
		_Atomic uint64_t *to = w + a->save_off[i] / 8;

		if (!(f->flags & UTRACE__HF_STRING)) {
			atomic_store_explicit(to, field_value(h, f, r, ctx), memory_order_release);
			continue;
		}
		n = (utrace__hist_save_cap(f) + 7) / 8;
		memset(str, 0, n * 8);
		copy_str(f, r, size, (char *)str, utrace__hist_save_cap(f));
		for (j = 0; j < n; j++)
			atomic_store_explicit(&to[j], str[j], memory_order_release);
	}
	seq_write_end(&e->track_seq, s);
}

int utrace__hist_add_vars(struct utrace__hist_map *m, const struct utrace__hist *h,
			  const void *rec, uint32_t size,
			  const struct utrace__hist_ctx *ctx,
			  struct utrace__hist_map *const *ref_maps, struct utrace__hist_fire *fire)
{
	int ret = 0;
	const unsigned char *r = rec;
	unsigned char key[KEY_SIZE_MAX];
	uint64_t refv[UTRACE__HIST_REFS_MAX], own[UTRACE__HIST_VARS_MAX];
	struct elt *e;
	unsigned int i;

	if (!h)
		h = m->h;
	if (!make_key(h, r, size, ctx, key))
		return -1;
	/* resolve_var_refs(): each read once, with this key */
	for (i = 0; i < h->nr_refs; i++) {
		struct utrace__hist_map *rm = ref_maps[i];
		uint32_t bit = 1u << h->refs[i].idx, old;

		if (!rm || rm->h->key_size != h->key_size)
			return -1;
		e = map_insert(rm, key, ctx, false);
		if (!e)
			return -1;
		old = atomic_fetch_and_explicit(&e->var_set, ~bit, memory_order_acquire);
		if (!(old & bit))
			return -1;
		refv[i] = atomic_load_explicit(&e->vars[h->refs[i].idx], memory_order_relaxed);
		if (h->refs[i].is_str)
			vstr_read(rm->h, &rm->h->vars[h->refs[i].idx], e, fire->refstr[i]);
	}
	atomic_fetch_add_explicit(&m->hits, 1, memory_order_relaxed);
	e = map_insert(m, key, ctx, true);
	if (!e) {
		atomic_fetch_add_explicit(&m->drops, 1, memory_order_relaxed);
		return 0;
	}
	for (i = 0; i < h->nr_vals; i++)
		atomic_fetch_add_explicit(&e->sums[i], field_value(h, &h->vals[i], r, ctx),
					  memory_order_relaxed);
	/* hist_trigger_elt_update(): the variables, strings first (their
	 * bits are set with the others, after them) */
	if (h->vstr_size)
		vstr_store(h, e, r, size, ctx, fire);
	for (i = 0; i < h->nr_vars; i++) {
		const struct utrace__hist_var *v = &h->vars[i];
		uint64_t x = v->is_str ? 0 : node_value(h, v, 0, r, ctx, refv, own);

		own[i] = x;
		atomic_store_explicit(&e->vars[i], x, memory_order_relaxed);
		atomic_fetch_or_explicit(&e->var_set, 1u << i, memory_order_release);
	}
	if (h->action) {
		action_params(h, h->action, r, size, ctx, refv, own, fire, 0);
		ret |= 1;
	}
	if (h->track && h->track->kind == UTRACE__HA_SAVE) {
		track_save(h, h->track, e, own[h->track->track_var], r, size, ctx);
	} else if (h->track && track_update(h->track, e, own[h->track->track_var])) {
		const struct utrace__hist_action *a = h->track;

		if (a->kind == UTRACE__HA_TRACE) {
			action_params(h, a, r, size, ctx, refv, own, fire, 1);
			ret |= 2;
		}
		if (a->kind == UTRACE__HA_SNAPSHOT && snap_update(m, a, e, own[a->track_var]))
			ret |= 4;
	}
	return ret;
}

