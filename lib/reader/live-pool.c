/* SPDX-License-Identifier: MIT */
/*
 * Reading the pools of running processes (live-pool.h): the consumer
 * turn, and copying the pages that hold events out of a pool.
 *
 *   show (trace):      every page holding events (FULL, or being WRITTEN
 *                      up to its commit word), nothing changed;
 *   pipe (trace_pipe): full pages are taken from the full queues and
 *                      given back to the free queues; pages still being
 *                      written are read up to their commit word and the
 *                      read offset is kept in the page's descriptor, so
 *                      the next read starts after it.
 *
 * Events older than the pool's clear_ts (a "clear") are left out.  A page
 * that a writer took back while it was being copied (its descriptor's
 * sequence number changed) is dropped from that read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live-pool.h"

int utrace__live_lock_open(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDWR | O_CLOEXEC);
}

void utrace__live_consumer_lock(int *lock_fd, bool take)
{
	struct flock fl = { .l_type = take ? F_WRLCK : F_UNLCK, .l_whence = SEEK_SET,
			    .l_start = 0, .l_len = 1 };

	if (*lock_fd < 0)
		return;
	while (fcntl(*lock_fd, F_OFD_SETLKW, &fl) < 0) {
		if (errno != EINTR) {
			/* No OFD locks here: go on alone, as before. */
			close(*lock_fd);
			*lock_fd = -1;
			return;
		}
	}
}

static int cmp_page(const void *a, const void *b)
{
	const struct utrace__live_page *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->seq != y->seq)
		return (x->seq > y->seq) - (x->seq < y->seq);
	/* two parts of one page (read while it was written, the first held
	 * for another reader of its CPU): the earlier first */
	return (x->page.time_stamp > y->page.time_stamp) -
	       (x->page.time_stamp < y->page.time_stamp);
}

static struct utrace__live_page *add_page(struct utrace__live_pages *cl)
{
	if (cl->n == cl->cap) {
		size_t cap = cl->cap ? cl->cap * 2 : 64;
		void *v = realloc(cl->v, cap * sizeof(*cl->v));

		if (!v)
			return NULL;
		cl->v = v;
		cl->cap = cap;
	}
	return &cl->v[cl->n];
}

/* Copy one page's unread events; returns the events or -1 (torn). */
static long copy_page(struct utrace_pool *p, uint32_t idx, struct utrace__live_pages *cl,
		      bool consume, bool popped)
{
	struct utrace_page_desc *d = utrace_pool_desc(p, idx);
	struct utrace_pool_peek pk;
	struct utrace__live_page *lp = add_page(cl);
	uint64_t commit;
	long n;

	if (!lp)
		return -1;
	utrace__pool_peek(p, idx, &pk);
	commit = pk.commit & ~(uint64_t)UTRACE_RB_MISSED_EVENTS;
	if (commit > UTRACE_PAGE_DATA)
		commit = UTRACE_PAGE_DATA;
	memset(&lp->page, 0, sizeof(lp->page.time_stamp) + sizeof(lp->page.commit));
	n = utrace__rb_page_cut(utrace_pool_page(p, idx), (uint32_t)commit, (uint32_t)pk.read,
				utrace__pool_clear_ts(p), cl->until, &lp->page);
	lp->tid = d->tid;
	lp->cpu = d->cpu;
	lp->seq = pk.seq;
	/* Taken back by a writer while we copied (overwrite mode)? */
	if (!popped && utrace__pool_page_reused(p, idx, pk.seq))
		return -1;
	if (consume && !popped)
		utrace__pool_consumed(p, idx, pk.read, commit);
	if (n > 0) {
		cl->n++;
		cl->events += (uint64_t)n;
	}
	return n;
}

/* Full pages leave the buffer for good (utrace pipe). */
static void copy_full_page(void *arg, struct utrace_pool *p, uint32_t idx)
{
	copy_page(p, idx, arg, true, true);
}

void utrace__live_collect(struct utrace_pool *p, bool consume, struct utrace__live_pages *cl)
{
	static const struct utrace_pool_drain_ops take = { .page = copy_full_page };
	uint32_t *pages, n, i;

	if (consume)
		utrace__pool_drain(p, &take, cl);
	pages = malloc((utrace_pool_nr_pages(p) + 1) * sizeof(*pages));
	if (pages) {
		n = utrace__pool_scan(p, !consume, pages);
		for (i = 0; i < n; i++)
			copy_page(p, pages[i], cl, consume, false);
		free(pages);
	}
	/* As the kernel's header: entries-written is what the buffer holds
	 * plus what was overwritten since the last clear (read events are
	 * gone from both). */
	cl->written = utrace__pool_overwritten_since_clear(p);
}

void utrace__live_sort(struct utrace__live_pages *cl)
{
	if (cl->n > 1)
		qsort(cl->v, cl->n, sizeof(*cl->v), cmp_page);
}
