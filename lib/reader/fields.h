/* SPDX-License-Identifier: MIT */
/*
 * The value of an event's field, read from a checked record copy
 * (formats.h: utrace__fmts_check), for everything that shows fields one
 * by one: `utrace script --fields/--json` and the JSON and Perfetto
 * exports.  How a field is read depends on its format alone, so a reader
 * that sees many events of one format describes each field once
 * (utrace__fdesc_init) and reads it per event (utrace__fdesc_read).
 * Internal to the reader library.
 */
#ifndef UTRACE_READER_FIELDS_H
#define UTRACE_READER_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "formats.h"

enum utrace__fval_kind {
	UTRACE__FVAL_NUM,       /* a number of 1, 2, 4 or 8 bytes */
	UTRACE__FVAL_STR,       /* char[] or a __string: bytes up to the NUL */
	UTRACE__FVAL_ARRAY,     /* numbers of elem_size bytes (a struct: its bytes) */
};

/* How to read one field (from its format). */
struct utrace__fdesc {
	const struct tep_format_field *f;
	const char *name;
	enum utrace__fval_kind kind;
	bool dynamic;           /* __data_loc / __rel_loc: the data is elsewhere */
	bool is_signed;         /* NUM, ARRAY: its numbers are */
	unsigned int elem_size; /* NUM: its size; ARRAY: an element's */
};

/* A field of one record. */
struct utrace__fval {
	enum utrace__fval_kind kind;
	bool is_signed;
	uint64_t num;           /* NUM: sign-extended to 64 bits when is_signed */
	const unsigned char *p; /* STR, ARRAY: the bytes (in the record copy) */
	uint32_t len;           /* STR: up to the NUL; ARRAY: whole elements */
	unsigned int elem_size;
};

void utrace__fdesc_init(struct utrace__fdesc *d, const struct tep_format_field *f) UTRACE_HIDDEN;
void utrace__fdesc_read(const struct utrace__fdesc *d, const struct utrace__rec *r,
			struct utrace__fval *v) UTRACE_HIDDEN;
/* Element i of an ARRAY (sign-extended when is_signed). */
uint64_t utrace__fval_elem(const struct utrace__fval *v, uint32_t i) UTRACE_HIDDEN;

#endif /* UTRACE_READER_FIELDS_H */
