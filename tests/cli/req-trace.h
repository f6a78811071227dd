/* SPDX-License-Identifier: MIT */
/* The events of req-demo: a request's begin and end, with its id and path. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM reqdemo

#if !defined(_REQ_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _REQ_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(req_begin,
	TP_PROTO(int id, const char *path),
	TP_ARGS(id, path),
	TP_STRUCT__entry(
		__field(int, id)
		__string(path, path)
	),
	TP_fast_assign(
		__entry->id = id;
		__assign_str(path);
	),
	TP_printk("id=%d path=%s", __entry->id, __get_str(path))
);

TRACE_EVENT(req_end,
	TP_PROTO(int id, const char *path, int status),
	TP_ARGS(id, path, status),
	TP_STRUCT__entry(
		__field(int, id)
		__string(path, path)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->id = id;
		__assign_str(path);
		__entry->status = status;
	),
	TP_printk("id=%d path=%s status=%s", __entry->id, __get_str(path),
		  __print_symbolic(__entry->status, { 200, "OK" }, { 404, "NOT_FOUND" }))
);

#endif /* _REQ_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE req-trace
#include <trace/define_trace.h>
