/* SPDX-License-Identifier: MIT */
/*
 * The latency columns report and top share (lib/analyze/latcols.c): the
 * sort, the nearest-rank percentile, and the cells with their widths.
 */
#include <stdint.h>
#include <stdlib.h>

#include "latcols.h"
#include "test.h"

TEST(sort_radix)
{
	uint64_t v[1000];
	size_t i;

	srand(1);
	for (i = 0; i < 1000; i++)
		v[i] = ((uint64_t)rand() << 20) ^ (uint64_t)rand() ^ (i % 7 ? 0 : 1ULL << 60);
	utrace__sort_u64(v, 1000);
	for (i = 1; i < 1000; i++)
		CHECK(v[i - 1] <= v[i]);
}

TEST(percentile_nearest_rank)
{
	uint64_t v[100];
	size_t i;

	for (i = 0; i < 100; i++)
		v[i] = i + 1;
	/* the 63rd of 70 (ceil(0.9 * 70)), the 99th of 100 */
	CHECK_INT(utrace__percentile(v, 70, 90), ==, 63);
	CHECK_INT(utrace__percentile(v, 100, 99), ==, 99);
	CHECK_INT(utrace__percentile(v, 10, 50), ==, 5);
	CHECK_INT(utrace__percentile(v, 1, 99), ==, 1);
	CHECK_INT(utrace__percentile(v, 3, 50), ==, 2);
}

TEST(cells)
{
	uint64_t v[] = { 3000, 1000, 2000, 1500000 };
	char c[UTRACE__LAT_COLS][UTRACE__LAT_CELL];
	size_t w[UTRACE__LAT_COLS] = { 0 };
	double mean = utrace__lat_cells(v, 4, c, w);

	CHECK(mean > 376499.9 && mean < 376500.1);
	CHECK_STR(c[0], "4");
	CHECK_STR(c[1], "1.000");
	CHECK_STR(c[2], "376.500");
	CHECK_STR(c[3], "1500.000");
	CHECK_STR(c[4], "2.000");
	CHECK_STR(c[6], "1500.000");
	CHECK_INT(w[3], ==, 8);
}

TEST_MAIN()
