/* SPDX-License-Identifier: MIT */
/* Making and mapping event pools (the layout is in pool.h). */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fdhigh.h"
#include "pool.h"

static uint64_t next_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

void utrace__pool_give_back(struct utrace_pool *p, const uint32_t *idx, size_t n)
{
	size_t i;

	/* No cache flush first: flushing the copied pages cost a fifth of
	 * the recorder's CPU and made the writer slower, not faster, on
	 * this machine in 2026-11 (design-notes.md, "The recorder keeps
	 * up"). */
	for (i = 0; i < n; i++) {
		struct utrace_page_desc *d = utrace_pool_desc(p, idx[i]);
		/* To the free queue of the CPU that wrote it. */
		struct utrace_queue *q = &p->freeq[utrace_pool_q(p, d->cpu)];

		__atomic_store_n(&d->state, UTRACE_PAGE_FREE, __ATOMIC_RELEASE);
		/* Each queue has room for every page (see below); a pop
		 * stalled a whole lap can hold a cell for a moment. */
		while (!utrace_queue_push(p, q, idx[i]))
			sched_yield();
	}
}

/* The pools this process made, newest first (see struct utrace_pool_geom). */
static struct utrace_pool_geom *geoms;

struct utrace_pool_geom *utrace__pool_geom(const struct utrace_pool *p)
{
	struct utrace_pool_geom *g;

	for (g = __atomic_load_n(&geoms, __ATOMIC_ACQUIRE); g; g = g->next)
		if (g->pool == p)
			return g;
	return NULL;
}

/*
 * Record the layout of pool 'p', taken from 'hdr' (the pool itself when
 * this process made it, else the checked copy of its header): in an entry
 * given up by utrace__pool_unmap(), else a new one.
 */
