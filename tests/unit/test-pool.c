/* SPDX-License-Identifier: MIT */
/*
 * The event pool (lib/common/pool.c): its queue pairs per CPU, giving
 * pages back, and the header check that the recorder and the live readers
 * run on a pool another process sent them (which they must not trust).
 */
#include <sys/mman.h>
#include <unistd.h>

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
#undef REFUSED
	/* and the untouched copy passes */
	h = *p;
	CHECK(utrace__pool_header_ok(&h, p->size));
	munmap(p, p->size);
}

TEST_MAIN()
