// SPDX-License-Identifier: MIT
/*
 * Jump-label call sites: a switched-off tracepoint is one 5-byte NOP.
 *
 * Each object (program, shared library, dlopen()ed library) that calls
 * trace_<ev>() has a utrace_jump_table section: one entry per site
 * { site, target, tracepoint } (<utrace/tracepoint.h>, UTRACE__SITE).  As
 * compiled a site is 'jmp check', a block that loads the tracepoint's
 * 'enabled' word: correct without any patching.  The object's constructor
 * registers its table here; from then on each site holds
 *
 *   nopl 0x0(%rax,%rax,1)   (0f 1f 44 00 00)   while 'enabled' is 0
 *   jmp target               (e9 rel32)          while it is not
 *
 * 'enabled' stays the truth: utrace__jump_sync() brings every site to
 * what its tracepoint's word says, whoever changed it.  The rewriting is
 * the dynamic probes' patcher (lib/probe/textpatch.c): an int3 on each
 * site, membarrier(SYNC_CORE), the tails, membarrier, the first bytes,
 * membarrier: three rounds for all the sites that change, in all objects.
 * A thread that reaches a transient int3 goes on after the site, as if it
 * were off (the change is not done until the call returns).
 *
 * Where the code cannot be written (UTRACE_NO_JUMP_LABEL in the
 * environment, no /proc/self/mem write or membarrier(SYNC_CORE), a
 * refused write, valgrind), the object's sites keep their compiled 'jmp check':
 * today's load and branch, one jump further.  utrace ps shows which.
 *
 * Locking: jump_mutex covers the list of tables and all rewriting, so a
 * table removed by its object's destructor (dlclose) is never written
 * after it.  It is the innermost lock but the patcher's.  The registry's
 * changes only count themselves (utrace__jump_changed(), under its locks);
 * utrace__tp_reap(), which every change is followed by, rewrites the
 * sites of all of them at once (utrace__jump_sync()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <utrace/tracepoint.h>

#include "internal.h"
#include "jump.h"
#include "rundir.h"
#include "textpatch.h"

enum {
	SITE_COMPILED,          /* jmp check (the load and branch) */
	SITE_NOP,
	SITE_JMP,
};

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

struct table {
	struct utrace_jump_entry *start, *stop;
	unsigned int refs;
	bool fallback;          /* its sites stay as compiled */
	uint8_t *state;         /* per site: SITE_* */
	struct table *next;
};

static pthread_mutex_t jump_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct table *tables;
/* changes of an enabled word, and how many of them are in the code */
static _Atomic uint64_t changes, synced;
/* -1 not decided, 0 no rewriting in this process, 1 rewriting */
static int mode = -1;
static char why_off[160];

/* A thread at a transient int3: on after the 5 bytes (the site off). */
static uintptr_t skip_site(void *arg, ucontext_t *uc)
{
	(void)arg;
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1 + 5;
}

static const struct utrace__int3_hook skip_hook = { skip_site, NULL };

/*
 * Valgrind runs translations of the code it read first and, by default,
 * does not look for changes to code mapped from a file: a site rewritten
 * under it would go on doing what it did.  Its preload libraries tell it
 * is there.  UTRACE_NO_JUMP_LABEL=0 says the tool was told to check
 * (valgrind --smc-check=all) and keeps the rewriting.
 */
static const char *off_reason(void)
{
	const char *e = utrace__getenv("UTRACE_NO_JUMP_LABEL");
	const char *pre = getenv("LD_PRELOAD");

	if (e && *e)
		return strcmp(e, "0") ? "UTRACE_NO_JUMP_LABEL is set" : NULL;
	if (pre && strstr(pre, "vgpreload"))
		return "under valgrind (UTRACE_NO_JUMP_LABEL=0 with --smc-check=all to rewrite)";
	return NULL;
}

