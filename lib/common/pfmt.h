/* SPDX-License-Identifier: MIT */
/*
 * The kernel's %p extensions (lib/vsprintf.c, pointer(); the list is in
 * Documentation/core-api/printk-formats.rst), rendered from bytes already
 * read.  Both printers use it: the traced program's own (UTRACE_PRINT,
 * runtime/tp-print.c), which reads the memory a TP_printk argument points
 * to, and the reader's (reader/formats.c), which takes the bytes from the
 * record; so both print the same text.  Nothing here reads memory it was
 * not given, allocates or takes a lock.
 *
 * The kernel's rule: the letters of an extension follow 'p' directly, and
 * every letter and digit after 'p' belongs to the conversion ("%pfoo" is
 * the pointer, the "foo" is swallowed).  Internal: never installed.
 */
#ifndef UTRACE_COMMON_PFMT_H
#define UTRACE_COMMON_PFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

enum utrace__pext_kind {
	UTRACE__PEXT_POINTER,   /* %p, %pK and unknown letters: the value */
	UTRACE__PEXT_RAW,       /* %px: the value, 16 hex digits */
	UTRACE__PEXT_SYMBOL,    /* %ps %pS %pB %pf %pF: the function */
	UTRACE__PEXT_BITMAP,    /* %*pb, %*pbl: field width = number of bits */
	UTRACE__PEXT_HEX,       /* %*ph[CDN]: field width = number of bytes */
	UTRACE__PEXT_ESCAPE,    /* %*pE[achnops]: field width = number of bytes */
	UTRACE__PEXT_IP4,       /* %pI4 %pi4 [hnbl] */
	UTRACE__PEXT_IP6,       /* %pI6 %pi6 %pI6c */
	UTRACE__PEXT_IPSA,      /* %pIS %piS [pfsc] [hnbl]: a struct sockaddr */
	UTRACE__PEXT_MAC,       /* %pM %pm [RF] */
	UTRACE__PEXT_UUID,      /* %pU [bBlL] */
	UTRACE__PEXT_PHYS,      /* %pa[pd]: a 64-bit value at the pointer */
};

/* Longest text of a kind that a field width pads (a sockaddr_in6 with
 * port, flow and scope); bitmaps, hex and escapes may be longer. */
#define UTRACE__PEXT_TEXT_MAX 96
/* Most bits of a %*pb and bytes of a %*ph / %*pE printed. */
#define UTRACE__PEXT_MAX_BITS 8192
#define UTRACE__PEXT_MAX_HEX 64
#define UTRACE__PEXT_MAX_ESCAPE 1024

struct utrace__pext {
	enum utrace__pext_kind kind;
	char ext[16];           /* the letters after 'p', NUL-terminated */
	unsigned int len;       /* how many the conversion takes (all alnum) */
};

/* Parse the letters after "%...p"; returns x->len. */
unsigned int utrace__pext_parse(const char *after_p, struct utrace__pext *x) UTRACE_HIDDEN;

/* Bytes at the pointer the kind reads, for a field width (-1: none given).
 * 0 for the kinds that read nothing (pointer, raw, symbol). */
size_t utrace__pext_need(const struct utrace__pext *x, int width) UTRACE_HIDDEN;

/* Whether the field width and precision pad and cut the text, as the
 * kernel's string_nocheck() does (not for bitmaps, hex, escapes: there
 * the width is a length). */
bool utrace__pext_padded(const struct utrace__pext *x) UTRACE_HIDDEN;

/*
 * utrace__pext_render - the text of a kind that reads memory
 * @mem, @len: the bytes at the pointer (@len < need: what could be read)
 *
 * Writes at most @cap - 1 characters and a NUL to @out; returns the
 * length written.  A sockaddr of another family prints "(invalid
 * address)", as the kernel.
 */
size_t utrace__pext_render(const struct utrace__pext *x, int width,
			   const unsigned char *mem, size_t len,
			   char *out, size_t cap) UTRACE_HIDDEN;

/* The kernel's check_pointer(): "(null)", "(efault)" for values below a
 * page or error codes, or NULL when the pointer may be read. */
const char *utrace__pext_bad_pointer(uint64_t addr) UTRACE_HIDDEN;

/*
 * utrace__pext_symbol - the kernel's symbol_string()
 * @name: the symbol holding @addr (for %pB: holding @addr - 1), NULL when
 *        none does
 * @start, @size: where it starts and its size
 *
 * "name" (%ps %pf), "name+0xoff/0xsize" (%pS %pF %pB), or "0x<addr>"
 * when @name is NULL.
 */
size_t utrace__pext_symbol(const struct utrace__pext *x, uint64_t addr,
			   const char *name, uint64_t start, uint64_t size,
			   char *out, size_t cap) UTRACE_HIDDEN;

/* The address whose symbol a kind names (%pB: the one before). */
static inline uint64_t utrace__pext_lookup_addr(const struct utrace__pext *x, uint64_t addr)
{
	return x->ext[0] == 'B' && addr ? addr - 1 : addr;
}

/* Whether a print fmt names functions (%ps %pS %pB %pf %pF, with any
 * flags or width): then a reader needs the process's symbols. */
bool utrace__pfmt_uses_symbols(const char *fmt) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_PFMT_H */
