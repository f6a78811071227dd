/* SPDX-License-Identifier: MIT */
/*
 * Stage 4: the field table behind events/<sys>/<ev>/format.
 *
 *   static const struct utrace_event_field *utrace_event_fields_<call>(unsigned *n)
 *   {
 *           static const struct utrace_event_field f[] = {
 *                   { "<type>", "<item>", offset, size, signed, kind, len }, ...
 *           };
 *   }
 *
 * The registry reports plain 'char' in arrays unsigned, as the kernel
 * (built with -funsigned-char) does.
 */
#include "reset.h"

#define UTRACE__IS_SIGNED(type) ((type)-1 < (type)1)

#define __field(type, item)						\
	{ #type, #item, (int)offsetof(__utrace_rec, item), (int)sizeof(type), \
	  UTRACE__IS_SIGNED(type), UTRACE_FIELD_PLAIN, 0 },
#define __field_struct(type, item)					\
	{ #type, #item, (int)offsetof(__utrace_rec, item), (int)sizeof(type), \
	  0, UTRACE_FIELD_PLAIN, 0 },
#define __array(type, item, len)					\
	{ #type, #item, (int)offsetof(__utrace_rec, item),		\
	  (int)sizeof(((__utrace_rec *)0)->item),			\
	  UTRACE__IS_SIGNED(type),		\
	  UTRACE_FIELD_ARRAY, (int)(len) },
#define __dynamic_array(type, item, len)				\
	{ #type, #item, (int)offsetof(__utrace_rec, __data_loc_##item), 4, \
	  UTRACE__IS_SIGNED(type),		\
	  UTRACE_FIELD_DYNAMIC, 0 },
#define __string(item, src)						\
	{ "char", #item, (int)offsetof(__utrace_rec, __data_loc_##item), 4, \
	  0, UTRACE_FIELD_STRING, 0 },
#define __string_len(item, src, len) __string(item, src)
#define __vstring(item, fmt, ap) __string(item, fmt)
#define __bitmask(item, nr_bits)					\
	{ "unsigned long", #item,					\
	  (int)offsetof(__utrace_rec, __data_loc_##item), 4, 0,	\
	  UTRACE_FIELD_DYNAMIC, 0 },
#define __cpumask(item)							\
	{ "cpumask_t", #item,						\
	  (int)offsetof(__utrace_rec, __data_loc_##item), 4, 0,	\
	  UTRACE_FIELD_CPUMASK, 0 },
#undef __sockaddr
#define __sockaddr(field, len)						\
	{ "u8", #field, (int)offsetof(__utrace_rec, __data_loc_##field), 4, \
	  0, UTRACE_FIELD_DYNAMIC, 0 },
#define __rel_dynamic_array(type, item, len)				\
	{ #type, #item, (int)offsetof(__utrace_rec, __rel_loc_##item), 4, \
	  UTRACE__IS_SIGNED(type), UTRACE_FIELD_REL, 0 },
#define __rel_string(item, src)						\
	{ "char", #item, (int)offsetof(__utrace_rec, __rel_loc_##item), 4, \
	  0, UTRACE_FIELD_REL, 0 },
#define __rel_string_len(item, src, len) __rel_string(item, src)
#define __rel_bitmask(item, nr_bits)					\
	{ "unsigned long", #item,					\
	  (int)offsetof(__utrace_rec, __rel_loc_##item), 4, 0,	\
	  UTRACE_FIELD_REL, 0 },
#define __rel_cpumask(item)						\
	{ "cpumask_t", #item,						\
	  (int)offsetof(__utrace_rec, __rel_loc_##item), 4, 0,	\
	  UTRACE_FIELD_REL_CPUMASK, 0 },
#undef __rel_sockaddr
#define __rel_sockaddr(field, len)					\
	{ "u8", #field, (int)offsetof(__utrace_rec, __rel_loc_##field), 4, \
	  0, UTRACE_FIELD_REL, 0 },

#undef DECLARE_EVENT_CLASS
#define DECLARE_EVENT_CLASS(call, proto, args, tstruct, assign, print)	\
	static const struct utrace_event_field *			\
	utrace_event_fields_##call(unsigned int *__utrace_n)		\
	{								\
		typedef struct trace_event_raw_##call __utrace_rec;	\
		static const struct utrace_event_field __utrace_f[] = {	\
			tstruct						\
			{ NULL, NULL, 0, 0, 0, 0, 0 }			\
		};							\
		*__utrace_n = sizeof(__utrace_f) / sizeof(__utrace_f[0]) - 1; \
		return __utrace_f;					\
	}								\
	UTRACE__SEMICOLON
