/* SPDX-License-Identifier: MIT */
/*
 * Events of ctx-demo.c (t3081): requests that carry W3C trace context
 * (trace id, span id, the parent's span id) from a frontend process into
 * the backend processes it starts.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ctx

#if !defined(_TRACE_CTX_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_CTX_EVENTS_H

#include <linux/tracepoint.h>

TRACE_EVENT(ctx_begin,
	TP_PROTO(u32 id, const char *trace, const char *span, const char *parent),
	TP_ARGS(id, trace, span, parent),
	TP_STRUCT__entry(
		__field(u32, id)
		__string(trace, trace)
		__string(span, span)
		__string(parent, parent)
	),
	TP_fast_assign(
		__entry->id = id;
		__assign_str(trace);
		__assign_str(span);
		__assign_str(parent);
	),
	TP_printk("id=%u trace=%s span=%s parent=%s", __entry->id, __get_str(trace),
		  __get_str(span), __get_str(parent))
);

TRACE_EVENT(ctx_end,
	TP_PROTO(u32 id),
	TP_ARGS(id),
	TP_STRUCT__entry(
		__field(u32, id)
	),
	TP_fast_assign(
		__entry->id = id;
	),
	TP_printk("id=%u", __entry->id)
);

TRACE_EVENT(ctx_log,
	TP_PROTO(const char *trace, const char *span, const char *msg),
	TP_ARGS(trace, span, msg),
	TP_STRUCT__entry(
		__string(trace, trace)
		__string(span, span)
		__string(msg, msg)
	),
	TP_fast_assign(
		__assign_str(trace);
		__assign_str(span);
		__assign_str(msg);
	),
	TP_printk("trace=%s span=%s %s", __get_str(trace), __get_str(span), __get_str(msg))
);

/* a step inside a request: its trace, no span of its own */
TRACE_EVENT(ctx_step,
	TP_PROTO(u32 id, const char *trace),
	TP_ARGS(id, trace),
	TP_STRUCT__entry(
		__field(u32, id)
		__string(trace, trace)
	),
	TP_fast_assign(
		__entry->id = id;
		__assign_str(trace);
	),
	TP_printk("id=%u trace=%s", __entry->id, __get_str(trace))
);

TRACE_EVENT(ctx_step_done,
	TP_PROTO(u32 id),
	TP_ARGS(id),
	TP_STRUCT__entry(
		__field(u32, id)
	),
	TP_fast_assign(
		__entry->id = id;
	),
	TP_printk("id=%u", __entry->id)
);

#endif /* _TRACE_CTX_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ctx-events
#include <trace/define_trace.h>
