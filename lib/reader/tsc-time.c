/* SPDX-License-Identifier: MIT */
/*
 * TSC ticks to CLOCK_MONOTONIC ns (tsc-time.h).
 *
 * A process's pool holds calibration points P0, P1, ... (a TSC reading
 * and CLOCK_MONOTONIC ns taken together, lib/common/calib.c): P0 when the
 * pool was made, P1 at 20 ms, P2 at 100 ms, P3 at 300 ms, P4 at 1 s, then
 * one a second and sparser later.  The conversion is a chain of segments,
 * one per point, each starting where the one before ends, so it is
 * continuous and never goes back:
 *
 *   segment 0  from P0, the rate between P0 and P1 (exact at both);
 *   segment k  from P(k), at the value segment k-1 reaches there, with the
 *              rate measured over the last second of points (from the
 *              last point at least a second before P(k), else from P0, to
 *              P(k)), corrected so that it would make up the difference
 *              between that value and P(k)'s ns over a segment as long
 *              as the last.
 *
 * So a segment depends only on the points up to its start (and segment 0
 * on P1), a point added later never changes the time of an earlier event,
 * and everyone who has the points computes the same integer nanoseconds.
 * The error against CLOCK_MONOTONIC is that of the rate over a segment:
 * a point's jitter (tens of ns) over a baseline of a second, plus what
 * the clock's rate changed (an NTP slew) since.
 */
#include <stdbool.h>

#include "pool.h"
#include "tsc-time.h"

uint64_t utrace__tf_tsc_to_ns(uint64_t tsc, uint64_t tsc0, uint64_t ns0,
			      uint64_t tsc1, uint64_t ns1)
{
	/* |tsc - tsc0| * |ns1 - ns0| / |tsc1 - tsc0|, then the sign: the
	 * same as the signed 128-bit expression, which truncates toward 0. */
	uint64_t dt = tsc >= tsc0 ? tsc - tsc0 : tsc0 - tsc;
	uint64_t dn = ns1 >= ns0 ? ns1 - ns0 : ns0 - ns1;
	uint64_t dd = tsc1 >= tsc0 ? tsc1 - tsc0 : tsc0 - tsc1;
	int neg = (tsc < tsc0) ^ (ns1 < ns0) ^ (tsc1 < tsc0);
	unsigned __int128 q = (unsigned __int128)dt * dn;
	uint64_t hi = (uint64_t)(q >> 64), v;

	if (hi < dd) {
#if defined(__x86_64__)
		uint64_t r;

		/* One divq: the quotient fits in 64 bits. */
		__asm__("divq %4" : "=a"(v), "=d"(r) : "a"((uint64_t)q), "d"(hi), "rm"(dd));
#else
		v = (uint64_t)(q / dd);
#endif
	} else {
		v = UINT64_MAX;
	}
	if (neg)
		return v > ns0 ? 0 : ns0 - v;
	return v > UINT64_MAX - ns0 ? UINT64_MAX : ns0 + v;
}

/* A segment with its rate, for the multiplication in utrace__tsc_time(). */
static struct utrace__tsc_seg tsc_seg(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1)
{
	struct utrace__tsc_seg s = { tsc0, ns0, tsc1, ns1, 0 };

	/* a tick shorter than a ns (any TSC above 1 GHz): the quotient
	 * fits in 64 bits */
	if (tsc1 > tsc0 && ns1 >= ns0 && ns1 - ns0 < tsc1 - tsc0 &&
	    tsc1 - tsc0 < (UINT64_C(1) << 62))
		s.rate = (uint64_t)(((unsigned __int128)(ns1 - ns0) << 64) / (tsc1 - tsc0));
	return s;
}

size_t utrace__tsc_chain(const struct utrace_calib_point *pt, size_t n,
			 struct utrace__tsc_seg *seg)
{
	size_t k, j;

	if (n < 2)
		return 0;
	for (k = 1; k < n; k++)
		if (pt[k].tsc <= pt[k - 1].tsc || pt[k].ns <= pt[k - 1].ns)
			return 0;
	seg[0] = tsc_seg(pt[0].tsc, pt[0].ns, pt[1].tsc, pt[1].ns);
	for (k = 1, j = 0; k < n; k++) {
		uint64_t at = utrace__tf_tsc_to_ns(pt[k].tsc, seg[k - 1].tsc0, seg[k - 1].ns0,
						   seg[k - 1].tsc1, seg[k - 1].ns1);
		uint64_t len = pt[k].tsc - pt[k - 1].tsc, raw, num;

		/* the baseline: from the last point a second or more back */
		while (j + 1 < k && pt[k].ns - pt[j + 1].ns >= 1000000000u)
			j++;
		/* the ns the measured rate gives over 'len' ticks */
		raw = utrace__tf_tsc_to_ns(pt[k].tsc + len, pt[j].tsc, pt[j].ns,
					   pt[k].tsc, pt[k].ns) - pt[k].ns;
		if (!raw)
			raw = 1;

		/* raw - (at - ns): back to the measured clock by the end of
		 * a segment as long as this one; held within half and twice
		 * the measured rate, so it stays sane when a point was taken
		 * late (and never stops or runs back). */
		if (at >= pt[k].ns)
			num = at - pt[k].ns >= raw / 2 ? raw - raw / 2 : raw - (at - pt[k].ns);
		else
			num = pt[k].ns - at >= raw ? 2 * raw : raw + (pt[k].ns - at);
		seg[k] = tsc_seg(pt[k].tsc, at, pt[k].tsc + len, at + num);
	}
	return n;
}

uint64_t utrace__tsc_time(const struct utrace__tsc_seg *seg, size_t n, uint64_t tsc,
			  uint32_t *hint)
{
	size_t lo, hi, k = *hint < n ? *hint : 0;

	/* the hint's segment or the next, else a binary search for the last
	 * segment that starts at or before tsc (the first for earlier) */
	if (seg[k].tsc0 <= tsc && (k + 1 == n || tsc < seg[k + 1].tsc0)) {
		/* k */
	} else if (k + 1 < n && seg[k + 1].tsc0 <= tsc &&
		   (k + 2 == n || tsc < seg[k + 2].tsc0)) {
		k++;
	} else {
		lo = 0;
		hi = n;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (seg[mid].tsc0 <= tsc)
				lo = mid;
			else
				hi = mid;
		}
		k = lo;
	}
	*hint = (uint32_t)k;
	if (seg[k].rate && tsc >= seg[k].tsc0)
		return utrace__tsc_seg_ns(&seg[k], tsc);
	return utrace__tf_tsc_to_ns(tsc, seg[k].tsc0, seg[k].ns0, seg[k].tsc1, seg[k].ns1);
}
