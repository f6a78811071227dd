/* SPDX-License-Identifier: MIT */
/*
 * The pool's table of TSC calibration points (pool.h).
 *
 * Writers store raw TSC ticks; readers turn them into CLOCK_MONOTONIC ns
 * with the points of the event's own pool (lib/reader/tsc-time.c).  An
 * event is timed with the points at or before it, plus the second point
 * for the events before it, and a point once written never changes: so
 * every reader that has the points (utrace show, the mount, a recording
 * of the process, its trace.dat export) gives an event the same time, and
 * a later point never moves an earlier event.
 *
 * Anyone who maps the pool may add the point that is due: the process's
 * agent on a timer, readers before they read.  A point goes into the
 * first empty entry with one 16-byte compare-and-swap, {0, 0} to {tsc,
 * ns}, and only if it was taken after the entry before it was seen: two
 * racing writers cannot both win, and nobody killed half-way leaves half
 * a point behind.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "pool.h"

#define MS 1000000ull
#define SEC 1000000000ull

/* The pool's age at which point k (k >= 1) is due. */
static uint64_t due_age(uint32_t k)
{
	if (k == 1)
		return 20 * MS;
	if (k == 2)
		return 100 * MS;
	if (k == 3)
		return 300 * MS;
	/* k = 4: 1 s, then a second each to 600 s (k = 603) */
	if (k <= 603)
		return (uint64_t)(k - 3) * SEC;
	/* then every 10 s to 2 h (k = 1263) */
	if (k <= 1263)
		return 600 * SEC + (uint64_t)(k - 603) * 10 * SEC;
	/* then every 10 minutes: the 4096 points last 19 days; after
	 * that, the last rate goes on */
	return 7200 * SEC + (uint64_t)(k - 1263) * 600 * SEC;
}

/* One 16-byte compare-and-swap of an empty entry to 'v'. */
static bool calib_put(struct utrace_calib_point *e, const struct utrace_calib_point *v)
{
	uint64_t lo = 0, hi = 0;
	bool ok;

	__asm__ __volatile__("lock cmpxchg16b %1"
			     : "=@ccz"(ok), "+m"(*e), "+a"(lo), "+d"(hi)
			     : "b"(v->tsc), "c"(v->ns)
			     : "memory");
	return ok;
}

/* Entry i, or {0, 0} while it is empty.  The ns half is read first: once
 * it is set, the whole entry is (one CAS wrote both). */
static struct utrace_calib_point calib_get(const struct utrace_calib_point *e)
{
	struct utrace_calib_point v;

	v.ns = __atomic_load_n(&e->ns, __ATOMIC_ACQUIRE);
	v.tsc = v.ns ? __atomic_load_n(&e->tsc, __ATOMIC_RELAXED) : 0;
	return v;
}

static struct utrace_calib_point *table(struct utrace_pool *p)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);

	if (!g || p->clock != UTRACE_CLOCK_TSC)
		return NULL;
	return g->calib;
}

/* How many points, and the last ('last' is the first when there is one).
 * A point not after the one before it (scribbled) ends the table. */
static uint32_t calib_count(const struct utrace_calib_point *t,
			    struct utrace_calib_point *first, struct utrace_calib_point *last)
{
	uint32_t n;

	*first = calib_get(&t[0]);
	*last = *first;
	if (!first->ns)
		return 0;
	for (n = 1; n < UTRACE_POOL_CALIB; n++) {
		struct utrace_calib_point v = calib_get(&t[n]);

		if (!v.ns || v.ns <= last->ns || v.tsc <= last->tsc)
			break;
		*last = v;
	}
	return n;
}

uint32_t utrace__pool_calib_points(struct utrace_pool *p, uint32_t from,
				   struct utrace_calib_point *pt, uint32_t max)
{
	struct utrace_calib_point *t = table(p), prev = { 0, 0 };
	uint32_t i, n = 0;

	if (!t)
		return 0;
	for (i = 0; i < UTRACE_POOL_CALIB && n < max; i++) {
		struct utrace_calib_point v = calib_get(&t[i]);

		if (!v.ns || (i && (v.ns <= prev.ns || v.tsc <= prev.tsc)))
			break;
		prev = v;
		if (i >= from)
			pt[n++] = v;
	}
	return n;
}

uint64_t utrace__pool_calib_due(struct utrace_pool *p)
{
	struct utrace_calib_point *t = table(p), first, last;
	uint64_t now, at;
	uint32_t n;

	if (!t)
		return UINT64_MAX;
	n = calib_count(t, &first, &last);
	if (!n || n >= UTRACE_POOL_CALIB)
		return UINT64_MAX;
	at = first.ns + due_age(n);
	now = utrace__mono_ns();
	return now >= at ? 0 : at - now;
}

/* Ext entry i, with 'point' 0 while it is not (yet) whole. */
static struct utrace_calib_ext ext_get(const struct utrace_calib_ext *e)
{
	struct utrace_calib_ext v = { 0 };

