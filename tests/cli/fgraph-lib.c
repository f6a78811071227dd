// SPDX-License-Identifier: MIT
/* A library built with -fpatchable-function-entry=5 (fgraph-prog.c). */
#define NOINLINE __attribute__((noinline))

NOINLINE static int lib_inner(int x)
{
	return x * 2;
}

int fg_lib_twice(int x);

NOINLINE int fg_lib_twice(int x)
{
	return lib_inner(x);
}
