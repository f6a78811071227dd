/* SPDX-License-Identifier: MIT */
/*
 * The event pool of one traced process: one shared-memory object (a memfd)
 * that the process writes and the recorder maps too.  Everything in it is
 * addressed by offsets, so both sides can map it anywhere.
 *
 *   +-------------------------+ 0
 *   | struct utrace_pool      |   sizes, clock, counters, the two queues
 *   +-------------------------+ slots_off
 *   | thread slots [1024]     |   per thread: tid, comm, counters
 *   +-------------------------+ descs_off
 *   | page descriptors [n]    |   per page: owner, cpu, seq, state
 *   +-------------------------+ cells_off of each queue
 *   | queue cells [2][nq][qs] |   page numbers: free pages, full pages,
 *   +-------------------------+   a pair of queues per CPU group
 *   | (padding)               |
 *   +-------------------------+ pages_off (page aligned)
 *   | pages [n]               |   the kernel ring-buffer page layout
 *   +-------------------------+ size
 *
 * A page goes FREE -> WRITING (a thread took it from the free queue) ->
 * FULL (the thread moved on and queued it) -> FREE (the recorder copied it
 * and gave it back).  In overwrite mode a writer that finds no free page
 * takes the oldest FULL page instead and counts its events as lost.  The
 * state word lets the recorder find every page still holding data after
 * the process died, whatever state the queues were in.
 *
 * The queues come in pairs, one pair per CPU group (CPU % nr_queues, as
 * the kernel has a ring per CPU): a thread queues a full page on its
 * CPU's full queue and takes free pages from its CPU's free queue first,
 * and readers give a page back to the free queue of the CPU that wrote
 * it.  So threads on different CPUs do not pass queue cache lines back
 * and forth at every page, and in overwrite mode a CPU takes back its own
 * oldest page, whose lines are its own (design-notes.md, "A queue pair per
 * CPU").  A thread that finds its CPU's queue empty tries the others.
 */
#ifndef UTRACE_RINGBUF_POOL_H
#define UTRACE_RINGBUF_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "page.h"

#define UTRACE_POOL_MAGIC 0x50525455u /* "UTRP" */
#define UTRACE_POOL_VERSION 5
#define UTRACE_POOL_THREADS 1024
#define UTRACE_POOL_QUEUES 4     /* queue pairs at most (CPU % nr_queues) */
#define UTRACE_POOL_CALIB 4096   /* calibration points at most (calib.c) */

enum utrace_clock {
	UTRACE_CLOCK_MONO = 0,   /* CLOCK_MONOTONIC ns */
	UTRACE_CLOCK_TSC = 1,    /* rdtsc ticks */
};

/*
 * The clock readers show a pool's times in: the kernel's trace_clock, one
 * per buffer (struct utrace_pool.trace_clock).  The stored times do not
 * change: readers compute the chosen clock from the calibration points
 * (lib/reader/tsc-time.c; names and meaning in clock.h).
 */
enum utrace_trace_clock {
	UTRACE_TCLOCK_MONO = 0,      /* CLOCK_MONOTONIC ns (the default) */
	UTRACE_TCLOCK_LOCAL,         /* sched_clock: here CLOCK_MONOTONIC_RAW */
	UTRACE_TCLOCK_GLOBAL,        /* the same */
	UTRACE_TCLOCK_PERF,          /* the same */
	UTRACE_TCLOCK_MONO_RAW,      /* CLOCK_MONOTONIC_RAW ns */
	UTRACE_TCLOCK_BOOT,          /* CLOCK_BOOTTIME ns */
	UTRACE_TCLOCK_TAI,           /* CLOCK_TAI ns */
	UTRACE_TCLOCK_X86_TSC,       /* the TSC's ticks, as stored */
	UTRACE_TCLOCK_NR
};

enum utrace_page_state {
	UTRACE_PAGE_FREE = 0,
	UTRACE_PAGE_WRITING = 1,
	UTRACE_PAGE_FULL = 2,
};

