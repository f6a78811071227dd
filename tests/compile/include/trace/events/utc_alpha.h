/* SPDX-License-Identifier: MIT */
/*
 * A kernel-style events header: TRACE_SYSTEM is a plain identifier, and
 * neither TRACE_INCLUDE_PATH nor TRACE_INCLUDE_FILE is set, so
 * define_trace.h finds this file again as <trace/events/utc_alpha.h>
 * (tests/compile/include is on the include path).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM utc_alpha

#if !defined(_TRACE_UTC_ALPHA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UTC_ALPHA_H

#include <linux/tracepoint.h>

TRACE_EVENT(utc_pair,

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

TRACE_EVENT(utc_name,

	TP_PROTO(const char *name, u32 len),

	TP_ARGS(name, len),

	TP_STRUCT__entry(
		__string(	name,	name	)
		__field(	u32,	len	)
	),

	TP_fast_assign(
		__assign_str(name);
		__entry->len = len;
	),

	TP_printk("name=%s len=%u", __get_str(name), __entry->len)
);

#endif /* _TRACE_UTC_ALPHA_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
