/* SPDX-License-Identifier: MIT */
/*
 * Stage 1: the record layout, as the kernel's struct trace_event_raw_<call>.
 *
 *   struct trace_event_raw_<call> {
 *           struct utrace_entry ent;           common_type .. common_pid
 *           <type> <item>;                     __field, __field_struct
 *           <type> <item>[<len>];              __array
 *           uint32_t __data_loc_<item>;        __dynamic_array, __string...
 *           uint32_t __rel_loc_<item>;         __rel_dynamic_array, __rel_string...
 *           char __data[];                     variable data follows
 *   };
 *
 * It also rejects, at compile time, classes whose fixed part cannot fit.
 */
#include "reset.h"

#define __field(type, item) type item;
#define __field_struct(type, item) type item;
#define __array(type, item, len) type item[len];
#define __dynamic_array(type, item, len) uint32_t __data_loc_##item;
#define __string(item, src) __dynamic_array(char, item, -1)
#define __string_len(item, src, len) __dynamic_array(char, item, -1)
#define __vstring(item, fmt, ap) __dynamic_array(char, item, -1)
#define __bitmask(item, nr_bits) __dynamic_array(char, item, -1)
#define __cpumask(item) __dynamic_array(char, item, -1)
#define __rel_dynamic_array(type, item, len) uint32_t __rel_loc_##item;
#define __rel_string(item, src) __rel_dynamic_array(char, item, -1)
#define __rel_string_len(item, src, len) __rel_dynamic_array(char, item, -1)
#define __rel_bitmask(item, nr_bits) __rel_dynamic_array(char, item, -1)
#define __rel_cpumask(item) __rel_dynamic_array(char, item, -1)

/* C++ has no flexible array member but g++ and clang++ take one: say
 * that it is meant, for -Wpedantic. */
#ifdef __cplusplus
#define UTRACE__FLEX_BEGIN						\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wpedantic\"")
#define UTRACE__FLEX_END _Pragma("GCC diagnostic pop")
#else
#define UTRACE__FLEX_BEGIN
#define UTRACE__FLEX_END
#endif

#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	UTRACE__FLEX_BEGIN						\
	struct trace_event_raw_##call {					\
		struct utrace_entry ent;				\
		tstruct							\
		char __data[];						\
	};								\
	UTRACE__FLEX_END						\
	UTRACE__STATIC_ASSERT(sizeof(struct trace_event_raw_##call) <= \
			      UTRACE_EVENT_MAX,				\
			      "utrace: the fixed fields of event class '" \
			      #call "' exceed UTRACE_EVENT_MAX bytes")
