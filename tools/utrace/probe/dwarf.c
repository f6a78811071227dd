/* SPDX-License-Identifier: MIT */
/*
 * C names for dynamic probes (dwarf-names.h), with elfutils' libdw.
 *
 * How a variable becomes a fetcharg, at the probed address pc:
 *
 *  1. The point: FUNC is a DW_TAG_subprogram with code; FUNC:N is the
 *     lowest is_stmt address of line decl_line + N inside the function;
 *     FUNC+OFF is entry + OFF.  A bare FUNC whose arguments are C
 *     variables of an unoptimized function (no location lists) moves past
 *     the prologue (the next line-table row), as perf does: before it,
 *     -O0 code has not stored the parameters in their stack slots yet.
 *  2. The variable: looked up from the innermost scope at pc out to the
 *     function (dwarf_getscopes + dwarf_getscopevar), then the CU's
 *     globals.
 *  3. Its location at pc (dwarf_getlocation_addr): DW_OP_regN gives a
 *     register (%di), DW_OP_bregN a memory slot (+8(%si)), DW_OP_fbreg a
 *     slot off the frame base, which is a register or, with
 *     DW_OP_call_frame_cfa, the CFA read from the CFI at pc (.eh_frame or
 *     .debug_frame: rsp+8 at entry, rbp+16 after the prologue), and
 *     DW_OP_addr a global (@+OFFSET, the kernel's file-relative address).
 *     Everything else is refused with its reason: no location at pc
 *     (optimized out), pieces, DW_OP_entry_value, computed values
 *     (DW_OP_stack_value), constants.
 *  4. The access path: ".m" adds the member's offset to a memory slot,
 *     "->m" and "[i]" on a pointer dereference it (+OFF(inner)), "[i]" on
 *     an array adds i * element size.
 *  5. The type: signed base types sN, unsigned, bool and enums uN,
 *     pointers x64 (as perf), bit fields b<w>@<o>/<container bits>; :string
 *     on a char pointer adds the dereference (+0(...)), on a char array
 *     takes the slot itself (the kernel reads the string at its address).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf-names.h"

#define MAX_NAMES 256
#define FETCH_MAX 512

struct utrace__dw {
	int fd;
	Elf *elf;
	Dwarf *dw;              /* NULL: no DWARF */
	Dwarf_CFI *cfi_eh, *cfi_dbg;
	char path[PATH_MAX];
	char group[64];
	char *names[MAX_NAMES]; /* event names made so far */
	unsigned nr_names;
};

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

int utrace__dw_open(const char *path, struct utrace__dw **out, char err[UTRACE_DW_ERR_MAX])
{
	struct utrace__dw *d;
	const char *base;
	size_t i;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return fail(err, -ENOMEM, "out of memory");
	if (!realpath(path, d->path)) {
		int e = errno;

		free(d);
		return fail(err, -e, "cannot open '%s': %s", path, strerror(e));
	}
	d->fd = open(d->path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0) {
		int e = errno;

		free(d);
		return fail(err, -e, "cannot open '%s': %s", path, strerror(e));
	}
	elf_version(EV_CURRENT);
	d->elf = elf_begin(d->fd, ELF_C_READ_MMAP, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF) {
		utrace__dw_close(d);
		return fail(err, -ENOEXEC, "'%s' is not an ELF file", path);
	}
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (d->dw) {
		d->cfi_dbg = dwarf_getcfi(d->dw);
	}
	d->cfi_eh = dwarf_getcfi_elf(d->elf);
	/* perf's group: probe_<basename>, other characters as '_' */
	base = strrchr(d->path, '/');
	base = base ? base + 1 : d->path;
	snprintf(d->group, sizeof(d->group), "probe_%.57s", base);
	for (i = 6; d->group[i]; i++)
		if (!(d->group[i] == '_' || (d->group[i] >= 'a' && d->group[i] <= 'z') ||
		      (d->group[i] >= 'A' && d->group[i] <= 'Z') ||
		      (d->group[i] >= '0' && d->group[i] <= '9')))
			d->group[i] = '_';
	*out = d;
	return 0;
}

