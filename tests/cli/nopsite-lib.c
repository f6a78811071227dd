/* SPDX-License-Identifier: MIT */
/* A shared library that defines nop_lib and calls it (t0093). */
#include <stdio.h>

#define CREATE_TRACE_POINTS
#include "nopsite-lib-events.h"
#include "nopsite-sites.h"

void nopsite_lib_fire(int n);
void nopsite_lib_sites(FILE *f);

void nopsite_lib_fire(int n)
{
	trace_nop_lib(n);
}

void nopsite_lib_sites(FILE *f)
{
	nopsite_print(f, "lib");
}
