/* SPDX-License-Identifier: MIT */
/*
 * latcols.h - the latency columns report and top share: one sort, one
 * percentile, one rounding (Count, Min, Mean, Max, p50, p90, p99 in us).
 */
#ifndef UTRACE_ANALYZE_LATCOLS_H
#define UTRACE_ANALYZE_LATCOLS_H

#include <stddef.h>
#include <stdint.h>

#define UTRACE__LAT_COLS 7
#define UTRACE__LAT_CELL 32

extern const char *const utrace__lat_heads[UTRACE__LAT_COLS];

/* Sort @n durations in place (LSD radix). */
void utrace__sort_u64(uint64_t *v, size_t n);

/*
 * utrace__percentile - the nearest-rank percentile of sorted values: the
 * smallest value with at least @pct percent of them at or below it
 * (in integers: report's ceil(q * n) and top's q * n + 0.999999 were two
 * roundings of the same rank; they agreed for p50/p90/p99 up to 2,000
 * values, this one cannot disagree with itself).
 */
uint64_t utrace__percentile(const uint64_t *v, size_t n, unsigned int pct);

/*
 * utrace__lat_cells - sort @n (> 0) durations (ns) and write the columns'
 * texts into @cells, widening @width[] to fit them.  Return: the mean, ns.
 */
double utrace__lat_cells(uint64_t *v, size_t n, char cells[UTRACE__LAT_COLS][UTRACE__LAT_CELL],
			 size_t width[UTRACE__LAT_COLS]);

#endif
