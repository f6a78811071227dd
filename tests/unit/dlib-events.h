/* SPDX-License-Identifier: MIT */
/* Events of a library loaded with dlopen() (tests/unit/dlib.c). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dlib

#if !defined(_TRACE_DLIB_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_DLIB_H

#include <linux/tracepoint.h>

TRACE_EVENT(dlib_hello,
	TP_PROTO(int n, const char *who),
	TP_ARGS(n, who),
	TP_STRUCT__entry(
		__field(int, n)
		__string(who, who)
	),
	TP_fast_assign(
		__entry->n = n;
		__assign_str(who);
	),
	TP_printk("n=%d who=%s", __entry->n, __get_str(who))
);

#endif /* _TRACE_DLIB_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dlib-events
#include <trace/define_trace.h>
