/* SPDX-License-Identifier: MIT */
/*
 * The event of stack-demo (t3060): fired at the end of known call chains,
 * so that the stacks recorded with it can be checked frame by frame.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stackdemo

#if !defined(_STACK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _STACK_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(hit,
	TP_PROTO(int where),
	TP_ARGS(where),
	TP_STRUCT__entry(
		__field(int, where)
	),
	TP_fast_assign(
		__entry->where = where;
	),
	TP_printk("where=%d", __entry->where)
);

#endif /* _STACK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE stack-trace
#include <trace/define_trace.h>
