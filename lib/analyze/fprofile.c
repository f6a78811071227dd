// SPDX-License-Identifier: MIT
/*
 * The function profile of `utrace report` (fprofile.h), after uftrace
 * report's default table:
 *
 *     Total time   Self time       Calls  Function
 *     ==========  ==========  ==========  ====================
 *      16.604 us    5.123 us           1  main
 *
 * ftrace:funcgraph_entry pushes { function, time, time of its children }
 * on its thread's stack; ftrace:funcgraph_exit at the same depth pops it:
 * the call's duration goes to the function's total, the duration less its
 * children's to its self time, and the duration to its parent's
 * children.  A recursive call's time counts in the total of its outermost
 * call only, as uftrace's.  Entries left open above an exit's depth (a
 * longjmp, or an exit lost) are dropped.  ftrace:function events count calls only.
 * Functions are told apart by process and address, named by the file's
 * symbols (as %ps); sorted by total time, then calls.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fprofile.h"

struct fn {
	const struct utrace__tf_process *proc;
	uint64_t addr;
	uint64_t calls, total, self;
	bool timed;
};

struct frame {
	uint64_t addr, time, children;
	bool inner;             /* the function is already on the stack below */
};

struct thr {
	const struct utrace__tf_thread *t;
	struct frame *f;
	uint32_t n, cap;
};

struct prof {
	struct fn *fns;
	size_t nr_fns, cap_fns;         /* open addressing, cap a power of 2 */
	struct thr *thr;
	size_t nr_thr;
	uint64_t events;
};

static uint64_t hash_fn(const void *proc, uint64_t addr)
{
	return ((uint64_t)(uintptr_t)proc * 0x9e3779b97f4a7c15ull) ^
	       (addr * 0xc2b2ae3d27d4eb4full);
}

static int fns_grow(struct prof *p)
{
	size_t cap = p->cap_fns ? p->cap_fns * 2 : 256;
	struct fn *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap_fns; i++) {
		struct fn *o = &p->fns[i];
		size_t j;

		if (!o->proc)
			continue;
		for (j = hash_fn(o->proc, o->addr) & (cap - 1); n[j].proc; j = (j + 1) & (cap - 1))
			;
		n[j] = *o;
	}
	free(p->fns);
	p->fns = n;
	p->cap_fns = cap;
	return 0;
}

static struct fn *fn_get(struct prof *p, const struct utrace__tf_process *proc, uint64_t addr)
{
	size_t j;

	if ((p->nr_fns + 1) * 2 > p->cap_fns && fns_grow(p) < 0)
		return NULL;
	for (j = hash_fn(proc, addr) & (p->cap_fns - 1); p->fns[j].proc;
	     j = (j + 1) & (p->cap_fns - 1))
		if (p->fns[j].proc == proc && p->fns[j].addr == addr)
			return &p->fns[j];
	p->fns[j].proc = proc;
	p->fns[j].addr = addr;
	p->nr_fns++;
	return &p->fns[j];
}

static struct thr *thr_get(struct prof *p, const struct utrace__tf_thread *t)
{
	struct thr *n;

	for (size_t i = 0; i < p->nr_thr; i++)
		if (p->thr[i].t == t)
			return &p->thr[i];
	n = realloc(p->thr, (p->nr_thr + 1) * sizeof(*n));
	if (!n)
		return NULL;
	p->thr = n;
	n = &p->thr[p->nr_thr++];
	memset(n, 0, sizeof(*n));
	n->t = t;
	return n;
}

static uint64_t rd64(const unsigned char *d, size_t off)
{
	uint64_t v;

	memcpy(&v, d + off, 8);
	return v;
}

static uint32_t rd32(const unsigned char *d, size_t off)
{
	uint32_t v;

	memcpy(&v, d + off, 4);
	return v;
}

