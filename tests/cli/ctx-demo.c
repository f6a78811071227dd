/* SPDX-License-Identifier: MIT */
/*
 * Requests across processes with W3C trace context (t3081):
 *
 *   ctx-demo N           the frontend: N requests, one after the other;
 *                        each gets a trace id and a span id, fires
 *                        ctx_begin, a step (ctx_step .. ctx_step_done),
 *                        a ctx_log, runs a backend with its context and
 *                        fires ctx_end once the backend is done
 *   ctx-demo backend ID TRACE PARENT
 *                        one request's backend: its own span id, the
 *                        frontend's as its parent
 *
 * It prints each request's ids: "ID TRACE FRONT-SPAN BACK-SPAN" lines
 * (the backend's on its own line "backend ID SPAN").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "ctx-events.h"

static uint64_t state;

static uint64_t rnd(void)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	state = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40);
}

int main(int argc, char **argv)
{
	char trace[33], span[17], back[17];
	unsigned int i, n;

	seed();
	if (argc == 5 && !strcmp(argv[1], "backend")) {
		unsigned int id = (unsigned int)strtoul(argv[2], NULL, 10);

		snprintf(back, sizeof(back), "%016" PRIx64, rnd());
		trace_ctx_begin(id, argv[3], back, argv[4]);
		trace_ctx_log(argv[3], back, "backend working");
		trace_ctx_end(id);
		printf("backend %u %s\n", id, back);
		return 0;
	}
	if (argc != 2)
		return 2;
	n = (unsigned int)strtoul(argv[1], NULL, 10);
	for (i = 1; i <= n; i++) {
		char ids[16];
		pid_t pid;

		snprintf(trace, sizeof(trace), "%016" PRIx64 "%016" PRIx64, rnd(), rnd());
		snprintf(span, sizeof(span), "%016" PRIx64, rnd());
		trace_ctx_begin(i, trace, span, "");
		trace_ctx_step(i, trace);
		trace_ctx_step_done(i);
		trace_ctx_log(trace, span, "calling the backend");
		printf("%u %s %s\n", i, trace, span);
		fflush(stdout);
		snprintf(ids, sizeof(ids), "%u", i);
		pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "backend", ids, trace, span, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return 1;
		trace_ctx_end(i);
	}
	return 0;
}
