/* SPDX-License-Identifier: MIT */
/* The kernel's irq:irq_handler_entry (include/trace/events/irq.h). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM irq

#if !defined(_TRACE_KIRQ_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_KIRQ_H

#include <linux/tracepoint.h>

TRACE_EVENT(irq_handler_entry,

	TP_PROTO(int irq, const char *name),

	TP_ARGS(irq, name),

	TP_STRUCT__entry(
		__field(	int,	irq		)
		__string(	name,	name		)
	),

	TP_fast_assign(
		__entry->irq = irq;
		__assign_str(name);
	),

	TP_printk("irq=%d name=%s", __entry->irq, __get_str(name))
);

#endif /* _TRACE_KIRQ_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kernel-irq
#include <trace/define_trace.h>
