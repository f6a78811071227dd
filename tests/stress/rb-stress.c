/* SPDX-License-Identifier: MIT */
/*
 * The traced program of the buffer tests (run under `utrace record`):
 *
 *   rb-stress threads THREADS EVENTS   writers, plus a thread that sends
 *                                      them signals whose handlers fire too
 *   rb-stress crash HOW EVENTS         fire EVENTS, then die: segv, abort, kill
 *   rb-stress reuse EVENTS             two threads of one tid, one after the
 *                                      other (root: ns_last_pid), EVENTS each
 *   rb-stress fork EVENTS              parent and child both fire
 *   rb-stress exec EVENTS              fire, then exec itself to fire again
 *   rb-stress clock                    20 events, each between two
 *                                      CLOCK_MONOTONIC readings it prints
 *   rb-stress cpus A NA B NB           NA events on CPU A, then NB on CPU
 *                                      B; then stay 3 s (for live readers)
 *   (RB_STAY set: cpus and paced stay until killed, not 3 s or 1.5 s)
 *   rb-stress paced EVENTS             (for live readers) wait 0.5 s (or
 *                                      until $RB_WAIT_FILE exists), fire
 *                                      EVENTS over about a second, 10 at a
 *                                      time, then stay 1.5 s more
 *   rb-stress idle EVENTS SECONDS      fire EVENTS, say so ("fired PID N",
 *                                      after "span T0 T1": CLOCK_MONOTONIC
 *                                      before and after), then sleep (for a
 *                                      recorder killed while it idles)
 *   rb-stress crowd THREADS            THREADS threads alive at once, 3
 *                                      events each (past the slot limit)
 *   rb-stress churn THREADS EVENTS     THREADS short-lived threads, 4 at a
 *                                      time, and 3 forked children, each
 *                                      with a timer signal armed before its
 *                                      first event, whose handler fires
 *                                      too; threads change CPU and fire
 *                                      from a key destructor at exit
 *
 * It prints what it fired, "fired TID COUNT" per thread, for the checker.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "rb-events.h"

#define MAX_THREADS 16

static unsigned long long per_thread_events;
static _Thread_local unsigned long long fired, seq;
static _Thread_local unsigned int my_tid;
static pthread_t writers[MAX_THREADS];
static atomic_int writers_done, nr_writers;
static unsigned long long totals[MAX_THREADS];
static unsigned int tids[MAX_THREADS];

/* seq and fired are updated with single atomic instructions: a plain
 * ++ is load-add-store, and a signal landing in between would make the
 * handler's update vanish (or two events share a number). */
#define NEXT_SEQ() __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED)
#define COUNT_FIRED() __atomic_fetch_add(&fired, 1, __ATOMIC_RELAXED)

static void on_signal(int sig)
{
	(void)sig;
	if (!my_tid)
		return;
	trace_rb_ev(NEXT_SEQ(), my_tid, 1);
	COUNT_FIRED();
}