/* Slot states (struct utrace_thread_slot.state). */
enum utrace_slot_state {
	UTRACE_SLOT_FREE = 0,
	UTRACE_SLOT_USED = 1,    /* a thread of the process has it */
};

/* What became of a pool (struct utrace_pool.dead). */
enum utrace_pool_dead {
	UTRACE_POOL_ALIVE = 0,
	UTRACE_POOL_BROKEN = 1,    /* written from outside: recording stopped */
	UTRACE_POOL_REPLACED = 2,  /* a new pool took over (buffer_size_kb) */
};

enum utrace_pool_mode {
	UTRACE_MODE_DISCARD = 0,
	UTRACE_MODE_OVERWRITE = 1,
};

/* A bounded multi-producer multi-consumer queue of page numbers
 * (D. Vyukov's design): each cell's sequence number tells whose turn it is. */
struct utrace_queue {
	uint64_t head __attribute__((aligned(64)));
	uint64_t tail __attribute__((aligned(64)));
	uint64_t cells_off __attribute__((aligned(64)));
	uint64_t mask;
};

struct utrace_qcell {
	uint64_t seq;
	uint64_t val;
};

struct utrace_page_desc {
	uint32_t state;          /* enum utrace_page_state */
	uint32_t slot;           /* thread slot of the writer */
	uint32_t tid;
	uint32_t cpu;
	uint64_t seq;            /* the thread's page number */
	uint64_t lost_before;    /* events of the thread lost before this page */
	uint64_t nr_events;      /* set when the page is full */
	uint64_t read;           /* bytes of data consumed by a trace_pipe
				  * reader; 0 when a writer takes the page */
} __attribute__((aligned(64)));  /* one cache line each: no false sharing */

/* One TSC / CLOCK_MONOTONIC calibration point: {0, 0} until written,
 * then never changed (one 16-byte compare-and-swap writes both). */
struct utrace_calib_point {
	uint64_t tsc, ns;
} __attribute__((aligned(16)));

/* What else was read with calibration point i (the same index in a table
 * beside the points): CLOCK_MONOTONIC_RAW at a TSC reading of its own, and
 * how far CLOCK_BOOTTIME and CLOCK_TAI were ahead of CLOCK_MONOTONIC.
 * Written only by whoever wrote point i, 'point' last: the entry counts
 * when 'point' is the point's tsc. */
struct utrace_calib_ext {
	uint64_t point;          /* the tsc of point i */
	uint64_t tsc, raw;       /* a TSC reading and CLOCK_MONOTONIC_RAW ns */
	int64_t boot;            /* CLOCK_BOOTTIME - CLOCK_MONOTONIC, ns */
	int64_t tai;             /* CLOCK_TAI - CLOCK_MONOTONIC, ns */
};

struct utrace_thread_slot {
	uint32_t state;          /* enum utrace_slot_state */
	uint32_t tid;
	char comm[16];
	/* Counters of every thread that used the slot, never reset: */
	uint64_t lost;           /* events dropped (no page, too deep, no slot) */
	uint64_t overwritten;    /* events of its pages reused in overwrite mode */
	uint64_t written;        /* events in pages it queued */
} __attribute__((aligned(64)));  /* one cache line each: written by its thread */

