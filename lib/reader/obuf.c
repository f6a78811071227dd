/* SPDX-License-Identifier: MIT */
/* The reader library's growing output buffer (obuf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "obuf.h"

void utrace__ob_grow(struct utrace__obuf *b, size_t n)
{
	char *p;
	size_t c;

	c = b->cap ? b->cap : 1 << 16;
	while (c < b->len + n)
		c *= 2;
	p = realloc(b->p, c);
	if (!p) {
		b->nomem = true;
		return;
	}
	b->p = p;
	b->cap = c;
}

void utrace__ob_puts(struct utrace__obuf *b, const char *s)
{
	utrace__ob_put(b, s, strlen(s));
}

void utrace__ob_printf(struct utrace__obuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	utrace__ob_reserve(b, 256);
	if (b->cap - b->len < 256)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		utrace__ob_reserve(b, (size_t)n + 1);
		if (b->cap - b->len < (size_t)n + 1)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void utrace__ob_num(struct utrace__obuf *b, uint64_t v, int width, char pad, bool left)
{
	char t[24];
	int n = 0;

	do {
		t[sizeof(t) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	utrace__ob_reserve(b, (size_t)(n > width ? n : width));
	if (b->cap - b->len < (size_t)(n > width ? n : width))
		return;
	if (!left)
		for (; width > n; width--)
			b->p[b->len++] = pad;
	memcpy(b->p + b->len, t + sizeof(t) - n, (size_t)n);
	b->len += (size_t)n;
	for (; width > n; width--)
		b->p[b->len++] = ' ';
}

void utrace__ob_snum(struct utrace__obuf *b, int64_t v)
{
	if (v < 0) {
		utrace__ob_putc(b, '-');
		utrace__ob_num(b, (uint64_t)0 - (uint64_t)v, 0, ' ', false);
	} else {
		utrace__ob_num(b, (uint64_t)v, 0, ' ', false);
	}
}
