/* SPDX-License-Identifier: MIT */
/*
 * Events for the exports' tests (xport-demo.c): a request's begin and end
 * with the same id (--slice), a queue depth (--counter), text with every
 * kind of byte, and numbers at their limits.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM xport

#if !defined(_TRACE_XPORT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_XPORT_H

#include <stdint.h>
#include <string.h>
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
	TP_PROTO(int id, int status),
	TP_ARGS(id, status),
	TP_STRUCT__entry(
		__field(int, id)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->status = status;
	),
	TP_printk("id=%d status=%d", __entry->id, __entry->status)
);

TRACE_EVENT(queue,
	TP_PROTO(unsigned int depth, long long delta),
	TP_ARGS(depth, delta),
	TP_STRUCT__entry(
		__field(unsigned int, depth)
		__field(long long, delta)
	),
	TP_fast_assign(
		__entry->depth = depth;
		__entry->delta = delta;
	),
	TP_printk("depth=%u delta=%lld", __entry->depth, __entry->delta)
);

TRACE_EVENT(text,
	TP_PROTO(const char *s, const char *tag),
	TP_ARGS(s, tag),
	TP_STRUCT__entry(
		__string(s, s)
		__array(char, tag, 8)
	),
	TP_fast_assign(
		size_t n = strlen(tag);

		__assign_str(s);
		/* all 8 bytes when the tag has 8: no NUL then */
		memset(__entry->tag, 0, sizeof(__entry->tag));
		memcpy(__entry->tag, tag, n < sizeof(__entry->tag) ? n : sizeof(__entry->tag));
	),
	TP_printk("s=%s tag=%s", __get_str(s), __entry->tag)
);

TRACE_EVENT(limits,
	TP_PROTO(int64_t smin, uint64_t umax, signed char c, unsigned short us, const int *v),
	TP_ARGS(smin, umax, c, us, v),
	TP_STRUCT__entry(
		__field(int64_t, smin)
		__field(uint64_t, umax)
		__field(signed char, c)
		__field(unsigned short, us)
		__array(int, v, 3)
	),
	TP_fast_assign(
		__entry->smin = smin;
		__entry->umax = umax;
		__entry->c = c;
		__entry->us = us;
		memcpy(__entry->v, v, sizeof(__entry->v));
	),
	TP_printk("smin=%lld umax=%llu c=%d us=%u", (long long)__entry->smin,
		  (unsigned long long)__entry->umax, __entry->c, __entry->us)
);

#endif /* _TRACE_XPORT_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE xport-events
#include <trace/define_trace.h>
