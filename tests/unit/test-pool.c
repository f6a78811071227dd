/* SPDX-License-Identifier: MIT */
/*
 * The event pool (lib/common/pool.c): its queue pairs per CPU, giving
 * pages back, and the header check that the recorder and the live readers
 * run on a pool another process sent them (which they must not trust).
 */
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "pool.h"
#include "test.h"

static struct utrace_pool *make(uint64_t bytes, uint32_t mode)
{
	struct utrace_pool *p;
	int fd = utrace__pool_create(bytes, mode, &p);

	if (fd < 0)
		TEST_FAIL("utrace__pool_create: %d", fd);
	close(fd);
	return p;
}

TEST(a_new_pool_passes_its_own_check)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	CHECK(utrace__pool_header_ok(p, p->size));
	CHECK_INT(p->nr_pages, ==, 256);
	CHECK_INT(p->nr_queues, >=, 1);
	CHECK_INT(p->nr_queues, <=, UTRACE_POOL_QUEUES);
	if (ncpu >= 1 && ncpu <= UTRACE_POOL_QUEUES)
		CHECK_INT(p->nr_queues, ==, ncpu);
	munmap(p, p->size);
}

TEST(free_pages_are_dealt_to_every_cpu_queue)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	uint32_t q, total = 0;
	uint64_t v;

	for (q = 0; q < p->nr_queues; q++) {
		uint32_t n = 0;

		while (utrace_queue_pop(p, &p->freeq[q], &v)) {
			CHECK_INT(v % p->nr_queues, ==, q);
			n++;
		}
		CHECK_INT(n, >=, p->nr_pages / p->nr_queues);
		total += n;
	}
	CHECK_INT(total, ==, p->nr_pages);
	munmap(p, p->size);
}

/* The free pages in all the queues, taken out. */
static uint32_t count_taken_free(struct utrace_pool *p, uint32_t *max_seen)
{
	uint32_t q, n = 0;
	uint64_t v;

	for (q = 0; q < p->nr_queues; q++)
		while (utrace_queue_pop(p, &p->freeq[q], &v)) {
			if (v > *max_seen)
				*max_seen = (uint32_t)v;
			n++;
		}
	return n;
}

TEST(a_pool_that_can_grow_deals_its_pages_on_demand)
{
	struct utrace_pool *p;
	int fd = utrace__pool_create_max(64 << 10, 256 << 10, UTRACE_MODE_DISCARD, &p);
	uint32_t max_seen = 0;

	if (fd < 0)
		TEST_FAIL("utrace__pool_create_max: %d", fd);
	close(fd);
	CHECK(utrace__pool_header_ok(p, p->size));
	CHECK_INT(p->nr_pages, ==, 64);
	CHECK_INT(utrace__pool_dealt(p), ==, 16);
	CHECK_INT(count_taken_free(p, &max_seen), ==, 16);
	CHECK_INT(max_seen, ==, 15);
	/* twice, then more than there is: up to the end, never past it */
	CHECK_INT(utrace__pool_grow(p, 16, 16), ==, 32);
	CHECK_INT(count_taken_free(p, &max_seen), ==, 16);
	CHECK_INT(max_seen, ==, 31);
	CHECK_INT(utrace__pool_grow(p, 32, 1000), ==, 64);
	CHECK_INT(count_taken_free(p, &max_seen), ==, 32);
	CHECK_INT(max_seen, ==, 63);
	CHECK_INT(utrace__pool_grow(p, 64, 16), ==, 64);
	CHECK_INT(count_taken_free(p, &max_seen), ==, 0);
	/* a header claiming more dealt pages than it has is refused */
	p->nr_dealt = 65;
	CHECK(!utrace__pool_header_ok(p, p->size));
	munmap(p, p->size);
}

TEST(a_pool_made_whole_has_every_page_dealt)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);

	CHECK_INT(p->nr_dealt, ==, 256);
	CHECK_INT(utrace__pool_dealt(p), ==, 256);
	CHECK_INT(utrace__pool_grow(p, 256, 16), ==, 256);
	p->nr_dealt = 0;        /* an older pool: all of them */
	CHECK_INT(utrace__pool_dealt(p), ==, 256);
	munmap(p, p->size);
}

