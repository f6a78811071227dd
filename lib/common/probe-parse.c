// SPDX-License-Identifier: MIT
/*
 * Parsing and compiling uprobe_events definitions (probe.h).
 *
 * The steps follow the kernel's trace_uprobe_create() and
 * traceprobe_parse_probe_arg() so that the same bad line gives the same
 * errno, message and caret; each error site says which kernel error it is.
 *
 *   1. split the line into words on white space, '#' starts a comment;
 *   2. '-:[GRP/]EVENT' deletes;
 *   3. the place (word 1): OBJ:OFFSET[%return][(REFCTR)] or, beyond the
 *      kernel, [OBJ:]SYMBOL[+OFFS];
 *   4. the event's name (word 0), made up when absent;
 *   5. each fetcharg: NAME=, then TYPE after the first ':', then the
 *      expression, recursively through +OFFS(...) dereferences;
 *   6. the record layout, the fields and the print fmt.
 */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "probe.h"

#define MAX_WORDS (UTRACE_PROBE_MAX_ARGS + 3)
#define ARG_NAME_MAX 32   /* MAX_ARG_NAME_LEN */

struct pctx {
	char *words[MAX_WORDS];
	int pos[MAX_WORDS];     /* each word's start in the joined command */
	int nr;
	int index;              /* the word being parsed */
	struct utrace__probe_error *err;
	const struct utrace__probe_resolver *res;
	struct utrace__probe_def *def;
};

/* An error the kernel writes to error_log: caret under word @index + @offs. */
static int perr(struct pctx *c, int offs, int e, const char *msg)
{
	struct utrace__probe_error *err = c->err;

	err->err = -e;
	err->logged = true;
	err->pos = c->index < c->nr ? c->pos[c->index] + offs : (int)strlen(err->command) + 1;
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
	return -e;
}

/* An error the kernel does not log (its -ECANCELED cases and a few others):
 * the message is utrace's, for the CLI. */
static int pfail(struct pctx *c, int e, const char *msg)
{
	c->err->err = -e;
	c->err->logged = false;
	c->err->pos = 0;
	snprintf(c->err->msg, sizeof(c->err->msg), "%s", msg);
	return -e;
}

static bool good_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	while (*++s)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

