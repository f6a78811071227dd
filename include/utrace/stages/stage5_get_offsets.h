/* SPDX-License-Identifier: MIT */
/*
 * Stage 5: sizes of the variable-length fields of one record.
 *
 *   static inline unsigned utrace_event_get_offsets_<call>(
 *                   struct trace_event_data_offsets_<call> *d, proto)
 *   {
 *           for each dynamic field: d-><item> = len << 16 | offset;
 *           (__rel_* fields: the offset from the end of their word)
 *           return total variable length;
 *   }
 *
 * A length that cannot fit makes the total exceed UTRACE_EVENT_MAX, so the
 * record is dropped (and counted) instead of being written with a wrapped
 * __data_loc word.
 */
#include "reset.h"

#define UTRACE__DYN_PLACE(item, length)					\
	{								\
		size_t __utrace_l = (length);				\
		if (__utrace_l > UTRACE_EVENT_MAX)			\
			__utrace_l = UTRACE_EVENT_MAX + 1;		\
		__utrace_d->item = (uint32_t)(__utrace_size +		\
			offsetof(__typeof__(*__utrace_e), __data)) |	\
			(uint32_t)((__utrace_l & 0xffff) << 16);	\
		__utrace_size += __utrace_l;				\
	}

/* A __rel_loc word holds the offset from its own end. */
#define UTRACE__REL_PLACE(item, length)					\
	{								\
		size_t __utrace_l = (length);				\
		if (__utrace_l > UTRACE_EVENT_MAX)			\
			__utrace_l = UTRACE_EVENT_MAX + 1;		\
		__utrace_d->item = (uint32_t)(__utrace_size +		\
			offsetof(__typeof__(*__utrace_e), __data) -	\
			offsetof(__typeof__(*__utrace_e), __rel_loc_##item) - \
			sizeof(uint32_t)) |				\
			(uint32_t)((__utrace_l & 0xffff) << 16);	\
		__utrace_size += __utrace_l;				\
	}

#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)				\
	UTRACE__DYN_PLACE(item, (size_t)(len) > UTRACE_EVENT_MAX ?	\
			  (size_t)UTRACE_EVENT_MAX + 1 :		\
			  (size_t)(len) * sizeof(type))
#define __string(item, src)						\
	__utrace_d->item##_ptr_ = utrace__str_or_null((const char *)(src)); \
	UTRACE__DYN_PLACE(item, strlen(__utrace_d->item##_ptr_) + 1)
#define __string_len(item, src, len)					\
	__utrace_d->item##_ptr_ = utrace__str_or_null((const char *)(src)); \
	UTRACE__DYN_PLACE(item, (size_t)(len) + 1)
#define __vstring(item, fmt, ap)					\
	UTRACE__DYN_PLACE(item, utrace__vstr_len(fmt, ap))
#define __bitmask(item, nr_bits)					\
	UTRACE__DYN_PLACE(item, utrace__bitmask_bytes(nr_bits))
#define __cpumask(item) __bitmask(item, nr_cpumask_bits)
#define __rel_dynamic_array(type, item, len)				\
	UTRACE__REL_PLACE(item, (size_t)(len) > UTRACE_EVENT_MAX ?	\
			  (size_t)UTRACE_EVENT_MAX + 1 :		\
			  (size_t)(len) * sizeof(type))
#define __rel_string(item, src)						\
	__utrace_d->item##_ptr_ = utrace__str_or_null((const char *)(src)); \
	UTRACE__REL_PLACE(item, strlen(__utrace_d->item##_ptr_) + 1)
#define __rel_string_len(item, src, len)				\
	__utrace_d->item##_ptr_ = utrace__str_or_null((const char *)(src)); \
	UTRACE__REL_PLACE(item, (size_t)(len) + 1)
#define __rel_bitmask(item, nr_bits)					\
	UTRACE__REL_PLACE(item, utrace__bitmask_bytes(nr_bits))
#define __rel_cpumask(item) __rel_bitmask(item, nr_cpumask_bits)

#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	static inline size_t utrace_event_get_offsets_##call(		\
		struct trace_event_data_offsets_##call *__utrace_d, proto) \
	{								\
		size_t __utrace_size = 0;				\
		struct trace_event_raw_##call *__utrace_e = NULL;	\
		(void)__utrace_e;					\
		__utrace_d->__utrace_unused = 0;			\
		tstruct							\
		return __utrace_size;					\
	}								\
	UTRACE__SEMICOLON
