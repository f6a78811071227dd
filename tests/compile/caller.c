/* SPDX-License-Identifier: MIT */
/*
 * A translation unit that only includes samples/sample-trace.h (no
 * CREATE_TRACE_POINTS) and uses every tracepoint of it: trace_<ev>(),
 * trace_<ev>_enabled(), register_trace_<ev>() and unregister_trace_<ev>().
 * Built as C and as C++, linked with ctp.c in either language, and with
 * -DUTRACE_DISABLE or with utrace/fallback.h alone, where it must link
 * without libutrace and every registration must answer -ENOSYS.
 *
 * With events on, run.sh points UTRACE_PRINT at a file and compares what
 * the events printed between builds.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "utc-check.h"
#include "sample-trace.h"
/* Built with utrace/fallback.h instead of utrace's headers: as disabled. */
#if defined(UTRACE_FALLBACK) && !defined(UTRACE_DISABLE)
#define UTRACE_DISABLE
#endif
#ifndef UTRACE_DISABLE
#include <utrace/utrace.h>
#endif

struct hits {
	int calls;
	int sum;
};

static struct hits h_foo_bar, h_cond, h_fn, h_simple, h_tcond, h_tfn,
	h_tprint, h_plain;

static void hit(void *data, int bar)
{
	struct hits *h = (struct hits *)data;

	h->calls++;
	h->sum += bar;
}

static void probe_foo_bar(void *data, const char *foo, int bar,
			  const int *lst, const char *string,
			  const unsigned long *mask, int nr_bits,
			  const char *fmt, va_list *va)
{
	(void)foo; (void)lst; (void)string; (void)mask; (void)nr_bits;
	(void)fmt; (void)va;
	hit(data, bar);
}

static void probe_foo_int(void *data, const char *foo, int bar)
{
	(void)foo;
	hit(data, bar);
}

static void probe_template(void *data, const char *foo, int bar,
			   struct sample_point pt, const unsigned char *bytes)
{
	(void)foo; (void)bytes;
	hit(data, bar + pt.x + pt.y);
}

static void probe_plain(void *data, int value)
{
	hit(data, value);
}

static void fire_foo_bar(int bar, const char *fmt, ...)
{
	static const int list[] = { 1, 2, 3, 0 };
	unsigned long mask[2] = { 0x5UL, 0x1UL };
	va_list va;

	va_start(va, fmt);
	trace_foo_bar("hello", bar, list, "a string", mask, 65, fmt, &va);
	va_end(va);
}

/* Fires every tracepoint once with values that pass its condition, and
 * the conditional ones once more with values that do not. */
