/* SPDX-License-Identifier: MIT */
/*
 * Packing events into kernel ring-buffer pages (rbpack.h).
 */
#include <string.h>

#include "page.h"
#include "rbpack.h"

static void le(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

int utrace__rbpack_flush(struct utrace__rbpack *pk)
{
	uint64_t commit = pk->used;

	if (!pk->open)
		return 0;
	if (pk->page_missed) {
		commit |= UTRACE_RB_MISSED_EVENTS;
		if (pk->page_lost && pk->reserve)
			commit |= UTRACE_RB_MISSED_STORED;
	}
	if (pk->page) {
		le(pk->page, pk->page_ts, 8);
		le(pk->page + 8, commit, 8);
		if (commit & UTRACE_RB_MISSED_STORED)
			le(pk->page + UTRACE_PAGE_HDR + pk->used, pk->page_lost, 8);
	}
	pk->open = false;
	return pk->emit(pk);
}

/* A new page at time 't' for an event of 'need' bytes. */
static int open_page(struct utrace__rbpack *pk, uint64_t t, uint32_t need)
{
	if (utrace__rbpack_flush(pk) < 0)
		return -1;
	pk->open = true;
	pk->used = 0;
	pk->page_ts = pk->last_ts = t;
	pk->page_missed = pk->lost_pending;
	pk->page_lost = pk->lost;
	/* the count goes after the data: keep room for it if the event
	 * leaves it, else the page says "events lost" without a number */
	pk->reserve = pk->lost_pending && need + 8 <= pk->data_size ? 8 : 0;
	pk->lost_pending = false;
	pk->lost = 0;
	if (pk->page)
		memset(pk->page, 0, UTRACE_PAGE_HDR + (size_t)pk->data_size);
	return 0;
}

int utrace__rbpack_event(struct utrace__rbpack *pk, uint64_t t, const unsigned char *rec,
			 uint32_t len, int32_t id)
{
	uint32_t need = utrace_rb_event_size(len), a = (len + 3) & ~3u;
	uint64_t delta = 0;
	unsigned char *p;

	if (pk->open && t < pk->last_ts)
		t = pk->last_ts;         /* never back in time on a page */
	if (pk->open)
		delta = t - pk->last_ts;
	if (!pk->open || pk->lost_pending || delta > UTRACE_RB_EXTEND_MAX ||
	    pk->used + need + (delta > UTRACE_RB_DELTA_MAX ? 8 : 0) + pk->reserve > pk->data_size) {
		if (open_page(pk, t, need) < 0)
			return -1;
		delta = 0;
	}
	p = pk->page ? pk->page + UTRACE_PAGE_HDR + pk->used : NULL;
	if (delta > UTRACE_RB_DELTA_MAX) {
		if (p) {
			utrace_rb_put_time_extend(p, delta);
			p += 8;
		}
		pk->used += 8;
		delta = 0;
	}
	if (p) {
		p += utrace_rb_put_data_hdr(p, len, (uint32_t)delta);
		memcpy(p, rec, len);
		memset(p + len, 0, a - len);
		if (id >= 0 && len >= 2)
			le(p, (uint64_t)id, 2);  /* common_type */
	}
	pk->used += need;
	pk->last_ts = t;
	return 0;
}

void utrace__rbpack_lost(struct utrace__rbpack *pk, uint64_t count)
{
	pk->lost_pending = true;
	pk->lost += count;
}
