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
#include <string.h>

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

/*
 * The head of a compiled filter (filter.c), which the writer's inline
 * match reads.  A short program (at most UTRACE__FILTER_FAST_MAX
 * instructions: one or two comparisons, a string == or ~) is also held as
 * fp[], forms that need no table: a field against a number, widened to 64
 * bits (a signed one with the sign bit flipped, so that they order as
 * unsigned): == < <= > >= are all one subtraction and one compare
 * (UTRACE__FK_RANGE), & one test (UTRACE__FK_AND); a string == or ~
 * without a strlen (UTRACE__FK_STR); anything else through the
 * interpreter (UTRACE__FK_INSN).  They branch as the program does.
 */
#define UTRACE__FILTER_FAST_MAX 4
enum { UTRACE__FK_RANGE = 1, UTRACE__FK_AND, UTRACE__FK_STR, UTRACE__FK_INSN };

struct utrace__filter_pred {
	uint8_t kind;       /* UTRACE__FK_* */
	uint8_t size;       /* 1, 2, 4, 8; 0: no field, the value is 0 */
	uint8_t sh;         /* signed: 64 - 8 * size, to widen with the sign */
	uint8_t when;       /* the instruction's: branch when the result is this */
	uint32_t jump;      /* the instruction's: where to; nr = TRUE, nr + 1 = FALSE */
	uint32_t off;       /* of the field in the record */
	uint32_t pad;
	uint64_t bias;      /* FK_RANGE of a signed field: the sign bit */
	uint64_t lo, span;  /* FK_RANGE: in [lo, lo + span]; FK_AND: lo is the mask */
};

struct utrace__filter_head {
	uint32_t nr;        /* instructions */
	uint32_t min_size;  /* the record bytes the fixed-field reads need */
	uint32_t nfast;     /* nr when fp[] holds the program, else 0 */
	uint32_t num_only;  /* fp[] is all FK_RANGE and FK_AND */
	uint32_t one_num;   /* and nfast is 1 */
	uint32_t pad;
	struct utrace__filter_pred fp[UTRACE__FILTER_FAST_MAX];
};

/* A number field's predicate (FK_RANGE, FK_AND; a constant one is one
 * of them on no field): 0 or 1. */
static inline __attribute__((always_inline)) int
utrace__filter_pred_num(const struct utrace__filter_pred *p, const unsigned char *rec)
{
	const unsigned char *q = rec + p->off;
	uint64_t u;

	switch (p->size) {
	case 0: u = 0; break;
	case 1: u = q[0]; break;
	case 2: { uint16_t v; memcpy(&v, q, 2); u = v; break; }
	case 4: { uint32_t v; memcpy(&v, q, 4); u = v; break; }
	default: memcpy(&u, q, 8); break;
	}
	u = (uint64_t)((int64_t)(u << p->sh) >> p->sh) ^ p->bias;
	if (p->kind == UTRACE__FK_AND)
		return (u & p->lo) != 0;
	return u - p->lo <= p->span;
}

/* A program of one number predicate: does the record pass? */
static inline __attribute__((always_inline)) bool
utrace__filter_pred_one(const struct utrace__filter_pred *p, const void *rec)
{
	return utrace__filter_pred_num(p, (const unsigned char *)rec) != p->when ||
	       p->jump == 1;
}

/*
 * utrace__filter_match() of a program of one number predicate, inline
 * (the writer's usual filter): 1 or 0, or -1 when it is not such a
 * program (then call utrace__filter_match()).
 */
static inline __attribute__((always_inline)) int
utrace__filter_match_one(const struct utrace__filter *f, const void *rec, unsigned int size)
{
	const struct utrace__filter_head *h = (const struct utrace__filter_head *)(const void *)f;

	if (__builtin_expect(!h->one_num || size < h->min_size, 0))
		return -1;
	return utrace__filter_pred_one(&h->fp[0], rec);
}

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
