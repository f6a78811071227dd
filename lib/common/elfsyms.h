/* SPDX-License-Identifier: MIT */
/*
 * The symbols of one ELF file, for %ps / %pS (pfmt.h): functions and data
 * objects of a size, from .symtab when the file has one (static functions
 * of a program too), else from .dynsym; one per address, sorted, and the
 * other names of an address (aliases) for lookups by name.  The
 * traced program's printer (runtime/symbols.c), the recorder and the live
 * readers (which write them into trace files) use the same table, so both
 * printers name an address alike.  Read with libelf.  Internal.
 */
#ifndef UTRACE_COMMON_ELFSYMS_H
#define UTRACE_COMMON_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct utrace__sym {
	uint64_t addr;          /* st_value: add the load bias */
	uint64_t size;
	uint32_t name;          /* offset in strings */
	bool ifunc;             /* STT_GNU_IFUNC: the address is the resolver's */
	bool func;              /* STT_FUNC or STT_GNU_IFUNC (else a data object) */
};

/* A name of an address that has several (open, open64, __open64): the
 * table keeps one per address, the others for lookups by name. */
struct utrace__sym_alias {
	uint32_t name;          /* offset in strings */
	uint32_t sym;           /* index in syms */
};

struct utrace__symtab {
	struct utrace__sym *syms;
	size_t nr;
	char *strings;
	size_t strings_len;
	struct utrace__sym_alias *aliases;
	size_t nr_aliases;
	/* every name (i < nr: syms[i]'s, else aliases[i - nr]'s) sorted by
	 * name, then i: utrace__symtab_by_name()'s exact match; NULL: none */
	uint32_t *by_name;
};

/* Load the table of the ELF file open on fd; 0 or -errno. */
int utrace__symtab_load(int fd, struct utrace__symtab *t) UTRACE_HIDDEN;
void utrace__symtab_free(struct utrace__symtab *t) UTRACE_HIDDEN;

/* The same, but where the file has only .dynsym and its detached debug
 * symbols are installed (/usr/lib/debug/.build-id/), their .symtab: the
 * local functions too (an IFUNC's implementations: __strlen_avx2). */
int utrace__symtab_load_debug(int fd, struct utrace__symtab *t) UTRACE_HIDDEN;

/* The symbol that holds addr (file addresses), or NULL. */
const struct utrace__sym *utrace__symtab_find(const struct utrace__symtab *t,
					      uint64_t addr) UTRACE_HIDDEN;

/* The load bias of a file mapped at start from file offset off (one
 * line of /proc/<pid>/maps): what to add to its st_values.  -1 when no
 * PT_LOAD segment of the file is at that offset. */
int utrace__elf_bias(int fd, uint64_t start, uint64_t off, uint64_t *bias) UTRACE_HIDDEN;

/* The addresses of the file its PT_LOAD segments span: [lo, hi) (add the
 * load bias); 0 or -1. */
int utrace__elf_extent(int fd, uint64_t *lo, uint64_t *hi) UTRACE_HIDDEN;

/* The symbol named name (its own name or an alias of its address), or
 * NULL. */
const struct utrace__sym *utrace__symtab_by_name(const struct utrace__symtab *t,
						 const char *name) UTRACE_HIDDEN;

/* The file offset of an address of the file (PT_LOAD); 0 or -1. */
int utrace__elf_vaddr_to_off(int fd, uint64_t vaddr, uint64_t *off) UTRACE_HIDDEN;
/* The address of a file offset, as the PT_LOAD holding it maps it (as
 * the kernel maps a uprobe's offset); 0 or -1. */
int utrace__elf_off_to_vaddr(int fd, uint64_t off, uint64_t *vaddr) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_ELFSYMS_H */
