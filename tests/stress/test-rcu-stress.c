/* SPDX-License-Identifier: MIT */
/*
 * Probes registered and unregistered from several threads while others
 * fire the event.  Each probe's data is freed (and poisoned first) right
 * after tracepoint_synchronize_unregister(): a probe still running on
 * freed data is caught by the magic check, by ASan as a use after free,
 * and races on the probe list by TSan.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define CREATE_TRACE_POINTS
#include "utest-events.h"

#include <utrace/utrace.h>

#include "internal.h"
#include "event.h"
#include "test.h"

int utest_cond_evals, utest_assign_evals, utest_reg_ret, utest_regs, utest_unregs;
int utest_reg(void) { return 0; }
void utest_unreg(void) { }

#define MAGIC 0x5eedf00dU
#define FIRERS 3
#define REGISTRARS 2

struct pdata {
	unsigned int magic;
	atomic_ulong hits;
};

static atomic_int stop;
static atomic_ulong fired, probe_hits, records, rounds;

static void probe(void *data, unsigned long long a, unsigned int b)
{
	struct pdata *d = data;

	if (d->magic != MAGIC)
		abort();
	atomic_fetch_add_explicit(&d->hits, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&probe_hits, 1, memory_order_relaxed);
}

static void hook(const struct utrace_event *ev, const void *rec, unsigned int size)
{
	const struct trace_event_raw_utest_simple *r = rec;

	if (size != offsetof(struct trace_event_raw_utest_simple, __data) ||
	    r->a != r->b * 3ULL)
		abort();
	atomic_fetch_add_explicit(&records, 1, memory_order_relaxed);
}

static void *firer(void *arg)
{
	unsigned int i = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		trace_utest_simple(i * 3ULL, i);
		i++;
		atomic_fetch_add_explicit(&fired, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *registrar(void *arg)
{
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct pdata *d = calloc(1, sizeof(*d));

		d->magic = MAGIC;
		if (register_trace_utest_simple(probe, d) != 0)
			abort();
		sched_yield();
		if (unregister_trace_utest_simple(probe, d) != 0)
			abort();
		tracepoint_synchronize_unregister();
		d->magic = 0;
		free(d);
		atomic_fetch_add_explicit(&rounds, 1, memory_order_relaxed);
	}
	return NULL;
}

static void *toggler(void *arg)
{
	struct utrace_event *ev = utrace_event_find("utest", "utest_simple");

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (utrace_event_enable(ev, 1) != 0 || utrace_event_enable(ev, 0) != 0)
			abort();
	}
	return NULL;
}

TEST(register_unregister_while_firing)
{
	pthread_t f[FIRERS], r[REGISTRARS], t;
	struct timespec ts = { 1, 500000000 };
	int i;

	utrace__set_record_hook(hook);
	for (i = 0; i < FIRERS; i++)
		pthread_create(&f[i], NULL, firer, NULL);
	for (i = 0; i < REGISTRARS; i++)
		pthread_create(&r[i], NULL, registrar, NULL);
	pthread_create(&t, NULL, toggler, NULL);
	nanosleep(&ts, NULL);
	/* At least 1.5 s, and until enough happened (a loaded machine may
	 * have run the threads little by then), for at most a minute. */
	for (i = 0; i < 600 && (atomic_load(&rounds) <= 10 || atomic_load(&fired) <= 1000); i++) {
		struct timespec tenth = { 0, 100000000 };

		nanosleep(&tenth, NULL);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < FIRERS; i++)
		pthread_join(f[i], NULL);
	for (i = 0; i < REGISTRARS; i++)
		pthread_join(r[i], NULL);
	pthread_join(t, NULL);
	printf("# fired %lu, probe calls %lu, records %lu, register rounds %lu\n",
	       atomic_load(&fired), atomic_load(&probe_hits),
	       atomic_load(&records), atomic_load(&rounds));
	CHECK_INT(atomic_load(&rounds), >, 10);
	CHECK_INT(atomic_load(&fired), >, 1000);
	/* Everything is off again: the tracepoint is disabled. */
	CHECK(!trace_utest_simple_enabled());
}

TEST_MAIN()
