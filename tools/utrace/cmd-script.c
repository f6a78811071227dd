/* SPDX-License-Identifier: MIT */
/*
 * utrace script: print the events of a trace file in time order, one line
 * each, in the layout of the kernel's trace file:
 *
 *             comm-tid     [cpu] .....  sec.usec: event: TP_printk text
 *
 * or each event's fields (--fields), or one JSON object per event (--json).
 *
 * The text after "event: " is what libtraceevent prints from the event's
 * format and record (tep_print_event, TEP_PRINT_INFO).  Event ids are per
 * process, libtraceevent's are per handle; so one handle holds every
 * distinct format of the file once (the same program traced in fifty
 * processes is parsed once), each under an id of our own, and each record
 * is copied, its common_type set to that id, before it is printed.  The
 * copy also gives the record aligned memory with zeroed bytes after it.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-seq.h>

#include <utrace/utrace.h>

#include "setevent.h"
#include "file-reader.h"
#include "problems.h"
#include "cmds.h"
#include "script.h"

#define SLACK 64                 /* zeroed bytes after each record copy */
#define MAX_DEPTH 64             /* of a print fmt's argument tree */
#define MAX_FIELD_END (1 << 20)
#define MAX_WIDTH 4096           /* of a printf conversion of the print fmt */

enum check_kind { CK_STRING, CK_MASK, CK_HEX, CK_INT_ARRAY, CK_INDEX, CK_DIVISOR,
		  CK_WIDTH };

struct check {
	enum check_kind kind;
	struct tep_print_arg *arg;
	struct tep_format_field *field;  /* CK_STRING, CK_MASK */
};

/* One distinct format: (system, name, text after the ID line). */
struct efmt {
	struct efmt *next;               /* hash chain */
	uint64_t hash;
	const char *system, *name, *body;
	struct utrace__tf_format *first; /* for messages */
	bool selected;
	int state;                       /* 0: not parsed, 1: ready, -1: refused */
	uint16_t id;                     /* ours, in the tep handle */
	struct tep_event *ev;
	struct check *checks;
	size_t nr_checks, cap_checks;
	uint32_t fixed_end;              /* the fixed fields end here */
	struct tep_format_field *last_field;
	struct tep_format_field **dyn;   /* __data_loc / __rel_loc fields */
	size_t nr_dyn;
	const char *refused;             /* why state is -1 */
	char *vet_why;                   /* the message, for a vetter */
	void *user;                      /* a vetter's caller's */
};

struct script {
	const struct script_opts *o;
	struct utrace__tf *tf;
	const char *name;
	struct tep_handle *tep;
	struct efmt **hash;
	size_t hcap, nr_efmt;
	struct efmt **all;
	uint32_t next_id;
	struct trace_seq seq;
	unsigned char *scratch;
	size_t scratch_cap;
	struct obuf ob;
	uint64_t lost;
	bool lost_unknown;
	struct utrace__problems pr;      /* the first described, the others counted */
	FILE *out;
	char *capture;                   /* problem() writes here, not stderr */
	size_t capture_len;
	uint64_t nr_lines;               /* event lines printed */
	uint64_t nr_printed;             /* events printed, in any mode */
	unsigned char *cpu_seen;         /* annotate_cpus: one byte per CPU */
	size_t cpu_seen_len;
};

/* --- output buffer --- */

void ob_grow(struct obuf *b, size_t n)
{
	char *p;
	size_t c;

	c = b->cap ? b->cap : 1 << 16;
	while (c < b->len + n)
		c *= 2;
	p = realloc(b->p, c);
	if (!p) {
		b->nomem = true;
		return;
	}
	b->p = p;
	b->cap = c;
}


static void ob_puts(struct obuf *b, const char *s)
{
	ob_put(b, s, strlen(s));
}

static inline void ob_putc(struct obuf *b, char c)
{
	ob_reserve(b, 1);
	if (b->len < b->cap)
		b->p[b->len++] = c;
}

