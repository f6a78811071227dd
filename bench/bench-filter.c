/* SPDX-License-Identifier: MIT */
/*
 * The filter and control benchmark: what does an event filter cost a
 * recorded event, and how long does switching an event on from outside
 * take on a busy process?  Built once (see meson.build), with libutrace
 * linked statically (link_whole) so that the program can call the control
 * client (lib/reader/ctl-client.h, hidden symbols) and talk to its OWN agent
 * thread over the control socket: the same path as `utrace filter -p PID`
 * and `utrace enable`.
 *
 * Usage (the event must be on: run under `utrace record -o FILE -- ...`;
 * bench/run.sh gives the filter run `-m 64M`, room for a whole case):
 *   bench-filter filter N ROUNDS CASE...
 *                                  ROUNDS rounds; each round sets each
 *                                  case's filter on bench:bench_ev through
 *                                  the agent and times the event loop over
 *                                  N events (round-robin, so that noise
 *                                  spreads); prints "FILT <case> <round>
 *                                  <n> <ns> <written> <lost>" (events
 *                                  written to / lost from the pool during
 *                                  the loop, from the agent's info; written
 *                                  is counted by full page); after each
 *                                  case it waits for the recorder to empty
 *                                  the pool
 *   bench-filter count N CASE      sets CASE's filter, 1000 warm-up events
 *                                  (bench_filt_warm), then the empty loop
 *                                  and the event loop N times each, for
 *                                  valgrind --tool=callgrind --toggle-collect
 *   bench-filter latency TOGGLES ON_US OFF_US
 *                                  a second thread fires bench_ev in a
 *                                  tight loop; the main thread switches the
 *                                  event off, waits OFF_US, then times
 *                                  utrace__ctl_enable(id, 1) (request,
 *                                  probe registered, answer) and the time
 *                                  from its return until the firing thread's
 *                                  next event is in the pool (its page's
 *                                  commit word moves, seen through the pool
 *                                  mapped from the memfd the agent hands
 *                                  out, as `utrace show` maps it); leaves it
 *                                  on ON_US; prints "CTL <k> <enable_ns>
 *                                  <first_ns> <disable_ns> <moved_while_off>"
 *                                  and at the end "CTLSUM <written> <lost>
 *                                  <fired>"
 *
 * Cases (filters on the two-field event u64 a, u32 b; the loop passes
 * a = i, b = (u32)i with i < 2^32, so every expression below is decided
 * the same way for every event):
 *   none     no filter ("0")
 *   accept1  "b < 4000000000"                 one predicate, always true
 *   reject1  "b >= 4000000000"                one predicate, always false
 *   accept3  "a < 1000000000000 && b < 4000000000 && common_pid > 0"
 *                                             three predicates, all true
 *   reject3  "a < 1000000000000 && b < 4000000000 && common_pid < 0"
 *                                             three predicates, the last false
 *   hist     no filter, a hist trigger "hist:keys=b.log2:vals=a"
 *            (aggregated in the writer, and recorded)
 *   histoff  the same trigger with the event off: aggregated only
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"
#include "bench-events.h"
#include "ctl-client.h"
#include "pool.h"


BENCH_NOINLINE void bench_filt_loop_empty(uint64_t n);
BENCH_NOINLINE void bench_filt_loop(uint64_t n);
BENCH_NOINLINE void bench_filt_warm(uint64_t n);

/* Baseline for callgrind: the loop alone. */
BENCH_NOINLINE void bench_filt_loop_empty(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		BENCH_BARRIER(i);
}

/* The loop under test: one event per iteration (as bench-record.c's). */
BENCH_NOINLINE void bench_filt_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace_bench_ev(i, (uint32_t)i);
		BENCH_BARRIER(i);
	}
}

/* The same loop under another name, left out of the callgrind count. */
BENCH_NOINLINE void bench_filt_warm(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		trace_bench_ev(i, (uint32_t)i);
		BENCH_BARRIER(i);
	}
}

struct filt_case {
	const char *name;
	const char *expr;
	int accepts;
	const char *trigger;     /* a trigger set for the case, or NULL */
	int off;                 /* the event switched off (the trigger holds it) */
};