static void *writer(void *arg)
{
	long idx = (long)arg;
	unsigned long long i;
	char text[200];

	my_tid = (unsigned int)syscall(SYS_gettid);
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = 0;
	for (i = 0; i < per_thread_events; i++) {
		if (i % 1000 == 999)
			trace_rb_long(NEXT_SEQ(), text);
		else
			trace_rb_ev(NEXT_SEQ(), my_tid, 0);
		COUNT_FIRED();
	}
	/* Block the signal before reading the count: a handler must not fire
	 * between the read and the report. */
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	totals[idx] = fired;
	tids[idx] = my_tid;
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

static void *signaller(void *arg)
{
	int n = atomic_load(&nr_writers), i = 0;

	(void)arg;
	if (getenv("RB_NO_SIGNALS"))
		return NULL;
	while (atomic_load(&writers_done) < n) {
		pthread_kill(writers[i++ % n], SIGUSR1);
		usleep(50);
	}
	return NULL;
}

static int run_threads(int n, unsigned long long events)
{
	pthread_t sig;
	struct sigaction sa;
	long i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	per_thread_events = events;
	atomic_store(&nr_writers, n);
	for (i = 0; i < n; i++)
		pthread_create(&writers[i], NULL, writer, (void *)i);
	pthread_create(&sig, NULL, signaller, NULL);
	/* The signaller first: it must not signal a thread already joined. */
	pthread_join(sig, NULL);
	for (i = 0; i < n; i++)
		pthread_join(writers[i], NULL);
	for (i = 0; i < n; i++)
		printf("fired %u %llu\n", tids[i], totals[i]);
	return 0;
}

/*
 * churn: the interrupting hammer of the kernel ring buffer's self-test,
 * for the writer's unusual paths.  Each thread (and forked child) arms a
 * timer signal of its own before its first event, so handlers fire events
 * in the middle of its first event, of page switches, of CPU changes and
 * of its exit; a thread's last events come from a key destructor.  Every
 * event carries the thread's own sequence number: a number seen twice in
 * the trace is a duplicate, whatever the reader says.
 */
#define CHURN_CONC 4

static unsigned long long *churn_fired;
static unsigned int *churn_tids;
static _Thread_local long churn_idx = -1;
static _Thread_local timer_t churn_timer;
static pthread_key_t churn_key;

static void churn_signal(int sig)
{
	(void)sig;
	if (churn_idx < 0)
		return;
	trace_rb_ev(NEXT_SEQ(), my_tid, 1);
	__atomic_fetch_add(&churn_fired[churn_idx], 1, __ATOMIC_RELAXED);
}

static int churn_arm(void)
{
	struct sigevent ev;
	/* every 11 us, the first after 1 us: RB_TIMER_NS changes the period */
	const char *e = getenv("RB_TIMER_NS");
	long ns = e ? atol(e) : 11000;
	/* The first expiry anywhere in the first 4 us, so that over many
	 * threads it lands on every instruction of the first event. */
	struct itimerspec it = { { 0, ns > 0 && ns < 1000000000 ? ns : 11000 },
				 { 0, 100 + (long)(my_tid * 2654435761u % 4000) } };

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR2;
	ev._sigev_un._tid = (pid_t)my_tid;
	if (timer_create(CLOCK_MONOTONIC, &ev, &churn_timer) < 0)
		return -1;
	return timer_settime(churn_timer, 0, &it, NULL);
}

/* Runs after libutrace's own exit destructor has had its first call. */
static void churn_destructor(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		trace_rb_ev(NEXT_SEQ(), my_tid, 0);
		__atomic_fetch_add(&churn_fired[churn_idx], 1, __ATOMIC_RELAXED);
	}
	timer_delete(churn_timer);
	churn_idx = -1;
}

static void churn_body(long idx, int cpus)
{
	my_tid = (unsigned int)syscall(SYS_gettid);
	churn_tids[idx] = my_tid;
	churn_idx = idx;
	if (churn_arm() < 0) {
		perror("rb-stress: timer");
		exit(1);
	}
	for (unsigned long long i = 0; i < per_thread_events; i++) {
		if (cpus > 1 && i % 500 == 250) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET((int)((i / 500 + (unsigned long long)idx) % (unsigned)cpus), &set);
			sched_setaffinity(0, sizeof(set), &set);
		}
		if (i % 100 == 99)
			trace_rb_long(NEXT_SEQ(), "a record of the long kind, in the churn");
		else
			trace_rb_ev(NEXT_SEQ(), my_tid, 0);
		__atomic_fetch_add(&churn_fired[idx], 1, __ATOMIC_RELAXED);
	}
}

static void *churn_thread(void *arg)
{
	pthread_setspecific(churn_key, (void *)1);
	churn_body((long)arg, (int)sysconf(_SC_NPROCESSORS_ONLN));
	return NULL;
}

