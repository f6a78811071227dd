/* SPDX-License-Identifier: MIT */
/*
 * Hist triggers (hist.h), the language: the kernel's trigger language, parsed as
 * kernel/trace/trace_events_hist.c parses it (the same steps in the same
 * order, so that the same text gets the same error at the same place),
 * a fixed-size lock-free table as its tracing_map, and the `hist` file's
 * text with its format strings.
 *
 * ERROR POSITIONS
 *
 * The kernel keeps the command as "hist:" + the text after "hist:" (at
 * most 249 bytes of it) and places the caret of an error at the first
 * occurrence, in that command, of the text it complains about (err_pos():
 * strstr()).  So does errpos() here: "keys=pid:vals=pid" complaining
 * about the value "pid" puts the caret under the key.
 *
 * The table is hist-map.c, the `hist` file's text hist-print.c.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hist-internal.h"


#define LAST_CMD_MAX 256         /* MAX_FILTER_STR_VAL */
#define BITS_MIN 7
#define BITS_MAX 17

/* ------------------------------------------------------------ errors */

struct parser {
	char last_cmd[LAST_CMD_MAX];
	struct utrace__hist_error *err;
	const struct utrace_event_field *fields;
	unsigned int nr;
	struct utrace__hist *h;
	bool ts_usecs;
	const struct utrace__hist_env *env;
};

static int errpos(const struct parser *p, const char *s)
{
	const char *found;

	if (!s)
		return 0;
	found = strstr(p->last_cmd, s);
	return found ? (int)(found - p->last_cmd) : 0;
}

/* A refusal the kernel logs (hist_err()). */
static int hist_err(struct parser *p, int err, const char *msg, const char *at)
{
	p->err->err = err;
	p->err->logged = true;
	p->err->pos = errpos(p, at);
	snprintf(p->err->msg, sizeof(p->err->msg), "%s", msg);
	return err;
}

/* A refusal without an error_log entry; msg says what utrace does not do,
 * or is "" when the kernel says nothing either. */
static int quiet_err(struct parser *p, int err, const char *msg)
{
	p->err->err = err;
	p->err->logged = false;
	snprintf(p->err->msg, sizeof(p->err->msg), "%s", msg);
	return err;
}

void utrace__hist_error_fini(struct utrace__hist_error *err)
{
	free(err->filter_expr);
	err->filter_expr = NULL;
}

/* The command as the kernel keeps it for its error_log: "hist:" + the
 * parameter, white space around it stripped. */
static void hist_last_cmd(const char *text, char cmd[LAST_CMD_MAX])
{
	const char *param;
	size_t n;

	while (isspace((unsigned char)*text))
		text++;
	param = text + strcspn(text, ": \t");
	if (*param)
		param++;
	while (isspace((unsigned char)*param))
		param++;
	snprintf(cmd, LAST_CMD_MAX, "hist:%.*s", (int)(LAST_CMD_MAX - 1 - sizeof("hist:")),
		 param);
	n = strlen(cmd);
	while (n && isspace((unsigned char)cmd[n - 1]))
		cmd[--n] = 0;
}

int utrace__hist_errpos(const char *text, const char *at)
{
	char cmd[LAST_CMD_MAX];
	const char *found;

	hist_last_cmd(text, cmd);
	found = at ? strstr(cmd, at) : NULL;
	return found ? (int)(found - cmd) : 0;
}

char *utrace__hist_error_text(const char *system, const char *event, const char *text,
			      const struct utrace__hist_error *err)
{
	char cmd[LAST_CMD_MAX], *s = NULL;

	if (err->in_filter)
		return utrace__filter_log_text(err->filter_expr ? err->filter_expr : "",
					       &err->fe);
	if (!err->logged)
		return NULL;
	hist_last_cmd(text, cmd);
	if (asprintf(&s, "hist:%s:%s: error: %s\n  Command: %s\n%*s^\n", system, event,
		     err->msg, cmd, 11 + err->pos, "") < 0)
		return NULL;
	return s;
}

/* ------------------------------------------------------------ fields */

enum ftype { F_NUM, F_STATIC_STRING, F_DYN_STRING, F_PTR_STRING, F_CPU, F_COMM, F_NONE };

struct efield {
	const char *name;
	uint32_t offset, size;
	bool is_signed;
	enum ftype type;
};

static enum ftype event_ftype(const struct utrace_event_field *f)
{
	const char *t = f->type ? f->type : "";

	switch (f->kind) {
	case UTRACE_FIELD_STRING:
		return F_DYN_STRING;
	case UTRACE_FIELD_DYNAMIC:
		return strstr(t, "char") ? F_DYN_STRING : F_NUM;
	case UTRACE_FIELD_ARRAY:
		return strstr(t, "char") ? F_STATIC_STRING : F_NUM;
	default:
		return !strcmp(t, "char *") || !strcmp(t, "const char *") ? F_PTR_STRING : F_NUM;
	}
}

/* The kernel's trace_find_event_field(): the event's own fields, then the
 * generic ones (size 0), then the common ones. */
