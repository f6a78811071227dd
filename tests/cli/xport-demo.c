/* SPDX-License-Identifier: MIT */
/*
 * Fires the events of xport-events.h in a known order, for the tests of
 * `utrace convert --format json|perfetto` (t0041, t0042):
 *
 *   xport-demo          the cases below, on the main thread and then on a
 *                       thread named "xport-worker"
 *   xport-demo many N   N events: req_begin/req_end pairs (id i) with a
 *                       queue event every 8th pair, as fast as it can
 *
 * Main thread (--slice req_begin.id:req_end.id):
 *   begin 1, begin 2, end 2, end 9 (no begin), end 1    nested pair, stray end
 *   begin 20, begin 21, end 20, end 21                  overlapping pairs
 *   begin 3                                             never ended
 * Worker: begin 10, end 10, end 3 (begun on the main thread).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CREATE_TRACE_POINTS
#include "xport-events.h"

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "xport-worker");
	trace_req_begin(10, "/w");
	trace_queue(7, -7);
	trace_req_end(10, 500);
	trace_req_end(3, 0);
	return NULL;
}

static int many(long n)
{
	long i;

	for (i = 0; i + 1 < n; i += 2) {
		trace_req_begin((int)i, "/many");
		trace_req_end((int)i, 200);
		if (i % 16 == 0 && i + 2 < n) {
			trace_queue((unsigned int)(i % 100), -i);
			i++;
		}
	}
	if (i < n)
		trace_queue(0, 0);
	return 0;
}

int main(int argc, char **argv)
{
	static const int v[3] = { -1, 0, 2147483647 };
	pthread_t t;

	if (argc == 3 && !strcmp(argv[1], "many"))
		return many(atol(argv[2]));
	if (argc != 1) {
		fprintf(stderr, "usage: xport-demo [many N]\n");
		return 2;
	}
	trace_req_begin(1, "/index.html");
	trace_queue(1, 1);
	trace_req_begin(2, "/api/v1/items?q=\"x\"");
	trace_queue(3, 2);
	trace_req_end(2, 200);
	trace_req_end(9, 404);
	trace_req_end(1, 200);
	trace_queue(0, -3);
	trace_req_begin(20, "/a");
	trace_req_begin(21, "/b");
	trace_req_end(20, 200);
	trace_req_end(21, 200);
	trace_req_begin(3, "/never-ends");
	/* quotes, backslash, control bytes, DEL, UTF-8 (2, 3, 4 bytes), a
	 * lone continuation byte, a cut sequence, an overlong form, 0xff */
	trace_text("q\"b\\n\n\t\r\x01\x1f\x7f", "ctl");
	trace_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "utf8");
	trace_text("bad\x80 \xc3 \xe2\x82 \xc0\xaf \xff", "bad");
	trace_text("", "eightchr");
	trace_limits(INT64_MIN, UINT64_MAX, -128, 65535, v);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
