/* SPDX-License-Identifier: MIT */
#define CREATE_TRACE_POINTS
#include "big-trace.h"
