/* SPDX-License-Identifier: MIT */
/*
 * "The first problem, then a count": a reader of a damaged file says what
 * is wrong with the first bad record in full and only counts the others,
 * then ends with one line, "utrace: 'x.dat': 41 more problems: ...".
 * And what the libraries say (utrace__say()): the program prints it.
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
	bool quiet;             /* describe none */
	char *keep;             /* when set: the latest message, kept here */
	size_t keep_len;
	/* when set: says a described problem instead of the program's
	 * printer's "utrace: " line (the runtime's utrace__warn(), which
	 * uses no stdio) */
	void (*say)(const char *msg);
};

/*
 * utrace__problem - count a problem, and describe it ("utrace: " + the
 * message + "\n", through utrace__say()) while fewer than p->max were
 * described
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
 * for the problems counted and not described, if any (utrace__say())
 */
void utrace__problems_end(const struct utrace__problems *p, const char *file,
			  const char *consequence) UTRACE_HIDDEN;

/*
 * What the libraries say.  Nothing under lib/ prints: an error, a note or
 * a described problem is said with utrace__say(), which hands the whole
 * text to the program's printer, in the order it is said (the utrace
 * tool's main() installs one that writes it to stderr, so that messages
 * keep their place between the lines of the output).  Without a printer
 * the texts are kept, up to 64 KiB, for the caller to take.
 */

/**
 * utrace__set_printer - where what the libraries say goes
 * @print: called with each text, whole ("utrace: ...\n", maybe several
 *         lines); NULL: keep the texts (utrace__said_take())
 */
void utrace__set_printer(void (*print)(const char *text)) UTRACE_HIDDEN;

/**
 * utrace__say - say a text: to the printer, or kept
 * @fmt: printf format of the whole text, its newline included
 */
void utrace__say(const char *fmt, ...) __attribute__((format(printf, 1, 2))) UTRACE_HIDDEN;

void utrace__vsay(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)))
	UTRACE_HIDDEN;

/**
 * utrace__said_take - the texts said while there was no printer
 *
 * Return: the kept texts, one after the other (malloc()ed, the caller's),
 * or NULL when none; they are forgotten here.
 */
char *utrace__said_take(void) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_PROBLEMS_H */