static int geom_add(struct utrace_pool *p, const struct utrace_pool *hdr)
{
	struct utrace_pool_geom *g;
	struct utrace_pool *none = NULL;
	uint32_t q, nq = hdr->nr_queues;
	bool reused = false;

	for (q = 1; q < 2 * nq; q++)      /* one mask for all the queues */
		if ((q < nq ? hdr->freeq[q].mask : hdr->fullq[q - nq].mask) !=
		    hdr->freeq[0].mask)
			return -EBADMSG;
	for (g = __atomic_load_n(&geoms, __ATOMIC_ACQUIRE); g; g = g->next) {
		if (__atomic_compare_exchange_n(&g->reserved, &none, p, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			reused = true;
			break;
		}
		none = NULL;
	}
	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return -ENOMEM;
		g->reserved = p;
	}
	g->size = hdr->size;
	g->nr_pages = hdr->nr_pages;
	g->nr_slots = hdr->nr_slots;
	g->nr_queues = nq;
	g->mask = hdr->freeq[0].mask;
	g->slots = (struct utrace_thread_slot *)((char *)p + hdr->slots_off);
	g->descs = (struct utrace_page_desc *)((char *)p + hdr->descs_off);
	g->calib = (struct utrace_calib_point *)((char *)p + hdr->calib_off);
	g->calibx = hdr->calibx_off ?
		(struct utrace_calib_ext *)((char *)p + hdr->calibx_off) : NULL;
	g->pages = (unsigned char *)p + hdr->pages_off;
	for (q = 0; q < nq; q++) {
		g->free_cells[q] = (struct utrace_qcell *)((char *)p + hdr->freeq[q].cells_off);
		g->full_cells[q] = (struct utrace_qcell *)((char *)p + hdr->fullq[q].cells_off);
	}
	g->broken = 0;
	if (reused) {
		__atomic_store_n(&g->pool, p, __ATOMIC_RELEASE);
		return 0;
	}
	g->pool = p;
	/* A pool made again at the address of an unmapped one comes first. */
	g->next = __atomic_load_n(&geoms, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&geoms, &g->next, g, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	return 0;
}

/* Write [p, p + len) of a shared mapping once, so that its memory exists
 * (MADV_POPULATE_WRITE, Linux 5.14; else a store to each page). */
static void populate(void *p, uint64_t len)
{
	volatile unsigned char *c = p;
	uint64_t i;

#ifdef MADV_POPULATE_WRITE
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return;
#endif
	for (i = 0; i < len; i += UTRACE_PAGE_SIZE)
		c[i] = c[i];
}

static uint32_t nr_pages_of(uint64_t bytes)
{
	uint64_t nr = bytes / UTRACE_PAGE_SIZE;

	return nr < 2 ? 2 : nr > (1u << 24) ? 1u << 24 : (uint32_t)nr;
}

int utrace__pool_create(uint64_t bytes, uint32_t mode, struct utrace_pool **out)
{
	return utrace__pool_create_max(bytes, bytes, mode, out);
}

int utrace__pool_create_max(uint64_t bytes, uint64_t max_bytes, uint32_t mode,
			    struct utrace_pool **out)
{
	uint32_t dealt = nr_pages_of(bytes), nr_pages = nr_pages_of(max_bytes);
	uint64_t qsize, off, size, i, cells_off;
	struct utrace_pool *p;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint32_t nq = ncpu < 1 ? 1 : ncpu > UTRACE_POOL_QUEUES ? UTRACE_POOL_QUEUES :
		      (uint32_t)ncpu, q;
	int fd, e;

	/* Each queue can hold every page (all may end up on one CPU's), and
	 * twice that: a push then never finds its cell still held by a pop
	 * that has claimed it but not yet released it, unless that pop
	 * stalled for a whole lap.  64 bytes of queue cells per page and
	 * queue pair: 1.6% of the pages per pair, hence at most 4 pairs. */
	qsize = next_pow2(2 * (uint64_t)nr_pages);
	off = align_up(sizeof(*p), 64);
	uint64_t calib_off = off;
	off += (uint64_t)UTRACE_POOL_CALIB * sizeof(struct utrace_calib_point);
	uint64_t calibx_off = off;
	off += (uint64_t)UTRACE_POOL_CALIB * sizeof(struct utrace_calib_ext);
	uint64_t slots_off = off;
	off += align_up((uint64_t)UTRACE_POOL_THREADS * sizeof(struct utrace_thread_slot), 64);
	uint64_t descs_off = off;
	off += align_up((uint64_t)nr_pages * sizeof(struct utrace_page_desc), 64);
	cells_off = off;
	off += 2 * nq * qsize * sizeof(struct utrace_qcell);
	uint64_t pages_off = align_up(off, UTRACE_PAGE_SIZE);
	size = pages_off + (uint64_t)nr_pages * UTRACE_PAGE_SIZE;

	/* (in a traced program: out of its range of descriptors) */
	fd = utrace__fd_high(memfd_create("utrace-pool", MFD_CLOEXEC));
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	if (dealt > nr_pages)
		dealt = nr_pages;
	/* Populated now, as the kernel allocates its ring buffer: a writer
	 * that faults in each new page of a large pool pays for it in every
	 * event (10 M events into 64 MiB: 35 ns an event, 22 populated).
	 * A pool that can grow: its dealt pages only. */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | (dealt == nr_pages ? MAP_POPULATE : 0), fd, 0);
	if (p == MAP_FAILED) {
		e = errno;
		close(fd);
		return -e;
	}
	if (dealt < nr_pages)
		populate(p, pages_off + (uint64_t)dealt * UTRACE_PAGE_SIZE);
	p->magic = UTRACE_POOL_MAGIC;
	p->version = UTRACE_POOL_VERSION;
	p->page_size = UTRACE_PAGE_SIZE;
	p->nr_pages = nr_pages;
	p->pid = (uint32_t)getpid();
	p->clock = utrace__clock_tsc ? UTRACE_CLOCK_TSC : UTRACE_CLOCK_MONO;
	p->mode = mode;
	p->nr_slots = UTRACE_POOL_THREADS;
	p->size = size;
	p->slots_off = slots_off;
	p->descs_off = descs_off;
	p->pages_off = pages_off;
	p->nr_queues = nq;
	for (q = 0; q < 2 * nq; q++) {
		struct utrace_queue *qu = q < nq ? &p->freeq[q] : &p->fullq[q - nq];
		struct utrace_qcell *cells;

		qu->cells_off = cells_off + q * qsize * sizeof(struct utrace_qcell);
		qu->mask = qsize - 1;
		cells = (struct utrace_qcell *)((char *)p + qu->cells_off);
		for (i = 0; i < qsize; i++)
			cells[i].seq = i;
	}
	p->calib_off = calib_off;
	p->calibx_off = calibx_off;
	if (p->clock == UTRACE_CLOCK_TSC)
		utrace__calib_measure((struct utrace_calib_point *)((char *)p + calib_off),
				      (struct utrace_calib_ext *)((char *)p + calibx_off), NULL);
	e = geom_add(p, p);
	if (e < 0) {
		munmap(p, size);
		close(fd);
		return e;
	}
	/* The free pages dealt out to the CPUs' queues in turn. */
	for (i = 0; i < dealt; i++)
		utrace_queue_push(p, &p->freeq[i % nq], i);
	__atomic_store_n(&p->nr_dealt, dealt, __ATOMIC_RELEASE);
	*out = p;
	return fd;
}

