/* SPDX-License-Identifier: MIT */
/*
 * Events of fast-demo.c (t0092): the inlined writer's strings, with
 * both forms of __assign_str, and a two-integer event.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fast

#if !defined(_TRACE_FAST_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_FAST_EVENTS_H

#include <linux/tracepoint.h>

/* The two string events differ only in the form of __assign_str. */
#define FAST_STR_EVENT(name, assign)					\
	TRACE_EVENT(name,						\
		TP_PROTO(u32 n, const char *s),				\
		TP_ARGS(n, s),						\
		TP_STRUCT__entry(					\
			__field(u32, n)					\
			__string(s, s)					\
		),							\
		TP_fast_assign(						\
			__entry->n = n;					\
			assign;						\
		),							\
		TP_printk("n=%u s=%s", __entry->n, __get_str(s))	\
	);

FAST_STR_EVENT(fast_str, __assign_str(s))
FAST_STR_EVENT(fast_str2, __assign_str(s, s))

TRACE_EVENT(fast_pair,
	TP_PROTO(u64 a, u32 b),
	TP_ARGS(a, b),
	TP_STRUCT__entry(
		__field(u64, a)
		__field(u32, b)
	),
	TP_fast_assign(
		__entry->a = a;
		__entry->b = b;
	),
	TP_printk("a=%llu b=%u", (unsigned long long)__entry->a, __entry->b)
);

#endif /* _TRACE_FAST_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fast-events
#include <trace/define_trace.h>