static void fire_all(void)
{
	unsigned char bytes[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct sample_point pt = { 3, -3 };

	fire_foo_bar(2, "vstring %d %s", 20, "x");
	trace_foo_bar_with_cond("cond", 2);
	trace_foo_bar_with_cond("cond", 3);		/* filtered: odd */
	trace_foo_bar_with_fn("function", 2);
	trace_foo_with_template_simple("simple", 2, pt, bytes);
	trace_foo_with_template_cond("cond", 3, pt, bytes);
	trace_foo_with_template_cond("cond", 2, pt, bytes); /* filtered: even */
	trace_foo_with_template_fn("fn", 2, pt, bytes);
	trace_foo_with_template_print("print", 2, pt, bytes);
	trace_foo_plain(7);
}

static int nr_enabled(void)
{
	return trace_foo_bar_enabled() + trace_foo_bar_with_cond_enabled() +
	       trace_foo_bar_with_fn_enabled() +
	       trace_foo_with_template_simple_enabled() +
	       trace_foo_with_template_cond_enabled() +
	       trace_foo_with_template_fn_enabled() +
	       trace_foo_with_template_print_enabled() +
	       trace_foo_plain_enabled();
}

#ifdef UTRACE_DISABLE
#define EXPECT_RET (-ENOSYS)
#define EXPECT_ON 0
#define EXPECT_CALLS 0
#else
#define EXPECT_RET 0
#define EXPECT_ON 1
#define EXPECT_CALLS 1
#endif

int main(void)
{
	UTC_CHECK_INT(nr_enabled(), 0);

	UTC_CHECK_INT(register_trace_foo_bar(probe_foo_bar, &h_foo_bar), EXPECT_RET);
	UTC_CHECK_INT(register_trace_foo_bar_with_cond(probe_foo_int, &h_cond), EXPECT_RET);
	UTC_CHECK_INT(register_trace_foo_bar_with_fn(probe_foo_int, &h_fn), EXPECT_RET);
	UTC_CHECK_INT(register_trace_foo_with_template_simple(probe_template, &h_simple), EXPECT_RET);
	UTC_CHECK_INT(register_trace_foo_with_template_cond(probe_template, &h_tcond), EXPECT_RET);
	UTC_CHECK_INT(register_trace_foo_with_template_fn(probe_template, &h_tfn), EXPECT_RET);
	UTC_CHECK_INT(register_trace_foo_with_template_print(probe_template, &h_tprint), EXPECT_RET);
	UTC_CHECK_INT(register_trace_foo_plain(probe_plain, &h_plain), EXPECT_RET);
	UTC_CHECK_INT(nr_enabled(), 8 * EXPECT_ON);
#ifndef UTRACE_DISABLE
	/* reg() of the TRACE_EVENT_FN and DEFINE_EVENT_FN tracepoints. */
	UTC_CHECK_INT(utc_reg_balance, 2);
	/* The events (not the bare foo_plain) are in the registry, under
	 * the system name TRACE_SYSTEM spells. */
	UTC_CHECK(utrace_event_find("sample-trace", "foo_bar") != NULL);
	UTC_CHECK(utrace_event_find("sample-trace", "foo_with_template_print") != NULL);
	UTC_CHECK(utrace_event_find("sample-trace", "foo_plain") == NULL);
	UTC_CHECK_INT(utrace_set_event("sample-trace:*"), 7);
#endif

	fire_all();

	UTC_CHECK_INT(h_foo_bar.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_cond.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_fn.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_simple.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_tcond.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_tfn.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_tprint.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_plain.calls, EXPECT_CALLS);
	UTC_CHECK_INT(h_foo_bar.sum, 2 * EXPECT_CALLS);
	UTC_CHECK_INT(h_cond.sum, 2 * EXPECT_CALLS);
	UTC_CHECK_INT(h_tcond.sum, 3 * EXPECT_CALLS);
	UTC_CHECK_INT(h_plain.sum, 7 * EXPECT_CALLS);

#ifndef UTRACE_DISABLE
	UTC_CHECK_INT(utrace_set_event("!sample-trace:*"), 7);
#endif
	UTC_CHECK_INT(unregister_trace_foo_bar(probe_foo_bar, &h_foo_bar), EXPECT_RET);
	UTC_CHECK_INT(unregister_trace_foo_bar_with_cond(probe_foo_int, &h_cond), EXPECT_RET);
	UTC_CHECK_INT(unregister_trace_foo_bar_with_fn(probe_foo_int, &h_fn), EXPECT_RET);
	UTC_CHECK_INT(unregister_trace_foo_with_template_simple(probe_template, &h_simple), EXPECT_RET);
	UTC_CHECK_INT(unregister_trace_foo_with_template_cond(probe_template, &h_tcond), EXPECT_RET);
	UTC_CHECK_INT(unregister_trace_foo_with_template_fn(probe_template, &h_tfn), EXPECT_RET);
	UTC_CHECK_INT(unregister_trace_foo_with_template_print(probe_template, &h_tprint), EXPECT_RET);
	UTC_CHECK_INT(unregister_trace_foo_plain(probe_plain, &h_plain), EXPECT_RET);
	tracepoint_synchronize_unregister();
	UTC_CHECK_INT(nr_enabled(), 0);
#ifndef UTRACE_DISABLE
	UTC_CHECK_INT(utc_reg_balance, 0);
#endif

	fire_all();		/* nothing attached: no probe runs */
	UTC_CHECK_INT(h_foo_bar.calls + h_cond.calls + h_fn.calls +
		      h_simple.calls + h_tcond.calls + h_tfn.calls +
		      h_tprint.calls + h_plain.calls, 8 * EXPECT_CALLS);

	if (utc_failures)
		fprintf(stderr, "caller (%s): %d check(s) failed\n", UTC_LANG,
			utc_failures);
	return utc_failures != 0;
}
