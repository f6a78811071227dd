/* SPDX-License-Identifier: MIT */
/* Functions for glob probes (t3130): three glob_*, one other, and a data
 * object glob_data that a glob must not take for a function.  ./glob-prog N
 * calls each N times and prints a sum; N < 0: rounds every 10 ms, forever. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int glob_alpha(int x);
int glob_beta(int x);
int glob_gamma(int x);
int other_fn(int x);
extern int glob_data[4];

int glob_data[4] = { 1, 2, 3, 4 };

__attribute__((noinline)) int glob_alpha(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + glob_data[x & 3];
}

__attribute__((noinline)) int glob_beta(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 5 - 1;
}

__attribute__((noinline)) int glob_gamma(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x ^ 0x55;
}

__attribute__((noinline)) int other_fn(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x + 7;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	long s = 0;

	for (int i = 0; n < 0 || i < n; i++) {
		s += glob_alpha(i) + glob_beta(i) + glob_gamma(i) + other_fn(i);
		if (n < 0)
			usleep(10000);
	}
	printf("%ld\n", s);
	return 0;
}