void utrace__dw_close(struct utrace__dw *d)
{
	unsigned i;

	if (!d)
		return;
	for (i = 0; i < d->nr_names; i++)
		free(d->names[i]);
	if (d->cfi_eh)
		dwarf_cfi_end(d->cfi_eh);
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

const char *utrace__dw_path(const struct utrace__dw *d)
{
	return d->path;
}

const char *utrace__dw_group(const struct utrace__dw *d)
{
	return d->group;
}

static int need_dwarf(struct utrace__dw *d, char err[UTRACE_DW_ERR_MAX])
{
	if (d->dw)
		return 0;
	return fail(err, -ENODATA, "'%s' has no DWARF debug information (build it with -g)",
		    d->path);
}

/* ---- ELF: symbols, segments, bytes ---- */

typedef int (*sym_fn)(void *arg, const char *name, const GElf_Sym *s);

/* Each defined function symbol of .symtab (else .dynsym); stops at a
 * non-zero return of fn. */
static int each_func_sym(struct utrace__dw *d, sym_fn fn, void *arg)
{
	Elf_Scn *scn = NULL, *use = NULL;
	GElf_Shdr sh, ush = { 0 };
	Elf_Data *data;
	size_t i, n;

	while ((scn = elf_nextscn(d->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !use)) {
			use = scn;
			ush = sh;
			if (sh.sh_type == SHT_SYMTAB)
				break;
		}
	}
	if (!use || !ush.sh_entsize || !(data = elf_getdata(use, NULL)))
		return 0;
	n = ush.sh_size / ush.sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int r;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if ((GELF_ST_TYPE(s.st_info) != STT_FUNC &&
		     GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC) ||
		    s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(d->elf, ush.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		r = fn(arg, name, &s);
		if (r)
			return r;
	}
	return 0;
}

struct sym_find {
	const char *name;
	uint64_t addr, size;
	bool found;
};

static int sym_find_cb(void *arg, const char *name, const GElf_Sym *s)
{
	struct sym_find *f = arg;

	if (strcmp(name, f->name))
		return 0;
	f->addr = s->st_value;
	f->size = s->st_size;
	f->found = true;
	return 1;
}

int utrace__dw_func_at(struct utrace__dw *d, const char *name, uint64_t *addr,
		       uint64_t *size)
{
	struct sym_find f = { .name = name };

	each_func_sym(d, sym_find_cb, &f);
	if (!f.found)
		return -ENOENT;
	*addr = f.addr;
	*size = f.size;
	return 0;
}

struct sym_hold {
	uint64_t addr, func, size;
	bool found;
};

static int sym_hold_cb(void *arg, const char *name, const GElf_Sym *s)
{
	struct sym_hold *h = arg;

	(void)name;
	if (h->addr < s->st_value || h->addr >= s->st_value + s->st_size)
		return 0;
	h->func = s->st_value;
	h->size = s->st_size;
	h->found = true;
	return 1;
}

int utrace__dw_func_holding(struct utrace__dw *d, uint64_t addr, uint64_t *func,
			    uint64_t *size)
{
	struct sym_hold h = { .addr = addr };

	each_func_sym(d, sym_hold_cb, &h);
	if (!h.found)
		return -ENOENT;
	*func = h.func;
	*size = h.size;
	return 0;
}

int utrace__dw_addr_of_offset(struct utrace__dw *d, uint64_t off, uint64_t *addr)
{
	size_t i, n;

	if (elf_getphdrnum(d->elf, &n) < 0)
		return -ENOENT;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(d->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_filesz) {
			*addr = off - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

static int load_of(struct utrace__dw *d, uint64_t addr, GElf_Phdr *out)
{
	size_t i, n;

	if (elf_getphdrnum(d->elf, &n) < 0)
		return -ENOENT;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(d->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz) {
			*out = ph;
			return 0;
		}
	}
	return -ENOENT;
}

int utrace__dw_file_offset(struct utrace__dw *d, uint64_t addr, uint64_t *off)
{
	GElf_Phdr ph;

	if (load_of(d, addr, &ph) < 0 || addr >= ph.p_vaddr + ph.p_filesz)
		return -ENOENT;
	*off = addr - ph.p_vaddr + ph.p_offset;
	return 0;
}

int utrace__dw_read_code(struct utrace__dw *d, uint64_t addr, void *buf, size_t len)
{
	uint64_t off;
	ssize_t r;

	if (utrace__dw_file_offset(d, addr, &off) < 0 ||
	    utrace__dw_file_offset(d, addr + len - 1, &off) < 0)
		return -ENOENT;
	utrace__dw_file_offset(d, addr, &off);
	r = pread(d->fd, buf, len, (off_t)off);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EIO;
}

/* ---- --funcs ---- */

struct names {
	char **v;
	size_t n, cap;
	const char *filter;
	bool neg;
};

static int names_cb(void *arg, const char *name, const GElf_Sym *s)
{
	struct names *l = arg;
	bool m = fnmatch(l->filter, name, 0) == 0;

	(void)s;
	if (m == l->neg)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = strdup(name);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int utrace__dw_list_funcs(struct utrace__dw *d, const char *filter, FILE *out,
			  char err[UTRACE_DW_ERR_MAX])
{
	struct names l = { .filter = filter ? filter : "!_*" };
	size_t i;
	int r;

	if (*l.filter == '!') {
		l.neg = true;
		l.filter++;
	}
	r = each_func_sym(d, names_cb, &l);
	if (r == 0) {
		qsort(l.v, l.n, sizeof(*l.v), strp_cmp);
		for (i = 0; i < l.n; i++)
			if (!i || strcmp(l.v[i], l.v[i - 1]))
				fprintf(out, "%s\n", l.v[i]);
	}
	for (i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	if (r < 0)
		return fail(err, r, "out of memory");
	if (!l.n)
		return fail(err, -ENOENT, "no function of '%s' matches '%s'", d->path,
			    filter ? filter : "!_*");
	return 0;
}

/* ---- functions in DWARF ---- */

struct func_find {
	const char *name;
	Dwarf_Die die;
	bool found;
};

static int func_find_cb(Dwarf_Die *fn, void *arg)
{
	struct func_find *f = arg;
	const char *name = dwarf_diename(fn);
	Dwarf_Addr lo;

	if (!name || strcmp(name, f->name) || dwarf_lowpc(fn, &lo) != 0)
		return DWARF_CB_OK;
	f->die = *fn;
	f->found = true;
	return DWARF_CB_ABORT;
}

static int find_func(struct utrace__dw *d, const char *name, Dwarf_Die *fn,
		     char err[UTRACE_DW_ERR_MAX])
{
	struct func_find f = { .name = name };
	Dwarf_Off off = 0, next;
	size_t hsize;
	int r = need_dwarf(d, err);

	if (r)
		return r;
	while (!f.found && dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(d->dw, off + hsize, &cu))
			dwarf_getfuncs(&cu, func_find_cb, &f, 0);
		off = next;
	}
	if (!f.found)
		return fail(err, -ENOENT, "no function '%s' with code in the DWARF of '%s'",
			    name, d->path);
	*fn = f.die;
	return 0;
}

static uint64_t func_entry(Dwarf_Die *fn)
{
	Dwarf_Addr a = 0;

	if (dwarf_entrypc(fn, &a) != 0)
		dwarf_lowpc(fn, &a);
	return a;
}

/*
 * The lines of a function where a probe can go, as perf finds them: each
 * is_stmt row of the function's own file inside its ranges that is the
 * first is_stmt row at its address (the line an address maps back to),
 * and the function's entry, which is its declaration's line (the row
 * there, the opening brace's, is not).  fn is called for each.
 */
typedef void (*row_fn)(void *arg, int line, uint64_t addr);

static int each_row(Dwarf_Die *func, row_fn fn, void *arg)
{
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	const char *file = dwarf_decl_file(func);
	uint64_t entry = func_entry(func);
	Dwarf_Addr prev = 0;
	bool have_prev = false;
	size_t n, i;
	int decl = 0;

	if (!dwarf_diecu(func, &cu, NULL, NULL) || dwarf_getsrclines(&cu, &lines, &n) != 0)
		return -ENOENT;
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		const char *src;
		bool stmt = false, first;
		int no;

		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineno(l, &no) ||
		    dwarf_linebeginstatement(l, &stmt) || !stmt)
			continue;
		/* rows are sorted by address within a sequence */
		first = !have_prev || a != prev;
		have_prev = true;
		prev = a;
		src = dwarf_linesrc(l, NULL, NULL);
		if (!first || a == entry || dwarf_haspc(func, a) != 1 ||
		    (file && src && strcmp(src, file)))
			continue;
		fn(arg, no, a);
	}
	if (dwarf_decl_line(func, &decl) == 0)
		fn(arg, decl, entry);
	return 0;
}

struct line_find {
	int line;
	uint64_t addr, after;   /* after: the lowest row address > 'after' */
	bool found;
};

static void line_find_cb(void *arg, int line, uint64_t addr)
{
	struct line_find *f = arg;

	if (f->line >= 0 && line != f->line)
		return;
	if (f->line < 0 && addr <= f->after)
		return;
	if (!f->found || addr < f->addr)
		f->addr = addr;
	f->found = true;
}

/* Whether a variable's location is a location list (optimized code). */
static bool has_loclist(Dwarf_Die *var)
{
	Dwarf_Attribute a;
	unsigned int form;

	if (!dwarf_attr(var, DW_AT_location, &a))
		return false;
	form = dwarf_whatform(&a);
	return form == DW_FORM_sec_offset || form == DW_FORM_data4 ||
	       form == DW_FORM_data8 || form == DW_FORM_loclistx;
}

/* An unoptimized function: none of its parameters and locals has a
 * location list. */
static bool unoptimized(Dwarf_Die *func)
{
	Dwarf_Die c;

	if (dwarf_child(func, &c) != 0)
		return true;
	do {
		int tag = dwarf_tag(&c);

		if ((tag == DW_TAG_formal_parameter || tag == DW_TAG_variable) &&
		    has_loclist(&c))
			return false;
	} while (dwarf_siblingof(&c, &c) == 0);
	return true;
}

/* The address after the prologue: the next line-table row. */
static uint64_t after_prologue(Dwarf_Die *func)
{
	struct line_find f = { .line = -1, .after = func_entry(func) };

	each_row(func, line_find_cb, &f);
	return f.found ? f.addr : func_entry(func);
}

struct point {
	char func[256];
	Dwarf_Die die;
	uint64_t entry, addr;
	int rline;              /* -1: none */
	bool has_off, ret;
};

/* FUNC[:RLINE|+OFFS|%return] */
static int parse_point(struct utrace__dw *d, const char *spec, struct point *p,
		       char err[UTRACE_DW_ERR_MAX])
{
	size_t n = strcspn(spec, ":+%@");
	const char *rest = spec + n;
	char *end;
	int r;

	memset(p, 0, sizeof(*p));
	p->rline = -1;
	if (!n || n >= sizeof(p->func))
		return fail(err, -EINVAL, "bad probe point '%s': no function name", spec);
	memcpy(p->func, spec, n);
	if (*rest == '@')
		return fail(err, -EINVAL, "'%s': FUNC@SRC is not supported; name the function "
			    "alone", spec);
	r = find_func(d, p->func, &p->die, err);
	if (r)
		return r;
	p->entry = p->addr = func_entry(&p->die);
	if (*rest == ':') {
		long v = strtol(rest + 1, &end, 10);
		Dwarf_Word decl = 0;
		int dl = 0;
		struct line_find f;

		if (end == rest + 1 || *end || v < 0 || v > 1000000)
			return fail(err, -EINVAL, "bad line '%s' in '%s': a line number relative "
				    "to the function's first line", rest + 1, spec);
		dwarf_decl_line(&p->die, &dl);
		decl = (Dwarf_Word)dl;
		f = (struct line_find){ .line = (int)(decl + (Dwarf_Word)v) };
		each_row(&p->die, line_find_cb, &f);
		if (!f.found)
			return fail(err, -ENOENT, "line %ld of '%s' (source line %d) has no code "
				    "to probe; see --line %s", v, p->func, f.line, p->func);
		p->rline = (int)v;
		p->addr = f.addr;
	} else if (*rest == '+') {
		unsigned long long v = strtoull(rest + 1, &end, 0);

		if (end == rest + 1 || *end)
			return fail(err, -EINVAL, "bad offset '%s' in '%s'", rest + 1, spec);
		if (dwarf_haspc(&p->die, p->entry + v) != 1)
			return fail(err, -EINVAL, "offset %s is outside '%s'", rest + 1, p->func);
		p->addr = p->entry + v;
		p->has_off = true;
	} else if (*rest == '%') {
		if (strcmp(rest, "%return"))
			return fail(err, -EINVAL, "bad probe point '%s': only %%return may follow "
				    "the function", spec);
		p->ret = true;
	} else if (*rest) {
		return fail(err, -EINVAL, "bad probe point '%s'", spec);
	}
	return 0;
}

/* ---- types ---- */

/* Follow typedefs and cv-qualifiers; false for void. */
static bool strip_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return false;
	while (dwarf_tag(&t) == DW_TAG_typedef || dwarf_tag(&t) == DW_TAG_const_type ||
	       dwarf_tag(&t) == DW_TAG_volatile_type || dwarf_tag(&t) == DW_TAG_restrict_type ||
	       dwarf_tag(&t) == DW_TAG_atomic_type) {
		Dwarf_Die n;

		if (!dwarf_attr_integrate(&t, DW_AT_type, &a) || !dwarf_formref_die(&a, &n))
			return false;
		t = n;
	}
	*type = t;
	return true;
}

/*
 * A type's name as perf's --vars writes it: qualifiers dropped, typedef
 * names kept, "struct x", pointers and arrays as "elem*",
 * "(function_type)".  -1 when the type is unknown (void*, as perf).
 */
static int type_name_of(Dwarf_Die *die, char *buf, size_t n)
{
	Dwarf_Attribute a;
	Dwarf_Die t;
	const char *name;
	size_t len;
	int tag;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return -1;
	while ((tag = dwarf_tag(&t)) == DW_TAG_const_type || tag == DW_TAG_volatile_type ||
	       tag == DW_TAG_restrict_type || tag == DW_TAG_atomic_type) {
		Dwarf_Die u;

		if (!dwarf_attr_integrate(&t, DW_AT_type, &a) || !dwarf_formref_die(&a, &u))
			return -1;
		t = u;
	}
	name = dwarf_diename(&t);
	switch (tag) {
	case DW_TAG_pointer_type:
	case DW_TAG_array_type:
		/* void*: no name, as perf 6.1 ("(unknown_type)") */
		if (type_name_of(&t, buf, n) < 0)
			return -1;
		len = strlen(buf);
		snprintf(buf + len, n - len, "*");
		return 0;
	case DW_TAG_subroutine_type:
		snprintf(buf, n, "(function_type)");
		return 0;
	case DW_TAG_structure_type:
		snprintf(buf, n, "struct %s", name ? name : "");
		return 0;
	case DW_TAG_union_type:
		snprintf(buf, n, "union %s", name ? name : "");
		return 0;
	case DW_TAG_enumeration_type:
		snprintf(buf, n, "enum %s", name ? name : "");
		return 0;
	default:
		snprintf(buf, n, "%s", name ? name : "");
		return 0;
	}
}

static void type_name(Dwarf_Die *die, char *buf, size_t n)
{
	if (type_name_of(die, buf, n) < 0)
		snprintf(buf, n, "(unknown_type)");
}

/* ---- locations ---- */

static const char *const regs64[] = {
	"ax", "dx", "cx", "bx", "si", "di", "bp", "sp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

static const char *reg_name(unsigned int dwreg)
{
	return dwreg < 16 ? regs64[dwreg] : NULL;
}

/*
 * Where a value is: in a register ("%di"), in memory at a fetcharg's
 * value + off (base "%bp", off -20: "-20(%bp)"), or at a file-relative
 * address (@+0x4028).
 */
enum loc_kind { LOC_REG, LOC_MEM, LOC_ABS };

struct loc {
	enum loc_kind kind;
	char base[FETCH_MAX];   /* REG: "%di"; MEM: the address's fetcharg */
	int64_t off;            /* MEM: added; ABS: the file-relative address */
};

/* The fetcharg that reads the value of a location. */
static void loc_fetch(const struct loc *l, char *buf, size_t n)
{
	switch (l->kind) {
	case LOC_REG:
		snprintf(buf, n, "%s", l->base);
		break;
	case LOC_MEM:
		if (snprintf(buf, n, "%s%" PRId64 "(%s)", l->off >= 0 ? "+" : "", l->off,
			     l->base) >= (int)n)
			buf[n - 1] = 0;    /* (the callers check the depth) */
		break;
	case LOC_ABS:
		snprintf(buf, n, "@+0x%" PRIx64, (uint64_t)l->off);
		break;
	}
}

/* The location of what the pointer held at l points to, + off. */
static int loc_deref(struct loc *l, int64_t off, char err[UTRACE_DW_ERR_MAX])
{
	char buf[FETCH_MAX];

	loc_fetch(l, buf, sizeof(buf));
	if (strlen(buf) + 24 >= FETCH_MAX)
		return fail(err, -E2BIG, "the access path is too deep");
	memcpy(l->base, buf, strlen(buf) + 1);
	l->kind = LOC_MEM;
	l->off = off;
	return 0;
}

static int loc_reg(struct loc *l, unsigned int dwreg, bool mem, int64_t off,
		   char err[UTRACE_DW_ERR_MAX])
{
	const char *r = reg_name(dwreg);

	if (!r)
		return fail(err, -EOPNOTSUPP, "DWARF register %u is not a general register "
			    "(a vector or x87 register cannot be fetched)", dwreg);
	l->kind = mem ? LOC_MEM : LOC_REG;
	snprintf(l->base, sizeof(l->base), "%%%s", r);
	l->off = off;
	return 0;
}

struct var_ctx {
	struct utrace__dw *d;
	Dwarf_Die *func;
	uint64_t pc;
	const char *name;       /* for messages */
};

/* The CFA at pc as register + offset, from .eh_frame or .debug_frame. */
static int cfa_at(struct var_ctx *c, unsigned int *reg, int64_t *off,
		  char err[UTRACE_DW_ERR_MAX])
{
	Dwarf_CFI *cfis[2] = { c->d->cfi_eh, c->d->cfi_dbg };
	int i;

	for (i = 0; i < 2; i++) {
		Dwarf_Frame *fr = NULL;
		Dwarf_Op *ops;
		size_t nops;
		int ok = 0;

		if (!cfis[i] || dwarf_cfi_addrframe(cfis[i], c->pc, &fr) != 0)
			continue;
		if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1) {
			if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
				*reg = ops[0].atom - DW_OP_breg0;
				*off = (int64_t)ops[0].number;
				ok = 1;
			} else if (ops[0].atom == DW_OP_bregx) {
				*reg = (unsigned int)ops[0].number;
				*off = (int64_t)ops[0].number2;
				ok = 1;
			}
		}
		free(fr);
		if (ok)
			return 0;
	}
	return fail(err, -EOPNOTSUPP, "'%s': the frame address (CFA) at 0x%" PRIx64 " is not "
		    "a register + offset in the call frame information", c->name, c->pc);
}