struct utrace_pool {
	uint32_t magic;
	uint32_t version;
	uint32_t page_size;
	uint32_t nr_pages;
	uint32_t pid;
	uint32_t clock;          /* enum utrace_clock */
	uint32_t mode;           /* enum utrace_pool_mode */
	uint32_t nr_slots;
	uint64_t size;
	uint64_t slots_off, descs_off, pages_off;
	uint64_t lost_no_slot;   /* events of threads that found no slot */
	uint32_t dead;           /* enum utrace_pool_dead, set by the process */
	uint32_t nr_queues;      /* queue pairs: 1 .. UTRACE_POOL_QUEUES */
	/* The table of TSC calibration points (calib.c): UTRACE_POOL_CALIB
	 * struct utrace_calib_point at calib_off, the first taken when the
	 * pool was made; each written once, whole, by whoever finds it due. */
	uint64_t calib_off;
	/* Events before this time (the pool's clock) were cleared
	 * (the trace file opened with O_TRUNC); readers skip them.  The
	 * events overwritten before the clear, for the trace header. */
	uint64_t clear_ts;
	uint64_t clear_overwritten;
	/* In what was padding before (0 in the pools of older runtimes):
	 * UTRACE_POOL_CALIB struct utrace_calib_ext at calibx_off (0: none),
	 * and the enum utrace_trace_clock readers show. */
	uint64_t calibx_off;
	uint32_t trace_clock;
	/* Pages dealt to the free queues so far (0, as in older pools: all
	 * of them).  A pool made to grow (utrace__pool_create_max()) starts
	 * with some of its pages dealt; the recorder deals the others when
	 * the writers fill the dealt ones faster than it empties them
	 * (utrace__pool_grow()).  The pages not dealt are never touched, so
	 * they take no memory. */
	uint32_t nr_dealt;
	/* In padding too (0 in older pools): the messages (formats,
	 * objects) the process could not send to its recorder, which had
	 * stopped reading (runtime/record.c), for the recorder to say. */
	uint32_t msgs_missed;
	struct utrace_queue freeq[UTRACE_POOL_QUEUES];
	struct utrace_queue fullq[UTRACE_POOL_QUEUES];
};
/* calibx_off and trace_clock took padding: the queues stay where pools of
 * version 5 always had them. */
_Static_assert(offsetof(struct utrace_pool, freeq) == 128, "pool header moved");

/*
 * The layout of a pool this process made or mapped, in its private
 * memory: the writer, and the readers' queue operations, take sizes,
 * offsets and queue masks from here, never from the shared header, so
 * that a pool scribbled on from outside cannot send them out of bounds.
 * Made by utrace__pool_create() and utrace__pool_map(); entries are kept
 * (a few hundred bytes) and reused after utrace__pool_unmap().
 */
struct utrace_pool_geom {
	struct utrace_pool *pool;
	uint64_t size;
	uint32_t nr_pages, nr_slots, nr_queues;
	uint64_t mask;                   /* of every queue */
	struct utrace_thread_slot *slots;
	struct utrace_page_desc *descs;
	struct utrace_calib_point *calib;
	struct utrace_calib_ext *calibx; /* NULL: an older pool, none */
	unsigned char *pages;
	struct utrace_qcell *free_cells[UTRACE_POOL_QUEUES];
	struct utrace_qcell *full_cells[UTRACE_POOL_QUEUES];
	int broken;                      /* nonsense found in the pool */
	struct utrace_pool *reserved;    /* the pool the entry is for, set
					  * first; NULL: free for another */
	struct utrace_pool_geom *next;
};

/* The geometry of pool 'p' (made or mapped by this process), else NULL. */
struct utrace_pool_geom *utrace__pool_geom(const struct utrace_pool *p)
	UTRACE_HIDDEN;

/* The queue pair of a CPU. */
static inline uint32_t utrace_pool_q(const struct utrace_pool *p, uint32_t cpu)
{
	const struct utrace_pool_geom *g = utrace__pool_geom(p);
	uint32_t n = g ? g->nr_queues : 0;

	/* (not the header's: the other side may change it) */
	return n - 1 < UTRACE_POOL_QUEUES ? cpu % n : 0;
}

/*
 * A pool's parts.  The offsets come from the pool's geometry when this
 * process has one for it (it made or mapped the pool), so that a header
 * changed since cannot send a reader out of its mapping; 'i' is the
 * caller's to check against the geometry's counts.
 */
