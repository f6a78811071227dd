/* SPDX-License-Identifier: MIT */
/*
 * A plain program (no libutrace) for entry and return probes on a
 * recursive function (t2802: utrace report --latency BEGIN:END pairs
 * innermost per thread): two threads each call walk(3), which waits
 * 10 ms before and 10 ms after calling walk(depth - 1).  Each thread
 * enters walk(3), walk(2), walk(1), walk(0) 10 ms apart, and they return
 * innermost first: walk(0) after 20 ms, walk(1) 40, walk(2) 60, walk(3)
 * 80.  Pairing the first entry with the first return instead makes every
 * pair about 50 ms.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) int walk(int depth);

__attribute__((noinline)) int walk(int depth)
{
	int r = 1;

	nap_ms(10);
	if (depth > 0)
		r += walk(depth - 1);
	nap_ms(10);
	return r;
}

/* called through this, so that no compiler specializes walk() */
static int (*volatile walk_p)(int) = walk;

static void *run(void *arg)
{
	(void)arg;
	return (void *)(long)walk_p(3);
}

int main(void)
{
	pthread_t t[2];
	long n = 0;
	void *r;

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], &r);
		n += (long)r;
	}
	printf("calls=%ld\n", n);
	return 0;
}
