/* SPDX-License-Identifier: MIT */
/*
 * 200 events in one library (stall-lib.c, t0054): a dlopen() that
 * registers them sends 200 formats to the recorder, about 1 KB each.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM stall

#if !defined(_TRACE_STALL_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_STALL_EVENTS_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(stall_class,
	TP_PROTO(u32 request_number, u64 bytes_transferred, u32 queue_depth_now,
		 u32 retries_so_far),
	TP_ARGS(request_number, bytes_transferred, queue_depth_now, retries_so_far),
	TP_STRUCT__entry(
		__field(u32, request_number)
		__field(u64, bytes_transferred)
		__field(u32, queue_depth_now)
		__field(u32, retries_so_far)
	),
	TP_fast_assign(
		__entry->request_number = request_number;
		__entry->bytes_transferred = bytes_transferred;
		__entry->queue_depth_now = queue_depth_now;
		__entry->retries_so_far = retries_so_far;
	),
	TP_printk("request_number=%u bytes_transferred=%llu queue_depth_now=%u "
		  "retries_so_far=%u", __entry->request_number,
		  (unsigned long long)__entry->bytes_transferred, __entry->queue_depth_now,
		  __entry->retries_so_far)
);

/* stall_000 ... stall_199 */
#define STALL_EV(n)							\
	DEFINE_EVENT(stall_class, stall_##n,				\
		TP_PROTO(u32 request_number, u64 bytes_transferred,	\
			 u32 queue_depth_now, u32 retries_so_far),	\
		TP_ARGS(request_number, bytes_transferred, queue_depth_now, \
			retries_so_far));
#define STALL_10(p)							\
	STALL_EV(p##0) STALL_EV(p##1) STALL_EV(p##2) STALL_EV(p##3)	\
	STALL_EV(p##4) STALL_EV(p##5) STALL_EV(p##6) STALL_EV(p##7)	\
	STALL_EV(p##8) STALL_EV(p##9)

STALL_10(00) STALL_10(01) STALL_10(02) STALL_10(03) STALL_10(04)
STALL_10(05) STALL_10(06) STALL_10(07) STALL_10(08) STALL_10(09)
STALL_10(10) STALL_10(11) STALL_10(12) STALL_10(13) STALL_10(14)
STALL_10(15) STALL_10(16) STALL_10(17) STALL_10(18) STALL_10(19)

#endif /* _TRACE_STALL_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE stall-events
#include <trace/define_trace.h>
