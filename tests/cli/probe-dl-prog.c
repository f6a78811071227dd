/* SPDX-License-Identifier: MIT */
/*
 * A plain program without utrace for probes in libraries loaded later
 * and on IFUNC symbols (t0093):
 *   probe-dl-prog LIB N M [GO]
 * dlopen()s LIB, calls plib_add(i, 10 * i) and plib_mix(i, 1) N times,
 * dlclose()s it, dlopen()s it again and calls them M times more, then
 * dlclose()s it; calls strlen("utrace-strlen-probe") N times through a
 * pointer (what the process binds strlen to: an IFUNC's choice), and
 * prog_mix(i) N times, an IFUNC of the program whose implementation is
 * static (a stripped copy has no symbol for it).  With
 * GO: prints "ready", waits until the file GO exists before starting,
 * and until GO.end exists before exiting.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t (*volatile strlen_p)(const char *) = strlen;

long prog_mix(long a);

__attribute__((noinline)) static long mix_impl(long a)
{
	return a * 7 + (a >> 1);
}

__attribute__((used)) static long (*resolve_mix(void))(long)
{
	return mix_impl;
}

long prog_mix(long a) __attribute__((ifunc("resolve_mix")));

static void wait_file(const char *path)
{
	while (access(path, F_OK) != 0)
		usleep(20000);
}

static int round_of(const char *lib, int n, long *sum)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	int (*add)(int, int);
	long (*mix)(long, long);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&add = dlsym(h, "plib_add");
	*(void **)&mix = dlsym(h, "plib_mix");
	if (!add || !mix)
		return 1;
	for (int i = 0; i < n; i++)
		*sum += add(i, 10 * i) + mix(i, 1);
	return dlclose(h) ? 1 : 0;
}

int main(int argc, char **argv)
{
	char end[4096];
	long sum = 0;
	size_t len = 0;
	int n, m;

	if (argc < 4)
		return 2;
	n = atoi(argv[2]);
	m = atoi(argv[3]);
	if (argc > 4) {
		printf("ready\n");
		fflush(stdout);
		wait_file(argv[4]);
	}
	if (round_of(argv[1], n, &sum) || round_of(argv[1], m, &sum))
		return 1;
	for (int i = 0; i < n; i++) {
		len += strlen_p("utrace-strlen-probe");
		sum += prog_mix(i);
	}
	printf("sum=%ld len=%zu\n", sum, len);
	fflush(stdout);
	if (argc > 4) {
		snprintf(end, sizeof(end), "%s.end", argv[4]);
		wait_file(end);
	}
	return 0;
}
