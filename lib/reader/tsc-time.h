/* SPDX-License-Identifier: MIT */
/*
 * TSC ticks to CLOCK_MONOTONIC ns with a process's calibration points
 * (lib/common/calib.c takes them; tsc-time.c explains the conversion).
 */
#ifndef UTRACE_READER_TSC_TIME_H
#define UTRACE_READER_TSC_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct utrace_calib_point;

/* One piece of the conversion: the line through (tsc0, ns0), (tsc1, ns1). */
struct utrace__tsc_seg {
	uint64_t tsc0, ns0, tsc1, ns1;
	/* floor((ns1 - ns0) * 2^64 / (tsc1 - tsc0)) when ns1 - ns0 is less
	 * than tsc1 - tsc0 (tsc_seg_rate()), else 0: utrace__tsc_time()
	 * multiplies by it instead of dividing, with the same result */
	uint64_t rate;
};

/**
 * utrace__tsc_chain() - the conversion of a process's points
 * @pt: its calibration points, oldest first
 * @n: how many
 * @seg: filled with @n segments
 *
 * Return: the number of segments: @n, or 0 when the points cannot time
 * anything (fewer than two, or out of order).
 */
size_t utrace__tsc_chain(const struct utrace_calib_point *pt, size_t n,
			 struct utrace__tsc_seg *seg) UTRACE_HIDDEN;

/**
 * utrace__tsc_time() - a TSC time in CLOCK_MONOTONIC ns
 * @seg: the segments of utrace__tsc_chain()
 * @n: how many (at least one)
 * @tsc: the time
 * @hint: the segment of the caller's last time, updated (times mostly
 *        come in order)
 */
uint64_t utrace__tsc_time(const struct utrace__tsc_seg *seg, size_t n, uint64_t tsc,
			  uint32_t *hint) UTRACE_HIDDEN;

#endif /* UTRACE_READER_TSC_TIME_H */
