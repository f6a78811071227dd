/* SPDX-License-Identifier: MIT */
/*
 * The one growable hash table (lib/common/table.c): values found under
 * their hash after it grew many times, several values under one hash
 * (a collision the caller tells apart), put() replacing, clear, a hash
 * of 0, and reserve() making later adds unable to fail.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hash.h"
#include "table.h"
#include "test.h"

TEST(grow_and_find)
{
	struct utrace__table t = UTRACE__TABLE_INIT;
	char key[32];
	size_t i;

	for (i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "key-%zu", i);
		CHECK_INT(utrace__table_add(&t, utrace__hash_str(UTRACE_HASH_INIT, key), i), ==, 0);
	}
	CHECK_INT(t.nr, ==, 100000);
	CHECK(t.cap >= 200000);
	for (i = 0; i < 100000; i += 7) {
		size_t pos, v, found = SIZE_MAX;
		uint64_t h;

		snprintf(key, sizeof(key), "key-%zu", i);
		h = utrace__hash_str(UTRACE_HASH_INIT, key);
		pos = utrace__table_start(&t, h);
		while (utrace__table_next(&t, h, &pos, &v))
			if (v == i)
				found = v;
		CHECK_INT(found, ==, i);
	}
	CHECK_INT(utrace__table_get(&t, utrace__hash_str(UTRACE_HASH_INIT, "absent"), 77), ==, 77);
	utrace__table_free(&t);
	CHECK(!t.cap && !t.hash);
}

TEST(same_hash_many_values)
{
	struct utrace__table t = UTRACE__TABLE_INIT;
	size_t pos, v, seen = 0, i;

	for (i = 0; i < 50; i++) {
		CHECK_INT(utrace__table_add(&t, 42, i), ==, 0);
		CHECK_INT(utrace__table_add(&t, 43 + i, 1000 + i), ==, 0);
	}
	pos = utrace__table_start(&t, 42);
	while (utrace__table_next(&t, 42, &pos, &v)) {
		CHECK(v < 50);
		seen++;
	}
	CHECK_INT(seen, ==, 50);
	CHECK_INT(utrace__table_get(&t, 43 + 7, 0), ==, 1007);
	utrace__table_free(&t);
}

TEST(put_zero_clear_reserve)
{
	struct utrace__table t = UTRACE__TABLE_INIT;
	size_t i, cap;

	CHECK_INT(utrace__table_put(&t, 0, 5), ==, 0);          /* a hash of 0 */
	CHECK_INT(utrace__table_put(&t, 0, 6), ==, 0);          /* replaces */
	CHECK_INT(t.nr, ==, 1);
	CHECK_INT(utrace__table_get(&t, 0, 99), ==, 6);
	CHECK_INT(utrace__table_put(&t, utrace__hash_u64(0x1000), 8), ==, 0);
	CHECK_INT(utrace__table_get(&t, utrace__hash_u64(0x1000), 99), ==, 8);
	utrace__table_clear(&t);
	CHECK_INT(t.nr, ==, 0);
	CHECK_INT(utrace__table_get(&t, 0, 99), ==, 99);
	CHECK_INT(utrace__table_reserve(&t, 5000), ==, 0);
	cap = t.cap;
	for (i = 0; i < 5000; i++)
		CHECK_INT(utrace__table_add(&t, utrace__hash_u64(i), i), ==, 0);
	CHECK_INT(t.cap, ==, cap);                              /* no growth */
	for (i = 0; i < 5000; i++)
		CHECK_INT(utrace__table_get(&t, utrace__hash_u64(i), SIZE_MAX), ==, i);
	utrace__table_free(&t);
}

TEST_MAIN()
