/* SPDX-License-Identifier: MIT */
/*
 * fast-demo (t0092): events through the inlined writer.
 *
 *   fast-demo strings     fast_str and fast_str2 with strings of 0 to 70
 *                         bytes ('a' + n % 26 ...), and a NULL string
 *   fast-demo pairs N     fast_pair(i, i) for i < N, many pages
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CREATE_TRACE_POINTS
#include "fast-events.h"

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "strings") == 0) {
		char s[80];

		for (unsigned int n = 0; n <= 70; n++) {
			for (unsigned int i = 0; i < n; i++)
				s[i] = (char)('a' + (n + i) % 26);
			s[n] = 0;
			trace_fast_str(n, s);
			trace_fast_str2(n, s);
		}
		trace_fast_str(999, NULL);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "pairs") == 0) {
		unsigned long n = strtoul(argv[2], NULL, 10);

		for (unsigned long i = 0; i < n; i++)
			trace_fast_pair(i, (unsigned int)i);
		return 0;
	}
	fprintf(stderr, "usage: fast-demo strings | pairs N\n");
	return 2;
}
