/* SPDX-License-Identifier: MIT */
/*
 * A second system for the sample: simple events that a running program
 * fires again and again (sample --run), to look at with utrace show,
 * pipe, filter and mount.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM demo

#if !defined(_DEMO_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DEMO_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(demo_tick,

	TP_PROTO(unsigned long long count, int phase, const char *state),

	TP_ARGS(count, phase, state),

	TP_STRUCT__entry(
		__field(	unsigned long long,	count	)
		__field(	int,			phase	)
		__array(	char,			state, 16 )
	),

	TP_fast_assign(
		__entry->count = count;
		__entry->phase = phase;
		strncpy(__entry->state, state, sizeof(__entry->state) - 1);
		__entry->state[sizeof(__entry->state) - 1] = 0;
	),

	TP_printk("count=%llu phase=%d state=%s", __entry->count, __entry->phase,
		  __entry->state)
);

TRACE_EVENT(demo_request,

	TP_PROTO(int id, unsigned int bytes, const char *path),

	TP_ARGS(id, bytes, path),

	TP_STRUCT__entry(
		__field(	int,		id	)
		__field(	unsigned int,	bytes	)
		__string(	path,		path	)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->bytes = bytes;
		__assign_str(path);
	),

	TP_printk("id=%d bytes=%u path=%s", __entry->id, __entry->bytes,
		  __get_str(path))
);

#endif /* _DEMO_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE demo-trace
#include <trace/define_trace.h>