static inline struct utrace_thread_slot *utrace_pool_slot(struct utrace_pool *p,
							  uint32_t i)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);

	if (g)
		return g->slots + i;
	return (struct utrace_thread_slot *)((char *)p + p->slots_off) + i;
}

static inline struct utrace_page_desc *utrace_pool_desc(struct utrace_pool *p,
							uint32_t i)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);

	if (g)
		return g->descs + i;
	return (struct utrace_page_desc *)((char *)p + p->descs_off) + i;
}

static inline struct utrace_page *utrace_pool_page(struct utrace_pool *p, uint32_t i)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);

	if (g)
		return (struct utrace_page *)(g->pages + (uint64_t)i * UTRACE_PAGE_SIZE);
	return (struct utrace_page *)((char *)p + p->pages_off +
				      (uint64_t)i * p->page_size);
}

/* The pool's page and slot counts, as made or mapped (0 without a
 * geometry: nothing to look at). */
static inline uint32_t utrace_pool_nr_pages(const struct utrace_pool *p)
{
	const struct utrace_pool_geom *g = utrace__pool_geom(p);

	return g ? g->nr_pages : 0;
}

static inline uint32_t utrace_pool_nr_slots(const struct utrace_pool *p)
{
	const struct utrace_pool_geom *g = utrace__pool_geom(p);

	return g ? g->nr_slots : 0;
}

/*
 * A queue's cells and mask are passed apart from the queue, so that the
 * traced process can use its own copies of them (struct
 * utrace_pool_geom) rather than what is in the shared memory now, which
 * anyone with the pool's fd can change.  The positions (head, tail) and
 * the cells' contents are still shared: every index they give is masked,
 * and the retry loops are bounded, so nonsense written there makes an
 * operation fail, never go out of bounds or spin for ever.
 */
#define UTRACE_QUEUE_SPINS 65536

/* Push a page number; 0 when the queue is full. */
static inline int utrace_queue_push_cells(struct utrace_queue *q, struct utrace_qcell *cells,
					  uint64_t mask, uint64_t val)
{
	uint64_t pos = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
	struct utrace_qcell *c;
	unsigned int spins = 0;

	for (;;) {
		c = &cells[pos & mask];
		uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		int64_t dif = (int64_t)(seq - pos);

		if (++spins > UTRACE_QUEUE_SPINS)
			return 0;
		if (dif == 0) {
			if (__atomic_compare_exchange_n(&q->tail, &pos, pos + 1, 1,
							__ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				break;
		} else if (dif < 0) {
			return 0;
		} else {
			pos = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
		}
	}
	c->val = val;
	__atomic_store_n(&c->seq, pos + 1, __ATOMIC_RELEASE);
	return 1;
}

/* Pop a page number; 0 when the queue is empty. */
static inline int utrace_queue_pop_cells(struct utrace_queue *q, struct utrace_qcell *cells,
					 uint64_t mask, uint64_t *val)
{
	uint64_t pos = __atomic_load_n(&q->head, __ATOMIC_RELAXED);
	struct utrace_qcell *c;
	unsigned int spins = 0;

	for (;;) {
		c = &cells[pos & mask];
		uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		int64_t dif = (int64_t)(seq - (pos + 1));

		if (++spins > UTRACE_QUEUE_SPINS)
			return 0;
		if (dif == 0) {
			if (__atomic_compare_exchange_n(&q->head, &pos, pos + 1, 1,
							__ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				break;
		} else if (dif < 0) {
			return 0;
		} else {
			pos = __atomic_load_n(&q->head, __ATOMIC_RELAXED);
		}
	}
	*val = c->val;
	__atomic_store_n(&c->seq, pos + mask + 1, __ATOMIC_RELEASE);
	return 1;
}

/* The same for readers: the cells and mask of the pool's geometry (the
 * queue is found by its place in the header); 0 for a pool with none. */
static inline int utrace__queue_cells(struct utrace_pool *p, struct utrace_queue *q,
				      struct utrace_qcell **cells, uint64_t *mask)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);
	ptrdiff_t k;

	if (!g)
		return 0;
	*mask = g->mask;
	k = q - p->freeq;
	if (k >= 0 && k < (ptrdiff_t)g->nr_queues) {
		*cells = g->free_cells[k];
		return 1;
	}
	k = q - p->fullq;
	if (k >= 0 && k < (ptrdiff_t)g->nr_queues) {
		*cells = g->full_cells[k];
		return 1;
	}
	return 0;
}

static inline int utrace_queue_push(struct utrace_pool *p, struct utrace_queue *q,
				    uint64_t val)
{
	struct utrace_qcell *cells;
	uint64_t mask;

	return utrace__queue_cells(p, q, &cells, &mask) &&
	       utrace_queue_push_cells(q, cells, mask, val);
}

static inline int utrace_queue_pop(struct utrace_pool *p, struct utrace_queue *q,
				   uint64_t *val)
{
	struct utrace_qcell *cells;
	uint64_t mask;

	return utrace__queue_cells(p, q, &cells, &mask) &&
	       utrace_queue_pop_cells(q, cells, mask, val);
}

/* Pop a page number from the queues of 'qs' (freeq or fullq), CPU 'cpu's
 * queue first, then the others in turn; 0 when all are empty. */
static inline int utrace_queue_pop_any(struct utrace_pool *p, struct utrace_queue *qs,
				       uint32_t cpu, uint64_t *val)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);
	uint32_t n = g ? g->nr_queues : 0, q, i;

	if (n - 1 >= UTRACE_POOL_QUEUES)
		return 0;
	q = cpu % n;
	for (i = 0; i < n; i++)
		if (utrace_queue_pop(p, &qs[(q + i) % n], val))
			return 1;
	return 0;
}

