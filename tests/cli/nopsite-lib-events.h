/* SPDX-License-Identifier: MIT */
/*
 * The event of libnopsite-lib.so (t0093), which nopsite-demo calls too:
 * its sites are in both objects, its tracepoint in the library.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nop

#if !defined(_TRACE_NOPSITE_LIB_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NOPSITE_LIB_EVENTS_H

#include <utrace/tracepoint.h>

TRACE_EVENT(nop_lib,
	TP_PROTO(int n),
	TP_ARGS(n),
	TP_STRUCT__entry(__field(int, n)),
	TP_fast_assign(__entry->n = n;),
	TP_printk("n=%d", __entry->n)
);

#endif /* _TRACE_NOPSITE_LIB_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nopsite-lib-events
#include <utrace/define_trace.h>
