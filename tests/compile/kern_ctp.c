/* SPDX-License-Identifier: MIT */
/* Two kernel-style events headers in one CREATE_TRACE_POINTS file. */
#define CREATE_TRACE_POINTS
#include <trace/events/utc_alpha.h>
#include <trace/events/utc_beta.h>