/* For readers draining the full queues: a page from the CPUs' queues in
 * turn, starting at *q (advanced past the queue it came from), so that no
 * CPU's pages wait behind another's; 0 when all are empty. */
static inline int utrace_fullq_pop_next(struct utrace_pool *p, uint32_t *q, uint64_t *val)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);
	uint32_t n = g ? g->nr_queues : 0, i;

	if (n - 1 >= UTRACE_POOL_QUEUES)
		return 0;
	for (i = 0; i < n; i++) {
		uint32_t k = (*q + i) % n;

		if (utrace_queue_pop(p, &p->fullq[k], val)) {
			*q = (k + 1) % n;
			return 1;
		}
	}
	return 0;
}

/* A reader that mapped a pool itself records its geometry from the copy
 * of the header it checked (utrace__pool_header_ok()); 0 or -errno. */
int utrace__pool_adopt(struct utrace_pool *p, const struct utrace_pool *hdr)
	UTRACE_HIDDEN;

/* Unmap a pool made or mapped here, with the size it had then. */
void utrace__pool_unmap(struct utrace_pool *p) UTRACE_HIDDEN;

/* Make a pool of about 'bytes' of pages in a new memfd and map it; returns
 * the memfd (close-on-exec) and *out, or -errno. */
int utrace__pool_create(uint64_t bytes, uint32_t mode, struct utrace_pool **out)
	UTRACE_HIDDEN;

/*
 * The same, with room for up to 'max_bytes' of pages (more than 'bytes':
 * a pool that can grow): only 'bytes' of them are dealt to the free
 * queues, populated; the others take no memory until utrace__pool_grow()
 * deals them.  Their descriptors and queue cells are there from the
 * start (192 bytes per page on two CPUs, a twentieth of a page).
 */
int utrace__pool_create_max(uint64_t bytes, uint64_t max_bytes, uint32_t mode,
			    struct utrace_pool **out) UTRACE_HIDDEN;

/* The pages dealt to the free queues of a pool (see nr_dealt). */
uint32_t utrace__pool_dealt(const struct utrace_pool *p) UTRACE_HIDDEN;

