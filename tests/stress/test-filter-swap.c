/* SPDX-License-Identifier: MIT */
/*
 * Filters replaced through the process's own agent while threads record
 * the event as fast as they can, and a signal handler records it in the
 * middle of their events (the nested path).  Each old program is freed
 * once the agent's grace period says no thread can still run it: a thread
 * still inside it would read freed memory, which ASan reports; under TSan
 * the writers take the RCU read side instead, and races show there.
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
#include "test.h"

int utest_cond_evals, utest_assign_evals, utest_reg_ret, utest_regs, utest_unregs;
int utest_reg(void) { return 0; }
void utest_unreg(void) { }

#define FIRERS 3

static atomic_int stop;
static atomic_ulong fired;
static pthread_t firers[FIRERS];

static void on_usr1(int sig)
{
	(void)sig;
	trace_utest_simple(1, 7);
}

static void *firer(void *arg)
{
	unsigned int i = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		trace_utest_simple(i * 3ULL, i);
		i++;
		atomic_fetch_add_explicit(&fired, 1, memory_order_relaxed);
	}
	return NULL;
}

/* Wait until 'n' events were fired, for up to 30 s. */
static int fired_since(unsigned long n)
{
	struct timespec d = { 0, 1000 * 1000 };

	for (int t = 0; t < 30000; t++) {
		if (atomic_load(&fired) >= n)
			return 1;
		nanosleep(&d, NULL);
	}
	return 0;
}

static void *signaller(void *arg)
{
	struct timespec d = { 0, 200 * 1000 };
	unsigned int i = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_kill(firers[i++ % FIRERS], SIGUSR1);
		nanosleep(&d, NULL);
	}
	return NULL;
}

TEST(filters_replaced_while_recording)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	struct utrace__ctl *c;
	struct utrace__ctl_event *evs;
	struct utrace__ctl_filter_error fe;
	char err[256], expr[128];
	pthread_t sig;
	size_t nr, k;
	uint32_t id = 0;
	int i, bad = 0;

	sigaction(SIGUSR1, &sa, NULL);
	CHECK_INT(utrace__ctl_open(getpid(), &c, err, sizeof(err)), ==, 0);
	CHECK_INT(utrace__ctl_set_event(c, "utest:utest_simple", 18), ==, 1);
	CHECK_INT(utrace__ctl_events(c, &evs, &nr), ==, 0);
	for (k = 0; k < nr; k++)
		if (!strcmp(evs[k].name, "utest_simple"))
			id = evs[k].id;
	utrace__ctl_events_free(evs, nr);
	CHECK(id != 0);
	for (i = 0; i < FIRERS; i++)
		pthread_create(&firers[i], NULL, firer, NULL);
	pthread_create(&sig, NULL, signaller, NULL);
	for (i = 0; i < 300; i++) {
		/* Each filter is swapped while events fire: wait until the
		 * firers have recorded some since the last swap (on a loaded
		 * machine they may not have run yet). */
		if (!fired_since(i * 3UL + 3)) {
			bad++;
			break;
		}
		switch (i % 4) {
		case 0:
			snprintf(expr, sizeof(expr), "b >= %d", i * 100);
			break;
		case 1:
			snprintf(expr, sizeof(expr), "a == 0 || (b & 1 && b < %d)", i * 1000);
			break;
		case 2:
			snprintf(expr, sizeof(expr), "COMM ~ \"test-*\" && CPU < 64");
			break;
		default:
			snprintf(expr, sizeof(expr), "0");
			break;
		}
		if (utrace__ctl_filter(c, id, expr, &fe) != 0)
			bad++;
		if (i % 50 == 0)   /* a bad one: drops the filter */
			CHECK(utrace__ctl_filter(c, id, "b > x", &fe) < 0);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < FIRERS; i++)
		pthread_join(firers[i], NULL);
	pthread_join(sig, NULL);
	CHECK_INT(bad, ==, 0);
	CHECK(atomic_load(&fired) > 0);
	utrace__ctl_close(c);
}

/* More threads alive at once than the pool has thread slots (1024): the
 * others' events are lost and counted, and nothing writes out of bounds. */
#define MANY 1100
static pthread_barrier_t many_barrier;

static void *many_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&many_barrier);
	for (int i = 0; i < 10; i++)
		trace_utest_simple((unsigned long long)i * 3, (unsigned int)i);
	pthread_barrier_wait(&many_barrier);
	return NULL;
}

TEST(more_threads_than_slots)
{
	static pthread_t th[MANY];
	struct utrace__ctl *c;
	struct utrace__ctl_info in;
	pthread_attr_t at;
	char err[256];
	int i, n = 0;

	CHECK_INT(utrace__ctl_open(getpid(), &c, err, sizeof(err)), ==, 0);
	CHECK_INT(utrace__ctl_set_event(c, "utest:utest_simple", 18), ==, 1);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 128 << 10);
	pthread_barrier_init(&many_barrier, NULL, MANY);
	for (i = 0; i < MANY; i++)
		if (pthread_create(&th[i], &at, many_thread, NULL) == 0)
			n++;
		else
			break;
	if (n < MANY) {
		/* cannot start enough threads here: let the started ones go */
		printf("# only %d threads could start; skipping the check\n", n);
		atomic_store(&stop, 1);
		exit(0);
	}
	for (i = 0; i < MANY; i++)
		pthread_join(th[i], NULL);
	CHECK_INT(utrace__ctl_info(c, &in), ==, 0);
	/* at least the threads beyond the slots lost their 10 events each */
	CHECK(in.lost >= (uint64_t)(MANY - 1024) * 10);
	utrace__ctl_close(c);
}

TEST_MAIN()
