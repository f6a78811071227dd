/* SPDX-License-Identifier: MIT */
/*
 * A trace instance under load: threads fire an event that is on at the
 * top level and in an instance, a signal handler fires it in the middle
 * of their events (the nested path, through the stash), both buffers are
 * small and in discard mode, and a reader drains both while they fire.
 * Each buffer must account for every event: fired = read + lost, for the
 * top level and for the instance apart (written = read + lost, as the
 * kernel's ring buffer self-test reconciles it).  Run also under TSan.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "utest-events.h"

#include <utrace/utrace.h>

#include "ctl-client.h"
#include "internal.h"
#include "pool.h"
#include "test.h"

int utest_cond_evals, utest_assign_evals, utest_reg_ret, utest_regs, utest_unregs;
int utest_reg(void) { return 0; }
void utest_unreg(void) { }

#define FIRERS 3
#define PER_FIRER 200000

static atomic_int stop, firing;
static atomic_ulong fired;
static pthread_t firers[FIRERS];

static void on_usr1(int sig)
{
	(void)sig;
	trace_utest_simple(1, 7);
	atomic_fetch_add_explicit(&fired, 1, memory_order_relaxed);
}

static void *firer(void *arg)
{
	unsigned int i;

	(void)arg;
	for (i = 0; i < PER_FIRER; i++) {
		trace_utest_simple(i * 3ULL, i);
		atomic_fetch_add_explicit(&fired, 1, memory_order_relaxed);
	}
	atomic_fetch_sub(&firing, 1);
	return NULL;
}

static void *signaller(void *arg)
{
	struct timespec d = { 0, 100 * 1000 };
	unsigned int i = 0;

	(void)arg;
	while (atomic_load(&firing) > 0) {
		pthread_kill(firers[i++ % FIRERS], SIGUSR1);
		nanosleep(&d, NULL);
	}
	return NULL;
}

struct buf {
	struct utrace_pool *p;
	uint64_t read;
};

static void count_page(void *arg, struct utrace_pool *p, uint32_t idx)
{
	struct buf *b = arg;

	b->read += __atomic_load_n(&utrace_pool_desc(p, idx)->nr_events, __ATOMIC_ACQUIRE);
}

static const struct utrace_pool_drain_ops count_ops = { count_page, NULL };

static struct buf bufs[2];

static void *drainer(void *arg)
{
	struct timespec d = { 0, 300 * 1000 };

	(void)arg;
	while (!atomic_load(&stop)) {
		for (int k = 0; k < 2; k++)
			utrace__pool_drain(bufs[k].p, &count_ops, &bufs[k]);
		nanosleep(&d, NULL);
	}
	return NULL;
}

/* A buffer of 'c' (top level or instance): small, discard mode, mapped. */
static int setup(struct utrace__ctl *c, struct buf *b)
{
	uint64_t now;
	int fd;

	if (utrace__ctl_pool_mode(c, UTRACE_MODE_DISCARD) != UTRACE_MODE_DISCARD ||
	    utrace__ctl_buffer_size(c, 8 * UTRACE_PAGE_DATA, &now) != 0 ||
	    utrace__ctl_pool(c, &fd) != 0)
		return -1;
	return utrace__pool_map(fd, &b->p);
}

TEST(instance_accounts_for_every_event)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	struct utrace__ctl *c;
	struct utrace__ctl_info in;
	pthread_t sig, dr;
	char err[256];
	int h, i;

	sigaction(SIGUSR1, &sa, NULL);
	CHECK_INT(utrace__ctl_open(getpid(), &c, err, sizeof(err)), ==, 0);
	h = utrace__ctl_instance_mkdir(c, "stress");
	CHECK(h > 0);
	CHECK_INT(utrace__ctl_instance_mkdir(c, "stress"), ==, -EEXIST);
	CHECK_INT(setup(c, &bufs[0]), ==, 0);
	CHECK_INT(utrace__ctl_set_event(c, "utest:utest_simple", 18), ==, 1);
	utrace__ctl_set_instance(c, (uint32_t)h);
	CHECK_INT(setup(c, &bufs[1]), ==, 0);
	CHECK_INT(utrace__ctl_set_event(c, "utest:utest_simple", 18), ==, 1);

	atomic_store(&firing, FIRERS);
	pthread_create(&dr, NULL, drainer, NULL);
	for (i = 0; i < FIRERS; i++)
		pthread_create(&firers[i], NULL, firer, NULL);
	pthread_create(&sig, NULL, signaller, NULL);
	for (i = 0; i < FIRERS; i++)
		pthread_join(firers[i], NULL);      /* their last pages are queued */
	pthread_join(sig, NULL);
	atomic_store(&stop, 1);
	pthread_join(dr, NULL);

	for (int k = 0; k < 2; k++) {
		uint64_t lost;

		utrace__pool_drain(bufs[k].p, &count_ops, &bufs[k]);
		lost = utrace__pool_lost_in_slots(bufs[k].p) +
		       utrace__pool_lost_no_slot(bufs[k].p);
		printf("# %s: fired %lu, read %llu, lost %llu\n", k ? "instance" : "top level",
		       atomic_load(&fired), (unsigned long long)bufs[k].read,
		       (unsigned long long)lost);
		CHECK(bufs[k].read > 0);
		CHECK_INT(bufs[k].read + lost, ==, atomic_load(&fired));
	}
	/* the instance's info is its own */
	CHECK_INT(utrace__ctl_info(c, &in), ==, 0);
	CHECK_INT(in.nr_pages, ==, 8);
	utrace__ctl_set_instance(c, 0);
	CHECK_INT(utrace__ctl_instance_rmdir(c, "stress"), ==, 0);
	CHECK_INT(utrace__ctl_instance_rmdir(c, "stress"), ==, -ENOENT);
	/* a request for the removed instance */
	utrace__ctl_set_instance(c, (uint32_t)h);
	CHECK_INT(utrace__ctl_tracing_on(c, -1), ==, -ENODEV);
	utrace__ctl_close(c);
}

TEST_MAIN()
