// SPDX-License-Identifier: MIT
/*
 * The one check of a dynamic probe's site (engine.h): the same rules and
 * the same words wherever a definition is taken -- utrace probe without
 * -p (a file), utrace record --probe before the command starts (a file),
 * and the process's uprobe_events (utrace probe -p, the mount, the
 * command's UTRACE_PROBES), which bind it in its own mappings
 * (uprobes.c).  The kernel checks none of it: it takes a site inside an
 * instruction, past its function or a return probe anywhere, and the
 * program crashes or returns to nowhere.
 *
 *   1. the site is inside a function (a symbol with a size);
 *   2. SYMBOL+OFFS stays inside SYMBOL (else the site is in the next
 *      function, or in none);
 *   3. a return probe is at a function's entry;
 *   4. an entry probe is on an instruction the engine can run out of
 *      line (utrace__probe_decode_check()'s rules 1 and 2).
 *
 * Where the probe can go as a jump or only as a breakpoint is the
 * engine's to decide when it places it (attach.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#pragma GCC visibility push(hidden)
#include "engine.h"
#pragma GCC visibility pop
#include "probe.h"

int utrace__probe_site_rules(char kind, const char *symbol, uint64_t symoff, const char *fname,
			     const uint8_t *code, uint64_t func, size_t len, uint64_t site,
			     char *msg, size_t msg_len)
{
	char why[UTRACE_PROBE_WHY_MAX] = "";
	int r;

	if (!code || !len) {
		snprintf(msg, msg_len, "Offset is not inside a function");
		return -EINVAL;
	}
	if (symbol && symoff >= len) {
		snprintf(msg, msg_len, "%s+0x%" PRIx64 " is past the end of %s (%zu bytes)",
			 symbol, symoff, symbol, len);
		return -EINVAL;
	}
	if (kind == 'r') {
		if (site == func)
			return 0;
		snprintf(msg, msg_len, "Return probe must be at a function's entry "
			 "(%s+0x%" PRIx64 " is not)", fname, site - func);
		return -EINVAL;
	}
	r = utrace__probe_decode_check(code, len, func, site, why);
	if (r < 0)
		snprintf(msg, msg_len, "Cannot probe: %s%s", fname, why);
	return r;
}

/* len bytes of the file at off, malloc()ed; NULL on error. */
static uint8_t *read_at(int fd, uint64_t off, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);

	if (b && pread(fd, b, len, (off_t)off) != (ssize_t)len) {
		free(b);
		b = NULL;
	}
	return b;
}

int utrace__probe_site_check_file(const struct utrace__probe_def *d,
				  struct utrace__probe_error *err)
{
	const struct utrace__sym *fs = NULL, *s = NULL;
	struct utrace__symtab t = { 0 };
	const char *sp = strchr(err->command, ' ');
	uint64_t vaddr, foff;
	uint8_t *code = NULL;
	const char *fname = "?";
	int fd, r = 0;

	if (!d->path || !strchr(d->path, '/') || !d->resolved)
		return 0;               /* the process's to find */
	fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;               /* (parse said so already) */
	if (utrace__symtab_load_debug(fd, &t) < 0 ||
	    utrace__elf_off_to_vaddr(fd, d->offset, &vaddr) < 0)
		goto out;               /* no symbols: the process says */
	fs = utrace__symtab_find(&t, vaddr);
	s = d->symbol ? utrace__symtab_by_name(&t, d->symbol) : NULL;
	/* an IFUNC's site is the implementation the process runs, not the
	 * resolver the file has: the process checks it */
	if ((s && s->ifunc) || (fs && fs->ifunc))
		goto out;
	if (s && s->size)
		fs = s;                 /* SYMBOL+OFFS: bounded by SYMBOL */
	if (fs && fs->size) {
		fname = fs->name < t.strings_len ? t.strings + fs->name : "?";
		if (utrace__elf_vaddr_to_off(fd, fs->addr, &foff) == 0)
			code = read_at(fd, foff, fs->size);
	}
	r = utrace__probe_site_rules(d->kind, s ? d->symbol : NULL, (uint64_t)d->symoff, fname,
				     code, fs ? fs->addr : 0, code ? fs->size : 0, vaddr, err->msg,
				     sizeof(err->msg));
	if (r < 0) {
		/* logged as the process logs it: the caret under the place */
		err->err = r;
		err->logged = true;
		err->pos = sp ? (int)(sp - err->command) + 1 : 0;
	}
out:
	free(code);
	utrace__symtab_free(&t);
	close(fd);
	return r < 0 ? r : 0;
}
