/* SPDX-License-Identifier: MIT */
/*
 * Stage 2: where each variable-length field goes in this record.
 *
 *   struct trace_event_data_offsets_<call> {
 *           uint32_t <item>;                   __data_loc word: len << 16 | offset
 *                                              (__rel_loc: offset from the word's end)
 *           const char *<item>_ptr_;           __string source, for __assign_str(dst)
 *   };
 */
#include "reset.h"

#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len) uint32_t item;
#define __string(item, src) uint32_t item; const char *item##_ptr_;
#define __string_len(item, src, len) uint32_t item; const char *item##_ptr_;
#define __vstring(item, fmt, ap) uint32_t item;
#define __bitmask(item, nr_bits) uint32_t item;
#define __cpumask(item) uint32_t item;
#define __rel_dynamic_array(type, item, len) uint32_t item;
#define __rel_string(item, src) uint32_t item; const char *item##_ptr_;
#define __rel_string_len(item, src, len) uint32_t item; const char *item##_ptr_;
#define __rel_bitmask(item, nr_bits) uint32_t item;
#define __rel_cpumask(item) uint32_t item;

#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	struct trace_event_data_offsets_##call {			\
		tstruct							\
		int __utrace_unused;					\
	}