static bool find_field(const struct parser *p, const char *name, struct efield *out)
{
	static const struct efield generic[] = {
		{ "CPU", 0, 0, true, F_CPU }, { "cpu", 0, 0, true, F_CPU },
		{ "COMM", 0, 0, false, F_COMM }, { "comm", 0, 0, false, F_COMM },
		{ "stacktrace", 0, 0, false, F_NONE }, { "STACKTRACE", 0, 0, false, F_NONE },
		{ "common_type", 0, 2, false, F_NUM }, { "common_flags", 2, 1, false, F_NUM },
		{ "common_preempt_count", 3, 1, false, F_NUM },
		{ "common_pid", 4, 4, true, F_NUM },
	};
	unsigned int i;

	for (i = 0; i < p->nr; i++)
		if (p->fields[i].name && !strcmp(p->fields[i].name, name)) {
			const struct utrace_event_field *f = &p->fields[i];

			*out = (struct efield){ f->name, (uint32_t)f->offset, (uint32_t)f->size,
						f->is_signed != 0, event_ftype(f) };
			return true;
		}
	for (i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
		if (!strcmp(generic[i].name, name)) {
			*out = generic[i];
			return true;
		}
	return false;
}

/* The kernel's parse_field() and create_hist_field() for one atom
 * "name[.modifier]". */
static int parse_field(struct parser *p, const char *s, unsigned int flags,
		       struct utrace__hist_field *hf)
{
	char str[LAST_CMD_MAX], *field_name = str, *modifier;
	struct efield ef;
	unsigned long long buckets = 0;

	snprintf(str, sizeof(str), "%s", s);
	modifier = strchr(str, '.');
	if (modifier)
		*modifier++ = 0;
	if (modifier) {
		if (!strcmp(modifier, "hex")) {
			flags |= UTRACE__HF_HEX;
		} else if (!strcmp(modifier, "sym")) {
			flags |= UTRACE__HF_SYM;
		} else if (!strcmp(modifier, "symXoffset")) {
			flags |= UTRACE__HF_SYM_OFFSET;
		} else if (!strcmp(modifier, "execname") && !strcmp(field_name, "common_pid")) {
			flags |= UTRACE__HF_EXECNAME;
		} else if (!strcmp(modifier, "syscall")) {
			flags |= UTRACE__HF_SYSCALL;
		} else if (!strcmp(modifier, "log2")) {
			flags |= UTRACE__HF_LOG2;
		} else if (!strcmp(modifier, "usecs")) {
			flags |= UTRACE__HF_USECS;
		} else if (!strncmp(modifier, "bucket", 6)) {
			char *end;

			modifier += 6;
			if (*modifier == 's')
				modifier++;
			if (*modifier != '=')
				goto bad_modifier;
			modifier++;
			/* kstrtoul(s, 0): digits only, an optional final newline */
			errno = 0;
			buckets = strtoull(modifier, &end, 0);
			if (*end == '\n')
				end++;
			if (!isdigit((unsigned char)*modifier) || *end || errno || !buckets)
				goto bad_modifier;
			flags |= UTRACE__HF_BUCKET;
		} else if (!strncmp(modifier, "percent", 7)) {
			if (flags & (UTRACE__HF_KEY | UTRACE__HF_VAR))
				goto bad_modifier;
			flags |= UTRACE__HF_PERCENT;
		} else if (!strncmp(modifier, "graph", 5)) {
			if (flags & (UTRACE__HF_KEY | UTRACE__HF_VAR))
				goto bad_modifier;
			flags |= UTRACE__HF_GRAPH;
		} else {
bad_modifier:
			return hist_err(p, -EINVAL, "Invalid field modifier", modifier);
		}
	}
	memset(hf, 0, sizeof(*hf));
	hf->buckets = buckets;
	if (!strcmp(field_name, "common_timestamp")) {
		flags |= UTRACE__HF_TIMESTAMP;
		p->h->timestamps = true;
		if (flags & UTRACE__HF_USECS)
			p->ts_usecs = true;
		hf->src = UTRACE__HS_TIMESTAMP;
		hf->size = 8;
		snprintf(hf->name, sizeof(hf->name), "common_timestamp");
	} else if (!strcmp(field_name, "common_cpu")) {
		flags |= UTRACE__HF_CPU;
		hf->src = UTRACE__HS_CPU;
		hf->size = 4;
		snprintf(hf->name, sizeof(hf->name), "common_cpu");
	} else if (!strcmp(field_name, "hitcount")) {
		/* "tracing: Allow multiple hitcount values in histograms" */
		flags |= UTRACE__HF_HITCOUNT;
		hf->src = UTRACE__HS_COUNTER;
		hf->size = 8;
		snprintf(hf->name, sizeof(hf->name), "hitcount");
	} else {
		if (!find_field(p, field_name, &ef) || !ef.size) {
			if (!find_field(p, field_name, &ef) || ef.type != F_CPU)
				return hist_err(p, -EINVAL, "Couldn't find field", field_name);
			flags |= UTRACE__HF_CPU;
			hf->src = UTRACE__HS_CPU;
			hf->size = 4;
		} else if (ef.type == F_STATIC_STRING || ef.type == F_DYN_STRING) {
			flags |= UTRACE__HF_STRING;
			hf->src = ef.type == F_STATIC_STRING ? UTRACE__HS_STR : UTRACE__HS_DYNSTR;
			hf->offset = ef.offset;
			hf->size = ef.type == F_STATIC_STRING ? ef.size : UTRACE__HIST_STR_MAX;
		} else {
			if (ef.size != 1 && ef.size != 2 && ef.size != 4 && ef.size != 8)
				/* the kernel's create_hist_field() fails: -ENOMEM */
				return quiet_err(p, -ENOMEM, "a field of a size other than 1, 2, 4 "
						 "or 8 bytes can't be a key or a value");
			hf->src = UTRACE__HS_NUM;
			hf->offset = ef.offset;
			hf->size = ef.size;
			hf->is_signed = ef.is_signed;
		}
		snprintf(hf->name, sizeof(hf->name), "%s", ef.name);
	}
	hf->flags = flags;
	return 0;
}

/* The kernel's parse_expr() and parse_atom(), for what utrace supports:
 * one field, no arithmetic, no variables. */
static int parse_atom(struct parser *p, char *str, unsigned int flags,
		      struct utrace__hist_field *hf)
{
	char *s;

	if (strpbrk(str, "+-*/"))
		return quiet_err(p, -EINVAL, "expressions of fields (+ - * /) are not "
				 "supported by utrace");
	if (isdigit((unsigned char)str[0])) {
		char *end;

		errno = 0;
		(void)strtoull(str, &end, 0);
		if (*end || errno)
			return hist_err(p, -EINVAL, "Expecting numeric literal", str);
		return quiet_err(p, -EINVAL, "constants are not supported by utrace");
	}
	/* "system.event.field": the kernel looks for a variable, then
	 * takes what is after the second dot as the field */
	s = strchr(str, '.');
	if (s && strchr(s + 1, '.')) {
		s = strchr(s + 1, '.');
		str = s + 1;
	}
	if (str[0] == '$' && str[1])
		return hist_err(p, -EINVAL, "Couldn't find variable", str + 1);
	return parse_field(p, str, flags, hf);
}

/* ------------------------------------------------------------ parsing */

struct attrs {
	char *keys, *vals, *sort, *name, *clock;
	char *assign[UTRACE__HIST_VARS_MAX], *action, *track;
	bool track_first;
	unsigned int nr_assign;
	unsigned int bits;
	bool pause, cont, clear, nohitcount;
};

/* The kernel's parse_map_size(): bits, or -EINVAL. */
static int map_bits(const char *s)
{
	unsigned long long size;
	unsigned int bits = 0;
	char *end;

	errno = 0;
	size = strtoull(s, &end, 0);
	if (*end == '\n')
		end++;
	if (!isdigit((unsigned char)*s) || *end || errno)
		return -EINVAL;
	while (bits < 64 && (1ULL << bits) < size)
		bits++;
	if (bits < BITS_MIN || bits > BITS_MAX)
		return -EINVAL;
	return (int)bits;
}

static int parse_attrs(struct parser *p, char *s, struct attrs *a)
{
	while (s) {
		char *str = s, *rhs, *colon = strchr(s, ':');

		if (colon)
			*colon = 0;
		s = colon ? colon + 1 : NULL;
		rhs = strchr(str, '=');
		if (rhs) {
			if (!*++rhs)
				return hist_err(p, -EINVAL, "Empty assignment", str);
			if (!strncmp(str, "key=", 4) || !strncmp(str, "keys=", 5)) {
				a->keys = rhs;
			} else if (!strncmp(str, "val=", 4) || !strncmp(str, "vals=", 5) ||
				   !strncmp(str, "values=", 7)) {
				a->vals = rhs;
			} else if (!strncmp(str, "sort=", 5)) {
				a->sort = rhs;
			} else if (!strncmp(str, "name=", 5)) {
				a->name = str;
			} else if (!strncmp(str, "clock=", 6)) {
				size_t n;

				while (isspace((unsigned char)*rhs))
					rhs++;
				n = strlen(rhs);
				while (n && isspace((unsigned char)rhs[n - 1]))
					rhs[--n] = 0;
				a->clock = rhs;
			} else if (!strncmp(str, "size=", 5)) {
				int bits = map_bits(rhs);

				if (bits < 0)
					return quiet_err(p, -EINVAL, "");
				a->bits = (unsigned int)bits;
			} else if (p->env) {
				if (a->nr_assign == UTRACE__HIST_VARS_MAX)
					return hist_err(p, -EINVAL, "Too many variables defined",
							str);
				a->assign[a->nr_assign++] = str;
			} else {
				return quiet_err(p, -EINVAL, "variables (name=expression) are not "
						 "supported by utrace");
			}
		} else if (!strcmp(str, "nohitcount") || !strcmp(str, "NOHC")) {
			a->nohitcount = true;
		} else if (!strcmp(str, "pause")) {
			a->pause = true;
		} else if (!strcmp(str, "cont") || !strcmp(str, "continue")) {
			a->cont = true;
		} else if (!strcmp(str, "clear")) {
			a->clear = true;
		} else if (!strncmp(str, "onmatch(", 8) && p->env && !a->action) {
			a->action = str;
		} else if ((!strncmp(str, "onmax(", 6) || !strncmp(str, "onchange(", 9)) &&
			   p->env && !a->track) {
			a->track = str;
			a->track_first = !a->action;
		} else if (!strncmp(str, "onmatch(", 8) || !strncmp(str, "onmax(", 6) ||
			   !strncmp(str, "onchange(", 9)) {
			if (p->env)
				return quiet_err(p, -EINVAL, "utrace takes one onmatch() and one "
						 "onmax() or onchange() per trigger");
			return quiet_err(p, -EINVAL, "handlers and actions (onmatch, onmax, "
					 "onchange) are not supported by utrace");
		} else {
			return quiet_err(p, -EINVAL, "");
		}
	}
	if (!a->keys)
		return quiet_err(p, -EINVAL, "");
	return 0;
}

static int create_vals(struct parser *p, char *s)
{
	struct utrace__hist *h = p->h;
	unsigned int i, n_hitcount = 0;
	int r;

	memset(&h->vals[0], 0, sizeof(h->vals[0]));
	h->vals[0].flags = UTRACE__HF_HITCOUNT;
	h->vals[0].src = UTRACE__HS_COUNTER;
	snprintf(h->vals[0].name, sizeof(h->vals[0].name), "hitcount");
	h->nr_vals = 1;
	for (i = 0; s && i < UTRACE__HIST_VALS_MAX && h->nr_vals < UTRACE__HIST_VALS_MAX; i++) {
		char *f = s, *comma = strchr(s, ',');

		if (comma)
			*comma = 0;
		s = comma ? comma + 1 : NULL;
		/* the first plain "hitcount" is the one every table has; a
		 * later one, or hitcount.percent, is a value of its own */
		if (!strcmp(f, "hitcount") && !n_hitcount++)
			continue;
		r = parse_atom(p, f, 0, &h->vals[h->nr_vals]);
		if (r < 0)
			return r;
		if (h->vals[h->nr_vals].flags & (UTRACE__HF_BUCKET | UTRACE__HF_LOG2 |
						 UTRACE__HF_SYM | UTRACE__HF_SYM_OFFSET |
						 UTRACE__HF_SYSCALL))
			return hist_err(p, -EINVAL, "Invalid field modifier", f);
		if (h->vals[h->nr_vals].flags & UTRACE__HF_STRING)
			return quiet_err(p, -EINVAL, "a string can't be a value");
		h->nr_vals++;
	}
	if (s && strcmp(s, "hitcount"))
		return quiet_err(p, -EINVAL, "");
	if (h->nr_vals == 1 && h->nohitcount)
		return hist_err(p, -ENOENT, "Non-hitcount value is required for 'nohitcount'",
				NULL);
	return 0;
}

static int create_keys(struct parser *p, char *s)
{
	struct utrace__hist *h = p->h;
	int r;

	h->nr_keys = 0;
	while (s && h->nr_keys < UTRACE__HIST_KEYS_MAX) {
		struct utrace__hist_field *k = &h->keys[h->nr_keys];
		char *f = s, *comma = strchr(s, ',');
		uint32_t size;

		if (comma)
			*comma = 0;
		s = comma ? comma + 1 : NULL;
		if (!strcmp(f, "stacktrace") || !strcmp(f, "STACKTRACE")) {
			/* the event's call stack (the kernel's keys=stacktrace):
			 * 16 return addresses, 0 after the last */
			memset(k, 0, sizeof(*k));
			snprintf(k->name, sizeof(k->name), "stacktrace");
			k->flags = UTRACE__HF_KEY;
			k->src = UTRACE__HS_STACK;
			k->cmp_size = 8;
			k->key_offset = h->key_size;
			k->key_size = 8 * UTRACE__HIST_STACK_DEPTH;
			h->key_size += k->key_size;
			if (h->key_size > KEY_SIZE_MAX)
				return quiet_err(p, -EINVAL, "");
			h->nr_keys++;
			h->stacks = true;
			continue;
		}
		r = parse_atom(p, f, UTRACE__HF_KEY, k);
		if (r < 0)
			return r;
		/* the sort compares a number as its field's type */
		k->cmp_size = k->src == UTRACE__HS_NUM ? k->size : 8;
		k->cmp_signed = k->src == UTRACE__HS_NUM && k->is_signed;
		size = (k->flags & UTRACE__HF_STRING) ? k->size : 8;
		size = (size + 7) & ~7u;
		k->key_offset = h->key_size;
		k->key_size = size;
		h->key_size += size;
		if (h->key_size > KEY_SIZE_MAX)
			return quiet_err(p, -EINVAL, "");
		h->nr_keys++;
	}
	if (s)
		return quiet_err(p, -EINVAL, "");
	return 0;
}

static int is_descending(struct parser *p, const char *mod)
{
	if (!mod || !strcmp(mod, "ascending"))
		return 0;
	if (!strcmp(mod, "descending"))
		return 1;
	return hist_err(p, -EINVAL, "Invalid sort modifier", mod);
}

static int create_sort(struct parser *p, char *s)
{
	struct utrace__hist *h = p->h;
	unsigned int i, j;
	int d;

	h->nr_sort = 1;
	memset(&h->sort[0], 0, sizeof(h->sort[0]));
	if (!s)
		return 0;
	for (i = 0; i < UTRACE__HIST_SORT_MAX; i++) {
		struct utrace__hist_sort *sk = &h->sort[i];
		char *f = s, *comma, *mod;
		bool found = false;

		if (!s)
			break;
		comma = strchr(s, ',');
		if (comma)
			*comma = 0;
		s = comma ? comma + 1 : NULL;
		memset(sk, 0, sizeof(*sk));
		if (!*f)
			return hist_err(p, -EINVAL, "Empty sort field", "sort=");
		if (i == UTRACE__HIST_SORT_MAX - 1 && s)
			return hist_err(p, -EINVAL, "Too many sort fields (Max = 2)", "sort=");
		mod = strchr(f, '.');
		if (mod)
			*mod++ = 0;
		if (!*f)
			return hist_err(p, -EINVAL, "Empty sort field", "sort=");
		if (!strcmp(f, "hitcount")) {
			d = is_descending(p, mod);
			if (d < 0)
				return d;
			sk->descending = d;
			continue;
		}
		for (j = 1; j < h->nr_vals && !found; j++)
			if (!strcmp(f, h->vals[j].name)) {
				sk->idx = j;
				found = true;
			}
		for (j = 0; j < h->nr_keys && !found; j++)
			if (!strcmp(f, h->keys[j].name)) {
				sk->is_key = true;
				sk->idx = j;
				found = true;
			}
		if (!found)
			return hist_err(p, -EINVAL, "Sort field must be a key or a val", f);
		d = is_descending(p, mod);
		if (d < 0)
			return d;
		sk->descending = d;
	}
	h->nr_sort = i;
	return 0;
}

static bool known_clock(const char *c)
{
	static const char *const clocks[] = {
		"local", "global", "counter", "uptime", "perf", "mono", "mono_raw",
		"boot", "tai", "x86-tsc",
	};
	unsigned int i;

	for (i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
		if (!strcmp(c, clocks[i]))
			return true;
	return false;
}

static const char *flag_name(unsigned int flags);

/* A field's type, as the kernel's hist_field->type: the event's declared
 * type; for a string "char[N]" or "__data_loc char[]" (kept in buf). */
static const char *operand_type(const struct parser *p, const struct utrace__hist_field *f,
				char *buf, size_t n)
{
	unsigned int i;

	if (f->flags & (UTRACE__HF_TIMESTAMP | UTRACE__HF_HITCOUNT))
		return "u64";
	if (f->src == UTRACE__HS_CPU)
		return "unsigned int";
	if (f->src == UTRACE__HS_STR) {
		snprintf(buf, n, "char[%u]", (unsigned int)f->size);
		return buf;
	}
	if (f->src == UTRACE__HS_DYNSTR || (f->flags & UTRACE__HF_EXECNAME)) {
		/* update_var_execname(): the comm is a "char[]" */
		snprintf(buf, n, "%s", f->src == UTRACE__HS_DYNSTR ? "__data_loc char[]" : "char[]");
		return buf;
	}
	for (i = 0; i < p->nr; i++)
		if (p->fields[i].name && !strcmp(p->fields[i].name, f->name))
			return p->fields[i].type;
	if (!strcmp(f->name, "common_pid"))
		return "int";
	return "unsigned char";
}

static bool node_is_str(const struct utrace__hist *h, const struct utrace__hist_node *n)
{
	if (n->op)
		return false;
	if (n->o.ref == UTRACE__HO_FIELD)
		return (n->o.f.flags & (UTRACE__HF_STRING | UTRACE__HF_EXECNAME)) != 0;
	if (n->o.ref == UTRACE__HO_OWN)
		return h->vars[n->o.var].is_str;
	return n->o.ref >= 0 && h->refs[n->o.ref].is_str;
}

/* The kernel's contains_operator(): the root operator of an expression,
 * the rightmost of the lowest precedence ('-' first in the string: a
 * unary minus), so that a-b-c is (a-b)-c; 0 when there is none. */
static char find_operator(char *str, char **sep)
{
	char *minus = strrchr(str, '-'), *plus = strrchr(str, '+');
	char *div = strrchr(str, '/'), *mult = strrchr(str, '*');
	/* positions, -1 for none (NULL does not compare with a pointer) */
	ptrdiff_t m = minus ? minus - str : -1, p = plus ? plus - str : -1;
	ptrdiff_t d = div ? div - str : -1, x = mult ? mult - str : -1;

	*sep = NULL;
	if (m == 0) {
		*sep = minus;
		return 'u';
	}
	if (p >= 0 || m >= 0) {
		*sep = p > m ? plus : minus;
		return p > m ? '+' : '-';
	}
	if (x > d) {
		*sep = mult;
		return '*';
	}
	*sep = div;
	return div ? '/' : 0;
}

/* The kernel's hist_field_div() and its variants for a constant divisor
 * (div_by_power_of_two(), div_by_mult_and_shift(), ...): the same
 * results, the mult-and-shift approximation included. */
static uint64_t divide(const struct utrace__hist_node *n, uint64_t a, uint64_t b)
{
	switch (n->div) {
	case UTRACE__HD_SHIFT:
		return a >> __builtin_ctzll(b);
	case UTRACE__HD_MULT:
		if (a < (1u << 20))
			return (a * n->mult + ((1u << 20) - 1)) >> 20;
		return a / b;
	case UTRACE__HD_DIV:
		return a / b;
	default:
		if (!b)
			return (uint64_t)-1;
		if (!(b & (b - 1)))
			return a >> __builtin_ctzll(b);
		return a / b;
	}
}

/* One node's value for constants only (the parser's folding). */
uint64_t utrace__hist_fold(const struct utrace__hist_node *n, uint64_t a, uint64_t b)
{
	switch (n->op) {
	case '+': return a + b;
	case '-': return a - b;
	case '*': return a * b;
	case '/': return divide(n, a, b);
	default: return (uint64_t)-(int64_t)a;
	}
}

static int new_node(struct parser *p, struct utrace__hist_var *v)
{
	if (v->nr_nodes == UTRACE__HIST_NODES_MAX)
		return quiet_err(p, -EINVAL, "");   /* cannot be: 3 operators at most */
	memset(&v->n[v->nr_nodes], 0, sizeof(v->n[0]));
	return (int)v->nr_nodes++;
}

/* "$name" or "SYSTEM.EVENT.$name": a variable of this trigger's, else of
 * another through env (the kernel's parse_var_ref()). */
static int parse_ref(struct parser *p, char *s, const char *sys, const char *event,
		     struct utrace__hist_operand *o, const char **type, bool *usecs, bool *is_str,
		     uint32_t *str_cap)
{
	struct utrace__hist *h = p->h;
	const struct utrace__hist_var *var = NULL;
	const void *owner;
	unsigned int i, idx;

	for (i = 0; i < h->nr_vars && !sys; i++)
		if (!strcmp(h->vars[i].name, s + 1)) {
			o->ref = UTRACE__HO_OWN;
			o->var = i;
			*type = h->vars[i].type;
			*usecs = h->vars[i].usecs;
			*is_str = h->vars[i].is_str;
			*str_cap = h->vars[i].str_cap;
			return 0;
		}
	if (!p->env->find_var ||
	    p->env->find_var(p->env->arg, sys, event, s + 1, &owner, &idx, &var) < 0)
		return hist_err(p, -EINVAL, "Couldn't find variable", s + 1);
	for (i = 0; i < h->nr_refs; i++)
		if (h->refs[i].owner == owner && h->refs[i].idx == idx)
			break;
	if (i == UTRACE__HIST_REFS_MAX)
		return hist_err(p, -EINVAL, "Too many variables defined", s);
	if (i == h->nr_refs) {
		struct utrace__hist_ref *r = &h->refs[h->nr_refs++];

		r->owner = owner;
		r->idx = idx;
		r->is_str = var->is_str;
		if (sys)
			snprintf(r->name, sizeof(r->name), "%s.%s.%s", sys, event, s + 1);
		else
			snprintf(r->name, sizeof(r->name), "%s", s + 1);
	}
	o->ref = (int)i;
	*type = var->type;
	*usecs = var->usecs;
	*is_str = var->is_str;
	*str_cap = var->str_cap;
	return 0;
}

/*
 * An operand (the kernel's parse_atom()): a number, a variable
 * ("$name", "SYSTEM.EVENT.$name") or a field.  flags: UTRACE__HF_VAR when
 * it is a variable's whole expression (a modifier it may not have is
 * refused where the kernel refuses it).
 */
static int parse_leaf(struct parser *p, struct utrace__hist_var *v, char *str,
		      unsigned int flags, int *node)
{
	char sys[64], event[64], *dot, *dot2;
	struct utrace__hist_node *n;
	int k = new_node(p, v), r;

	if (k < 0)
		return k;
	*node = k;
	n = &v->n[k];
	if (isdigit((unsigned char)str[0])) {
		/* parse_const(): kstrtoull(s, 0) */
		char *end;

		errno = 0;
		n->o.constant = strtoull(str, &end, 0);
		if (*end == '\n')
			end++;
		if (*end || errno)
			return hist_err(p, -EINVAL, "Expecting numeric literal", str);
		n->o.ref = UTRACE__HO_CONST;
		n->type = "u64";
		return 0;
	}
	/* "system.event.name": its system and event */
	dot = strchr(str, '.');
	dot2 = dot ? strchr(dot + 1, '.') : NULL;
	if (dot2 && dot2[1] == '$' && (size_t)(dot - str) < sizeof(sys) &&
	    (size_t)(dot2 - dot) <= sizeof(event)) {
		bool is_str;

		snprintf(sys, sizeof(sys), "%.*s", (int)(dot - str), str);
		snprintf(event, sizeof(event), "%.*s", (int)(dot2 - dot - 1), dot + 1);
		return parse_ref(p, dot2 + 1, sys, event, &n->o, &n->type, &n->usecs, &is_str,
				 &n->str_cap);
	}
	if (dot2)
		str = dot2 + 1;
	if (str[0] == '$' && str[1]) {
		bool is_str;

		return parse_ref(p, str, NULL, NULL, &n->o, &n->type, &n->usecs, &is_str,
				 &n->str_cap);
	}
	n->o.ref = UTRACE__HO_FIELD;
	r = parse_field(p, str, flags, &n->o.f);
	if (r < 0)
		return r;
	n->type = operand_type(p, &n->o.f, v->type_buf, sizeof(v->type_buf));
	if (n->o.f.src == UTRACE__HS_STR)
		n->str_cap = n->o.f.size < UTRACE__HIST_STR_MAX ? n->o.f.size : UTRACE__HIST_STR_MAX;
	else if (n->o.f.flags & UTRACE__HF_EXECNAME)
		n->str_cap = 16;
	else
		n->str_cap = UTRACE__HIST_STR_MAX;
	n->usecs = (n->o.f.flags & (UTRACE__HF_TIMESTAMP | UTRACE__HF_USECS)) ==
		   (UTRACE__HF_TIMESTAMP | UTRACE__HF_USECS);
	return 0;
}

static int parse_expr(struct parser *p, struct utrace__hist_var *v, char *str,
		      unsigned int flags, unsigned int *nsub, int *node);

/* An operand of an operator: an expression, not a string. */
static int parse_operand(struct parser *p, struct utrace__hist_var *v, char *str,
			 unsigned int *nsub, int *node)
{
	int r = parse_expr(p, v, str, 0, nsub, node);

	if (r == 0 && node_is_str(p->h, &v->n[*node]))
		return hist_err(p, -EINVAL, "String type can not be an operand in expression", str);
	return r;
}

/* -(EXPR): the kernel's parse_unary(). */
static int parse_unary(struct parser *p, struct utrace__hist_var *v, char *str,
		       unsigned int *nsub, int *node)
{
	char *close;
	int k, a, r;

	if (++*nsub > 3)
		return hist_err(p, -EINVAL, "Too many subexpressions (3 max)", str);
	str++;
	if (*str != '(')
		return quiet_err(p, -EINVAL, "");
	str++;
	close = strrchr(str, ')');
	if (!close)
		return quiet_err(p, -EINVAL, "");
	if (close[1])
		return hist_err(p, -EINVAL, "Unary minus not supported in sub-expressions", str);
	*close = 0;
	k = new_node(p, v);
	if (k < 0)
		return k;
	r = parse_operand(p, v, str, nsub, &a);
	if (r < 0)
		return r;
	v->n[k].op = 'u';
	v->n[k].a = (unsigned char)a;
	v->n[k].usecs = v->n[a].usecs;
	*node = k;
	return 0;
}

/*
 * The kernel's parse_expr(): an expression split at its root operator
 * (find_operator()), each side parsed again; at most 3 operators.  Two
 * constants fold into one, as the kernel's combine_consts; a division by
 * a constant takes the kernel's faster variants, with their results.
 */
static int parse_expr(struct parser *p, struct utrace__hist_var *v, char *str,
		      unsigned int flags, unsigned int *nsub, int *node)
{
	struct utrace__hist_node *n;
	char *sep, *left, op;
	int k, a, b, r;

	if (*nsub > 3)
		return hist_err(p, -EINVAL, "Too many subexpressions (3 max)", str);
	op = find_operator(str, &sep);
	if (!op)
		return parse_leaf(p, v, str, flags, node);
	if (op == 'u')
		return parse_unary(p, v, str, nsub, node);
	++*nsub;
	*sep = 0;
	left = str;
	str = sep + 1;
	if (!*left || !*str)
		return quiet_err(p, -EINVAL, "");
	k = new_node(p, v);
	if (k < 0)
		return k;
	r = parse_operand(p, v, left, nsub, &a);
	if (r < 0)
		return r;
	r = parse_operand(p, v, str, nsub, &b);
	if (r < 0)
		return r;
	/* check_expr_operands() */
	if (v->n[a].usecs != v->n[b].usecs)
		return hist_err(p, -EINVAL, "Timestamp units in expression don't match", NULL);
	n = &v->n[k];
	n->op = op;
	n->a = (unsigned char)a;
	n->b = (unsigned char)b;
	n->usecs = v->n[a].usecs;
	*node = k;
	if (op == '/' && !v->n[b].op && v->n[b].o.ref == UTRACE__HO_CONST) {
		uint64_t d = v->n[b].o.constant;

		if (!d) {
			hist_err(p, -EINVAL, "Division by zero", str);
			return p->err->err = -EDOM;
		}
		if (!(d & (d - 1))) {
			n->div = UTRACE__HD_SHIFT;
		} else if (d > (1u << 20)) {
			n->div = UTRACE__HD_DIV;
		} else {
			n->div = UTRACE__HD_MULT;
			n->mult = (1u << 20) / d;
		}
	}
	if (!v->n[a].op && v->n[a].o.ref == UTRACE__HO_CONST &&
	    !v->n[b].op && v->n[b].o.ref == UTRACE__HO_CONST) {
		uint64_t c = utrace__hist_fold(n, v->n[a].o.constant, v->n[b].o.constant);

		/* the operands are the last nodes made: take them back */
		v->nr_nodes = (unsigned int)k + 1;
		memset(n, 0, sizeof(*n));
		n->o.ref = UTRACE__HO_CONST;
		n->o.constant = c;
	}
	return 0;
}

/* The kernel's get_hist_field_flags() of an operand or expression. */
static const char *node_flag(const struct utrace__hist_node *n)
{
	if (n->op)
		return n->usecs ? "usecs" : NULL;
	if (n->o.ref != UTRACE__HO_FIELD)
		return NULL;
	return flag_name(n->o.f.flags);
}

static void node_text(const struct utrace__hist *h, const struct utrace__hist_var *v,
		      unsigned int k, char *out, size_t size, unsigned int level);

/* The kernel's expr_field_str(): an operand as an expression prints it. */
static void node_field_str(const struct utrace__hist *h, const struct utrace__hist_var *v,
			   unsigned int k, char *out, size_t size)
{
	const struct utrace__hist_node *n = &v->n[k];
	const char *fl = node_flag(n);
	size_t len = strlen(out);

	if (n->op) {
		/* hist_field_name(): the expression's own name */
		node_text(h, v, k, out + len, size - len, 0);
	} else if (n->o.ref == UTRACE__HO_CONST) {
		snprintf(out + len, size - len, "%" PRIu64, n->o.constant);
	} else if (n->o.ref == UTRACE__HO_OWN) {
		snprintf(out + len, size - len, "$%s", h->vars[n->o.var].name);
		fl = NULL;
	} else if (n->o.ref >= 0) {
		snprintf(out + len, size - len, "$%s", h->refs[n->o.ref].name);
		fl = NULL;
	} else {
		snprintf(out + len, size - len, "%s",
			 n->o.f.src == UTRACE__HS_CPU ? "common_cpu" : n->o.f.name);
	}
	len = strlen(out);
	if (fl)
		snprintf(out + len, size - len, ".%s", fl);
}

/* The kernel's expr_str(): an operator node's name. */
static void node_text(const struct utrace__hist *h, const struct utrace__hist_var *v,
		      unsigned int k, char *out, size_t size, unsigned int level)
{
	const struct utrace__hist_node *n = &v->n[k];
	size_t len;

	out[0] = 0;
	if (!n->op || level > 1) {
		if (!n->op)
			node_field_str(h, v, k, out, size);
		return;
	}
	if (n->op == 'u') {
		snprintf(out, size, "-(");
		len = strlen(out);
		node_text(h, v, n->a, out + len, size - len, level + 1);
		len = strlen(out);
		snprintf(out + len, size - len, ")");
		return;
	}
	node_field_str(h, v, n->a, out, size);
	len = strlen(out);
	snprintf(out + len, size - len, "%c", n->op);
	node_field_str(h, v, n->b, out, size);
}

/* name=EXPR[,name=EXPR]... (the kernel's parse_var_defs() and
 * create_var_field()). */
static int create_vars(struct parser *p, char *str)
{
	struct utrace__hist *h = p->h;
	char *def;
	int r;

	while ((def = strsep(&str, ","))) {
		struct utrace__hist_var *v = &h->vars[h->nr_vars];
		char *eq = strchr(def, '='), *rhs;
		unsigned int i, nsub = 0;
		int root;

		if (!eq)
			return hist_err(p, -EINVAL, "Malformed assignment", def);
		*eq = 0;
		rhs = eq + 1;
		if (h->nr_vars == UTRACE__HIST_VARS_MAX)
			return hist_err(p, -EINVAL, "Too many variables defined", def);
		if (!*def || strlen(def) >= sizeof(v->name))
			return hist_err(p, -EINVAL, "Malformed assignment", def);
		for (i = 0; i < h->nr_vars; i++)
			if (!strcmp(h->vars[i].name, def))
				return hist_err(p, -EINVAL, "Variable already defined", def);
		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", def);
		r = parse_expr(p, v, rhs, UTRACE__HF_VAR, &nsub, &root);
		if (r < 0)
			return r;
		/* the root is node 0: parse_expr() makes it first */
		if (v->n[0].op == 0 && v->n[0].o.ref == UTRACE__HO_FIELD &&
		    (v->n[0].o.f.flags & (UTRACE__HF_BUCKET | UTRACE__HF_LOG2)))
			return hist_err(p, -EINVAL, "Invalid field modifier", rhs);
		v->usecs = v->n[0].usecs;
		v->is_str = node_is_str(h, &v->n[0]);
		/* an expression has its first operand's type (the kernel's
		 * expr->type), a constant or an expression of them u64 */
		for (i = 0; v->n[i].op; i = v->n[i].a)
			;
		v->type = v->n[i].type ? v->n[i].type : "u64";
		if (v->is_str) {
			/* min(size, STR_VAR_LEN_MAX) bytes, the NUL included */
			v->str_cap = v->n[0].str_cap ? v->n[0].str_cap : 1;
			v->str_off = h->vstr_size;
			h->vstr_size += (v->str_cap + 7) & ~7u;
		}
		/* the readback: hist_field_print() of the variable */
		if (v->n[0].op) {
			node_text(h, v, 0, v->text, sizeof(v->text), 0);
		} else {
			v->text[0] = 0;
			node_field_str(h, v, 0, v->text, sizeof(v->text));
			if (v->n[0].o.ref == UTRACE__HO_FIELD && v->n[0].o.f.buckets)
				snprintf(v->text + strlen(v->text), sizeof(v->text) - strlen(v->text),
					 "=%" PRIu64, v->n[0].o.f.buckets);
		}
		h->nr_vars++;
	}
	return 0;
}

static char *strip_blank(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

/* The part after the handler: "trace(NAME,PARAM,...)", "NAME(PARAM,...)",
 * "save(FIELD,...)" or "snapshot()" (the kernel's action_parse(),
 * trace_action_create(), action_create()). */
static int create_act(struct parser *p, struct utrace__hist_action *a, char *act)
{
	const struct utrace_event_field *sf;
	char *args, *end, *name, *tok;
	unsigned int nr = 0, i, nr_str = 0;
	const char *type;
	int r;

	if (*act != '.')
		return hist_err(p, -EINVAL, "No action found", act);
	act++;
	args = strchr(act, '(');
	end = args ? strrchr(args, ')') : NULL;
	if (!args || !end || end[1])
		return hist_err(p, -EINVAL, "No closing paren found", act);
	*args++ = 0;
	*end = 0;
	if (!strcmp(act, "save") || !strcmp(act, "snapshot")) {
		a->kind = !strcmp(act, "save") ? UTRACE__HA_SAVE : UTRACE__HA_SNAPSHOT;
		snprintf(a->synth, sizeof(a->synth), "%s", act);
		if (a->handler == UTRACE__HA_ONMATCH)
			return hist_err(p, -EINVAL, "Handler doesn't support action", act);
		if (a->kind == UTRACE__HA_SNAPSHOT)
			return 0;       /* its parameters are not looked at */
		if (!*strip_blank(args))
			return hist_err(p, -EINVAL, "No params found for save()", NULL);
	} else if (!strcmp(act, "trace")) {
		a->trace_kw = true;
		name = strip_blank(strsep(&args, ","));
		snprintf(a->synth, sizeof(a->synth), "%s", name);
	} else {
		snprintf(a->synth, sizeof(a->synth), "%s", act);
	}
	while (args && (tok = strsep(&args, ","))) {
		tok = strip_blank(tok);
		if (nr == UTRACE__HIST_PARAMS_MAX)
			return hist_err(p, -EINVAL, "Too many action params", tok);
		snprintf(a->params[nr++], sizeof(a->params[0]), "%s", tok);
	}
	a->nr_params = nr;
	if (a->kind == UTRACE__HA_SAVE) {
		/* each a field of this event, kept with the entry */
		for (i = 0; i < nr; i++) {
			char copy[64];
			struct utrace__hist_field *f = &a->p[i].f;

			snprintf(copy, sizeof(copy), "%s", a->params[i]);
			a->p[i].ref = -1;
			r = parse_field(p, copy, 0, f);
			if (r < 0)
				return r;
			a->save_off[i] = p->h->save_size;
			p->h->save_size += (f->flags & UTRACE__HF_STRING) ?
				((f->size > UTRACE__HIST_STR_MAX - 1 ? UTRACE__HIST_STR_MAX - 1 :
				  f->size) + 8) & ~7u : 8;
		}
		return 0;
	}
	a->target = p->env->get_synth ? p->env->get_synth(p->env->arg, a->synth, &sf, &i) : NULL;
	if (!a->target)
		return hist_err(p, -EINVAL, "Couldn't find synthetic event", a->synth);
	if (i != nr)
		return hist_err(p, -EINVAL, "Param count doesn't match synthetic event field count",
				a->synth);
	for (i = 0; i < nr; i++) {
		struct utrace__hist_var tmp;
		char copy[64];
		/* char[N] or char[] (a __data_loc string) */
		bool str = (sf[i].kind == UTRACE_FIELD_ARRAY || sf[i].kind == UTRACE_FIELD_STRING) &&
			   !strcmp(sf[i].type, "char"), pstr;
		int k;

		memset(&tmp, 0, sizeof(tmp));
		snprintf(copy, sizeof(copy), "%s", a->params[i]);
		r = parse_leaf(p, &tmp, copy, 0, &k);
		if (r < 0)
			return r;
		a->p[i] = tmp.n[k].o;
		pstr = node_is_str(p->h, &tmp.n[k]);
		type = tmp.n[k].type ? tmp.n[k].type : "u64";
		/* check_synth_field(): a string for a string field, else the
		 * same type */
		if (str != pstr || (!str && strcmp(type, sf[i].type)))
			return hist_err(p, -EINVAL,
					"Param type doesn't match synthetic event field type",
					a->params[i]);
		if (str && ++nr_str > UTRACE__HIST_STR_PARAMS_MAX)
			return quiet_err(p, -EINVAL, "utrace passes at most 4 strings to a "
					 "synthetic event");
	}
	return 0;
}

static struct utrace__hist_action *new_action(struct utrace__hist_action **at)
{
	*at = calloc(1, sizeof(**at));
	return *at;
}

/* onmatch(SYS.EVENT).ACTION (the kernel's onmatch_parse()). */
static int create_action(struct parser *p, char *s)
{
	struct utrace__hist_action *a = new_action(&p->h->action);
	char *m = s + 8, *close = strchr(m, ')'), *dot;

	if (!a)
		return -ENOMEM;
	a->handler = UTRACE__HA_ONMATCH;
	if (!close)
		return hist_err(p, -EINVAL, "No closing paren found", m);
	*close = 0;
	dot = strchr(m, '.');
	if (!dot || strlen(m) >= sizeof(a->system) + sizeof(a->event))
		return hist_err(p, -EINVAL, "Invalid subsystem or event name", m);
	*dot = 0;
	snprintf(a->system, sizeof(a->system), "%s", m);
	snprintf(a->event, sizeof(a->event), "%s", dot + 1);
	if (!p->env->find_event || !p->env->find_event(p->env->arg, a->system, a->event))
		return hist_err(p, -EINVAL, "Invalid subsystem or event name", dot + 1);
	return create_act(p, a, close + 1);
}

/* onmax($var).ACTION or onchange($var).ACTION (the kernel's
 * track_data_parse(), track_data_create()). */
static int create_track(struct parser *p, char *s)
{
	struct utrace__hist_action *a = new_action(&p->h->track);
	char *v = strchr(s, '(') + 1, *close = strchr(v, ')');
	unsigned int i;

	if (!a)
		return -ENOMEM;
	a->handler = s[2] == 'm' ? UTRACE__HA_ONMAX : UTRACE__HA_ONCHANGE;
	if (!close)
		return hist_err(p, -EINVAL, "No closing paren found", v);
	*close = 0;
	v = strip_blank(v);
	snprintf(a->var_str, sizeof(a->var_str), "%s", v);
	if (v[0] != '$')
		return hist_err(p, -EINVAL, "For onmax(x) or onchange(x), x must be a variable", v);
	for (i = 0; i < p->h->nr_vars; i++)
		if (!strcmp(p->h->vars[i].name, v + 1))
			break;
	if (i == p->h->nr_vars)
		return hist_err(p, -EINVAL, "Couldn't find onmax or onchange variable", v + 1);
	if (p->h->vars[i].is_str)
		/* the kernel would compare the addresses of its copies */
		return quiet_err(p, -EINVAL, "a string variable can't be tracked by onmax() or "
				 "onchange() in utrace");
	a->track_var = i;
	return create_act(p, a, close + 1);
}

static bool same_action(const struct utrace__hist_action *a, const struct utrace__hist_action *b)
{
	unsigned int i;

	if (!a || !b)
		return !a && !b;
	if (a->handler != b->handler || a->kind != b->kind || a->nr_params != b->nr_params ||
	    strcmp(a->synth, b->synth) || strcmp(a->system, b->system) ||
	    strcmp(a->event, b->event) || strcmp(a->var_str, b->var_str))
		return false;
	for (i = 0; i < a->nr_params; i++)
		if (strcmp(a->params[i], b->params[i]))
			return false;
	return true;
}

static void free_action(const struct utrace__hist *h, struct utrace__hist_action *a)
{
	if (a && a->target && h->env && h->env->put_synth)
		h->env->put_synth(h->env->arg, a->target);
	free(a);
}

/* The fixed record bytes a field reads (0 for the others). */
static uint32_t field_end(const struct utrace__hist_field *f)
{
	switch (f->src) {
	case UTRACE__HS_NUM:
	case UTRACE__HS_STR:
		return f->offset + f->size;
	case UTRACE__HS_DYNSTR:
		return f->offset + 4;
	default:
		return 0;
	}
}

void utrace__hist_free(struct utrace__hist *h)
{
	if (!h)
		return;
	free_action(h, h->action);
	free_action(h, h->track);
	utrace__filter_free(h->filter);
	free(h->filter_str);
	free(h->clock);
	free(h->name);
	free(h);
}

static int parse(const char *text, const struct utrace_event_field *fields, unsigned int nr,
		 const struct utrace__filter_syms *syms, const struct utrace__hist_env *env,
		 struct utrace__hist **out, struct utrace__hist_error *err)
{
	struct parser p = { .err = err, .fields = fields, .nr = nr, .env = env };
	struct attrs a = { 0 };
	char *buf, *cmd, *param, *filter = NULL, *q, *x;
	size_t n;
	unsigned int i;
	int r;

	*out = NULL;
	memset(err, 0, sizeof(*err));
	buf = strdup(text);
	p.h = calloc(1, sizeof(*p.h));
	if (!buf || !p.h) {
		r = -ENOMEM;
		goto fail;
	}
	/* the trigger file's write: strim(), then the command up to ": \t" */
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	cmd = buf;
	while (isspace((unsigned char)*cmd))
		cmd++;
	param = cmd + strcspn(cmd, ": \t");
	if (*param)
		*param++ = 0;
	while (isspace((unsigned char)*param))
		param++;
	if (!strcmp(cmd, "!hist")) {
		r = quiet_err(&p, -EINVAL, "removing a trigger (!hist) has no meaning here");
		goto fail;
	}
	if (strcmp(cmd, "hist")) {
		r = quiet_err(&p, -EINVAL, "not a hist trigger: give hist:keys=...");
		goto fail;
	}
	if (!*param) {
		r = quiet_err(&p, -EINVAL, "");
		goto fail;
	}
	snprintf(p.last_cmd, sizeof(p.last_cmd), "hist:%.*s",
		 (int)(LAST_CMD_MAX - 1 - sizeof("hist:")), param);

	/* the kernel's split of "k:v [if filter]": an "if" between blanks */
	for (q = param; (q = strstr(q, "if")); q++) {
		if (q == param) {
			r = quiet_err(&p, -EINVAL, "");
			goto fail;
		}
		if (q[-1] != ' ' && q[-1] != '\t')
			continue;
		if (q >= param + strlen(param) - 2 - 1) {
			r = quiet_err(&p, -EINVAL, "");
			goto fail;
		}
		if (q[2] != ' ' && q[2] != '\t')
			continue;
		break;
	}
	if (q) {
		/* set_trigger_filter(): strsep() "if" off at one blank */
		q[-1] = 0;
		filter = q + 3;
		n = strlen(filter);
		while (n && isspace((unsigned char)filter[n - 1]))
			filter[--n] = 0;
		n = strlen(param);
		while (n && isspace((unsigned char)param[n - 1]))
			param[--n] = 0;
	}
	/* as the kernel: ".sym-offset" is ".symXoffset" from here on */
	for (x = strstr(param, ".sym-offset"); x; x = strstr(x + 11, ".sym-offset"))
		x[4] = 'X';

	r = parse_attrs(&p, param, &a);
	if (r < 0)
		goto fail;
	p.h->nohitcount = a.nohitcount;
	p.h->pause = a.pause;
	p.h->cont = a.cont;
	p.h->clear = a.clear;
	p.h->bits = a.bits ? a.bits : UTRACE__HIST_BITS_DEFAULT;
	p.h->env = env;
	r = create_vals(&p, a.vals);
	if (r < 0)
		goto fail;
	for (i = 0; i < a.nr_assign; i++) {
		r = create_vars(&p, a.assign[i]);
		if (r < 0)
			goto fail;
	}
	r = create_keys(&p, a.keys);
	if (r < 0)
		goto fail;
	r = create_sort(&p, a.sort);
	if (r < 0)
		goto fail;
	if (a.action) {
		r = create_action(&p, a.action);
		if (r < 0)
			goto fail;
	}
	if (a.track) {
		r = create_track(&p, a.track);
		if (r < 0)
			goto fail;
	}
	p.h->track_first = a.track_first;
	if (p.h->timestamps && a.clock && !known_clock(a.clock)) {
		r = hist_err(&p, -EINVAL, "Couldn't set trace_clock", a.clock);
		goto fail;
	}
	if (a.name) {
		p.h->name = strdup(a.name);
		if (!p.h->name) {
			r = -ENOMEM;
			goto fail;
		}
	}
	if (filter) {
		const struct utrace_event_field *ff = fields;

		p.h->filter_str = strdup(filter);
		if (!p.h->filter_str) {
			r = -ENOMEM;
			goto fail;
		}
		r = utrace__filter_compile_syms(filter, ff, nr, syms, &p.h->filter, &err->fe);
		if (r < 0) {
			err->err = r;
			err->in_filter = true;
			err->logged = true;
			err->filter_expr = strdup(filter);
			snprintf(err->msg, sizeof(err->msg), "%s", err->fe.msg);
			goto fail;
		}
	}
	/* the clock it would set ("global" unless told) */
	if (p.h->timestamps) {
		char *c = strdup(a.clock ? a.clock : "global");

		if (!c) {
			r = -ENOMEM;
			goto fail;
		}
		p.h->clock = c;
	}
	p.h->ts_usecs = p.ts_usecs;
	for (i = 0; i < p.h->nr_vals; i++)
		if (field_end(&p.h->vals[i]) > p.h->min_size)
			p.h->min_size = field_end(&p.h->vals[i]);
	for (i = 0; i < p.h->nr_keys; i++) {
		if (field_end(&p.h->keys[i]) > p.h->min_size)
			p.h->min_size = field_end(&p.h->keys[i]);
		if (p.h->keys[i].flags & UTRACE__HF_EXECNAME)
			p.h->execname = true;
	}
	/* the fields the variables read */
	for (i = 0; i < p.h->nr_vars; i++) {
		unsigned int k;

		for (k = 0; k < p.h->vars[i].nr_nodes; k++)
			if (!p.h->vars[i].n[k].op && p.h->vars[i].n[k].o.ref == UTRACE__HO_FIELD &&
			    field_end(&p.h->vars[i].n[k].o.f) > p.h->min_size)
				p.h->min_size = field_end(&p.h->vars[i].n[k].o.f);
	}
	free(buf);
	*out = p.h;
	return 0;
fail:
	if (r == -ENOMEM && !err->err)
		err->err = -ENOMEM;
	free(buf);
	utrace__hist_free(p.h);
	return r;
}

int utrace__hist_parse(const char *text, const struct utrace_event_field *fields,
		       unsigned int nr, const struct utrace__filter_syms *syms,
		       struct utrace__hist **out, struct utrace__hist_error *err)
{
	return parse(text, fields, nr, syms, NULL, out, err);
}

int utrace__hist_parse_env(const char *text, const struct utrace_event_field *fields,
			   unsigned int nr, const struct utrace__hist_env *env,
			   struct utrace__hist **out, struct utrace__hist_error *err)
{
	return parse(text, fields, nr, NULL, env, out, err);
}

int utrace__hist_parse_full(const char *text, const struct utrace_event_field *fields,
			    unsigned int nr, const struct utrace__filter_syms *syms,
			    const struct utrace__hist_env *env, struct utrace__hist **out,
			    struct utrace__hist_error *err)
{
	return parse(text, fields, nr, syms, env, out, err);
}

/* ------------------------------------------------------------ trigger info */

void utrace__sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap + (size_t)n + 1) * 2;
			char *q = realloc(b->p, cap);

			if (!q) {
				b->oom = true;
				return;
			}
			b->p = q;
			b->cap = cap;
		}
	}
}

