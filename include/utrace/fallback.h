/* SPDX-License-Identifier: MIT */
/*
 * utrace/fallback.h - utrace's tracepoint macros compiled to nothing, in
 * one self-contained header, for a project that keeps its trace calls and
 * must also build where utrace is not installed (as projects copy
 * <sys/sdt.h>).
 *
 * Copy this one file into the project, under the names its events header
 * includes, in a directory that is on the include path only when utrace is
 * not found:
 *
 *     compat/utrace/tracepoint.h       (or compat/linux/tracepoint.h)
 *     compat/utrace/define_trace.h     (or compat/trace/define_trace.h)
 *
 * and build with -I compat (no libutrace, no liburcu).  The events header
 * and every trace call stay as they are.  At the end of the events header
 * the second name finds everything defined already: it does nothing.
 *
 * What it gives is what -DUTRACE_DISABLE gives with utrace installed:
 * trace_<ev>() is an empty inline function (its arguments are evaluated
 * as C requires; TP_CONDITION and TP_fast_assign are not),
 * trace_<ev>_enabled() is false, register_trace_<ev>() and
 * unregister_trace_<ev>() return -ENOSYS, tracepoint_synchronize_unregister()
 * does nothing, and the CREATE_TRACE_POINTS file defines nothing.  The
 * runtime API of <utrace/utrace.h> is not here: code that calls it needs
 * utrace.  Like <linux/tracepoint.h>, it defines the kernel's u8 ... s64;
 * define UTRACE_COMPAT_LINUX_TYPES_DEFINED first to keep your own.
 * UTRACE_FALLBACK is defined, for code that must tell.
 *
 * Use it instead of utrace's headers in a translation unit, not beside
 * them.  tests/compile builds the project's test headers with it alone.
 */
#ifndef UTRACE_FALLBACK_H
#define UTRACE_FALLBACK_H

#define UTRACE_FALLBACK 1

/* (what utrace/tracepoint.h includes: events headers may rely on it) */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifndef UTRACE_COMPAT_LINUX_TYPES_DEFINED
#define UTRACE_COMPAT_LINUX_TYPES_DEFINED
#include <sys/types.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
#endif

/* (the same helpers as utrace/tracepoint.h's, with the same names) */
#define UTRACE__SEMICOLON struct utrace__semicolon
#define UTRACE__CAT_(a, b) a##b
#define UTRACE__CAT(a, b) UTRACE__CAT_(a, b)
#define UTRACE__SECOND_(a, b, ...) b
#define UTRACE__SECOND(...) UTRACE__SECOND_(__VA_ARGS__)
#define UTRACE__FIRST_(a, ...) a
#define UTRACE__NOARGS_PROBE_ ~, 1
#define UTRACE__NOARGS__(first) UTRACE__SECOND(UTRACE__NOARGS_PROBE_##first, 0, ~)
#define UTRACE__NOARGS_(first) UTRACE__NOARGS__(first)
#define UTRACE__NOARGS(...) UTRACE__NOARGS_(UTRACE__FIRST_(__VA_ARGS__, ~))
#define UTRACE__DATA_PROTO(args, ...)					\
	UTRACE__CAT(UTRACE__DATA_PROTO_, UTRACE__NOARGS(args))(__VA_ARGS__)
#define UTRACE__DATA_PROTO_0(...) void *__data, __VA_ARGS__
#define UTRACE__DATA_PROTO_1(...) void *__data

#define PARAMS(...) __VA_ARGS__
#define TP_PROTO(...) __VA_ARGS__
#define TP_ARGS(...) __VA_ARGS__
#define TP_CONDITION(...) __VA_ARGS__
#ifndef __perf_count
#define __perf_count(c) (c)
#endif
#ifndef __perf_task
#define __perf_task(t) (t)
#endif

static inline void tracepoint_synchronize_unregister(void) { }

#define UTRACE__NOP_TRACE(name, proto, data_proto)			\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")	\
	static inline void trace_##name(proto) { }			\
	static inline bool trace_##name##_enabled(void) { return false; } \
	static inline int register_trace_##name(void (*probe)(data_proto), \
						void *data)		\
	{ (void)probe; (void)data; return -ENOSYS; }			\
	static inline int unregister_trace_##name(void (*probe)(data_proto), \
						  void *data)		\
	{ (void)probe; (void)data; return -ENOSYS; }			\
	_Pragma("GCC diagnostic pop")					\
	UTRACE__SEMICOLON

/* Every macro takes the ';' the header writes after it, but
 * TRACE_EVENT_FLAGS(), written without one (utrace/tracepoint.h). */
#define DECLARE_TRACE(name, proto, args)				\
	UTRACE__NOP_TRACE(name, PARAMS(proto),				\
			  UTRACE__DATA_PROTO(PARAMS(args), PARAMS(proto)))
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)		\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DECLARE_TRACE_NOARGS(name) DECLARE_TRACE(name, void, )
#define DEFINE_TRACE_FN(name, reg, unreg, proto, args) UTRACE__SEMICOLON
#define DEFINE_TRACE(name, proto, args) UTRACE__SEMICOLON
#define EXPORT_TRACEPOINT_SYMBOL(name) UTRACE__SEMICOLON
#define EXPORT_TRACEPOINT_SYMBOL_GPL(name) UTRACE__SEMICOLON

#define TRACE_EVENT(name, proto, args, struct, assign, print)		\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN(name, proto, args, struct, assign, print, reg, unreg) \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN_COND(name, proto, args, cond, struct, assign, print, reg, unreg) \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_CONDITION(name, proto, args, cond, struct, assign, print) \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DECLARE_EVENT_CLASS(name, proto, args, tstruct, assign, print) \
	UTRACE__SEMICOLON
#define DEFINE_EVENT(template, name, proto, args)			\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)	\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)	\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_DEFINE_ENUM(a) UTRACE__SEMICOLON
#define TRACE_DEFINE_SIZEOF(a) UTRACE__SEMICOLON
#define TRACE_EVENT_FLAGS(event, flag)
#define TRACE_EVENT_PERF_PERM(event, ...) UTRACE__SEMICOLON

#define DECLARE_EVENT_NOP(name, proto, args)				\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")	\
	static inline void trace_##name(proto) { }			\
	static inline bool trace_##name##_enabled(void) { return false; } \
	_Pragma("GCC diagnostic pop")					\
	UTRACE__SEMICOLON
#define TRACE_EVENT_NOP(name, proto, args, struct, assign, print)	\
	DECLARE_EVENT_NOP(name, PARAMS(proto), PARAMS(args))
#define DECLARE_EVENT_CLASS_NOP(name, proto, args, tstruct, assign, print) \
	UTRACE__SEMICOLON
#define DEFINE_EVENT_NOP(template, name, proto, args)			\
	DECLARE_EVENT_NOP(name, PARAMS(proto), PARAMS(args))

#endif /* UTRACE_FALLBACK_H */
