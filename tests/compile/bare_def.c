/* SPDX-License-Identifier: MIT */
/*
 * The definitions of tp-bare.h's tracepoints, written as the kernel's
 * samples/tracepoints/tracepoint-sample.c wrote them (with the prototype
 * that DEFINE_TRACE takes since Linux 5.10).
 */
#include "tp-bare.h"

DEFINE_TRACE(utc_bare_event,
	TP_PROTO(const char *file, int line),
	TP_ARGS(file, line));
DEFINE_TRACE(utc_bare_eventb, TP_PROTO(void), TP_ARGS());
DEFINE_TRACE(utc_bare_void, TP_PROTO(void), TP_ARGS());
DEFINE_TRACE(utc_bare_even, TP_PROTO(int v), TP_ARGS(v));
/* Declared here too, as a module of the kernel exports its tracepoints. */
EXPORT_TRACEPOINT_SYMBOL_GPL(utc_bare_event);

void utc_bare_fire(void)
{
	trace_utc_bare_event(__FILE__, __LINE__);
	trace_utc_bare_eventb();
	trace_utc_bare_void();
	trace_utc_bare_even(2);
}