uint32_t utrace__pool_dealt(const struct utrace_pool *p)
{
	uint32_t n = __atomic_load_n(&p->nr_dealt, __ATOMIC_ACQUIRE);

	return n == 0 || n > utrace_pool_nr_pages(p) ? utrace_pool_nr_pages(p) : n;
}

uint32_t utrace__pool_grow(struct utrace_pool *p, uint32_t dealt, uint32_t more)
{
	uint32_t nr = utrace_pool_nr_pages(p), i;
	uint32_t nq = utrace__pool_geom(p) ? utrace__pool_geom(p)->nr_queues : 0;

	if (!nq || dealt >= nr)
		return dealt;
	if (more > nr - dealt)
		more = nr - dealt;
	/* Not populated here: on the VM of bench/RESULTS.md the first
	 * write to a page costs microseconds (the host backs guest memory
	 * lazily), more than draining a page, so a recorder that populated
	 * the pages it dealt spent its time on that instead of catching up
	 * (design-notes.md, "The recorder keeps up").  The writer's first
	 * store faults each page in once. */
	for (i = dealt; i < dealt + more; i++)
		/* each queue has room for every page */
		if (!utrace_queue_push(p, &p->freeq[i % nq], i))
			break;
	__atomic_store_n(&p->nr_dealt, i, __ATOMIC_RELEASE);
	return i;
}

bool utrace__pool_header_ok(const struct utrace_pool *hdr, uint64_t size)
{
	uint32_t q;

	if (hdr->magic != UTRACE_POOL_MAGIC || hdr->version != UTRACE_POOL_VERSION ||
	    hdr->page_size != UTRACE_PAGE_SIZE || hdr->size != size ||
	    hdr->nr_pages > (1u << 24) || hdr->nr_slots > UTRACE_POOL_THREADS ||
	    hdr->pages_off > size ||
	    hdr->pages_off + (uint64_t)hdr->nr_pages * UTRACE_PAGE_SIZE > size ||
	    hdr->descs_off > hdr->pages_off ||
	    hdr->descs_off + (uint64_t)hdr->nr_pages * sizeof(struct utrace_page_desc) >
	    hdr->pages_off ||
	    hdr->slots_off > hdr->descs_off ||
	    hdr->calib_off < sizeof(*hdr) || hdr->calib_off % 16 ||
	    hdr->calib_off + (uint64_t)UTRACE_POOL_CALIB * sizeof(struct utrace_calib_point) >
	    hdr->slots_off ||
	    (hdr->calibx_off && (hdr->calibx_off % 8 ||
	     hdr->calibx_off < hdr->calib_off +
			       (uint64_t)UTRACE_POOL_CALIB * sizeof(struct utrace_calib_point) ||
	     hdr->calibx_off + (uint64_t)UTRACE_POOL_CALIB * sizeof(struct utrace_calib_ext) >
	     hdr->slots_off)) ||
	    hdr->slots_off + (uint64_t)hdr->nr_slots * sizeof(struct utrace_thread_slot) >
	    hdr->descs_off)
		return false;
	if (hdr->nr_queues < 1 || hdr->nr_queues > UTRACE_POOL_QUEUES ||
	    hdr->nr_dealt > hdr->nr_pages)
		return false;
	for (q = 0; q < 2 * hdr->nr_queues; q++) {
		const struct utrace_queue *qu = q < hdr->nr_queues ? &hdr->freeq[q] :
			&hdr->fullq[q - hdr->nr_queues];
		uint64_t n = qu->mask + 1;

		/* a power of two that can hold every page, its cells between
		 * the page descriptors and the pages */
		if (!n || (n & qu->mask) || n < hdr->nr_pages || n > (1ull << 32) ||
		    qu->cells_off < hdr->descs_off || qu->cells_off % 8 ||
		    qu->cells_off + n * sizeof(struct utrace_qcell) > hdr->pages_off)
			return false;
	}
	return true;
}