static int run_churn(int n, unsigned long long events)
{
	struct sigaction sa;
	pthread_t th[CHURN_CONC];
	pid_t kids[3];
	long i;
	int k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = churn_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR2, &sa, NULL);
	per_thread_events = events;
	churn_fired = mmap(NULL, (size_t)(n + 3) * sizeof(*churn_fired),
			   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	churn_tids = mmap(NULL, (size_t)(n + 3) * sizeof(*churn_tids),
			  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (churn_fired == MAP_FAILED || churn_tids == MAP_FAILED ||
	    pthread_key_create(&churn_key, churn_destructor)) {
		perror("rb-stress: churn");
		return 1;
	}
	/* Three children, each its own hammer, forked before the threads
	 * start: a fork while other threads run can leave the child's
	 * allocator locked under ASan (its allocator has no fork handlers in
	 * GCC 12), and the child's utrace agent thread would hang in it. */
	for (k = 0; k < 3; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			seq = 0;
			churn_body(n + k, 1);
			timer_delete(churn_timer);
			churn_idx = -1;
			_exit(0);
		}
	}
	for (i = 0; i < n; i++) {
		if (i >= CHURN_CONC)
			pthread_join(th[i % CHURN_CONC], NULL);
		pthread_create(&th[i % CHURN_CONC], NULL, churn_thread, (void *)i);
	}
	for (i = n > CHURN_CONC ? n - CHURN_CONC : 0; i < n; i++)
		pthread_join(th[i % CHURN_CONC], NULL);
	for (k = 0; k < 3; k++) {
		int st;

		if (waitpid(kids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "rb-stress: child %d failed\n", (int)kids[k]);
			return 1;
		}
	}
	for (i = 0; i < n + 3; i++)
		if (churn_tids[i])
			printf("fired %u %llu\n", churn_tids[i], churn_fired[i]);
	return 0;
}

/* crowd: N threads alive at once, each firing 3 events (more threads than
 * the pool has slots: the rest are lost, counted). */
static pthread_barrier_t crowd_in, crowd_out;
static unsigned long long *crowd_fired;
static unsigned int *crowd_tids;

static void *crowd_thread(void *arg)
{
	long idx = (long)arg;

	my_tid = (unsigned int)syscall(SYS_gettid);
	pthread_barrier_wait(&crowd_in);      /* all alive before the first event */
	for (int i = 0; i < 3; i++)
		trace_rb_ev(NEXT_SEQ(), my_tid, 0);
	crowd_fired[idx] = 3;
	crowd_tids[idx] = my_tid;
	pthread_barrier_wait(&crowd_out);     /* none exits before all fired */
	return NULL;
}

static int run_crowd(int n)
{
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	pthread_attr_t at;
	long i;

	crowd_fired = calloc((size_t)n, sizeof(*crowd_fired));
	crowd_tids = calloc((size_t)n, sizeof(*crowd_tids));
	if (!th || !crowd_fired || !crowd_tids)
		return 1;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_barrier_init(&crowd_in, NULL, (unsigned)n);
	pthread_barrier_init(&crowd_out, NULL, (unsigned)n);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], &at, crowd_thread, (void *)i)) {
			perror("rb-stress: crowd");
			return 1;
		}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		printf("fired %u %llu\n", crowd_tids[i], crowd_fired[i]);
	return 0;
}

/* After the events, for live readers: stay 'us' microseconds, or with
 * RB_STAY set until killed (a test ends the program once its readers
 * have what they need, rather than racing a fixed time). */
static void stay(useconds_t us)
{
	if (getenv("RB_STAY")) {
		for (;;)
			pause();
	}
	usleep(us);
}

/* reuse N: a thread fires N events and exits; then threads are made, the
 * tid allocator set back (ns_last_pid, root only) before each, until one
 * gets the first one's tid: two threads of one tid in one recording, as
 * a kernel that wrapped at pid_max gives them.  "reused TID" when it did. */
static unsigned long long reuse_n;

static void *reuse_thread(void *arg)
{
	unsigned long long i;

	my_tid = (unsigned int)syscall(SYS_gettid);
	for (i = 0; i < reuse_n; i++) {
		trace_rb_ev(NEXT_SEQ(), my_tid, 0);
		COUNT_FIRED();
	}
	printf("fired %u %llu\n", my_tid, fired);
	*(unsigned int *)arg = my_tid;
	return NULL;
}

static int run_reuse(unsigned long long n)
{
	unsigned int first = 0, tid = 0;
	pthread_t t;
	int i;

	reuse_n = n;
	if (pthread_create(&t, NULL, reuse_thread, &first) || pthread_join(t, NULL))
		return 1;
	for (i = 0; i < 50 && tid != first; i++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");

		if (!f)
			break;
		fprintf(f, "%u", first - 1);
		if (fclose(f))
			break;
		if (pthread_create(&t, NULL, reuse_thread, &tid) || pthread_join(t, NULL))
			return 1;
	}
	if (tid == first)
		printf("reused %u\n", tid);
	return 0;
}

