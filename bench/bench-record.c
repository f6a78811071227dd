/* SPDX-License-Identifier: MIT */
/*
 * The recording benchmark: what does a switched-on two-field event cost
 * when it is really recorded, and what does it leave on disk?  One source,
 * built three times (see meson.build):
 *
 *   bench-record-utrace  -DBENCH_UTRACE  trace_bench_ev(), run under
 *                                        `utrace record -o FILE -- prog`
 *   bench-record-lttng   -DBENCH_LTTNG   tracepoint(bench, bench_ev), run
 *                                        while an lttng session records
 *                                        bench:bench_ev to disk
 *   bench-record-raw     -DBENCH_RAW     no tracer: each event stores a
 *                                        24-byte record {u64 rdtsc; u64 a;
 *                                        u32 b; u32 pad} into a preallocated
 *                                        (and pre-touched) per-thread array
 *
 * Usage:
 *   bench-record-X run N THREADS   THREADS threads each run the loop N
 *                                  times, all started together; each times
 *                                  its own loop with clock_gettime and
 *                                  prints "REC <thread> <n> <ns> <cpu-ns>
 *                                  <cpu>": wall time, the thread's own CPU
 *                                  time, the CPU it ended on.  BENCH_PIN=
 *                                  0,1 runs thread 0 on CPU 0, thread 1 on
 *                                  CPU 1 (one number per thread)
 *   bench-record-X for SECONDS     (utrace, lttng) one thread fires the
 *                                  event at full speed for SECONDS and
 *                                  prints "FOR <events> <ns>"
 *   bench-record-X calls N         no events: N calls of an empty
 *                                  function, timed; prints "CALLS <cpu>
 *                                  <n> <ns>" (with BENCH_PIN=K, on CPU K):
 *                                  how fast this CPU runs plain code
 *   bench-record-X pairs N         (utrace, lttng) request pairs for the
 *                                  latency report: N begins (bench_ev,
 *                                  its b the id) and N ends (bench_str,
 *                                  its n the same id, one of the 8 paths),
 *                                  PAIR_LAG ids in flight (the end of id
 *                                  i follows the begin of i + PAIR_LAG);
 *                                  prints "PAIRS <n> <ns>"
 *   bench-record-X count N         a short warm-up (1000 events, in
 *                                  bench_rec_warm), the empty loop and the
 *                                  event loop N times each, for valgrind
 *                                  --tool=callgrind --toggle-collect=...
 *
 * BENCH_RAW_PAD=K (16, 32, 48, 64), BENCH_RAW_TSC=0: the raw store's
 * calibration, see bench_rec_loop_pad16().
 *
 * BENCH_EV=str: every mode fires the string event instead (bench_str: a
 * u32 and a path of 7 to 28 bytes; the raw store copies the path after
 * strlen() into a 48-byte slot), counted in bench_rec_loop_str.
 *
 * The utrace and LTTng builds refuse to run (exit 3) when the event is not
 * on, so a broken session shows up as an error, not as a fast figure.
 * The loops have the same skeleton as bench.c's: a 64-bit counter passed
 * (with its low 32 bits) as the event's arguments, and an empty asm that
 * uses it and clobbers memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"
#if defined(BENCH_UTRACE)
#include "bench-events.h"
#define BENCH_EVENT(ctx, i) trace_bench_ev((i), (uint32_t)(i))
#define BENCH_ON() trace_bench_ev_enabled()
#define BENCH_STR_EVENT(ctx, i, p) trace_bench_str((uint32_t)(i), (p))
#define BENCH_STR_ON() trace_bench_str_enabled()
#define BENCH_NAME "utrace"
#elif defined(BENCH_LTTNG)
#include "bench-lttng-tp.h"
#define BENCH_EVENT(ctx, i) tracepoint(bench, bench_ev, (i), (uint32_t)(i))
#define BENCH_ON() (tracepoint_enabled(bench, bench_ev) != 0)
#define BENCH_STR_EVENT(ctx, i, p) tracepoint(bench, bench_str, (uint32_t)(i), (p))
#define BENCH_STR_ON() (tracepoint_enabled(bench, bench_str) != 0)
#define BENCH_NAME "lttng"
#elif defined(BENCH_RAW)
struct raw_rec {
	uint64_t tsc;
	uint64_t a;
	uint32_t b;
	uint32_t pad;
};
_Static_assert(sizeof(struct raw_rec) == 24, "the raw record is 24 bytes");
#define BENCH_EVENT(ctx, i) do {					\
		struct raw_rec *r_ = (struct raw_rec *)(ctx) + (i);	\
		r_->tsc = __builtin_ia32_rdtsc();			\
		r_->a = (i);						\
		r_->b = (uint32_t)(i);					\
		r_->pad = 0;						\
	} while (0)
/* The string event's raw record: {u64 rdtsc; u32 n; char path[]}, in a
 * 48-byte slot; the path's length found and its bytes copied, as a
 * tracer must. */
