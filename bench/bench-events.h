/* SPDX-License-Identifier: MIT */
/*
 * The utrace events header of the benchmark: one event with two integer
 * arguments and one with an int and a string, the same as the LTTng-UST
 * events in bench-lttng-tp.h.
 * bench-events.c defines CREATE_TRACE_POINTS; bench.c only calls
 * trace_bench_ev(), as any other file of a program would.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM bench

#if !defined(_TRACE_BENCH_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_BENCH_EVENTS_H

#include <linux/tracepoint.h>

TRACE_EVENT(bench_ev,

	TP_PROTO(u64 a, u32 b),

	TP_ARGS(a, b),

	TP_STRUCT__entry(
		__field(	u64,	a	)
		__field(	u32,	b	)
	),

	TP_fast_assign(
		__entry->a = a;
		__entry->b = b;
	),

	TP_printk("a=%llu b=%u", (unsigned long long)__entry->a, __entry->b)
);

/* An int and a path (7 to 28 bytes): the string event of the bench,
 * the same as bench:bench_str of bench-lttng-tp.h (ctf_string). */
TRACE_EVENT(bench_str,

	TP_PROTO(u32 n, const char *path),

	TP_ARGS(n, path),

	TP_STRUCT__entry(
		__field(	u32,	n	)
		__string(	path,	path	)
	),

	TP_fast_assign(
		__entry->n = n;
		__assign_str(path);
	),

	TP_printk("n=%u path=%s", __entry->n, __get_str(path))
);

#endif /* _TRACE_BENCH_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE bench-events
#include <trace/define_trace.h>
