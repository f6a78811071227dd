/* SPDX-License-Identifier: MIT */
/* The kernel's trace-line prefix (traceline.h). */
#include <string.h>

#include "traceline.h"

/* The decimal digits of v, ending at 'end', at least 'min' of them, the
 * missing ones 'pad'; returns where they begin. */
static char *digits(char *end, uint64_t v, size_t min, char pad)
{
	char *d = end;

	do {
		*--d = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while ((size_t)(end - d) < min)
		*--d = pad;
	return d;
}

static char *put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

size_t utrace__trace_prefix(char *p, const char *comm, size_t comm_len,
			    uint32_t tid, uint32_t cpu, uint64_t time_ns)
{
	char t[24], *e = t + sizeof(t), *d, *start = p;
	/* rounded to the microsecond, as the kernel's ns2usecs() does */
	uint64_t usecs = time_ns / 1000 + (time_ns % 1000 >= 500);
	size_t k;

	for (k = comm_len; k < 16; k++)
		*p++ = ' ';
	p = put(p, comm, comm_len);
	*p++ = '-';
	d = digits(e, tid, 1, ' ');
	p = put(p, d, (size_t)(e - d));
	for (k = (size_t)(e - d); k < 7; k++)
		*p++ = ' ';
	p = put(p, " [", 2);
	d = digits(e, cpu, 3, '0');
	p = put(p, d, (size_t)(e - d));
	p = put(p, "] ..... ", 8);
	d = digits(e, usecs / 1000000, 5, ' ');
	p = put(p, d, (size_t)(e - d));
	*p++ = '.';
	d = digits(e, usecs % 1000000, 6, '0');
	p = put(p, d, 6);
	p = put(p, ": ", 2);
	return (size_t)(p - start);
}