#define RAW_STR_SLOT 48
#define BENCH_STR_EVENT(ctx, i, p) do {					\
		unsigned char *s_ = (unsigned char *)(ctx) + (i) * RAW_STR_SLOT; \
		uint64_t t_ = __builtin_ia32_rdtsc();			\
		uint32_t n_ = (uint32_t)(i);				\
		size_t l_ = strlen(p);					\
		memcpy(s_, &t_, 8);					\
		memcpy(s_ + 8, &n_, 4);					\
		memcpy(s_ + 12, (p), l_ + 1);				\
	} while (0)
#define BENCH_ON() 1
#define BENCH_STR_ON() 1
#define BENCH_NAME "raw"
#else
#error "build with -DBENCH_UTRACE, -DBENCH_LTTNG or -DBENCH_RAW"
#endif

BENCH_NOINLINE void bench_rec_loop_empty(uint64_t n, void *ctx);
BENCH_NOINLINE uint64_t bench_rec_call(uint64_t x);
BENCH_NOINLINE void bench_rec_loop(uint64_t n, void *ctx);
BENCH_NOINLINE void bench_rec_warm(uint64_t n, void *ctx);
BENCH_NOINLINE void bench_rec_loop_str(uint64_t n, void *ctx);
BENCH_NOINLINE void bench_rec_warm_str(uint64_t n, void *ctx);
#if !defined(BENCH_RAW)
BENCH_NOINLINE void bench_rec_loop_pair(uint64_t n, void *ctx);
#endif

/* BENCH_EV=str: the string event (an int and a 7..28-byte path) instead
 * of the two-integer one, in every mode. */
static int str_mode;

/* The paths of the string event, 7 to 28 bytes (17.5 on average). */
static const char *const bench_paths[8] = {
	"/etc/ho",                      /* 7 */
	"/usr/lib/libc",                /* 13 */
	"/var/log/syslog.1",            /* 17 */
	"/home/user/src/main.c",        /* 21 */
	"/tmp/x.tmp",                   /* 10 */
	"/proc/self/status/xyzw",       /* 22 */
	"/usr/share/doc/utrace/README", /* 28 */
	"/srv/www/index.html",          /* 19 */
};

/* Baseline for callgrind: the loop alone. */
BENCH_NOINLINE void bench_rec_loop_empty(uint64_t n, void *ctx)
{
	for (uint64_t i = 0; i < n; i++)
		BENCH_BARRIER(i);
	BENCH_BARRIER(ctx);
}

/* The 'calls' mode's function: a call and a return, nothing else. */
BENCH_NOINLINE uint64_t bench_rec_call(uint64_t x)
{
	BENCH_BARRIER(x);
	return x + 1;
}

/* The loop under test: one event per iteration. */
BENCH_NOINLINE void bench_rec_loop(uint64_t n, void *ctx)
{
	for (uint64_t i = 0; i < n; i++) {
		BENCH_EVENT(ctx, i);
		BENCH_BARRIER(i);
	}
	BENCH_BARRIER(ctx);
}

/* The same loop under another name, so that callgrind can leave the
 * thread's first events (slot, first page) out of the count. */
BENCH_NOINLINE void bench_rec_warm(uint64_t n, void *ctx)
{
	for (uint64_t i = 0; i < n; i++) {
		BENCH_EVENT(ctx, i);
		BENCH_BARRIER(i);
	}
	BENCH_BARRIER(ctx);
}

