/* SPDX-License-Identifier: MIT */
/*
 * The kernel's signal:signal_generate event (include/trace/events/
 * signal.h), its fields and print format, for ftracetest's error_log
 * test (t0032), which writes a filter on it.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM signal

#if !defined(_TRACE_FT_SIGNAL_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_FT_SIGNAL_H

#include <string.h>
#include <linux/tracepoint.h>

/* The kernel's field is named errno, glibc's macro: not that here. */
#pragma push_macro("errno")
#undef errno

TRACE_EVENT(signal_generate,

	TP_PROTO(int sig, int code, const char *comm, pid_t pid, int group, int result),

	TP_ARGS(sig, code, comm, pid, group, result),

	TP_STRUCT__entry(
		__field(	int,	sig			)
		__field(	int,	errno			)
		__field(	int,	code			)
		__array(	char,	comm,	16		)
		__field(	pid_t,	pid			)
		__field(	int,	group			)
		__field(	int,	result			)
	),

	TP_fast_assign(
		__entry->sig	= sig;
		__entry->errno	= 0;
		__entry->code	= code;
		strncpy(__entry->comm, comm, 15);
		__entry->comm[15] = 0;
		__entry->pid	= pid;
		__entry->group	= group;
		__entry->result	= result;
	),

	TP_printk("sig=%d errno=%d code=%d comm=%s pid=%d grp=%d res=%d",
		  __entry->sig, __entry->errno, __entry->code,
		  __entry->comm, __entry->pid, __entry->group,
		  __entry->result)
);

#pragma pop_macro("errno")

#endif /* _TRACE_FT_SIGNAL_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ftrace-signal
#include <trace/define_trace.h>
