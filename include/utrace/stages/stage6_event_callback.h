/* SPDX-License-Identifier: MIT */
/*
 * Stage 6: the built-in probe that records an event (the kernel's
 * trace_event_raw_event_<call>).  It is attached to the tracepoint when
 * the event is switched on.
 *
 *   static void utrace_event_raw_event_<call>(void *event, proto)
 *   {
 *           size = offsetof(struct trace_event_raw_<call>, __data) + get_offsets(&d, args);
 *                  (the struct's tail padding is not recorded)
 *           __entry = reserve(event, size);          NULL: dropped, counted
 *           <store the __data_loc words>
 *           { TP_fast_assign }
 *           commit();
 *
 * reserve and commit are inlined (tracepoint.h: utrace__reserve_inline(),
 * utrace__commit_inline()) on x86-64; what is not the usual case calls
 * libutrace's utrace_tp_reserve() and utrace_tp_commit().
 *   }
 */
#include "reset.h"

#define __entry __utrace_entry
#define __get_dynamic_array(field)					\
	((void *)((char *)__entry + (__entry->__data_loc_##field & 0xffff)))
#define __get_dynamic_array_len(field)					\
	((__entry->__data_loc_##field >> 16) & 0xffff)
#define __get_str(field) ((char *)__get_dynamic_array(field))
#define __get_bitmask(field) ((char *)__get_dynamic_array(field))
#define __get_cpumask(field) ((char *)__get_dynamic_array(field))
#define __get_sockaddr(field) ((struct sockaddr *)__get_dynamic_array(field))
#define __get_rel_dynamic_array(field)					\
	((void *)((char *)__entry +					\
		  offsetof(__typeof__(*__entry), __rel_loc_##field) +	\
		  sizeof(uint32_t) + (__entry->__rel_loc_##field & 0xffff)))
#define __get_rel_dynamic_array_len(field)				\
	((__entry->__rel_loc_##field >> 16) & 0xffff)
#define __get_rel_str(field) ((char *)__get_rel_dynamic_array(field))
#define __get_rel_bitmask(field) ((char *)__get_rel_dynamic_array(field))
#define __get_rel_cpumask(field) ((char *)__get_rel_dynamic_array(field))
#define __get_rel_sockaddr(field)					\
	((struct sockaddr *)__get_rel_dynamic_array(field))

/* __assign_str(dst) (current kernels) and __assign_str(dst, src) (older). */
#define UTRACE__ASSIGN_STR1(dst)					\
	utrace__copy_str_known(__get_str(dst),				\
			       __get_dynamic_array_len(dst),		\
			       __utrace_dp->dst##_ptr_)
#define UTRACE__ASSIGN_STR2(dst, src)					\
	utrace__copy_str(__get_str(dst), __get_dynamic_array_len(dst),	\
			 utrace__str_or_null((const char *)(src)))
#define __assign_str(...)						\
	utrace__arg3(__VA_ARGS__, UTRACE__ASSIGN_STR2,			\
		     UTRACE__ASSIGN_STR1, _)(__VA_ARGS__)
#define __assign_str_len(dst, src, len)					\
	utrace__copy_str_len(__get_str(dst), __get_dynamic_array_len(dst), \
			     (const char *)(src), (size_t)(len))
#define __assign_vstr(dst, fmt, va)					\
	utrace__copy_vstr(__get_str(dst), __get_dynamic_array_len(dst),	\
			  fmt, va)
#define __assign_bitmask(dst, src, nr_bits)				\
	memcpy(__get_bitmask(dst), (src), utrace__bitmask_bytes(nr_bits))
#define __assign_cpumask(dst, src)					\
	__assign_bitmask(dst, src, nr_cpumask_bits)
#define __assign_sockaddr(dst, src, len)				\
	utrace__copy_mem(__get_dynamic_array(dst),			\
			 __get_dynamic_array_len(dst), (src), (size_t)(len))

/* The same for the __rel_loc forms. */
#define UTRACE__ASSIGN_REL_STR1(dst)					\
	utrace__copy_str_known(__get_rel_str(dst),			\
			       __get_rel_dynamic_array_len(dst),	\
			       __utrace_dp->dst##_ptr_)
#define UTRACE__ASSIGN_REL_STR2(dst, src)				\
	utrace__copy_str(__get_rel_str(dst),				\
			 __get_rel_dynamic_array_len(dst),		\
			 utrace__str_or_null((const char *)(src)))
#define __assign_rel_str(...)						\
	utrace__arg3(__VA_ARGS__, UTRACE__ASSIGN_REL_STR2,		\
		     UTRACE__ASSIGN_REL_STR1, _)(__VA_ARGS__)
#define __assign_rel_str_len(dst, src, len)				\
	utrace__copy_str_len(__get_rel_str(dst),			\
			     __get_rel_dynamic_array_len(dst),		\
			     (const char *)(src), (size_t)(len))
#define __assign_rel_bitmask(dst, src, nr_bits)				\
	memcpy(__get_rel_bitmask(dst), (src), utrace__bitmask_bytes(nr_bits))
#define __assign_rel_cpumask(dst, src)					\
	__assign_rel_bitmask(dst, src, nr_cpumask_bits)
#define __assign_rel_sockaddr(dst, src, len)				\
	utrace__copy_mem(__get_rel_dynamic_array(dst),			\
			 __get_rel_dynamic_array_len(dst), (src), (size_t)(len))

#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)				\
	__entry->__data_loc_##item = __utrace_dp->item;
#define __string(item, src) __dynamic_array(char, item, -1)
#define __string_len(item, src, len) __dynamic_array(char, item, -1)
#define __vstring(item, fmt, ap) __dynamic_array(char, item, -1)
#define __bitmask(item, nr_bits) __dynamic_array(char, item, -1)
#define __cpumask(item) __dynamic_array(char, item, -1)
#define __rel_dynamic_array(type, item, len)				\
	__entry->__rel_loc_##item = __utrace_dp->item;
#define __rel_string(item, src) __rel_dynamic_array(char, item, -1)
#define __rel_string_len(item, src, len) __rel_dynamic_array(char, item, -1)
#define __rel_bitmask(item, nr_bits) __rel_dynamic_array(char, item, -1)
#define __rel_cpumask(item) __rel_dynamic_array(char, item, -1)

/* Record through libutrace's entries, the variable fields placed (d)
 * and the size known. */
#define UTRACE__PROBE_BODY(call, tstruct, assign, first)		\
		struct trace_event_raw_##call *__utrace_entry;		\
		struct utrace_tp_reserve __utrace_r;			\
		unsigned char __utrace_buf[UTRACE_EVENT_MAX]		\
			__attribute__((aligned(8)));			\
		first;							\
		if (__utrace_size > UTRACE_EVENT_MAX)			\
			__utrace_size = UTRACE_EVENT_MAX + 1;		\
		__utrace_entry = (struct trace_event_raw_##call *)	\
			utrace_tp_reserve(&__utrace_r,			\
					  (struct utrace_event *)__data, \
					  __utrace_buf,			\
					  (unsigned int)__utrace_size);	\
		if (!__utrace_entry)					\
			return;						\
		tstruct							\
		{ assign; }						\
		utrace_tp_commit(&__utrace_r);

/* The variable fields placed, the record's size: evaluates the sources
 * of __string() and the lengths, once per event. */
#define UTRACE__PLACE(call, args)					\
		struct trace_event_data_offsets_##call __utrace_d;	\
		size_t __utrace_size =					\
			offsetof(struct trace_event_raw_##call, __data) + \
			utrace_event_get_offsets_##call(&__utrace_d, args); \
		struct trace_event_data_offsets_##call *__utrace_dp	\
			__attribute__((unused)) = &__utrace_d;

/* The parameters of a probe body called with the variable fields placed. */
#define UTRACE__PLACED_PARAMS(call, proto)				\
	void *__data,							\
	struct trace_event_data_offsets_##call *__utrace_dp __attribute__((unused)), \
	size_t __utrace_size, proto

#undef DECLARE_EVENT_CLASS
#ifdef UTRACE__INLINE_WRITER
/*
 * utrace_event_slow_<call> records through libutrace: the probe the
 * registry attaches (stage 7), so it runs for an event with other probes
 * beside it.  utrace_event_raw_event_<call> is the iterator's direct call
 * (stage 0), made while the recording probe is alone (tracepoint.c:
 * set_fast()): the usual event is written inline (tracepoint.h:
 * utrace__reserve_inline_()), anything else goes to
 * utrace_event_rec_<call>, with the fields already placed.  While some
 * event of the process has a filter (UTRACE_TP_FILTER), the reserve sends
 * it to utrace_event_filt_<call>, the same inline writer that looks at the
 * event's filter before the commit and runs it on the record in place
 * (utrace__commit_event_inline(): a rejected record is taken back), so
 * that the usual event pays nothing for filters.  The inline part needs
 * no stack frame.
 */
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	UTRACE__RECORD_ACCESS __attribute__((noinline))			\
	static void utrace_event_rec_##call(				\
		UTRACE__PLACED_PARAMS(call, PARAMS(proto)))		\
	{								\
		UTRACE__PROBE_BODY(call, PARAMS(tstruct), PARAMS(assign), \
				   utrace__slow_enter())		\
	}								\
	UTRACE__RECORD_ACCESS						\
	static void utrace_event_slow_##call(void *__data, proto)	\
	{								\
		UTRACE__PLACE(call, PARAMS(args))			\
		utrace_event_rec_##call(__data, __utrace_dp, __utrace_size, \
					args);				\
	}								\
	UTRACE__RECORD_ACCESS __attribute__((noinline))			\
	static void utrace_event_filt_##call(				\
		UTRACE__PLACED_PARAMS(call, PARAMS(proto)))		\
	{								\
		struct trace_event_raw_##call *__utrace_entry;		\
		struct utrace__fast __utrace_f;				\
		__utrace_entry = (struct trace_event_raw_##call *)	\
			utrace__reserve_inline(&__utrace_f,		\
				(const struct utrace_event *)__data,	\
				(unsigned int)__utrace_size);		\
		if (utrace__unlikely(!__utrace_entry)) {		\
			utrace_event_rec_##call(__data, __utrace_dp,	\
						__utrace_size, args);	\
			return;						\
		}							\
		tstruct							\
		{ assign; }						\
		utrace__commit_event_inline(&__utrace_f,		\
				(const struct utrace_event *)__data,	\
				__utrace_entry,				\
				(unsigned int)__utrace_size);		\
	}								\
	UTRACE__RECORD_ACCESS						\
	static void utrace_event_raw_event_##call(void *__data, proto)	\
	{								\
		struct trace_event_raw_##call *__utrace_entry;		\
		struct utrace__fast __utrace_f;				\
		UTRACE__PLACE(call, PARAMS(args))			\
		__utrace_entry = (struct trace_event_raw_##call *)	\
			utrace__reserve_inline_(&__utrace_f,		\
				(const struct utrace_event *)__data,	\
				(unsigned int)__utrace_size, 0);	\
		if (utrace__unlikely((uintptr_t)__utrace_entry <= 1)) {	\
			/* (a copy: the address of __utrace_d does not	\
			 * escape, its fields stay in registers) */	\
			struct trace_event_data_offsets_##call __utrace_c = \
				__utrace_d;				\
			if (__utrace_entry)				\
				utrace_event_filt_##call(__data, &__utrace_c, \
						__utrace_size, args);	\
			else						\
				utrace_event_rec_##call(__data, &__utrace_c, \
						__utrace_size, args);	\
			return;						\
		}							\
		tstruct							\
		{ assign; }						\
		utrace__commit_inline(&__utrace_f);			\
	}								\
	UTRACE__SEMICOLON
#else
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	UTRACE__RECORD_ACCESS						\
	static void utrace_event_raw_event_##call(void *__data, proto)	\
	{								\
		UTRACE__PLACE(call, PARAMS(args))			\
		UTRACE__PROBE_BODY(call, PARAMS(tstruct), PARAMS(assign), \
				   (void)0)				\
	}								\
	UTRACE__SEMICOLON
#endif