TEST(pop_any_takes_its_own_cpu_queue_first_then_the_others)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_OVERWRITE);
	uint32_t last = p->nr_queues - 1;
	uint64_t v;

	CHECK(utrace_queue_push(p, &p->fullq[0], 7));
	CHECK(utrace_queue_push(p, &p->fullq[last], 9));
	CHECK(utrace_queue_pop_any(p, p->fullq, last, &v));
	CHECK_INT(v, ==, last ? 9 : 7);
	/* the CPU's own queue is empty now (or was the same one): the rest */
	CHECK(utrace_queue_pop_any(p, p->fullq, last, &v));
	CHECK_INT(v, ==, last ? 7 : 9);
	CHECK(!utrace_queue_pop_any(p, p->fullq, last, &v));
	/* a CPU number past the queues maps onto them */
	CHECK(utrace_queue_push(p, &p->fullq[utrace_pool_q(p, 1000)], 11));
	CHECK(utrace_queue_pop_any(p, p->fullq, 1000, &v));
	CHECK_INT(v, ==, 11);
	munmap(p, p->size);
}

TEST(readers_drain_the_cpus_full_queues_in_turn)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	uint32_t q = 0, last = p->nr_queues - 1;
	uint64_t v;

	CHECK(utrace_queue_push(p, &p->fullq[0], 1));
	CHECK(utrace_queue_push(p, &p->fullq[0], 2));
	CHECK(utrace_queue_push(p, &p->fullq[last], 3));
	CHECK(utrace_fullq_pop_next(p, &q, &v));
	CHECK_INT(v, ==, 1);
	CHECK(utrace_fullq_pop_next(p, &q, &v));
	CHECK_INT(v, ==, last ? 3 : 2);     /* the next queue before more of q0 */
	CHECK(utrace_fullq_pop_next(p, &q, &v));
	CHECK_INT(v, ==, last ? 2 : 3);
	CHECK(!utrace_fullq_pop_next(p, &q, &v));
	munmap(p, p->size);
}

TEST(give_back_goes_to_the_free_queue_of_the_cpu_that_wrote_the_page)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	uint32_t q, pages[2] = { 3, 4 };
	uint64_t v;

	for (q = 0; q < p->nr_queues; q++)
		while (utrace_queue_pop(p, &p->freeq[q], &v))
			;
	utrace_pool_desc(p, 3)->cpu = p->nr_queues - 1;
	utrace_pool_desc(p, 4)->cpu = 0;
	utrace_pool_desc(p, 3)->state = UTRACE_PAGE_FULL;
	utrace_pool_desc(p, 4)->state = UTRACE_PAGE_FULL;
	utrace__pool_give_back(p, pages, 2);
	CHECK_INT(utrace_pool_desc(p, 3)->state, ==, UTRACE_PAGE_FREE);
	CHECK_INT(utrace_pool_desc(p, 4)->state, ==, UTRACE_PAGE_FREE);
	CHECK(utrace_queue_pop(p, &p->freeq[p->nr_queues - 1], &v));
	CHECK_INT(v, ==, 3);
	CHECK(utrace_queue_pop(p, &p->freeq[0], &v));    /* the same one if only one */
	CHECK_INT(v, ==, 4);
	munmap(p, p->size);
}

/* Empty every free queue: the test hands pages around itself. */
static void take_all_free(struct utrace_pool *p)
{
	uint32_t q;
	uint64_t v;

	for (q = 0; q < p->nr_queues; q++)
		while (utrace_queue_pop(p, &p->freeq[q], &v))
			;
}

TEST(take_full_skips_page_numbers_out_of_range)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	uint32_t q = 0, idx;

	CHECK(utrace_queue_push(p, &p->fullq[0], p->nr_pages));    /* nonsense */
	CHECK(utrace_queue_push(p, &p->fullq[0], 5));
	CHECK(utrace__pool_take_full(p, &q, &idx));
	CHECK_INT(idx, ==, 5);
	CHECK(!utrace__pool_take_full(p, &q, &idx));
	munmap(p, p->size);
}

struct drained {
	uint32_t pages, batches, seen[300];
};

static void drained_page(void *arg, struct utrace_pool *p, uint32_t idx)
{
	struct drained *d = arg;

	CHECK_INT(utrace_pool_desc(p, idx)->state, ==, UTRACE_PAGE_FULL);
	d->seen[d->pages++] = idx;
}

static void drained_batch(void *arg, struct utrace_pool *p)
{
	(void)p;
	((struct drained *)arg)->batches++;
}

