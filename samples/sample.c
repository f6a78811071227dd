/* SPDX-License-Identifier: MIT */
/*
 * A small program that fires every event of sample-trace.h.
 *
 *   UTRACE_EVENTS='sample-trace:*' UTRACE_PRINT=stderr ./sample
 *   ./sample --format foo_bar      the event's format file, as tracefs shows it
 *   ./sample --run SECONDS         keep firing the demo:* events (about 1000
 *                                  demo_tick and 100 demo_request a second)
 *                                  for that long (0: until killed), to look at
 *                                  with utrace ps, show, pipe, filter, mount
 *   ./sample --run SECONDS --log FILE
 *                                  the same, and a line "request ID BEFORE AFTER"
 *                                  in FILE after each demo_request: the
 *                                  CLOCK_MONOTONIC ns just before and after it
 *                                  fired, for the tests to wait on the program
 *                                  and to check the event's time against
 *
 * In --run mode SIGUSR1 ends the run at once, as if SECONDS had passed: the
 * program returns from main, so that the tests can make it exit normally
 * when they choose (the handler is set before the first event fires).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <utrace/utrace.h>

/* This file holds the definitions: exactly one .c per events header. */
#define CREATE_TRACE_POINTS
#include "sample-trace.h"
#include "demo-trace.h"

static int reg_calls;

int sample_trace_reg(void)
{
	reg_calls++;
	return 0;
}

void sample_trace_unreg(void)
{
	reg_calls--;
}

static void fire_foo_bar(const char *foo, int bar, const int *lst,
			 const char *string, const unsigned long *mask,
			 int nr_bits, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	trace_foo_bar(foo, bar, lst, string, mask, nr_bits, fmt, &va);
	va_end(va);
}

static void plain_probe(void *data, int value)
{
	*(int *)data += value;
}

static int show_format(const char *name)
{
	struct utrace_event *ev = utrace_event_find("sample-trace", name);
	char *text = ev ? utrace_event_format(ev) : NULL;

	if (!text) {
		fprintf(stderr, "sample: no event 'sample-trace:%s'\n", name);
		return 1;
	}
	fputs(text, stdout);
	free(text);
	return 0;
}

static volatile sig_atomic_t stop_run;

static void on_usr1(int sig)
{
	(void)sig;
	stop_run = 1;
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int run(const char *arg, const char *log_path)
{
	static const char *const stages[] = { "idle", "sleep", "busy" };
	static const char *const paths[] = { "/index.html", "/api/v1/items",
					     "/static/app.js", "/health" };
	char *end;
	double secs = strtod(arg, &end);
	struct timespec t0, now, tick = { 0, 1000 * 1000 };
	struct sigaction sa = { .sa_handler = on_usr1 };
	unsigned long long n;
	FILE *log = NULL;

	if (end == arg || *end || secs < 0) {
		fprintf(stderr, "sample: --run needs a number of seconds, not '%s'\n", arg);
		return 2;
	}
	if (log_path && !(log = fopen(log_path, "w"))) {
		fprintf(stderr, "sample: cannot open '%s': %s\n", log_path, strerror(errno));
		return 1;
	}
	sigaction(SIGUSR1, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (n = 0; !stop_run; n++) {
		trace_demo_tick(n, stages[n % 3], 120 + 5 * (int)(n % 4));
		if (n % 10 == 0) {
			long long before = mono_ns(), after;

			trace_demo_request((int)(n / 10), (unsigned int)(n * 37 % 5000),
					   paths[n / 10 % 4]);
			after = mono_ns();
			if (log) {
				fprintf(log, "request %llu %lld %lld\n", n / 10, before, after);
				fflush(log);
			}
		}
		nanosleep(&tick, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (secs > 0 && (double)(now.tv_sec - t0.tv_sec) +
		    (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	if (log)
		fclose(log);
	return 0;
}

int main(int argc, char **argv)
{
	static const int list[] = { 1, 2, 3, 0 };
	unsigned long mask[2] = { 0x5UL, 0x1UL };
	unsigned char bytes[4] = { 0xde, 0xad, 0xbe, 0xef };
	int plain_sum = 0, i;

	if (argc == 3 && !strcmp(argv[1], "--format"))
		return show_format(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--run"))
		return run(argv[2], NULL);
	if (argc == 5 && !strcmp(argv[1], "--run") && !strcmp(argv[3], "--log"))
		return run(argv[2], argv[4]);

	register_trace_foo_plain(plain_probe, &plain_sum);
	for (i = 1; i <= 4; i++) {
		struct sample_point pt = { i, -i };

		fire_foo_bar("hello", i, list, "a string", mask, 64 + i,
			     "vstring %d", i * 10);
		trace_foo_bar_with_cond("cond", i);
		trace_foo_bar_with_fn("function", i);
		trace_foo_with_template_simple("simple", i, pt, bytes);
		trace_foo_with_template_cond("cond", i, pt, bytes);
		trace_foo_with_template_fn("fn", i, pt, bytes);
		trace_foo_with_template_print("print", i, pt, bytes);
		trace_foo_plain(i);
	}
	unregister_trace_foo_plain(plain_probe, &plain_sum);
	tracepoint_synchronize_unregister();
	printf("sample: plain probe saw %d, reg/unreg balance %d\n",
	       plain_sum, reg_calls);
	return 0;
}
