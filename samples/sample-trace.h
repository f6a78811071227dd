/* SPDX-License-Identifier: MIT */
/*
 * The utrace tutorial: an events header that uses every macro and field
 * type, written exactly as a kernel events header is written (compare the
 * kernel's samples/trace_events/trace-events-sample.h).  It builds
 * unchanged against the kernel-compatible headers:
 *
 *     cc -I <utrace>/include/utrace/compat -I samples ...
 *
 * sample.c is the one file that defines CREATE_TRACE_POINTS; every other
 * file just includes this header and calls trace_<event>().
 */

/*
 * TRACE_SYSTEM names the system: events show as "sample-trace:<event>".
 * It sits OUTSIDE the include guard, because define_trace.h reads this
 * header again once per stage.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sample-trace

/*
 * "sample-trace" is not a C identifier; TRACE_SYSTEM_VAR gives the name
 * used to build C identifiers.  Systems that are identifiers need not set it.
 */
#undef TRACE_SYSTEM_VAR
#define TRACE_SYSTEM_VAR sample_trace

/*
 * The guard lets the header be read again when TRACE_HEADER_MULTI_READ is
 * defined (by define_trace.h).
 */
#if !defined(_TRACE_SAMPLE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_SAMPLE_TRACE_H

#include <linux/tracepoint.h>

/*
 * Helpers the events use.  They must survive being read several times, so
 * they get a guard of their own.
 */
#ifndef SAMPLE_TRACE_HELPERS
#define SAMPLE_TRACE_HELPERS
enum sample_color { SAMPLE_RED = 1, SAMPLE_GREEN = 2, SAMPLE_BLUE = 4 };
#define SAMPLE_FLAG_READ 0x1
#define SAMPLE_FLAG_WRITE 0x2
#define SAMPLE_FLAG_SYNC 0x4
#define SAMPLE_NAME_LEN 8
struct sample_point { int x, y; };
#endif

/*
 * TRACE_DEFINE_ENUM: the print fmt shows TP_printk's arguments as text,
 * and a reader cannot know what an enum name means.  This makes the
 * registry write the value instead (as the kernel does at boot).
 */
TRACE_DEFINE_ENUM(SAMPLE_RED);
TRACE_DEFINE_ENUM(SAMPLE_GREEN);
TRACE_DEFINE_ENUM(SAMPLE_BLUE);

/*
 * The same for sizeof() of a type: "sizeof(int)" in the print fmt becomes
 * "4", which every reader can evaluate.
 */
TRACE_DEFINE_SIZEOF(int);
TRACE_DEFINE_SIZEOF(struct sample_point);

/*
 * TRACE_EVENT(name, proto, args, struct, assign, print) declares
 * trace_foo_bar(), register_trace_foo_bar() and the event.
 *
 *   TP_PROTO      the C prototype of trace_foo_bar()
 *   TP_ARGS       the same names, without types
 *   TP_STRUCT__entry   the record:
 *       __field(type, item)                 a scalar
 *       __field_struct(type, item)          a struct (always signed:0)
 *       __array(type, item, len)            a fixed array
 *       __dynamic_array(type, item, len)    a variable array (__data_loc)
 *       __string(item, src)                 a NUL-terminated string
 *       __string_len(item, src, len)        a string of len bytes
 *       __vstring(item, fmt, va)            a vsnprintf'd string
 *       __bitmask(item, nr_bits)            a bitmask
 *   TP_fast_assign  C that fills the record; __entry is the record.  It
 *       runs only when the event is on.
 *   TP_printk     how the record prints (kernel printf rules), with the
 *       helpers __get_str, __print_symbolic, __print_flags,
 *       __print_array, __print_hex, __print_hex_str, __get_bitmask.
 */
