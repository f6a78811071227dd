/* SPDX-License-Identifier: MIT */
/*
 * Stage 0: the tracepoint objects and their iterators.
 *
 *   struct utrace_tracepoint __tracepoint_<name> = { 0, "<name>", NULL, reg, unreg };
 *   void __traceiter_<name>(proto)
 *   {
 *           if (only the event's recording probe is attached)
 *                   call it (directly: utrace_event_raw_event_<template>), and return;
 *           read_lock();
 *           for (each registered probe) probe->func(probe->data, args);
 *           read_unlock();
 *   }
 *
 * Bare DECLARE_TRACE() tracepoints get these too (they have no event):
 * DEFINE_TRACE(), as in a .c file (tracepoint.h: UTRACE__DEFINE_TRACE_FN).
 */
#include "reset.h"

#undef TRACE_EVENT_FN
#undef TRACE_EVENT_FN_COND
#undef DEFINE_EVENT
#undef DEFINE_EVENT_FN
#undef DEFINE_EVENT_CONDITION
#undef DEFINE_EVENT_PRINT
#undef DECLARE_TRACE
#undef DECLARE_TRACE_CONDITION

#define DEFINE_TRACE_FN(name, reg, unreg, proto, args)			\
	UTRACE__DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))
#define DEFINE_TRACE(name, proto, args)					\
	DEFINE_TRACE_FN(name, NULL, NULL, PARAMS(proto), PARAMS(args))

/*
 * An event's tracepoint: when its recording probe is the only one, the
 * iterator calls it directly (stage 6 defines it, as
 * utrace_event_raw_event_<template>, declared here with its class's
 * prototype), so that the compiler inlines it there.  The registry's
 * 'builtin' is that class's probe too (utrace_event_slow_<template> with
 * the inlined writer; stage 7).
 */
#define UTRACE__DEFINE_EVENT_TP(template, name, reg, unreg, proto, args) \
	struct utrace_tracepoint __tracepoint_##name = {		\
		0, #name, NULL, reg, unreg, NULL, NULL			\
	};								\
	__attribute__((noinline)) static void __traceiter_all_##name(proto) \
	{								\
		UTRACE__CALL_PROBES(name, PARAMS(proto), PARAMS(args))	\
	}								\
	void __traceiter_##name(proto)					\
	{								\
		void *__utrace_fast = __atomic_load_n(			\
			&__tracepoint_##name.fast_data, __ATOMIC_ACQUIRE); \
		if (utrace__likely(__utrace_fast))			\
			utrace_event_raw_event_##template(__utrace_fast, args); \
		else							\
			__traceiter_all_##name(args);			\
	}								\
	UTRACE__SEMICOLON

/* (the header's ';' ends the declaration) */
#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	static inline __attribute__((always_inline)) void		\
	utrace_event_raw_event_##call(void *__data, proto)

/* TRACE_EVENT and TRACE_EVENT_CONDITION: reset.h's (a class, an event). */
#define TRACE_EVENT_FN(name, proto, args, tstruct, assign, print, reg, unreg) \
	DECLARE_EVENT_CLASS(name, PARAMS(proto), PARAMS(args),		\
			    PARAMS(tstruct), PARAMS(assign), PARAMS(print)); \
	UTRACE__DEFINE_EVENT_TP(name, name, reg, unreg, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN_COND(name, proto, args, cond, tstruct, assign, print, reg, unreg) \
	TRACE_EVENT_FN(name, PARAMS(proto), PARAMS(args), PARAMS(tstruct), \
		       PARAMS(assign), PARAMS(print), reg, unreg)
#define DEFINE_EVENT(template, name, proto, args)			\
	UTRACE__DEFINE_EVENT_TP(template, name, NULL, NULL, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)	\
	UTRACE__DEFINE_EVENT_TP(template, name, reg, unreg, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)	\
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	DEFINE_EVENT(template, name, PARAMS(proto), PARAMS(args))
#define DECLARE_TRACE(name, proto, args)				\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)		\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
