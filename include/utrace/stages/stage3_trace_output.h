/* SPDX-License-Identifier: MIT */
/*
 * Stage 3: TP_printk compiled to C (the kernel's trace_raw_output_<call>).
 *
 *   static void utrace_event_output_<call>(struct utrace_seq *s, const void *rec)
 *   {
 *           struct trace_event_raw_<call> *field = rec;
 *           struct utrace_seq *p = <scratch for __print_* helpers>;
 *           utrace_seq_printf(s, <fmt>, <args with __entry == field>);
 *   }
 *
 * DEFINE_EVENT_PRINT gets a function of its own, named after the event.
 * The format string is checked by the compiler (-Wformat), as in the kernel.
 */
#include "reset.h"

/* (the format and its arguments, if any: no ', ##__VA_ARGS__', a GNU
 * extension that -Wpedantic reports) */
#undef TP_printk
#define TP_printk(...) __VA_ARGS__

#define __entry __utrace_field
#define __get_dynamic_array(field)					\
	((void *)((char *)__entry + (__entry->__data_loc_##field & 0xffff)))
#define __get_dynamic_array_len(field)					\
	((__entry->__data_loc_##field >> 16) & 0xffff)
#define __get_str(field) ((char *)__get_dynamic_array(field))
#define __get_bitmask(field)						\
	utrace_tp_print_bitmask(__utrace_p, __get_dynamic_array(field),	\
				__get_dynamic_array_len(field))
#define __get_cpumask(field) __get_bitmask(field)
#define __get_sockaddr(field) ((struct sockaddr *)__get_dynamic_array(field))
/* A __rel_loc word counts its offset from its own end. */
#define __get_rel_dynamic_array(field)					\
	((void *)((char *)__entry +					\
		  offsetof(__typeof__(*__entry), __rel_loc_##field) +	\
		  sizeof(uint32_t) + (__entry->__rel_loc_##field & 0xffff)))
#define __get_rel_dynamic_array_len(field)				\
	((__entry->__rel_loc_##field >> 16) & 0xffff)
#define __get_rel_str(field) ((char *)__get_rel_dynamic_array(field))
#define __get_rel_bitmask(field)					\
	utrace_tp_print_bitmask(__utrace_p, __get_rel_dynamic_array(field), \
				__get_rel_dynamic_array_len(field))
#define __get_rel_cpumask(field) __get_rel_bitmask(field)
#define __get_rel_sockaddr(field)					\
	((struct sockaddr *)__get_rel_dynamic_array(field))
#define __print_flags(flag, delim, ...)					\
	__extension__({							\
		static const struct utrace_print_flag __utrace_tab[] =	\
			{ __VA_ARGS__, { 0, NULL } };			\
		utrace_tp_print_flags(__utrace_p, delim,		\
				      (unsigned long)(flag), __utrace_tab); \
	})
#define __print_flags_u64(flag, delim, ...)				\
	__print_flags(flag, delim, __VA_ARGS__)
#define __print_symbolic(value, ...)					\
	__extension__({							\
		static const struct utrace_print_flag __utrace_tab[] =	\
			{ __VA_ARGS__, { 0, NULL } };			\
		utrace_tp_print_symbols(__utrace_p,			\
					(unsigned long)(value), __utrace_tab); \
	})
#define __print_symbolic_u64(value, ...) __print_symbolic(value, __VA_ARGS__)
#define __print_array(array, count, el_size)				\
	utrace_tp_print_array(__utrace_p, array, count, el_size)
#define __print_hex(buf, buf_len)					\
	utrace_tp_print_hex(__utrace_p, buf, buf_len, 0)
#define __print_hex_str(buf, buf_len)					\
	utrace_tp_print_hex(__utrace_p, buf, buf_len, 1)
#define __print_dynamic_array(array, el_size)				\
	__print_array(__get_dynamic_array(array),			\
		      (int)(__get_dynamic_array_len(array) / (el_size)), (el_size))
#define __print_hex_dump(prefix_str, prefix_type, rowsize, groupsize,	\
			 buf, len, ascii)				\
	utrace_tp_print_hex_dump(__utrace_p, prefix_str, prefix_type,	\
				 rowsize, groupsize, buf, len, ascii)
#define __print_ns_to_secs(value)					\
	((unsigned long long)(value) / 1000000000ULL)
#define __print_ns_without_secs(value)					\
	((unsigned int)((unsigned long long)(value) % 1000000000ULL))
#define __get_buf(len) utrace_tp_seq_acquire(__utrace_p, (len))
/* The kernel's TRACE_FLAG_HARDIRQ and _SOFTIRQ: never set here. */
#define __event_in_hardirq() (__entry->ent.flags & 0x8)
#define __event_in_softirq() (__entry->ent.flags & 0x10)
#define __event_in_irq() (__entry->ent.flags & 0x18)

#define UTRACE__OUTPUT_FN(fn, call, print)				\
	UTRACE__RECORD_ACCESS						\
	static void fn(struct utrace_seq *__utrace_s, const void *__utrace_rec) \
	{								\
		struct trace_event_raw_##call *__utrace_field =		\
			(struct trace_event_raw_##call *)(uintptr_t)__utrace_rec; \
		char __utrace_pbuf[4096];		\
		struct utrace_seq __utrace_pseq;			\
		struct utrace_seq *__utrace_p = &__utrace_pseq;		\
		utrace_seq_init(__utrace_p, __utrace_pbuf,		\
				sizeof(__utrace_pbuf));			\
		(void)__utrace_field;					\
		(void)__utrace_p;					\
		utrace_seq_printf(__utrace_s, print);			\
	}								\
	UTRACE__SEMICOLON

#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	UTRACE__OUTPUT_FN(utrace_event_output_##call, call, PARAMS(print))
#undef DEFINE_EVENT_PRINT
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	UTRACE__OUTPUT_FN(utrace_event_output_##name, template, PARAMS(print))