/*
 * utrace__pool_grow() - deal 'more' pages not dealt yet to the free queues
 *
 * Called by the one consumer that owns the pool's growth (the recorder,
 * under the consumers' turn), with the pages dealt so far as it counts
 * them itself ('dealt': the header's nr_dealt when it mapped the pool,
 * then what this returned), not as the shared header says now, so that a
 * header written from outside cannot make it deal a page twice.  The
 * pages are not populated: a writer's first store to each faults it in
 * (once).  Returns the pages dealt now in all, and notes it in nr_dealt.
 */
uint32_t utrace__pool_grow(struct utrace_pool *p, uint32_t dealt, uint32_t more)
	UTRACE_HIDDEN;

/* Whether a pool header (of an object of 'size' bytes) is one this code
 * reads, with every part, queues included, inside the object. */
bool utrace__pool_header_ok(const struct utrace_pool *hdr, uint64_t size)
	UTRACE_HIDDEN;

/* Map the pool behind 'fd' (another process's), checking its header
 * against the size of the object; -errno (-EBADMSG: not a pool). */
int utrace__pool_map(int fd, struct utrace_pool **out) UTRACE_HIDDEN;

/* A reader (the recorder, a trace_pipe reader) gives back 'n' full pages
 * it has copied: each marked free and pushed on the free queue for the
 * writers. */
void utrace__pool_give_back(struct utrace_pool *p, const uint32_t *idx, size_t n)
	UTRACE_HIDDEN;

/*
 * The consumer side: what readers in other processes (the recorder, the
 * live readers of utrace show/pipe and the mount) do with a pool they
 * mapped.  Every access to the shared memory from a reader goes through
 * these, so that the orderings the writer relies on are in one place.
 * Page numbers passed in must be below utrace_pool_nr_pages().
 */

/**
 * utrace__pool_take_full() - take a full page from the full queues
 * @p: the pool
 * @q: the queue to look at first, advanced past the one the page came
 *     from (0 to start), so that no CPU's pages wait behind another's
 * @idx: the page number
 *
 * The page is the caller's until it gives it back
 * (utrace__pool_give_back()).  Page numbers out of range (the queue was
 * written from outside) are skipped.
 *
 * Return: true with a page, false when every full queue is empty.
 */
bool utrace__pool_take_full(struct utrace_pool *p, uint32_t *q, uint32_t *idx)
	UTRACE_HIDDEN;

/* The most pages utrace__pool_drain() takes before giving them back. */
#define UTRACE_POOL_DRAIN_BATCH 64

/*
 * What utrace__pool_drain() does with the pages: page() for each page
 * taken (it is the caller's until the batch ends), then batch_end() (may
 * be NULL) once a batch is taken, before its pages are given back.
 */
struct utrace_pool_drain_ops {
	void (*page)(void *arg, struct utrace_pool *p, uint32_t idx);
	void (*batch_end)(void *arg, struct utrace_pool *p);
};

/**
 * utrace__pool_drain() - take every full page, hand it over, give it back
 * @p: the pool
 * @ops: what to do with each page and each batch
 * @arg: their argument
 *
 * Pages are taken from the CPUs' full queues in turn, in batches of
 * UTRACE_POOL_DRAIN_BATCH, and each batch given back at once (one wait
 * for all its cache flushes), until the queues are empty.
 *
 * Return: the pages taken.
 */
size_t utrace__pool_drain(struct utrace_pool *p, const struct utrace_pool_drain_ops *ops,
			  void *arg) UTRACE_HIDDEN;

/**
 * utrace__pool_scan() - the pages still holding data
 * @p: the pool
 * @full_too: FULL pages as well as WRITING ones (the process died, or a
 *            reader that leaves the pages where they are)
 * @out: the page numbers, room for utrace_pool_nr_pages()
 *
 * For a look at the pages outside the queues: those threads are writing
 * (up to their commit word), and after a process died, full pages the
 * queue never got.
 *
 * Return: how many were put in @out.
 */