TEST(drain_hands_over_every_full_page_in_batches_and_gives_them_back)
{
	static const struct utrace_pool_drain_ops ops = {
		.page = drained_page, .batch_end = drained_batch,
	};
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	struct drained d = { 0 };
	uint32_t i, n = UTRACE_POOL_DRAIN_BATCH + 3, free_pages = 0, q;
	uint64_t v;

	take_all_free(p);
	for (i = 0; i < n; i++) {
		utrace_pool_desc(p, i)->state = UTRACE_PAGE_FULL;
		utrace_pool_desc(p, i)->cpu = i;
		CHECK(utrace_queue_push(p, &p->fullq[i % p->nr_queues], i));
	}
	CHECK_INT(utrace__pool_drain(p, &ops, &d), ==, n);
	CHECK_INT(d.pages, ==, n);
	CHECK_INT(d.batches, ==, 2);
	for (i = 0; i < n; i++)
		CHECK_INT(utrace_pool_desc(p, i)->state, ==, UTRACE_PAGE_FREE);
	for (q = 0; q < p->nr_queues; q++)
		while (utrace_queue_pop(p, &p->freeq[q], &v))
			free_pages++;
	CHECK_INT(free_pages, ==, n);
	/* nothing left: one empty batch */
	CHECK_INT(utrace__pool_drain(p, &ops, &d), ==, 0);
	CHECK_INT(d.batches, ==, 3);
	munmap(p, p->size);
}

TEST(scan_finds_the_pages_being_written_and_the_full_ones_if_asked)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	uint32_t out[256], n;

	utrace_pool_desc(p, 2)->state = UTRACE_PAGE_WRITING;
	utrace_pool_desc(p, 7)->state = UTRACE_PAGE_FULL;
	utrace_pool_desc(p, 9)->state = UTRACE_PAGE_WRITING;
	n = utrace__pool_scan(p, false, out);
	CHECK_INT(n, ==, 2);
	CHECK_INT(out[0], ==, 2);
	CHECK_INT(out[1], ==, 9);
	n = utrace__pool_scan(p, true, out);
	CHECK_INT(n, ==, 3);
	CHECK_INT(out[1], ==, 7);
	utrace__pool_drop(p, 7);
	CHECK_INT(utrace_pool_desc(p, 7)->state, ==, UTRACE_PAGE_FREE);
	CHECK_INT(utrace__pool_scan(p, true, out), ==, 2);
	munmap(p, p->size);
}

TEST(a_reader_peeks_at_a_page_being_written_and_moves_its_read_offset)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_OVERWRITE);
	struct utrace_page_desc *d = utrace_pool_desc(p, 4);
	struct utrace_pool_peek pk;

	d->state = UTRACE_PAGE_WRITING;
	d->seq = 12;
	d->read = 8;
	utrace_pool_page(p, 4)->commit = 40 | UTRACE_RB_MISSED_EVENTS;
	utrace__pool_peek(p, 4, &pk);
	CHECK_INT(pk.seq, ==, 12);
	CHECK_INT(pk.read, ==, 8);
	CHECK_INT(pk.commit, ==, 40 | UTRACE_RB_MISSED_EVENTS);
	CHECK(!utrace__pool_page_reused(p, 4, 12));
	utrace__pool_consumed(p, 4, pk.read, 40);
	CHECK_INT(d->read, ==, 40);
	/* another reader moved it first: left alone */
	utrace__pool_consumed(p, 4, 8, 16);
	CHECK_INT(d->read, ==, 40);
	/* a writer took the page again, or it was given back */
	d->seq = 13;
	CHECK(utrace__pool_page_reused(p, 4, 12));
	d->seq = 12;
	d->state = UTRACE_PAGE_FREE;
	CHECK(utrace__pool_page_reused(p, 4, 12));
	munmap(p, p->size);
}

TEST(the_counters_add_up_every_slot)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_OVERWRITE);

	utrace_pool_slot(p, 0)->lost = 3;
	utrace_pool_slot(p, 5)->overwritten = 10;
	utrace_pool_slot(p, 9)->overwritten = 4;
	p->lost_no_slot = 2;
	p->clear_overwritten = 6;
	p->clear_ts = 99;
	CHECK_INT(utrace__pool_lost_in_slots(p), ==, 17);
	CHECK_INT(utrace__pool_lost_no_slot(p), ==, 2);
	CHECK_INT(utrace__pool_overwritten_since_clear(p), ==, 8);
	CHECK_INT(utrace__pool_clear_ts(p), ==, 99);
	p->clear_overwritten = 20;
	CHECK_INT(utrace__pool_overwritten_since_clear(p), ==, 0);
	CHECK_INT(utrace__pool_dead(p), ==, UTRACE_POOL_ALIVE);
	munmap(p, p->size);
}

