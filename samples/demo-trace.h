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

/* Laid out as sched_switch's prev_comm and prev_prio, so that the tracefs
 * conformance scripts (tests/ctl) can use it where they use those. */
TRACE_EVENT(demo_tick,

	TP_PROTO(unsigned long long count, const char *stage, int prio),

	TP_ARGS(count, stage, prio),

	TP_STRUCT__entry(
		__field(	unsigned long long,	count	)
		__array(	char,			stage, 16 )
		__field(	int,			prio	)
	),

	TP_fast_assign(
		__entry->count = count;
		strncpy(__entry->stage, stage, sizeof(__entry->stage) - 1);
		__entry->stage[sizeof(__entry->stage) - 1] = 0;
		__entry->prio = prio;
	),

	TP_printk("count=%llu stage=%s prio=%d", __entry->count, __entry->stage,
		  __entry->prio)
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
