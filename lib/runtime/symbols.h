/* SPDX-License-Identifier: MIT */
/* Names of the traced process's addresses (symbols.c).  Internal. */
#ifndef UTRACE_RUNTIME_SYMBOLS_H
#define UTRACE_RUNTIME_SYMBOLS_H

#include <stdint.h>

#include "compiler.h"

/*
 * utrace__sym_lookup - the symbol (function or data object) holding addr
 * @name: set to its name, valid for the life of the process
 * @start, @size: where it starts (in the process) and its size
 *
 * Returns 0, or -ENOENT when no symbol of a loaded object holds addr.
 */
int utrace__sym_lookup(uintptr_t addr, const char **name, uint64_t *start,
		       uint64_t *size) UTRACE_HIDDEN;

/*
 * utrace__sym_by_name - where a function or data object of the process is
 * @name: its name, as its object's symbol table has it (static functions
 *        of the program too, which dlsym() does not find)
 * @start, @size: set to where it starts and its size
 *
 * The program first, then its libraries in load order.  Returns 0, or
 * -ENOENT.
 */
int utrace__sym_by_name(const char *name, uint64_t *start, uint64_t *size) UTRACE_HIDDEN;

/* The loaded extent of the object holding addr (its lowest to its highest
 * PT_LOAD byte); 0 or -ENOENT. */
int utrace__sym_object_extent(uintptr_t addr, uintptr_t *lo, uintptr_t *hi) UTRACE_HIDDEN;

/* The functions of the object holding addr whose names begin with one of
 * prefixes (NULL-terminated): up to max [lo, hi) address ranges; how many. */
unsigned int utrace__sym_ranges(uintptr_t addr, const char *const *prefixes, uintptr_t *lo,
				uintptr_t *hi, unsigned int max) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_SYMBOLS_H */
