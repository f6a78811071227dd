/* SPDX-License-Identifier: MIT */
/*
 * Bare tracepoints in a plain header, as the kernel's samples/tracepoints
 * declared them: no TRACE_SYSTEM, no events, no define_trace.h.  One .c
 * file (bare_def.c) instantiates them with DEFINE_TRACE(name, proto,
 * args); the others (bare_main.c) call and probe them.
 */
#ifndef UTC_TP_BARE_H
#define UTC_TP_BARE_H

#include <linux/tracepoint.h>

DECLARE_TRACE(utc_bare_event,
	TP_PROTO(const char *file, int line),
	TP_ARGS(file, line));

/* Without arguments: the older kernels' form and TP_PROTO(void). */
DECLARE_TRACE_NOARGS(utc_bare_eventb);

DECLARE_TRACE(utc_bare_void,
	TP_PROTO(void),
	TP_ARGS());

DECLARE_TRACE_CONDITION(utc_bare_even,
	TP_PROTO(int v),
	TP_ARGS(v),
	TP_CONDITION(v % 2 == 0));

#ifdef __cplusplus
extern "C" {
#endif
/* bare_def.c: fires each tracepoint once (from the other language too). */
void utc_bare_fire(void);
#ifdef __cplusplus
}
#endif

#endif /* UTC_TP_BARE_H */