/* The same two loops with the string event. */
BENCH_NOINLINE void bench_rec_loop_str(uint64_t n, void *ctx)
{
	for (uint64_t i = 0; i < n; i++) {
		BENCH_STR_EVENT(ctx, i, bench_paths[i & 7]);
		BENCH_BARRIER(i);
	}
	BENCH_BARRIER(ctx);
}

BENCH_NOINLINE void bench_rec_warm_str(uint64_t n, void *ctx)
{
	for (uint64_t i = 0; i < n; i++) {
		BENCH_STR_EVENT(ctx, i, bench_paths[i & 7]);
		BENCH_BARRIER(i);
	}
	BENCH_BARRIER(ctx);
}

#if !defined(BENCH_RAW)
/* The 'pairs' mode: begin i, then the end of i - PAIR_LAG, so that
 * PAIR_LAG requests wait for their end at any time (a reader pairing
 * them keeps that many open), then the last PAIR_LAG ends. */
#define PAIR_LAG 64
BENCH_NOINLINE void bench_rec_loop_pair(uint64_t n, void *ctx)
{
	for (uint64_t i = 0; i < n + PAIR_LAG; i++) {
		if (i < n)
			BENCH_EVENT(ctx, i);
		if (i >= PAIR_LAG)
			BENCH_STR_EVENT(ctx, i - PAIR_LAG, bench_paths[(i - PAIR_LAG) & 7]);
		BENCH_BARRIER(i);
	}
	BENCH_BARRIER(ctx);
}
#endif

#if defined(BENCH_RAW)
/*
 * The floor's calibration (BENCH_RAW_PAD=K, BENCH_RAW_TSC=0): what the raw
 * store is made of.  PAD=K adds K independent one-cycle instructions
 * (moves of constants into four registers) to each event: the slope of
 * ns/event against K is what an instruction beside rdtsc costs, and
 * whether it overlaps the rdtsc at all.  TSC=0 stores the loop counter
 * instead of the time: the raw store without its rdtsc.
 */
#define RAW_PAD_LOOP(k)							\
	BENCH_NOINLINE void bench_rec_loop_pad##k(uint64_t n, void *ctx); \
	BENCH_NOINLINE void bench_rec_loop_pad##k(uint64_t n, void *ctx) \
	{								\
		uint64_t a, b, c, d;					\
		for (uint64_t i = 0; i < n; i++) {			\
			BENCH_EVENT(ctx, i);				\
			__asm__ __volatile__(".rept " #k "/4\n\t"	\
					     "mov $1, %0\n\tmov $2, %1\n\t" \
					     "mov $3, %2\n\tmov $4, %3\n\t" \
					     ".endr"			\
					     : "=r"(a), "=r"(b), "=r"(c), "=r"(d)); \
			BENCH_BARRIER(i);				\
		}							\
		BENCH_BARRIER(ctx);					\
	}
RAW_PAD_LOOP(16)
RAW_PAD_LOOP(32)
RAW_PAD_LOOP(48)
RAW_PAD_LOOP(64)

BENCH_NOINLINE void bench_rec_loop_notsc(uint64_t n, void *ctx);
BENCH_NOINLINE void bench_rec_loop_notsc(uint64_t n, void *ctx)
{
	for (uint64_t i = 0; i < n; i++) {
		struct raw_rec *r = (struct raw_rec *)ctx + i;

		r->tsc = i;
		r->a = i;
		r->b = (uint32_t)i;
		r->pad = 0;
		BENCH_BARRIER(i);
	}
	BENCH_BARRIER(ctx);
}

static int raw_pad = -1;      /* BENCH_RAW_PAD, or -1 */
static int raw_notsc;         /* BENCH_RAW_TSC=0 */
#endif

