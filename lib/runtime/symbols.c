/* SPDX-License-Identifier: MIT */
/*
 * Names of addresses in the traced process, for %ps / %pS / %pB in
 * UTRACE_PRINT's lines (tp-print.c): the kernel's kallsyms lookup.
 *
 * dl_iterate_phdr() finds the object (the program, a library) whose
 * loaded segment holds the address; the object's ELF file gives its
 * symbols, static functions included (.symtab; a stripped file has only
 * .dynsym), read once per object with libelf (common/elfsyms.c) and kept
 * for the life of the process.
 *
 * Printing may run in a signal handler (event.c): the table list takes
 * no lock, it is a list that only grows, published with one
 * compare-and-swap per table (two threads that build the same table at
 * once both publish it; the first is used).  Building a table mallocs
 * (libelf) and dl_iterate_phdr() takes the loader's lock: a %pS printed
 * by a handler that interrupted malloc() or dlopen() in the same thread
 * could deadlock there, once per object at most; a handler that prints
 * an address of an object already seen does neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "internal.h"
#include "symbols.h"

struct obj_syms {
	struct obj_syms *next;
	uintptr_t bias;
	char *path;
	struct utrace__symtab tab;      /* empty: the file had none */
};

static struct obj_syms *objects;

struct where {
	uintptr_t addr;
	uintptr_t bias;
	const char *path;
	bool found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct where *w = data;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || w->addr - start >= ph->p_memsz)
			continue;
		w->bias = info->dlpi_addr;
		/* the program itself has no name here */
		w->path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
								  : "/proc/self/exe";
		w->found = true;
		return 1;
	}
	return 0;
}

static struct obj_syms *lookup_object(uintptr_t bias, const char *path)
{
	struct obj_syms *o;

	for (o = __atomic_load_n(&objects, __ATOMIC_ACQUIRE); o; o = o->next)
		if (o->bias == bias && !strcmp(o->path, path))
			return o;
	return NULL;
}

static struct obj_syms *build_object(uintptr_t bias, const char *path)
{
	struct obj_syms *o = calloc(1, sizeof(*o));
	int fd;

	if (!o || !(o->path = strdup(path))) {
		free(o);
		return NULL;
	}
	o->bias = bias;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (utrace__symtab_load(fd, &o->tab) < 0)
			memset(&o->tab, 0, sizeof(o->tab));
		close(fd);
	}
	o->next = __atomic_load_n(&objects, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&objects, &o->next, o, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	return o;
}

int utrace__sym_lookup(uintptr_t addr, const char **name, uint64_t *start, uint64_t *size)
{
	struct where w = { .addr = addr };
	const struct utrace__sym *s;
	struct obj_syms *o;

	if (!dl_iterate_phdr(find_object, &w) || !w.found)
		return -ENOENT;
	o = lookup_object(w.bias, w.path);
	if (!o)
		o = build_object(w.bias, w.path);
	if (!o)
		return -ENOMEM;
	s = utrace__symtab_find(&o->tab, addr - o->bias);
	if (!s)
		return -ENOENT;
	*name = o->tab.strings + s->name;
	*start = s->addr + o->bias;
	*size = s->size;
	return 0;
}

struct by_name {
	const char *name;
	uint64_t start, size;
	bool found;
};

static int find_name(struct dl_phdr_info *info, size_t size, void *data)
{
	struct by_name *b = data;
	const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
								 : "/proc/self/exe";
	const struct utrace__sym *s;
	struct obj_syms *o;

	(void)size;
	if (!strncmp(path, "linux-vdso", 10))
		return 0;
	o = lookup_object(info->dlpi_addr, path);
	if (!o)
		o = build_object(info->dlpi_addr, path);
	if (!o)
		return 0;
	s = utrace__symtab_by_name(&o->tab, b->name);
	if (!s)
		return 0;
	b->start = s->addr + o->bias;
	b->size = s->size;
	b->found = true;
	return 1;
}

int utrace__sym_by_name(const char *name, uint64_t *start, uint64_t *size)
{
	struct by_name b = { .name = name };

	dl_iterate_phdr(find_name, &b);
	if (!b.found)
		return -ENOENT;
	*start = b.start;
	*size = b.size;
	return 0;
}

/* The object holding addr: its loaded extent, lowest to highest PT_LOAD. */
struct extent {
	uintptr_t addr, lo, hi;
	bool found;
};

static int find_extent(struct dl_phdr_info *info, size_t size, void *data)
{
	struct extent *x = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	bool in = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (x->addr - start < ph->p_memsz)
			in = true;
		if (start < lo)
			lo = start;
		if (start + ph->p_memsz > hi)
			hi = start + ph->p_memsz;
	}
	if (!in)
		return 0;
	x->lo = lo;
	x->hi = hi;
	x->found = true;
	return 1;
}

int utrace__sym_object_extent(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	struct extent x = { .addr = addr };

	if (!dl_iterate_phdr(find_extent, &x) || !x.found)
		return -ENOENT;
	*lo = x.lo;
	*hi = x.hi;
	return 0;
}

unsigned int utrace__sym_ranges(uintptr_t addr, const char *const *prefixes, uintptr_t *lo,
				uintptr_t *hi, unsigned int max)
{
	struct where w = { .addr = addr };
	struct obj_syms *o;
	unsigned int n = 0, p;
	bool run = false;
	size_t i;

	if (!dl_iterate_phdr(find_object, &w) || !w.found)
		return 0;
	o = lookup_object(w.bias, w.path);
	if (!o)
		o = build_object(w.bias, w.path);
	if (!o)
		return 0;
	/* (sorted by address: a run of matching functions with no other
	 * between them is one range, so that an object's generated code,
	 * which is mostly together, takes few) */
	for (i = 0; i < o->tab.nr; i++) {
		const struct utrace__sym *s = &o->tab.syms[i];
		const char *name = o->tab.strings + s->name;
		uintptr_t a = (uintptr_t)(s->addr + o->bias);
		bool match = false;

		for (p = 0; prefixes[p] && !match; p++)
			match = !strncmp(name, prefixes[p], strlen(prefixes[p]));
		if (!match) {
			run = false;
			continue;
		}
		if (run && a >= lo[n - 1]) {
			if (a + s->size > hi[n - 1])
				hi[n - 1] = a + (uintptr_t)s->size;
			continue;
		}
		if (n == max)
			break;
		lo[n] = a;
		hi[n] = a + (uintptr_t)(s->size ? s->size : 1);
		n++;
		run = true;
	}
	return n;
}