int utrace__pool_map(int fd, struct utrace_pool **out)
{
	struct utrace_pool hdr;
	struct stat st;
	void *m;
	int r;

	if (fstat(fd, &st) < 0)
		return -errno;
	if ((size_t)st.st_size < sizeof(hdr) ||
	    pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    !utrace__pool_header_ok(&hdr, (uint64_t)st.st_size))
		return -EBADMSG;
	m = mmap(NULL, hdr.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	r = utrace__pool_adopt(m, &hdr);
	if (r < 0) {
		munmap(m, hdr.size);
		return r;
	}
	*out = m;
	return 0;
}

int utrace__pool_adopt(struct utrace_pool *p, const struct utrace_pool *hdr)
{
	return geom_add(p, hdr);
}

void utrace__pool_unmap(struct utrace_pool *p)
{
	struct utrace_pool_geom *g = utrace__pool_geom(p);

	if (!g)
		return;
	munmap(p, g->size);
	__atomic_store_n(&g->pool, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&g->reserved, NULL, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------- the consumer side */

bool utrace__pool_take_full(struct utrace_pool *p, uint32_t *q, uint32_t *idx)
{
	uint64_t v;

	while (utrace_fullq_pop_next(p, q, &v)) {
		if (v < utrace_pool_nr_pages(p)) {
			*idx = (uint32_t)v;
			return true;
		}
	}
	return false;
}

size_t utrace__pool_drain(struct utrace_pool *p, const struct utrace_pool_drain_ops *ops,
			  void *arg)
{
	uint32_t batch[UTRACE_POOL_DRAIN_BATCH], q = 0;
	size_t n, total = 0;

	do {
		for (n = 0; n < UTRACE_POOL_DRAIN_BATCH &&
			    utrace__pool_take_full(p, &q, &batch[n]); n++)
			ops->page(arg, p, batch[n]);
		if (ops->batch_end)
			ops->batch_end(arg, p);
		utrace__pool_give_back(p, batch, n);
		total += n;
	} while (n == UTRACE_POOL_DRAIN_BATCH);
	return total;
}

uint32_t utrace__pool_scan(struct utrace_pool *p, bool full_too, uint32_t *out)
{
	uint32_t i, n = 0;

	for (i = 0; i < utrace_pool_nr_pages(p); i++) {
		uint32_t st = __atomic_load_n(&utrace_pool_desc(p, i)->state, __ATOMIC_ACQUIRE);

		if (st == UTRACE_PAGE_WRITING || (full_too && st == UTRACE_PAGE_FULL))
			out[n++] = i;
	}
	return n;
}

void utrace__pool_peek(struct utrace_pool *p, uint32_t idx, struct utrace_pool_peek *pk)
{
	struct utrace_page_desc *d = utrace_pool_desc(p, idx);

	pk->seq = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);
	pk->read = __atomic_load_n(&d->read, __ATOMIC_ACQUIRE);
	pk->commit = __atomic_load_n(&utrace_pool_page(p, idx)->commit, __ATOMIC_ACQUIRE);
}

bool utrace__pool_page_reused(struct utrace_pool *p, uint32_t idx, uint64_t seq)
{
	struct utrace_page_desc *d = utrace_pool_desc(p, idx);

	return __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE) != seq ||
	       __atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == UTRACE_PAGE_FREE;
}

void utrace__pool_consumed(struct utrace_pool *p, uint32_t idx, uint64_t read, uint64_t to)
{
	__atomic_compare_exchange_n(&utrace_pool_desc(p, idx)->read, &read, to, 0,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

void utrace__pool_drop(struct utrace_pool *p, uint32_t idx)
{
	__atomic_store_n(&utrace_pool_desc(p, idx)->state, UTRACE_PAGE_FREE, __ATOMIC_RELEASE);
}

uint32_t utrace__pool_dead(const struct utrace_pool *p)
{
	return __atomic_load_n(&p->dead, __ATOMIC_ACQUIRE);
}

uint64_t utrace__pool_clear_ts(const struct utrace_pool *p)
{
	return __atomic_load_n(&p->clear_ts, __ATOMIC_ACQUIRE);
}

uint32_t utrace__pool_msgs_missed(const struct utrace_pool *p)
{
	return __atomic_load_n(&p->msgs_missed, __ATOMIC_RELAXED);
}

uint64_t utrace__pool_lost_no_slot(const struct utrace_pool *p)
{
	return __atomic_load_n(&p->lost_no_slot, __ATOMIC_RELAXED);
}

uint64_t utrace__pool_lost_in_slots(struct utrace_pool *p)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < utrace_pool_nr_slots(p); i++) {
		struct utrace_thread_slot *s = utrace_pool_slot(p, i);

		n += __atomic_load_n(&s->lost, __ATOMIC_RELAXED) +
		     __atomic_load_n(&s->overwritten, __ATOMIC_RELAXED);
	}
	return n;
}

void utrace__pool_usage(struct utrace_pool *p, uint64_t *pages_used, uint64_t *written,
			uint64_t *lost)
{
	uint64_t used = 0;
	uint32_t i;
	uint64_t w = 0;

	for (i = 0; i < utrace_pool_nr_pages(p); i++)
		if (__atomic_load_n(&utrace_pool_desc(p, i)->state, __ATOMIC_RELAXED) !=
		    UTRACE_PAGE_FREE)
			used++;
	for (i = 0; i < utrace_pool_nr_slots(p); i++)
		w += __atomic_load_n(&utrace_pool_slot(p, i)->written, __ATOMIC_RELAXED);
	*pages_used = used;
	*written = w;
	*lost = utrace__pool_lost_in_slots(p) + utrace__pool_lost_no_slot(p);
}

void utrace__pool_mark_clear(struct utrace_pool *p, uint64_t now)
{
	uint64_t ov = 0;
	uint32_t i;

	for (i = 0; i < utrace_pool_nr_slots(p); i++)
		ov += __atomic_load_n(&utrace_pool_slot(p, i)->overwritten, __ATOMIC_RELAXED);
	__atomic_store_n(&p->clear_overwritten, ov, __ATOMIC_RELAXED);
	__atomic_store_n(&p->clear_ts, now, __ATOMIC_RELEASE);
}

uint64_t utrace__pool_overwritten_since_clear(struct utrace_pool *p)
{
	uint64_t n = 0, before;
	uint32_t i;

	for (i = 0; i < utrace_pool_nr_slots(p); i++)
		n += __atomic_load_n(&utrace_pool_slot(p, i)->overwritten, __ATOMIC_RELAXED);
	before = __atomic_load_n(&p->clear_overwritten, __ATOMIC_RELAXED);
	return n > before ? n - before : 0;
}
