/* SPDX-License-Identifier: MIT */
/*
 * A plain library without utrace, loaded by probe-dl-prog with dlopen()
 * after the probes on it are defined (t0093).  plib_mix() is long enough
 * for a jump; plib_add() (lea; ret) takes only a breakpoint.
 */
int plib_add(int a, int b);
long plib_mix(long a, long b);

__attribute__((noinline)) int plib_add(int a, int b)
{
	return a + b;
}

__attribute__((noinline)) long plib_mix(long a, long b)
{
	long x = a * 3 + (b ^ (a >> 2));

	return x > 1000 ? x - b : x + b;
}
