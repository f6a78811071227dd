/* SPDX-License-Identifier: MIT */
/*
 * The formats of a trace file as the printer uses them (formats.h).
 *
 * Event ids are per process, libtraceevent's are per handle; so one
 * handle holds every distinct format of the file once (the same program
 * traced in fifty processes is parsed once), each under an id of our own,
 * and each record is copied, its common_type set to that id, before it is
 * printed.  The copy also gives the record aligned memory with zeroed
 * bytes after it.
 *
 * libtraceevent 1.7.1 trusts the record: __get_str() reads to the first
 * NUL wherever its __data_loc points, __print_array() and __print_hex()
 * read as many elements as the record's own count says, REC->a[REC->i]
 * and REC->a / REC->b use the record's values.  So before a record goes to
 * it, check_record() checks it against its format: every field inside the
 * record, every __data_loc inside the record, and for the print fmt's
 * arguments that read data (found once per format by plan_args()) the
 * same values libtraceevent will compute, with its own arithmetic
 * (eval()), inside the record.  A record that fails is left out with one
 * message; a format libtraceevent cannot print safely is refused whole.
 *
 * Its parser trusts the text too (__print_symbolic(REC->no_such_field, ...)
 * is a NULL dereference in 1.7.1), so each format is first parsed in a
 * child process, from the same state; only a format the child parsed
 * without dying is parsed here (parse_safely()).
 *
 * Before 1.8.4 it printed __print_array() as "1 2 3" where the kernel
 * prints "{0x1,0x2,0x3}".  So each __print_array() node of a parsed print
 * fmt becomes an atom (a "%s" argument that prints its text), and the
 * record's check writes the kernel's text there (array_text()): every
 * version prints what the kernel and UTRACE_PRINT print.  The node is
 * put back before tep_free() frees it.
 *
 * libtraceevent 1.7.1 knows a few of the kernel's %p extensions, some
 * only for some arguments, and none of %*pb, %*pbl, %pE, %pISf; %pS
 * prints no size.  So before parsing, the print fmt's %p<ext>
 * conversions become "%s" (pext_rewrite()), their arguments atoms, and
 * the record's check writes the kernel's text there with the renderers
 * UTRACE_PRINT uses (common/pfmt.c; pext_text()).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event-parse.h>

#include "filter.h"
#include "formats.h"
#include "probe.h"
#include "hash.h"
#include "pfmt.h"
#include "problems.h"

#define MAX_DEPTH 64             /* of a print fmt's argument tree */
#define MAX_FIELD_END (1 << 20)
#define MAX_WIDTH 4096           /* of a printf conversion of the print fmt */

enum check_kind { CK_STRING, CK_MASK, CK_HEX, CK_INT_ARRAY, CK_INDEX, CK_DIVISOR,
		  CK_WIDTH, CK_PEXT };

struct utrace__check {
	enum check_kind kind;
	struct tep_print_arg *arg;
	struct tep_format_field *field;  /* CK_STRING, CK_MASK */
	/* CK_INT_ARRAY once the node is an atom: its own arguments, and
	 * the text it prints (the atom) */
	struct tep_print_arg_int_array array;
	char *text;
	size_t text_cap;
	/* CK_PEXT: a %p extension; arg (and star, its '*' width) are atoms,
	 * their nodes as parsed kept here */
	struct utrace__pext pext;
	int width;                       /* written in the format, or -1 */
	struct tep_print_arg value, *star, star_node;
};

/* The first problem is described, the others counted. */
void utrace__fmts_problem(struct utrace__fmts *sc, const char *fmt, ...)
{
	va_list ap;

	if (sc->capture) {       /* a vetter: the caller says it */
		va_start(ap, fmt);
		vsnprintf(sc->capture, sc->capture_len, fmt, ap);
		va_end(ap);
		return;
	}
	va_start(ap, fmt);
	utrace__vproblem(&sc->pr, fmt, ap);
	va_end(ap);
}

struct utrace__fmt *utrace__fmts_get(struct utrace__fmts *sc, struct utrace__tf_format *f)
{
	struct utrace__fmt *e;
	size_t pos, i;
	uint64_t h;