uint32_t utrace__pool_scan(struct utrace_pool *p, bool full_too, uint32_t *out)
	UTRACE_HIDDEN;

/* What a reader reads of a page's descriptor and header before it copies
 * the page (utrace__pool_peek()). */
struct utrace_pool_peek {
	uint64_t seq;            /* the writer's page number: changes when
				  * a writer takes the page again */
	uint64_t read;           /* bytes a consuming reader took already */
	uint64_t commit;         /* the commit word, flags included */
};

/**
 * utrace__pool_peek() - what is committed in a page, and what was read
 * @p: the pool
 * @idx: the page
 * @pk: its sequence number, read offset and commit word, in that order:
 *      the commit, read last, is at least the read offset, and a page
 *      taken again after the sequence number was read is caught by
 *      utrace__pool_page_reused()
 *
 * For a page being written (WRITING) the commit word is the part that
 * the writer has published: whole events only.
 */
void utrace__pool_peek(struct utrace_pool *p, uint32_t idx, struct utrace_pool_peek *pk)
	UTRACE_HIDDEN;

/**
 * utrace__pool_page_reused() - whether a page was taken back since a peek
 * @p: the pool
 * @idx: the page
 * @seq: its sequence number at utrace__pool_peek()
 *
 * A page being written, copied in place, may meanwhile be given back and
 * taken by a writer again (overwrite mode): the copy is then torn.
 *
 * Return: true when the page is another one now (or free).
 */
bool utrace__pool_page_reused(struct utrace_pool *p, uint32_t idx, uint64_t seq)
	UTRACE_HIDDEN;

/**
 * utrace__pool_consumed() - move a page's read offset past what was read
 * @p: the pool
 * @idx: the page (one being written)
 * @read: the offset at utrace__pool_peek()
 * @to: the new offset
 *
 * Only if no other reader moved it meanwhile; the writer sets it back to
 * 0 when it takes the page again.
 */
void utrace__pool_consumed(struct utrace_pool *p, uint32_t idx, uint64_t read, uint64_t to)
	UTRACE_HIDDEN;

/**
 * utrace__pool_drop() - free a page of a process that is gone
 * @p: the pool
 * @idx: the page, copied by the caller
 *
 * Marked FREE, not queued: nobody will take it again, but a second look
 * (an exec'd image's pool is the same) must not copy it twice.
 */
void utrace__pool_drop(struct utrace_pool *p, uint32_t idx) UTRACE_HIDDEN;

/**
 * utrace__pool_dead() - what became of the pool
 * @p: the pool
 *
 * Return: enum utrace_pool_dead.
 */
