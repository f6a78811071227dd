// SPDX-License-Identifier: MIT
/* A module built with -fpatchable-function-entry=5 that fgraph-prog
 * dlopen()s and dlclose()s (t3044). */
int fg_mod_fn(int x);

__attribute__((noinline)) int fg_mod_fn(int x)
{
	return x * 3;
}
