/* SPDX-License-Identifier: MIT */
/*
 * include/trace/events/utc_all.h, every macro of the kernel's stages:
 * defines its events (CREATE_TRACE_POINTS), fires each once; run.sh
 * compares what they print with all-print.expected, and what
 * 'utrace script' prints of a recording of it with all-script.expected.  The kernel-only
 * types are the program's, as a kernel-style header expects.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* The kernel's cpumask, as a bitmap of 8 CPUs. */
#define nr_cpumask_bits 8
typedef struct cpumask {
	unsigned long bits[1];
} cpumask_t;
#define cpumask_bits(maskp) ((maskp)->bits)

#include "utc-check.h"
#define CREATE_TRACE_POINTS
#include <trace/events/utc_all.h>
#include <utrace/utrace.h>

EXPORT_TRACEPOINT_SYMBOL(utc_all_loc);
EXPORT_TRACEPOINT_SYMBOL_GPL(utc_all_rel);

int main(void)
{
	cpumask_t mask = { { 0xa5 } };
	struct utc_pt pt = { 3, -4 };
	const int list[] = { 1, 2, 0x30 };
	const u16 vals[] = { 7, 0xbeef };
	const unsigned long bits[1] = { 0x80000001ul | (1ul << 35) };
	struct sockaddr sa;
	unsigned char buf[20];
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_family = AF_INET;
	for (i = 0; i < 20; i++)
		buf[i] = (unsigned char)(i % 2 ? 'A' + i : i);

	UTC_CHECK(utrace_event_find("utc_all", "utc_all_loc") != NULL);
	UTC_CHECK(utrace_event_find("utc_all", "utc_all_nop") == NULL);
	UTC_CHECK(utrace_event_find("utc_all", "utc_all_nop_ev") == NULL);
	UTC_CHECK_INT(utrace_set_event("utc_all"), 3);

	trace_utc_all_loc(-1, pt, &mask, list, 3, &sa);
	trace_utc_all_rel("rel", "tagXYZ", vals, 2, bits, &mask, &sa);
	trace_utc_all_print(buf, 12000000042ull, 7, list, 3, pt, &sa);
	trace_utc_all_nop(1);
	trace_utc_all_nop_ev(2);
	trace_utc_all_nop_decl(3);
	UTC_CHECK(!trace_utc_all_nop_enabled());
	UTC_CHECK(!trace_utc_all_nop_ev_enabled());

	if (utc_failures)
		fprintf(stderr, "all_main (%s): %d check(s) failed\n",
			UTC_LANG, utc_failures);
	return utc_failures != 0;
}
