/* SPDX-License-Identifier: MIT */
/*
 * A library without events, which pfmt-demo dlopen()s and names with
 * %ps / %pS (t0006): its symbols must reach a recording although nothing
 * in it registers with utrace.
 */
int pfmt_lib_fn(int x);

__attribute__((noinline)) int pfmt_lib_fn(int x)
{
	return x * 3 + 1;
}