static void loop(uint64_t n, void *ctx)
{
#if defined(BENCH_RAW)
	if (raw_notsc) {
		bench_rec_loop_notsc(n, ctx);
		return;
	}
	switch (raw_pad) {
	case 16: bench_rec_loop_pad16(n, ctx); return;
	case 32: bench_rec_loop_pad32(n, ctx); return;
	case 48: bench_rec_loop_pad48(n, ctx); return;
	case 64: bench_rec_loop_pad64(n, ctx); return;
	default: break;
	}
#endif
	if (str_mode)
		bench_rec_loop_str(n, ctx);
	else
		bench_rec_loop(n, ctx);
}

/* The utrace event is on from the start under `utrace record`; the LTTng
 * one once the session daemon has seen the program, which can take a
 * while (longer under valgrind). */
static void wait_on(void)
{
	for (int i = 0; i < 2000 && !(str_mode ? BENCH_STR_ON() : BENCH_ON()); i++)
		usleep(10000);
	if (!(str_mode ? BENCH_STR_ON() : BENCH_ON())) {
		fprintf(stderr, "bench-record-%s: the event is not on (%s)\n", BENCH_NAME,
#if defined(BENCH_UTRACE)
			"run me under utrace record"
#else
			"no session daemon or session with bench:bench_ev?"
#endif
			);
		exit(3);
	}
}

/* Room for the raw store: N records, touched now so that no page fault
 * lands in the timed loop.  NULL for the tracers. */
static void *make_ctx(uint64_t n)
{
#if defined(BENCH_RAW)
	size_t size = (size_t)n * (str_mode ? RAW_STR_SLOT : sizeof(struct raw_rec));
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		perror("bench-record-raw: mmap");
		exit(1);
	}
	memset(p, 0, size);
	return p;
#else
	(void)n;
	return NULL;
#endif
}

static void free_ctx(void *ctx, uint64_t n)
{
#if defined(BENCH_RAW)
	munmap(ctx, (size_t)n * (str_mode ? RAW_STR_SLOT : sizeof(struct raw_rec)));
#else
	(void)ctx;
	(void)n;
#endif
}

struct worker {
	pthread_t th;
	int idx;
	int pin;              /* CPU to run on, or -1 */
	int cpu;              /* CPU it was on when its loop ended */
	uint64_t n;
	uint64_t ns;          /* wall time of its loop */
	uint64_t cpu_ns;      /* its own CPU time in the loop */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static pthread_barrier_t start_line;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	void *ctx = make_ctx(w->n);
	uint64_t t0, t1, c0;

	if (w->pin >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->pin, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
			fprintf(stderr, "bench-record: cannot run on CPU %d\n", w->pin);
			exit(1);
		}
	}

	/* Spin for 0.2 s with no events, so that the timed loop does not
	 * pay for a cold CPU (clock ramp-up, cold caches). */
	for (t0 = now_ns(); now_ns() - t0 < 200000000u;)
		bench_rec_loop_empty(1000000, ctx);
	pthread_barrier_wait(&start_line);
	c0 = thread_cpu_ns();
	t0 = now_ns();
	loop(w->n, ctx);
	t1 = now_ns();
	w->cpu_ns = thread_cpu_ns() - c0;
	w->cpu = sched_getcpu();
	w->ns = t1 - t0;
	free_ctx(ctx, w->n);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench-record-%s run N THREADS | count N | calls N | "
		"for SECONDS | pairs N\n",
		BENCH_NAME);
	return 2;
}

