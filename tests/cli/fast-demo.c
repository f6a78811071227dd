/* SPDX-License-Identifier: MIT */
/*
 * fast-demo (t0092): events through the inlined writer.
 *
 *   fast-demo strings     fast_str and fast_str2 with strings of 0 to 70
 *                         bytes ('a' + n % 26 ...), and a NULL string
 *   fast-demo pairs N     fast_pair(i, i) for i < N, many pages
 *   fast-demo signals N   the same, with a timer signal every 50 us whose
 *                         handler fires fast_pair(1 << 40 | j, 0x80000000 | j)
 *                         (j = 0, 1, ...) in the middle of the loop's
 *                         events; prints how many it fired
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define CREATE_TRACE_POINTS
#include "fast-events.h"

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	unsigned int j = (unsigned int)fired;

	(void)sig;
	trace_fast_pair(1ULL << 40 | j, 0x80000000u | j);
	fired = (sig_atomic_t)(j + 1);
}

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
	if (argc == 3 && strcmp(argv[1], "signals") == 0) {
		unsigned long n = strtoul(argv[2], NULL, 10);
		struct itimerval it = { { 0, 50 }, { 0, 50 } };
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		for (unsigned long i = 0; i < n; i++)
			trace_fast_pair(i, (unsigned int)i);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		printf("%u\n", (unsigned int)fired);
		return 0;
	}
	fprintf(stderr, "usage: fast-demo strings | pairs N | signals N\n");
	return 2;
}
