/* SPDX-License-Identifier: MIT */
/*
 * A fake request loop for `utrace report --latency` and `utrace stat`
 * (t0080, t0081): N rounds of three requests, /fast (no wait), /medium
 * (1 ms asleep) and /slow (4 ms asleep), each a req_begin and a req_end
 * with the same id; then one begin that never ends and one end that never
 * began.  Every third /fast answers 404.
 *
 *   req-demo [N]      (default 10)
 *   req-demo loop     rounds until killed, for `utrace top` (t0083)
 *   req-demo long     until killed, requests /long of 1.5 s each, one
 *                     after another (t0083: pairs longer than top's
 *                     interval)
 *   req-demo N gate   wait for a line on stdin before the rounds and one
 *                     before exiting (t0098: live triggers set before the
 *                     first event, their hist read after the last)
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "req-trace.h"

static void nap(long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	while (nanosleep(&ts, &ts))
		;
}

/* A line on stdin (or its end). */
static void wait_line(void)
{
	char c;

	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

int main(int argc, char **argv)
{
	static const struct { const char *path; long ns; } req[] = {
		{ "/fast", 0 }, { "/medium", 1000000 }, { "/slow", 4000000 },
	};
	bool loop = argc > 1 && !strcmp(argv[1], "loop");
	bool gate = argc > 2 && !strcmp(argv[2], "gate");
	int n = argc > 1 && !loop ? atoi(argv[1]) : 10, id = 0, i;
	unsigned int j;

	if (argc > 1 && !strcmp(argv[1], "long"))
		for (;;) {
			trace_req_begin(++id, "/long");
			nap(1500000000);
			trace_req_end(id, "/long", 200);
		}
	if (gate)
		wait_line();
	for (i = 0; loop || i < n; i++)
		for (j = 0; j < sizeof(req) / sizeof(req[0]); j++) {
			id++;
			trace_req_begin(id, req[j].path);
			if (req[j].ns)
				nap(req[j].ns);
			trace_req_end(id, req[j].path, j == 0 && i % 3 == 2 ? 404 : 200);
		}
	trace_req_begin(++id, "/lost");
	trace_req_end(++id, "/orphan", 200);
	if (gate)
		wait_line();
	return 0;
}
