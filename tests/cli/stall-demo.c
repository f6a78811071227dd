/* SPDX-License-Identifier: MIT */
/*
 * The program of t0054: stall-demo LIB DIR
 *
 * Fires an event of its own, writes its pid to DIR/ready, waits for DIR/go (the test
 * stops the recorder meanwhile), dlopen()s LIB (200 events: 200 formats
 * to send) and writes how long that took to DIR/took ("N ms"), waits for
 * DIR/end, fires LIB's events once each (with DIR/again: every 50 ms
 * until DIR/stop), and exits.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "fast-events.h"

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void wait_file(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK) != 0)
		usleep(10000);
}

static int put_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.new", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		return -1;
	{
		char to[4096];

		snprintf(to, sizeof(to), "%s/%s", dir, name);
		return rename(path, to);
	}
}

int main(int argc, char **argv)
{
	void (*fire)(void);
	long long t0, t1;
	char took[64], me[32], path[4096];
	void *h;

	if (argc != 3) {
		fprintf(stderr, "usage: stall-demo LIB DIR\n");
		return 2;
	}
	trace_fast_pair(1, 2);
	snprintf(me, sizeof(me), "%d\n", (int)getpid());
	if (put_file(argv[2], "ready", me) < 0)
		return 1;
	wait_file(argv[2], "go");
	t0 = mono_ms();
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	t1 = mono_ms();
	if (!h) {
		fprintf(stderr, "stall-demo: %s\n", dlerror());
		return 1;
	}
	snprintf(took, sizeof(took), "%lld ms\n", t1 - t0);
	if (put_file(argv[2], "took", took) < 0)
		return 1;
	wait_file(argv[2], "end");
	*(void **)&fire = dlsym(h, "stall_fire_all");
	if (!fire)
		return 1;
	fire();
	/* with DIR/again: fire them every 50 ms until DIR/stop */
	snprintf(path, sizeof(path), "%s/again", argv[2]);
	if (access(path, F_OK) == 0) {
		snprintf(path, sizeof(path), "%s/stop", argv[2]);
		while (access(path, F_OK) != 0) {
			usleep(50000);
			fire();
		}
	}
	trace_fast_pair(3, 4);
	return 0;
}
