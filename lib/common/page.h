/* SPDX-License-Identifier: MIT */
/*
 * The page codec: the kernel ring-buffer page layout, the one encoding of
 * utrace's pages everywhere (the writer's pool, the trace file's PAGE
 * records, the live readers' copies, the trace.dat export).
 *
 *   +------------------+ 0
 *   | u64 time_stamp   |   time of the page's start, the clock's units
 *   | u64 commit       |   bytes of data committed, | MISSED_EVENTS
 *   +------------------+ 16           (| MISSED_STORED: a count after it)
 *   | events ...       |
 *   +------------------+ 16 + commit
 *
 * Each event starts with a 32-bit header, type_len:5 | time_delta:27
 * (little-endian, type_len in the low bits):
 *
 *   type_len 1..28   data: a record of type_len * 4 bytes follows
 *   type_len 0       data: a length word follows (record bytes + 4), then
 *                    the record, padded to 4
 *   29  padding      a length word, then that many bytes; with a zero
 *                    delta and no length: the rest of the page is empty
 *   30  time extend  a second word: the delta's bits above the 27th
 *   31  time stamp   an absolute time: the second word holds bits 27..58
 *
 * Encoding is inline here: the writer's fast path builds its header word
 * with utrace_rb_word() and must not pay a call for it.  Decoding, which
 * must trust nothing it reads, is the cursor of page.c.  (libtraceevent's
 * kbuffer reads the same layout.)
 */
#ifndef UTRACE_COMMON_PAGE_H
#define UTRACE_COMMON_PAGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "pages are little-endian, written and read in host order");

#define UTRACE_PAGE_SIZE 4096
#define UTRACE_PAGE_HDR 16                       /* time_stamp, commit */
#define UTRACE_PAGE_DATA (UTRACE_PAGE_SIZE - UTRACE_PAGE_HDR)

/* The event types (type_len), as the kernel's RINGBUF_TYPE_*. */
enum utrace_rb_type {
	UTRACE_RB_TYPE_DATA_LONG = 0,            /* data with a length word */
	UTRACE_RB_TYPE_DATA_MAX = 28,            /* 1..28: data, type_len * 4 */
	UTRACE_RB_TYPE_PADDING = 29,
	UTRACE_RB_TYPE_TIME_EXTEND = 30,
	UTRACE_RB_TYPE_TIME_STAMP = 31,
};

#define UTRACE_RB_TYPE_BITS 5
#define UTRACE_RB_TYPE_MASK ((1u << UTRACE_RB_TYPE_BITS) - 1)
#define UTRACE_RB_DELTA_BITS 27
#define UTRACE_RB_DELTA_MAX ((1u << UTRACE_RB_DELTA_BITS) - 1)
/* The largest delta a time extend carries (27 + 32 bits). */
#define UTRACE_RB_EXTEND_MAX ((1ULL << (UTRACE_RB_DELTA_BITS + 32)) - 1)
/* Records larger than this (28 * 4) use type_len 0 and a length word. */
#define UTRACE_RB_MAX_SMALL (UTRACE_RB_TYPE_DATA_MAX * 4)
/* The commit word: the bytes, and the kernel's two flags above them. */
#define UTRACE_RB_MISSED_EVENTS (1ULL << 31)     /* events lost before it */
#define UTRACE_RB_MISSED_STORED (1ULL << 30)     /* their count after the data */
#define UTRACE_RB_COMMIT_MASK ((1ULL << 30) - 1)
/* An absolute time stamp keeps these top bits of the running time. */
#define UTRACE_RB_TS_MSB (0xf8ULL << 56)

struct utrace_page {
	uint64_t time_stamp;
	uint64_t commit;
	unsigned char data[UTRACE_PAGE_DATA];
};

/* ---------------------------------------------------------- encoding */

/* An event header word. */
static inline __attribute__((always_inline)) uint32_t utrace_rb_word(uint32_t type_len,
								     uint32_t delta)
{
	return type_len | delta << UTRACE_RB_TYPE_BITS;
}

/* Bytes an event with a record of 'len' bytes takes, header included (no
 * time extend). */
static inline __attribute__((always_inline)) uint32_t utrace_rb_event_size(uint32_t len)
{
	uint32_t a = (len + 3) & ~3u;

	return a <= UTRACE_RB_MAX_SMALL ? 4 + a : 8 + a;
}

/* Write a time extend of 'delta' (at most UTRACE_RB_EXTEND_MAX) at 'p':
 * 8 bytes. */
static inline __attribute__((always_inline)) void utrace_rb_put_time_extend(unsigned char *p,
									    uint64_t delta)
{
	uint32_t w = utrace_rb_word(UTRACE_RB_TYPE_TIME_EXTEND,
				    (uint32_t)(delta & UTRACE_RB_DELTA_MAX));
	uint32_t hi = (uint32_t)(delta >> UTRACE_RB_DELTA_BITS);

	memcpy(p, &w, 4);
	memcpy(p + 4, &hi, 4);
}

/* Write the header of a data event at 'p': a record of 'len' bytes (the
 * record goes after it, padded to 4), 'delta' at most UTRACE_RB_DELTA_MAX.
 * Returns the header's bytes, 4 or 8. */
