/* SPDX-License-Identifier: MIT */
/*
 * Stage 7: the class and event objects, and the registry's section.
 *
 *   static const char *const utrace_print_<call>[2] = { "\"fmt\"", "REC->a, ..." };
 *   static const struct utrace_event_class utrace_event_class_<call> = {...};
 *   static struct utrace_event utrace_event_<name> = {...};
 *   static struct utrace_event *utrace_event_ptr_<name>   in section "utrace_events"
 *
 * The print fmt text is made as the kernel makes it: TP_printk's arguments
 * are stringified after expansion, with __entry defined as REC and the
 * __print_*() and __get_*() helpers left undefined so they stay as text.
 */
#include "reset.h"

#define __entry REC
/* What the kernel's format files show for these (not run there either). */
#define __print_ns_to_secs(val) (val) / 1000000000UL
#define __print_ns_without_secs(val) (val) % 1000000000UL
#define __event_in_hardirq() (REC->common_flags & 0x8)
#define __event_in_softirq() (REC->common_flags & 0x10)
#define __event_in_irq() (REC->common_flags & 0x18)
#undef TP_printk
#define TP_printk(fmt, ...) "\"" fmt "\"", utrace__stringify(__VA_ARGS__)

/* (the header's ';' ends the last declaration, here and below) */
#define UTRACE__EVENT_DEFINE(template, name, output, printv)		\
	static struct utrace_event utrace_event_##name = {		\
		#name, &utrace_event_class_##template,			\
		&__tracepoint_##name, output, printv, 0, NULL,		\
		&utrace__unit, __COUNTER__, NULL			\
	};								\
	static struct utrace_event *utrace_event_ptr_##name		\
		__attribute__((section("utrace_events"), used,		\
			       aligned(sizeof(void *)))) =		\
		&utrace_event_##name

/* The probe the registry attaches: with the inlined writer, the one that
 * goes through libutrace (filters, several probes); the iterator's direct
 * call inlines the other (stage 0). */
#ifdef UTRACE__INLINE_WRITER
#define UTRACE__CLASS_PROBE(call) utrace_event_slow_##call
#else
#define UTRACE__CLASS_PROBE(call) utrace_event_raw_event_##call
#endif

#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	static const char *const utrace_print_##call[2] = { print };	\
	static const struct utrace_event_class utrace_event_class_##call = { \
		utrace__stringify(TRACE_SYSTEM),			\
		utrace_event_fields_##call,				\
		sizeof(struct trace_event_raw_##call),			\
		(utrace_probe_fn)UTRACE__CLASS_PROBE(call)		\
	}
/* The class's recording probe is attached to this event's tracepoint, so
 * their prototypes must agree (the kernel checks this too). */
#define UTRACE__CHECK_PROTO(template, name, proto)			\
	static inline void utrace_check_proto_##name(void)		\
	{								\
		void (*__utrace_cb)(void *, proto) =			\
			utrace_event_raw_event_##template;		\
		(void)__utrace_cb;					\
	}

#undef DEFINE_EVENT
#define DEFINE_EVENT(template, name, proto, args)			\
	UTRACE__CHECK_PROTO(template, name, PARAMS(proto))		\
	UTRACE__EVENT_DEFINE(template, name, utrace_event_output_##template, \
			     utrace_print_##template)
#undef DEFINE_EVENT_PRINT
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	UTRACE__CHECK_PROTO(template, name, PARAMS(proto))		\
	static const char *const utrace_print_##name[2] = { print };	\
	UTRACE__EVENT_DEFINE(template, name, utrace_event_output_##name, \
			     utrace_print_##name)

#define UTRACE__EVAL_DEFINE(id, str, val)				\
	static const struct utrace_eval_map utrace_eval_##id = {	\
		utrace__stringify(TRACE_SYSTEM), str, (unsigned long)(val) \
	};								\
	static const struct utrace_eval_map *utrace_eval_ptr_##id	\
		__attribute__((section("utrace_evals"), used,		\
			       aligned(sizeof(void *)))) = &utrace_eval_##id
#define UTRACE__EVAL_DEFINE1(id, str, val) UTRACE__EVAL_DEFINE(id, str, val)
#undef TRACE_DEFINE_ENUM
#define TRACE_DEFINE_ENUM(a) UTRACE__EVAL_DEFINE1(__COUNTER__, #a, a)
#undef TRACE_DEFINE_SIZEOF
#define TRACE_DEFINE_SIZEOF(a)						\
	UTRACE__EVAL_DEFINE1(__COUNTER__, "sizeof(" #a ")", sizeof(a))
