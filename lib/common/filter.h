/* SPDX-License-Identifier: MIT */
/*
 * Event filters: the kernel's filter language (events/<sys>/<ev>/filter),
 * compiled once into a flat predicate program and run on each record.
 *
 * Compile (control side, may allocate) and match (writer side) are split:
 * utrace__filter_match() takes no lock, calls no allocator and no stdio, and
 * never reads outside rec[0..size), so it may run in a signal handler.  A
 * compiled filter is immutable; publish it with RCU and free it after a
 * grace period.  docs/filters.md describes the grammar and the program.
 */
#ifndef UTRACE_FILTER_H
#define UTRACE_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

struct utrace__filter;

/* The message for each event of a subsystem whose filter write did not
 * compile for it (the kernel reports it at position 0, errno EINVAL). */
#define UTRACE__FILTER_MSG_BAD_SUBSYS \
	"Couldn't find or set field in one of a subsystem's events"

struct utrace__filter_error {
	int err;        /* the negative errno the kernel's write() gives */
	int pos;        /* the kernel's error position, unclamped: the error_log
			 * caret sits under column 11 + pos */
	char msg[128];  /* the kernel's message; "" for "Error: (0)" */
};

/* What the writer knows when it commits a record. */
struct utrace__filter_ctx {
	uint32_t cpu;
	const char *comm;  /* NUL-terminated, at most 16 bytes read */
};

/**
 * utrace__filter_compile - compile a filter expression for an event
 * @expr: the expression, trailing white space already stripped (as the
 *        kernel's strstrip() does)
 * @fields: the event's own fields, after the four common ones
 * @nr: how many
 * @out: set to the program, or NULL on error
 * @err: filled in on error
 *
 * The common fields, CPU/cpu/common_cpu and COMM/comm are known implicitly.
 *
 * Return: 0, or the negative errno of the kernel's write().
 */
int utrace__filter_compile(const char *expr, const struct utrace_event_field *fields,
			   unsigned int nr, struct utrace__filter **out,
			   struct utrace__filter_error *err) UTRACE_HIDDEN;

/*
 * The symbols '.function' looks in when they are not this process's (a
 * recording read by utrace script): a name's function, or the function
 * holding an address; each 0 or -ENOENT.
 */
struct utrace__filter_syms {
	int (*by_name)(void *ctx, const char *name, uint64_t *start, uint64_t *size);
	int (*by_addr)(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size);
	void *ctx;
};

/**
 * utrace__filter_compile_syms - utrace__filter_compile() with other symbols
 * @syms: where '.function' looks names and addresses up; NULL for this
 *        process's (dlsym(), dladdr(), utrace__filter_sym_by_name)
 *
 * The other arguments and the return value are utrace__filter_compile()'s.
 */
int utrace__filter_compile_syms(const char *expr, const struct utrace_event_field *fields,
				unsigned int nr, const struct utrace__filter_syms *syms,
				struct utrace__filter **out,
				struct utrace__filter_error *err) UTRACE_HIDDEN;

/*
 * Where a named function is when dlsym() does not know it (a static
 * function of a position-independent program): the runtime sets this to
 * its ELF symbol lookup (symbols.c); NULL in readers.  0 or -ENOENT.
 */
extern int (*utrace__filter_sym_by_name)(const char *name, uint64_t *start, uint64_t *size)
	UTRACE_HIDDEN;

/**
 * utrace__filter_match - run a filter program on a record
 * @f: the program; NULL passes everything
 * @rec: the record
 * @size: its bytes
 * @ctx: CPU and comm of the writer; NULL for CPU 0, comm ""
 *
 * A record shorter than the fixed fields the filter reads does not pass,
 * nor does one whose __data_loc string, when a predicate reads it, lies
 * outside it.
 *
 * Return: true when the record passes.
 */
bool utrace__filter_match(const struct utrace__filter *f, const void *rec,
			  unsigned int size, const struct utrace__filter_ctx *ctx)
	UTRACE_HIDDEN;

/**
 * utrace__filter_free - free a program no thread can be running
 * @f: the program, or NULL
 */
void utrace__filter_free(struct utrace__filter *f) UTRACE_HIDDEN;

/**
 * utrace__filter_is_clear - does writing @expr clear the filter?
 * @expr: the expression written
 *
 * Return: true for "0" after stripping leading and trailing white space:
 * " 0" clears, "00" does not.
 */
bool utrace__filter_is_clear(const char *expr) UTRACE_HIDDEN;

/**
 * utrace__filter_error_text - the filter file's text after a failed write
 * @expr: the expression written
 * @err: its error
 *
 * With the final newline the file read adds:
 * "<expr>\n<spaces>^\nparse_error: <msg>\n\n" or "<expr>\nError: (0)\n\n".
 *
 * Return: the text, malloc()ed; NULL when out of memory.
 */
char *utrace__filter_error_text(const char *expr, const struct utrace__filter_error *err)
	UTRACE_HIDDEN;

/**
 * utrace__filter_log_text - the error_log entry of a failed write
 * @expr: the expression written
 * @err: its error
 *
 * The entry after its "[<ts>] " prefix:
 * "event filter parse error: error: <msg>\n  Command: <expr>\n<11+pos spaces>^\n"
 * ("Error" and pos 0 for the "Error: (0)" cases).
 *
 * Return: the text, malloc()ed; NULL when out of memory.
 */
char *utrace__filter_log_text(const char *expr, const struct utrace__filter_error *err)
	UTRACE_HIDDEN;

/**
 * utrace__filter_nr_insns - the size of a program (tests, `utrace` output)
 * @f: the program
 *
 * Return: its number of instructions.
 */
unsigned int utrace__filter_nr_insns(const struct utrace__filter *f) UTRACE_HIDDEN;

#endif /* UTRACE_FILTER_H */
