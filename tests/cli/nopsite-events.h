/* SPDX-License-Identifier: MIT */
/*
 * Events of the jump-label site tests (t0093): nop_main and nop_odd are
 * nopsite-demo's, nop_mod the C++ module's that nopsite-demo dlopen()s.
 * (nop_lib: nopsite-lib-events.h.)
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nop

#if !defined(_TRACE_NOPSITE_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NOPSITE_EVENTS_H

#include <utrace/tracepoint.h>

DECLARE_EVENT_CLASS(nop_class,
	TP_PROTO(int n),
	TP_ARGS(n),
	TP_STRUCT__entry(
		__field(int, n)
	),
	TP_fast_assign(
		__entry->n = n;
	),
	TP_printk("n=%d", __entry->n)
);

#if defined(NOPSITE_MOD)
DEFINE_EVENT(nop_class, nop_mod, TP_PROTO(int n), TP_ARGS(n));
#else
DEFINE_EVENT(nop_class, nop_main, TP_PROTO(int n), TP_ARGS(n));
DEFINE_EVENT_CONDITION(nop_class, nop_odd, TP_PROTO(int n), TP_ARGS(n),
		       TP_CONDITION(n & 1));
#endif

#endif /* _TRACE_NOPSITE_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nopsite-events
#include <utrace/define_trace.h>
