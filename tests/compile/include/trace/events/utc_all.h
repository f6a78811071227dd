/* SPDX-License-Identifier: MIT */
/*
 * Every macro the kernel's include/trace/stages/ knows, in one events
 * header (utrace's own; in the manner of the kernel's
 * samples/trace_events/trace-events-sample.h, which is GPL-2.0 and so is
 * not copied here).  The program supplies the kernel-only names:
 * cpumask_t with cpumask_bits() and nr_cpumask_bits, struct sockaddr.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM utc_all

#if !defined(_TRACE_UTC_ALL_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UTC_ALL_H

#include <linux/tracepoint.h>

#ifndef UTC_ALL_HELPERS
#define UTC_ALL_HELPERS
#include <stdio.h>
struct utc_pt {
	int x, y;
};

/* Writes into __get_buf()'s bytes. */
static inline const char *utc_all_id(char *buf, int id)
{
	if (!buf)
		return "(no room)";
	snprintf(buf, 16, "id#%d", id);
	return buf;
}
#endif

/* __data_loc kinds new to utrace, and the _ext fields. */
TRACE_EVENT(utc_all_loc,

	TP_PROTO(int a, struct utc_pt pt, const cpumask_t *mask,
		 const int *list, int n, const struct sockaddr *sa),

	TP_ARGS(a, pt, mask, list, n, sa),

	TP_STRUCT__entry(
		__field_ext(		int,		a,	FILTER_OTHER	)
		__field_struct_ext(	struct utc_pt,	pt,	FILTER_OTHER	)
		__cpumask(		cpum					)
		__dynamic_array(	int,		list,	n		)
		__sockaddr(		addr,	sizeof(struct sockaddr)		)
	),

	TP_fast_assign(
		__entry->a = a;
		__entry->pt = pt;
		__assign_cpumask(cpum, cpumask_bits(mask));
		memcpy(__get_dynamic_array(list), list, n * sizeof(int));
		__assign_sockaddr(addr, sa, sizeof(struct sockaddr));
	),

	TP_printk("a=%d cpum=%s list=%s addr_len=%d", __entry->a,
		  __get_cpumask(cpum),
		  __print_array(__get_dynamic_array(list),
				__get_dynamic_array_len(list) / sizeof(int),
				sizeof(int)),
		  (int)__get_dynamic_array_len(addr))
);

/* The __rel_loc family.  This event and the one above print only with
 * helpers libtraceevent 1.7.1 knows, so 'utrace script' prints them too. */
TRACE_EVENT(utc_all_rel,

	TP_PROTO(const char *name, const char *tag, const u16 *vals, int n,
		 const unsigned long *bits, const cpumask_t *mask,
		 const struct sockaddr *sa),

	TP_ARGS(name, tag, vals, n, bits, mask, sa),

	TP_STRUCT__entry(
		__rel_string(		name,	name			)
		__rel_string(		name2,	name			)
		__rel_string_len(	tag,	tag,	3		)
		__rel_dynamic_array(	u16,	vals,	n		)
		__rel_bitmask(		bm,	40			)
		__rel_cpumask(		rcpu				)
		__rel_sockaddr(		raddr,	sizeof(struct sockaddr)	)
	),

	TP_fast_assign(
		__assign_rel_str(name);
		__assign_rel_str(name2, name);
		__assign_rel_str_len(tag, tag, 3);
		memcpy(__get_rel_dynamic_array(vals), vals, n * sizeof(u16));
		__assign_rel_bitmask(bm, bits, 40);
		__assign_rel_cpumask(rcpu, cpumask_bits(mask));
		__assign_rel_sockaddr(raddr, sa, sizeof(struct sockaddr));
	),

	TP_printk("%s/%s tag=%s vals=%s n=%d bm=%s rcpu=%s raddr_len=%d",
		  __get_rel_str(name), __get_rel_str(name2), __get_rel_str(tag),
		  __print_array(__get_rel_dynamic_array(vals),
				__get_rel_dynamic_array_len(vals) / sizeof(u16),
				sizeof(u16)),
		  (int)__get_rel_dynamic_array_len(vals),
		  __get_rel_bitmask(bm), __get_rel_cpumask(rcpu),
		  (int)__get_rel_dynamic_array_len(raddr))
);

/* Printing helpers (libtraceevent 1.7.1 knows none of __print_dynamic_array,
 * __print_hex_dump, __get_buf, nor a struct member or -> in the print fmt);
 * __perf_count/__perf_task in TP_PROTO. */
TRACE_EVENT(utc_all_print,

	TP_PROTO(const unsigned char *buf, u64 __perf_count(ns),
		 int __perf_task(id), const int *list, int n,
		 struct utc_pt pt, const struct sockaddr *sa),

	TP_ARGS(buf, ns, id, list, n, pt, sa),

	TP_STRUCT__entry(
		__array(	unsigned char,	buf,	20	)
		__field(	u64,		ns		)
		__field(	int,		id		)
		__dynamic_array(int,		list,	n	)
		__field_struct(	struct utc_pt,	pt		)
		__sockaddr(	addr,	sizeof(struct sockaddr)	)
	),

	TP_fast_assign(
		memcpy(__entry->buf, buf, 20);
		__entry->ns = ns;
		__entry->id = id;
		memcpy(__get_dynamic_array(list), list, n * sizeof(int));
		__entry->pt = pt;
		__assign_sockaddr(addr, sa, sizeof(struct sockaddr));
	),

	TP_printk("list=%s pt=%d,%d family=%d %s s=%llu.%09u irq=%d%d%d %s dump:%s%s",
		  __print_dynamic_array(list, sizeof(int)),
		  __entry->pt.x, __entry->pt.y,
		  (int)__get_sockaddr(addr)->sa_family,
		  __print_hex_str(__entry->buf, 4),
		  __print_ns_to_secs(__entry->ns),
		  __print_ns_without_secs(__entry->ns),
		  !!__event_in_hardirq(), !!__event_in_softirq(),
		  !!__event_in_irq(),
		  utc_all_id(__get_buf(16), __entry->id),
		  __print_hex_dump("  ", DUMP_PREFIX_OFFSET, 16, 2,
				   __entry->buf, 20, true),
		  __print_hex_dump("", DUMP_PREFIX_NONE, 16, 1,
				   __entry->buf, 3, false))
);

/* No event, no flags, no perf permission here. */
TRACE_EVENT_FLAGS(utc_all_print, 0x1)
TRACE_EVENT_PERF_PERM(utc_all_print, 1 == 1 ? 0 : -1);

TRACE_EVENT_NOP(utc_all_nop,
	TP_PROTO(int a),
	TP_ARGS(a),
	TP_STRUCT__entry(__field(int, a)),
	TP_fast_assign(__entry->a = a;),
	TP_printk("a=%d", __entry->a)
);

DECLARE_EVENT_CLASS_NOP(utc_all_nop_class,
	TP_PROTO(int a),
	TP_ARGS(a),
	TP_STRUCT__entry(__field(int, a)),
	TP_fast_assign(__entry->a = a;),
	TP_printk("a=%d", __entry->a)
);

DEFINE_EVENT_NOP(utc_all_nop_class, utc_all_nop_ev,
	TP_PROTO(int a),
	TP_ARGS(a)
);

DECLARE_EVENT_NOP(utc_all_nop_decl,
	TP_PROTO(int a),
	TP_ARGS(a)
);

#endif /* _TRACE_UTC_ALL_H */

#include <trace/define_trace.h>
