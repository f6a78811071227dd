/* SPDX-License-Identifier: MIT */
/* The one file of the benchmark that defines the utrace events. */
#define CREATE_TRACE_POINTS
#include "bench-events.h"