	if (f->priv)
		return f->priv;
	h = utrace__hash_str(utrace__hash_str(utrace__hash_str(UTRACE_HASH_INIT, f->system),
						 f->name), f->body);
	pos = utrace__table_start(&sc->index, h);
	while (utrace__table_next(&sc->index, h, &pos, &i)) {
		e = sc->all[i];
		if (!strcmp(e->system, f->system) && !strcmp(e->name, f->name) &&
		    !strcmp(e->body, f->body)) {
			f->priv = e;
			return e;
		}
	}
	if (sc->nr == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 128;
		struct utrace__fmt **na = realloc(sc->all, cap * sizeof(*na));

		if (!na)
			return NULL;
		sc->all = na;
		sc->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->hash = h;
	e->system = f->system;
	e->name = f->name;
	e->body = f->body;
	e->first = f;
	e->selected = !sc->select || sc->select(sc->select_arg, f->system, f->name);
	if (utrace__table_add(&sc->index, h, sc->nr) < 0) {
		free(e);
		return NULL;
	}
	sc->all[sc->nr++] = e;
	f->priv = e;
	return e;
}

static void efmt_free(struct utrace__fmt *e)
{
	size_t i;

	/* libtraceevent frees the nodes: give back what it made */
	for (i = 0; i < e->nr_checks; i++) {
		struct utrace__check *c = &e->checks[i];

		if (c->text && (c->kind == CK_PEXT || c->kind == CK_MASK)) {
			struct tep_print_arg *next = c->arg->next;

			*c->arg = c->value;
			c->arg->next = next;
			if (c->star) {
				next = c->star->next;
				*c->star = c->star_node;
				c->star->next = next;
			}
			free(c->text);
		} else if (c->text) {
			c->arg->type = TEP_PRINT_INT_ARRAY;
			c->arg->int_array = c->array;
			free(c->text);
		}
	}
	utrace__filter_free(e->filter);
	utrace__probe_def_free(e->probe);
	free(e->vet_why);
	free(e->checks);
	free(e->dyn);
	free(e);
}

static int add_check(struct utrace__fmt *e, enum check_kind kind, struct tep_print_arg *arg,
		     struct tep_format_field *field)
{
	if (e->nr_checks == e->cap_checks) {
		size_t c = e->cap_checks ? e->cap_checks * 2 : 8;
		struct utrace__check *n = realloc(e->checks, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		e->checks = n;
		e->cap_checks = c;
	}
	e->checks[e->nr_checks++] = (struct utrace__check){ .kind = kind, .arg = arg,
							    .field = field };
	return 0;
}

/* The __print_array() nodes become atoms (see the top of the file); a
 * node left as it is (no memory) prints as libtraceevent prints it. */
static void arrays_as_atoms(struct utrace__fmt *e)
{
	size_t i;

	for (i = 0; i < e->nr_checks; i++) {
		struct utrace__check *c = &e->checks[i];

		if ((c->kind == CK_INT_ARRAY ||
		     (c->kind == CK_MASK && c->arg->type == TEP_PRINT_CPUMASK)) &&
		    (c->text = calloc(1, 64))) {
			c->text_cap = 64;
			if (c->kind == CK_INT_ARRAY)
				c->array = c->arg->int_array;
			else
				c->value = *c->arg;
			c->arg->type = TEP_PRINT_ATOM;
			c->arg->atom.atom = c->text;
		}
	}
}

/*
 * Find the print fmt's arguments that read the record beyond a field's
 * own bytes, and refuse what libtraceevent 1.7.1 cannot print safely
 * whatever the record holds.  Returns 0, or sets e->refused.
 */
static int plan_args(struct utrace__fmt *e, struct tep_print_arg *a, int depth)
{
	struct tep_print_arg *f;
	int r = 0;

	if (!a)
		return 0;
	if (depth > MAX_DEPTH) {
		e->refused = "its print fmt is nested too deeply";
		return -1;
	}
	switch (a->type) {
	case TEP_PRINT_FIELD:
		if (!a->field.field)
			a->field.field = tep_find_any_field(e->ev, a->field.name);
		return 0;
	case TEP_PRINT_FLAGS:
		return plan_args(e, a->flags.field, depth + 1);
	case TEP_PRINT_SYMBOL:
		return plan_args(e, a->symbol.field, depth + 1);
	case TEP_PRINT_HEX:
	case TEP_PRINT_HEX_STR:
	case TEP_PRINT_INT_ARRAY:
		f = a->type == TEP_PRINT_INT_ARRAY ? a->int_array.field : a->hex.field;
		if (!f || (f->type != TEP_PRINT_FIELD && f->type != TEP_PRINT_DYNAMIC_ARRAY)) {
			e->refused = "its print fmt gives __print_hex() or __print_array() "
				     "something other than a field";
			return -1;
		}
		if (add_check(e, a->type == TEP_PRINT_INT_ARRAY ? CK_INT_ARRAY : CK_HEX,
			      a, NULL))
			return -ENOMEM;
		r = plan_args(e, f, depth + 1);
		if (!r && a->type == TEP_PRINT_INT_ARRAY)
			r = plan_args(e, a->int_array.count, depth + 1) ?:
			    plan_args(e, a->int_array.el_size, depth + 1);
		else if (!r)
			r = plan_args(e, a->hex.size, depth + 1);
		return r;
	case TEP_PRINT_TYPE:
		return plan_args(e, a->typecast.item, depth + 1);
	case TEP_PRINT_STRING:
		if (!a->string.field)
			a->string.field = tep_find_any_field(e->ev, a->string.string);
		if (!a->string.field)
			return 0;        /* printed as nothing */
		return add_check(e, CK_STRING, a, a->string.field);
	case TEP_PRINT_BITMASK:
	case TEP_PRINT_CPUMASK:
		if (!a->bitmask.field)
			a->bitmask.field = tep_find_any_field(e->ev, a->bitmask.bitmask);
		if (!a->bitmask.field) {
			if (a->type == TEP_PRINT_BITMASK)
				return 0;
			e->refused = "its print fmt uses __get_cpumask() of an unknown field";
			return -1;
		}
		return add_check(e, CK_MASK, a, a->bitmask.field);
	case TEP_PRINT_DYNAMIC_ARRAY:
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
		if (!a->dynarray.field) {
			e->refused = "its print fmt uses a dynamic array of no field";
			return -1;
		}
		if (a->type == TEP_PRINT_DYNAMIC_ARRAY_LEN &&
		    (a->dynarray.field->flags & TEP_FIELD_IS_RELATIVE)) {
			e->refused = "its print fmt takes __get_dynamic_array_len() of a "
				     "__rel_loc field";
			return -1;
		}
		return 0;
	case TEP_PRINT_OP:
		if (!a->op.op) {
			e->refused = "its print fmt has an operator without a name";
			return -1;
		}
		if (!strcmp(a->op.op, "[")) {
			if (add_check(e, CK_INDEX, a, NULL))
				return -ENOMEM;
		} else if (!strcmp(a->op.op, "/") || !strcmp(a->op.op, "%")) {
			if (add_check(e, CK_DIVISOR, a, NULL))
				return -ENOMEM;
		} else if (!strcmp(a->op.op, "?") &&
			   (!a->op.right || a->op.right->type != TEP_PRINT_OP)) {
			e->refused = "its print fmt has a '?' without ':'";
			return -1;
		}
		return plan_args(e, a->op.left, depth + 1) ?:
		       plan_args(e, a->op.right, depth + 1);
	case TEP_PRINT_FUNC:
		e->refused = "its print fmt calls a function";
		return -1;
	default:
		return 0;
	}
}

/*
 * The print fmt's printf conversions, walked as libtraceevent's
 * parse_args() walks them, to find the arguments that give a width or a
 * precision ('*'): one from the record must be 0 .. MAX_WIDTH (a negative
 * one makes libtraceevent pass printf one argument too few, a huge one
 * makes it build a huge line).  Written widths must be no more than that.
 */
static int plan_widths(struct utrace__fmt *e)
{
	const char *f = e->ev->print_fmt.format;
	struct tep_print_arg *arg = e->ev->print_fmt.args;
	long len;

	if (!f)
		return 0;
	len = (long)strlen(f);
	while (*f) {
		long ret = 0;

		if (*f == '%' && f[1] != '%') {          /* parse_arg_format() */
			struct tep_print_arg *len_arg = NULL;
			const char *c = f + 1;
			unsigned long num = 0;

			ret = 1;
			for (; *c; c++, ret++) {
				if (*c >= '0' && *c <= '9') {
					num = num * 10 + (unsigned long)(*c - '0');
					if (num > MAX_WIDTH) {
						e->refused = "its print fmt has a field width or "
							     "precision over 4096";
						return -1;
					}
					continue;
				}
				if (*c == '.' || *c == '-') {
					num = 0;
					continue;
				}
				if (strchr("#hlLzZ", *c))
					continue;
				if (*c == '*') {
					if (!arg || len_arg)
						break;
					len_arg = arg;
					arg = arg->next;
					continue;
				}
				if (strchr("pduixXos", *c)) {
					if (!arg)
						break;
					if (len_arg && add_check(e, CK_WIDTH, len_arg, NULL))
						return -ENOMEM;
					arg = arg->next;
				}
				ret++;
				break;
			}
		} else {                                 /* parse_arg_string() */
			for (; *f; f++, ret++) {
				if (*f == '\\') {
					f++;
					ret++;
					if (!*f)
						break;
				} else if (*f == '%') {
					if (f[1] != '%')
						break;
					f++;
					ret++;
				}
			}
			f -= ret;
		}
		len -= ret;
		if (len <= 0 || ret <= 0)
			break;
		f += ret;
	}
	return 0;
}

/* --- the kernel's %p extensions (see the top of the file) --- */

#define MAX_PCONV 64

/* A %p<ext> conversion of a print fmt, as pext_rewrite() found it. */
struct pconv {
	unsigned int argno;              /* its argument's place in the list */
	int star;                        /* the '*' width's place, or -1 */
	int width;                       /* a written width, or -1 */
	struct utrace__pext x;
};

/*
 * The format text with each %p<ext> libtraceevent should not print
 * replaced: "%-20pS" becomes "%-20s" (the kernel pads these texts as
 * strings), "%*pbl" becomes "%s%s" (the width is a bit count: its
 * argument becomes an empty atom), "%pI4" becomes "%s".  Plain %p and
 * %px stay.  Returns the new text (malloc) or NULL when there is nothing
 * to replace; *nr the conversions found.
 */
static char *pext_rewrite(const char *body, struct pconv *pc, size_t *nr)
{
	const char *start = strstr(body, "print fmt: \""), *f;
	unsigned int argno = 0;
	size_t len, o = 0;
	char *out;

	*nr = 0;
	if (!start)
		return NULL;
	len = strlen(body);
	out = malloc(len * 2 + 16);
	if (!out)
		return NULL;
	f = start + strlen("print fmt: \"");
	memcpy(out, body, (size_t)(f - body));
	o = (size_t)(f - body);
	while (*f && *f != '"') {
		const char *pct = f, *c, *wstart, *wend;
		int star = -1, width = -1;
		struct utrace__pext x;

		if (*f == '\\' && f[1]) {
			out[o++] = *f++;
			out[o++] = *f++;
			continue;
		}
		if (*f != '%') {
			out[o++] = *f++;
			continue;
		}
		if (f[1] == '%') {
			out[o++] = *f++;
			out[o++] = *f++;
			continue;
		}
		c = f + 1;
		while (*c && strchr("-+ #0", *c))
			c++;
		wstart = c;
		if (*c == '*') {
			star = (int)argno++;
			c++;
		} else if (*c >= '1' && *c <= '9') {
			width = (int)strtol(c, (char **)&c, 10);
		}
		if (*c == '.') {
			c++;
			if (*c == '*') {
				argno++;
				c++;
			} else {
				while (*c >= '0' && *c <= '9')
					c++;
			}
		}
		wend = c;
		while (*c && strchr("hlLzZqjt", *c))
			c++;
		if (!*c || *c == '"') {
			f = c;
			memcpy(out + o, pct, (size_t)(c - pct));
			o += (size_t)(c - pct);
			continue;
		}
		if (*c != 'p') {
			if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))
				argno++;
			c++;
			memcpy(out + o, pct, (size_t)(c - pct));
			o += (size_t)(c - pct);
			f = c;
			continue;
		}
		c++;
		c += utrace__pext_parse(c, &x);
		if (x.kind == UTRACE__PEXT_POINTER || x.kind == UTRACE__PEXT_RAW ||
		    *nr >= MAX_PCONV) {
			memcpy(out + o, pct, (size_t)(c - pct));
			o += (size_t)(c - pct);
			argno++;
			f = c;
			continue;
		}
		if (utrace__pext_padded(&x)) {
			/* flags, width and precision as written */
			memcpy(out + o, pct, (size_t)(wend - pct));
			o += (size_t)(wend - pct);
			out[o++] = 's';
			star = -1;       /* stays a string width */
		} else {
			memcpy(out + o, star >= 0 ? "%s%s" : "%s", star >= 0 ? 4 : 2);
			o += star >= 0 ? 4 : 2;
		}
		(void)wstart;
		pc[*nr] = (struct pconv){ argno, star, width, x };
		(*nr)++;
		argno++;
		f = c;
	}
	len = strlen(f);
	memcpy(out + o, f, len + 1);
	if (!*nr) {
		free(out);
		return NULL;
	}
	return out;
}