/* Can this process rewrite its code?  Under jump_mutex. */
static bool can_patch(void)
{
	char why[128];

	if (mode < 0) {
		const char *r = off_reason();

		if (r) {
			snprintf(why_off, sizeof(why_off), "%s", r);
			mode = 0;
		} else {
			mode = 1;
		}
	}
	if (mode == 1) {
		/* again in a fork child: its own /proc/self/mem */
		utrace__text_lock();
		if (utrace__text_init(why, sizeof(why))) {
			snprintf(why_off, sizeof(why_off), "%s", why);
			mode = 0;
		}
		utrace__text_unlock();
	}
	return mode == 1;
}

/* Does the site hold what its state says?  (Anything else: leave it.) */
static bool site_is(const struct utrace_jump_entry *e, uint8_t state)
{
	const uint8_t *b = (const uint8_t *)e->site;

	switch (state) {
	case SITE_NOP:
		return !memcmp(b, nop5, sizeof(nop5));
	case SITE_COMPILED:
	case SITE_JMP:
		return b[0] == 0xe9;
	}
	return false;
}

static void fill_poke(struct utrace__poke *p, const struct utrace_jump_entry *e,
		      uint8_t to)
{
	memset(p, 0, sizeof(*p));
	p->addr = e->site;
	p->len = 5;
	if (to == SITE_NOP) {
		memcpy(p->bytes, nop5, 5);
	} else {
		int32_t rel = (int32_t)((intptr_t)e->target - (intptr_t)(e->site + 5));

		p->bytes[0] = 0xe9;
		memcpy(p->bytes + 1, &rel, 4);
	}
}

/* A batch of rewrites, over one table or all of them. */
struct batch {
	struct utrace__poke *p;
	struct {
		struct table *t;
		size_t i;
		uint8_t to;
	} *q;
	size_t n, cap;
};

/* Add the sites of @t that differ from their tracepoint's word. */
static void collect(struct batch *b, struct table *t)
{
	size_t n = (size_t)(t->stop - t->start);

	if (t->fallback)
		return;
	for (size_t i = 0; i < n && b->n < b->cap; i++) {
		const struct utrace_jump_entry *e = &t->start[i];
		uint8_t w;

		if (!e->site || !e->tp || t->state[i] == 0xff)
			continue;
		w = __atomic_load_n(&e->tp->enabled, __ATOMIC_ACQUIRE) ? SITE_JMP : SITE_NOP;
		if (t->state[i] == w)
			continue;
		if (!site_is(e, t->state[i])) {
			t->state[i] = 0xff;     /* not ours any more: never touched */
			continue;
		}
		b->q[b->n].t = t;
		b->q[b->n].i = i;
		b->q[b->n].to = w;
		fill_poke(&b->p[b->n++], e, w);
	}
}

/* Write the batch: 0, or nothing was written. */
static int apply(struct batch *b, char *why, size_t why_len)
{
	int ret = 0;

	utrace__text_lock();
	if (b->n)
		ret = utrace__text_poke_many(b->p, b->n, &skip_hook, why, why_len);
	utrace__text_unlock();
	for (size_t k = 0; !ret && k < b->n; k++)
		b->q[k].t->state[b->q[k].i] = b->q[k].to;
	return ret;
}

static bool batch_alloc(struct batch *b, size_t cap)
{
	b->n = 0;
	b->cap = cap;
	b->p = malloc(cap * sizeof(*b->p));
	b->q = malloc(cap * sizeof(*b->q));
	if (b->p && b->q)
		return true;
	free(b->p);
	free(b->q);
	return false;
}

static void batch_free(struct batch *b)
{
	free(b->p);
	free(b->q);
}

/*
 * Every site of @t to what its tracepoint says, alone; under jump_mutex.
 * Where nothing could be written the first time, the object's sites keep
 * their load and branch for good.  (Later, a site already rewritten
 * cannot go back: it is tried again at the next change.)
 */