static inline __attribute__((always_inline)) uint32_t utrace_rb_put_data_hdr(unsigned char *p,
									     uint32_t len,
									     uint32_t delta)
{
	uint32_t a = (len + 3) & ~3u, w;

	if (a <= UTRACE_RB_MAX_SMALL) {
		w = utrace_rb_word(a / 4, delta);
		memcpy(p, &w, 4);
		return 4;
	}
	w = utrace_rb_word(UTRACE_RB_TYPE_DATA_LONG, delta);
	len += 4;
	memcpy(p, &w, 4);
	memcpy(p + 4, &len, 4);
	return 8;
}

/* ---------------------------------------------------------- decoding */

/*
 * A cursor over the events of one page.  Set up by utrace__rb_load() (a
 * whole page) or utrace__rb_init() (its data), moved by utrace__rb_next(),
 * which fills in the last event found.
 */
struct utrace_rb_cursor {
	const unsigned char *data;       /* the page's event data */
	uint32_t commit;                 /* bytes of it to read */
	uint32_t pos;                    /* the next event header */
	uint64_t ts;                     /* running time: of the last event */
	uint64_t base;                   /* where 'data' is (in a file), for
					  * the messages only */
	/* The last event found: */
	const unsigned char *rec;        /* its record */
	uint32_t len;                    /* the record's bytes */
	uint32_t at;                     /* its header's offset in data */
	uint32_t delta;                  /* its own time delta */
};

enum utrace_rb_next {
	UTRACE_RB_BAD = -1,              /* the bytes do not parse */
	UTRACE_RB_END = 0,
	UTRACE_RB_EVENT = 1,
};

/**
 * utrace__rb_init() - set a cursor on a page's event data
 * @c: the cursor
 * @data: the event data (the page + UTRACE_PAGE_HDR)
 * @commit: bytes of it to read
 * @ts: the page's time stamp
 * @base: where @data is, for utrace__rb_next()'s messages (a file offset)
 */
void utrace__rb_init(struct utrace_rb_cursor *c, const unsigned char *data,
		     uint32_t commit, uint64_t ts, uint64_t base) UTRACE_HIDDEN;

/**
 * utrace__rb_load() - set a cursor on a whole page
 * @c: the cursor
 * @page: the page (its header first; any alignment)
 * @max_data: bytes of data the page has room for: a larger commit is cut
 *            to it
 * @base: where the page's data is, for the messages (a file offset)
 *
 * Return: the page's commit word, flags included.
 */
uint64_t utrace__rb_load(struct utrace_rb_cursor *c, const void *page, uint32_t max_data,
			 uint64_t base) UTRACE_HIDDEN;

/**
 * utrace__rb_next() - the next data event of a page
 * @c: the cursor
 * @why: where to say what is wrong (NULL: not said)
 * @whylen: its size
 *
 * Time extends and time stamps move the running time, padding is skipped
 * (and takes no time, as in the kernel); padding with a zero delta ends
 * the page (the kernel's "rest of the page").  Nothing read is trusted:
 * every length is checked against the commit.
 *
 * Return: UTRACE_RB_EVENT (the event in @c), UTRACE_RB_END, or
 * UTRACE_RB_BAD (said in @why; the cursor stays at the bad header).
 */
int utrace__rb_next(struct utrace_rb_cursor *c, char *why, size_t whylen) UTRACE_HIDDEN;

/**
 * utrace__rb_count_events() - the data events of a page
 * @page: the page
 * @max_data: bytes of data it has room for
 *
 * Return: the count, or -1 when its committed bytes do not parse.
 */
long utrace__rb_count_events(const struct utrace_page *page, uint32_t max_data)
	UTRACE_HIDDEN;

/**
 * utrace__rb_page_cut() - copy the tail of a page
 * @src: the page
 * @commit: its committed bytes (read once by the caller)
 * @from: the first byte to keep: what a consuming reader took is before it
 * @min_ts: leave out the events before this time (a clear)
 * @max_ts: and those after this time (a snapshot trigger's), 0: none
 * @dst: the copy; its time stamp and commit set only when an event is kept
 *
 * Copies the events of @src from byte @from on whose time is at least
 * @min_ts, up to the first one later than @max_ts; the copy's time stamp
 * is the running time just before the first event kept.
 *
 * Return: the events kept.
 */
long utrace__rb_page_cut(const struct utrace_page *src, uint32_t commit, uint32_t from,
			 uint64_t min_ts, uint64_t max_ts, struct utrace_page *dst) UTRACE_HIDDEN;

/* ---------------------------------------------------------- description */

/*
 * The kernel's description of this layout, as tracefs shows it and
 * trace.dat stores it (libtraceevent reads the page size and the commit
 * field's size from it): events/header_event and, from
 * utrace__rb_header_page(), events/header_page (ring_buffer_print_page_header()
 * of a kernel built with -funsigned-char: "char data" is unsigned).
 */
extern const char utrace__rb_header_event[] UTRACE_HIDDEN;

/**
 * utrace__rb_header_page() - the text of events/header_page
 * @buf: where it goes (NUL-terminated when @len allows)
 * @len: its size
 * @data_size: bytes of event data a page has (UTRACE_PAGE_DATA)
 *
 * Return: the text's length, as snprintf().
 */
int utrace__rb_header_page(char *buf, size_t len, uint32_t data_size) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_PAGE_H */