static char empty_atom[1];

/* After parsing: the arguments of the conversions pext_rewrite() changed
 * become atoms; their nodes are kept in the checks. */
static int pext_as_atoms(struct utrace__fmt *e, const struct pconv *pc, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		struct tep_print_arg *a = e->ev->print_fmt.args, *star = NULL;
		struct utrace__check *c;
		unsigned int k;

		for (k = 0; a && k < pc[i].argno; k++, a = a->next)
			if (pc[i].star >= 0 && k == (unsigned int)pc[i].star)
				star = a;
		if (!a || (pc[i].star >= 0 && !star))
			continue;
		if (add_check(e, CK_PEXT, a, NULL))
			return -ENOMEM;
		c = &e->checks[e->nr_checks - 1];
		c->text_cap = 64;
		c->text = calloc(1, c->text_cap);
		if (!c->text) {
			e->nr_checks--;
			return -ENOMEM;
		}
		c->pext = pc[i].x;
		c->width = pc[i].width;
		c->value = *a;
		a->type = TEP_PRINT_ATOM;
		a->atom.atom = c->text;
		if (star) {
			c->star = star;
			c->star_node = *star;
			star->type = TEP_PRINT_ATOM;
			star->atom.atom = empty_atom;
		}
	}
	return 0;
}

