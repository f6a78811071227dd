/* SPDX-License-Identifier: MIT */
/*
 * Uses the events of include/trace/events/utc_{alpha,beta}.h, defined by
 * kern_ctp.c: each event must be registered under its own TRACE_SYSTEM,
 * and fire.
 */
#include <string.h>

#include "utc-check.h"
#include <trace/events/utc_alpha.h>
#include <trace/events/utc_beta.h>
#include <utrace/utrace.h>

static int calls, sum, ticks;

static void probe_pair(void *data, int a, int b)
{
	(void)data;
	calls++;
	sum += a + b;
}

static void probe_class(void *data, unsigned long id, int state)
{
	(void)data;
	calls++;
	sum += (int)id + state;
}

static void probe_plain(void *data, int v)
{
	(void)data;
	calls++;
	sum += v;
}

static void probe_tick(void *data)
{
	++*(int *)data;
}

static void check_event(const char *sys, const char *name)
{
	struct utrace_event *ev = utrace_event_find(sys, name);

	UTC_CHECK(ev != NULL);
	if (!ev) {
		fprintf(stderr, "  event %s:%s not registered\n", sys, name);
		return;
	}
	UTC_CHECK(strcmp(utrace_event_system(ev), sys) == 0);
	UTC_CHECK(strcmp(utrace_event_name(ev), name) == 0);
}

int main(void)
{
	check_event("utc_alpha", "utc_pair");
	check_event("utc_alpha", "utc_name");
	check_event("utc_beta", "utc_beta_start");
	check_event("utc_beta", "utc_beta_stop");
	UTC_CHECK(utrace_event_find("utc_beta", "utc_beta_plain") == NULL);
	UTC_CHECK(utrace_event_find("utc_alpha", "utc_beta_start") == NULL);

	UTC_CHECK_INT(register_trace_utc_pair(probe_pair, NULL), 0);
	UTC_CHECK_INT(register_trace_utc_beta_start(probe_class, NULL), 0);
	UTC_CHECK_INT(register_trace_utc_beta_stop(probe_class, NULL), 0);
	UTC_CHECK_INT(register_trace_utc_beta_plain(probe_plain, NULL), 0);
	UTC_CHECK_INT(register_trace_utc_beta_tick(probe_tick, &ticks), 0);
	UTC_CHECK_INT(register_trace_utc_beta_void(probe_tick, &ticks), 0);
	UTC_CHECK_INT(utrace_set_event("utc_alpha:*"), 2);
	UTC_CHECK_INT(utrace_set_event("utc_beta"), 2);
	UTC_CHECK(trace_utc_name_enabled());

	trace_utc_pair(1, 2);
	trace_utc_name("alpha", 5);
	trace_utc_beta_start(10, UTC_BETA_BUSY);
	trace_utc_beta_stop(20, UTC_BETA_IDLE);
	trace_utc_beta_plain(100);
	trace_utc_beta_tick();
	trace_utc_beta_void();
	trace_utc_beta_tick();
	UTC_CHECK_INT(ticks, 3);
	UTC_CHECK_INT(calls, 4);
	UTC_CHECK_INT(sum, 3 + 11 + 20 + 100);

	UTC_CHECK_INT(utrace_set_event("!*:*"), 4);
	UTC_CHECK_INT(unregister_trace_utc_pair(probe_pair, NULL), 0);
	UTC_CHECK_INT(unregister_trace_utc_beta_start(probe_class, NULL), 0);
	UTC_CHECK_INT(unregister_trace_utc_beta_stop(probe_class, NULL), 0);
	UTC_CHECK_INT(unregister_trace_utc_beta_plain(probe_plain, NULL), 0);
	UTC_CHECK_INT(unregister_trace_utc_beta_tick(probe_tick, &ticks), 0);
	UTC_CHECK_INT(unregister_trace_utc_beta_void(probe_tick, &ticks), 0);
	tracepoint_synchronize_unregister();
	trace_utc_beta_tick();
	UTC_CHECK_INT(ticks, 3);
	UTC_CHECK(!trace_utc_pair_enabled());
	UTC_CHECK(!trace_utc_name_enabled());

	if (utc_failures)
		fprintf(stderr, "kern_main (%s): %d check(s) failed\n",
			UTC_LANG, utc_failures);
	return utc_failures != 0;
}
