// SPDX-License-Identifier: MIT
/*
 * A plain program built with -fpatchable-function-entry=5 (or the kernel's
 * -pg -mfentry -mnop-mcount -mrecord-mcount), without utrace, for the
 * function and function_graph tracers (t3040-t3049): calls whose values
 * must come back right (integer, float and variadic arguments), deep
 * recursion, longjmp over traced frames, signal handlers calling traced
 * functions, threads (one leaving through pthread_exit inside a traced
 * function), and a traced library function (fgraph-lib.c).
 *
 *   fgraph-prog calls | recurse N | longjmp | signal | threads | lib
 *               | bytes | run | loop N | dl MODULE (commands on stdin)
 * Each mode prints what it computed: the same with and without a tracer.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

int fg_lib_twice(int x);
int leaf(int x);
double fleaf(double a, float b);
long vsum(int n, ...);
double vfsum(int n, ...);
int mid(int x);
int top(int x);
long recurse(long n);
void jumper(int depth);
int handler_work(int x);
int raiser(int x);
void exiter(int x);
void *worker(void *arg);
int forker(int x);

static volatile int sink;

NOINLINE int leaf(int x)
{
	sink++;
	return x + 1;
}

NOINLINE double fleaf(double a, float b)
{
	sink++;
	return a * 2 + b;
}

NOINLINE long vsum(int n, ...)
{
	va_list ap;
	long s = 0;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, long);
	va_end(ap);
	return s;
}

NOINLINE double vfsum(int n, ...)
{
	va_list ap;
	double s = 0;

	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, double);
	va_end(ap);
	return s;
}

NOINLINE int mid(int x)
{
	return leaf(x) * 2;
}

NOINLINE int top(int x)
{
	return mid(x) + leaf(x);
}

NOINLINE long recurse(long n)
{
	volatile long here = n;     /* a frame of its own: no loop made of it */

	if (n <= 0)
		return 0;
	return recurse(n - 1) + here;
}

static jmp_buf jb;

NOINLINE void jumper(int depth)
{
	if (depth < 0)
		return;
	if (depth == 0)
		longjmp(jb, 1);
	jumper(depth - 1);
	sink++;
}

NOINLINE int handler_work(int x)
{
	return leaf(x) + 1;
}

static volatile int in_handler;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_sig(int sig)
{
	(void)sig;
	in_handler += handler_work(1);
}

NOINLINE int raiser(int x)
{
	raise(SIGUSR1);
	return leaf(x);
}

NOINLINE void exiter(int x)
{
	if (x)
		pthread_exit((void *)(long)leaf(x));
}

NOINLINE void *worker(void *arg)
{
	long k = (long)arg;
	long s = 0;

	for (int i = 0; i < 1000; i++)
		s += top(i);
	if (k == 0)
		exiter(41);
	return (void *)s;
}

/* forks inside a traced function: both return through its hooked frame */
NOINLINE int forker(int x)
{
	pid_t pid = fork();

	if (pid == 0)
		return top(x) + 1000;
	if (pid > 0) {
		int st = 0;

		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	}
	return -2;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "calls";

	if (!strcmp(mode, "calls")) {
		/* one after the other: the order of the calls is the test's */
		int t = top(3);
		double f = fleaf(1.5, 0.25f);
		long v = vsum(4, 1L, 2L, 3L, 4L);
		double w = vfsum(3, 0.5, 1.5, 2.0);

		printf("top=%d fleaf=%.2f vsum=%ld vfsum=%.2f\n", t, f, v, w);
	} else if (!strcmp(mode, "recurse")) {
		long n = argc > 2 ? atol(argv[2]) : 10000;

		printf("recurse=%ld\n", recurse(n));
	} else if (!strcmp(mode, "longjmp")) {
		volatile int rounds = 0;

		setjmp(jb);
		if (rounds++ < 5)
			jumper(3);
		printf("rounds=%d top=%d\n", rounds, top(1));
	} else if (!strcmp(mode, "signal")) {
		int r;

		signal(SIGUSR1, on_sig);
		r = raiser(5);
		printf("raiser=%d handler=%d\n", r, in_handler);
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[4];
		long sum = 0;

		for (long i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, worker, (void *)i);
		for (int i = 0; i < 4; i++) {
			void *r;

			pthread_join(t[i], &r);
			sum += (long)r;
		}
		printf("threads=%ld top=%d\n", sum, top(2));
	} else if (!strcmp(mode, "lib")) {
		printf("lib=%d\n", fg_lib_twice(21));
	} else if (!strcmp(mode, "bytes")) {
		/* what each function's entry holds now */
		static const struct { const char *name; const void *fn; } f[] = {
			{ "leaf", (const void *)leaf }, { "mid", (const void *)mid },
			{ "top", (const void *)top }, { "lib", (const void *)fg_lib_twice },
		};

		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			const unsigned char *b = f[i].fn;

			/* an endbr64 first (-fcf-protection) */
			if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
				b += 4;
			printf("%s=%s%s", f[i].name,
			       b[0] == 0xe8 ? "call" : b[0] == 0x0f && b[1] == 0x1f ? "nop" :
			       !memcmp(b, "\x90\x90\x90\x90\x90", 5) ? "sled" : "other",
			       i + 1 < sizeof(f) / sizeof(f[0]) ? " " : "\n");
		}
	} else if (!strcmp(mode, "run")) {
		/* calls top() every millisecond until SIGTERM */
		struct timespec ms = { 0, 1000000 };
		long i = 0;

		signal(SIGTERM, on_term);
		while (!stop) {
			sink += top((int)i++);
			nanosleep(&ms, NULL);
		}
		printf("run=%s\n", i > 0 ? "ok" : "none");
	} else if (!strcmp(mode, "dl") && argc > 2) {
		/* commands on stdin, a line each, "ok" after each on stdout:
		 * open (dlopen argv[2]), call (its fg_mod_fn), close */
		char line[64];
		void *h = NULL;
		int (*fn)(int) = NULL;

		setvbuf(stdout, NULL, _IOLBF, 0);
		while (fgets(line, sizeof(line), stdin)) {
			if (!strncmp(line, "open", 4) && !h) {
				h = dlopen(argv[2], RTLD_NOW);
				fn = h ? (int (*)(int))dlsym(h, "fg_mod_fn") : NULL;
				if (!fn)
					return 3;
			} else if (!strncmp(line, "call", 4) && fn) {
				sink += fn(2);
			} else if (!strncmp(line, "close", 5) && h) {
				dlclose(h);
				h = NULL;
				fn = NULL;
			}
			printf("ok %s", line);
		}
	} else if (!strcmp(mode, "fork")) {
		int r = forker(3);

		/* the child: top(3) + 1000; the parent: the child's status */
		printf("%s=%d\n", r >= 1000 ? "child" : "parent", r);
		fflush(stdout);
		return r >= 1000 ? 42 : 0;
	} else if (!strcmp(mode, "loop")) {
		long n = argc > 2 ? atol(argv[2]) : 1000000, s = 0;

		for (long i = 0; i < n; i++)
			s += leaf((int)i);
		printf("loop=%ld\n", s);
	} else {
		fprintf(stderr, "fgraph-prog: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
