#undef TRACE_SYSTEM
#define TRACE_SYSTEM hello

#if !defined(HELLO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define HELLO_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(hello_world,
	TP_PROTO(int n),
	TP_ARGS(n),
	TP_STRUCT__entry(__field(int, n)),
	TP_fast_assign(__entry->n = n;),
	TP_printk("n=%d", __entry->n)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hello-trace
#include <trace/define_trace.h>
