/* SPDX-License-Identifier: MIT */
/*
 * Reset every DSL macro.  Each stage includes this first, then defines
 * only what it generates, so no stage can see another stage's meaning of
 * a macro.
 */
#undef TRACE_EVENT
#undef TRACE_EVENT_FN
#undef TRACE_EVENT_FN_COND
#undef TRACE_EVENT_CONDITION
#undef DECLARE_EVENT_CLASS
#undef DEFINE_EVENT
#undef DEFINE_EVENT_FN
#undef DEFINE_EVENT_PRINT
#undef DEFINE_EVENT_CONDITION
#undef DECLARE_TRACE
#undef DECLARE_TRACE_CONDITION
#undef DECLARE_TRACE_NOARGS
#undef DEFINE_TRACE
#undef DEFINE_TRACE_FN
#undef TRACE_DEFINE_ENUM
#undef TRACE_DEFINE_SIZEOF
#undef TRACE_EVENT_FLAGS
#undef TRACE_EVENT_PERF_PERM
#undef DECLARE_EVENT_NOP
#undef TRACE_EVENT_NOP
#undef DECLARE_EVENT_CLASS_NOP
#undef DEFINE_EVENT_NOP

#undef TP_STRUCT__entry
#undef TP_fast_assign
#undef TP_printk

#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#undef __string_len
#undef __vstring
#undef __bitmask
#undef __cpumask
#undef __sockaddr
#undef __field_ext
#undef __field_struct_ext
#undef __rel_dynamic_array
#undef __rel_string
#undef __rel_string_len
#undef __rel_bitmask
#undef __rel_cpumask
#undef __rel_sockaddr

#undef __entry
#undef __assign_str
#undef __assign_str_len
#undef __assign_vstr
#undef __assign_bitmask
#undef __get_str
#undef __get_dynamic_array
#undef __get_dynamic_array_len
#undef __get_bitmask
#undef __print_flags
#undef __print_flags_u64
#undef __print_symbolic
#undef __print_symbolic_u64
#undef __print_array
#undef __print_hex
#undef __print_hex_str
#undef __assign_cpumask
#undef __assign_sockaddr
#undef __assign_rel_str
#undef __assign_rel_str_len
#undef __assign_rel_bitmask
#undef __assign_rel_cpumask
#undef __assign_rel_sockaddr
#undef __get_cpumask
#undef __get_sockaddr
#undef __get_rel_dynamic_array
#undef __get_rel_dynamic_array_len
#undef __get_rel_str
#undef __get_rel_bitmask
#undef __get_rel_cpumask
#undef __get_rel_sockaddr
#undef __print_dynamic_array
#undef __print_hex_dump
#undef __print_ns_to_secs
#undef __print_ns_without_secs
#undef __get_buf
#undef __event_in_hardirq
#undef __event_in_softirq
#undef __event_in_irq

/*
 * Defaults shared by most stages: a stage that needs another meaning
 * undefines and redefines.  Every macro's expansion ends with a
 * declaration that takes the ';' the header writes after it (often just
 * UTRACE__SEMICOLON, see tracepoint.h): a ';' after a '}' would be an
 * empty declaration, which -Wpedantic reports.
 */
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)		\
	DECLARE_EVENT_CLASS(name, PARAMS(proto), PARAMS(args),		\
			    PARAMS(tstruct), PARAMS(assign), PARAMS(print)); \
	DEFINE_EVENT(name, name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN(name, proto, args, tstruct, assign, print, reg, unreg) \
	TRACE_EVENT(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct),	\
		    PARAMS(assign), PARAMS(print))
#define TRACE_EVENT_FN_COND(name, proto, args, cond, tstruct, assign, print, reg, unreg) \
	TRACE_EVENT(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct),	\
		    PARAMS(assign), PARAMS(print))
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print) \
	TRACE_EVENT(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct),	\
		    PARAMS(assign), PARAMS(print))
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)	\
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)	\
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define DECLARE_EVENT_CLASS(name, proto, args, tstruct, assign, print) \
	UTRACE__SEMICOLON
#define DEFINE_EVENT(template, name, proto, args) UTRACE__SEMICOLON
#define DECLARE_TRACE(name, proto, args) UTRACE__SEMICOLON
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)		\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DECLARE_TRACE_NOARGS(name) DECLARE_TRACE(name, void, )
#define TRACE_DEFINE_ENUM(a) UTRACE__SEMICOLON
#define TRACE_DEFINE_SIZEOF(a) UTRACE__SEMICOLON
/* No perf, no event flags here (the kernel's headers write
 * TRACE_EVENT_FLAGS(...) without a ';', TRACE_EVENT_PERF_PERM(...); with
 * one); the _NOP events define nothing. */
#define TRACE_EVENT_FLAGS(event, flag)
#define TRACE_EVENT_PERF_PERM(event, ...) UTRACE__SEMICOLON
#define DECLARE_EVENT_NOP(name, proto, args) UTRACE__SEMICOLON
#define TRACE_EVENT_NOP(name, proto, args, tstruct, assign, print)	\
	UTRACE__SEMICOLON
#define DECLARE_EVENT_CLASS_NOP(name, proto, args, tstruct, assign, print) \
	UTRACE__SEMICOLON
#define DEFINE_EVENT_NOP(template, name, proto, args) UTRACE__SEMICOLON

/* Field kinds that are others under another name in every stage (the
 * filter type of the _ext forms means nothing here).  Stage 4 spells
 * __sockaddr's element type u8, as the kernel's format files do. */
#define __field_ext(type, item, filter_type) __field(type, item)
#define __field_struct_ext(type, item, filter_type) __field_struct(type, item)
#define __sockaddr(field, len) __dynamic_array(unsigned char, field, len)
#define __rel_sockaddr(field, len) __rel_dynamic_array(unsigned char, field, len)

#define TP_STRUCT__entry(...) __VA_ARGS__
#define TP_fast_assign(...) __VA_ARGS__
#define TP_printk(fmt, ...)
