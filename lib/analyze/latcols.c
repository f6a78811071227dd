/* SPDX-License-Identifier: MIT */
/* The latency columns of report and top (latcols.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latcols.h"

const char *const utrace__lat_heads[UTRACE__LAT_COLS] = {
	"Count", "Min(us)", "Mean(us)", "Max(us)", "p50(us)", "p90(us)", "p99(us)",
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Sort durations: LSD radix, a byte at a time, a pass skipped when every
 * value has the same byte there (durations rarely use their top bytes;
 * one pass of OR and AND finds those bytes without counting them).
 * Millions of values sort in a few passes of the array, where qsort()'s
 * comparisons took most of a --latency report's time.
 */
void utrace__sort_u64(uint64_t *v, size_t n)
{
	uint64_t *tmp = n > 1 ? malloc(n * sizeof(*tmp)) : NULL, *src = v, *dst = tmp, *t;
	uint64_t any = 0, all = ~0ULL;
	unsigned int shift;
	size_t i;

	if (!tmp) {
		if (n > 1)
			qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	for (i = 0; i < n; i++) {
		any |= v[i];
		all &= v[i];
	}
	for (shift = 0; shift < 64; shift += 8) {
		size_t cnt[256] = { 0 }, sum = 0;

		if (!(((any ^ all) >> shift) & 255))
			continue;               /* the same byte in every value */
		for (i = 0; i < n; i++)
			cnt[(src[i] >> shift) & 255]++;
		for (i = 0; i < 256; i++) {
			size_t c = cnt[i];

			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i] >> shift) & 255]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

uint64_t utrace__percentile(const uint64_t *v, size_t n, unsigned int pct)
{
	size_t k = (size_t)(((uint64_t)n * pct + 99) / 100);

	return v[k ? k - 1 : 0];
}

double utrace__lat_cells(uint64_t *v, size_t n, char cells[UTRACE__LAT_COLS][UTRACE__LAT_CELL],
			 size_t width[UTRACE__LAT_COLS])
{
	uint64_t sum = 0;
	double mean;
	size_t i;

	utrace__sort_u64(v, n);
	for (i = 0; i < n; i++)
		sum += v[i];
	mean = (double)sum / (double)n;
	snprintf(cells[0], UTRACE__LAT_CELL, "%zu", n);
	snprintf(cells[1], UTRACE__LAT_CELL, "%.3f", (double)v[0] / 1e3);
	snprintf(cells[2], UTRACE__LAT_CELL, "%.3f", mean / 1e3);
	snprintf(cells[3], UTRACE__LAT_CELL, "%.3f", (double)v[n - 1] / 1e3);
	snprintf(cells[4], UTRACE__LAT_CELL, "%.3f", (double)utrace__percentile(v, n, 50) / 1e3);
	snprintf(cells[5], UTRACE__LAT_CELL, "%.3f", (double)utrace__percentile(v, n, 90) / 1e3);
	snprintf(cells[6], UTRACE__LAT_CELL, "%.3f", (double)utrace__percentile(v, n, 99) / 1e3);
	for (i = 0; i < UTRACE__LAT_COLS; i++)
		if (width[i] < strlen(cells[i]))
			width[i] = strlen(cells[i]);
	return mean;
}
