/* SPDX-License-Identifier: MIT */
/*
 * The page codec (lib/common/page.h, page.c): what the encoders write, the
 * cursor reads back, with the time extends and long records, and what it
 * refuses; the event count and the page cut on top of it.
 */
#include <string.h>

#include "page.h"
#include "test.h"

/* Append an event of 'len' record bytes (filled with 'fill') at time 'ts'
 * to 'pg', whose running time is *last; a time extend when needed. */
static void put(struct utrace_page *pg, uint64_t *last, uint64_t ts, uint32_t len, int fill)
{
	unsigned char *d = pg->data + pg->commit;
	uint64_t delta = ts - *last;

	if (delta > UTRACE_RB_DELTA_MAX) {
		utrace_rb_put_time_extend(d, delta);
		d += 8;
		pg->commit += 8;
		delta = 0;
	}
	d += utrace_rb_put_data_hdr(d, len, (uint32_t)delta);
	memset(d, fill, len);
	pg->commit += utrace_rb_event_size(len);
	*last = ts;
}

static void make_page(struct utrace_page *pg)
{
	uint64_t last = 1000;

	memset(pg, 0, sizeof(*pg));
	pg->time_stamp = last;
	put(pg, &last, 1010, 8, 1);                       /* small */
	put(pg, &last, 1010 + (1ULL << 30), 12, 2);       /* after a time extend */
	put(pg, &last, 1ULL << 31, 200, 3);               /* long: a length word */
	put(pg, &last, (1ULL << 31) + 5, 10, 4);          /* padded to 12 */
}

TEST(the_cursor_reads_back_what_the_encoders_wrote)
{
	struct utrace_page pg;
	struct utrace_rb_cursor c;
	static const uint64_t ts[] = { 1010, 1010 + (1ULL << 30), 1ULL << 31, (1ULL << 31) + 5 };
	static const uint32_t len[] = { 8, 12, 200, 12 };
	int i;

	make_page(&pg);
	CHECK_INT(utrace__rb_load(&c, &pg, UTRACE_PAGE_DATA, 0), ==, pg.commit);
	for (i = 0; i < 4; i++) {
		CHECK_INT(utrace__rb_next(&c, NULL, 0), ==, UTRACE_RB_EVENT);
		CHECK_INT(c.ts, ==, ts[i]);
		CHECK_INT(c.len, ==, len[i]);
		CHECK_INT(c.rec[0], ==, i + 1);
	}
	CHECK_INT(utrace__rb_next(&c, NULL, 0), ==, UTRACE_RB_END);
	CHECK_INT(utrace__rb_count_events(&pg, UTRACE_PAGE_DATA), ==, 4);
}

TEST(the_cursor_refuses_what_runs_past_the_commit)
{
	struct utrace_page pg;
	struct utrace_rb_cursor c;
	char why[200];
	uint32_t w;

	make_page(&pg);
	pg.commit -= 4;                                  /* cuts the last event */
	CHECK_INT(utrace__rb_count_events(&pg, UTRACE_PAGE_DATA), ==, -1);
	make_page(&pg);
	w = utrace_rb_word(UTRACE_RB_TYPE_PADDING, 1);   /* padding of 6 bytes */
	memcpy(pg.data + pg.commit, &w, 4);
	w = 6;
	memcpy(pg.data + pg.commit + 4, &w, 4);
	pg.commit += 12;
	utrace__rb_load(&c, &pg, UTRACE_PAGE_DATA, 100);
	while (utrace__rb_next(&c, why, sizeof(why)) == UTRACE_RB_EVENT)
		;
	CHECK(strstr(why, "padding at offset") != NULL);
	/* padding without a delta: the rest of the page is empty */
	make_page(&pg);
	w = utrace_rb_word(UTRACE_RB_TYPE_PADDING, 0);
	memcpy(pg.data + pg.commit, &w, 4);
	pg.commit += 40;
	CHECK_INT(utrace__rb_count_events(&pg, UTRACE_PAGE_DATA), ==, 4);
}

TEST(a_page_cut_keeps_the_events_after_an_offset_and_a_time)
{
	struct utrace_page pg, out;
	uint32_t second = utrace_rb_event_size(8);       /* the time extend */

	make_page(&pg);
	memset(&out, 0, sizeof(out));
	/* from the second event's time extend on: three events */
	CHECK_INT(utrace__rb_page_cut(&pg, (uint32_t)pg.commit, second, 0, 0, &out), ==, 3);
	CHECK_INT(out.time_stamp, ==, 1010 + (1ULL << 30));
	CHECK_INT(out.commit, ==, pg.commit - second - 8);
	/* the events at or after 2^31: two */
	memset(&out, 0, sizeof(out));
	CHECK_INT(utrace__rb_page_cut(&pg, (uint32_t)pg.commit, 0, 1ULL << 31, 0, &out), ==, 2);
	/* (its time extend is before it: in the page's time stamp now) */
	CHECK_INT(out.time_stamp, ==, 1ULL << 31);
	CHECK_INT(utrace__rb_count_events(&out, UTRACE_PAGE_DATA), ==, 2);
	/* none left */
	memset(&out, 0, sizeof(out));
	CHECK_INT(utrace__rb_page_cut(&pg, (uint32_t)pg.commit, 0, 1ULL << 40, 0, &out), ==, 0);
	CHECK_INT(out.commit, ==, 0);
}

/* A snapshot trigger's copy: the events up to the trigger's time. */
TEST(a_page_cut_stops_after_a_time)
{
	struct utrace_page pg, out;
	struct utrace_rb_cursor c;

	make_page(&pg);
	memset(&out, 0, sizeof(out));
	/* up to 2^31: the first three */
	CHECK_INT(utrace__rb_page_cut(&pg, (uint32_t)pg.commit, 0, 0, 1ULL << 31, &out), ==, 3);
	CHECK_INT(utrace__rb_count_events(&out, UTRACE_PAGE_DATA), ==, 3);
	utrace__rb_load(&c, &out, UTRACE_PAGE_DATA, 0);
	while (utrace__rb_next(&c, NULL, 0) == UTRACE_RB_EVENT)
		CHECK(c.ts <= 1ULL << 31);
	/* from the second on, before the fourth: two */
	memset(&out, 0, sizeof(out));
	CHECK_INT(utrace__rb_page_cut(&pg, (uint32_t)pg.commit, 0, 1011, (1ULL << 31) + 4, &out),
		  ==, 2);
	/* before the first: none */
	memset(&out, 0, sizeof(out));
	CHECK_INT(utrace__rb_page_cut(&pg, (uint32_t)pg.commit, 0, 0, 1009, &out), ==, 0);
	CHECK_INT(out.commit, ==, 0);
}

TEST_MAIN()
