/* SPDX-License-Identifier: MIT */
/*
 * Must fail to compile as the CREATE_TRACE_POINTS file: DEFINE_EVENT
 * utc_wrongproto gives TP_PROTO(int a, long b) for a class whose
 * TP_PROTO is (int a, int b), so the class's recording probe would be
 * called with the wrong arguments.  With -DUTC_CONTROL the prototypes
 * agree and it must compile.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM utc_fail

#if !defined(_TRACE_UTC_BADCLASS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UTC_BADCLASS_H

#include <linux/tracepoint.h>

#ifndef UTC_BADCLASS_B
#ifdef UTC_CONTROL
#define UTC_BADCLASS_B int
#else
#define UTC_BADCLASS_B long
#endif
#endif

DECLARE_EVENT_CLASS(utc_cls,

	TP_PROTO(int a, int b),

	TP_ARGS(a, b),

	TP_STRUCT__entry(
		__field(	int,	a	)
		__field(	int,	b	)
	),

	TP_fast_assign(
		__entry->a = a;
		__entry->b = b;
	),

	TP_printk("a=%d b=%d", __entry->a, __entry->b)
);

DEFINE_EVENT(utc_cls, utc_wrongproto,
	TP_PROTO(int a, UTC_BADCLASS_B b),
	TP_ARGS(a, b));

#endif /* _TRACE_UTC_BADCLASS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE badclass-trace
#include <trace/define_trace.h>
