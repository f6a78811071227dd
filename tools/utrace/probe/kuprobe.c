/* SPDX-License-Identifier: MIT */
/* The kernel-uprobe fallback's definitions, and the site check of a
 * definition on its file (kuprobe.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "engine.h"
#include "kuprobe.h"
#include "probe.h"

static int fail(char err[UTRACE_DW_ERR_MAX], int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char err[UTRACE_DW_ERR_MAX], int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, UTRACE_DW_ERR_MAX, fmt, ap);
	va_end(ap);
	return ret;
}

int utrace__kup_is_raw(const char *def)
{
	def += strspn(def, " \t");
	return (def[0] == 'p' || def[0] == 'r') &&
	       (def[1] == ':' || def[1] == ' ' || def[1] == '\t');
}

/* An object mapped in the process whose file name is 'name', or starts
 * with it followed by '.' or '-' ("libc" finds libc.so.6). */
static int find_mapped(pid_t pid, const char *name, char *path, size_t n);

/* The files, and an object named without a path as this process maps it
 * (kuprobe.h). */
static int here_object(void *data, const char *name, char *path, size_t len)
{
	(void)data;
	return find_mapped(getpid(), name, path, len);
}

static int here_symbol(void *data, const char *path, const char *sym, uint64_t *vaddr,
		       uint64_t *off, uint64_t *size)
{
	return utrace__probe_files.symbol(data, path, sym, vaddr, off, size);
}

static int here_functions(void *data, const char *path,
			  int (*fn)(void *arg, const char *name, uint64_t vaddr), void *arg)
{
	return utrace__probe_files.functions(data, path, fn, arg);
}

const struct utrace__probe_resolver utrace__probe_files_here = {
	.object = here_object,
	.symbol = here_symbol,
	.functions = here_functions,
};

static int find_mapped(pid_t pid, const char *name, char *path, size_t n)
{
	char maps[64], *line = NULL;
	size_t cap = 0, len = strlen(name);
	FILE *f;
	int r = -ENOENT;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return -errno;
	while (r && getline(&line, &cap, f) > 0) {
		char *p = strchr(line, '/'), *base;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		base = strrchr(p, '/') + 1;
		if (!strncmp(base, name, len) &&
		    (!base[len] || base[len] == '.' || base[len] == '-')) {
			snprintf(path, n, "%s", p);
			r = 0;
		}
	}
	free(line);
	fclose(f);
	return r;
}

static int resolve_obj(const char *obj, pid_t pid, const char *default_obj, char *path,
		       size_t n, char err[UTRACE_DW_ERR_MAX])
{
	char link[64];
	ssize_t l;

	if (obj && strchr(obj, '/')) {
		snprintf(path, n, "%s", obj);
		return 0;
	}
	if (obj && pid > 0) {
		if (find_mapped(pid, obj, path, n) == 0)
			return 0;
		return fail(err, -ENOENT, "process %d maps no object named '%s'", (int)pid, obj);
	}
	/* no process yet (utrace record --kernel-probe ... -- COMMAND): a
	 * library of the system's, as this process maps it (libc.so.6) */
	if (obj && find_mapped(getpid(), obj, path, n) == 0)
		return 0;
	if (obj)
		return fail(err, -EINVAL, "'%s': name the object by its path (no process to "
			    "look it up in)", obj);
	if (default_obj) {
		snprintf(path, n, "%s", default_obj);
		return 0;
	}
	if (pid > 0) {
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		l = readlink(link, path, n - 1);
		if (l < 0)
			return fail(err, -errno, "cannot read %s: %s", link, strerror(errno));
		path[l] = 0;
		return 0;
	}
	return fail(err, -EINVAL, "no object to probe: give OBJ:SYMBOL");
}

/* The kernel's made-up name: p_<file name up to . - _>_0x<offset>. */
static void kernel_name(char type, const char *path, uint64_t off, char *buf, size_t n)
{
	const char *base = strrchr(path, '/');
	size_t k;

	base = base ? base + 1 : path;
	k = strcspn(base, ".-_");
	snprintf(buf, n, "%c_%.*s_0x%" PRIx64, type, (int)k, base, off);
}

static void clean_name(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			*s = '_';
}

/*
 * The fetch arguments with $argN as the kernel's uprobes take them (they
 * have no $argN: "$arg* can be used only on function entry or exit"): the
 * System V registers, %di %si %dx %cx %r8 %r9, then the stack above the
 * return address, +8(%sp) ...; a bare $argN:string reads the string the
 * argument points to, +0(%di):string, as utrace's own probes take it.
 * Only at a function's entry (entry): elsewhere the registers no longer
 * hold the arguments.  *out malloc()ed; 0, or -errno with err filled.
 */
