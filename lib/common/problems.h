/* SPDX-License-Identifier: MIT */
/*
 * "The first problem, then a count": a reader of a damaged file says what
 * is wrong with the first bad record in full and only counts the others,
 * then ends with one line, "utrace: 'x.dat': 41 more problems: ...".
 * Internal: never installed.
 */
#ifndef UTRACE_COMMON_PROBLEMS_H
#define UTRACE_COMMON_PROBLEMS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct utrace__problems {
	unsigned int max;       /* described in full (0: 1) */
	unsigned int shown;     /* described so far */
	uint64_t count;         /* described or not */
	bool quiet;             /* describe none on stderr */
	char *keep;             /* when set: the latest message, kept here */
	size_t keep_len;
	/* when set: says a described problem instead of stderr's "utrace: "
	 * line (the runtime's utrace__warn(), which uses no stdio) */
	void (*say)(const char *msg);
};

/*
 * utrace__problem - count a problem, and describe it on stderr
 * ("utrace: " + the message) while fewer than p->max were described
 */
void utrace__problem(struct utrace__problems *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3))) UTRACE_HIDDEN;

void utrace__vproblem(struct utrace__problems *p, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0))) UTRACE_HIDDEN;

/* Count n problems without describing them (one was described already). */
void utrace__problems_count(struct utrace__problems *p, uint64_t n) UTRACE_HIDDEN;

/* The problems counted and not described. */
uint64_t utrace__problems_more(const struct utrace__problems *p) UTRACE_HIDDEN;

/*
 * utrace__problems_end - "utrace: '<file>': N more problems: <consequence>"
 * on stderr for the problems counted and not described, if any
 */
void utrace__problems_end(const struct utrace__problems *p, const char *file,
			  const char *consequence) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_PROBLEMS_H */
