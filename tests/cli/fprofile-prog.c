// SPDX-License-Identifier: MIT
/*
 * A plain program built with -fpatchable-function-entry=5 for the function
 * profiler and set_ftrace_pid (t3045-t3054): it calls its functions a
 * number of times on command, one command a line on stdin, and says
 * "ok ..." on stdout after each:
 *
 *   top N      top() N times (top -> mid -> leaf, then leaf)
 *   outer MS   outer() once, which calls slow(), which sleeps MS ms
 *   thread N   a thread calling tleaf() N times; "ok thread TID"
 *   tid        "ok tid TID" (the main thread's)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

int leaf(int x);
int mid(int x);
int top(int x);
void slow(long ms);
void outer(long ms);
int tleaf(int x);
void *tloop(void *arg);

static volatile int sink;
static volatile pid_t thread_tid;

NOINLINE int leaf(int x)
{
	sink++;
	return x + 1;
}

NOINLINE int mid(int x)
{
	return leaf(x) * 2;
}

NOINLINE int top(int x)
{
	return mid(x) + leaf(x);
}

NOINLINE void slow(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
	sink++;
}

NOINLINE void outer(long ms)
{
	slow(ms);
	sink++;
}

NOINLINE int tleaf(int x)
{
	sink++;
	return x * 3;
}

NOINLINE void *tloop(void *arg)
{
	long n = (long)arg;

	thread_tid = gettid();
	for (long i = 0; i < n; i++)
		sink += tleaf((int)i);
	return NULL;
}

int main(void)
{
	char line[128];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		long n = 0;

		if (sscanf(line, "top %ld", &n) == 1) {
			for (long i = 0; i < n; i++)
				sink += top((int)i);
			printf("ok top %ld\n", n);
		} else if (sscanf(line, "outer %ld", &n) == 1) {
			outer(n);
			printf("ok outer %ld\n", n);
		} else if (sscanf(line, "thread %ld", &n) == 1) {
			pthread_t t;

			if (pthread_create(&t, NULL, tloop, (void *)n) || pthread_join(t, NULL))
				return 3;
			printf("ok thread %d\n", (int)thread_tid);
		} else if (!strncmp(line, "tid", 3)) {
			printf("ok tid %d\n", (int)gettid());
		} else {
			printf("what %s", line);
		}
	}
	return 0;
}