uint32_t utrace__pool_dead(const struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_clear_ts() - the time of the last clear
 * @p: the pool
 *
 * Return: the pool's time (its clock) before which events were cleared.
 */
uint64_t utrace__pool_clear_ts(const struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_msgs_missed() - messages the process never sent its recorder
 * @p: the pool
 *
 * Return: the count the process wrote into the header (not checked: a
 * number to show).
 */
uint32_t utrace__pool_msgs_missed(const struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_lost_no_slot() - events of threads that found no slot
 * @p: the pool
 */
uint64_t utrace__pool_lost_no_slot(const struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_lost_in_slots() - events the threads lost or had overwritten
 * @p: the pool
 *
 * The sum of every slot's lost and overwritten counters (a slot keeps the
 * counts of every thread that used it).
 */
uint64_t utrace__pool_lost_in_slots(struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_overwritten_since_clear() - events overwritten since a clear
 * @p: the pool
 *
 * The kernel's entries-written counts what the buffer holds plus what was
 * overwritten since the last clear.
 */
uint64_t utrace__pool_overwritten_since_clear(struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_usage() - what the pool holds and its threads wrote
 * @p: the pool
 * @pages_used: pages not free (being written, full, or being read)
 * @written: events written, all slots
 * @lost: events lost or overwritten, all slots, plus those of threads
 *        that found no slot
 *
 * Relaxed reads of counters that keep moving: a snapshot for `utrace ps`.
 */
void utrace__pool_usage(struct utrace_pool *p, uint64_t *pages_used, uint64_t *written,
			uint64_t *lost) UTRACE_HIDDEN;

/**
 * utrace__pool_mark_clear() - readers skip the events written before now
 * @p: the pool
 * @now: the pool's clock now
 *
 * The buffer's "clear": nobody may touch a page a thread is writing, so
 * the pool keeps a time before which readers skip events, and the
 * overwritten count at that time (utrace__pool_overwritten_since_clear()).
 */
void utrace__pool_mark_clear(struct utrace_pool *p, uint64_t now) UTRACE_HIDDEN;

/**
 * utrace__pool_calib_points() - the pool's calibration points so far
 * @p: the pool (its clock the TSC)
 * @from: the index of the first point wanted
 * @pt: filled with up to @max points from there, oldest first
 * @max: room in @pt
 *
 * The points are written once each and in order; a point that breaks the
 * order (a pool written from outside) ends the list.
 *
 * Return: the number of points copied.
 */
uint32_t utrace__pool_calib_points(struct utrace_pool *p, uint32_t from,
				   struct utrace_calib_point *pt, uint32_t max) UTRACE_HIDDEN;

/**
 * utrace__pool_calib_tick() - add a calibration point if one is due
 * @p: the pool (its clock the TSC)
 *
 * Points are due at 20 ms, 100 ms, 300 ms and 1 s of the pool's age, then every
 * second for ten minutes, every ten seconds for two hours, then every ten
 * minutes.  The process's agent calls this when utrace__pool_calib_due()
 * says, and readers before they read, so a process without an agent has
 * points too.  Safe from any process mapping the pool, at any time.
 *
 * Return: true if this call added one.
 */
bool utrace__pool_calib_tick(struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_calib_exts() - what was read with the pool's points
 * @p: the pool (its clock the TSC)
 * @from: the first point's index
 * @pt: its points @from .. @from + @n - 1 (utrace__pool_calib_points())
 * @n: how many
 * @x: filled with @n entries; one whose 'point' is 0 is missing (a pool
 *     of an older runtime has none, a writer killed half-way leaves one out)
 *
 * Return: @n, or 0 when the pool has no such table.
 */
uint32_t utrace__pool_calib_exts(struct utrace_pool *p, uint32_t from,
				 const struct utrace_calib_point *pt, uint32_t n,
				 struct utrace_calib_ext *x) UTRACE_HIDDEN;

/**
 * utrace__pool_calib_due() - nanoseconds until the next point is due
 * @p: the pool
 *
 * Return: 0 when one is due now, UINT64_MAX when none ever will be (not a
 * TSC pool, or its table is full).
 */
uint64_t utrace__pool_calib_due(struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_calib_second() - make sure the pool has its second point
 * @p: the pool (its clock the TSC)
 *
 * The events before the second point are timed with the rate between the
 * first two, so a reader needs it: when it is missing this waits until
 * the pool is 20 ms old and adds it.
 */
void utrace__pool_calib_second(struct utrace_pool *p) UTRACE_HIDDEN;

/**
 * utrace__pool_calib_copy() - give a new pool the points of another
 * @dst: the new pool, not yet seen by any reader
 * @src: the pool whose points it takes
 *
 * An instance's pool converts time stamps as the top level's does, so
 * that one event shows one time in both (the points due later are taken
 * on the same schedule, from the same first point).
 */
void utrace__pool_calib_copy(struct utrace_pool *dst, struct utrace_pool *src)
	UTRACE_HIDDEN;


#endif /* UTRACE_RINGBUF_POOL_H */
