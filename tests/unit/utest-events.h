/* SPDX-License-Identifier: MIT */
/* Events for the unit tests (system "utest"). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM utest

#if !defined(_TRACE_UTEST_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_UTEST_H

#include <linux/tracepoint.h>

#ifndef UTEST_HELPERS
#define UTEST_HELPERS
extern int utest_cond_evals, utest_assign_evals, utest_reg_ret;
extern int utest_regs, utest_unregs;
int utest_reg(void);
void utest_unreg(void);
static inline const char *utest_src(const char *s)
{
	utest_assign_evals++;
	return s;
}
enum utest_mode { UTEST_MODE_A = 10, UTEST_MODE_B = 20 };
#endif

TRACE_DEFINE_ENUM(UTEST_MODE_A);
TRACE_DEFINE_ENUM(UTEST_MODE_B);

TRACE_EVENT(utest_simple,
	TP_PROTO(unsigned long long a, unsigned int b),
	TP_ARGS(a, b),
	TP_STRUCT__entry(
		__field(unsigned long long, a)
		__field(unsigned int, b)
	),
	TP_fast_assign(
		__entry->a = a;
		__entry->b = b;
	),
	TP_printk("a=%llu b=%u", __entry->a, __entry->b)
);

TRACE_EVENT_CONDITION(utest_cond,
	TP_PROTO(int v),
	TP_ARGS(v),
	TP_CONDITION((utest_cond_evals++, v > 0)),
	TP_STRUCT__entry(
		__field(int, v)
	),
	TP_fast_assign(
		__entry->v = v;
	),
	TP_printk("v=%d", __entry->v)
);

TRACE_EVENT_FN(utest_fn,
	TP_PROTO(const char *s, int mode),
	TP_ARGS(s, mode),
	TP_STRUCT__entry(
		__string(s, utest_src(s))
		__field(int, mode)
		__dynamic_array(unsigned short, arr, 3)
	),
	TP_fast_assign(
		__assign_str(s);
		__entry->mode = mode;
		/* dynamic data is not aligned (as in the kernel): memcpy */
		static const unsigned short vals[3] = { 1, 2, 3 };
		memcpy(__get_dynamic_array(arr), vals, sizeof(vals));
	),
	TP_printk("s=%s mode=%s", __get_str(s),
		  __print_symbolic(__entry->mode, { UTEST_MODE_A, "A" },
				   { UTEST_MODE_B, "B" })),
	utest_reg, utest_unreg
);

#endif /* _TRACE_UTEST_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE utest-events
#include <trace/define_trace.h>