static int frame_base(struct var_ctx *c, unsigned int *reg, int64_t *off,
		      char err[UTRACE_DW_ERR_MAX])
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;

	if (!dwarf_attr(c->func, DW_AT_frame_base, &a) ||
	    dwarf_getlocation_addr(&a, c->pc, &ops, &n, 1) != 1 || n != 1)
		return fail(err, -EOPNOTSUPP, "'%s': the function's frame base is unknown at "
			    "0x%" PRIx64, c->name, c->pc);
	if (ops[0].atom == DW_OP_call_frame_cfa)
		return cfa_at(c, reg, off, err);
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		*reg = ops[0].atom - DW_OP_breg0;
		*off = (int64_t)ops[0].number;
		return 0;
	}
	if (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31) {
		*reg = ops[0].atom - DW_OP_reg0;
		*off = 0;
		return 0;
	}
	return fail(err, -EOPNOTSUPP, "'%s': frame base DWARF operation 0x%x is not "
		    "supported", c->name, ops[0].atom);
}

/* A location expression at pc as a location; the refusals say why. */
static int expr_loc(struct var_ctx *c, Dwarf_Attribute *attr, Dwarf_Op *ops, size_t n,
		    struct loc *l, char err[UTRACE_DW_ERR_MAX])
{
	Dwarf_Addr addr;
	unsigned int atom;
	size_t i;