static const char dummy_format[] =
	"name: utrace_script\nID: 0\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\nprint fmt: \"\"\n";

int utrace__fmts_init(struct utrace__fmts *sc, struct utrace__tf *tf)
{
	sc->tf = tf;
	sc->name = utrace__tf_name(tf);
	sc->next_id = 1;
	sc->syms = utrace__tf_sym_lookup;
	sc->tep = tep_alloc();
	if (!sc->tep)
		return -ENOMEM;
	tep_set_long_size(sc->tep, 8);
	tep_set_page_size(sc->tep, (int)utrace__tf_page_size(sc->tf));
	tep_set_file_bigendian(sc->tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(sc->tep, TEP_LITTLE_ENDIAN);
	/* libtraceevent finds common_type through its lowest-numbered
	 * event: make that one we know, not one from the file. */
	if (tep_parse_event(sc->tep, dummy_format, sizeof(dummy_format) - 1, "utrace"))
		return -EINVAL;
	return 0;
}

void utrace__fmts_fini(struct utrace__fmts *sc)
{
	size_t i;

	for (i = 0; i < sc->nr; i++)
		efmt_free(sc->all[i]);
	free(sc->all);
	utrace__table_free(&sc->index);
	free(sc->scratch);
	if (sc->tep)
		tep_free(sc->tep);
	memset(sc, 0, sizeof(*sc));
}

static int check_fields(struct utrace__fmt *e, struct tep_format_field *f, bool common)
{
	for (; f; f = f->next) {
		uint32_t end;

		if (f->offset < 0 || f->size < 0 || f->offset > MAX_FIELD_END ||
		    f->size > MAX_FIELD_END - f->offset) {
			e->refused = "a field's offset or size is out of range";
			return -1;
		}
		end = (uint32_t)(f->offset + f->size);
		if (common && !strcmp(f->name, "common_type") &&
		    (f->offset != 0 || f->size != 2)) {
			e->refused = "its common_type is not 2 bytes at offset 0";
			return -1;
		}
		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			struct tep_format_field **n = realloc(e->dyn, (e->nr_dyn + 1) *
							      sizeof(*n));

			if (!n)
				return -ENOMEM;
			e->dyn = n;
			e->dyn[e->nr_dyn++] = f;
		}
		if (end > e->fixed_end) {
			e->fixed_end = end;
			e->last_field = f;
		}
	}
	return 0;
}

/* For the fuzz target: quiet sanitizer deaths in the child, and a cache of
 * verdicts (a fork per format per input would make fuzzing crawl). */
void (*utrace__parse_child_hook)(void);
int (*utrace__parse_verdict_get)(const char *text, const char *sys);
void (*utrace__parse_verdict_put)(const char *text, const char *sys, int verdict);

/*
 * Would tep_parse_event() survive this text?  Ask a child, which inherits
 * the handle and libtraceevent's global parser state, so its fate is ours.
 * 0: it parsed (well or not) and lived; -1: it died, hung, or no child.
 */
static int parse_safely(struct utrace__fmts *sc, const char *text, size_t len, const char *sys)
{
	struct rlimit no_core = { 0, 0 };
	int status, fd, v;
	pid_t pid, w;

	if (utrace__parse_verdict_get && (v = utrace__parse_verdict_get(text, sys)) != 1)
		return v;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, 2);
		setrlimit(RLIMIT_CORE, &no_core);
		if (utrace__parse_child_hook)
			utrace__parse_child_hook();
		signal(SIGALRM, SIG_DFL);
		alarm(10);
		tep_parse_event(sc->tep, text, (unsigned long)len, sys);
		_exit(0);
	}
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	v = w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
	if (utrace__parse_verdict_put)
		utrace__parse_verdict_put(text, sys, v);
	return v;
}

/* Parse a format into the tep handle, under an id of our own. */
int utrace__fmts_parse(struct utrace__fmts *sc, struct utrace__fmt *e)
{
	const char *sys = e->system;
	struct pconv pc[MAX_PCONV];
	char *text = NULL, *body;
	size_t nr_pc = 0;
	enum tep_errno err;
	int n;

	e->state = -1;
	if (sc->next_id > 0xffff) {
		e->refused = "the file has more than 65535 distinct formats";
		return 0;
	}
	e->id = (uint16_t)sc->next_id++;
	body = pext_rewrite(e->body, pc, &nr_pc);
	n = asprintf(&text, "name: %s\nID: %u\n%s", e->name, e->id, body ? body : e->body);
	free(body);
	if (n < 0)
		return -ENOMEM;
	/* ftrace's own events get special handling that reads pointers
	 * out of the record; no utrace event is one of them. */
	if (!strcmp(sys, "ftrace"))
		sys = "ftrace (utrace)";
	if (parse_safely(sc, text, (size_t)n, sys) < 0) {
		free(text);
		e->refused = "libtraceevent crashes on it";
		utrace__fmts_problem(sc, "'%s': record at offset %llu: libtraceevent cannot use the "
			"format of '%s:%s' (pid %u, id %u): %s", sc->name,
			(unsigned long long)e->first->offset, e->system, e->name,
			e->first->proc->pid, e->first->id, e->refused);
		return 0;
	}
	err = tep_parse_event(sc->tep, text, (unsigned long)n, sys);
	free(text);
	e->ev = tep_find_event(sc->tep, e->id);
	if (err || !e->ev || (e->ev->flags & TEP_EVENT_FL_FAILED)) {
		char buf[256] = "libtraceevent cannot parse its print fmt";

		if (err)
			tep_strerror(sc->tep, err, buf, sizeof(buf));
		e->refused = "libtraceevent cannot parse it";
		utrace__fmts_problem(sc, "'%s': record at offset %llu: libtraceevent cannot use the "
			"format of '%s:%s' (pid %u, id %u): %s", sc->name,
			(unsigned long long)e->first->offset, e->system, e->name,
			e->first->proc->pid, e->first->id, buf);
		return 0;
	}
	n = check_fields(e, e->ev->format.common_fields, true);
	if (!n)
		n = check_fields(e, e->ev->format.fields, false);
	if (!n) {
		struct tep_print_arg *a;

		for (a = e->ev->print_fmt.args; a && !n; a = a->next)
			n = plan_args(e, a, 0);
		if (!n)
			n = plan_widths(e);
	}
	if (n == -ENOMEM)
		return -ENOMEM;
	if (n) {
		utrace__fmts_problem(sc, "'%s': record at offset %llu: the format of '%s:%s' (pid %u, "
			"id %u) cannot be printed safely: %s", sc->name,
			(unsigned long long)e->first->offset, e->system, e->name,
			e->first->proc->pid, e->first->id, e->refused);
		return 0;
	}
	arrays_as_atoms(e);
	if (pext_as_atoms(e, pc, nr_pc))
		return -ENOMEM;
	e->state = 1;
	return 0;
}