/* Each damaged header must be refused, not read. */
TEST(the_header_check_refuses_damaged_pools)
{
	struct utrace_pool *p = make(1 << 20, UTRACE_MODE_DISCARD);
	struct utrace_pool h;
	uint32_t nq = p->nr_queues;

#define REFUSED(what) do {					\
		h = *p;						\
		what;						\
		if (utrace__pool_header_ok(&h, p->size))	\
			TEST_FAIL("accepted: %s", #what);	\
	} while (0)

	REFUSED(h.magic ^= 1);
	REFUSED(h.version = UTRACE_POOL_VERSION - 1);
	REFUSED(h.page_size = 8192);
	REFUSED(h.size += 4096);
	REFUSED(h.nr_pages += 1);
	REFUSED(h.nr_pages = 1u << 31);
	REFUSED(h.nr_slots = UTRACE_POOL_THREADS + 1);
	REFUSED(h.pages_off = h.size);
	REFUSED(h.descs_off = h.pages_off - 64);
	REFUSED(h.slots_off = h.descs_off);
	REFUSED(h.nr_queues = 0);
	REFUSED(h.nr_queues = UTRACE_POOL_QUEUES + 1);
	REFUSED(h.freeq[0].mask = 6);
	REFUSED(h.freeq[0].mask = 1);
	REFUSED(h.fullq[nq - 1].cells_off = h.pages_off - 8);
	REFUSED(h.fullq[nq - 1].cells_off = 0);
	REFUSED(h.freeq[0].cells_off += 4);
	REFUSED(h.fullq[0].mask = (1ull << 40) - 1);
	REFUSED(h.calibx_off = h.calib_off);
	REFUSED(h.calibx_off = h.slots_off);
	REFUSED(h.calibx_off = h.calib_off + UTRACE_POOL_CALIB * 16 + 4);
#undef REFUSED
	/* and the untouched copy passes */
	h = *p;
	CHECK(utrace__pool_header_ok(&h, p->size));
	munmap(p, p->size);
}

static int64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What the trace clocks other than mono are computed from (calib.c). */
TEST(calibration_points_carry_the_raw_clock_and_the_offsets)
{
	struct utrace_calib_point pt[4];
	struct utrace_calib_ext x[4];
	struct utrace_pool *p;
	struct timespec d = { 0, 30000000 };
	int64_t boot, tai;

	utrace__clock_init();
	if (!utrace__clock_tsc)
		return;          /* no invariant TSC here: no calibration */
	p = make(1 << 20, UTRACE_MODE_DISCARD);
	CHECK_INT(p->trace_clock, ==, UTRACE_TCLOCK_MONO);
	CHECK_INT(utrace__pool_calib_points(p, 0, pt, 4), ==, 1);
	CHECK_INT(utrace__pool_calib_exts(p, 0, pt, 1, x), ==, 1);
	CHECK(x[0].point == pt[0].tsc);
	CHECK(x[0].tsc >= pt[0].tsc);
	/* taken just now, within a second */
	CHECK(ns_of(CLOCK_MONOTONIC_RAW) - (int64_t)x[0].raw < 1000000000);
	CHECK(ns_of(CLOCK_MONOTONIC_RAW) >= (int64_t)x[0].raw);
	boot = ns_of(CLOCK_BOOTTIME) - ns_of(CLOCK_MONOTONIC);
	tai = ns_of(CLOCK_TAI) - ns_of(CLOCK_MONOTONIC);
	CHECK(x[0].boot - boot < 1000000 && boot - x[0].boot < 1000000);
	CHECK(x[0].tai - tai < 1000000 && tai - x[0].tai < 1000000);
	/* the second point (20 ms) comes with its own; the offsets, which
	 * did not step, are the first point's to the ns */
	nanosleep(&d, NULL);
	CHECK(utrace__pool_calib_tick(p));
	CHECK_INT(utrace__pool_calib_points(p, 0, pt, 4), ==, 2);
	CHECK_INT(utrace__pool_calib_exts(p, 1, pt + 1, 1, x + 1), ==, 1);
	CHECK(x[1].point == pt[1].tsc);
	CHECK(x[1].raw > x[0].raw && x[1].tsc > x[0].tsc);
	CHECK(x[1].boot == x[0].boot);
	CHECK(x[1].tai == x[0].tai);
	/* past the table: nothing */
	CHECK_INT(utrace__pool_calib_exts(p, UTRACE_POOL_CALIB, pt, 1, x), ==, 0);
	munmap(p, p->size);
}

TEST_MAIN()
