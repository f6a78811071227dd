/* SPDX-License-Identifier: MIT */
/* Events of the buffer stress test (system "rbstress"). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rbstress

#if !defined(_TRACE_RBSTRESS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_RBSTRESS_H

#include <linux/tracepoint.h>

/* kind 0: from the thread's loop, 1: from a signal handler, 2: long */
TRACE_EVENT(rb_ev,
	TP_PROTO(unsigned long long seq, unsigned int tid, unsigned int kind),
	TP_ARGS(seq, tid, kind),
	TP_STRUCT__entry(
		__field(unsigned long long, seq)
		__field(unsigned int, tid)
		__field(unsigned int, kind)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__entry->tid = tid;
		__entry->kind = kind;
	),
	TP_printk("seq=%llu tid=%u kind=%u", __entry->seq, __entry->tid, __entry->kind)
);

/* A record longer than 112 bytes: the kernel's type_len 0 encoding. */
TRACE_EVENT(rb_long,
	TP_PROTO(unsigned long long seq, const char *text),
	TP_ARGS(seq, text),
	TP_STRUCT__entry(
		__field(unsigned long long, seq)
		__string(text, text)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__assign_str(text);
	),
	TP_printk("seq=%llu text=%s", __entry->seq, __get_str(text))
);

#endif /* _TRACE_RBSTRESS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rb-events
#include <trace/define_trace.h>
