/* SPDX-License-Identifier: MIT */
/* Includes badargs-trace.h: plainly, or with -DUTC_CTP as the
 * CREATE_TRACE_POINTS file. */
#ifdef UTC_CTP
#define CREATE_TRACE_POINTS
#endif
#include "badargs-trace.h"

void utc_fire(int a, int b);

void utc_fire(int a, int b)
{
	trace_utc_badargs(a, b);
}