	if (!n)
		return fail(err, -ENOENT, "'%s' is optimized out at 0x%" PRIx64, c->name, c->pc);
	for (i = 0; i < n; i++) {
		if (ops[i].atom == DW_OP_piece || ops[i].atom == DW_OP_bit_piece)
			return fail(err, -EOPNOTSUPP, "'%s' is split in several pieces at "
				    "0x%" PRIx64 " (DW_OP_piece): cannot fetch it", c->name, c->pc);
		if (ops[i].atom == DW_OP_entry_value || ops[i].atom == DW_OP_GNU_entry_value)
			return fail(err, -EOPNOTSUPP, "'%s' at 0x%" PRIx64 " is only known as its "
				    "value at the function's entry (DW_OP_entry_value): probe "
				    "the entry instead", c->name, c->pc);
		if (ops[i].atom == DW_OP_stack_value || ops[i].atom == DW_OP_implicit_value)
			return fail(err, -EOPNOTSUPP, "'%s' at 0x%" PRIx64 " is a computed value "
				    "(DW_OP_stack_value), not in a register or memory: cannot "
				    "fetch it", c->name, c->pc);
	}
	if (n != 1)
		return fail(err, -EOPNOTSUPP, "'%s' at 0x%" PRIx64 " has a location expression "
			    "of %zu operations (0x%x first): not supported", c->name, c->pc, n,
			    ops[0].atom);
	atom = ops[0].atom;
	if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)
		return loc_reg(l, atom - DW_OP_reg0, false, 0, err);
	if (atom == DW_OP_regx)
		return loc_reg(l, (unsigned int)ops[0].number, false, 0, err);
	if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31)
		return loc_reg(l, atom - DW_OP_breg0, true, (int64_t)ops[0].number, err);
	if (atom == DW_OP_bregx)
		return loc_reg(l, (unsigned int)ops[0].number, true, (int64_t)ops[0].number2, err);
	if (atom == DW_OP_fbreg) {
		unsigned int reg = 0;
		int64_t off = 0;
		int r = frame_base(c, &reg, &off, err);

		if (r)
			return r;
		return loc_reg(l, reg, true, off + (int64_t)ops[0].number, err);
	}
	if (atom == DW_OP_addrx || atom == DW_OP_GNU_addr_index) {
		/* DWARF 5 (clang): an index into .debug_addr, which libdw
		 * reads for us */
		Dwarf_Attribute res;

		if (!attr || dwarf_getlocation_attr(attr, &ops[0], &res) != 0 ||
		    dwarf_formaddr(&res, &addr) != 0)
			return fail(err, -EINVAL, "'%s': DW_OP_addrx: %s", c->name,
				    dwarf_errmsg(-1));
		atom = DW_OP_addr;
	} else {
		addr = ops[0].number;
	}
	if (atom == DW_OP_addr) {
		GElf_Phdr ph;

		/* @+OFFSET: the kernel adds the probed file's load base,
		 * the executable segment's p_vaddr - p_offset */
		if (load_of(c->d, c->func ? func_entry(c->func) : c->pc, &ph) < 0)
			return fail(err, -ENOENT, "'%s': no segment holds the function", c->name);
		l->kind = LOC_ABS;
		l->off = (int64_t)(addr - (ph.p_vaddr - ph.p_offset));
		return 0;
	}
	if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31)
		return fail(err, -EOPNOTSUPP, "'%s' is the constant %u at 0x%" PRIx64
			    " (optimized)", c->name, atom - DW_OP_lit0, c->pc);
	return fail(err, -EOPNOTSUPP, "'%s': DWARF location operation 0x%x is not supported",
		    c->name, atom);
}

