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

const struct utrace__probe_resolver utrace__probe_files = {
	.symbol = file_symbol,
};
