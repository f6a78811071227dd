/* SPDX-License-Identifier: MIT */
/*
 * The events of hist-demo (t0084): shaped like the kernel events of
 * Documentation/trace/histogram.rst's examples: kmem:kmalloc's fields, a
 * task event with a char[16] comm and a __string, and a counter.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM histdemo

#if !defined(_HIST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HIST_TRACE_H

#include <stddef.h>
#include <string.h>

#include <linux/tracepoint.h>

TRACE_EVENT(kmalloc,
	TP_PROTO(unsigned long call_site, const void *ptr, size_t bytes_req, size_t bytes_alloc,
		 unsigned int gfp_flags),
	TP_ARGS(call_site, ptr, bytes_req, bytes_alloc, gfp_flags),
	TP_STRUCT__entry(
		__field(unsigned long, call_site)
		__field(const void *, ptr)
		__field(size_t, bytes_req)
		__field(size_t, bytes_alloc)
		__field(unsigned int, gfp_flags)
	),
	TP_fast_assign(
		__entry->call_site = call_site;
		__entry->ptr = ptr;
		__entry->bytes_req = bytes_req;
		__entry->bytes_alloc = bytes_alloc;
		__entry->gfp_flags = gfp_flags;
	),
	TP_printk("call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=0x%x",
		  (void *)__entry->call_site, __entry->ptr, __entry->bytes_req,
		  __entry->bytes_alloc, __entry->gfp_flags)
);

TRACE_EVENT(task,
	TP_PROTO(const char *comm, int pid, int prio, const char *path),
	TP_ARGS(comm, pid, prio, path),
	TP_STRUCT__entry(
		__array(char, comm, 16)
		__field(int, pid)
		__field(int, prio)
		__string(path, path)
	),
	TP_fast_assign(
		memset(__entry->comm, 0, 16);
		memcpy(__entry->comm, comm, strnlen(comm, 15));
		__entry->pid = pid;
		__entry->prio = prio;
		__assign_str(path);
	),
	TP_printk("comm=%s pid=%d prio=%d path=%s", __entry->comm, __entry->pid,
		  __entry->prio, __get_str(path))
);

TRACE_EVENT(tick,
	TP_PROTO(int n, long delta),
	TP_ARGS(n, delta),
	TP_STRUCT__entry(
		__field(int, n)
		__field(long, delta)
	),
	TP_fast_assign(
		__entry->n = n;
		__entry->delta = delta;
	),
	TP_printk("n=%d delta=%ld", __entry->n, __entry->delta)
);

#endif /* _HIST_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hist-trace
#include <trace/define_trace.h>