static void ob_printf(struct obuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ob_printf(struct obuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	ob_reserve(b, 256);
	if (b->cap - b->len < 256)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		ob_reserve(b, (size_t)n + 1);
		if (b->cap - b->len < (size_t)n + 1)
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* v in decimal, at least 'width' wide: right-aligned with 'pad', or
 * left-aligned (pad ' ') when 'left'. */
static void ob_num(struct obuf *b, uint64_t v, int width, char pad, bool left)
{
	char t[24];
	int n = 0;

	do {
		t[sizeof(t) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	ob_reserve(b, (size_t)(n > width ? n : width));
	if (b->cap - b->len < (size_t)(n > width ? n : width))
		return;
	if (!left)
		for (; width > n; width--)
			b->p[b->len++] = pad;
	memcpy(b->p + b->len, t + sizeof(t) - n, (size_t)n);
	b->len += (size_t)n;
	for (; width > n; width--)
		b->p[b->len++] = ' ';
}

static void ob_snum(struct obuf *b, int64_t v)
{
	if (v < 0) {
		ob_putc(b, '-');
		ob_num(b, (uint64_t)0 - (uint64_t)v, 0, ' ', false);
	} else {
		ob_num(b, (uint64_t)v, 0, ' ', false);
	}
}

/* The inside of a JSON string: UTF-8 passes, other bytes become \u00XX. */
static void ob_json_chars(struct obuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		unsigned char c = *p;
		size_t k = 0, i;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			const unsigned char *q = p;

			while (q < end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
				q++;
			ob_put(b, (const char *)p, (size_t)(q - p));
			p = q;
			continue;
		}
		if (c == '"' || c == '\\') {
			ob_putc(b, '\\');
			ob_putc(b, (char)c);
			p++;
			continue;
		}
		if (c == '\n' || c == '\t' || c == '\r') {
			ob_putc(b, '\\');
			ob_putc(b, c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 1;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3;
		if (k && (size_t)(end - p) > k) {
			for (i = 1; i <= k; i++)
				if ((p[i] & 0xc0) != 0x80)
					break;
			/* no overlong forms, surrogates or code points past U+10FFFF */
			if (i > k && !(c == 0xe0 && p[1] < 0xa0) &&
			    !(c == 0xed && p[1] >= 0xa0) && !(c == 0xf0 && p[1] < 0x90) &&
			    !(c == 0xf4 && p[1] >= 0x90)) {
				ob_put(b, (const char *)p, k + 1);
				p += k + 1;
				continue;
			}
		}
		ob_printf(b, "\\u%04x", c);
		p++;
	}
}

static void ob_json_str(struct obuf *b, const char *s, size_t n)
{
	ob_putc(b, '"');
	ob_json_chars(b, s, n);
	ob_putc(b, '"');
}

/* --- messages --- */

/* The first problem is described, the others counted. */
static void problem(struct script *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void problem(struct script *sc, const char *fmt, ...)
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

/* --- event selection --- */

static bool select_event(const struct script_opts *o, const char *system,
			 const char *name)
{
	bool sel = !o->nr_ev || !o->ev[0].set;
	size_t i;

	for (i = 0; i < o->nr_ev; i++)
		if (utrace__set_event_matches(&o->ev[i], system, name)) {
			sel = o->ev[i].set;
			o->ev_matched[i] = true;
		}
	return sel;
}

/* --- formats --- */

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL;
}

static struct efmt *efmt_get(struct script *sc, struct utrace__tf_format *f)
{
	struct efmt *e;
	uint64_t h;
	size_t i;

	if (f->priv)
		return f->priv;
	h = fnv(fnv(fnv(0xcbf29ce484222325ULL, f->system), f->name), f->body);
	if (sc->nr_efmt * 2 >= sc->hcap) {
		size_t cap = sc->hcap ? sc->hcap * 2 : 256;
		struct efmt **na = realloc(sc->all, cap / 2 * sizeof(*na));
		struct efmt **nh;

		if (!na)
			return NULL;
		sc->all = na;
		nh = calloc(cap, sizeof(*nh));
		if (!nh)
			return NULL;
		for (i = 0; i < sc->nr_efmt; i++) {
			e = sc->all[i];
			e->next = nh[e->hash & (cap - 1)];
			nh[e->hash & (cap - 1)] = e;
		}
		free(sc->hash);
		sc->hash = nh;
		sc->hcap = cap;
	}
	for (e = sc->hash[h & (sc->hcap - 1)]; e; e = e->next)
		if (e->hash == h && !strcmp(e->system, f->system) &&
		    !strcmp(e->name, f->name) && !strcmp(e->body, f->body)) {
			f->priv = e;
			return e;
		}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->hash = h;
	e->system = f->system;
	e->name = f->name;
	e->body = f->body;
	e->first = f;
	e->selected = select_event(sc->o, f->system, f->name);
	e->next = sc->hash[h & (sc->hcap - 1)];
	sc->hash[h & (sc->hcap - 1)] = e;
	sc->all[sc->nr_efmt++] = e;
	f->priv = e;
	return e;
}

static void efmt_free(struct efmt *e)
{
	free(e->vet_why);
	free(e->checks);
	free(e->dyn);
	free(e);
}

static int add_check(struct efmt *e, enum check_kind kind, struct tep_print_arg *arg,
		     struct tep_format_field *field)
{
	if (e->nr_checks == e->cap_checks) {
		size_t c = e->cap_checks ? e->cap_checks * 2 : 8;
		struct check *n = realloc(e->checks, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		e->checks = n;
		e->cap_checks = c;
	}
	e->checks[e->nr_checks++] = (struct check){ kind, arg, field };
	return 0;
}

/*
 * Find the print fmt's arguments that read the record beyond a field's
 * own bytes, and refuse what libtraceevent 1.7.1 cannot print safely
 * whatever the record holds.  Returns 0, or sets e->refused.
 */
static int plan_args(struct efmt *e, struct tep_print_arg *a, int depth)
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
static int plan_widths(struct efmt *e)
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

static const char dummy_format[] =
	"name: utrace_script\nID: 0\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\nprint fmt: \"\"\n";

static int setup_tep(struct script *sc)
{
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
	trace_seq_init(&sc->seq);
	return 0;
}

static int check_fields(struct efmt *e, struct tep_format_field *f, bool common)
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
static void (*parse_child_hook)(void);
static int (*parse_verdict_get)(const char *text, const char *sys);
static void (*parse_verdict_put)(const char *text, const char *sys, int verdict);

/*
 * Would tep_parse_event() survive this text?  Ask a child, which inherits
 * the handle and libtraceevent's global parser state, so its fate is ours.
 * 0: it parsed (well or not) and lived; -1: it died, hung, or no child.
 */
static int parse_safely(struct script *sc, const char *text, size_t len, const char *sys)
{
	struct rlimit no_core = { 0, 0 };
	int status, fd, v;
	pid_t pid, w;

	if (parse_verdict_get && (v = parse_verdict_get(text, sys)) != 1)
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
		if (parse_child_hook)
			parse_child_hook();
		signal(SIGALRM, SIG_DFL);
		alarm(10);
		tep_parse_event(sc->tep, text, (unsigned long)len, sys);
		_exit(0);
	}
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	v = w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
	if (parse_verdict_put)
		parse_verdict_put(text, sys, v);
	return v;
}

/* Parse a format into the tep handle, under an id of our own. */
static int efmt_parse(struct script *sc, struct efmt *e)
{
	const char *sys = e->system;
	char *text = NULL;
	enum tep_errno err;
	int n;

	e->state = -1;
	if (sc->next_id > 0xffff) {
		e->refused = "the file has more than 65535 distinct formats";
		return 0;
	}
	e->id = (uint16_t)sc->next_id++;
	n = asprintf(&text, "name: %s\nID: %u\n%s", e->name, e->id, e->body);
	if (n < 0)
		return -ENOMEM;
	/* ftrace's own events get special handling that reads pointers
	 * out of the record; no utrace event is one of them. */
	if (!strcmp(sys, "ftrace"))
		sys = "ftrace (utrace)";
	if (parse_safely(sc, text, (size_t)n, sys) < 0) {
		free(text);
		e->refused = "libtraceevent crashes on it";
		problem(sc, "'%s': record at offset %llu: libtraceevent cannot use the "
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
		problem(sc, "'%s': record at offset %llu: libtraceevent cannot use the "
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
		problem(sc, "'%s': record at offset %llu: the format of '%s:%s' (pid %u, "
			"id %u) cannot be printed safely: %s", sc->name,
			(unsigned long long)e->first->offset, e->system, e->name,
			e->first->proc->pid, e->first->id, e->refused);
		return 0;
	}
	e->state = 1;
	return 0;
}

/* --- checking a record as libtraceevent will read it --- */

struct rec {
	const unsigned char *d;
	uint32_t size;
	struct efmt *e;
	char *why;
	size_t whylen;
	bool failed;
};

static void rec_fail(struct rec *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void rec_fail(struct rec *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(r->why, r->whylen, fmt, ap);
	va_end(ap);
}

static uint64_t read_num(const unsigned char *p, int size)
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
static void dyn_offset(const struct rec *r, const struct tep_format_field *f,
		       uint32_t *offset, uint32_t *len)
{
	uint32_t size = r->size, o, l;
	uint64_t val;

	if ((int64_t)f->offset + f->size > (int64_t)size) {
		*offset = 0;
		*len = 0;
		return;
	}
	val = read_num(r->d + f->offset, f->size);
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

static uint64_t eval(struct rec *r, struct tep_print_arg *a, int depth);

/* REC->a[i] or __get_dynamic_array(a)[i], as eval_num_arg() reads it. */
static uint64_t eval_index(struct rec *r, struct tep_print_arg *a, int depth)
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
	val = read_num(r->d + offset, (int)field_size);
	if (typearg)
		val = cast(val, typearg->typecast.type, 1);
	return val;
}

/* libtraceevent's eval_num_arg(), checking what it reads. */
static uint64_t eval(struct rec *r, struct tep_print_arg *a, int depth)
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
		return read_num(r->d + a->field.field->offset, a->field.field->size);
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
static uint32_t array_base(struct rec *r, struct tep_print_arg *f, bool *none)
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

static void run_check(struct rec *r, const struct check *c)
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
		return;
	case CK_HEX:
		off = array_base(r, a->hex.field, &none);
		n = (uint32_t)eval(r, a->hex.size, 0);
		if (!none && !r->failed && off + n > r->size)
			rec_fail(r, "__print_hex() of %llu bytes at offset %u runs past the "
				 "record's end (%u bytes)", (unsigned long long)n, off, r->size);
		return;
	case CK_INT_ARRAY:
		off = array_base(r, a->int_array.field, &none);
		n = (uint32_t)eval(r, a->int_array.count, 0);
		el = (uint64_t)(int)eval(r, a->int_array.el_size, 0);
		if (el != 1 && el != 2 && el != 4 && el != 8)
			el = 1;
		if (!none && !r->failed && off + n * el > r->size)
			rec_fail(r, "__print_array() of %llu elements at offset %u runs past "
				 "the record's end (%u bytes)", (unsigned long long)n, off,
				 r->size);
		return;
	case CK_INDEX:
		eval_index(r, a, 0);
		return;
	case CK_DIVISOR:
		eval(r, a, 0);
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
static bool check_record(struct rec *r, bool printing)
{
	struct efmt *e = r->e;
	size_t i;

	if (r->size < e->fixed_end) {
		rec_fail(r, "record of %u bytes ends before field '%s' (offset %d, size %d)",
			 r->size, e->last_field->name, e->last_field->offset,
			 e->last_field->size);
		return false;
	}
	for (i = 0; i < e->nr_dyn; i++) {
		const struct tep_format_field *f = e->dyn[i];
		uint64_t val = read_num(r->d + f->offset, f->size), o, l;

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

/* --- printing --- */

static const char *comm_of(const struct utrace__tf_item *it)
{
	if (it->thread->comm && it->thread->comm[0])
		return it->thread->comm;
	if (it->proc->comm && it->proc->comm[0])
		return it->proc->comm;
	return "<...>";
}

/* Decimal digits of v, right-aligned in t[0..n), from t + n backwards. */
static inline char *digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/*
 * "%16s-%-7d [%03d] ..... %5lu.%06lu: " of the comm, tid, cpu and time,
 * as lib/runtime/event.c prints it, without printf: it is a fifth of the time of
 * a line.
 */
static void prefix(struct obuf *b, const struct utrace__tf_item *it)
{
	const char *comm = comm_of(it);
	size_t n = strlen(comm), k;
	char t[24], *d, *p;
	uint64_t sec = it->time / 1000000000, usec = it->time % 1000000000 / 1000;

	ob_reserve(b, n + 96);
	if (b->cap - b->len < n + 96)
		return;
	p = b->p + b->len;
	for (k = n; k < 16; k++)
		*p++ = ' ';
	memcpy(p, comm, n);
	p += n;
	*p++ = '-';
	d = digits(t + sizeof(t), it->thread->tid);
	k = (size_t)(t + sizeof(t) - d);
	memcpy(p, d, k);
	p += k;
	for (; k < 7; k++)
		*p++ = ' ';
	*p++ = ' ';
	*p++ = '[';
	d = digits(t + sizeof(t), it->cpu);
	for (k = (size_t)(t + sizeof(t) - d); k < 3; k++)
		*--d = '0';
	k = (size_t)(t + sizeof(t) - d);
	memcpy(p, d, k);
	p += k;
	memcpy(p, "] ..... ", 8);
	p += 8;
	d = digits(t + sizeof(t), sec);
	for (k = (size_t)(t + sizeof(t) - d); k < 5; k++)
		*--d = ' ';
	k = (size_t)(t + sizeof(t) - d);
	memcpy(p, d, k);
	p += k;
	*p++ = '.';
	d = digits(t + sizeof(t), usec);
	for (k = (size_t)(t + sizeof(t) - d); k < 6; k++)
		*--d = '0';
	memcpy(p, d, 6);
	p += 6;
	*p++ = ':';
	*p++ = ' ';
	b->len = (size_t)(p - b->p);
}

/* The element type of a field: "__data_loc unsigned int[]" -> "unsigned int". */
static void elem_type(const struct tep_format_field *f, char *t, size_t len)
{
	const char *s = f->type, *e;

	if (!strncmp(s, "__data_loc ", 11))
		s += 11;
	else if (!strncmp(s, "__rel_loc ", 10))
		s += 10;
	if (!strncmp(s, "const ", 6))
		s += 6;
	e = strchr(s, '[');
	if (!e)
		e = s + strlen(s);
	while (e > s && e[-1] == ' ')
		e--;
	if ((size_t)(e - s) >= len)
		e = s + len - 1;
	memcpy(t, s, (size_t)(e - s));
	t[e - s] = 0;
}

static unsigned int elem_size(const struct tep_format_field *f, const char *t)
{
	static const struct { const char *t; unsigned int size; } sizes[] = {
		{ "char", 1 }, { "signed char", 1 }, { "unsigned char", 1 }, { "u8", 1 },
		{ "s8", 1 }, { "bool", 1 }, { "_Bool", 1 }, { "short", 2 },
		{ "unsigned short", 2 }, { "u16", 2 }, { "s16", 2 }, { "int", 4 },
		{ "unsigned int", 4 }, { "unsigned", 4 }, { "u32", 4 }, { "s32", 4 },
		{ "long", 8 }, { "unsigned long", 8 }, { "long long", 8 },
		{ "unsigned long long", 8 }, { "u64", 8 }, { "s64", 8 }, { "size_t", 8 },
	};
	size_t i;

	if (!(f->flags & TEP_FIELD_IS_DYNAMIC) && f->elementsize)
		return f->elementsize;
	if (t[0] && t[strlen(t) - 1] == '*')
		return 8;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(sizes[i].t, t))
			return sizes[i].size;
	return 1;
}

static void put_number(struct obuf *b, const unsigned char *p, unsigned int size,
		       bool is_signed)
{
	uint64_t v = read_num(p, (int)size);

	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	if (is_signed)
		ob_snum(b, (int64_t)v);
	else
		ob_num(b, v, 0, ' ', false);
}

/* Every field after the common ones: name=value, or "name":value. */
static void put_fields(struct obuf *b, const struct rec *r, bool json)
{
	struct tep_format_field *f;
	bool first = true;

	for (f = r->e->ev->format.fields; f; f = f->next) {
		const unsigned char *p = r->d + f->offset;
		uint32_t n = (uint32_t)f->size, i, es;
		bool is_signed = f->flags & TEP_FIELD_IS_SIGNED;
		char t[64];

		if (json) {
			if (!first)
				ob_putc(b, ',');
			ob_json_str(b, f->name, strlen(f->name));
			ob_putc(b, ':');
		} else {
			ob_putc(b, ' ');
			ob_puts(b, f->name);
			ob_putc(b, '=');
		}
		first = false;
		elem_type(f, t, sizeof(t));
		if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			uint64_t val = read_num(p, f->size);
			uint32_t o = (uint32_t)(val & 0xffff);

			n = f->size == 2 ? r->size - o : (uint32_t)((val >> 16) & 0xffff);
			if (f->flags & TEP_FIELD_IS_RELATIVE)
				o += (uint32_t)(f->offset + f->size);
			p = r->d + o;
		} else if (!(f->flags & TEP_FIELD_IS_ARRAY) &&
			   (n == 1 || n == 2 || n == 4 || n == 8) &&
			   strncmp(t, "struct ", 7)) {
			put_number(b, p, n, is_signed);
			continue;
		}
		if (!strcmp(t, "char")) {
			size_t sl = strnlen((const char *)p, n);

			if (json)
				ob_json_str(b, (const char *)p, sl);
			else
				ob_put(b, (const char *)p, sl);
			continue;
		}
		es = elem_size(f, t);
		if (!strncmp(t, "struct ", 7) || !(f->flags & (TEP_FIELD_IS_ARRAY |
							      TEP_FIELD_IS_DYNAMIC))) {
			es = 1;          /* a struct: its bytes */
			is_signed = false;
		}
		ob_putc(b, json ? '[' : '{');
		for (i = 0; i + es <= n; i += es) {
			if (i)
				ob_putc(b, ',');
			put_number(b, p + i, es, is_signed);
		}
		ob_putc(b, json ? ']' : '}');
	}
}

/* ,"time":..,"pid":..,"tid":..,"cpu":..,"comm":".." of a JSON line */
static void json_common(struct obuf *b, const struct utrace__tf_item *it)
{
	ob_puts(b, ",\"time\":");
	ob_num(b, it->time, 0, ' ', false);
	ob_puts(b, ",\"pid\":");
	ob_num(b, it->proc->pid, 0, ' ', false);
	ob_puts(b, ",\"tid\":");
	ob_num(b, it->thread->tid, 0, ' ', false);
	ob_puts(b, ",\"cpu\":");
	ob_num(b, it->cpu, 0, ' ', false);
	ob_puts(b, ",\"comm\":");
	ob_json_str(b, comm_of(it), strlen(comm_of(it)));
}

static void put_lost(struct script *sc, const struct utrace__tf_item *it)
{
	struct obuf *b = &sc->ob;

	if (it->lost)
		sc->lost += it->lost;
	else
		sc->lost_unknown = true;
	if (sc->o->mode == OUT_JSON) {
		ob_puts(b, "{\"lost\":");
		if (it->lost)
			ob_num(b, it->lost, 0, ' ', false);
		else
			ob_puts(b, "null");
		json_common(b, it);
		ob_puts(b, "}\n");
		return;
	}
	prefix(b, it);
	if (it->lost) {
		ob_puts(b, "[LOST ");
		ob_num(b, it->lost, 0, ' ', false);
		ob_puts(b, " EVENTS]\n");
	} else {
		ob_puts(b, "[LOST EVENTS]\n");
	}
}

/*
 * The kernel's trace file, when its buffer was overrun, marks where each
 * CPU's events start (test_cpu_buff_start()): before the first line of
 * each CPU but the very first line of the output.  CPUs past 65535 (a
 * file could say anything) are not marked.
 */
static void annotate_cpu(struct script *sc, uint32_t cpu)
{
	if (cpu >= 65536)
		return;
	if (cpu >= sc->cpu_seen_len) {
		size_t n = (size_t)cpu + 64;
		unsigned char *v = realloc(sc->cpu_seen, n);

		if (!v) {
			sc->ob.nomem = true;
			return;
		}
		memset(v + sc->cpu_seen_len, 0, n - sc->cpu_seen_len);
		sc->cpu_seen = v;
		sc->cpu_seen_len = n;
	}
	if (sc->cpu_seen[cpu])
		return;
	sc->cpu_seen[cpu] = 1;
	if (sc->nr_lines) {
		char line[64];

		snprintf(line, sizeof(line), "##### CPU %u buffer started ####\n", cpu);
		ob_puts(&sc->ob, line);
	}
}

static int put_event(struct script *sc, const struct utrace__tf_item *it)
{
	struct utrace__tf_format *f = it->format;
	struct obuf *b = &sc->ob;
	struct tep_record record;
	char why[256];
	struct efmt *e;
	struct rec r;

	if (!f && it->format_rejected)
		return 0;                /* the reader said why */
	if (!f) {
		problem(sc, "'%s': record at offset %llu: event at offset %llu: pid %u has "
			"no FORMAT for event id %u", sc->name,
			(unsigned long long)it->page_offset, (unsigned long long)it->offset,
			it->proc->pid, it->id);
		return 0;
	}
	e = efmt_get(sc, f);
	if (!e)
		return -ENOMEM;
	if (!e->selected)
		return 0;
	if (!e->state && efmt_parse(sc, e) < 0)
		return -ENOMEM;
	if (e->state < 0)
		return 0;                /* efmt_parse() said why */
	if (it->len + SLACK > sc->scratch_cap) {
		size_t c = it->len + SLACK > 4096 ? it->len + SLACK : 4096;
		unsigned char *s = realloc(sc->scratch, c);

		if (!s)
			return -ENOMEM;
		sc->scratch = s;
		sc->scratch_cap = c;
	}
	memcpy(sc->scratch, it->rec, it->len);
	memset(sc->scratch + it->len, 0, SLACK);
	sc->scratch[0] = (unsigned char)(e->id & 0xff);
	sc->scratch[1] = (unsigned char)(e->id >> 8);
	r = (struct rec){ sc->scratch, it->len, e, why, sizeof(why), false };
	if (!check_record(&r, sc->o->mode == OUT_TEXT)) {
		problem(sc, "'%s': record at offset %llu: event at offset %llu: '%s:%s': %s",
			sc->name, (unsigned long long)it->page_offset,
			(unsigned long long)it->offset, e->system, e->name, why);
		return 0;
	}
	sc->nr_printed++;
	if (sc->o->mode == OUT_JSON) {
		ob_puts(b, "{\"name\":\"");
		ob_json_chars(b, e->system, strlen(e->system));
		ob_putc(b, ':');
		ob_json_chars(b, e->name, strlen(e->name));
		ob_putc(b, '"');
		json_common(b, it);
		ob_puts(b, ",\"fields\":{");
		put_fields(b, &r, true);
		ob_puts(b, "}}\n");
		return 0;
	}
	if (sc->o->annotate_cpus)
		annotate_cpu(sc, it->cpu);
	sc->nr_lines++;
	prefix(b, it);
	ob_puts(b, e->name);
	if (sc->o->mode == OUT_FIELDS) {
		ob_putc(b, ':');
		put_fields(b, &r, false);
		ob_putc(b, '\n');
		return 0;
	}
	ob_put(b, ": ", 2);
	memset(&record, 0, sizeof(record));
	record.data = sc->scratch;
	record.size = (int)it->len;
	record.cpu = (int)it->cpu;
	record.ts = it->time;
	trace_seq_reset(&sc->seq);
	tep_print_event(sc->tep, &sc->seq, &record, "%s", TEP_PRINT_INFO);
	if (sc->seq.state != TRACE_SEQ__GOOD)
		return -ENOMEM;
	ob_put(b, sc->seq.buffer, sc->seq.len);
	ob_putc(b, '\n');
	return 0;
}

static int flush_out(struct script *sc)
{
	if (sc->ob.len && fwrite(sc->ob.p, 1, sc->ob.len, sc->out) != sc->ob.len)
		return -EIO;
	sc->ob.len = 0;
	return 0;
}

/*
 * The worker: print what can be read of an open trace file, and say what
 * was wrong with it on stderr.  Returns the exit status (0 or 1).
 */
int script_run(const struct script_opts *o, struct utrace__tf *tf, FILE *out)
{
	struct script sc = { .o = o, .tf = tf, .name = utrace__tf_name(tf), .out = out,
			     .next_id = 1 };
	struct utrace__tf_format *f;
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	int r = 0, status = 0;
	size_t i;

	/* A cut file is said once, after its events, with their count; the
	 * status stays 0 for it (what was printed is right, as perf and
	 * trace-cmd do with a truncated file). */
	if (utrace__tf_warning(tf) && !o->quiet && !utrace__tf_cut(tf, NULL))
		fprintf(stderr, "utrace: %s\n", utrace__tf_warning(tf));
	if (utrace__tf_error(tf)) {
		utrace__problem(&sc.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&sc.pr, utrace__tf_nr_bad(tf) - 1);
	}
	if (!utrace__tf_page_size(tf))
		goto out;                /* not even a header */
	if (setup_tep(&sc) < 0) {
		fprintf(stderr, "utrace: cannot set up libtraceevent\n");
		status = 1;
		goto out;
	}
	for (i = 0; (f = utrace__tf_format(tf, i)); i++)
		if (!efmt_get(&sc, f)) {
			r = -ENOMEM;
			goto out;
		}
	/* A name that matches nothing is a mistake (a typo, the wrong
	 * file): said before printing anything, as the kernel refuses it. */
	if (!o->quiet) {
		size_t bad = 0;

		for (i = 0; i < o->nr_ev; i++)
			if (!o->ev_matched[i]) {
				fprintf(stderr, "utrace: no event in '%s' matches '%s'\n",
					sc.name, o->ev_text[i]);
				bad++;
			}
		if (bad) {
			fprintf(stderr, "utrace: the events in the file: utrace script --list "
				"-i '%s'\n", sc.name);
			status = 1;
			goto out;
		}
	}
	r = utrace__tf_iter_new(tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		if (item.kind == UTRACE__TF_LOST)
			put_lost(&sc, &item);
		else
			r = put_event(&sc, &item);
		if (sc.ob.nomem)
			r = -ENOMEM;
		if (sc.ob.len >= 1 << 16 && flush_out(&sc) < 0)
			break;
	}
	if (flush_out(&sc) < 0 || fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
out:
	if (r == -ENOMEM) {
		fprintf(stderr, "utrace: '%s': out of memory\n", sc.name);
		status = 1;
	}
	if (utrace__tf_cut(tf, NULL) && utrace__tf_warning(tf) && !o->quiet)
		fprintf(stderr, "utrace: %s: printed the %llu events before it\n",
			utrace__tf_warning(tf), (unsigned long long)sc.nr_printed);
	utrace__problems_end(&sc.pr, sc.name, "the records or events concerned were "
			     "left out");
	if (sc.pr.count)
		status = 1;
	if (o->quiet)
		;
	else if (sc.lost && !sc.lost_unknown)
		fprintf(stderr, "utrace: '%s': %llu events lost (see the [LOST] lines)\n",
			sc.name, (unsigned long long)sc.lost);
	else if (sc.lost)
		fprintf(stderr, "utrace: '%s': at least %llu events lost (see the [LOST] "
			"lines)\n", sc.name, (unsigned long long)sc.lost);
	else if (sc.lost_unknown)
		fprintf(stderr, "utrace: '%s': events were lost (see the [LOST] lines)\n",
			sc.name);
	utrace__tf_iter_free(it);
	for (i = 0; i < sc.nr_efmt; i++)
		efmt_free(sc.all[i]);
	free(sc.all);
	free(sc.hash);
	free(sc.scratch);
	free(sc.cpu_seen);
	free(sc.ob.p);
	if (sc.tep) {
		trace_seq_destroy(&sc.seq);
		tep_free(sc.tep);
	}
	return status;
}

/* --- vetting events for other writers (utrace convert) --- */

struct script_vet {
	struct script sc;
	struct script_opts o;
	char why[512];
};

struct script_vet *script_vet_new(struct utrace__tf *tf)
{
	struct script_vet *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->o.mode = OUT_TEXT;
	v->o.quiet = true;
	v->sc = (struct script){ .o = &v->o, .tf = tf, .name = utrace__tf_name(tf),
				 .out = NULL, .next_id = 1, .pr.quiet = true };
	if (setup_tep(&v->sc) < 0) {
		free(v);
		return NULL;
	}
	return v;
}

/* The caller's slot for a distinct format (NULL: out of memory). */
void **script_vet_user(struct script_vet *v, struct utrace__tf_format *f)
{
	struct efmt *e = efmt_get(&v->sc, f);

	return e ? &e->user : NULL;
}

/* Can libtraceevent use this format (parsed in a child process first)? */
int script_vet_format(struct script_vet *v, struct utrace__tf_format *f, char *why,
		      size_t whylen)
{
	struct efmt *e = efmt_get(&v->sc, f);

	why[0] = 0;
	if (!e)
		return -ENOMEM;
	if (!e->state) {
		/* efmt_parse() says why it refuses the format: keep it. */
		v->sc.capture = v->why;
		v->sc.capture_len = sizeof(v->why);
		v->why[0] = 0;
		if (efmt_parse(&v->sc, e) < 0) {
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
int script_vet_event(struct script_vet *v, const struct utrace__tf_item *it, char *why,
		     size_t whylen)
{
	struct script *sc = &v->sc;
	struct efmt *e;
	struct rec r;
	int ok;

	why[0] = 0;
	if (!it->format)
		return 0;
	ok = script_vet_format(v, it->format, why, whylen);
	if (ok <= 0)
		return ok;
	e = it->format->priv;
	if (it->len + SLACK > sc->scratch_cap) {
		size_t c = it->len + SLACK > 4096 ? it->len + SLACK : 4096;
		unsigned char *n = realloc(sc->scratch, c);

		if (!n)
			return -ENOMEM;
		sc->scratch = n;
		sc->scratch_cap = c;
	}
	memcpy(sc->scratch, it->rec, it->len);
	memset(sc->scratch + it->len, 0, SLACK);
	sc->scratch[0] = (unsigned char)(e->id & 0xff);
	sc->scratch[1] = (unsigned char)(e->id >> 8);
	r = (struct rec){ sc->scratch, it->len, e, why, whylen, false };
	return check_record(&r, true) ? 1 : 0;
}

void script_vet_free(struct script_vet *v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->sc.nr_efmt; i++)
		efmt_free(v->sc.all[i]);
	free(v->sc.all);
	free(v->sc.hash);
	free(v->sc.scratch);
	free(v->sc.ob.p);
	if (v->sc.tep) {
		trace_seq_destroy(&v->sc.seq);
		tep_free(v->sc.tep);
	}
	free(v);
}

/* --- the command --- */

static const char usage_text[] =
	"usage: utrace script [-i FILE] [-e EVENTS]... [--fields | --json | --list]\n"
	"\n"
	"Print the events of a trace file in time order, one line each, as the\n"
	"kernel's trace file shows them.\n"
	"\n"
	"  -i, --input FILE    the trace file (default: utrace.dat)\n"
	"  -e, --event EVENTS  only these events, in the kernel's set_event syntax\n"
	"                      (sys:event, sys:*, *:event, event, !sys:event),\n"
	"                      ',' or ' ' apart; may be given more than once\n"
	"      --fields        each event's fields as name=value, not its TP_printk text\n"
	"      --json          one JSON object per line for each event\n"
	"  -l, --list          list the events in the file ('system:event' lines,\n"
	"                      each once; with -e, the selected ones) and exit\n"
	"  -h, --help          show this text\n";

/* --- utrace script --list --- */

struct list_key {
	const char *system, *name;
	size_t index;
};

static int cmp_list_key(const void *a, const void *b)
{
	const struct list_key *x = a, *y = b;
	int c = strcmp(x->system, y->system);

	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = x->index < y->index ? -1 : x->index > y->index;
	return c;
}

static int cmp_list_index(const void *a, const void *b)
{
	const struct list_key *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The events of a trace file, one 'system:event' line each (as the
 * kernel's available_events), each once, in the order of the file; with
 * -e, only the selected ones.  Returns the exit status.
 */
static int list_events(const struct script_opts *o, struct utrace__tf *tf)
{
	struct utrace__tf_format *f;
	struct list_key *k;
	size_t n = 0, i, j;
	int status = 0;

	if (utrace__tf_error(tf)) {
		fprintf(stderr, "utrace: %s\n", utrace__tf_error(tf));
		status = 1;
	}
	while (utrace__tf_format(tf, n))
		n++;
	k = calloc(n ? n : 1, sizeof(*k));
	if (!k) {
		fprintf(stderr, "utrace: out of memory\n");
		return 1;
	}
	for (i = 0; (f = utrace__tf_format(tf, i)); i++)
		k[i] = (struct list_key){ f->system, f->name, i };
	qsort(k, n, sizeof(*k), cmp_list_key);
	for (i = j = 0; i < n; i++)
		if (!j || strcmp(k[i].system, k[j - 1].system) ||
		    strcmp(k[i].name, k[j - 1].name))
			k[j++] = k[i];
	qsort(k, j, sizeof(*k), cmp_list_index);
	for (i = 0; i < j; i++)
		if (select_event(o, k[i].system, k[i].name))
			printf("%s:%s\n", k[i].system, k[i].name);
	free(k);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	for (i = 0; i < o->nr_ev; i++)
		if (!o->ev_matched[i]) {
			fprintf(stderr, "utrace: no event in '%s' matches '%s'\n",
				utrace__tf_name(tf), o->ev_text[i]);
			status = 1;
		}
	return status;
}

/* Split one -e argument into set_event tokens. */
static int add_events(struct script_opts *o, char *arg)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(arg, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		size_t n = o->nr_ev + 1;
		void *a = realloc(o->ev, n * sizeof(*o->ev));

		if (!a)
			return -ENOMEM;
		o->ev = a;
		a = realloc(o->ev_text, n * sizeof(*o->ev_text));
		if (!a)
			return -ENOMEM;
		o->ev_text = a;
		a = realloc(o->ev_matched, n * sizeof(*o->ev_matched));
		if (!a)
			return -ENOMEM;
		o->ev_matched = a;
		if (utrace__parse_set_event(tok, strlen(tok), &o->ev[o->nr_ev]) < 0)
			return UTRACE_EBADSPEC;
		o->ev_text[o->nr_ev] = tok;
		o->ev_matched[o->nr_ev] = false;
		o->nr_ev++;
	}
	return 0;
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "event", required_argument, NULL, 'e' },
		{ "fields", no_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'J' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct script_opts o = { .input = "utrace.dat", .mode = OUT_TEXT };
	char **ev_args = NULL;
	struct utrace__tf *tf = NULL;
	int c, status = 0, nr_fields = 0, nr_json = 0, nr_ev_args = 0, list = 0;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":i:e:lh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.input = optarg;
			break;
		case 'e': {
			char **a = realloc(ev_args, (size_t)(nr_ev_args + 1) * sizeof(*a));

			if (!a || !(a[nr_ev_args] = strdup(optarg))) {
				free(a ? a : ev_args);
				fprintf(stderr, "utrace: out of memory\n");
				return 1;
			}
			ev_args = a;
			nr_ev_args++;
			break;
		}
		case 'F':
			nr_fields = 1;
			o.mode = OUT_FIELDS;
			break;
		case 'J':
			nr_json = 1;
			o.mode = OUT_JSON;
			break;
		case 'l':
			list = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			goto done;
		case ':':
			status = usage_error("script", "option '%s' needs a value", argv[optind - 1]);
			goto done;
		default:
			status = usage_error("script", "unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	if (optind < argc) {
		status = usage_error("script", "unexpected argument '%s'", argv[optind]);
		goto done;
	}
	if (nr_fields + nr_json + list > 1) {
		status = usage_error("script", "%s", nr_fields && nr_json ?
				     "--fields and --json do not go together" :
				     "--list does not go with --fields or --json");
		goto done;
	}
	for (c = 0; c < nr_ev_args; c++) {
		char *copy = strdup(ev_args[c]);
		int r = copy ? add_events(&o, ev_args[c]) : -ENOMEM;

		if (r == UTRACE_EBADSPEC) {
			status = usage_error("script", "bad event specification in '%s'", copy);
			free(copy);
			goto done;
		}
		free(copy);
		if (r < 0) {
			fprintf(stderr, "utrace: out of memory\n");
			status = 1;
			goto done;
		}
	}
	if (nr_ev_args && !o.nr_ev) {
		status = usage_error("script", "%s", "-e needs at least one event");
		goto done;
	}

	if (utrace__tf_open(o.input, &tf) == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto done;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	status = list ? list_events(&o, tf) : script_run(&o, tf, stdout);
done:
	utrace__tf_close(tf);
	for (c = 0; c < nr_ev_args; c++)
		free(ev_args[c]);
	free(ev_args);
	free(o.ev);
	free(o.ev_text);
	free(o.ev_matched);
	return status;
}