TRACE_EVENT(foo_bar,

	TP_PROTO(const char *foo, int bar, const int *lst,
		 const char *string, const unsigned long *mask, int nr_bits,
		 const char *fmt, va_list *va),

	TP_ARGS(foo, bar, lst, string, mask, nr_bits, fmt, va),

	TP_STRUCT__entry(
		__array(	char,	foo,    10		)
		__field(	int,	bar			)
		__dynamic_array(int,	list,   __length_of(lst))
		__string(	str,	string			)
		__bitmask(	cpus,	nr_bits			)
		__vstring(	vstr,	fmt,	va		)
	),

	TP_fast_assign(
		size_t i;

		for (i = 0; i < sizeof(__entry->foo) - 1 && foo[i]; i++)
			__entry->foo[i] = foo[i];
		__entry->foo[i] = 0;
		__entry->bar	= bar;
		memcpy(__get_dynamic_array(list), lst,
		       __length_of(lst) * sizeof(int));
		__assign_str(str);	/* the one-argument form of current kernels */
		__assign_vstr(vstr, fmt, va);
		__assign_bitmask(cpus, mask, nr_bits);
	),

	TP_printk("foo %s %d %s %s %s %s (%s) %s", __entry->foo, __entry->bar,

/*
 * __print_symbolic(value, { val, "name" }, ...): the name of a value.
 */
		  __print_symbolic(__entry->bar,
				   { 0, "zero" },
				   { SAMPLE_RED, "red" },
				   { SAMPLE_GREEN, "green" },
				   { SAMPLE_BLUE, "blue" }),

/*
 * __print_flags(flags, delim, { mask, "name" }, ...): set flags by name.
 */
		  __print_flags(__entry->bar, "|",
				{ SAMPLE_FLAG_READ, "READ" },
				{ SAMPLE_FLAG_WRITE, "WRITE" },
				{ SAMPLE_FLAG_SYNC, "SYNC" }),

/*
 * __print_array(array, count, element size): {0x1,0x2,...}
 */
		  __print_array(__get_dynamic_array(list),
				__get_dynamic_array_len(list) / sizeof(int),
				sizeof(int)),

		  __get_str(str), __get_bitmask(cpus), __get_str(vstr))
);

/*
 * __length_of() is this sample's own helper, as in the kernel's sample.
 */
#ifndef SAMPLE_LENGTH_OF
#define SAMPLE_LENGTH_OF
static inline int __length_of(const int *list)
{
	int i;

	if (!list)
		return 0;
	for (i = 0; list[i]; i++)
		;
	return i;
}
#endif

/*
 * TRACE_EVENT_CONDITION: TP_CONDITION is tested at the call site, after
 * the on/off check, so an off event never evaluates it.  Here only even
 * values are recorded.
 */
TRACE_EVENT_CONDITION(foo_bar_with_cond,

	TP_PROTO(const char *foo, int bar),

	TP_ARGS(foo, bar),

	TP_CONDITION(!(bar % 2)),

	TP_STRUCT__entry(
		__string(	foo,	foo		)
		__field(	int,	bar			)
	),

	TP_fast_assign(
		__assign_str(foo, foo);	/* the older two-argument form */
		__entry->bar	= bar;
	),

	TP_printk("foo %s %d", __get_str(foo), __entry->bar)
);

/*
 * TRACE_EVENT_FN: reg() runs when the event gets its first probe (it is
 * switched on) and unreg() when it loses its last one.  Declared once,
 * like the helpers above: -Wredundant-decls reports a declaration read
 * again in each stage.
 */
#ifndef SAMPLE_TRACE_REG_DECLARED
#define SAMPLE_TRACE_REG_DECLARED
int sample_trace_reg(void);
void sample_trace_unreg(void);
#endif

TRACE_EVENT_FN(foo_bar_with_fn,

	TP_PROTO(const char *foo, int bar),

	TP_ARGS(foo, bar),

	TP_STRUCT__entry(
		__string_len(	foo,	foo,	3	)
		__field(	int,	bar		)
	),

	TP_fast_assign(
		__assign_str_len(foo, foo, 3);
		__entry->bar		= bar;
	),

	TP_printk("foo %s %d", __get_str(foo), __entry->bar),

	sample_trace_reg, sample_trace_unreg
);

