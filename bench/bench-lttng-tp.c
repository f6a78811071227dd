/* SPDX-License-Identifier: MIT */
/* The LTTng-UST probe provider of the benchmark, linked into the program. */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "bench-lttng-tp.h"