static const struct filt_case filt_cases[] = {
	{ "none", "0", 1, NULL, 0 },
	{ "accept1", "b < 4000000000", 1, NULL, 0 },
	{ "reject1", "b >= 4000000000", 0, NULL, 0 },
	{ "accept3", "a < 1000000000000 && b < 4000000000 && common_pid > 0", 1, NULL, 0 },
	{ "reject3", "a < 1000000000000 && b < 4000000000 && common_pid < 0", 0, NULL, 0 },
	/* a hist trigger aggregating every event (b.log2: 32 keys), the
	 * event recorded too; and the same with the event off (soft mode:
	 * aggregated, not recorded) */
	{ "hist", "0", 1, "hist:keys=b.log2:vals=a", 0 },
	{ "histoff", "0", 0, "hist:keys=b.log2:vals=a", 1 },
};
#define NR_FILT (sizeof(filt_cases) / sizeof(filt_cases[0]))

static const struct filt_case *find_case(const char *name)
{
	for (size_t i = 0; i < NR_FILT; i++)
		if (strcmp(filt_cases[i].name, name) == 0)
			return &filt_cases[i];
	fprintf(stderr, "bench-filter: no case '%s'\n", name);
	exit(2);
}

static void wait_on(void)
{
	for (int i = 0; i < 2000 && !trace_bench_ev_enabled(); i++)
		usleep(10000);
	if (!trace_bench_ev_enabled()) {
		fprintf(stderr, "bench-filter: the event is not on (run me under utrace record)\n");
		exit(3);
	}
}

/* A control connection to our own agent, and bench:bench_ev's id. */
static struct utrace__ctl *ctl;
static uint32_t ev_id;

static void ctl_up(void)
{
	struct utrace__ctl_event *evs;
	size_t nr;
	char err[256];
	int r, found = 0;

	r = utrace__ctl_open(getpid(), &ctl, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "bench-filter: utrace__ctl_open: %s\n", err);
		exit(1);
	}
	r = utrace__ctl_events(ctl, &evs, &nr);
	if (r < 0) {
		fprintf(stderr, "bench-filter: utrace__ctl_events: %s\n", utrace__ctl_errmsg(ctl));
		exit(1);
	}
	for (size_t i = 0; i < nr; i++) {
		if (strcmp(evs[i].system, "bench") == 0 && strcmp(evs[i].name, "bench_ev") == 0) {
			ev_id = evs[i].id;
			found = 1;
		}
	}
	utrace__ctl_events_free(evs, nr);
	if (!found) {
		fprintf(stderr, "bench-filter: the agent does not list bench:bench_ev\n");
		exit(1);
	}
}

static void set_case(const struct filt_case *c)
{
	static const struct filt_case *prev;
	struct utrace__ctl_filter_error fe;
	int r = utrace__ctl_filter(ctl, ev_id, c->expr, &fe);
	char bang[128];

	if (r < 0) {
		fprintf(stderr, "bench-filter: filter '%s' refused (%d): pos %d: %s\n",
			c->expr, r, fe.pos, fe.msg);
		exit(1);
	}
	/* the previous case's trigger goes, the event back on */
	if (prev && prev->trigger) {
		snprintf(bang, sizeof(bang), "!%s", prev->trigger);
		r = utrace__ctl_trigger(ctl, ev_id, bang, 0, NULL);
		if (r == 0 && prev->off)
			r = utrace__ctl_enable(ctl, ev_id, 1);
		if (r < 0) {
			fprintf(stderr, "bench-filter: cannot remove '%s' (%d)\n", prev->trigger, r);
			exit(1);
		}
	}
	prev = c;
	if (c->trigger) {
		r = utrace__ctl_trigger(ctl, ev_id, c->trigger, 0, NULL);
		if (r == 0 && c->off)
			r = utrace__ctl_enable(ctl, ev_id, 0);
		if (r < 0) {
			fprintf(stderr, "bench-filter: trigger '%s' refused (%d)\n", c->trigger, r);
			exit(1);
		}
	}
}

static void pool_counts(uint64_t *written, uint64_t *lost)
{
	struct utrace__ctl_info info;

	if (utrace__ctl_info(ctl, &info) < 0) {
		fprintf(stderr, "bench-filter: utrace__ctl_info: %s\n", utrace__ctl_errmsg(ctl));
		exit(1);
	}
	*written = info.written;
	*lost = info.lost;
}