static int var_loc(struct var_ctx *c, Dwarf_Die *var, struct loc *l,
		   char err[UTRACE_DW_ERR_MAX])
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	int r;

	if (!dwarf_attr_integrate(var, DW_AT_location, &a)) {
		if (dwarf_attr_integrate(var, DW_AT_const_value, &a))
			return fail(err, -EOPNOTSUPP, "'%s' is a constant (DW_AT_const_value), "
				    "not stored anywhere", c->name);
		return fail(err, -ENOENT, "'%s' is optimized out (no location)", c->name);
	}
	r = dwarf_getlocation_addr(&a, c->pc, &ops, &n, 1);
	if (r < 0)
		return fail(err, -EINVAL, "'%s': bad location: %s", c->name, dwarf_errmsg(-1));
	if (r == 0)
		return fail(err, -ENOENT, "'%s' is optimized out at 0x%" PRIx64 " (no location "
			    "there)", c->name, c->pc);
	return expr_loc(c, &a, ops, n, l, err);
}

/* ---- scopes and variables ---- */

struct scope {
	Dwarf_Die *scopes;      /* innermost first, from dwarf_getscopes */
	int n, nfunc;           /* nfunc: scopes up to the function */
	Dwarf_Die cu;
};

static int scope_at(Dwarf_Die *func, uint64_t pc, struct scope *s,
		    char err[UTRACE_DW_ERR_MAX])
{
	int i;

	memset(s, 0, sizeof(*s));
	if (!dwarf_diecu(func, &s->cu, NULL, NULL))
		return fail(err, -EINVAL, "no compilation unit");
	s->n = dwarf_getscopes(&s->cu, pc, &s->scopes);
	if (s->n <= 0)
		return fail(err, -ENOENT, "no scope at 0x%" PRIx64, pc);
	s->nfunc = s->n;
	for (i = 0; i < s->n; i++)
		if (dwarf_tag(&s->scopes[i]) == DW_TAG_subprogram) {
			s->nfunc = i + 1;
			break;
		}
	return 0;
}

static int find_var(struct scope *s, const char *name, bool globals, Dwarf_Die *var)
{
	int r = dwarf_getscopevar(s->scopes, globals ? s->n : s->nfunc, name, 0, NULL, 0, 0,
				  var);

	return r >= 0 ? 0 : -ENOENT;
}

/* ---- --vars ---- */

static const char *point_name(const struct point *p, char *buf, size_t n)
{
	snprintf(buf, n, "%s+%" PRIu64, p->func, p->addr - p->entry);
	return buf;
}

static void list_scope_vars(struct utrace__dw *d, Dwarf_Die *func, Dwarf_Die *scope,
			    uint64_t pc, bool params_only, FILE *out, unsigned *nr)
{
	Dwarf_Die c;

	if (dwarf_child(scope, &c) != 0)
		return;
	do {
		int tag = dwarf_tag(&c);
		struct var_ctx ctx = { d, func, pc, dwarf_diename(&c) };
		char e[UTRACE_DW_ERR_MAX], type[256];
		struct loc l;

		if (tag != DW_TAG_formal_parameter && (params_only || tag != DW_TAG_variable))
			continue;
		if (!ctx.name || var_loc(&ctx, &c, &l, e))
			continue;
		type_name(&c, type, sizeof(type));
		fprintf(out, "\t\t%s\t%s\n", type, ctx.name);
		(*nr)++;
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* The lines of text, sorted and without repeats; 0 or -ENOMEM. */
static int print_sorted(char *text, size_t len, FILE *out)
{
	char **v = NULL, *save = NULL, *l;
	size_t n = 0, cap = 0, i;

	(void)len;
	for (l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 32) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = l;
	}
	if (n)
		qsort(v, n, sizeof(*v), strp_cmp);
	for (i = 0; i < n; i++)
		if (!i || strcmp(v[i], v[i - 1]))
			fprintf(out, "%s\n", v[i]);
	free(v);
	return 0;
}

int utrace__dw_list_vars(struct utrace__dw *d, const char *spec, bool externs, FILE *out,
			 char err[UTRACE_DW_ERR_MAX])
{
	struct point p;
	struct scope s;
	char pn[300], *text = NULL;
	unsigned nr = 0;
	size_t len = 0;
	FILE *mem;
	int r, i;

	r = parse_point(d, spec, &p, err);
	if (r)
		return r;
	if (p.ret)
		return fail(err, -EINVAL, "'%s': a return probe sees $retval only", spec);
	r = scope_at(&p.die, p.addr, &s, err);
	if (r)
		return r;
	/* perf's order: the lines sorted */
	mem = open_memstream(&text, &len);
	if (!mem) {
		free(s.scopes);
		return fail(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < s.nfunc; i++)
		list_scope_vars(d, &p.die, &s.scopes[i], p.addr, false, mem, &nr);
	if (externs)
		list_scope_vars(d, &p.die, &s.cu, p.addr, false, mem, &nr);
	fclose(mem);
	free(s.scopes);
	fprintf(out, "Available variables at %s\n", spec);
	fprintf(out, "\t@<%s>\n", point_name(&p, pn, sizeof(pn)));
	r = print_sorted(text, len, out);
	free(text);
	if (r)
		return fail(err, r, "out of memory");
	if (!nr)
		fprintf(out, "\t\t(No matched variables)\n");
	return 0;
}

/* ---- --line ---- */

/* The function's source file, under its CU's DW_AT_comp_dir when the
 * name is relative (as perf shows it). */
static const char *source_path(Dwarf_Die *fn, char *buf, size_t n)
{
	const char *file = dwarf_decl_file(fn), *dir;
	Dwarf_Attribute a;
	Dwarf_Die cu;

	if (!file || file[0] == '/' || !dwarf_diecu(fn, &cu, NULL, NULL) ||
	    !dwarf_attr(&cu, DW_AT_comp_dir, &a) || !(dir = dwarf_formstring(&a)))
		return file;
	snprintf(buf, n, "%s/%s", dir, file);
	return buf;
}

struct line_set {
	int first, last;
	unsigned char *has;     /* per line from first */
	size_t n;
};

static void line_set_cb(void *arg, int line, uint64_t addr)
{
	struct line_set *ls = arg;

	(void)addr;
	if (line < ls->first || (size_t)(line - ls->first) >= ls->n)
		return;
	ls->has[line - ls->first] = 1;
	if (line > ls->last)
		ls->last = line;
}

int utrace__dw_list_lines(struct utrace__dw *d, const char *func, FILE *out,
			  char err[UTRACE_DW_ERR_MAX])
{
	struct line_set ls = { 0 };
	Dwarf_Die fn;
	const char *file;
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;
	FILE *src;
	int r, no = 0;

	r = find_func(d, func, &fn, err);
	if (r)
		return r;
	file = source_path(&fn, path, sizeof(path));
	if (!file || dwarf_decl_line(&fn, &ls.first) != 0)
		return fail(err, -ENOENT, "'%s' has no source file and line in DWARF", func);
	ls.n = 100000;
	ls.last = ls.first;
	ls.has = calloc(ls.n, 1);
	if (!ls.has)
		return fail(err, -ENOMEM, "out of memory");
	each_row(&fn, line_set_cb, &ls);
	/* and, as perf, three lines after the last with code */
	ls.last += 3;
	src = fopen(file, "r");
	if (!src) {
		r = -errno;
		free(ls.has);
		return fail(err, r, "cannot open the source of '%s', '%s': %s", func, file,
			    strerror(-r));
	}
	fprintf(out, "<%s@%s:0>\n", func, file);
	while (getline(&line, &cap, src) >= 0) {
		no++;
		if (no < ls.first)
			continue;
		if (no > ls.last)
			break;
		if (ls.has[no - ls.first])
			fprintf(out, "%7d  %s", no - ls.first, line);
		else
			fprintf(out, "         %s", line);
		if (!strchr(line, '\n'))
			fputc('\n', out);
	}
	free(line);
	fclose(src);
	free(ls.has);
	return 0;
}

/* ---- translation ---- */

struct out {
	char *buf;
	size_t len, cap;
	bool nomem;
};

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0,
			      fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->nomem = true;
			return;
		}
		if (o->buf && o->len + (size_t)n < o->cap) {
			o->len += (size_t)n;
			return;
		}
		{
			size_t cap = (o->cap + (size_t)n + 1) * 2;
			char *b = realloc(o->buf, cap);

			if (!b) {
				o->nomem = true;
				return;
			}
			o->buf = b;
			o->cap = cap;
		}
	}
}

