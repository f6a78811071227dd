/* SPDX-License-Identifier: MIT */
/*
 * Must fail to compile: the probe's prototype does not match the event's
 * TP_PROTO(int a, int b) (utc_alpha.h's utc_pair).  With -DUTC_CONTROL
 * the probe matches and it must compile.  Also built with
 * -DUTRACE_DISABLE, where registration is still type-checked.
 */
#include <stddef.h>
#include <trace/events/utc_alpha.h>

#ifdef UTC_CONTROL
static void utc_probe(void *data, int a, int b)
{
	(void)data; (void)a; (void)b;
}
#else
static void utc_probe(void *data, long x)
{
	(void)data; (void)x;
}
#endif

int utc_attach(void);

int utc_attach(void)
{
	int ret = register_trace_utc_pair(utc_probe, NULL);

	return ret ? ret : unregister_trace_utc_pair(utc_probe, NULL);
}