static void fire(unsigned long long n)
{
	unsigned long long i;

	if (!my_tid)
		my_tid = (unsigned int)syscall(SYS_gettid);
	for (i = 0; i < n; i++)
		trace_rb_ev(seq++, my_tid, 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "threads"))
		return run_threads(atoi(argv[2]), strtoull(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "reuse"))
		return run_reuse(strtoull(argv[2], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "crowd"))
		return run_crowd(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "churn"))
		return run_churn(atoi(argv[2]), strtoull(argv[3], NULL, 0));
	if (argc == 4 && !strcmp(argv[1], "crash")) {
		unsigned long long n = strtoull(argv[3], NULL, 0);

		fire(n);
		printf("fired %u %llu\n", my_tid, n);
		fflush(stdout);
		if (!strcmp(argv[2], "segv"))
			raise(SIGSEGV);
		if (!strcmp(argv[2], "abort"))
			abort();
		kill(getpid(), SIGKILL);
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "fork")) {
		unsigned long long n = strtoull(argv[2], NULL, 0);
		pid_t c = fork();

		fire(n);
		printf("fired %u %llu\n", (unsigned)syscall(SYS_gettid), n);
		fflush(stdout);
		if (c == 0)
			_exit(0);
		waitpid(c, NULL, 0);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "exec")) {
		unsigned long long n = strtoull(argv[2], NULL, 0);

		fire(n);
		printf("fired %u %llu\n", (unsigned)syscall(SYS_gettid), n);
		fflush(stdout);
		execl("/proc/self/exe", argv[0], "crash", "none", argv[2], (char *)NULL);
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "clock")) {
		/* "mono SEQ BEFORE AFTER": CLOCK_MONOTONIC around each event */
		my_tid = (unsigned int)syscall(SYS_gettid);
		for (int i = 0; i < 20; i++) {
			struct timespec a, b;

			clock_gettime(CLOCK_MONOTONIC, &a);
			trace_rb_ev((unsigned long long)i, my_tid, 0);
			clock_gettime(CLOCK_MONOTONIC, &b);
			printf("mono %d %lld %lld\n", i,
			       a.tv_sec * 1000000000LL + a.tv_nsec,
			       b.tv_sec * 1000000000LL + b.tv_nsec);
			usleep(10000);
		}
		printf("fired %u 20\n", my_tid);
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "cpus")) {
		my_tid = (unsigned int)syscall(SYS_gettid);
		for (int k = 0; k < 2; k++) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(atoi(argv[2 + 2 * k]), &set);
			if (sched_setaffinity(0, sizeof(set), &set) < 0) {
				perror("rb-stress: sched_setaffinity");
				return 1;
			}
			fire(strtoull(argv[3 + 2 * k], NULL, 0));
		}
		printf("fired %u %llu\n", my_tid, strtoull(argv[3], NULL, 0) +
		       strtoull(argv[5], NULL, 0));
		stay(3000000);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "idle")) {
		unsigned long long n = strtoull(argv[2], NULL, 0);
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		fire(n);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("span %lld %lld\n", t0.tv_sec * 1000000000LL + t0.tv_nsec,
		       t1.tv_sec * 1000000000LL + t1.tv_nsec);
		printf("fired %u %llu\n", my_tid, n);
		fflush(stdout);
		sleep((unsigned int)atoi(argv[3]));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "paced")) {
		unsigned long long n = strtoull(argv[2], NULL, 0), i;
		struct timespec rest = { 0, 1000000000 / 1000 };   /* 1 ms */

		const char *wait = getenv("RB_WAIT_FILE");

		/* RB_WAIT_FILE: start when that file exists (a test's cue),
		 * printing "waiting" first; else after half a second. */
		if (wait) {
			printf("waiting\n");
			while (access(wait, F_OK) != 0)
				usleep(10000);
		} else {
			usleep(500000);
		}
		my_tid = (unsigned int)syscall(SYS_gettid);
		for (i = 0; i < n; i += 10) {
			fire(n - i < 10 ? n - i : 10);
			if (i % 20 == 10)
				nanosleep(&rest, NULL);
		}
		printf("fired %u %llu\n", my_tid, n);
		stay(1500000);
		return 0;
	}
	fprintf(stderr, "usage: rb-stress threads N EVENTS | crash segv|abort|kill EVENTS"
		" | fork EVENTS | exec EVENTS | clock | cpus A NA B NB | paced EVENTS"
		" | churn THREADS EVENTS | crowd THREADS | idle EVENTS SECONDS\n");
	return 2;
}
