/* SPDX-License-Identifier: MIT */
/* Kernel-compatible <trace/define_trace.h>; see utrace/define_trace.h. */
#include "../../define_trace.h"
