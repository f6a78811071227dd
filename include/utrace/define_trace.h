/* SPDX-License-Identifier: MIT */
/*
 * utrace/define_trace.h - turn an events header into definitions.
 *
 * An events header ends with '#include <trace/define_trace.h>' (or this
 * file) outside its include guard.  In the one .c that defined
 * CREATE_TRACE_POINTS, that include re-reads the events header once per
 * stage (TRACE_HEADER_MULTI_READ), each stage giving the DSL macros
 * another meaning:
 *
 *   stage 0  tracepoint objects and probe iterators      stages/stage0_*.h
 *   stage 1  struct trace_event_raw_<call>               stages/stage1_*.h
 *   stage 2  struct trace_event_data_offsets_<call>      stages/stage2_*.h
 *   stage 3  compiled TP_printk                          stages/stage3_*.h
 *   stage 4  field tables for the format file            stages/stage4_*.h
 *   stage 5  variable-length field placement             stages/stage5_*.h
 *   stage 6  the recording probe                         stages/stage6_*.h
 *   stage 7  class/event objects, registry section       stages/stage7_*.h
 *
 * and adds, once per translation unit, the constructor and destructor that
 * hand this object's events to the registry (and take them back at exit
 * or dlclose).  To see the expansion: cc -E -P file.c.
 *
 * The events header is found as the kernel finds it: TRACE_INCLUDE_FILE
 * (default TRACE_SYSTEM) under TRACE_INCLUDE_PATH (default trace/events/).
 */
#ifdef CREATE_TRACE_POINTS

/* Prevent recursion: the events header includes this file again. */
#undef CREATE_TRACE_POINTS

#ifndef UTRACE_DISABLE

#ifndef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE TRACE_SYSTEM
#define UNDEF_TRACE_INCLUDE_FILE
#endif

#ifndef TRACE_INCLUDE_PATH
#define __TRACE_INCLUDE(system) <trace/events/system.h>
#define UNDEF_TRACE_INCLUDE_PATH
#else
#define __TRACE_INCLUDE(system) utrace__stringify(TRACE_INCLUDE_PATH/system.h)
#endif

#define TRACE_INCLUDE(system) __TRACE_INCLUDE(system)

#define TRACE_HEADER_MULTI_READ

/* Generated functions take every TP_PROTO argument, whether they use it
 * or not: keep -Wextra quiet about it in the user's build. */
#ifndef UTRACE__UNIT_DEFINED
#define UTRACE__UNIT_DEFINED
/* Tells this file's events apart from other files' in the registry, which
 * lists them in the order they are defined. */
static const char utrace__unit = 0;
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "stages/stage0_tracepoint_define.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)
#include "stages/stage1_struct_define.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)
#include "stages/stage2_data_offsets.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)
#include "stages/stage3_trace_output.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)
#include "stages/stage4_event_fields.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)
#include "stages/stage5_get_offsets.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)
#include "stages/stage6_event_callback.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)
#include "stages/stage7_class_define.h"
#include TRACE_INCLUDE(TRACE_INCLUDE_FILE)

#pragma GCC diagnostic pop

#ifndef UTRACE__MODULE_CTOR_DEFINED
#define UTRACE__MODULE_CTOR_DEFINED
/* The linker makes these for each object (executable or shared library)
 * that has the sections; hidden, so each object registers its own. */
#ifdef __cplusplus
extern "C" {
#endif
extern struct utrace_event *__start_utrace_events[]
	__attribute__((weak, visibility("hidden")));
extern struct utrace_event *__stop_utrace_events[]
	__attribute__((weak, visibility("hidden")));
extern const struct utrace_eval_map *__start_utrace_evals[]
	__attribute__((weak, visibility("hidden")));
extern const struct utrace_eval_map *__stop_utrace_evals[]
	__attribute__((weak, visibility("hidden")));
#ifdef __cplusplus
}
#endif

__attribute__((constructor)) static void utrace__module_ctor(void)
{
	utrace_tp_register_module(__start_utrace_events, __stop_utrace_events,
				  __start_utrace_evals, __stop_utrace_evals);
}

__attribute__((destructor)) static void utrace__module_dtor(void)
{
	utrace_tp_unregister_module(__start_utrace_events,
				    __stop_utrace_events);
}
#endif /* UTRACE__MODULE_CTOR_DEFINED */

/* Back to the declaration stage for any events header that follows. */
#include "stages/reset.h"
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
#undef DECLARE_TRACE_NOARGS
#undef DEFINE_TRACE
#undef DEFINE_TRACE_FN
#undef DECLARE_EVENT_CLASS
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
#undef TRACE_HEADER_MULTI_READ
#undef TRACE_INCLUDE
#undef __TRACE_INCLUDE
#ifdef UNDEF_TRACE_INCLUDE_FILE
#undef TRACE_INCLUDE_FILE
#undef UNDEF_TRACE_INCLUDE_FILE
#endif
#ifdef UNDEF_TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_PATH
#undef UNDEF_TRACE_INCLUDE_PATH
#endif
#include "tracepoint.h"

#endif /* !UTRACE_DISABLE */

/* We may be processing more files. */
#define CREATE_TRACE_POINTS

#endif /* CREATE_TRACE_POINTS */
