/* SPDX-License-Identifier: MIT */
/*
 * Reading the pools of running processes: what the live readers (utrace
 * show, pipe, the mount) and the recorder share beyond the pool's own
 * consumer functions (pool.h).  Internal: the tools use it through the
 * reader library's static archive.
 */
#ifndef UTRACE_READER_LIVE_POOL_H
#define UTRACE_READER_LIVE_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "pool.h"

/*
 * Consuming readers of a pool (utrace pipe, the mount's trace_pipe, the
 * recorder) take turns: each holds an open file description lock on the
 * pool's memfd while it takes pages and moves read offsets, so every event
 * goes to one of them, as with the kernel's trace_pipe.  The kernel lets
 * go of the lock of a reader that dies.
 */

/**
 * utrace__live_lock_open() - a descriptor for the consumer turn of a pool
 * @pool_fd: the pool's memfd
 *
 * The memfd opened again, through /proc: a new open file description
 * (the descriptors that came from the agent all share the agent's one).
 *
 * Return: the descriptor, or -1 (the reader then goes without the turn).
 */
int utrace__live_lock_open(int pool_fd) UTRACE_HIDDEN;

/**
 * utrace__live_consumer_lock() - take (blocking) or give up the turn
 * @lock_fd: from utrace__live_lock_open(); -1: nothing to do
 * @take: take it, else give it up
 *
 * On a file system without OFD locks it closes the descriptor and sets
 * *@lock_fd to -1: the reader goes on alone, as before.
 */
void utrace__live_consumer_lock(int *lock_fd, bool take) UTRACE_HIDDEN;

/* A page copied out of a pool. */
struct utrace__live_page {
	uint32_t tid, cpu;
	uint64_t seq;
	struct utrace_page page;
};

/* The pages copied out of one pool. */
struct utrace__live_pages {
	struct utrace__live_page *v;     /* (malloc'ed: free it) */
	size_t n, cap;
	uint64_t events;                 /* in the pages */
	uint64_t written;                /* overwritten since the last clear */
	uint64_t until;                  /* (set by the caller) events later than
					  * this time are left out; 0: none */
};

/**
 * utrace__live_collect() - copy the events a pool holds now
 * @p: the pool (mapped)
 * @consume: take them (trace_pipe: full pages are given back, the read
 *           offsets of pages being written moved), else leave the pool
 *           as it is (trace); the caller holds the consumer turn
 * @cl: where the pages are added
 */
void utrace__live_collect(struct utrace_pool *p, bool consume, struct utrace__live_pages *cl)
	UTRACE_HIDDEN;

/**
 * utrace__live_sort() - the collected pages in each thread's order
 * @cl: the pages
 */
void utrace__live_sort(struct utrace__live_pages *cl) UTRACE_HIDDEN;

#endif /* UTRACE_READER_LIVE_POOL_H */
