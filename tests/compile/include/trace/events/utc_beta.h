/* SPDX-License-Identifier: MIT */
/*
 * A second kernel-style events header, included after utc_alpha.h in the
 * same CREATE_TRACE_POINTS translation unit: an event class, two events
 * of it, an enum for the print fmt and bare tracepoints, two of them
 * without arguments.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM utc_beta

#if !defined(_TRACE_UTC_BETA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UTC_BETA_H

#include <linux/tracepoint.h>

#ifndef UTC_BETA_HELPERS
#define UTC_BETA_HELPERS
enum utc_beta_state { UTC_BETA_IDLE = 0, UTC_BETA_BUSY = 1 };
#endif

TRACE_DEFINE_ENUM(UTC_BETA_IDLE);
TRACE_DEFINE_ENUM(UTC_BETA_BUSY);

DECLARE_EVENT_CLASS(utc_beta_class,

	TP_PROTO(unsigned long id, int state),

	TP_ARGS(id, state),

	TP_STRUCT__entry(
		__field(	unsigned long,	id	)
		__field(	int,		state	)
	),

	TP_fast_assign(
		__entry->id = id;
		__entry->state = state;
	),

	TP_printk("id=%lu state=%s", __entry->id,
		  __print_symbolic(__entry->state,
				   { UTC_BETA_IDLE, "idle" },
				   { UTC_BETA_BUSY, "busy" }))
);

DEFINE_EVENT(utc_beta_class, utc_beta_start,
	TP_PROTO(unsigned long id, int state),
	TP_ARGS(id, state));

DEFINE_EVENT(utc_beta_class, utc_beta_stop,
	TP_PROTO(unsigned long id, int state),
	TP_ARGS(id, state));

DECLARE_TRACE(utc_beta_plain,
	TP_PROTO(int v),
	TP_ARGS(v));

/* Bare tracepoints without arguments: probes are void fn(void *data). */
DECLARE_TRACE_NOARGS(utc_beta_tick);

DECLARE_TRACE(utc_beta_void,
	TP_PROTO(void),
	TP_ARGS());

#endif /* _TRACE_UTC_BETA_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
