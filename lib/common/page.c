/* SPDX-License-Identifier: MIT */
/* Decoding pages (the layout and the encoders are in page.h). */
#include <stdio.h>
#include <string.h>

#include "page.h"

void utrace__rb_init(struct utrace_rb_cursor *c, const unsigned char *data,
		     uint32_t commit, uint64_t ts, uint64_t base)
{
	memset(c, 0, sizeof(*c));
	c->data = data;
	c->commit = commit;
	c->ts = ts;
	c->base = base;
}

uint64_t utrace__rb_load(struct utrace_rb_cursor *c, const void *page, uint32_t max_data,
			 uint64_t base)
{
	const unsigned char *p = page;
	uint64_t ts, word, commit;

	/* (memcpy: a page in a trace file has no alignment) */
	memcpy(&ts, p, 8);
	memcpy(&word, p + 8, 8);
	commit = word & UTRACE_RB_COMMIT_MASK;
	utrace__rb_init(c, p + UTRACE_PAGE_HDR, commit > max_data ? max_data : (uint32_t)commit,
			ts, base);
	return word;
}

int utrace__rb_next(struct utrace_rb_cursor *c, char *why, size_t whylen)
{
	for (;;) {
		uint32_t pos = c->pos, left = c->commit - pos, w, tl, delta, x;
		unsigned long long ev = (unsigned long long)(c->base + pos);
		uint64_t size;

		if (!left)
			return UTRACE_RB_END;
		if (left < 4) {
			if (why)
				snprintf(why, whylen, "event at offset %llu: header cut by "
					 "the page commit (%u bytes left)", ev, left);
			return UTRACE_RB_BAD;
		}
		memcpy(&w, c->data + pos, 4);
		tl = w & UTRACE_RB_TYPE_MASK;
		delta = w >> UTRACE_RB_TYPE_BITS;
		if (tl >= 1 && tl <= UTRACE_RB_TYPE_DATA_MAX) {
			x = tl * 4;
			size = 4 + x;
			if (size > left)
				goto past_commit;
			c->rec = c->data + pos + 4;
			goto data;
		}
		if (tl == UTRACE_RB_TYPE_PADDING && !delta)
			return UTRACE_RB_END;    /* the rest of the page is empty */
		if (left < 8) {
			if (why)
				snprintf(why, whylen, "event at offset %llu: type %u needs 8 "
					 "bytes, the page commit leaves %u", ev, tl, left);
			return UTRACE_RB_BAD;
		}
		memcpy(&x, c->data + pos + 4, 4);
		switch (tl) {
		case UTRACE_RB_TYPE_DATA_LONG:
			if (x < 4) {
				if (why)
					snprintf(why, whylen, "event at offset %llu: length "
						 "word %u is below 4", ev, x);
				return UTRACE_RB_BAD;
			}
			x -= 4;
			size = 8 + (((uint64_t)x + 3) & ~3ULL);
			if (size > left)
				goto past_commit;
			c->rec = c->data + pos + 8;
			goto data;
		case UTRACE_RB_TYPE_PADDING:
			if (x < 4 || x % 4 || (uint64_t)x + 4 > left) {
				if (why)
					snprintf(why, whylen, "padding at offset %llu: length "
						 "%u is not a multiple of 4 from 4 to the page "
						 "commit (%u bytes left)", ev, x, left - 4);
				return UTRACE_RB_BAD;
			}
			c->pos = pos + 4 + x;
			continue;
		case UTRACE_RB_TYPE_TIME_EXTEND:
			c->ts += ((uint64_t)x << UTRACE_RB_DELTA_BITS) + delta;
			c->pos = pos + 8;
			continue;
		default:                 /* UTRACE_RB_TYPE_TIME_STAMP */
			c->ts = ((uint64_t)x << UTRACE_RB_DELTA_BITS | delta) |
				(c->ts & UTRACE_RB_TS_MSB);
			c->pos = pos + 8;
			continue;
		}
past_commit:
		if (why)
			snprintf(why, whylen, "event at offset %llu: length %llu runs past "
				 "the page commit (%u bytes left)", ev,
				 (unsigned long long)size, left);
		return UTRACE_RB_BAD;
data:
		c->pos = pos + (uint32_t)size;
		c->ts += delta;
		c->len = x;
		c->at = pos;
		c->delta = delta;
		return UTRACE_RB_EVENT;
	}
}

long utrace__rb_count_events(const struct utrace_page *page, uint32_t max_data)
{
	struct utrace_rb_cursor c;
	long n = 0;
	int r;

	utrace__rb_load(&c, page, max_data, 0);
	while ((r = utrace__rb_next(&c, NULL, 0)) == UTRACE_RB_EVENT)
		n++;
	return r == UTRACE_RB_END ? n : -1;
}

long utrace__rb_page_cut(const struct utrace_page *src, uint32_t commit, uint32_t from,
			 uint64_t min_ts, uint64_t max_ts, struct utrace_page *dst)
{
	struct utrace_rb_cursor c;
	uint32_t start = commit, end = 0;
	long n = 0;

	utrace__rb_init(&c, src->data, commit, src->time_stamp, 0);
	while (utrace__rb_next(&c, NULL, 0) == UTRACE_RB_EVENT) {
		if (max_ts && c.ts > max_ts) {
			end = c.at;     /* this one and the rest are later */
			break;
		}
		if (start == commit) {
			if (c.at < from || c.ts < min_ts)
				continue;
			start = c.at;
			dst->time_stamp = c.ts - c.delta;
		}
		n++;
	}
	/* Up to where the reading stopped: the time extends after the last
	 * event too, as the page has them. */
	if (!end)
		end = c.pos;
	if (start >= commit || end <= start)
		return 0;
	memcpy(dst->data, src->data + start, end - start);
	dst->commit = end - start;
	return n;
}

/* ring_buffer_print_entry_header() (x86-64) */
const char utrace__rb_header_event[] =
	"# compressed entry header\n"
	"\ttype_len    :    5 bits\n"
	"\ttime_delta  :   27 bits\n"
	"\tarray       :   32 bits\n"
	"\n"
	"\tpadding     : type == 29\n"
	"\ttime_extend : type == 30\n"
	"\ttime_stamp : type == 31\n"
	"\tdata max type_len  == 28\n";

/* ring_buffer_print_page_header() */
int utrace__rb_header_page(char *buf, size_t len, uint32_t data_size)
{
	return snprintf(buf, len,
			"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
			"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
			"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
			"\tfield: char data;\toffset:16;\tsize:%u;\tsigned:0;\n", data_size);
}
