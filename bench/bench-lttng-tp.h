/* SPDX-License-Identifier: MIT */
/*
 * The LTTng-UST provider header of the benchmark: the same two-argument
 * event as bench-events.h (u64 a, u32 b), with ctf_integer fields, and the
 * string event bench_str (u32 n, a path: ctf_integer, ctf_string).
 * bench-lttng-tp.c defines TRACEPOINT_CREATE_PROBES and TRACEPOINT_DEFINE
 * (a provider linked statically into the program).
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./bench-lttng-tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(
	bench,
	bench_ev,
	TP_ARGS(
		uint64_t, a,
		uint32_t, b
	),
	TP_FIELDS(
		ctf_integer(uint64_t, a, a)
		ctf_integer(uint32_t, b, b)
	)
)

TRACEPOINT_EVENT(
	bench,
	bench_str,
	TP_ARGS(
		uint32_t, n,
		const char *, path
	),
	TP_FIELDS(
		ctf_integer(uint32_t, n, n)
		ctf_string(path, path)
	)
)

#endif /* BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
