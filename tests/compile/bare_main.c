/* SPDX-License-Identifier: MIT */
/*
 * Probes on tp-bare.h's bare tracepoints (defined in bare_def.c): one
 * with arguments, two without (probes 'void fn(void *data)'), one with a
 * condition.  With -DUTRACE_DISABLE, or with utrace/fallback.h alone, every
 * registration says -ENOSYS and nothing fires.
 */
#include <errno.h>
#include <string.h>

#include "utc-check.h"
#include "tp-bare.h"
/* Built with utrace/fallback.h instead of utrace's headers: as disabled. */
#if defined(UTRACE_FALLBACK) && !defined(UTRACE_DISABLE)
#define UTRACE_DISABLE
#endif

static int lines, b_calls, v_calls, even_calls;

static void probe_event(void *data, const char *file, int line)
{
	UTC_CHECK(data == &lines);
	UTC_CHECK(strstr(file, "bare_") != NULL);
	lines += line > 0;
}

static void probe_noargs(void *data)
{
	++*(int *)data;
}

static void probe_even(void *data, int v)
{
	(void)data;
	even_calls += v;
}

int main(void)
{
#ifdef UTRACE_DISABLE
	const int ok = -ENOSYS, fired = 0;
#else
	const int ok = 0, fired = 1;
#endif

	UTC_CHECK(!trace_utc_bare_eventb_enabled());
	UTC_CHECK_INT(register_trace_utc_bare_event(probe_event, &lines), ok);
	UTC_CHECK_INT(register_trace_utc_bare_eventb(probe_noargs, &b_calls), ok);
	UTC_CHECK_INT(register_trace_utc_bare_void(probe_noargs, &v_calls), ok);
	UTC_CHECK_INT(register_trace_utc_bare_even(probe_even, NULL), ok);
	UTC_CHECK(trace_utc_bare_void_enabled() == (fired == 1));

	trace_utc_bare_event(__FILE__, __LINE__);
	trace_utc_bare_eventb();
	trace_utc_bare_void();
	trace_utc_bare_even(3);          /* the condition says no */
	trace_utc_bare_even(4);
	utc_bare_fire();
	UTC_CHECK_INT(lines, 2 * fired);
	UTC_CHECK_INT(b_calls, 2 * fired);
	UTC_CHECK_INT(v_calls, 2 * fired);
	UTC_CHECK_INT(even_calls, 6 * fired);

	UTC_CHECK_INT(unregister_trace_utc_bare_event(probe_event, &lines), ok);
	UTC_CHECK_INT(unregister_trace_utc_bare_eventb(probe_noargs, &b_calls), ok);
	UTC_CHECK_INT(unregister_trace_utc_bare_void(probe_noargs, &v_calls), ok);
	UTC_CHECK_INT(unregister_trace_utc_bare_even(probe_even, NULL), ok);
	tracepoint_synchronize_unregister();
	trace_utc_bare_eventb();
	UTC_CHECK_INT(b_calls, 2 * fired);
	UTC_CHECK(!trace_utc_bare_eventb_enabled());

	if (utc_failures)
		fprintf(stderr, "bare_main (%s): %d check(s) failed\n",
			UTC_LANG, utc_failures);
	return utc_failures != 0;
}
