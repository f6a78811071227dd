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

#endif /* UTRACE_RUNTIME_SYMBOLS_H */
