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

#undef TP_printk
#define TP_printk(fmt, ...) fmt, ##__VA_ARGS__

#define __entry __utrace_field
#define __get_dynamic_array(field)					\
	((void *)((char *)__entry + (__entry->__data_loc_##field & 0xffff)))
#define __get_dynamic_array_len(field)					\
	((__entry->__data_loc_##field >> 16) & 0xffff)
#define __get_str(field) ((char *)__get_dynamic_array(field))
#define __get_bitmask(field)						\
	utrace_tp_print_bitmask(__utrace_p, __get_dynamic_array(field),	\
				__get_dynamic_array_len(field))
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
	}

#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	UTRACE__OUTPUT_FN(utrace_event_output_##call, call, PARAMS(print))
#undef DEFINE_EVENT
#define DEFINE_EVENT(template, name, proto, args)
#undef DEFINE_EVENT_PRINT
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	UTRACE__OUTPUT_FN(utrace_event_output_##name, template, PARAMS(print))
