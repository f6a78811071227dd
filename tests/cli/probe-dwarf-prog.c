/* SPDX-License-Identifier: MIT */
/*
 * A plain C program (no libutrace) for the dynamic-probe tests t0090 and
 * t0091, built by them with -O0 -g and -O2 -g.  "prog N" calls add() and
 * handle() N times (every 100 ms when N > 100, so a test can attach);
 * "prog --offsets" prints struct req's layout for the tests to compare.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct req {
	int id;
	const char *name;
	char tag[8];
	unsigned flags : 3;
	unsigned prio : 5;
	long vals[4];
};

long total;

__attribute__((noinline)) int add(int a, long b)
{
	int c = a * 2;

	total += c + b;
	return c + (int)b;
}

__attribute__((noinline)) size_t handle(struct req *r)
{
	size_t n = strlen(r->name);

	total += r->vals[2] + r->flags + r->prio;
	return n + (size_t)r->id;
}

int main(int argc, char **argv)
{
	int loops = argc > 1 ? atoi(argv[1]) : 3;
	struct req r = { .id = 7, .name = "hello", .tag = "tg", .flags = 5, .prio = 17,
			 .vals = { 10, 20, 30, 40 } };

	if (argc > 1 && !strcmp(argv[1], "--offsets")) {
		printf("id=%zu name=%zu tag=%zu vals=%zu\n", offsetof(struct req, id),
		       offsetof(struct req, name), offsetof(struct req, tag),
		       offsetof(struct req, vals));
		return 0;
	}
	for (int i = 0; i < loops; i++) {
		add(i, 100 + i);
		handle(&r);
		r.id++;
		if (loops > 100)
			usleep(100000);
	}
	printf("%ld\n", total);
	return 0;
}