static int args_to_regs(const char *def, const char *args, bool entry, char **out,
			char err[UTRACE_DW_ERR_MAX])
{
	static const char *const regs[] = { "%di", "%si", "%dx", "%cx", "%r8", "%r9" };
	size_t len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);
	const char *p = args;

	if (!f)
		return fail(err, -ENOMEM, "out of memory");
	while (*p) {
		const char *w = p + strspn(p, " \t"), *end = w + strcspn(w, " \t");
		const char *eq = memchr(w, '=', (size_t)(end - w)), *v = eq ? eq + 1 : w;
		const char *colon = memchr(v, ':', (size_t)(end - v)), *vend = colon ? colon : end;
		bool bare, str;

		if (w == end)
			break;
		fprintf(f, "%s%.*s", ftell(f) ? " " : "", (int)(v - w), w);
		bare = vend - v > 4 && !strncmp(v, "$arg", 4) &&
		       strspn(v + 4, "0123456789") == (size_t)(vend - v - 4);
		str = colon && ((end - colon == 7 && !strncmp(colon, ":string", 7)) ||
				(end - colon == 8 && !strncmp(colon, ":ustring", 8)));
		if (bare && str)
			fputs("+0(", f);
		while (v < end) {
			char *num_end;
			unsigned long a;

			if (strncmp(v, "$arg", 4) || v + 4 >= end || v[4] < '0' || v[4] > '9') {
				fputc(*v++, f);
				continue;
			}
			a = strtoul(v + 4, &num_end, 10);
			if (!entry || !a || a > 64) {
				fclose(f);
				free(buf);
				if (!entry)
					return fail(err, -EINVAL, "'%s': $arg%lu: $arg* can be used "
						    "only on function entry (p FUNC, not an offset "
						    "into it nor a return probe)", def, a);
				return fail(err, -EINVAL, "'%s': $arg%lu: Invalid argument number",
					    def, a);
			}
			if (a <= 6)
				fputs(regs[a - 1], f);
			else
				fprintf(f, "+%lu(%%sp)", 8 * (a - 6));
			v = num_end;
			if (bare && str && v == vend)
				fputc(')', f);
		}
		p = end;
	}
	if (ferror(f) | fclose(f)) {
		free(buf);
		return fail(err, -ENOMEM, "out of memory");
	}
	*out = buf;
	return 0;
}

/* Check that 'site' starts an instruction of the function [func, +size). */
static int check_site(struct utrace__dw *dw, uint64_t func, uint64_t size, uint64_t site,
		      const char *what, char err[UTRACE_DW_ERR_MAX])
{
	char why[UTRACE_PROBE_WHY_MAX];
	uint8_t *code;
	int r;

	if (!size)
		return fail(err, -EINVAL, "'%s': the function's size is unknown: cannot check "
			    "the instruction boundary", what);
	if (size > (64u << 20))
		return fail(err, -EINVAL, "'%s': the function is too large", what);
	code = malloc(size);
	if (!code)
		return fail(err, -ENOMEM, "out of memory");
	r = utrace__dw_read_code(dw, func, code, size);
	if (r) {
		free(code);
		return fail(err, r, "'%s': cannot read the function's code", what);
	}
	r = utrace__probe_decode_check(code, size, func, site, why);
	free(code);
	if (r < 0)
		return fail(err, -EINVAL, "refusing '%s': %s (the kernel would take it and "
			    "the program would crash on the probe)", what, why);
	return 0;
}

