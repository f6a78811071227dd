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

/*
 * floor(dt * dn / dd) + ns0 on segment s with a rate, tsc >= s->tsc0,
 * without a division (tens of cycles each event): q = high half of
 * dt * rate is that or one less, since rate is short of dn * 2^64 / dd by
 * less than 1 and dt < 2^64; the remainder says which.  The same integer
 * as the division.
 */
static inline uint64_t utrace__tsc_seg_ns(const struct utrace__tsc_seg *s, uint64_t tsc)
{
	uint64_t dt = tsc - s->tsc0, dn = s->ns1 - s->ns0, dd = s->tsc1 - s->tsc0;
	uint64_t q = (uint64_t)(((unsigned __int128)dt * s->rate) >> 64);
	unsigned __int128 rem = (unsigned __int128)dt * dn - (unsigned __int128)q * dd;

	if (rem >= dd)
		q++;
	return q > UINT64_MAX - s->ns0 ? UINT64_MAX : s->ns0 + q;
}

/* utrace__tsc_time(), inline when tsc is in the hint's segment (the
 * common case: a page's events are close together). */
static inline uint64_t utrace__tsc_time_hint(const struct utrace__tsc_seg *seg, size_t n,
					     uint64_t tsc, uint32_t *hint)
{
	uint32_t k = *hint;

	if (k < n && seg[k].rate && seg[k].tsc0 <= tsc && (k + 1 == n || tsc < seg[k + 1].tsc0))
		return utrace__tsc_seg_ns(&seg[k], tsc);
	return utrace__tsc_time(seg, n, tsc, hint);
}

/* ns = ns0 + (tsc - tsc0) * (ns1 - ns0) / (tsc1 - tsc0), computed without
 * overflow, truncated toward zero as in 128-bit C arithmetic and clamped
 * to 0 .. UINT64_MAX.  (tsc1 != tsc0.)  The conversion
 * of one segment (file-reader.c, the tests). */
uint64_t utrace__tf_tsc_to_ns(uint64_t tsc, uint64_t tsc0, uint64_t ns0,
			      uint64_t tsc1, uint64_t ns1) UTRACE_HIDDEN;

#endif /* UTRACE_READER_TSC_TIME_H */
