/* SPDX-License-Identifier: MIT */
/*
 * Must fail to compile: TP_ARGS(a) does not match TP_PROTO(int a, int b).
 * With -DUTC_CONTROL the arguments match and it must compile.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM utc_fail

#if !defined(_TRACE_UTC_BADARGS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UTC_BADARGS_H

#include <linux/tracepoint.h>

#ifndef UTC_BADARGS_ARGS
#ifdef UTC_CONTROL
#define UTC_BADARGS_ARGS a, b
#else
#define UTC_BADARGS_ARGS a
#endif
#endif

TRACE_EVENT(utc_badargs,

	TP_PROTO(int a, int b),

	TP_ARGS(UTC_BADARGS_ARGS),

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

#endif /* _TRACE_UTC_BADARGS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE badargs-trace
#include <trace/define_trace.h>
