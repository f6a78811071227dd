/* SPDX-License-Identifier: MIT */
/*
 * Events whose TP_printk uses the kernel's %p extensions, as kernel
 * headers do: the record holds the values (function addresses, a CPU
 * mask, addresses as byte arrays), and TP_printk points at them.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pfmt

#if !defined(_TRACE_PFMT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_PFMT_H

#include <string.h>
#include <linux/tracepoint.h>

TRACE_EVENT(pfmt_sym,
	TP_PROTO(void *fn, void *caller),
	TP_ARGS(fn, caller),
	TP_STRUCT__entry(
		__field(unsigned long, fn)
		__field(unsigned long, caller)
	),
	TP_fast_assign(
		__entry->fn = (unsigned long)fn;
		__entry->caller = (unsigned long)caller;
	),
	TP_printk("fn=%ps caller=%pS", (void *)__entry->fn, (void *)__entry->caller)
);

TRACE_EVENT(pfmt_net,
	TP_PROTO(unsigned long cpus, const unsigned char *ip4, const unsigned char *ip6,
		 const unsigned char *mac, const unsigned char *uuid),
	TP_ARGS(cpus, ip4, ip6, mac, uuid),
	TP_STRUCT__entry(
		__array(unsigned long, cpus, 1)
		__array(unsigned char, saddr, 4)
		__array(unsigned char, saddr6, 16)
		__array(unsigned char, mac, 6)
		__array(unsigned char, uuid, 16)
	),
	TP_fast_assign(
		__entry->cpus[0] = cpus;
		memcpy(__entry->saddr, ip4, 4);
		memcpy(__entry->saddr6, ip6, 16);
		memcpy(__entry->mac, mac, 6);
		memcpy(__entry->uuid, uuid, 16);
	),
	TP_printk("cpus=%*pbl mask=%*pb ip=%pI4 ip6=%pI6c mac=%pM uuid=%pU hex=%*phC",
		  8, __entry->cpus, 8, __entry->cpus, __entry->saddr, __entry->saddr6,
		  __entry->mac, __entry->uuid, 4, __entry->saddr)
);

#endif /* _TRACE_PFMT_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pfmt-events
#include <trace/define_trace.h>