static int item(struct prof *p, const struct utrace__tf_item *it)
{
	const struct utrace__tf_format *f = it->format;
	struct thr *t;
	struct fn *fn;
	uint32_t depth;

	if (it->kind != UTRACE__TF_EVENT || !f || strcmp(f->system, "ftrace"))
		return 0;
	if (!strcmp(f->name, "function") && it->len >= 24) {
		p->events++;
		fn = fn_get(p, it->proc, rd64(it->rec, 8));
		if (!fn)
			return -ENOMEM;
		fn->calls++;
		return 0;
	}
	if (strcmp(f->name, "funcgraph_entry") && strcmp(f->name, "funcgraph_exit"))
		return 0;
	if (it->len < (f->name[10] == 'e' && f->name[11] == 'n' ? 24u : 40u))
		return 0;
	p->events++;
	depth = rd32(it->rec, 16);
	if (depth > (1u << 20))
		return 0;
	t = thr_get(p, it->thread);
	if (!t)
		return -ENOMEM;
	if (!strcmp(f->name, "funcgraph_entry")) {
		if (depth + 1 > t->cap) {
			uint32_t cap = depth + 64;
			struct frame *n = realloc(t->f, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			t->f = n;
			t->cap = cap;
		}
		/* (an entry deeper than the stack: exits were lost) */
		for (uint32_t k = t->n; k < depth; k++)
			t->f[k] = (struct frame){ 0, 0, 0, false };
		t->f[depth] = (struct frame){ rd64(it->rec, 8), it->time, 0, false };
		for (uint32_t k = 0; k < depth; k++)
			if (t->f[k].addr == t->f[depth].addr) {
				t->f[depth].inner = true;
				break;
			}
		t->n = depth + 1;
		return 0;
	}
	if (depth >= t->n || t->f[depth].addr != rd64(it->rec, 8)) {
		t->n = depth < t->n ? depth : t->n;
		return 0;               /* its entry is not in the file */
	}
	{
		struct frame *fr = &t->f[depth];
		uint64_t d = it->time >= fr->time ? it->time - fr->time : 0;

		fn = fn_get(p, it->proc, fr->addr);
		if (!fn)
			return -ENOMEM;
		fn->calls++;
		fn->timed = true;
		if (!fr->inner)
			fn->total += d;         /* (a recursion's time once) */
		fn->self += d >= fr->children ? d - fr->children : 0;
		if (depth)
			t->f[depth - 1].children += d;
		t->n = depth;
	}
	return 0;
}

static int by_total(const void *a, const void *b)
{
	const struct fn *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void put_time(FILE *out, uint64_t ns, bool timed)
{
	if (!timed)
		fprintf(out, "  %10s", "-");
	else if (ns < 1000000)
		fprintf(out, "  %7.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		fprintf(out, "  %7.3f ms", (double)ns / 1e6);
	else
		fprintf(out, "  %7.3f  s", (double)ns / 1e9);
}

int utrace__fprofile_file(struct utrace__tf *tf, FILE *out)
{
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item x;
	struct prof p = { 0 };
	struct fn *v = NULL;
	const struct utrace__tf_format *f;
	size_t n = 0;
	bool any = false;
	int r;

	/* no function tracer format: no pass over the events (report's
	 * default table is read next) */
	for (size_t i = 0; !any && (f = utrace__tf_format(tf, i)); i++)
		any = !strcmp(f->system, "ftrace") &&
		      (!strcmp(f->name, "function") || !strcmp(f->name, "funcgraph_entry") ||
		       !strcmp(f->name, "funcgraph_exit"));
	if (!any)
		return 0;
	r = utrace__tf_iter_new(tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &x)) > 0)
		r = item(&p, &x);
	utrace__tf_iter_free(it);
	if (r < 0 && r != -ENOMEM)
		r = 0;          /* a damaged file: what was read (script says why) */
	if (r < 0)
		goto out;
	r = p.events ? 1 : 0;
	if (!r)
		goto out;
	v = malloc((p.nr_fns ? p.nr_fns : 1) * sizeof(*v));
	if (!v) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p.cap_fns; i++)
		if (p.fns[i].proc)
			v[n++] = p.fns[i];
	qsort(v, n, sizeof(*v), by_total);
	fprintf(out, "  Total time   Self time       Calls  Function\n"
		"  ==========  ==========  ==========  ====================\n");
	for (size_t i = 0; i < n; i++) {
		const char *name = NULL;
		uint64_t start = 0, size = 0;

		put_time(out, v[i].total, v[i].timed);
		put_time(out, v[i].self, v[i].timed);
		fprintf(out, "  %10" PRIu64 "  ", v[i].calls);
		if (utrace__tf_sym_lookup(NULL, v[i].proc, v[i].addr, &name, &start, &size) == 0 &&
		    name)
			fprintf(out, "%s\n", name);
		else
			fprintf(out, "0x%" PRIx64 "\n", v[i].addr);
	}
out:
	free(v);
	for (size_t i = 0; i < p.nr_thr; i++)
		free(p.thr[i].f);
	free(p.thr);
	free(p.fns);
	return r;
}