int utrace__kup_translate(const char *def, pid_t pid, const char *default_obj,
			  const char *group, struct utrace__kup *k,
			  char err[UTRACE_DW_ERR_MAX])
{
	char *copy = NULL, *p, *site, *args, *colon, *obj = NULL, *sym, *plus, *kargs = NULL;
	char ev[64] = "", grp[64] = "uprobes", type;
	uint64_t func = 0, size = 0, off = 0;
	struct utrace__dw *dw = NULL;
	int r;

	memset(k, 0, sizeof(*k));
	if (!utrace__kup_is_raw(def))
		return fail(err, -EINVAL, "'%s': a definition starts with p or r (p[:[GRP/]EVENT] "
			    "[OBJ:]SYMBOL[+OFFS] [FETCHARGS])", def);
	copy = strdup(def + strspn(def, " \t"));
	if (!copy)
		return fail(err, -ENOMEM, "out of memory");
	type = copy[0];
	p = copy + 1;
	if (*p == ':') {
		char *name = ++p, *slash;
		size_t n = strcspn(p, " \t");
		bool more = p[n] != 0;

		p[n] = 0;
		slash = strchr(name, '/');
		if (slash) {
			*slash = 0;
			snprintf(grp, sizeof(grp), "%s", name);
			name = slash + 1;
		}
		snprintf(ev, sizeof(ev), "%s", name);
		p += more ? n + 1 : n;
		if ((slash && !utrace__dw_good_name(grp)) || (ev[0] && !utrace__dw_good_name(ev))) {
			r = fail(err, -EINVAL, "'%s': group and event names are C identifiers "
				 "([A-Za-z_][A-Za-z0-9_]*)", def);
			goto out;
		}
	}
	p += strspn(p, " \t");
	site = p;
	p += strcspn(p, " \t");
	args = *p ? p + 1 : p;
	*p = 0;
	if (!*site) {
		r = fail(err, -EINVAL, "'%s': no probe point", def);
		goto out;
	}
	colon = strrchr(site, ':');
	if (colon) {
		*colon = 0;
		obj = site;
		sym = colon + 1;
	} else {
		sym = site;
	}
	r = resolve_obj(obj, pid, default_obj, k->path, sizeof(k->path), err);
	if (r)
		goto out;
	r = utrace__dw_open(k->path, &dw, err);
	if (r)
		goto out;
	snprintf(k->path, sizeof(k->path), "%s", utrace__dw_path(dw));
	if (!strncmp(sym, "0x", 2) || !strncmp(sym, "0X", 2)) {
		/* the kernel's PATH:0xFILEOFFSET: the function around it */
		char *end;

		off = strtoull(sym, &end, 16);
		if (*end) {
			r = fail(err, -EINVAL, "bad offset '%s'", sym);
			goto out;
		}
		r = utrace__dw_addr_of_offset(dw, off, &k->addr) ? -ENOENT : 0;
		if (!r)
			r = utrace__dw_func_holding(dw, k->addr, &func, &size) ? -ENOENT : 0;
		if (r) {
			r = fail(err, r, "'%s': file offset 0x%" PRIx64 " is in no function of "
				 "'%s'", def, off, k->path);
			goto out;
		}
		if (!ev[0])
			kernel_name(type, k->path, off, ev, sizeof(ev));
	} else {
		unsigned long long o = 0;

		plus = strchr(sym, '+');
		if (plus) {
			char *end;

			*plus = 0;
			o = strtoull(plus + 1, &end, 0);
			if (end == plus + 1 || *end) {
				r = fail(err, -EINVAL, "bad offset '%s' in '%s'", plus + 1, def);
				goto out;
			}
		}
		if (!*sym || utrace__dw_func_at(dw, sym, &func, &size) < 0) {
			r = fail(err, -ENOENT, "no function '%s' in '%s'", sym, k->path);
			goto out;
		}
		if (type == 'r' && o) {
			r = fail(err, -EINVAL, "'%s': a return probe goes on the function's "
				 "entry (+0)", def);
			goto out;
		}
		if (size && o >= size) {
			r = fail(err, -EINVAL, "'%s': offset %llu is past the end of '%s' (%" PRIu64
				 " bytes)", def, o, sym, size);
			goto out;
		}
		k->addr = func + o;
		if (!ev[0]) {
			if (o)
				snprintf(ev, sizeof(ev), "%s_%llu", sym, o);
			else
				snprintf(ev, sizeof(ev), "%s%s", sym, type == 'r' ? "__return" : "");
		}
	}
	clean_name(ev);
	if (utrace__dw_file_offset(dw, k->addr, &k->file_off) < 0) {
		r = fail(err, -ENOENT, "'%s': 0x%" PRIx64 " is in no loaded segment of the file",
			 def, k->addr);
		goto out;
	}
	r = check_site(dw, func, size, k->addr, def, err);
	if (r)
		goto out;
	snprintf(k->group, sizeof(k->group), "%s", group ? group : grp);
	snprintf(k->event, sizeof(k->event), "%s", ev);
	r = args_to_regs(def, args, type == 'p' && k->addr == func && func, &kargs, err);
	if (r)
		goto out;
	if (asprintf(&k->line, "%c:%s/%s %s:0x%" PRIx64 "%s%s", type, k->group, k->event,
		     k->path, k->file_off, *kargs ? " " : "", kargs) < 0) {
		k->line = NULL;
		r = fail(err, -ENOMEM, "out of memory");
	}
out:
	utrace__dw_close(dw);
	free(copy);
	free(kargs);
	return r;
}

void utrace__kup_free(struct utrace__kup *k)
{
	free(k->line);
	k->line = NULL;
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

/* (kuprobe.h) */
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

void probe_say_error(const char *who, const char *line, int r,
		     const struct utrace__probe_error *err)
{
	char *t = utrace__probe_error_text(who, line, r, err);

	fputs(t ? t : "utrace: out of memory\n", stderr);
	free(t);
}