static bool good_system_name(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* kstrtoul/kstrtol: the whole string, base 0 (0x, 0 octal), no sign for
 * unsigned, an optional '+' for signed. */
static int k_strtoul(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int k_strtol(const char *s, int64_t *v)
{
	const char *p = s;
	char *end;

	if (*p == '-' || *p == '+')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	*v = strtoll(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

/* ---- types ---- */

struct ptype {
	const char *name;
	uint8_t type, size;
	bool is_signed;
	const char *fmttype;   /* the field's type in the format file */
	const char *fmt;       /* its conversion in the print fmt */
};

static const struct ptype ptypes[] = {
	{ "string",  UTRACE__PT_STRING,  4, true,  "char", "\\\"%s\\\"" },
	{ "ustring", UTRACE__PT_USTRING, 4, true,  "char", "\\\"%s\\\"" },
	{ "u8",  UTRACE__PT_U8,  1, false, "u8",  "%u" },
	{ "u16", UTRACE__PT_U16, 2, false, "u16", "%u" },
	{ "u32", UTRACE__PT_U32, 4, false, "u32", "%u" },
	{ "u64", UTRACE__PT_U64, 8, false, "u64", "%Lu" },
	{ "s8",  UTRACE__PT_S8,  1, true,  "s8",  "%d" },
	{ "s16", UTRACE__PT_S16, 2, true,  "s16", "%d" },
	{ "s32", UTRACE__PT_S32, 4, true,  "s32", "%d" },
	{ "s64", UTRACE__PT_S64, 8, true,  "s64", "%Ld" },
	{ "x8",  UTRACE__PT_X8,  1, false, "u8",  "0x%x" },
	{ "x16", UTRACE__PT_X16, 2, false, "u16", "0x%x" },
	{ "x32", UTRACE__PT_X32, 4, false, "u32", "0x%x" },
	{ "x64", UTRACE__PT_X64, 8, false, "u64", "0x%Lx" },
	{ "char", UTRACE__PT_CHAR, 1, false, "u8", "'%c'" },
	/* utrace resolves symbols in user space; the kernel refuses the
	 * type on uprobes */
	{ "symbol", UTRACE__PT_SYMBOL, 8, false, "u64", "%pS" },
};

static const struct ptype *ptype_of(uint8_t type)
{
	for (size_t i = 0; i < sizeof(ptypes) / sizeof(ptypes[0]); i++)
		if (ptypes[i].type == type)
			return &ptypes[i];
	return NULL;
}

/* find_fetch_type(): NULL is the default (x64); b<w>@<o>/<size> is a
 * bitfield of a u<size>. */
static const struct ptype *find_type(const char *t)
{
	if (!t)
		return ptype_of(UTRACE__PT_X64);
	if (*t == 'b') {
		uint64_t bs;

		t = strchr(t, '/');
		if (!t || k_strtoul(t + 1, &bs))
			return NULL;
		switch (bs) {
		case 8: return ptype_of(UTRACE__PT_U8);
		case 16: return ptype_of(UTRACE__PT_U16);
		case 32: return ptype_of(UTRACE__PT_U32);
		case 64: return ptype_of(UTRACE__PT_U64);
		default: return NULL;
		}
	}
	for (size_t i = 0; i < sizeof(ptypes) / sizeof(ptypes[0]); i++)
		if (!strcmp(t, ptypes[i].name))
			return &ptypes[i];
	return NULL;
}

static bool is_string(uint8_t type)
{
	return type == UTRACE__PT_STRING || type == UTRACE__PT_USTRING;
}

/* ---- registers (the kernel's x86-64 regoffset_table names) ---- */

#define REG(n) { #n, offsetof(struct utrace_probe_regs, n) / 8, false, 0 }
static const struct preg {
	const char *name;
	unsigned int idx;
	bool konst;            /* no such state in user space: a constant */
	uint64_t value;
} pregs[] = {
	REG(r15), REG(r14), REG(r13), REG(r12), REG(bp), REG(bx), REG(r11),
	REG(r10), REG(r9), REG(r8), REG(ax), REG(cx), REG(dx), REG(si),
	REG(di), { "orig_ax", 0, true, UINT64_MAX }, REG(ip),
	{ "cs", 0, true, 0x33 }, REG(flags), REG(sp), { "ss", 0, true, 0x2b },
};
#undef REG

/* ---- step 5: fetch arguments ---- */

static int emit(struct pctx *c, struct utrace__probe_arg *a, int offs, uint8_t op,
		int64_t imm)
{
	if (a->nr_insns == UTRACE_PROBE_INSN_MAX)
		return perr(c, offs, E2BIG, "Too many operations");
	a->insns[a->nr_insns].op = op;
	a->insns[a->nr_insns].imm = imm;
	a->nr_insns++;
	return 0;
}

static int parse_var(struct pctx *c, struct utrace__probe_arg *a, const char *v, int offs)
{
	uint64_t n;

	if (!strcmp(v, "retval")) {
		if (c->def->kind != 'r')
			return perr(c, offs, EINVAL, "$retval is not available on probe");
		return emit(c, a, offs, UTRACE__POP_RETVAL, 0);
	}
	if (!strncmp(v, "stack", 5)) {
		if (!v[5])
			return emit(c, a, offs, UTRACE__POP_STACKP, 0);
		if (isdigit((unsigned char)v[5])) {
			char *end;

			errno = 0;
			n = strtoull(v + 5, &end, 10);
			if (!errno && !*end && n < (1u << 20))
				return emit(c, a, offs, UTRACE__POP_STACK, (int64_t)n);
		}
		return perr(c, offs, EINVAL, "Invalid $-variable specified");
	}
	if (!strcmp(v, "comm") || !strcmp(v, "COMM"))
		return emit(c, a, offs, UTRACE__POP_COMM, 0);
	if (!strncmp(v, "arg", 3)) {
		/* The kernel has no $argN on uprobes; utrace has them at a
		 * function's entry given by its symbol (the SysV ABI). */
		if (c->def->kind != 'p' || !c->def->entry)
			return perr(c, offs, EINVAL,
				    "$arg* can be used only on function entry or exit");
		char *end;

		errno = 0;
		n = strtoull(v + 3, &end, 10);
		if (!isdigit((unsigned char)v[3]) || errno || *end)
			return perr(c, offs, EINVAL, "Invalid $-variable specified");
		if (!n || n > 64)
			return perr(c, offs, EINVAL, "Invalid argument number");
		return emit(c, a, offs, UTRACE__POP_ARG, (int64_t)n - 1);
	}
	return perr(c, offs, EINVAL, "Invalid $-variable specified");
}

/* @SYM[+|-OFFS] in the probe's object (utrace's; the kernel refuses). */
static int parse_at_symbol(struct pctx *c, struct utrace__probe_arg *a, char *s, int offs)
{
	const struct utrace__probe_resolver *r = c->res;
	char *sep = strpbrk(s, "+-");
	int64_t off = 0;
	uint64_t addr, foff, size;

	if (sep) {
		if (k_strtol(sep, &off))
			return perr(c, offs, EINVAL, "Invalid memory address");
		*sep = '\0';
	}
	if (!good_name(s) || !r || !r->symbol ||
	    r->symbol(r->data, c->def->path, s, &addr, &foff, &size) < 0)
		return perr(c, offs, EINVAL, "Symbol is not available with uprobe");
	free(a->sym);
	a->sym = strdup(s);
	return emit(c, a, offs, UTRACE__POP_SYM, (int64_t)addr + off);
}

static int parse_expr(struct pctx *c, struct utrace__probe_arg *a, char *arg, int offs);

static int parse_deref(struct pctx *c, struct utrace__probe_arg *a, char *arg, int offs)
{
	bool minus = arg[0] == '-';
	char *tmp, *close;
	int64_t off;
	int r;

	if (arg[1] == 'u') {         /* +u / -u: user memory: all of it is */
		arg[1] = arg[0];
		arg++;
	}
	if (arg[0] == '+')
		arg++;
	tmp = strchr(arg, '(');
	if (!tmp)
		return perr(c, offs, EINVAL, "Dereference needs a brace");
	*tmp = '\0';
	if (k_strtol(arg, &off))
		return perr(c, offs, EINVAL, "Invalid dereference offset");
	offs += (int)(tmp + 1 - arg) + (minus ? 0 : 1);
	arg = tmp + 1;
	close = strrchr(arg, ')');
	if (!close)
		return perr(c, offs + (int)strlen(arg), EINVAL, "Dereference brace is not closed");
	if (close[1])   /* the kernel ignores what follows */
		return perr(c, offs + (int)(close + 1 - arg), EINVAL,
			    "Garbage after the dereference brace");
	*close = '\0';
	r = parse_expr(c, a, arg, offs);
	if (r)
		return r;
	uint8_t last = a->insns[a->nr_insns - 1].op;

	if (last == UTRACE__POP_COMM || last == UTRACE__POP_DATA)
		return perr(c, offs, EINVAL, "$comm can not be dereferenced");
	return emit(c, a, offs, UTRACE__POP_DEREF, off);
}

static int parse_expr(struct pctx *c, struct utrace__probe_arg *a, char *arg, int offs)
{
	uint64_t u;
	int64_t s;
	int r;

	switch (arg[0]) {
	case '$':
		return parse_var(c, a, arg + 1, offs);
	case '%':
		for (size_t i = 0; i < sizeof(pregs) / sizeof(pregs[0]); i++) {
			if (strcmp(arg + 1, pregs[i].name))
				continue;
			if (pregs[i].konst)
				return emit(c, a, offs, UTRACE__POP_CONST, (int64_t)pregs[i].value);
			return emit(c, a, offs, UTRACE__POP_REG, pregs[i].idx);
		}
		return perr(c, offs, EINVAL, "Invalid register name");
	case '@':
		if (isdigit((unsigned char)arg[1])) {
			if (k_strtoul(arg + 1, &u))
				return perr(c, offs, EINVAL, "Invalid memory address");
			r = emit(c, a, offs, UTRACE__POP_IMM, (int64_t)u);
		} else if (arg[1] == '+') {
			if (k_strtol(arg + 2, &s))
				return perr(c, offs, EINVAL, "Invalid file offset value");
			r = emit(c, a, offs, UTRACE__POP_FOFFS, s);
		} else if (isalpha((unsigned char)arg[1]) || arg[1] == '_') {
			r = parse_at_symbol(c, a, arg + 1, offs);
		} else {
			return perr(c, offs, EINVAL, "Symbol is not available with uprobe");
		}
		return r ? r : emit(c, a, offs, UTRACE__POP_DEREF, 0);
	case '+':
	case '-':
		return parse_deref(c, a, arg, offs);
	case '\\':
		if (arg[1] == '"') {
			size_t len = strlen(arg + 2);

			if (!len || arg[2 + len - 1] != '"')
				return perr(c, offs + 2 + (int)len, EINVAL,
					    "String is not closed with '\"'");
			a->data = strndup(arg + 2, len - 1);
			if (!a->data)
				return pfail(c, ENOMEM, "out of memory");
			return emit(c, a, offs, UTRACE__POP_DATA, 0);
		}
		if (isdigit((unsigned char)arg[1]))
			r = k_strtoul(arg + 1, &u), s = (int64_t)u;
		else if (arg[1] == '-' || arg[1] == '+')
			r = k_strtol(arg + 1, &s);
		else
			r = -EINVAL;
		if (r)
			return perr(c, offs + 1, EINVAL, "Invalid immediate value");
		return emit(c, a, offs, UTRACE__POP_IMM, s);
	default:
		if (isalpha((unsigned char)arg[0]) || arg[0] == '_')
			return perr(c, offs, EINVAL, "BTF is not available or not supported");
		return perr(c, offs, EINVAL, "Invalid fetch argument");
	}
}

/* The length of a counted string, [%REG] or [$argN] (N <= 6: a
 * register at the entry): its register's index in utrace_probe_regs. */
static int parse_count(struct pctx *c, struct utrace__probe_arg *a, char *what, int offs)
{
	struct utrace__probe_arg tmp;
	char buf[UTRACE_PROBE_ARGSTR_MAX + 1];
	int r;

	memset(&tmp, 0, sizeof(tmp));
	snprintf(buf, sizeof(buf), "%s", what);
	r = parse_expr(c, &tmp, buf, offs);
	if (r)
		return r;
	if (tmp.nr_insns == 1 && tmp.insns[0].op == UTRACE__POP_REG) {
		a->len_reg = (uint8_t)tmp.insns[0].imm;
	} else if (tmp.nr_insns == 1 && tmp.insns[0].op == UTRACE__POP_ARG &&
		   tmp.insns[0].imm < 6) {
		static const uint8_t sysv[6] = {
			offsetof(struct utrace_probe_regs, di) / 8,
			offsetof(struct utrace_probe_regs, si) / 8,
			offsetof(struct utrace_probe_regs, dx) / 8,
			offsetof(struct utrace_probe_regs, cx) / 8,
			offsetof(struct utrace_probe_regs, r8) / 8,
			offsetof(struct utrace_probe_regs, r9) / 8,
		};
		a->len_reg = sysv[tmp.insns[0].imm];
	} else {
		return perr(c, offs, EINVAL, "String length must be %REG or $arg1..$arg6");
	}
	a->counted = true;
	return 0;
}

/* b<width>@<offset>/<size>: 0 or -EINVAL */
static int parse_bitfield(struct utrace__probe_arg *a, const char *bf)
{
	unsigned long bw, bo;
	char *tail;

	bw = strtoul(bf + 1, &tail, 0);
	if (!bw || *tail != '@')
		return -EINVAL;
	bf = tail + 1;
	bo = strtoul(bf, &tail, 0);
	if (tail == bf || *tail != '/')
		return -EINVAL;
	if (bw + bo > a->size * 8u)
		return -EINVAL;
	a->bf_width = (uint8_t)bw;
	a->bf_offset = (uint8_t)bo;
	return 0;
}

static const char *const reserved[] = {
	"common_type", "common_flags", "common_preempt_count", "common_pid",
	"common_tgid", "__probe_ip", "__probe_ret_ip", "__probe_func",
};

static int parse_arg(struct pctx *c, unsigned int i, char *word)
{
	struct utrace__probe_def *d = c->def;
	struct utrace__probe_arg *a = &d->args[i];
	char *body = strchr(word, '='), *t, *arg;
	const struct ptype *pt;
	int offs, r;

	if (body) {
		if (body - word > ARG_NAME_MAX)
			return perr(c, 0, EINVAL, "Argument name is too long");
		if (body == word)
			return perr(c, 0, EINVAL, "Argument name is not specified");
		a->name = strndup(word, (size_t)(body - word));
		body++;
	} else {
		if (asprintf(&a->name, "arg%u", i + 1) < 0)
			a->name = NULL;
		body = word;
	}
	if (!a->name)
		return pfail(c, ENOMEM, "out of memory");
	if (!good_name(a->name))
		return perr(c, 0, EINVAL, "Argument name must follow the same rules as C identifiers");
	for (size_t k = 0; k < sizeof(reserved) / sizeof(reserved[0]); k++)
		if (!strcmp(a->name, reserved[k]))
			return perr(c, 0, EINVAL, "This argument name is already used");
	for (unsigned int k = 0; k < i; k++)
		if (!strcmp(a->name, d->args[k].name))
			return perr(c, 0, EINVAL, "This argument name is already used");
	offs = (int)(body - word);

	size_t len = strlen(body);

	if (len > UTRACE_PROBE_ARGSTR_MAX)
		return perr(c, offs, EINVAL, "Argument expression is too long");
	if (!len)
		return perr(c, offs, EINVAL, "No argument expression");
	a->comm = strdup(body);
	arg = strdup(body);
	if (!a->comm || !arg) {
		free(arg);
		return pfail(c, ENOMEM, "out of memory");
	}

	/* TYPE after the first ':', [N] after it */
	t = strchr(arg, ':');
	if (t) {
		char *t2, *t3;

		*t++ = '\0';
		t2 = strchr(t, '[');
		if (t2) {
			uint64_t n;

			*t2++ = '\0';
			t3 = strchr(t2, ']');
			if (!t3) {
				r = perr(c, offs + (int)(t2 + strlen(t2) - arg), EINVAL,
					 "Array is not closed");
				goto out;
			}
			if (t3[1]) {
				r = perr(c, offs + (int)(t3 + 1 - arg), EINVAL,
					 "Array has wrong suffix");
				goto out;
			}
			*t3 = '\0';
			if ((*t2 == '%' || *t2 == '$') &&
			    (!strcmp(t, "string") || !strcmp(t, "ustring"))) {
				/* utrace's counted string: the length in a
				 * register (the kernel: "Invalid array size") */
				r = parse_count(c, a, t2, offs + (int)(t2 - arg));
				if (r)
					goto out;
				goto typed;
			}
			if (k_strtoul(t2, &n) || !n) {
				r = perr(c, offs + (int)(t2 - arg), EINVAL, "Invalid array size");
				goto out;
			}
			if (n > UTRACE_PROBE_ARRAY_MAX) {
				r = perr(c, offs + (int)(t2 - arg), EINVAL, "Array number is too big");
				goto out;
			}
			a->count = (uint8_t)n;
		}
	}
typed:;
	int toffs = offs + (t ? (int)(t - arg) : 0);

	if (!strcmp(arg, "$comm") || !strcmp(arg, "$COMM") || !strncmp(arg, "\\\"", 2)) {
		if (a->count || (t && strcmp(t, "string"))) {
			r = perr(c, toffs, EINVAL,
				 "$comm and immediate-string only accepts string type");
			goto out;
		}
		pt = find_type("string");
	} else {
		pt = find_type(t);
	}
	if (!pt) {
		r = perr(c, toffs, EINVAL, "Unknown type is specified");
		goto out;
	}
	a->type = pt->type;
	a->size = pt->size;

	r = parse_expr(c, a, arg, offs);
	if (r)
		goto out;

	uint8_t last = a->insns[a->nr_insns - 1].op;

	if (is_string(a->type)) {
		if (last != UTRACE__POP_DEREF && last != UTRACE__POP_IMM &&
		    last != UTRACE__POP_COMM && last != UTRACE__POP_DATA) {
			r = perr(c, toffs, EINVAL, "String accepts only memory argument");
			goto out;
		}
		if (a->count) {
			r = perr(c, toffs, EINVAL, "String array is not supported");
			goto out;
		}
	} else if (a->count && last != UTRACE__POP_DEREF) {
		r = perr(c, toffs, EINVAL, "String accepts only memory argument");
		goto out;
	}
	if (t && *t == 'b' && parse_bitfield(a, t)) {
		r = perr(c, toffs, EINVAL, "Invalid bitfield");
		goto out;
	}
	r = 0;
out:
	free(arg);
	return r;
}

/* ---- step 6: layout, fields, print fmt ---- */

static const char *arg_fmt(const struct utrace__probe_arg *a)
{
	if (a->bf_width)
		return a->size == 8 ? "%Lu" : "%u";
	return ptype_of(a->type)->fmt;
}

static int layout(struct utrace__probe_def *d)
{
	unsigned int off = d->kind == 'r' ? 24 : 16, nf = d->kind == 'r' ? 2 : 1;
	char *text = NULL;
	size_t text_len = 0;
	FILE *fmt;

	d->fields = calloc(d->nr_args + 2, sizeof(*d->fields));
	fmt = open_memstream(&text, &text_len);
	if (!d->fields || !fmt) {
		if (fmt)
			fclose(fmt);
		free(text);
		return -ENOMEM;
	}
	if (d->kind == 'r') {
		d->fields[0] = (struct utrace_event_field){ "unsigned long", "__probe_func", 8, 8,
							    0, UTRACE_FIELD_PLAIN, 0 };
		d->fields[1] = (struct utrace_event_field){ "unsigned long", "__probe_ret_ip", 16,
							    8, 0, UTRACE_FIELD_PLAIN, 0 };
		fprintf(fmt, "\"(%%lx <- %%lx)");
	} else {
		d->fields[0] = (struct utrace_event_field){ "unsigned long", "__probe_ip", 8, 8,
							    0, UTRACE_FIELD_PLAIN, 0 };
		fprintf(fmt, "\"(%%lx)");
	}
	for (unsigned int i = 0; i < d->nr_args; i++) {
		struct utrace__probe_arg *a = &d->args[i];
		const struct ptype *pt = ptype_of(a->type);
		struct utrace_event_field *f = &d->fields[nf++];
		unsigned int n = a->count ? a->count : 1;

		a->offset = (uint16_t)off;
		f->name = a->name;
		f->offset = (int)off;
		f->size = (int)(a->size * n);
		f->is_signed = pt->is_signed;
		f->array_len = 0;
		if (a->bf_width)
			f->type = a->size == 1 ? "u8" : a->size == 2 ? "u16" :
				  a->size == 4 ? "u32" : "u64";
		else
			f->type = pt->fmttype;
		if (is_string(a->type)) {
			f->kind = UTRACE_FIELD_STRING;
			d->nr_strings++;
		} else {
			f->kind = a->count ? UTRACE_FIELD_FLEX : UTRACE_FIELD_PLAIN;
		}
		off += a->size * n;
		fprintf(fmt, " %s=", a->name);
		if (a->count) {
			fprintf(fmt, "{");
			for (unsigned int k = 0; k < a->count; k++)
				fprintf(fmt, "%s%s", k ? "," : "", arg_fmt(a));
			fprintf(fmt, "}");
		} else {
			fprintf(fmt, "%s", arg_fmt(a));
		}
	}
	if (off > 0xffff) {
		fclose(fmt);
		free(text);
		return -E2BIG;
	}
	d->nr_fields = nf;
	d->size = off;
	fprintf(fmt, "\"");
	if (d->kind == 'r')
		fprintf(fmt, ", REC->__probe_func, REC->__probe_ret_ip");
	else
		fprintf(fmt, ", REC->__probe_ip");
	for (unsigned int i = 0; i < d->nr_args; i++) {
		const struct utrace__probe_arg *a = &d->args[i];

		if (is_string(a->type))
			fprintf(fmt, ", __get_str(%s)", a->name);
		else if (a->count)
			for (unsigned int k = 0; k < a->count; k++)
				fprintf(fmt, ", REC->%s[%u]", a->name, k);
		else
			fprintf(fmt, ", REC->%s", a->name);
	}
	if (ferror(fmt) | fclose(fmt)) {
		free(text);
		return -ENOMEM;
	}
	d->print_fmt = text;
	return 0;
}

/* ---- steps 1 to 4 ---- */

static int split(struct pctx *c, char *line)
{
	char *p = line, *hash = strchr(line, '#');
	int pos = 0;

	if (hash)
		*hash = '\0';
	c->nr = 0;
	c->err->command[0] = '\0';
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (c->nr == MAX_WORDS)
			return -E2BIG;
		c->words[c->nr] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
		c->pos[c->nr] = pos;
		pos += (int)strlen(c->words[c->nr]) + 1;
		c->nr++;
	}
	for (int i = 0; i < c->nr; i++) {
		size_t l = strlen(c->err->command);

		snprintf(c->err->command + l, sizeof(c->err->command) - l, "%s%s",
			 i ? " " : "", c->words[i]);
	}
	return 0;
}

static int parse_event_name(struct pctx *c, const char *event, int offset)
{
	struct utrace__probe_def *d = c->def;
	const char *slash = strchr(event, '/');
	size_t len;

	if (!slash)
		slash = strchr(event, '.');
	if (slash) {
		if (slash == event)
			return perr(c, offset, EINVAL, "Group name is not specified");
		if (slash - event + 1 > UTRACE_PROBE_NAME_MAX)
			return perr(c, offset, EINVAL, "Group name is too long");
		memcpy(d->group, event, (size_t)(slash - event));
		d->group[slash - event] = '\0';
		if (!good_system_name(d->group))
			return perr(c, offset, EINVAL,
				    "Group name must follow the same rules as C identifiers");
		offset += (int)(slash - event + 1);
		event = slash + 1;
	}
	len = strlen(event);
	if (!len) {
		if (slash)
			return 0;        /* made up below */
		return perr(c, offset, EINVAL, "Event name is not specified");
	}
	if (len >= UTRACE_PROBE_NAME_MAX)
		return perr(c, offset, EINVAL, "Event name is too long");
	if (!good_name(event))
		return perr(c, offset, EINVAL,
			    "Event name must follow the same rules as C identifiers");
	memcpy(d->event, event, len + 1);
	return 0;
}

/* The object: a path (checked as the kernel's kern_path) or, without a
 * '/', a name the resolver knows ("" = the program itself). */
static int parse_object(struct pctx *c, const char *obj)
{
	struct utrace__probe_def *d = c->def;
	const struct utrace__probe_resolver *r = c->res;
	char path[PATH_MAX];
	struct stat st;

	if (strchr(obj, '/')) {
		if (stat(obj, &st) < 0) {
			int e = errno;

			return perr(c, 0, e, "Failed to find the given file");
		}
		if (!S_ISREG(st.st_mode))
			return perr(c, 0, EINVAL, "Not a regular file");
		d->path = strdup(obj);
	} else if (*obj) {
		if (!r || !r->object || r->object(r->data, obj, path, sizeof(path)) < 0)
			return perr(c, 0, ENOENT, "Failed to find the given file");
		d->path = strdup(path);
	} else {
		d->path = strdup("");
	}
	return d->path ? 0 : pfail(c, ENOMEM, "out of memory");
}

/* Word 1.  Returns 0, or the error. */
static int parse_place(struct pctx *c, char *w)
{
	struct utrace__probe_def *d = c->def;
	char *colon = strrchr(w, ':'), *arg, *tmp;
	uint64_t off;
	int r;

	if (!colon) {
		if (strchr(w, '/'))
			return pfail(c, EINVAL, "no ':' between the file and the offset");
		arg = w;           /* SYMBOL in the program itself */
		r = parse_object(c, "");
	} else {
		arg = colon + 1;
		if (!isdigit((unsigned char)*arg) && !isalpha((unsigned char)*arg) && *arg != '_')
			return pfail(c, EINVAL, "an offset or a symbol must follow the ':'");
		*colon = '\0';
		r = parse_object(c, w);
	}
	if (r)
		return r;
	/* (REFCTR): an SDT semaphore's file offset (trace_uprobe_create()) */
	tmp = strchr(arg, '(');
	if (tmp) {
		char *end = strchr(tmp, ')');
		uint64_t ref;

		if (!end)
			return perr(c, (int)(tmp + strlen(tmp) - w), EINVAL,
				    "Reference counter brace is not closed");
		if (end[1])
			return perr(c, (int)(end + 1 - w), EINVAL,
				    "Reference counter has wrong suffix");
		*tmp++ = '\0';
		*end = '\0';
		if (k_strtoul(tmp, &ref))
			return perr(c, (int)(tmp - w), EINVAL, "Invalid reference counter offset");
		d->refctr = ref;
	}
	tmp = strchr(arg, '%');
	if (tmp) {
		if (strcmp(tmp, "%return"))
			return perr(c, (int)(tmp - w), EINVAL, "Invalid probed address suffix");
		*tmp = '\0';
		d->kind = 'r';
	}
	if (isdigit((unsigned char)*arg)) {
		if (k_strtoul(arg, &off))
			return perr(c, (int)(arg - w), EINVAL, "Invalid uprobe offset");
		d->offset = off;
		d->resolved = true;
		return 0;
	}
	/* SYMBOL[+OFFS] */
	tmp = strpbrk(arg, "+-");
	if (tmp) {
		int64_t so;

		if (k_strtol(tmp, &so) || so < 0)
			return perr(c, (int)(tmp - w), EINVAL, "Invalid symbol offset");
		d->symoff = (long)so;
		*tmp = '\0';
	}
	if (!good_name(arg))
		return perr(c, (int)(arg - w), EINVAL, "Invalid probed address or symbol");
	if (d->kind == 'r' && d->symoff)
		return perr(c, (int)(arg - w), EINVAL, "Return probe must be used without offset.");
	d->symbol = strdup(arg);
	if (!d->symbol)
		return pfail(c, ENOMEM, "out of memory");
	d->entry = d->symoff == 0;
	if (c->res && c->res->symbol) {
		uint64_t vaddr, size;

		if (c->res->symbol(c->res->data, d->path, d->symbol, &vaddr, &off, &size) < 0)
			return perr(c, (int)(arg - w), ENOENT, "Failed to find the given symbol");
		d->offset = off + (uint64_t)d->symoff;
		d->resolved = true;
	}
	return 0;
}

static void made_up_name(struct utrace__probe_def *d)
{
	const char *base = strrchr(d->path, '/');
	char tail[UTRACE_PROBE_NAME_MAX];

	base = base ? base + 1 : d->path;
	snprintf(tail, sizeof(tail), "%s", base);
	tail[strcspn(tail, ".-_")] = '\0';
	char ev[3 * UTRACE_PROBE_NAME_MAX];

	if (d->symbol)
		snprintf(ev, sizeof(ev), "p_%s_%ld", d->symbol, d->symoff);
	else
		snprintf(ev, sizeof(ev), "p_%s_0x%" PRIx64, tail, d->offset);
	/* the kernel's snprintf into MAX_EVENT_NAME_LEN bytes */
	snprintf(d->event, UTRACE_PROBE_NAME_MAX, "%.*s", UTRACE_PROBE_NAME_MAX - 1, ev);
	d->auto_name = true;
}

static int parse_delete(struct pctx *c, enum utrace__probe_cmd *cmd)
{
	struct utrace__probe_def *d = c->def;
	const char *w = c->words[0], *slash;

	if (w[1] != ':')
		return pfail(c, EINVAL, "'-' must be followed by ':[GROUP/]EVENT'");
	w += 2;
	slash = strchr(w, '/');
	if (slash) {
		if ((size_t)(slash - w) > UTRACE_PROBE_NAME_MAX ||
		    strlen(slash + 1) > UTRACE_PROBE_NAME_MAX)
			return pfail(c, ENOENT, "no such event");
		memcpy(d->group, w, (size_t)(slash - w));
		d->group[slash - w] = '\0';
		strcpy(d->event, slash + 1);
	} else {
		if (!*w)
			return pfail(c, EINVAL, "no event named after '-:'");
		if (strlen(w) > UTRACE_PROBE_NAME_MAX)
			return pfail(c, ENOENT, "no such event");
		strcpy(d->event, w);
	}
	*cmd = UTRACE__PROBE_DEL;
	return 0;
}

int utrace__probe_parse(const char *line, const struct utrace__probe_resolver *res,
			enum utrace__probe_cmd *cmd, struct utrace__probe_def **out,
			struct utrace__probe_error *err)
{
	struct pctx c = { .err = err, .res = res };
	struct utrace__probe_def *d;
	char *buf = strdup(line);
	int r;

	memset(err, 0, sizeof(*err));
	*cmd = UTRACE__PROBE_NONE;
	*out = NULL;
	if (!buf)
		return -ENOMEM;
	d = calloc(1, sizeof(*d));
	if (!d) {
		free(buf);
		return -ENOMEM;
	}
	c.def = d;
	r = split(&c, buf);
	if (r) {
		pfail(&c, E2BIG, "too many arguments");
		goto fail;
	}
	if (!c.nr) {
		r = 0;
		goto fail;   /* nothing to do */
	}
	if (c.words[0][0] == '-') {
		r = parse_delete(&c, cmd);
		if (r)
			goto fail;
		*out = d;
		free(buf);
		return 0;
	}
	if (c.words[0][0] != 'p' && c.words[0][0] != 'r') {
		r = pfail(&c, EINVAL, "a definition starts with 'p', 'r' or '-'");
		goto fail;
	}
	d->kind = c.words[0][0];
	if (c.nr < 2) {
		r = pfail(&c, EINVAL, "no place to probe");
		goto fail;
	}
	if (c.nr - 2 > UTRACE_PROBE_MAX_ARGS) {
		r = pfail(&c, E2BIG, "too many arguments");
		goto fail;
	}
	c.index = 1;
	r = parse_place(&c, c.words[1]);
	if (r)
		goto fail;
	c.index = 0;
	strcpy(d->group, UTRACE_PROBE_DEFAULT_GROUP);
	if (c.words[0][1] == ':') {
		r = parse_event_name(&c, c.words[0] + 2, 2);
		if (r)
			goto fail;
	}
	if (!d->event[0])
		made_up_name(d);
	d->nr_args = (unsigned int)c.nr - 2;
	d->args = calloc(d->nr_args ? d->nr_args : 1, sizeof(*d->args));
	if (!d->args) {
		r = pfail(&c, ENOMEM, "out of memory");
		goto fail;
	}
	for (unsigned int i = 0; i < d->nr_args; i++) {
		c.index = (int)i + 2;
		r = parse_arg(&c, i, c.words[i + 2]);
		if (r)
			goto fail;
	}
	r = layout(d);
	if (r) {
		pfail(&c, -r, r == -E2BIG ? "the record would be too large" : "out of memory");
		goto fail;
	}
	*cmd = UTRACE__PROBE_ADD;
	*out = d;
	free(buf);
	return 0;
fail:
	free(buf);
	utrace__probe_def_free(d);
	*cmd = UTRACE__PROBE_NONE;
	return r;
}

void utrace__probe_def_free(struct utrace__probe_def *d)
{
	if (!d)
		return;
	for (unsigned int i = 0; d->args && i < d->nr_args; i++) {
		free(d->args[i].name);
		free(d->args[i].comm);
		free(d->args[i].data);
		free(d->args[i].sym);
	}
	free(d->args);
	free(d->fields);
	free(d->print_fmt);
	free(d->path);
	free(d->symbol);
	free(d);
}

bool utrace__probe_same_args(const struct utrace__probe_def *a,
			     const struct utrace__probe_def *b)
{
	if (a->kind != b->kind || a->nr_args != b->nr_args)
		return false;
	for (unsigned int i = 0; i < a->nr_args; i++) {
		const struct utrace__probe_arg *x = &a->args[i], *y = &b->args[i];

		if (strcmp(x->name, y->name) || x->type != y->type || x->count != y->count ||
		    x->bf_width != y->bf_width || x->bf_offset != y->bf_offset)
			return false;
	}
	return true;
}

char *utrace__probe_canonical(const struct utrace__probe_def *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *b = open_memstream(&text, &len);

	if (!b)
		return NULL;
	fprintf(b, "%c:%s/%s %s:", d->kind, d->group, d->event, d->path);
	if (d->resolved)
		fprintf(b, "0x%016" PRIx64, d->offset);
	else
		fprintf(b, "%s+%ld", d->symbol, d->symoff);
	if (d->refctr)
		fprintf(b, "(0x%" PRIx64 ")", d->refctr);
	for (unsigned int i = 0; i < d->nr_args; i++)
		fprintf(b, " %s=%s", d->args[i].name, d->args[i].comm);
	if (ferror(b) | fclose(b)) {
		free(text);
		return NULL;
	}
	return text;
}

char *utrace__probe_log_text(const struct utrace__probe_error *err)
{
	char *s = NULL;

	if (asprintf(&s, "trace_uprobe: error: %s\n  Command: %s\n%*s^\n", err->msg,
		     err->command, 11 + err->pos, "") < 0)
		return NULL;
	return s;
}

char *utrace__probe_error_text(const char *who, const char *line, int r,
			       const struct utrace__probe_error *err)
{
	char *log = err->logged ? utrace__probe_log_text(err) : NULL, *s = NULL;
	int n;

	if (err->logged && !log)
		return NULL;
	if (log)
		n = asprintf(&s, "%s: %s", who, log);
	else
		n = asprintf(&s, "%s: '%s': %s\n", who, line, err->msg[0] ? err->msg : strerror(-r));
	free(log);
	return n < 0 ? NULL : s;
}

/* ---- globs: one definition for each matching function ---- */

/* Where the place word and, in it, the SYMBOL are; false: no SYMBOL. */
static bool glob_span(const char *line, size_t *w1, size_t *w1_end, size_t *sym,
		      size_t *sym_end)
{
	const char *ws = " \t\n";
	size_t i = strspn(line, ws), k, depth = 0;

	if (line[i] != 'p' && line[i] != 'r')
		return false;
	i += strcspn(line + i, ws);
	i += strspn(line + i, ws);
	if (!line[i])
		return false;
	*w1 = i;
	*w1_end = i + strcspn(line + i, ws);
	*sym = *w1;
	for (k = *w1; k < *w1_end; k++)
		if (line[k] == ':')
			*sym = k + 1;
	/* to the +OFFS, %return or (REFCTR); a '-' inside [...] is a range */
	for (k = *sym; k < *w1_end; k++) {
		if (line[k] == '[')
			depth = 1;
		else if (line[k] == ']')
			depth = 0;
		else if (!depth && strchr("+-%(", line[k]))
			break;
	}
	*sym_end = k;
	return *sym_end > *sym;
}

bool utrace__probe_is_glob(const char *line)
{
	size_t w1, w1_end, sym, sym_end;

	if (!glob_span(line, &w1, &w1_end, &sym, &sym_end))
		return false;
	for (size_t k = sym; k < sym_end; k++)
		if (strchr("*?[", line[k]))
			return true;
	return false;
}

struct glob_match {
	char *name;
	uint64_t vaddr;
};

struct glob_walk {
	const char *glob;
	struct glob_match *m;
	size_t n, cap;
	int err;
};

static int glob_one(void *arg, const char *name, uint64_t vaddr)
{
	struct glob_walk *w = arg;
	size_t l = strcspn(name, "@");
	char buf[256];

	if (l >= sizeof(buf))
		return 0;
	memcpy(buf, name, l);
	buf[l] = '\0';
	if (!good_name(buf) || fnmatch(w->glob, buf, 0))
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 64;
		struct glob_match *m = realloc(w->m, cap * sizeof(*m));

		if (!m) {
			w->err = -ENOMEM;
			return 1;
		}
		w->m = m;
		w->cap = cap;
	}
	w->m[w->n].name = strdup(buf);
	if (!w->m[w->n].name) {
		w->err = -ENOMEM;
		return 1;
	}
	w->m[w->n++].vaddr = vaddr;
	return 0;
}

static int match_cmp(const void *a, const void *b)
{
	const struct glob_match *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int expand_fail(struct utrace__probe_error *err, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int expand_fail(struct utrace__probe_error *err, int e, const char *fmt, ...)
{
	va_list ap;

	err->err = -e;
	err->logged = false;
	err->pos = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -e;
}

void utrace__probe_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i]);
	free(lines);
}

int utrace__probe_expand(const char *line, const struct utrace__probe_resolver *res,
			 char ***lines, size_t *n, struct utrace__probe_error *err)
{
	size_t w1, w1_end, sym, sym_end, k, out = 0;
	char obj[PATH_MAX], path[PATH_MAX], glob[256];
	struct glob_walk w = { .glob = glob };
	char **l = NULL;
	int r;

	memset(err, 0, sizeof(*err));
	snprintf(err->command, sizeof(err->command), "%s", line + strspn(line, " \t\n"));
	*lines = NULL;
	*n = 0;
	if (!glob_span(line, &w1, &w1_end, &sym, &sym_end))
		return expand_fail(err, EINVAL, "no place to probe");
	if (sym_end - sym >= sizeof(glob) || (sym > w1 ? sym - 1 - w1 : 0) >= sizeof(obj))
		return expand_fail(err, EINVAL, "the glob is too long");
	memcpy(glob, line + sym, sym_end - sym);
	glob[sym_end - sym] = '\0';
	k = sym > w1 ? sym - 1 - w1 : 0;
	memcpy(obj, line + w1, k);
	obj[k] = '\0';
	if (strchr(obj, '/') || !obj[0])
		snprintf(path, sizeof(path), "%s", obj);
	else if (!res || !res->object || res->object(res->data, obj, path, sizeof(path)) < 0)
		return expand_fail(err, ENOENT, "'%s': no object %.100s here", glob, obj);
	if (!res || !res->functions)
		return expand_fail(err, EINVAL, "'%s': globs are not expanded here", glob);
	r = res->functions(res->data, path, glob_one, &w);
	if (!r)
		r = w.err;
	if (r < 0) {
		r = expand_fail(err, -r, "'%s': cannot read the functions of %.120s: %s", glob,
				obj[0] ? obj : "the program", strerror(-r));
		goto done;
	}
	if (!w.n) {
		r = expand_fail(err, ENOENT, "no function of %.80s matches '%s'",
				obj[0] ? obj : "the program", glob);
		/* in the process's error_log, the caret under the glob */
		err->logged = true;
		err->pos = (int)(sym - strspn(line, " \t\n"));
		goto done;
	}
	qsort(w.m, w.n, sizeof(*w.m), match_cmp);
	l = calloc(w.n, sizeof(*l));
	if (!l) {
		r = expand_fail(err, ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k < w.n; k++) {
		/* one name per address (open, open64: one probe) */
		if (k && w.m[k].vaddr == w.m[k - 1].vaddr)
			continue;
		if (asprintf(&l[out], "%.*s%s%s", (int)sym, line, w.m[k].name,
			     line + sym_end) < 0) {
			l[out] = NULL;
			utrace__probe_lines_free(l, out);
			l = NULL;
			r = expand_fail(err, ENOMEM, "out of memory");
			goto done;
		}
		out++;
	}
	*lines = l;
	*n = out;
	r = 0;
done:
	for (k = 0; k < w.n; k++)
		free(w.m[k].name);
	free(w.m);
	return r;
}