/*
 * DECLARE_EVENT_CLASS + DEFINE_EVENT: events with one layout share one
 * class, which saves code: each DEFINE_EVENT adds only a tracepoint.
 */
DECLARE_EVENT_CLASS(foo_template,

	TP_PROTO(const char *foo, int bar, struct sample_point pt,
		 const unsigned char *bytes),

	TP_ARGS(foo, bar, pt, bytes),

	TP_STRUCT__entry(
		__string(	foo,	foo		)
		__field(	int,	bar		)
		__field_struct(	struct sample_point, pt	)
		__array(	unsigned char, bytes, 4	)
		__field(	unsigned long long, big	)
		__field(	short,	small		)
		__field(	bool,	ok		)
	),

	TP_fast_assign(
		__assign_str(foo);
		__entry->bar	= bar;
		__entry->pt	= pt;
		memcpy(__entry->bytes, bytes, 4);
		__entry->big	= 0x1234567890ULL * (unsigned)bar;
		__entry->small	= (short)-(bar % 30000);
		__entry->ok	= bar > 0;
	),

	/*
	 * pt is stored but not printed: a reader that has only the format
	 * (trace-cmd, libtraceevent) cannot look inside a struct field.
	 */
	TP_printk("foo %s %d hex=%s str=%s big=%llu small=%d ok=%d sz=%d",
		  __get_str(foo), __entry->bar,
		  __print_hex(__entry->bytes, 4),
		  __print_hex_str(__entry->bytes, 4),
		  __entry->big, __entry->small, __entry->ok,
		  (int)sizeof(struct sample_point))
);

DEFINE_EVENT(foo_template, foo_with_template_simple,
	TP_PROTO(const char *foo, int bar, struct sample_point pt,
		 const unsigned char *bytes),
	TP_ARGS(foo, bar, pt, bytes));

/* DEFINE_EVENT_CONDITION: a class member with a condition. */
DEFINE_EVENT_CONDITION(foo_template, foo_with_template_cond,
	TP_PROTO(const char *foo, int bar, struct sample_point pt,
		 const unsigned char *bytes),
	TP_ARGS(foo, bar, pt, bytes),
	TP_CONDITION(bar % 2));

/* DEFINE_EVENT_FN: a class member with reg/unreg functions. */
DEFINE_EVENT_FN(foo_template, foo_with_template_fn,
	TP_PROTO(const char *foo, int bar, struct sample_point pt,
		 const unsigned char *bytes),
	TP_ARGS(foo, bar, pt, bytes),
	sample_trace_reg, sample_trace_unreg);

/* DEFINE_EVENT_PRINT: a class member that prints differently. */
DEFINE_EVENT_PRINT(foo_template, foo_with_template_print,
	TP_PROTO(const char *foo, int bar, struct sample_point pt,
		 const unsigned char *bytes),
	TP_ARGS(foo, bar, pt, bytes),
	TP_printk("bar %s %d color=%s", __get_str(foo), __entry->bar,
		  __print_symbolic(__entry->bar, { SAMPLE_RED, "red" },
				   { SAMPLE_GREEN, "green" })));

/*
 * DECLARE_TRACE: a bare tracepoint, with no event, record or format.
 * Only probes registered with register_trace_foo_plain() see it.
 */
DECLARE_TRACE(foo_plain,
	TP_PROTO(int value),
	TP_ARGS(value));

#endif /* _TRACE_SAMPLE_TRACE_H */

/*
 * Outside the guard: find this header again by file name.  The header is
 * not under trace/events/, so name its directory (relative to
 * define_trace.h or to an -I directory) and its file.
 */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sample-trace
#include <trace/define_trace.h>