static const char *flag_name(unsigned int flags)
{
	if (flags & UTRACE__HF_HEX)
		return "hex";
	if (flags & UTRACE__HF_SYM)
		return "sym";
	if (flags & UTRACE__HF_SYM_OFFSET)
		return "sym-offset";
	if (flags & UTRACE__HF_EXECNAME)
		return "execname";
	if (flags & UTRACE__HF_SYSCALL)
		return "syscall";
	if (flags & UTRACE__HF_LOG2)
		return "log2";
	if (flags & UTRACE__HF_BUCKET)
		return "buckets";
	if (flags & UTRACE__HF_USECS)
		return "usecs";
	if (flags & UTRACE__HF_PERCENT)
		return "percent";
	if (flags & UTRACE__HF_GRAPH)
		return "graph";
	return NULL;
}

/* The kernel's hist_field_print(). */
static void field_print(struct sbuf *b, const struct utrace__hist_field *f)
{
	const char *fl = flag_name(f->flags);

	if (f->flags & UTRACE__HF_CPU)
		utrace__sb_printf(b, "common_cpu");
	else
		utrace__sb_printf(b, "%s", f->name);
	if (fl)
		utrace__sb_printf(b, ".%s", fl);
	if (f->buckets)
		utrace__sb_printf(b, "=%" PRIu64, f->buckets);
}

