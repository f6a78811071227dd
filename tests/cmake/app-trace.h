#undef TRACE_SYSTEM
#define TRACE_SYSTEM app

#if !defined(_TRACE_APP_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_APP_H
#include <linux/tracepoint.h>

TRACE_EVENT(req_start,
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
#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE app-trace
#include <trace/define_trace.h>