/* --- checking a record as libtraceevent will read it --- */

static void rec_fail(struct utrace__rec *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rec_fail(struct utrace__rec *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(r->why, r->whylen, fmt, ap);
	va_end(ap);
}

uint64_t utrace__read_num(const unsigned char *p, int size)
{
	uint8_t v1;
	uint16_t v2;
	uint32_t v4;
	uint64_t v8;

	switch (size) {
	case 1:
		memcpy(&v1, p, 1);
		return v1;
	case 2:
		memcpy(&v2, p, 2);
		return v2;
	case 4:
		memcpy(&v4, p, 4);
		return v4;
	case 8:
		memcpy(&v8, p, 8);
		return v8;
	default:
		return 0;
	}
}

/* libtraceevent's dynamic_offset_field(), value for value. */
static void dyn_offset(const struct utrace__rec *r, const struct tep_format_field *f,
		       uint32_t *offset, uint32_t *len)
{
	uint32_t size = r->size, o, l;
	uint64_t val;

	if ((int64_t)f->offset + f->size > (int64_t)size) {
		*offset = 0;
		*len = 0;
		return;
	}
	val = utrace__read_num(r->d + f->offset, f->size);
	o = (uint32_t)(val & 0xffff);
	if (f->size == 2)
		l = size - o;
	else
		l = (uint32_t)((val >> 16) & 0xffff);
	*offset = o > size ? 0 : o;
	*len = o + l > size ? 0 : l;
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		*offset += (uint32_t)(f->offset + f->size);
}

/* libtraceevent's eval_type_str() (casts only ever narrow). */
static uint64_t cast(uint64_t val, const char *type, int pointer)
{
	size_t len = strlen(type);
	char ref[128];

	if (len < 2)
		return val;
	if (pointer) {
		if (type[len - 1] != '*' || len - 2 >= sizeof(ref))
			return val;
		memcpy(ref, type, len - 2);
		ref[len - 2] = 0;
		return cast(val, ref, 0);
	}
	if (type[len - 1] == '*' || !strncmp(type, "struct", 6))
		return val;
	if (!strcmp(type, "u8") || !strcmp(type, "s8"))
		return val & 0xff;
	if (!strcmp(type, "u16") || !strcmp(type, "s16"))
		return val & 0xffff;
	if (!strcmp(type, "u32") || !strcmp(type, "s32"))
		return val & 0xffffffff;
	if (!strncmp(type, "unsigned ", 9))
		type += 9;
	if (!strcmp(type, "char"))
		return val & 0xff;
	if (!strcmp(type, "short"))
		return val & 0xffff;
	if (!strcmp(type, "int"))
		return val & 0xffffffff;
	return val;
}

static uint64_t eval(struct utrace__rec *r, struct tep_print_arg *a, int depth);

/* REC->a[i] or __get_dynamic_array(a)[i], as eval_num_arg() reads it. */
static uint64_t eval_index(struct utrace__rec *r, struct tep_print_arg *a, int depth)
{
	uint64_t right = eval(r, a->op.right, depth + 1), val;
	struct tep_print_arg *l = a->op.left, *typearg = NULL;
	uint32_t offset, len, field_size = 8;
	struct tep_format_field *f;

	while (l && l->type == TEP_PRINT_TYPE) {
		if (!typearg)
			typearg = l;
		l = l->typecast.item;
	}
	if (l && l->type == TEP_PRINT_DYNAMIC_ARRAY) {
		dyn_offset(r, l->dynarray.field, &offset, &len);
		offset += (uint32_t)right;
		if (l->dynarray.field->elementsize)
			field_size = l->dynarray.field->elementsize;
	} else if (l && l->type == TEP_PRINT_FIELD) {
		f = l->field.field;
		if (!f)
			return 0;
		field_size = f->elementsize;
		offset = (uint32_t)((uint64_t)f->offset + right * f->elementsize);
	} else {
		eval(r, a->op.left, depth + 1);
		return 0;        /* "unknown op" */
	}
	if ((uint64_t)offset + field_size > r->size) {
		rec_fail(r, "the print fmt's index %llu reads past the record's end "
			 "(%u bytes)", (unsigned long long)right, r->size);
		return 0;
	}
	val = utrace__read_num(r->d + offset, (int)field_size);
	if (typearg)
		val = cast(val, typearg->typecast.type, 1);
	return val;
}

/* libtraceevent's eval_num_arg(), checking what it reads. */
static uint64_t eval(struct utrace__rec *r, struct tep_print_arg *a, int depth)
{
	uint64_t left, right;
	uint32_t off, len;
	const char *op;

	if (!a || r->failed)
		return 0;
	if (depth > MAX_DEPTH) {
		rec_fail(r, "the print fmt is nested too deeply");
		return 0;
	}
	switch (a->type) {
	case TEP_PRINT_ATOM:
		return strtoull(a->atom.atom, NULL, 0);
	case TEP_PRINT_FIELD:
		if (!a->field.field ||
		    (int64_t)a->field.field->offset + a->field.field->size > (int64_t)r->size)
			return 0;
		return utrace__read_num(r->d + a->field.field->offset, a->field.field->size);
	case TEP_PRINT_TYPE:
		return cast(eval(r, a->typecast.item, depth + 1), a->typecast.type, 0);
	case TEP_PRINT_DYNAMIC_ARRAY_LEN:
		dyn_offset(r, a->dynarray.field, &off, &len);
		return len;
	case TEP_PRINT_DYNAMIC_ARRAY:
		rec_fail(r, "the print fmt uses an address (__get_dynamic_array) as a number");
		return 0;
	case TEP_PRINT_OP:
		break;
	default:
		return 0;
	}
	op = a->op.op;
	if (!strcmp(op, "["))
		return eval_index(r, a, depth);
	if (!strcmp(op, "?")) {
		left = eval(r, a->op.left, depth + 1);
		a = a->op.right;
		return eval(r, left ? a->op.left : a->op.right, depth + 1);
	}
	left = eval(r, a->op.left, depth + 1);
	right = eval(r, a->op.right, depth + 1);
	switch (op[0]) {
	case '!':
		return op[1] == 0 ? !right : op[1] == '=' ? left != right : 0;
	case '~':
		return ~right;
	case '|':
		return op[1] ? left || right : left | right;
	case '&':
		return op[1] ? left && right : left & right;
	case '<':
		return op[1] == 0 ? left < right : op[1] == '<' ? (right < 64 ? left << right : 0) :
		       op[1] == '=' ? left <= right : 0;
	case '>':
		return op[1] == 0 ? left > right : op[1] == '>' ? (right < 64 ? left >> right : 0) :
		       op[1] == '=' ? left >= right : 0;
	case '=':
		return op[1] == '=' ? left == right : 0;
	case '-':
		return left - right;
	case '+':
		return left + right;
	case '*':
		return left * right;
	case '/':
	case '%':
		if (!right) {
			rec_fail(r, "the print fmt divides by zero");
			return 0;
		}
		return op[0] == '/' ? left / right : left % right;
	default:
		return 0;
	}
}

/* Where __print_hex()/__print_array() start reading. */
static uint32_t array_base(struct utrace__rec *r, struct tep_print_arg *f, bool *none)
{
	uint32_t off, len;

	*none = false;
	if (f->type == TEP_PRINT_DYNAMIC_ARRAY) {
		dyn_offset(r, f->dynarray.field, &off, &len);
		return off;
	}
	if (!f->field.field)
		f->field.field = tep_find_any_field(r->e->ev, f->field.name);
	if (!f->field.field) {
		*none = true;            /* libtraceevent prints nothing */
		return 0;
	}
	return (uint32_t)f->field.field->offset;
}

/* Room for 'need' bytes of an atom's text; false (the record failed) when
 * there is no memory. */
static bool atom_room(struct utrace__rec *r, struct utrace__check *c, size_t need)
{
	char *t;

	if (need <= c->text_cap)
		return true;
	t = realloc(c->text, need);
	if (!t) {
		rec_fail(r, "out of memory");
		return false;
	}
	c->text = c->arg->atom.atom = t;
	c->text_cap = need;
	return true;
}

/* The kernel's trace_print_array_seq(): "{0x1,0x2}", each element in hex
 * as an unsigned number of its size, "BAD SIZE:N 0xB" for other sizes. */
static void array_text(struct utrace__rec *r, struct utrace__check *c,
		       const unsigned char *p, uint32_t n, int64_t size)
{
	size_t len = 0, need = 3 + (size_t)n * 28;
	uint32_t i;

	if (!atom_room(r, c, need))
		return;
	if (!p) {                /* no such field: libtraceevent prints nothing */
		c->text[0] = 0;
		return;
	}
	c->text[len++] = '{';
	for (i = 0; i < n; i++) {
		const char *sep = i ? "," : "";
		uint64_t v = (size == 1 || size == 2 || size == 4 || size == 8) ?
			utrace__read_num(p + (size_t)i * (size_t)size, (int)size) : 0;

		if (size == 1 || size == 2 || size == 4 || size == 8)
			len += (size_t)snprintf(c->text + len, c->text_cap - len, "%s0x%llx", sep,
						(unsigned long long)v);
		else if ((uint64_t)(p - r->d) + (uint64_t)i * (uint64_t)size < r->size)
			len += (size_t)snprintf(c->text + len, c->text_cap - len,
						"BAD SIZE:%lld 0x%x", (long long)size,
						p[(uint64_t)i * (uint64_t)size]);
	}
	c->text[len++] = '}';
	c->text[len] = 0;
}

/* The kernel's text of a %p extension for this record (CK_PEXT): the
 * bytes come from the record (an array field, a __data_loc array),
 * never from the address a number in it holds. */
static void pext_text(struct utrace__rec *r, struct utrace__check *c)
{
	struct tep_print_arg *v = &c->value;
	const struct utrace__pext *x = &c->pext;
	int width = c->width;
	const unsigned char *mem = NULL;
	uint32_t off = 0, len = 0;
	size_t need;

	if (c->star) {
		width = (int)eval(r, &c->star_node, 0);
		if (width < 0)
			width = -width;
	}
	need = utrace__pext_need(x, width);
	if (need * 4 + 128 > c->text_cap ||
	    (x->kind == UTRACE__PEXT_BITMAP && need * 8 * 3 + 128 > c->text_cap)) {
		size_t cap = need * 24 + 128;
		char *t = realloc(c->text, cap);

		if (!t) {
			rec_fail(r, "out of memory");
			return;
		}
		c->text = c->arg->atom.atom = t;
		c->text_cap = cap;
	}
	if (x->kind == UTRACE__PEXT_SYMBOL) {
		uint64_t addr = eval(r, v, 0);
		const char *name = NULL;
		uint64_t start = 0, size = 0;

		if (r->syms && r->syms(r->syms_ctx, r->proc, utrace__pext_lookup_addr(x, addr),
				       &name, &start, &size) < 0)
			name = NULL;
		utrace__pext_symbol(x, addr, name, start, size, c->text, c->text_cap);
		return;
	}
	while (v->type == TEP_PRINT_TYPE && v->typecast.item)
		v = v->typecast.item;
	if (v->type == TEP_PRINT_DYNAMIC_ARRAY && v->dynarray.field) {
		dyn_offset(r, v->dynarray.field, &off, &len);
		mem = r->d + off;
	} else if (v->type == TEP_PRINT_FIELD && v->field.field &&
		   (v->field.field->flags & TEP_FIELD_IS_ARRAY) &&
		   (int64_t)v->field.field->offset + v->field.field->size <= (int64_t)r->size) {
		off = (uint32_t)v->field.field->offset;
		len = (uint32_t)v->field.field->size;
		mem = r->d + off;
	}
	if ((x->kind == UTRACE__PEXT_HEX || x->kind == UTRACE__PEXT_ESCAPE) && !need) {
		c->text[0] = 0;
		return;
	}
	if (!mem) {
		/* a number: the address it held cannot be read here */
		const char *bad = utrace__pext_bad_pointer(eval(r, v, 0));

		snprintf(c->text, c->text_cap, "%s", bad ? bad : "(efault)");
		return;
	}
	/* the kernel reads on past a field into the record; not past it */
	if (len < need && (uint64_t)off + need <= r->size)
		len = (uint32_t)need;
	utrace__pext_render(x, width, mem, len, c->text, c->text_cap);
}

/* __get_cpumask(): the kernel prints it as a bitmask, "%*pb" of all its
 * bits (trace_print_bitmask_seq()); libtraceevent 1.7.1 as a CPU list. */
static void cpumask_text(struct utrace__rec *r, struct utrace__check *c,
			 const unsigned char *p, uint32_t len)
{
	struct utrace__pext x;
	size_t need = (size_t)len * 9 / 4 + 16;

	if (!atom_room(r, c, need))
		return;
	utrace__pext_parse("b", &x);
	utrace__pext_render(&x, (int)(len * 8), p, len, c->text, c->text_cap);
}

static void run_check(struct utrace__rec *r, struct utrace__check *c)
{
	struct tep_print_arg *a = c->arg;
	uint32_t off, len;
	uint64_t n, el;
	bool none;

	switch (c->kind) {
	case CK_STRING:
		dyn_offset(r, c->field, &off, &len);
		if (len && ((uint64_t)off + len > r->size || !memchr(r->d + off, 0, len)))
			rec_fail(r, "string '%s' has no NUL inside its %u bytes",
				 c->field->name, len);
		return;
	case CK_MASK:
		dyn_offset(r, c->field, &off, &len);
		if ((uint64_t)off + len > r->size)
			rec_fail(r, "bitmask '%s' runs past the record's end", c->field->name);
		else if (c->text)
			cpumask_text(r, c, r->d + off, len);
		return;
	case CK_HEX:
		off = array_base(r, a->hex.field, &none);
		n = (uint32_t)eval(r, a->hex.size, 0);
		if (!none && !r->failed && off + n > r->size)
			rec_fail(r, "__print_hex() of %llu bytes at offset %u runs past the "
				 "record's end (%u bytes)", (unsigned long long)n, off, r->size);
		return;
	case CK_INT_ARRAY: {
		const struct tep_print_arg_int_array *ia = c->text ? &c->array : &a->int_array;
		int64_t size;

		off = array_base(r, ia->field, &none);
		n = (uint32_t)eval(r, ia->count, 0);
		size = (int)eval(r, ia->el_size, 0);
		el = size == 1 || size == 2 || size == 4 || size == 8 ? (uint64_t)size : 1;
		if (!none && !r->failed && off + n * el > r->size)
			rec_fail(r, "__print_array() of %llu elements at offset %u runs past "
				 "the record's end (%u bytes)", (unsigned long long)n, off,
				 r->size);
		if (c->text && !r->failed)
			array_text(r, c, none ? NULL : r->d + off,
				   (uint32_t)n, size);
		return;
	}
	case CK_INDEX:
		eval_index(r, a, 0);
		return;
	case CK_DIVISOR:
		eval(r, a, 0);
		return;
	case CK_PEXT:
		pext_text(r, c);
		return;
	case CK_WIDTH: {
		int w = (int)eval(r, a, 0);

		if (!r->failed && (w < 0 || w > MAX_WIDTH))
			rec_fail(r, "the print fmt's field width %d is not from 0 to 4096", w);
		return;
	}
	}
}

/* 'printing': the record goes to tep_print_event(), check what it reads. */
static bool check_record(struct utrace__rec *r, bool printing)
{
	struct utrace__fmt *e = r->e;
	size_t i;

	if (r->size < e->fixed_end) {
		rec_fail(r, "record of %u bytes ends before field '%s' (offset %d, size %d)",
			 r->size, e->last_field->name, e->last_field->offset,
			 e->last_field->size);
		return false;
	}
	for (i = 0; i < e->nr_dyn; i++) {
		const struct tep_format_field *f = e->dyn[i];
		uint64_t val = utrace__read_num(r->d + f->offset, f->size), o, l;

		o = val & 0xffff;
		l = f->size == 2 ? 0 : (val >> 16) & 0xffff;
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			o += (uint64_t)f->offset + (uint64_t)f->size;
		if (o + l > r->size) {
			rec_fail(r, "__data_loc field '%s' (offset %llu, length %llu) runs "
				 "past the record's end (%u bytes)", f->name,
				 (unsigned long long)o, (unsigned long long)l, r->size);
			return false;
		}
	}
	for (i = 0; printing && i < e->nr_checks && !r->failed; i++)
		run_check(r, &e->checks[i]);
	return !r->failed;
}

/*
 * Copy the record of 'it' into the scratch memory (aligned, zeroed bytes
 * after it, common_type set to our id) and check it against its format.
 */
int utrace__fmts_check(struct utrace__fmts *sc, struct utrace__fmt *e,
		       const struct utrace__tf_item *it, bool printing,
		       struct utrace__rec *r, char *why, size_t whylen)
{
	if (it->len + UTRACE__SLACK > sc->scratch_cap) {
		size_t c = it->len + UTRACE__SLACK > 4096 ? it->len + UTRACE__SLACK : 4096;
		unsigned char *s = realloc(sc->scratch, c);

		if (!s)
			return -ENOMEM;
		sc->scratch = s;
		sc->scratch_cap = c;
	}
	memcpy(sc->scratch, it->rec, it->len);
	memset(sc->scratch + it->len, 0, UTRACE__SLACK);
	sc->scratch[0] = (unsigned char)(e->id & 0xff);
	sc->scratch[1] = (unsigned char)(e->id >> 8);
	*r = (struct utrace__rec){ sc->scratch, it->len, e, why, whylen, false,
				   it->proc, sc->syms, sc->syms_ctx };
	return check_record(r, printing) ? 1 : 0;
}

int utrace__fmts_check_item(struct utrace__fmts *sc, struct utrace__fmt *e,
			    const struct utrace__tf_item *it, bool printing,
			    struct utrace__rec *r)
{
	char why[256];
	int ok = utrace__fmts_check(sc, e, it, printing, r, why, sizeof(why));

	if (!ok)
		utrace__fmts_problem(sc, "'%s': record at offset %llu: event at offset %llu: "
			"'%s:%s': %s", sc->name, (unsigned long long)it->page_offset,
			(unsigned long long)it->offset, e->system, e->name, why);
	return ok;
}

void utrace__fmts_no_format(struct utrace__fmts *sc, const struct utrace__tf_item *it)
{
	if (!it->format_rejected)
		utrace__fmts_problem(sc, "'%s': record at offset %llu: event at offset %llu: "
			"%s %u has no %s for event id %u", sc->name,
			(unsigned long long)it->page_offset, (unsigned long long)it->offset,
			UTRACE__TF_NO_FORMAT_ARGS(it));
}

/* --- vetting events for other writers (utrace convert) --- */

struct utrace__vet {
	struct utrace__fmts sc;
	char why[512];
};

struct utrace__vet *utrace__vet_new(struct utrace__tf *tf)
{
	struct utrace__vet *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	if (utrace__fmts_init(&v->sc, tf) < 0) {
		utrace__fmts_fini(&v->sc);
		free(v);
		return NULL;
	}
	v->sc.pr.quiet = true;
	return v;
}

/* The caller's slot for a distinct format (NULL: out of memory). */
void **utrace__vet_user(struct utrace__vet *v, struct utrace__tf_format *f)
{
	struct utrace__fmt *e = utrace__fmts_get(&v->sc, f);

	return e ? &e->user : NULL;
}

/* Can libtraceevent use this format (parsed in a child process first)? */
int utrace__vet_format(struct utrace__vet *v, struct utrace__tf_format *f, char *why,
		       size_t whylen)
{
	struct utrace__fmt *e = utrace__fmts_get(&v->sc, f);

	why[0] = 0;
	if (!e)
		return -ENOMEM;
	if (!e->state) {
		/* utrace__fmts_parse() says why it refuses the format: keep it. */
		v->sc.capture = v->why;
		v->sc.capture_len = sizeof(v->why);
		v->why[0] = 0;
		if (utrace__fmts_parse(&v->sc, e) < 0) {
			v->sc.capture = NULL;
			return -ENOMEM;
		}
		v->sc.capture = NULL;
		if (e->state < 0 && !e->vet_why)
			e->vet_why = strdup(v->why);
	}
	if (e->state < 0) {
		snprintf(why, whylen, "%s", e->vet_why ? e->vet_why : "libtraceevent "
			 "cannot use the format");
		return 0;
	}
	return 1;
}

/*
 * Would `utrace script` print this event?  Its format must be usable
 * (above) and the record pass the checks that keep libtraceevent from
 * reading outside it, dividing by zero and the like.
 */
int utrace__vet_event(struct utrace__vet *v, const struct utrace__tf_item *it, char *why,
		      size_t whylen)
{
	struct utrace__rec r;
	int ok;

	why[0] = 0;
	if (!it->format)
		return 0;
	ok = utrace__vet_format(v, it->format, why, whylen);
	if (ok <= 0)
		return ok;
	return utrace__fmts_check(&v->sc, it->format->priv, it, true, &r, why, whylen);
}

void utrace__vet_free(struct utrace__vet *v)
{
	if (!v)
		return;
	utrace__fmts_fini(&v->sc);
	free(v);
}

/*
 * An event's fields as the filter compiler takes them, from its format
 * (the fields after the four common ones).  A pointer is only a number
 * here: what it points to was in the traced process.
 */
struct utrace_event_field *utrace__fmt_fields(const struct tep_event *ev, unsigned int *nr)
{
	struct tep_format_field *f;
	struct utrace_event_field *v;
	unsigned int n = 0;

	for (f = ev->format.fields; f; f = f->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NULL;
	n = 0;
	for (f = ev->format.fields; f; f = f->next, n++) {
		v[n].name = f->name;
		v[n].type = f->type;
		v[n].offset = f->offset;
		v[n].size = f->size;
		v[n].is_signed = !!(f->flags & TEP_FIELD_IS_SIGNED);
		if (f->flags & TEP_FIELD_IS_RELATIVE) {
			v[n].type = "u32";       /* __rel_loc: not read as a string */
			v[n].kind = UTRACE_FIELD_PLAIN;
		} else if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			v[n].kind = UTRACE_FIELD_DYNAMIC;
		} else if (f->flags & TEP_FIELD_IS_ARRAY) {
			v[n].kind = UTRACE_FIELD_ARRAY;
			v[n].array_len = f->arraylen;
		} else {
			v[n].kind = UTRACE_FIELD_PLAIN;
			if (f->flags & TEP_FIELD_IS_POINTER || strchr(f->type, '*'))
				v[n].type = "unsigned long";
		}
	}
	*nr = n;
	return v;
}

/* '.function' of a recording: the SYMBOL records of the event's process. */
int utrace__proc_sym_by_name(void *ctx, const char *name, uint64_t *start, uint64_t *size)
{
	const struct utrace__tf_process *proc = ctx;
	const char *n;
	size_t i;

	for (i = 0; utrace__tf_sym_at(proc, i, &n, start, size) == 0; i++)
		if (!strcmp(n, name))
			return 0;
	return -ENOENT;
}

int utrace__proc_sym_by_addr(void *ctx, uint64_t addr, uint64_t *start, uint64_t *size)
{
	const char *name;

	return utrace__tf_sym_lookup(NULL, ctx, addr, &name, start, size);
}

/*
 * The start of a worker on a file: its warning (unless it was cut short:
 * said after the events), and false with the reason said when it has not
 * even a header.
 */
bool utrace__tf_readable(struct utrace__tf *tf)
{
	if (utrace__tf_warning(tf) && !utrace__tf_cut(tf, NULL))
		utrace__say("utrace: %s\n", utrace__tf_warning(tf));
	if (!utrace__tf_page_size(tf)) {
		utrace__say("utrace: %s\n", utrace__tf_error(tf) ? utrace__tf_error(tf) :
			    "not a trace file");
		return false;
	}
	return true;
}
