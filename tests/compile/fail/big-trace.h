/* SPDX-License-Identifier: MIT */
/*
 * Must fail to compile as the CREATE_TRACE_POINTS file: the fixed fields
 * of class utc_big_class (5000 bytes of array) exceed UTRACE_EVENT_MAX,
 * and the static assertion must name the class.  With -DUTC_CONTROL the
 * array is small and it must compile.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM utc_fail

#if !defined(_TRACE_UTC_BIG_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UTC_BIG_H

#include <linux/tracepoint.h>

#ifndef UTC_BIG_LEN
#ifdef UTC_CONTROL
#define UTC_BIG_LEN 100
#else
#define UTC_BIG_LEN 5000
#endif
#endif

DECLARE_EVENT_CLASS(utc_big_class,

	TP_PROTO(int a),

	TP_ARGS(a),

	TP_STRUCT__entry(
		__field(	int,	a			)
		__array(	char,	big,	UTC_BIG_LEN	)
	),

	TP_fast_assign(
		__entry->a = a;
		memset(__entry->big, 0, sizeof(__entry->big));
	),

	TP_printk("a=%d", __entry->a)
);

DEFINE_EVENT(utc_big_class, utc_big,
	TP_PROTO(int a),
	TP_ARGS(a));

#endif /* _TRACE_UTC_BIG_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE big-trace
#include <trace/define_trace.h>