/* Wait (up to 2 s) until the recorder has taken the full pages, so that
 * the next case starts with an empty pool. */
static void drain(void)
{
	struct utrace__ctl_info info;

	for (int i = 0; i < 2000; i++) {
		if (utrace__ctl_info(ctl, &info) < 0 || info.pages_used <= 2)
			return;
		usleep(1000);
	}
}

/* ------------------------------------------------------------- filters */

static int cmd_filter(uint64_t n, uint64_t rounds, int nc, char **names)
{
	wait_on();
	ctl_up();
	for (int k = 0; k < nc; k++)
		find_case(names[k]);
	/* Spin for 0.2 s first: no cold CPU for the first case timed. */
	for (uint64_t t0 = now_ns(); now_ns() - t0 < 200000000u;)
		bench_filt_loop_empty(1000000);
	for (uint64_t r = 0; r < rounds; r++) {
		for (int k = 0; k < nc; k++) {
			const struct filt_case *c = find_case(names[k]);
			uint64_t w0, l0, w1, l1, t0, t1;

			set_case(c);
			bench_filt_warm(n / 100 ? n / 100 : 1);
			pool_counts(&w0, &l0);
			t0 = now_ns();
			bench_filt_loop(n);
			t1 = now_ns();
			pool_counts(&w1, &l1);
			drain();
			printf("FILT %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			       c->name, r, n, t1 - t0, w1 - w0, l1 - l0);
			fflush(stdout);
		}
	}
	set_case(find_case("none"));
	return 0;
}

static int cmd_count(uint64_t n, const char *name)
{
	const struct filt_case *c = find_case(name);
	uint64_t w0, l0, w1, l1;

	wait_on();
	ctl_up();
	set_case(c);
	bench_filt_warm(1000);
	pool_counts(&w0, &l0);
	bench_filt_loop_empty(n);
	bench_filt_loop(n);
	pool_counts(&w1, &l1);
	printf("COUNT %s %" PRIu64 " written %" PRIu64 " lost %" PRIu64 "\n",
	       c->name, n, w1 - w0, l1 - l0);
	set_case(find_case("none"));
	return 0;
}

/* ------------------------------------------------------------- latency */

static int stop_firing;
static uint64_t fired;
static uint64_t fire_i;
static uint64_t first_on_ns;    /* set by the firing thread */
static int want_note;
static pid_t firing_tid;

static void *firing_main(void *arg)
{
	uint64_t i = 0;

	(void)arg;
	__atomic_store_n(&firing_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop_firing, __ATOMIC_RELAXED)) {
		int on = trace_bench_ev_enabled();

		trace_bench_ev(i, (uint32_t)i);
		BENCH_BARRIER(i);
		i++;
		__atomic_store_n(&fire_i, i, __ATOMIC_RELAXED);
		/* The first event fired with the event seen on after the
		 * main thread asked for a note: when it was written. */
		if (__builtin_expect(on && __atomic_load_n(&want_note, __ATOMIC_RELAXED), 0)) {
			__atomic_store_n(&want_note, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&first_on_ns, now_ns(), __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&fired, i, __ATOMIC_RELEASE);
	return NULL;
}

/* How far the firing thread has written into the pool: its newest page
 * (the thread's page number) and that page's commit offset.  Grows with
 * every event it commits; never grows while the event is off. */
static uint64_t progress(struct utrace_pool *p, uint32_t tid)
{
	uint64_t best = 0;

	for (uint32_t i = 0; i < p->nr_pages; i++) {
		const struct utrace_page_desc *d = utrace_pool_desc(p, i);
		uint32_t st = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
		uint64_t key, commit;

		if (st == UTRACE_PAGE_FREE || __atomic_load_n(&d->tid, __ATOMIC_RELAXED) != tid)
			continue;
		commit = __atomic_load_n(&utrace_pool_page(p, i)->commit, __ATOMIC_ACQUIRE);
		key = (__atomic_load_n(&d->seq, __ATOMIC_RELAXED) + 1) << 32 |
		      (commit & 0xffffu);
		if (key > best)
			best = key;
	}
	return best;
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int cmd_latency(uint64_t toggles, uint64_t on_us, uint64_t off_us)
{
	struct utrace_pool *pool;
	pthread_t th;
	uint64_t w0, l0, w1, l1;
	int fd, r;

	wait_on();
	ctl_up();
	r = utrace__ctl_pool(ctl, &fd);
	if (r < 0 || (r = utrace__pool_map(fd, &pool)) < 0) {
		fprintf(stderr, "bench-filter: cannot map the pool: %s\n", strerror(-r));
		return 1;
	}
	close(fd);
	set_case(find_case("none"));
	pool_counts(&w0, &l0);
	if (pthread_create(&th, NULL, firing_main, NULL)) {
		fprintf(stderr, "bench-filter: pthread_create failed\n");
		return 1;
	}
	while (!__atomic_load_n(&firing_tid, __ATOMIC_ACQUIRE))
		sleep_us(100);
	sleep_us(on_us);
	for (uint64_t k = 0; k < toggles; k++) {
		uint64_t t0, t1, t2, t3, t4, t5, p0, p1, f1, f2;
		int moved;

		t3 = now_ns();
		if ((r = utrace__ctl_enable(ctl, ev_id, 0)) < 0)
			goto fail;
		t4 = now_ns();
		/* Let an event in flight at the switch-off land. */
		sleep_us(off_us / 2 > 0 ? off_us / 2 : 1);
		p0 = progress(pool, (uint32_t)firing_tid);
		sleep_us(off_us - off_us / 2);
		p1 = progress(pool, (uint32_t)firing_tid);
		/* Anything written while off (not a page the recorder
		 * freed: that can only make it smaller). */
		moved = p1 > p0;
		__atomic_store_n(&first_on_ns, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&want_note, 1, __ATOMIC_RELEASE);
		t0 = now_ns();
		if ((r = utrace__ctl_enable(ctl, ev_id, 1)) < 0)
			goto fail;
		t1 = now_ns();
		f1 = __atomic_load_n(&fire_i, __ATOMIC_RELAXED);
		for (;;) {
			t2 = now_ns();
			if (progress(pool, (uint32_t)firing_tid) > p1)
				break;
			if (t2 - t1 > 2000000000u) {
				fprintf(stderr, "bench-filter: no event in the pool 2 s after "
					"the enable\n");
				t2 = 0;
				break;
			}
		}
		f2 = __atomic_load_n(&fire_i, __ATOMIC_RELAXED);
		/* The firing thread's own note: wait for it (it is set
		 * right after the event the pool already shows). */
		for (int w = 0; w < 1000 && !__atomic_load_n(&first_on_ns, __ATOMIC_ACQUIRE); w++)
			sleep_us(100);
		t5 = __atomic_load_n(&first_on_ns, __ATOMIC_ACQUIRE);
		printf("CTL %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRIu64 " %d %" PRIu64 " %" PRId64 "\n",
		       k, t1 - t0, t2 ? (int64_t)(t2 - t1) : (int64_t)-1, t4 - t3, moved,
		       f2 - f1, t5 ? (int64_t)(t5 - t1) : INT64_MIN);
		fflush(stdout);
		sleep_us(on_us);
	}
	__atomic_store_n(&stop_firing, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	pool_counts(&w1, &l1);
	printf("CTLSUM %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", w1 - w0, l1 - l0, fired);
	return 0;
fail:
	fprintf(stderr, "bench-filter: utrace__ctl_enable: %s\n", utrace__ctl_errmsg(ctl));
	__atomic_store_n(&stop_firing, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	return 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-filter filter N ROUNDS CASE... | count N CASE | "
		"latency TOGGLES ON_US OFF_US\n");
	return 2;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc >= 5 && strcmp(argv[1], "filter") == 0)
		ret = cmd_filter(parse_u64("bench-filter", argv[2]),
				 parse_u64("bench-filter", argv[3]), argc - 4, argv + 4);
	else if (argc == 4 && strcmp(argv[1], "count") == 0)
		ret = cmd_count(parse_u64("bench-filter", argv[2]), argv[3]);
	else if (argc == 5 && strcmp(argv[1], "latency") == 0)
		ret = cmd_latency(parse_u64("bench-filter", argv[2]),
				  parse_u64("bench-filter", argv[3]),
				  parse_u64("bench-filter", argv[4]));
	else
		return usage();
	if (ctl)
		utrace__ctl_close(ctl);
	return ret;
}