static void sync_table(struct table *t)
{
	size_t n = (size_t)(t->stop - t->start), i;
	struct batch b;
	char why[160];

	if (t->fallback || !n || !batch_alloc(&b, n))
		return;         /* as they were: still correct, or retried later */
	collect(&b, t);
	if (apply(&b, why, sizeof(why))) {
		for (i = 0; i < n && t->state[i] != SITE_NOP && t->state[i] != SITE_JMP; i++)
			;
		if (i == n) {
			t->fallback = true;
			snprintf(why_off, sizeof(why_off), "%s", why);
		}
	}
	batch_free(&b);
}

/* All the tables' changes in one batch (three membarrier rounds); one
 * batch per table when that fails, to find the table that cannot be
 * written. */
static void sync_all_locked(void)
{
	size_t total = 0;
	struct table *t;
	struct batch b;
	char why[160];

	for (t = tables; t; t = t->next)
		total += (size_t)(t->stop - t->start);
	if (!total || !batch_alloc(&b, total))
		return;
	for (t = tables; t; t = t->next)
		collect(&b, t);
	if (apply(&b, why, sizeof(why)))
		for (t = tables; t; t = t->next)
			sync_table(t);
	batch_free(&b);
}

void utrace__jump_changed(void)
{
	atomic_fetch_add(&changes, 1);
}

/*
 * On return, every change counted before the call is in the code: a
 * caller that finds another thread rewriting waits for it, and does the
 * changes that one had not seen.
 */
void utrace__jump_sync(void)
{
	uint64_t g = atomic_load(&changes);

	if (atomic_load(&synced) >= g)
		return;
	pthread_mutex_lock(&jump_mutex);
	while (atomic_load(&synced) < (g = atomic_load(&changes))) {
		if (can_patch())
			sync_all_locked();
		atomic_store(&synced, g);
	}
	pthread_mutex_unlock(&jump_mutex);
}

void utrace_tp_register_sites(struct utrace_jump_entry *start,
			      struct utrace_jump_entry *stop)
{
	struct table *t;
	size_t n;

	if (!start || stop <= start)
		return;
	n = (size_t)(stop - start);
	pthread_mutex_lock(&jump_mutex);
	for (t = tables; t; t = t->next) {
		if (t->start == start) {
			t->refs++;
			goto out;
		}
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->state = calloc(n, 1);
	if (!t || !t->state) {
		free(t);
		goto out;       /* its sites keep the load and branch */
	}
	t->start = start;
	t->stop = stop;
	t->refs = 1;
	t->fallback = !can_patch();
	t->next = tables;
	tables = t;
	sync_table(t);
out:
	pthread_mutex_unlock(&jump_mutex);
}

void utrace_tp_unregister_sites(struct utrace_jump_entry *start,
				struct utrace_jump_entry *stop)
{
	struct table **pt, *t;

	(void)stop;
	pthread_mutex_lock(&jump_mutex);
	for (pt = &tables; (t = *pt); pt = &t->next) {
		if (t->start != start)
			continue;
		if (--t->refs == 0) {
			/* about to be unmapped: never written again */
			*pt = t->next;
			free(t->state);
			free(t);
		}
		break;
	}
	pthread_mutex_unlock(&jump_mutex);
}

void utrace__jump_stats(uint32_t *nop_sites, uint32_t *branch_sites)
{
	uint32_t nop = 0, br = 0;

	pthread_mutex_lock(&jump_mutex);
	for (struct table *t = tables; t; t = t->next) {
		size_t n = (size_t)(t->stop - t->start);

		for (size_t i = 0; i < n; i++) {
			if (!t->fallback && (t->state[i] == SITE_NOP || t->state[i] == SITE_JMP))
				nop++;
			else
				br++;
		}
	}
	pthread_mutex_unlock(&jump_mutex);
	*nop_sites = nop;
	*branch_sites = br;
}

void utrace__jump_before_fork(void)
{
	pthread_mutex_lock(&jump_mutex);
}

void utrace__jump_after_fork(void)
{
	pthread_mutex_unlock(&jump_mutex);
}
