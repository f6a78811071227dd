/* SPDX-License-Identifier: MIT */
/*
 * A plain program, not built with utrace, for the proofs of dynamic
 * probes (t0087); each MODE prints its results, which must not change
 * when probed:
 * jmp        jumper(0..3): odd ones leave by longjmp from a callee, even
 *            ones return 3 * x + 2 * (x == 2); then twice(5), twice(6)
 * sig        raises SIGUSR1 three times; the handler calls in_handler(N)
 * rec        rsum(4): rsum(n) = n + rsum(n - 1), rsum(0) = 0
 * fork       twice(1); the child twice(2); after it, twice(3)
 * exec N     twice(N); below 3 it execs itself with N + 1; "exec-clean"
 *            also unsets UTRACE_PROBES and LD_PRELOAD before the exec
 * str        greet() of "abc" ending a page before an unmapped one (no
 *            NUL), then of "abcdef" crossing into a mapped page
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int jumper(int x);
void leave(int x);
int twice(int x);
int in_handler(int n);
int rsum(int n);
size_t greet(const char *s);

static jmp_buf env;
static volatile int sink;

__attribute__((noinline)) void leave(int x)
{
	if (x & 1)
		longjmp(env, x);
	sink = x;
}

/* leave() is not its tail call: jumper works after it */
__attribute__((noinline)) int jumper(int x)
{
	leave(x);
	return 3 * x + sink;
}

__attribute__((noinline)) int twice(int x)
{
	return 2 * x + sink;
}

__attribute__((noinline)) int in_handler(int n)
{
	return n * 7 + sink;
}

/* called through these, so that no compiler specializes them and rsum's
 * recursion stays a call */
static int (*volatile jumper_p)(int) = jumper;
static int (*volatile twice_p)(int) = twice;
static int (*volatile in_handler_p)(int) = in_handler;
static int (*volatile rsum_p)(int) = rsum;
static size_t (*volatile greet_p)(const char *) = greet;

__attribute__((noinline)) int rsum(int n)
{
	return n ? n + rsum_p(n - 1) : 0;
}

__attribute__((noinline)) size_t greet(const char *s)
{
	return s ? (size_t)(unsigned char)s[0] : 0;
}

static volatile sig_atomic_t hits;

static void on_usr1(int sig)
{
	(void)sig;
	hits += in_handler_p(hits + 1);
}

static int run_jmp(void)
{
	for (volatile int x = 0; x < 4; x++) {
		int r = setjmp(env);

		if (r)
			printf("jumper(%d) left by longjmp %d\n", x, r);
		else
			printf("jumper(%d)=%d\n", x, jumper_p(x));
	}
	int a = twice_p(5);
	int b = twice_p(6);

	printf("twice(5)=%d twice(6)=%d\n", a, b);
	return 0;
}

static int run_str(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || munmap(p + pg, (size_t)pg))
		return 1;
	memcpy(p + pg - 3, "abc", 3);
	printf("greet=%zu\n", greet_p(p + pg - 3));
	p = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p + pg - 3, "abcdef", 7);
	printf("greet=%zu\n", greet_p(p + pg - 3));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "jmp"))
		return run_jmp();
	if (!strcmp(mode, "sig")) {
		signal(SIGUSR1, on_usr1);
		for (int i = 0; i < 3; i++)
			raise(SIGUSR1);
		printf("hits=%d\n", (int)hits);
		return 0;
	}
	if (!strcmp(mode, "rec")) {
		printf("rsum(4)=%d\n", rsum_p(4));
		return 0;
	}
	if (!strcmp(mode, "fork")) {
		int st;
		pid_t pid;

		printf("twice(1)=%d\n", twice_p(1));
		pid = fork();
		if (pid == 0) {
			printf("child twice(2)=%d\n", twice_p(2));
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0)
			return 1;
		printf("twice(3)=%d\n", twice_p(3));
		return 0;
	}
	if (!strcmp(mode, "exec") || !strcmp(mode, "exec-clean")) {
		int n = argc > 2 ? atoi(argv[2]) : 1;
		char next[16];

		printf("twice(%d)=%d\n", n, twice_p(n));
		if (n >= 3)
			return 0;
		snprintf(next, sizeof(next), "%d", n + 1);
		if (!strcmp(mode, "exec-clean")) {
			unsetenv("UTRACE_PROBES");
			unsetenv("LD_PRELOAD");
		}
		execl("/proc/self/exe", argv[0], mode, next, (char *)NULL);
		return 1;
	}
	if (!strcmp(mode, "str"))
		return run_str();
	fprintf(stderr, "usage: probe-proof-prog jmp|sig|rec|fork|exec|exec-clean|str\n");
	return 2;
}
