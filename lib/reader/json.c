/* SPDX-License-Identifier: MIT */
/* JSON strings into an output buffer (obuf.h), for `utrace script --json`. */
#include "obuf.h"

void utrace__ob_json_chars(struct utrace__obuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		unsigned char c = *p;
		size_t k = 0, i;

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
		if (c >= 0xc2 && c <= 0xdf)
			k = 1;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3;
		if (k && (size_t)(end - p) > k) {
			for (i = 1; i <= k; i++)
				if ((p[i] & 0xc0) != 0x80)
					break;
			/* no overlong forms, surrogates or code points past U+10FFFF */
			if (i > k && !(c == 0xe0 && p[1] < 0xa0) &&
			    !(c == 0xed && p[1] >= 0xa0) && !(c == 0xf0 && p[1] < 0x90) &&
			    !(c == 0xf4 && p[1] >= 0x90)) {
				utrace__ob_put(b, (const char *)p, k + 1);
				p += k + 1;
				continue;
			}
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
