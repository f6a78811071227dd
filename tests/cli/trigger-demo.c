/* SPDX-License-Identifier: MIT */
/*
 * A live target for the trigger tests (t0085): the events of hist-demo
 * (hist-trace.h), fired on command, so that a test sets triggers first
 * and then reads the hist files of a process that is still running.
 * Commands, one a line, read from FIFO (opened again after each writer):
 *
 *   fire          hist-demo's kmalloc and task events and 200 ticks
 *   ticks N       N tick events, n = 0..N-1
 *   threads T N   T threads firing N ticks each, n = 0..N-1 (joined)
 *   signals N     a thread fires N ticks (n = 0..N-1) while this one sends
 *                 it SIGUSR1 again and again; the handler fires a tick
 *                 (n = -1), nested in the thread's event when it lands in
 *                 one; writes "signals S" (S: handler ticks) before done
 *   fork N        a child fires N ticks, writes "child PID" and waits to be
 *                 killed
 *   quit
 *
 * After each command it appends "done K\n" (K counting from 1) to OUT.
 *
 *   trigger-demo FIFO OUT
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "hist-trace.h"
#include "hist-fire.h"

__attribute__((noinline)) void trigger_demo_alloc(size_t n);

__attribute__((noinline)) void trigger_demo_alloc(size_t n)
{
	trace_kmalloc((unsigned long)&trigger_demo_alloc + 4, NULL, n, n, 0x10);
}

static void *ticker(void *arg)
{
	long n = (long)arg, i;

	for (i = 0; i < n; i++)
		trace_tick((int)i, i - 100);
	return NULL;
}

static int stop_signals;
static unsigned long handled;

static void on_usr1(int sig)
{
	(void)sig;
	trace_tick(-1, 0);
	__atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
}

static void *signalled(void *arg)
{
	ticker(arg);
	__atomic_store_n(&stop_signals, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* N ticks in a thread, with handler ticks landing among them. */
static unsigned long signals(long n)
{
	struct sigaction sa;
	pthread_t th;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	__atomic_store_n(&stop_signals, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&handled, 0, __ATOMIC_RELAXED);
	pthread_create(&th, NULL, signalled, (void *)n);
	while (!__atomic_load_n(&stop_signals, __ATOMIC_ACQUIRE))
		pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
	return __atomic_load_n(&handled, __ATOMIC_RELAXED);
}

int main(int argc, char **argv)
{
	char line[128];
	unsigned int k = 0;
	FILE *in, *out;

	if (argc != 3) {
		fprintf(stderr, "usage: trigger-demo FIFO OUT\n");
		return 2;
	}
	for (;;) {
		in = fopen(argv[1], "r");
		if (!in) {
			perror(argv[1]);
			return 1;
		}
		while (fgets(line, sizeof(line), in)) {
			long a = 0, b = 0;

			if (!strncmp(line, "quit", 4)) {
				fclose(in);
				return 0;
			}
			if (!strncmp(line, "fire", 4)) {
				hist_fire(trigger_demo_alloc, 200);
			} else if (sscanf(line, "ticks %ld", &a) == 1) {
				ticker((void *)a);
			} else if (sscanf(line, "signals %ld", &a) == 1) {
				unsigned long h = signals(a);

				out = fopen(argv[2], "a");
				if (out) {
					fprintf(out, "signals %lu\n", h);
					fclose(out);
				}
			} else if (sscanf(line, "fork %ld", &a) == 1) {
				pid_t c = fork();

				if (c == 0) {
					ticker((void *)a);
					out = fopen(argv[2], "a");
					if (out) {
						fprintf(out, "child %d\n", (int)getpid());
						fclose(out);
					}
					for (;;)
						pause();
				}
			} else if (sscanf(line, "threads %ld %ld", &a, &b) == 2 && a > 0 && a <= 64) {
				pthread_t th[64];
				long i;

				for (i = 0; i < a; i++)
					pthread_create(&th[i], NULL, ticker, (void *)b);
				for (i = 0; i < a; i++)
					pthread_join(th[i], NULL);
			}
			out = fopen(argv[2], "a");
			if (out) {
				fprintf(out, "done %u\n", ++k);
				fclose(out);
			}
		}
		fclose(in);
	}
}
