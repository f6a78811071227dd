/* SPDX-License-Identifier: MIT */
/*
 * The value of an event's field, read from a checked record copy
 * (formats.h: utrace__fmts_check), for everything that shows fields one
 * by one: `utrace script --fields/--json`, the html page (through the
 * printer) and the json, perfetto, ctf and sqlite exports (export-walk.h).  How a field is read depends on its format alone, so a reader
 * that sees many events of one format describes each field once
 * (utrace__fdesc_init) and reads it per event (utrace__fdesc_read).
 * Internal to the reader library.
 */
#ifndef UTRACE_READER_FIELDS_H
#define UTRACE_READER_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "formats.h"

enum utrace__fval_kind {
	UTRACE__FVAL_NUM,       /* a number of 1, 2, 4 or 8 bytes */
	UTRACE__FVAL_STR,       /* char[] or a __string: bytes up to the NUL */
	UTRACE__FVAL_ARRAY,     /* numbers of elem_size bytes (a struct: its bytes);
				 * fixed (count of them) or, dynamic, a sequence */
};

/* How to read one field (from its format). */
struct utrace__fdesc {
	const struct tep_format_field *f;
	const char *name;
	enum utrace__fval_kind kind;
	bool dynamic;           /* __data_loc / __rel_loc: the data is elsewhere */
	bool is_signed;         /* NUM, ARRAY: its numbers are */
	bool hex;               /* a pointer: shown in hex where the format can */
	unsigned int elem_size; /* NUM: its size; ARRAY: an element's (1, 2, 4, 8) */
	unsigned int count;     /* not dynamic: ARRAY elements, STR bytes */
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
/* The element type of a field, in t: "__data_loc unsigned int[]" ->
 * "unsigned int", "const char x[8]" -> "char". */
void utrace__elem_type(const struct tep_format_field *f, char *t, size_t len) UTRACE_HIDDEN;

/* The size of an element of an array field of element type t (from
 * utrace__elem_type()): the format's, or for a variable array, from the
 * type's name (1 when not known).  One table for everything that reads
 * fields. */
unsigned int utrace__elem_size(const struct tep_format_field *f, const char *t) UTRACE_HIDDEN;

/* Where the data of a __data_loc / __rel_loc field of a checked record
 * is, and its length (*n). */
const unsigned char *utrace__dyn_data(const struct tep_format_field *f,
				      const struct utrace__rec *r, uint32_t *n) UTRACE_HIDDEN;

/* Element i of an ARRAY (sign-extended when is_signed). */
uint64_t utrace__fval_elem(const struct utrace__fval *v, uint32_t i) UTRACE_HIDDEN;

#endif /* UTRACE_READER_FIELDS_H */