int main(int argc, char **argv)
{
	const char *ev = getenv("BENCH_EV");

	str_mode = ev && strcmp(ev, "str") == 0;
#if defined(BENCH_RAW)
	const char *pad = getenv("BENCH_RAW_PAD"), *tsc = getenv("BENCH_RAW_TSC");

	if (pad && *pad) {
		raw_pad = atoi(pad);
		if (raw_pad != 0 && raw_pad != 16 && raw_pad != 32 && raw_pad != 48 &&
		    raw_pad != 64) {
			fprintf(stderr, "bench-record-raw: BENCH_RAW_PAD is 0, 16, 32, 48 or 64\n");
			return 2;
		}
	}
	raw_notsc = tsc && strcmp(tsc, "0") == 0;
	if ((raw_pad > 0 || raw_notsc) && str_mode) {
		fprintf(stderr, "bench-record-raw: BENCH_RAW_PAD/BENCH_RAW_TSC are for the two-integer event\n");
		return 2;
	}
#endif
	if (argc == 4 && strcmp(argv[1], "run") == 0) {
		uint64_t n = parse_u64("bench-record", argv[2]);
		uint64_t nt = parse_u64("bench-record", argv[3]);
		struct worker *w;
		int err;

		if (nt > 64)
			return usage();
		const char *pins = getenv("BENCH_PIN");
		w = calloc(nt, sizeof(*w));
		if (!w)
			return 1;
		for (uint64_t k = 0; k < nt; k++) {
			/* BENCH_PIN=2,0: thread 0 on CPU 2, thread 1 on CPU 0, ... */
			char *end;

			w[k].pin = -1;
			if (pins && *pins) {
				w[k].pin = (int)strtol(pins, &end, 10);
				pins = *end == ',' ? end + 1 : end;
			}
		}
		wait_on();
		pthread_barrier_init(&start_line, NULL, (unsigned)nt);
		for (uint64_t k = 0; k < nt; k++) {
			w[k].idx = (int)k;
			w[k].n = n;
			err = pthread_create(&w[k].th, NULL, worker_main, &w[k]);
			if (err) {
				fprintf(stderr, "bench-record: pthread_create: %s\n", strerror(err));
				return 1;
			}
		}
		for (uint64_t k = 0; k < nt; k++)
			pthread_join(w[k].th, NULL);
		for (uint64_t k = 0; k < nt; k++)
			printf("REC %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n", w[k].idx,
			       w[k].n, w[k].ns, w[k].cpu_ns, w[k].cpu);
		free(w);
		return 0;
	}
#if !defined(BENCH_RAW)
	if (argc == 3 && strcmp(argv[1], "for") == 0) {
		/* Fire at full speed for SECONDS, in chunks of 65,536 events,
		 * and say how many were fired: the recorder's written + lost
		 * must add up to it. */
		uint64_t secs = parse_u64("bench-record", argv[2]), fired = 0, t0, t;

		wait_on();
		t0 = now_ns();
		do {
			loop(65536, NULL);
			fired += 65536;
			t = now_ns();
		} while (t - t0 < secs * 1000000000u);
		printf("FOR %" PRIu64 " %" PRIu64 "\n", fired, t - t0);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "pairs") == 0) {
		uint64_t n = parse_u64("bench-record", argv[2]), t0;

		str_mode = 0;
		wait_on();
		str_mode = 1;
		wait_on();
		t0 = now_ns();
		bench_rec_loop_pair(n, NULL);
		printf("PAIRS %" PRIu64 " %" PRIu64 "\n", n, now_ns() - t0);
		return 0;
	}
#endif
	if (argc == 3 && strcmp(argv[1], "calls") == 0) {
		uint64_t n = parse_u64("bench-record", argv[2]), x = 0, t0;
		const char *pin = getenv("BENCH_PIN");

		if (pin && *pin) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(atoi(pin), &set);
			if (sched_setaffinity(0, sizeof(set), &set) < 0) {
				perror("bench-record: sched_setaffinity");
				return 1;
			}
		}
		for (t0 = now_ns(); now_ns() - t0 < 100000000u;)
			x = bench_rec_call(x);          /* 0.1 s to warm up */
		t0 = now_ns();
		for (uint64_t i = 0; i < n; i++)
			x = bench_rec_call(x);
		t0 = now_ns() - t0;
		BENCH_BARRIER(x);
		printf("CALLS %d %" PRIu64 " %" PRIu64 "\n", sched_getcpu(), n, t0);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "count") == 0) {
		uint64_t n = parse_u64("bench-record", argv[2]);
		void *ctx = make_ctx(n > 1000 ? n : 1000);

		wait_on();
		if (str_mode)
			bench_rec_warm_str(1000, ctx);
		else
			bench_rec_warm(1000, ctx);
		bench_rec_loop_empty(n, ctx);
		loop(n, ctx);
		printf("COUNT %" PRIu64 "\n", n);
		free_ctx(ctx, n > 1000 ? n : 1000);
		return 0;
	}
	return usage();
}
