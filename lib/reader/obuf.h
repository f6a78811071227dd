/* SPDX-License-Identifier: MIT */
/*
 * A growing byte buffer (the printer's output, convert's outputs) and
 * the JSON strings and UTF-8 written into it.  When memory runs out,
 * nomem is set and what comes after is dropped.  Internal to the reader
 * library.
 */
#ifndef UTRACE_READER_OBUF_H
#define UTRACE_READER_OBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"

struct utrace__obuf {
	char *p;
	size_t len, cap;
	bool nomem;
};

void utrace__ob_grow(struct utrace__obuf *b, size_t n) UTRACE_HIDDEN;

static inline void utrace__ob_reserve(struct utrace__obuf *b, size_t n)
{
	if (__builtin_expect(b->len + n > b->cap, 0))
		utrace__ob_grow(b, n);
}

/* n may be 0, with s NULL (an empty buffer's bytes): nothing is copied. */
static inline void utrace__ob_put(struct utrace__obuf *b, const void *s, size_t n)
{
	if (!n)
		return;
	utrace__ob_reserve(b, n);
	if (b->len + n > b->cap)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static inline void utrace__ob_putc(struct utrace__obuf *b, char c)
{
	utrace__ob_reserve(b, 1);
	if (b->len < b->cap)
		b->p[b->len++] = c;
}

void utrace__ob_puts(struct utrace__obuf *b, const char *s) UTRACE_HIDDEN;
void utrace__ob_printf(struct utrace__obuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3))) UTRACE_HIDDEN;
/* v in decimal, at least 'width' wide: right-aligned with 'pad', or
 * left-aligned (pad ' ') when 'left'. */
void utrace__ob_num(struct utrace__obuf *b, uint64_t v, int width, char pad,
		    bool left) UTRACE_HIDDEN;
void utrace__ob_snum(struct utrace__obuf *b, int64_t v) UTRACE_HIDDEN;

/* The inside of a JSON string (json.c): UTF-8 passes, other bytes become
 * \u00XX; utrace__ob_json_str() adds the quotes. */
void utrace__ob_json_chars(struct utrace__obuf *b, const char *s, size_t n) UTRACE_HIDDEN;
void utrace__ob_json_str(struct utrace__obuf *b, const char *s, size_t n) UTRACE_HIDDEN;
/* s as UTF-8: the same when it is, other bytes as the code point of their
 * number (two bytes each). */
void utrace__ob_utf8(struct utrace__obuf *b, const char *s, size_t n) UTRACE_HIDDEN;
/* The length of the well-formed UTF-8 character at p (1 for ASCII), or 0. */
size_t utrace__utf8_seq(const unsigned char *p, const unsigned char *end) UTRACE_HIDDEN;

#endif /* UTRACE_READER_OBUF_H */