/* A raw fetcharg the kernel's syntax knows: passed on as it is. */
static bool raw_fetcharg(const char *a)
{
	return *a == '%' || *a == '@' || *a == '+' || *a == '-' || *a == '\\' ||
	       (*a >= '0' && *a <= '9') || !strncmp(a, "$stack", 6) ||
	       !strncmp(a, "$comm", 5) || !strncmp(a, "$COMM", 5) || !strncmp(a, "$arg", 4);
}

/* The kernel's type of a C base type / pointer / enum, as perf picks it. */
static int base_type(Dwarf_Die *type, const char *name, char *buf, size_t n,
		     char err[UTRACE_DW_ERR_MAX])
{
	Dwarf_Attribute a;
	Dwarf_Word enc = 0;
	int size = dwarf_bytesize(type);

	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type:
		snprintf(buf, n, "x64");
		return 0;
	case DW_TAG_enumeration_type:
		if (size <= 0 || size > 8)
			break;
		snprintf(buf, n, "u%d", size * 8);
		return 0;
	case DW_TAG_base_type:
		if (size <= 0 || size > 8)
			return fail(err, -EOPNOTSUPP, "'%s' is %d bytes wide: the kernel's types "
				    "hold at most 8 (cast a part: :x64)", name, size);
		if (dwarf_attr(type, DW_AT_encoding, &a))
			dwarf_formudata(&a, &enc);
		if (enc == DW_ATE_float)
			return fail(err, -EOPNOTSUPP, "'%s' is a floating-point number: the "
				    "kernel's types have none (cast it: :x%d for its bits)", name,
				    size * 8);
		snprintf(buf, n, "%c%d",
			 enc == DW_ATE_signed || enc == DW_ATE_signed_char ? 's' : 'u', size * 8);
		return 0;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return fail(err, -EOPNOTSUPP, "'%s' is a struct or union: name a member "
			    "('%s.field' or '%s->field')", name, name, name);
	case DW_TAG_array_type:
		return fail(err, -EOPNOTSUPP, "'%s' is an array: name an element ('%s[0]'), or "
			    "cast a char array to :string", name, name);
	default:
		break;
	}
	return fail(err, -EOPNOTSUPP, "'%s' has no type the kernel's fetchargs can show",
		    name);
}

/* The element type of an array or pointer; its size, or -1. */
static int elem_of(Dwarf_Die *type, Dwarf_Die *elem)
{
	Dwarf_Word size = 0;

	if (!strip_type(type, elem) || dwarf_aggregate_size(elem, &size) != 0)
		return -1;
	return (int)size;
}

static bool char_type(Dwarf_Die *t)
{
	return dwarf_tag(t) == DW_TAG_base_type && dwarf_bytesize(t) == 1;
}

struct bits {
	int width, offset, container;
};

/* Find member 'm' of struct type t: its type die, offset, bit field. */
static int member_of(Dwarf_Die *t, const char *m, Dwarf_Die *mem, int64_t *off,
		     struct bits *b)
{
	Dwarf_Die c;

	if (dwarf_tag(t) != DW_TAG_structure_type && dwarf_tag(t) != DW_TAG_union_type)
		return -EINVAL;
	if (dwarf_child(t, &c) != 0)
		return -ENOENT;
	do {
		Dwarf_Attribute a;
		Dwarf_Word v = 0;
		const char *name = dwarf_diename(&c);

		if (dwarf_tag(&c) != DW_TAG_member || !name || strcmp(name, m))
			continue;
		*mem = c;
		*off = 0;
		b->width = 0;
		if (dwarf_attr(&c, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &v) == 0)
			*off = (int64_t)v;
		if (dwarf_attr(&c, DW_AT_bit_size, &a) && dwarf_formudata(&a, &v) == 0) {
			Dwarf_Die mt;
			Dwarf_Word dbo = 0;
			int size;

			b->width = (int)v;
			size = strip_type(&c, &mt) ? dwarf_bytesize(&mt) : 4;
			if (size <= 0)
				size = 4;
			b->container = size * 8;
			if (dwarf_attr(&c, DW_AT_data_bit_offset, &a)) {
				/* DWARF 4+ (gcc): bits from the structure's start */
				dwarf_formudata(&a, &dbo);
				*off = (int64_t)(dbo / (Dwarf_Word)b->container) * size;
				b->offset = (int)(dbo % (Dwarf_Word)b->container);
			} else if (dwarf_attr(&c, DW_AT_bit_offset, &a) &&
				   dwarf_formudata(&a, &dbo) == 0) {
				/* DWARF 2/3 form (clang 14 still emits it): the
				 * storage unit at data_member_location, of
				 * DW_AT_byte_size, and the bits from its most
				 * significant one (x86 is little-endian) */
				Dwarf_Word bs = (Dwarf_Word)size;

				if (dwarf_attr(&c, DW_AT_byte_size, &a) && dwarf_formudata(&a, &v) == 0 &&
				    v > 0 && v <= 8)
					bs = v;
				if (dbo + (Dwarf_Word)b->width > bs * 8)
					return -EINVAL;
				b->container = (int)bs * 8;
				b->offset = (int)(bs * 8 - dbo - (Dwarf_Word)b->width);
			} else {
				b->offset = 0;
			}
		}
		return 0;
	} while (dwarf_siblingof(&c, &c) == 0);
	return -ENOENT;
}