/* print_onmatch_spec(), print_track_data_spec(), print_action_spec() */
static void action_print(struct sbuf *b, const struct utrace__hist_action *a)
{
	unsigned int i;

	if (!a)
		return;
	if (a->handler == UTRACE__HA_ONMATCH)
		utrace__sb_printf(b, ":onmatch(%s.%s).", a->system, a->event);
	else
		utrace__sb_printf(b, ":%s(%s).", a->handler == UTRACE__HA_ONMAX ? "onmax" : "onchange",
			  a->var_str);
	utrace__sb_printf(b, "%s(", a->trace_kw ? "trace" : a->synth);
	if (a->trace_kw)
		utrace__sb_printf(b, "%s", a->synth);
	for (i = 0; i < a->nr_params; i++)
		utrace__sb_printf(b, "%s%s", i || a->trace_kw ? "," : "", a->params[i]);
	utrace__sb_printf(b, ")");
}

void utrace__hist_info_print(struct sbuf *b, const struct utrace__hist *h, bool paused)
{
	bool show = false;
	unsigned int i;

	utrace__sb_printf(b, "hist:");
	if (h->name)
		utrace__sb_printf(b, "%s:", h->name);
	utrace__sb_printf(b, "keys=");
	for (i = 0; i < h->nr_keys; i++) {
		if (i)
			utrace__sb_printf(b, ",");
		field_print(b, &h->keys[i]);
	}
	utrace__sb_printf(b, ":vals=");
	for (i = 0; i < h->nr_vals; i++) {
		if (i == 0) {
			if (h->nohitcount)
				continue;
			utrace__sb_printf(b, "hitcount");
		} else {
			if (show)
				utrace__sb_printf(b, ",");
			field_print(b, &h->vals[i]);
		}
		show = true;
	}
	if (h->nr_vars)
		utrace__sb_printf(b, ":");
	for (i = 0; i < h->nr_vars; i++)
		utrace__sb_printf(b, "%s%s=%s", i ? "," : "", h->vars[i].name, h->vars[i].text);
	utrace__sb_printf(b, ":sort=");
	for (i = 0; i < h->nr_sort; i++) {
		const struct utrace__hist_sort *s = &h->sort[i];

		if (i)
			utrace__sb_printf(b, ",");
		if (!s->is_key && s->idx == 0)
			utrace__sb_printf(b, "hitcount");
		else
			field_print(b, s->is_key ? &h->keys[s->idx] : &h->vals[s->idx]);
		if (s->descending)
			utrace__sb_printf(b, ".descending");
	}
	utrace__sb_printf(b, ":size=%u", 1u << h->bits);
	if (h->timestamps)
		utrace__sb_printf(b, ":clock=%s", h->clock);
	if (h->nohitcount)
		utrace__sb_printf(b, ":nohitcount");
	for (i = 0; i < 2; i++)
		action_print(b, (i == 0) == h->track_first ? h->track : h->action);
	if (h->filter_str)
		utrace__sb_printf(b, " if %s", h->filter_str);
	utrace__sb_printf(b, paused ? " [paused]\n" : " [active]\n");
}

