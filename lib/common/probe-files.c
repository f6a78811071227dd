// SPDX-License-Identifier: MIT
/*
 * Resolving definitions in files rather than in a process (probe.h):
 * what `utrace probe` without -p uses, and a CLI writing the kernel's
 * uprobe_events (which takes only file offsets).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "elfsyms.h"
#include "probe.h"

static int file_symbol(void *data, const char *path, const char *sym, uint64_t *vaddr,
		       uint64_t *off, uint64_t *size)
{
	const struct utrace__sym *s;
	struct utrace__symtab t;
	int fd, r = -ENOENT;

	(void)data;
	if (!path[0])
		return -ENOENT;   /* "the program": no file here */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (utrace__symtab_load_debug(fd, &t) == 0) {
		s = utrace__symtab_by_name(&t, sym);
		if (s && utrace__elf_vaddr_to_off(fd, s->addr, off) == 0) {
			*vaddr = s->addr;
			*size = s->size;
			r = 0;
		}
		utrace__symtab_free(&t);
	}
	close(fd);
	return r;
}

bool utrace__probe_file_ifunc(const char *path, const char *sym)
{
	const struct utrace__sym *s;
	struct utrace__symtab t;
	bool ifunc = false;
	int fd;

	if (!path[0] || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	if (utrace__symtab_load_debug(fd, &t) == 0) {
		s = utrace__symtab_by_name(&t, sym);
		ifunc = s && s->ifunc;
		utrace__symtab_free(&t);
	}
	close(fd);
	return ifunc;
}

static int file_functions(void *data, const char *path,
			  int (*fn)(void *arg, const char *name, uint64_t vaddr), void *arg);

const struct utrace__probe_resolver utrace__probe_files = {
	.symbol = file_symbol,
	.functions = file_functions,
};

int utrace__probe_symtab_functions(const struct utrace__symtab *t,
				   int (*fn)(void *arg, const char *name, uint64_t vaddr),
				   void *arg)
{
	for (size_t i = 0; i < t->nr; i++) {
		if (!t->syms[i].func || !t->syms[i].size || t->syms[i].name >= t->strings_len)
			continue;
		if (fn(arg, t->strings + t->syms[i].name, t->syms[i].addr))
			return 0;
	}
	for (size_t i = 0; i < t->nr_aliases; i++) {
		const struct utrace__sym *s;

		if (t->aliases[i].sym >= t->nr || t->aliases[i].name >= t->strings_len)
			continue;
		s = &t->syms[t->aliases[i].sym];
		if (s->func && s->size &&
		    fn(arg, t->strings + t->aliases[i].name, s->addr))
			return 0;
	}
	return 0;
}

static int file_functions(void *data, const char *path,
			  int (*fn)(void *arg, const char *name, uint64_t vaddr), void *arg)
{
	struct utrace__symtab t;
	int fd, r;

	(void)data;
	if (!path[0])
		return -ENOENT;   /* "the program": no file here */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = utrace__symtab_load_debug(fd, &t);
	close(fd);
	if (r < 0)
		return r;
	r = utrace__probe_symtab_functions(&t, fn, arg);
	utrace__symtab_free(&t);
	return r;
}
