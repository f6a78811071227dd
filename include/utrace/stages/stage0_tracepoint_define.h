/* SPDX-License-Identifier: MIT */
/*
 * Stage 0: the tracepoint objects and their iterators.
 *
 *   struct utrace_tracepoint __tracepoint_<name> = { 0, "<name>", NULL, reg, unreg };
 *   void __traceiter_<name>(proto)
 *   {
 *           if (only the event's recording probe is attached)
 *                   call it, and return;
 *           read_lock();
 *           for (each registered probe) probe->func(probe->data, args);
 *           read_unlock();
 *   }
 *
 * Bare DECLARE_TRACE() tracepoints get these too (they have no event).
 */
#include "reset.h"

#undef TRACE_EVENT
#undef TRACE_EVENT_FN
#undef TRACE_EVENT_FN_COND
#undef TRACE_EVENT_CONDITION
#undef DEFINE_EVENT
#undef DEFINE_EVENT_FN
#undef DEFINE_EVENT_CONDITION
#undef DEFINE_EVENT_PRINT
#undef DECLARE_TRACE
#undef DECLARE_TRACE_CONDITION

#define DEFINE_TRACE_FN(name, reg, unreg, proto, args)			\
	struct utrace_tracepoint __tracepoint_##name = {		\
		0, #name, NULL, reg, unreg, NULL, NULL			\
	};								\
	void __traceiter_##name(proto)					\
	{								\
		struct utrace_tracepoint_func *__utrace_it;		\
		void *__utrace_fast = __atomic_load_n(			\
			&__tracepoint_##name.fast_data, __ATOMIC_ACQUIRE); \
		if (utrace__likely(__utrace_fast)) {			\
			((void (*)(void *, proto))			\
			 __tracepoint_##name.builtin)(__utrace_fast, args); \
			return;						\
		}							\
		utrace_tp_read_lock();					\
		__utrace_it = __atomic_load_n(&__tracepoint_##name.funcs, \
					      __ATOMIC_CONSUME);	\
		if (__utrace_it)					\
			for (; __utrace_it->func; __utrace_it++)	\
				((void (*)(void *, proto))__utrace_it->func)( \
					__utrace_it->data, args);	\
		utrace_tp_read_unlock();				\
	}
#define DEFINE_TRACE(name, proto, args)					\
	DEFINE_TRACE_FN(name, NULL, NULL, PARAMS(proto), PARAMS(args))

#define TRACE_EVENT(name, proto, args, tstruct, assign, print)		\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print) \
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN(name, proto, args, tstruct, assign, print, reg, unreg) \
	DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN_COND(name, proto, args, cond, tstruct, assign, print, reg, unreg) \
	DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT(template, name, proto, args)			\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)	\
	DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)	\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DECLARE_TRACE(name, proto, args)				\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)		\
	DEFINE_TRACE(name, PARAMS(proto), PARAMS(args))
