/* SPDX-License-Identifier: MIT */
/*
 * Text of trace files into an output buffer (obuf.h): JSON strings, for
 * `utrace script --json` and the JSON export, and UTF-8 for the Perfetto
 * export.  The bytes of a trace are not always UTF-8: a byte that is not
 * part of a well-formed UTF-8 character is taken as the code point of
 * the same number (Latin-1), "\u00XX" in JSON, so that nothing is lost
 * and the output stays valid.
 */
#include "obuf.h"

size_t utrace__utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = *p;
	size_t k = 0, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		k = 1;
	else if (c >= 0xe0 && c <= 0xef)
		k = 2;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 3;
	if (!k || (size_t)(end - p) <= k)
		return 0;
	for (i = 1; i <= k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* no overlong forms, surrogates or code points past U+10FFFF */
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
		return 0;
	return k + 1;
}

void utrace__ob_json_chars(struct utrace__obuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		unsigned char c = *p;
		size_t k;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			const unsigned char *q = p;

			while (q < end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
				q++;
			utrace__ob_put(b, (const char *)p, (size_t)(q - p));
			p = q;
			continue;
		}
		if (c == '"' || c == '\\') {
			utrace__ob_putc(b, '\\');
			utrace__ob_putc(b, (char)c);
			p++;
			continue;
		}
		if (c == '\n' || c == '\t' || c == '\r') {
			utrace__ob_putc(b, '\\');
			utrace__ob_putc(b, c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
			p++;
			continue;
		}
		k = c >= 0x80 ? utrace__utf8_seq(p, end) : 0;
		if (k) {
			utrace__ob_put(b, (const char *)p, k);
			p += k;
			continue;
		}
		utrace__ob_printf(b, "\\u%04x", c);
		p++;
	}
}

void utrace__ob_json_str(struct utrace__obuf *b, const char *s, size_t n)
{
	utrace__ob_putc(b, '"');
	utrace__ob_json_chars(b, s, n);
	utrace__ob_putc(b, '"');
}

void utrace__ob_utf8(struct utrace__obuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		const unsigned char *q = p;
		size_t k;

		while (q < end && *q < 0x80)
			q++;
		utrace__ob_put(b, (const char *)p, (size_t)(q - p));
		p = q;
		if (p == end)
			break;
		k = utrace__utf8_seq(p, end);
		if (k) {
			utrace__ob_put(b, (const char *)p, k);
			p += k;
		} else {
			char t[2] = { (char)(0xc0 | *p >> 6), (char)(0x80 | (*p & 0x3f)) };

			utrace__ob_put(b, t, 2);
			p++;
		}
	}
}