char *utrace__hist_info(const struct utrace__hist *h, bool paused)
{
	struct sbuf b = { 0 };

	utrace__hist_info_print(&b, h, paused);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* offset: the place in the record counts too (the same event's triggers;
 * a named trigger of another event only needs a field of that name, size
 * and sign, as the kernel's compatible_field()). */
static bool same_field(const struct utrace__hist_field *a, const struct utrace__hist_field *b,
		       bool offset)
{
	return a->flags == b->flags && a->src == b->src && (!offset || a->offset == b->offset) &&
	       a->size == b->size && a->is_signed == b->is_signed &&
	       a->buckets == b->buckets && a->key_offset == b->key_offset &&
	       !strcmp(a->name, b->name);
}

bool utrace__hist_same_layout(const struct utrace__hist *a, const struct utrace__hist *b)
{
	unsigned int i;

	if (a->nr_vals != b->nr_vals || a->nr_keys != b->nr_keys || a->key_size != b->key_size ||
	    a->save_size != b->save_size || a->vstr_size != b->vstr_size)
		return false;
	for (i = 0; i < a->nr_keys; i++) {
		const struct utrace__hist_field *x = &a->keys[i], *y = &b->keys[i];

		if (x->flags != y->flags || x->src != y->src || x->key_offset != y->key_offset ||
		    x->key_size != y->key_size || x->cmp_size != y->cmp_size ||
		    x->cmp_signed != y->cmp_signed)
			return false;
	}
	for (i = 0; i < a->nr_vals; i++)
		if (a->vals[i].flags != b->vals[i].flags)
			return false;
	return true;
}

/* hist_trigger_match(): ignore_filter and the fields' places in the record
 * aside for a named trigger of another event. */
static bool hist_match(const struct utrace__hist *a, const struct utrace__hist *b, bool named)
{
	unsigned int i;

	if (a->nr_vals != b->nr_vals || a->nr_keys != b->nr_keys || a->nr_sort != b->nr_sort ||
	    a->nr_vars != b->nr_vars)
		return false;
	for (i = 0; i < a->nr_vars; i++)
		if (strcmp(a->vars[i].name, b->vars[i].name) || strcmp(a->vars[i].text, b->vars[i].text))
			return false;
	if (!named && !a->filter_str != !b->filter_str)
		return false;
	if (!named && a->filter_str && strcmp(a->filter_str, b->filter_str))
		return false;
	if (!same_action(a->action, b->action) || !same_action(a->track, b->track) ||
	    (a->action && a->track && a->track_first != b->track_first))
		return false;
	for (i = 0; i < a->nr_vals; i++)
		if (!same_field(&a->vals[i], &b->vals[i], !named))
			return false;
	for (i = 0; i < a->nr_keys; i++)
		if (!same_field(&a->keys[i], &b->keys[i], !named))
			return false;
	for (i = 0; i < a->nr_sort; i++)
		if (a->sort[i].is_key != b->sort[i].is_key || a->sort[i].idx != b->sort[i].idx ||
		    a->sort[i].descending != b->sort[i].descending)
			return false;
	return true;
}

bool utrace__hist_same(const struct utrace__hist *a, const struct utrace__hist *b)
{
	return hist_match(a, b, false);
}

bool utrace__hist_compatible(const struct utrace__hist *a, const struct utrace__hist *b)
{
	return hist_match(a, b, true) && utrace__hist_same_layout(a, b);
}

