/* SPDX-License-Identifier: MIT */
/*
 * The one translation unit that defines CREATE_TRACE_POINTS for
 * samples/sample-trace.h.  Compiled as C and as C++ (-x c++), and with
 * -DUTRACE_DISABLE, where it must still compile and define nothing of
 * utrace's.
 */
#include "utc-check.h"

#define CREATE_TRACE_POINTS
#include "sample-trace.h"

int utc_reg_balance;

/* Declared by sample-trace.h (with this language's linkage). */
int sample_trace_reg(void)
{
	utc_reg_balance++;
	return 0;
}

void sample_trace_unreg(void)
{
	utc_reg_balance--;
}
