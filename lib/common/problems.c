/* SPDX-License-Identifier: MIT */
/* "The first problem, then a count" (problems.h). */
#include <stdarg.h>
#include <stdio.h>

#include "problems.h"

void utrace__vproblem(struct utrace__problems *p, const char *fmt, va_list ap)
{
	va_list aq;

	p->count++;
	if (p->keep && p->keep_len) {
		va_copy(aq, ap);
		vsnprintf(p->keep, p->keep_len, fmt, aq);
		va_end(aq);
	}
	if (p->quiet || p->shown >= (p->max ? p->max : 1))
		return;
	p->shown++;
	if (p->say) {
		char msg[480];

		vsnprintf(msg, sizeof(msg), fmt, ap);
		p->say(msg);
		return;
	}
	fputs("utrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void utrace__problem(struct utrace__problems *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	utrace__vproblem(p, fmt, ap);
	va_end(ap);
}

void utrace__problems_count(struct utrace__problems *p, uint64_t n)
{
	p->count += n;
}

uint64_t utrace__problems_more(const struct utrace__problems *p)
{
	return p->count > p->shown ? p->count - p->shown : 0;
}

void utrace__problems_end(const struct utrace__problems *p, const char *file,
			  const char *consequence)
{
	uint64_t more = utrace__problems_more(p);

	if (more && !p->quiet)
		fprintf(stderr, "utrace: '%s': %llu more problems: %s\n", file,
			(unsigned long long)more, consequence);
}
