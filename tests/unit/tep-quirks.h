/* SPDX-License-Identifier: MIT */
/*
 * Where libtraceevent 1.7.1 (Debian 12) prints differently from the
 * kernel, for the tests that compare utrace's text with it:
 *
 * - up to at least 1.8.4 it reads a field without its sign, so a negative
 *   'short' or 'signed char' printed with %d shows as 65535 where the
 *   kernel's C printf shows -1, and a negative int given to
 *   __print_symbolic()/__print_flags() is not sign-extended: such records
 *   are left out of the comparison (tep_quirk_negative_field);
 * - before 1.8.4 it printed __print_array() as "1 2 3" where the kernel
 *   prints "{0x1,0x2,0x3}": tep_quirk_old_array turns utrace's text into
 *   the old form, for the tests that print with libtraceevent itself
 *   (utrace's reader prints the kernel's form: lib/reader/formats.c).
 */
#ifndef UTRACE_TEST_TEP_QUIRKS_H
#define UTRACE_TEST_TEP_QUIRKS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utrace/utrace.h>

static inline int tep_quirk_negative_field(const struct utrace_event *ev,
					   const void *rec)
{
	const struct utrace_event_field *f;
	unsigned int n, i;
	char *fmt = utrace_event_format(ev);
	int symbolic = fmt && (strstr(fmt, "__print_symbolic") ||
			       strstr(fmt, "__print_flags"));

	free(fmt);
	f = utrace_event_fields(ev, &n);
	for (i = 0; i < n; i++) {
		const signed char *p = (const signed char *)rec + f[i].offset;

		if (f[i].kind != UTRACE_FIELD_PLAIN || !f[i].is_signed)
			continue;
		if ((f[i].size == 1 && p[0] < 0) || (f[i].size == 2 && p[1] < 0))
			return 1;
		if (f[i].size == 4 && p[3] < 0 && symbolic)
			return 1;
	}
	return 0;
}

static inline void tep_quirk_old_array(char *s)
{
	char out[8192], *o = out, *p = s;

	while (*p && o < out + sizeof(out) - 32) {
		if (p[0] == '{' && (p[1] == '}' || (p[1] == '0' && p[2] == 'x'))) {
			p++;
			while (*p && *p != '}') {
				unsigned long long v = strtoull(p, &p, 16);

				o += sprintf(o, "%llu", v);
				if (*p == ',') {
					*o++ = ' ';
					p++;
				}
			}
			if (*p == '}')
				p++;
			continue;
		}
		*o++ = *p++;
	}
	*o = 0;
	strcpy(s, out);
}

#endif /* UTRACE_TEST_TEP_QUIRKS_H */