	v.point = __atomic_load_n(&e->point, __ATOMIC_ACQUIRE);
	if (v.point) {
		v.tsc = __atomic_load_n(&e->tsc, __ATOMIC_RELAXED);
		v.raw = __atomic_load_n(&e->raw, __ATOMIC_RELAXED);
		v.boot = __atomic_load_n(&e->boot, __ATOMIC_RELAXED);
		v.tai = __atomic_load_n(&e->tai, __ATOMIC_RELAXED);
	}
	return v;
}

bool utrace__pool_calib_tick(struct utrace_pool *p)
{
	struct utrace_calib_point *t = table(p), first, last, v;
	struct utrace_calib_ext *xt = t ? utrace__pool_geom(p)->calibx : NULL, x, prev;
	uint32_t n;

	if (!t)
		return false;
	n = calib_count(t, &first, &last);
	if (!n || n >= UTRACE_POOL_CALIB || utrace__mono_ns() < first.ns + due_age(n))
		return false;
	if (xt)
		prev = ext_get(&xt[n - 1]);
	utrace__calib_measure(&v, xt ? &x : NULL, xt && prev.point == last.tsc ? &prev : NULL);
	if (v.ns <= last.ns || v.tsc <= last.tsc)
		return false;
	/* Lost to another writer: it took the point, that is enough. */
	if (!calib_put(&t[n], &v))
		return false;
	if (xt) {
		/* only the winner writes the entry; 'point' says it is whole */
		__atomic_store_n(&xt[n].tsc, x.tsc, __ATOMIC_RELAXED);
		__atomic_store_n(&xt[n].raw, x.raw, __ATOMIC_RELAXED);
		__atomic_store_n(&xt[n].boot, x.boot, __ATOMIC_RELAXED);
		__atomic_store_n(&xt[n].tai, x.tai, __ATOMIC_RELAXED);
		__atomic_store_n(&xt[n].point, x.point, __ATOMIC_RELEASE);
	}
	return true;
}

uint32_t utrace__pool_calib_exts(struct utrace_pool *p, uint32_t from,
				 const struct utrace_calib_point *pt, uint32_t n,
				 struct utrace_calib_ext *x)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);
	uint32_t i, k;

	if (!table(p) || !g->calibx || from > UTRACE_POOL_CALIB ||
	    n > UTRACE_POOL_CALIB - from)
		return 0;
	for (i = 0; i < n; i++) {
		/* Its point is written and its writer is a few stores from
		 * done: a short wait, so that readers agree on the entries
		 * (a writer killed in between leaves the entry out). */
		for (k = 0; k < 100; k++) {
			x[i] = ext_get(&g->calibx[from + i]);
			if (x[i].point)
				break;
			struct timespec d = { 0, 10000 };

			nanosleep(&d, NULL);
		}
		if (x[i].point != pt[i].tsc)
			x[i] = (struct utrace_calib_ext){ 0 };
	}
	return n;
}

void utrace__pool_calib_second(struct utrace_pool *p)
{
	struct utrace_calib_point *t = table(p), first, last;
	uint64_t now, at;

	if (!t || calib_count(t, &first, &last) != 1)
		return;
	now = utrace__mono_ns();
	at = first.ns + due_age(1);
	if (now < at) {
		struct timespec d = { (time_t)((at - now) / SEC), (long)((at - now) % SEC) };

		while (nanosleep(&d, &d) < 0 && errno == EINTR)
			;
	}
	utrace__pool_calib_tick(p);
}

void utrace__pool_calib_copy(struct utrace_pool *dst, struct utrace_pool *src)
{
	struct utrace_calib_point *d = table(dst), *t = table(src);
	struct utrace_calib_ext *dx, *sx;
	uint32_t i;

	if (!d || !t)
		return;
	dx = utrace__pool_geom(dst)->calibx;
	sx = utrace__pool_geom(src)->calibx;
	for (i = 0; i < UTRACE_POOL_CALIB; i++) {
		struct utrace_calib_point v = calib_get(&t[i]);

		if (!v.ns)
			break;
		__atomic_store_n(&d[i].tsc, v.tsc, __ATOMIC_RELAXED);
		__atomic_store_n(&d[i].ns, v.ns, __ATOMIC_RELEASE);
		if (dx && sx) {
			/* the other clocks' readings of the point, when whole */
			struct utrace_calib_ext x = ext_get(&sx[i]);

			if (!x.point)
				continue;
			__atomic_store_n(&dx[i].tsc, x.tsc, __ATOMIC_RELAXED);
			__atomic_store_n(&dx[i].raw, x.raw, __ATOMIC_RELAXED);
			__atomic_store_n(&dx[i].boot, x.boot, __ATOMIC_RELAXED);
			__atomic_store_n(&dx[i].tai, x.tai, __ATOMIC_RELAXED);
			__atomic_store_n(&dx[i].point, x.point, __ATOMIC_RELEASE);
		}
	}
}