static void ident(const char *in, char *buf, size_t n)
{
	size_t i = 0, j = 0;

	while (in[i] && j + 1 < n) {
		char ch = in[i];

		if (ch == '-' && in[i + 1] == '>') {
			i += 2;
			ch = '_';
		} else if (ch == ']') {
			i++;
			continue;
		} else {
			i++;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_'))
			ch = '_';
		buf[j++] = ch;
	}
	buf[j] = 0;
}

/* Whether the definition so far has an argument NAME. */
static bool has_arg(const struct out *o, const char *name)
{
	size_t n = strlen(name);
	const char *p = o->buf;

	if (!n)
		return false;
	while (p && (p = strstr(p, name))) {
		if (p > o->buf && p[-1] == ' ' && p[n] == '=')
			return true;
		p += n;
	}
	return false;
}

/* perf's name for an argument: the last member's or the variable's
 * ("r->vals[2]" is "vals"); the whole path as an identifier when that
 * name is taken already ("r_vals_2"), then _1, _2... */
static void default_name(const char *expr, const struct out *o, char *buf, size_t n)
{
	const char *last = expr, *p;
	size_t len, base;
	unsigned k;

	for (p = expr; *p; p++) {
		if (*p == '.')
			last = p + 1;
		else if (p[0] == '-' && p[1] == '>')
			last = p + 2;
	}
	len = strcspn(last, "[");
	snprintf(buf, n, "%.*s", (int)len, last);
	if (!has_arg(o, buf))
		return;
	ident(expr, buf, n);
	base = strlen(buf);
	for (k = 1; has_arg(o, buf) && k < 1000 && base + 6 < n; k++)
		snprintf(buf + base, n - base, "_%u", k);
}

/*
 * One argument: [NAME=]VAR[(->|.)m|[N]]...[:TYPE], as "NAME=FETCH:TYPE"
 * appended to o.
 */
static int translate_var(struct var_ctx *c, struct scope *s, const char *arg,
			 struct out *o, char err[UTRACE_DW_ERR_MAX])
{
	char name[128], expr[256], cast[64] = "", path[128], fetch[FETCH_MAX], ty[64];
	const char *eq = strchr(arg, '='), *p, *colon;
	Dwarf_Die var, type;
	struct bits bits = { 0 };
	struct loc l;
	size_t n;
	int r;

	if (eq && eq > arg && strcspn(arg, "-.[>") > (size_t)(eq - arg)) {
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
		arg = eq + 1;
	} else {
		name[0] = 0;
	}
	colon = strchr(arg, ':');
	snprintf(expr, sizeof(expr), "%.*s", colon ? (int)(colon - arg) : (int)strlen(arg), arg);
	if (colon)
		snprintf(cast, sizeof(cast), "%s", colon + 1);
	if (!name[0])
		default_name(expr, o, name, sizeof(name));
	n = strcspn(expr, "-.[");
	snprintf(path, sizeof(path), "%.*s", (int)n, expr);
	c->name = expr;
	if (find_var(s, path, true, &var) < 0)
		return fail(err, -ENOENT, "no variable '%s' in scope at %s+0x%" PRIx64, path,
			    dwarf_diename(c->func), c->pc - func_entry(c->func));
	{
		struct var_ctx vc = *c;

		vc.name = path;
		r = var_loc(&vc, &var, &l, err);
		if (r)
			return r;
	}
	if (!strip_type(&var, &type))
		return fail(err, -EINVAL, "'%s' has no type", path);
	/* the access path */
	for (p = expr + n; *p;) {
		Dwarf_Die t2;
		int64_t moff;

		if (bits.width)
			return fail(err, -EINVAL, "'%s': a bit field has no members", expr);
		if (*p == '.' || (p[0] == '-' && p[1] == '>')) {
			bool arrow = *p == '-';
			char m[128];
			size_t k;

			p += arrow ? 2 : 1;
			k = strcspn(p, "-.[");
			if (!k || k >= sizeof(m))
				return fail(err, -EINVAL, "'%s': a member name is missing or too long "
					    "after '%s'", expr, arrow ? "->" : ".");
			snprintf(m, sizeof(m), "%.*s", (int)k, p);
			p += k;
			if (arrow) {
				if (dwarf_tag(&type) != DW_TAG_pointer_type || !strip_type(&type, &t2))
					return fail(err, -EINVAL, "'%s': '->%s' on something that is "
						    "not a pointer (use '.')", expr, m);
				type = t2;
			} else if (dwarf_tag(&type) == DW_TAG_pointer_type) {
				return fail(err, -EINVAL, "'%s': '.%s' on a pointer (use '->')", expr,
					    m);
			}
			r = member_of(&type, m, &t2, &moff, &bits);
			if (r == -EINVAL)
				return fail(err, -EINVAL, "'%s': '%s' on something that is not a "
					    "struct or union", expr, m);
			if (r)
				return fail(err, -ENOENT, "'%s': no member '%s'", expr, m);
			if (arrow) {
				r = loc_deref(&l, moff, err);
				if (r)
					return r;
			} else if (l.kind == LOC_REG) {
				return fail(err, -EOPNOTSUPP, "'%s': the struct is held in a "
					    "register at this address: cannot fetch a member", expr);
			} else {
				l.off += moff;
			}
			if (!strip_type(&t2, &type))
				return fail(err, -EINVAL, "'%s': member '%s' has no type", expr, m);
		} else if (*p == '[') {
			char *end;
			long idx = strtol(p + 1, &end, 0);
			int esz;

			if (end == p + 1 || *end != ']')
				return fail(err, -EINVAL, "'%s': bad index", expr);
			p = end + 1;
			esz = elem_of(&type, &t2);
			if (esz < 0)
				return fail(err, -EINVAL, "'%s': the element size is unknown", expr);
			if (dwarf_tag(&type) == DW_TAG_pointer_type) {
				r = loc_deref(&l, (int64_t)idx * esz, err);
				if (r)
					return r;
			} else if (dwarf_tag(&type) == DW_TAG_array_type && l.kind != LOC_REG) {
				l.off += (int64_t)idx * esz;
			} else {
				return fail(err, -EINVAL, "'%s': an index on something that is not an "
					    "array or pointer in memory", expr);
			}
			type = t2;
			while (dwarf_tag(&type) == DW_TAG_typedef ||
			       dwarf_tag(&type) == DW_TAG_const_type ||
			       dwarf_tag(&type) == DW_TAG_volatile_type) {
				if (!strip_type(&type, &t2))
					break;
				type = t2;
			}
		} else {
			return fail(err, -EINVAL, "'%s': cannot parse '%s'", expr, p);
		}
	}
	/* the type */
	if (!strcmp(cast, "string") || !strcmp(cast, "ustring")) {
		Dwarf_Die e;

		if (dwarf_tag(&type) == DW_TAG_pointer_type) {
			r = loc_deref(&l, 0, err);
			if (r)
				return r;
		} else if (dwarf_tag(&type) == DW_TAG_array_type && elem_of(&type, &e) == 1 &&
			   char_type(&e) && l.kind != LOC_REG) {
			/* the slot's address is the string's */
		} else {
			return fail(err, -EINVAL, "'%s' is not a char pointer or char array: "
				    "cannot read it as a string", expr);
		}
		loc_fetch(&l, fetch, sizeof(fetch));
		outf(o, " %s=%s:%s", name, fetch, cast);
		return 0;
	}
	loc_fetch(&l, fetch, sizeof(fetch));
	if (cast[0]) {
		outf(o, " %s=%s:%s", name, fetch, cast);
		return 0;
	}
	if (bits.width) {
		outf(o, " %s=%s:b%d@%d/%d", name, fetch, bits.width, bits.offset, bits.container);
		return 0;
	}
	r = base_type(&type, expr, ty, sizeof(ty), err);
	if (r)
		return r;
	outf(o, " %s=%s:%s", name, fetch, ty);
	return 0;
}

/* $params / $vars: every parameter (and local) with a location at pc. */
static int translate_all(struct var_ctx *c, struct scope *s, bool params_only, struct out *o,
			 char err[UTRACE_DW_ERR_MAX])
{
	unsigned nr = 0;
	int i;

	for (i = 0; i < s->nfunc; i++) {
		Dwarf_Die v;

		if (dwarf_child(&s->scopes[i], &v) != 0)
			continue;
		do {
			int tag = dwarf_tag(&v);
			const char *name = dwarf_diename(&v);
			char e[UTRACE_DW_ERR_MAX];
			size_t len = o->len;

			if (!name || (tag != DW_TAG_formal_parameter &&
				      (params_only || tag != DW_TAG_variable)))
				continue;
			if (translate_var(c, s, name, o, e) == 0) {
				nr++;
			} else {
				/* perf skips what it cannot fetch, and says so */
				o->len = len;
				if (o->buf)
					o->buf[len] = 0;
				fprintf(stderr, "utrace probe: skipping %s: %s\n", name, e);
			}
		} while (dwarf_siblingof(&v, &v) == 0);
	}
	if (!nr)
		return fail(err, -ENOENT, "no %s with a location at %s+0x%" PRIx64,
			    params_only ? "parameter" : "variable", dwarf_diename(c->func),
			    c->pc - func_entry(c->func));
	return 0;
}

bool utrace__dw_good_name(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* The event's name: perf's (the function, __return, then _1, _2...). */
static int event_name(struct utrace__dw *d, const char *want, char *buf, size_t n)
{
	unsigned i, k;

	for (k = 0; k < 1000; k++) {
		bool used = false;

		if (k)
			snprintf(buf, n, "%s_%u", want, k);
		else
			snprintf(buf, n, "%s", want);
		for (i = 0; i < d->nr_names && !used; i++)
			used = !strcmp(d->names[i], buf);
		if (!used)
			break;
	}
	if (d->nr_names < MAX_NAMES)
		d->names[d->nr_names++] = strdup(buf);
	return 0;
}

int utrace__dw_translate(struct utrace__dw *d, const char *def,
			 enum utrace__dw_site_form form, struct utrace__dw_probe *pr,
			 char err[UTRACE_DW_ERR_MAX])
{
	char *copy = strdup(def), *tok, *save = NULL, *eq, *first;
	char group[64], ev[128], want[160], sitebuf[PATH_MAX + 320];
	struct out o = { 0 };
	struct point p;
	struct scope s = { 0 };
	struct var_ctx c;
	bool has_var = false;
	int r = 0;

	memset(pr, 0, sizeof(*pr));
	if (!copy)
		return fail(err, -ENOMEM, "out of memory");
	first = strtok_r(copy, " \t", &save);
	if (!first) {
		free(copy);
		return fail(err, -EINVAL, "empty probe definition");
	}
	snprintf(group, sizeof(group), "%s", d->group);
	want[0] = 0;
	eq = strchr(first, '=');
	if (eq) {
		char *gcolon;

		*eq = 0;
		gcolon = strchr(first, ':');
		if (gcolon) {
			*gcolon = 0;
			snprintf(group, sizeof(group), "%s", first);
			first = gcolon + 1;
		}
		snprintf(want, sizeof(want), "%.150s", first);
		first = eq + 1;
	}
	if (!utrace__dw_good_name(group) || (want[0] && !utrace__dw_good_name(want))) {
		r = fail(err, -EINVAL, "group and event names are C identifiers "
			 "([A-Za-z_][A-Za-z0-9_]*)");
		goto out;
	}
	r = parse_point(d, first, &p, err);
	if (r)
		goto out;
	/* the arguments decide the place of a bare FUNC */
	tok = save;
	while (tok && *tok) {
		size_t k;

		tok += strspn(tok, " \t");
		k = strcspn(tok, " \t");
		if (k && !raw_fetcharg(tok) && strncmp(tok, "$retval", 7))
			has_var = true;
		tok += k;
	}
	if (has_var && p.ret) {
		r = fail(err, -EINVAL, "'%s': a return probe can fetch $retval and raw "
			 "fetchargs, not variables", def);
		goto out;
	}
	if (has_var && p.rline < 0 && !p.has_off && !p.ret && unoptimized(&p.die))
		p.addr = after_prologue(&p.die);
	if (!want[0] && p.rline >= 0)
		snprintf(want, sizeof(want), "%.140s_L%d", p.func, p.rline);
	else if (!want[0])
		snprintf(want, sizeof(want), "%.140s%s", p.func, p.ret ? "__return" : "");
	event_name(d, want, ev, sizeof(ev));
	pr->addr = p.addr;
	if (utrace__dw_func_at(d, p.func, &pr->func_addr, &pr->func_size) < 0) {
		pr->func_addr = p.entry;
		pr->func_size = 0;
	}
	if (utrace__dw_file_offset(d, p.addr, &pr->file_off) < 0) {
		r = fail(err, -ENOENT, "0x%" PRIx64 " is in no loaded segment of '%s'", p.addr,
			 d->path);
		goto out;
	}
	if (form == UTRACE_DW_SITE_FILEOFF)
		snprintf(sitebuf, sizeof(sitebuf), "%s:0x%" PRIx64, d->path, pr->file_off);
	else if (p.addr == p.entry)
		snprintf(sitebuf, sizeof(sitebuf), "%s:%s", d->path, p.func);
	else
		snprintf(sitebuf, sizeof(sitebuf), "%s:%s+0x%" PRIx64, d->path, p.func,
			 p.addr - p.entry);
	outf(&o, "%c:%s/%s %s", p.ret ? 'r' : 'p', group, ev, sitebuf);
	if (has_var) {
		r = scope_at(&p.die, p.addr, &s, err);
		if (r)
			goto out;
	}
	c = (struct var_ctx){ d, &p.die, p.addr, NULL };
	for (tok = strtok_r(NULL, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		const char *a = tok, *aeq = strchr(tok, '=');

		if (aeq && strcspn(tok, "-.[>") > (size_t)(aeq - tok))
			a = aeq + 1;
		if (raw_fetcharg(a)) {
			outf(&o, " %s", tok);
		} else if (!strncmp(a, "$retval", 7)) {
			char ty[64];
			Dwarf_Die rt;

			if (!p.ret) {
				r = fail(err, -EINVAL, "'%s': $retval needs a return probe "
					 "(%s%%return)", tok, p.func);
				goto out;
			}
			if (a[7] == ':') {
				outf(&o, " %s", tok);
			} else if (!strip_type(&p.die, &rt)) {
				r = fail(err, -EINVAL, "'%s' returns void", p.func);
				goto out;
			} else {
				r = base_type(&rt, "$retval", ty, sizeof(ty), err);
				if (r)
					goto out;
				outf(&o, " %s%s:%s", a == tok ? "arg1=" : "", tok, ty);
			}
		} else if (!strcmp(a, "$params") || !strcmp(a, "$vars")) {
			r = translate_all(&c, &s, !strcmp(a, "$params"), &o, err);
			if (r)
				goto out;
		} else if (*a == '$') {
			r = fail(err, -EINVAL, "unknown special variable '%s'", a);
			goto out;
		} else {
			r = translate_var(&c, &s, tok, &o, err);
			if (r)
				goto out;
		}
	}
	if (o.nomem) {
		r = fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	pr->raw = o.buf;
	o.buf = NULL;
out:
	free(o.buf);
	free(s.scopes);
	free(copy);
	return r;
}
