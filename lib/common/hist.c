/* SPDX-License-Identifier: MIT */
/*
 * Hist triggers (hist.h): the kernel's trigger language, parsed as
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
 * THE TABLE
 *
 * As tracing_map: 2^bits entries in a pool, and an open-addressing array
 * of 2^(bits+1) slots of (hash, entry).  A writer hashes its key, probes
 * from hash >> shift, and claims an empty slot by a compare-and-swap of
 * its hash word from 0; the winner takes the next entry of the pool
 * (an atomic increment), copies the key in and publishes the entry with
 * a release store.  A writer that finds its hash in a slot whose entry is
 * not published yet waits for it (a few loads: the winner is between two
 * stores).  The pool running dry makes a drop: a new key then takes no
 * slot (checked before the compare-and-swap), so that at most half the
 * slots, plus one per writer that lost the race for the last entry, are
 * ever taken and a probe ends at an empty one soon.  Sums are relaxed
 * atomic additions.  Nothing is ever removed, except by clear, which needs the
 * writers stopped.
 *
 * What a writer changes in several words at once, the hist file's reader
 * (another thread: the agent's) must not see half done: an entry's
 * onmax()/onchange() value with the fields save() kept, and the table's
 * last .snapshot() value with its entry.  Each has a sequence count (a
 * seqlock): a writer takes it odd with a compare-and-swap, which keeps
 * the other writers out, stores the words and makes it even again; the
 * reader copies the words and tries again while the count was odd or
 * changed.  Every word is an atomic, so that there is no data race for the
 * reader to lose to, stored with release and loaded with acquire: a reader
 * that sees one word of a writer sees the count that writer made odd
 * (atomic_thread_fence() would do it with relaxed words, but
 * ThreadSanitizer does not support fences; on x86 both are plain moves).  Only
 * a new maximum (or a change) takes the count: the usual event reads the
 * value and leaves.
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

#include "hist.h"

#define LAST_CMD_MAX 256         /* MAX_FILTER_STR_VAL */
#define KEY_SIZE_MAX (UTRACE__HIST_STR_MAX + 16 * 8)   /* HIST_KEY_SIZE_MAX */
#define BITS_MIN 7
#define BITS_MAX 17
#define COMM_LEN 16

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
		if (!strcmp(f, "stacktrace"))
			return quiet_err(p, -EINVAL, "the stacktrace key is not supported by utrace");
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
static uint64_t fold(const struct utrace__hist_node *n, uint64_t a, uint64_t b)
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
		uint64_t c = fold(n, v->n[a].o.constant, v->n[b].o.constant);

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

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
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
		sb_printf(b, "common_cpu");
	else
		sb_printf(b, "%s", f->name);
	if (fl)
		sb_printf(b, ".%s", fl);
	if (f->buckets)
		sb_printf(b, "=%" PRIu64, f->buckets);
}

/* print_onmatch_spec(), print_track_data_spec(), print_action_spec() */
static void action_print(struct sbuf *b, const struct utrace__hist_action *a)
{
	unsigned int i;

	if (!a)
		return;
	if (a->handler == UTRACE__HA_ONMATCH)
		sb_printf(b, ":onmatch(%s.%s).", a->system, a->event);
	else
		sb_printf(b, ":%s(%s).", a->handler == UTRACE__HA_ONMAX ? "onmax" : "onchange",
			  a->var_str);
	sb_printf(b, "%s(", a->trace_kw ? "trace" : a->synth);
	if (a->trace_kw)
		sb_printf(b, "%s", a->synth);
	for (i = 0; i < a->nr_params; i++)
		sb_printf(b, "%s%s", i || a->trace_kw ? "," : "", a->params[i]);
	sb_printf(b, ")");
}

static void info_print(struct sbuf *b, const struct utrace__hist *h, bool paused)
{
	bool show = false;
	unsigned int i;

	sb_printf(b, "hist:");
	if (h->name)
		sb_printf(b, "%s:", h->name);
	sb_printf(b, "keys=");
	for (i = 0; i < h->nr_keys; i++) {
		if (i)
			sb_printf(b, ",");
		field_print(b, &h->keys[i]);
	}
	sb_printf(b, ":vals=");
	for (i = 0; i < h->nr_vals; i++) {
		if (i == 0) {
			if (h->nohitcount)
				continue;
			sb_printf(b, "hitcount");
		} else {
			if (show)
				sb_printf(b, ",");
			field_print(b, &h->vals[i]);
		}
		show = true;
	}
	if (h->nr_vars)
		sb_printf(b, ":");
	for (i = 0; i < h->nr_vars; i++)
		sb_printf(b, "%s%s=%s", i ? "," : "", h->vars[i].name, h->vars[i].text);
	sb_printf(b, ":sort=");
	for (i = 0; i < h->nr_sort; i++) {
		const struct utrace__hist_sort *s = &h->sort[i];

		if (i)
			sb_printf(b, ",");
		if (!s->is_key && s->idx == 0)
			sb_printf(b, "hitcount");
		else
			field_print(b, s->is_key ? &h->keys[s->idx] : &h->vals[s->idx]);
		if (s->descending)
			sb_printf(b, ".descending");
	}
	sb_printf(b, ":size=%u", 1u << h->bits);
	if (h->timestamps)
		sb_printf(b, ":clock=%s", h->clock);
	if (h->nohitcount)
		sb_printf(b, ":nohitcount");
	for (i = 0; i < 2; i++)
		action_print(b, (i == 0) == h->track_first ? h->track : h->action);
	if (h->filter_str)
		sb_printf(b, " if %s", h->filter_str);
	sb_printf(b, paused ? " [paused]\n" : " [active]\n");
}

char *utrace__hist_info(const struct utrace__hist *h, bool paused)
{
	struct sbuf b = { 0 };

	info_print(&b, h, paused);
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

/* ------------------------------------------------------------ the table */

struct elt {
	const void *owner;
	char comm[COMM_LEN];
	_Atomic uint64_t sums[UTRACE__HIST_VALS_MAX];
	_Atomic uint64_t vars[UTRACE__HIST_VARS_MAX];
	_Atomic uint32_t var_set;                /* a bit each */
	_Atomic uint32_t track_seq;              /* of track and the save() area */
	_Atomic uint64_t track;                  /* onmax()/onchange()'s value */
	_Atomic uint32_t vstr_seq;               /* of the string variables' area */
	unsigned char key[];                     /* then the save() area, then the
						  * string variables' (words) */
};

struct slot {
	_Atomic uint32_t hash;
	struct elt *_Atomic elt;
};

struct utrace__hist_map {
	const struct utrace__hist *h;
	uint32_t max_elts, nr_slots;
	size_t elt_size;
	unsigned char *pool;
	_Atomic uint32_t next_elt;
	struct slot *slots;
	_Atomic uint64_t hits, drops;
	/* .snapshot(): the value and the entry of the last one taken */
	_Atomic uint32_t snap_seq;
	_Atomic uint64_t snap_val;
	struct elt *_Atomic snap_elt;
};

/* The entry of a slot taken by a writer that then found no entry left. */
static struct elt dead_elt;

static struct elt *elt_at(const struct utrace__hist_map *m, uint32_t i)
{
	return (struct elt *)(m->pool + (size_t)i * m->elt_size);
}

struct utrace__hist_map *utrace__hist_map_new(const struct utrace__hist *h)
{
	struct utrace__hist_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->h = h;
	m->max_elts = 1u << h->bits;
	m->nr_slots = 2u << h->bits;
	m->elt_size = (sizeof(struct elt) + h->key_size + 7) & ~(size_t)7;
	m->elt_size += h->save_size + h->vstr_size;
	m->pool = calloc(m->max_elts, m->elt_size);
	m->slots = calloc(m->nr_slots, sizeof(*m->slots));
	if (!m->pool || !m->slots) {
		utrace__hist_map_free(m);
		return NULL;
	}
	return m;
}

void utrace__hist_map_free(struct utrace__hist_map *m)
{
	if (!m)
		return;
	free(m->pool);
	free(m->slots);
	free(m);
}

void utrace__hist_map_clear(struct utrace__hist_map *m)
{
	memset(m->pool, 0, (size_t)m->max_elts * m->elt_size);
	memset(m->slots, 0, (size_t)m->nr_slots * sizeof(*m->slots));
	atomic_store(&m->next_elt, 0);
	atomic_store(&m->hits, 0);
	atomic_store(&m->drops, 0);
	atomic_store(&m->snap_seq, 0);
	atomic_store(&m->snap_val, 0);
	atomic_store(&m->snap_elt, NULL);
}

/* The seqlock of THE TABLE (above).  A writer finding another inside
 * spins, then yields (the other may be preempted), and gives up after
 * SEQ_WRITE_TRIES: the one inside is stopped (this thread, interrupted by
 * a signal whose handler's event is here), as in map_insert(). */
#define SEQ_SPINS 64
#define SEQ_WRITE_TRIES 4096

static bool seq_write_begin(_Atomic uint32_t *seq, uint32_t *s)
{
	uint32_t i, v;

	for (i = 0; i < SEQ_WRITE_TRIES; i++) {
		v = atomic_load_explicit(seq, memory_order_relaxed);
		if (!(v & 1) && atomic_compare_exchange_weak_explicit(seq, &v, v + 1,
								      memory_order_acquire,
								      memory_order_relaxed)) {
			*s = v + 1;
			return true;
		}
		if (i >= SEQ_SPINS)
			sched_yield();
	}
	return false;
}

static void seq_write_end(_Atomic uint32_t *seq, uint32_t s)
{
	atomic_store_explicit(seq, s + 1, memory_order_release);
}

static uint32_t seq_read_begin(const _Atomic uint32_t *seq)
{
	return atomic_load_explicit(seq, memory_order_acquire);
}

/* After the words are copied: true when they must be copied again (a
 * writer was in, or came).  The reader spins, yields, then sleeps 100 us
 * a try: a writer preempted inside, on a loaded machine, gets the time to
 * finish.  One stopped inside for good (in a debugger) costs the reader
 * about a second, then it keeps what it has. */
#define SEQ_READ_TRIES (SEQ_SPINS + 10000)

static bool seq_read_retry(const _Atomic uint32_t *seq, uint32_t s, unsigned int *tries)
{
	if (!(s & 1) && atomic_load_explicit(seq, memory_order_acquire) == s)
		return false;
	if (++*tries >= SEQ_READ_TRIES)
		return false;
	if (*tries > SEQ_SPINS) {
		struct timespec d = { 0, 100 * 1000 };

		nanosleep(&d, NULL);
	} else if (*tries > 16) {
		sched_yield();
	}
	return true;
}

/* An entry's save() area: words (every part of it is a multiple of 8). */
static _Atomic uint64_t *save_area(const struct utrace__hist *h, const struct elt *e)
{
	return (_Atomic uint64_t *)(uintptr_t)(e->key + ((h->key_size + 7) & ~7u));
}

/* An entry's string variables (words, each variable's at its str_off). */
static _Atomic uint64_t *vstr_area(const struct utrace__hist *h, const struct elt *e)
{
	return save_area(h, e) + h->save_size / 8;
}

/* The bytes save() keeps of a string field, its NUL included. */
static uint32_t save_cap(const struct utrace__hist_field *f)
{
	return f->size > UTRACE__HIST_STR_MAX - 1 ? UTRACE__HIST_STR_MAX : f->size + 1;
}

static uint32_t key_hash(const unsigned char *k, uint32_t n)
{
	uint32_t h = 2166136261u, i;

	for (i = 0; i < n; i++)
		h = (h ^ k[i]) * 16777619u;
	h ^= h >> 15;
	h *= 0x2c1b3c6dU;
	h ^= h >> 12;
	return h ? h : 1;
}

/* The entry of key, made if new; NULL when the pool is used up. */
static struct elt *map_insert(struct utrace__hist_map *m, const unsigned char *key,
			      const struct utrace__hist_ctx *ctx, bool create)
{
	uint32_t ks = m->h->key_size, h = key_hash(key, ks), i, n, idx;

	idx = h & (m->nr_slots - 1);
	for (n = 0; n < m->nr_slots; n++, idx = (idx + 1) & (m->nr_slots - 1)) {
		struct slot *s = &m->slots[idx];
		uint32_t sh = atomic_load_explicit(&s->hash, memory_order_acquire);
		struct elt *e;

		if (sh == h) {
			/* the winner is between its two stores: wait for it,
			 * or for it to give the slot back */
			for (i = 0; !(e = atomic_load_explicit(&s->elt, memory_order_acquire));
			     i++)
				if (i == 1u << 20)
					/* the winner is stopped (this thread,
					 * interrupted by a signal whose
					 * handler's event is here): a drop */
					return NULL;
			if (e != &dead_elt && !memcmp(e->key, key, ks))
				return e;
			continue;
		}
		if (sh)
			continue;
		if (!create)
			return NULL;
		/* a new key, and no entry left: no slot is taken for it, so
		 * that probes stay short */
		if (atomic_load_explicit(&m->next_elt, memory_order_relaxed) >= m->max_elts)
			return NULL;
		if (!atomic_compare_exchange_strong_explicit(&s->hash, &sh, h,
							     memory_order_acq_rel,
							     memory_order_acquire)) {
			if (sh != h)
				continue;
			n--;                      /* look at this slot again */
			idx = (idx - 1) & (m->nr_slots - 1);
			continue;
		}
		i = atomic_fetch_add_explicit(&m->next_elt, 1, memory_order_relaxed);
		if (i >= m->max_elts) {
			/* lost the race for the last entry: the slot stays
			 * taken (freeing it could end a later probe before a
			 * key placed after it) */
			atomic_store_explicit(&s->elt, &dead_elt, memory_order_release);
			return NULL;
		}
		e = elt_at(m, i);
		memcpy(e->key, key, ks);
		e->owner = ctx->owner;
		if (m->h->execname)
			snprintf(e->comm, sizeof(e->comm), "%s", ctx->comm ? ctx->comm : "");
		atomic_store_explicit(&s->elt, e, memory_order_release);
		return e;
	}
	return NULL;
}

static uint64_t read_num(const unsigned char *p, uint32_t size, bool is_signed)
{
	uint64_t v = 0;

	memcpy(&v, p, size);     /* little-endian */
	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	return v;
}

/* A field's number for an event (the kernel's hist_fn_call()). */
static uint64_t field_value(const struct utrace__hist *h, const struct utrace__hist_field *f,
			    const unsigned char *rec, const struct utrace__hist_ctx *ctx)
{
	uint64_t v;

	switch (f->src) {
	case UTRACE__HS_COUNTER:
		return 1;
	case UTRACE__HS_NUM:
		v = read_num(rec + f->offset, f->size, f->is_signed);
		break;
	case UTRACE__HS_TIMESTAMP:
		v = h->ts_usecs ? (ctx->time + 500) / 1000 : ctx->time;
		break;
	case UTRACE__HS_CPU:
		v = ctx->cpu;
		break;
	default:
		return 0;
	}
	if (f->flags & UTRACE__HF_LOG2)
		v = v <= 1 ? 0 : (uint64_t)(64 - __builtin_clzll(v - 1));
	else if (f->flags & UTRACE__HF_BUCKET)
		v = v / f->buckets * f->buckets;
	return v;
}

/* A string field's bytes in the record (not NUL-terminated); false when
 * they would be outside it. */
static bool field_str(const struct utrace__hist_field *f, const unsigned char *r, uint32_t size,
		      const unsigned char **s, uint32_t *n)
{
	uint32_t loc;

	if (f->src == UTRACE__HS_STR) {
		*s = r + f->offset;
		*n = f->size;
		return true;
	}
	loc = (uint32_t)read_num(r + f->offset, 4, false);
	*s = r + (loc & 0xffff);
	*n = loc >> 16;
	return (loc & 0xffff) + (uint64_t)*n <= size;
}

/* A string field copied NUL-terminated into out[cap]. */
static char *copy_str(const struct utrace__hist_field *f, const unsigned char *r, uint32_t size,
		      char *out, uint32_t cap)
{
	const unsigned char *s;
	uint32_t n, j;

	if (!field_str(f, r, size, &s, &n))
		n = 0;
	for (j = 0; j < n && j < cap - 1 && s[j]; j++)
		out[j] = (char)s[j];
	out[j] = 0;
	return out;
}

/* The record's key; false when it is no hit (filtered, too short). */
static bool make_key(const struct utrace__hist *h, const unsigned char *r, uint32_t size,
		     const struct utrace__hist_ctx *ctx, unsigned char *key)
{
	struct utrace__filter_ctx fc = { ctx->cpu, ctx->comm };
	unsigned int i;

	if (size < h->min_size || !utrace__filter_match(h->filter, r, size, &fc))
		return false;
	memset(key, 0, h->key_size);
	for (i = 0; i < h->nr_keys; i++) {
		const struct utrace__hist_field *k = &h->keys[i];
		const unsigned char *s = NULL;
		uint32_t n = 0, j;

		if (k->src == UTRACE__HS_STR || k->src == UTRACE__HS_DYNSTR) {
			if (!field_str(k, r, size, &s, &n))
				return false;     /* a string outside the record */
		} else {
			uint64_t v = field_value(h, k, r, ctx);

			memcpy(key + k->key_offset, &v, 8);
			continue;
		}
		if (n > k->key_size - 1)
			n = k->key_size - 1;
		for (j = 0; j < n && s[j]; j++)       /* strncpy() */
			key[k->key_offset + j] = s[j];
	}
	return true;
}

bool utrace__hist_add(struct utrace__hist_map *m, const struct utrace__hist *h, const void *rec,
		      uint32_t size, const struct utrace__hist_ctx *ctx)
{
	const unsigned char *r = rec;
	unsigned char key[KEY_SIZE_MAX];
	struct elt *e;
	unsigned int i;

	if (!h)
		h = m->h;
	if (!make_key(h, r, size, ctx, key))
		return false;
	atomic_fetch_add_explicit(&m->hits, 1, memory_order_relaxed);
	e = map_insert(m, key, ctx, true);
	if (!e) {
		atomic_fetch_add_explicit(&m->drops, 1, memory_order_relaxed);
		return true;
	}
	for (i = 0; i < h->nr_vals; i++)
		atomic_fetch_add_explicit(&e->sums[i], field_value(h, &h->vals[i], r, ctx),
					  memory_order_relaxed);
	return true;
}

static uint64_t operand_value(const struct utrace__hist *h, const struct utrace__hist_operand *o,
			      const unsigned char *r, const struct utrace__hist_ctx *ctx,
			      const uint64_t *refv, const uint64_t *own)
{
	if (o->ref >= 0)
		return refv[o->ref];
	if (o->ref == UTRACE__HO_OWN)
		return own[o->var];
	if (o->ref == UTRACE__HO_CONST)
		return o->constant;
	return field_value(h, &o->f, r, ctx);
}

/* A variable's expression for this record (the kernel's hist_fn_call()
 * down its tree: 3 operators at most, so a few levels). */
static uint64_t node_value(const struct utrace__hist *h, const struct utrace__hist_var *v,
			   unsigned int k, const unsigned char *r,
			   const struct utrace__hist_ctx *ctx, const uint64_t *refv,
			   const uint64_t *own)
{
	const struct utrace__hist_node *n = &v->n[k];
	uint64_t a;

	if (!n->op)
		return operand_value(h, &n->o, r, ctx, refv, own);
	a = node_value(h, v, n->a, r, ctx, refv, own);
	if (n->op == 'u')
		return (uint64_t)-(int64_t)a;
	return fold(n, a, node_value(h, v, n->b, r, ctx, refv, own));
}

/*
 * A string operand for this record, NUL-terminated in out[cap]: a string
 * field (at most cap - 1 bytes, strscpy()), the comm of .execname,
 * another trigger's string variable (read into fire->refstr when the
 * references were resolved), or a string variable of this trigger (its
 * own operand again).
 */
static const char *operand_text(const struct utrace__hist *h, const struct utrace__hist_operand *o,
				const unsigned char *r, uint32_t size,
				const struct utrace__hist_ctx *ctx,
				const struct utrace__hist_fire *fire, char *out, uint32_t cap)
{
	const char *from = NULL;
	uint32_t j;

	if (o->ref >= 0)
		from = fire->refstr[o->ref];
	else if (o->ref == UTRACE__HO_OWN)
		return operand_text(h, &h->vars[o->var].n[0].o, r, size, ctx, fire, out, cap);
	else if (o->f.flags & UTRACE__HF_EXECNAME)
		from = ctx->comm ? ctx->comm : "";
	else
		return copy_str(&o->f, r, size, out, cap);
	for (j = 0; j + 1 < cap && from[j]; j++)
		out[j] = from[j];
	out[j] = 0;
	return out;
}

/* The string variables of an entry, written together under its vstr_seq
 * (the kernel strscpy()s each into the entry's own copy). */
static void vstr_store(const struct utrace__hist *h, struct elt *e, const unsigned char *r,
		       uint32_t size, const struct utrace__hist_ctx *ctx,
		       const struct utrace__hist_fire *fire)
{
	_Atomic uint64_t *w = vstr_area(h, e);
	uint64_t buf[UTRACE__HIST_STR_MAX / 8];
	uint32_t s, i, j, n;

	if (!seq_write_begin(&e->vstr_seq, &s))
		return;
	for (i = 0; i < h->nr_vars; i++) {
		const struct utrace__hist_var *v = &h->vars[i];

		if (!v->is_str)
			continue;
		n = (v->str_cap + 7) / 8;
		memset(buf, 0, n * 8);
		operand_text(h, &v->n[0].o, r, size, ctx, fire, (char *)buf, v->str_cap);
		for (j = 0; j < n; j++)
			atomic_store_explicit(&w[v->str_off / 8 + j], buf[j], memory_order_release);
	}
	seq_write_end(&e->vstr_seq, s);
}

/* Another trigger's string variable v of entry e (its table's h), read
 * by a writer: a copy under the entry's vstr_seq, given up on (the copy
 * kept as it is) when another writer stays inside for long. */
static void vstr_read(const struct utrace__hist *h, const struct utrace__hist_var *v,
		      const struct elt *e, char *out)
{
	const _Atomic uint64_t *w = vstr_area(h, e) + v->str_off / 8;
	uint64_t buf[UTRACE__HIST_STR_MAX / 8];
	uint32_t n = (v->str_cap + 7) / 8, s, j, tries = 0;

	do {
		s = seq_read_begin(&e->vstr_seq);
		for (j = 0; j < n; j++)
			buf[j] = atomic_load_explicit(&w[j], memory_order_acquire);
		if (!(s & 1) && atomic_load_explicit(&e->vstr_seq, memory_order_acquire) == s)
			break;
		if (++tries > SEQ_SPINS)
			sched_yield();
	} while (tries < 2 * SEQ_SPINS);
	memcpy(out, buf, n * 8);
	out[v->str_cap - 1] = 0;
}

/* check_track_val(): v is a new maximum, or a change, against old. */
static bool track_new(const struct utrace__hist_action *a, uint64_t v, uint64_t old)
{
	return a->handler == UTRACE__HA_ONMAX ? v > old : v != old;
}

/* cond_snapshot_update(): a snapshot when the value passes the check
 * against the last snapshot's too (a new maximum of the whole table); the
 * value and its entry change together (under snap_seq), as the kernel's
 * under tr->max_lock. */
static bool snap_update(struct utrace__hist_map *m, const struct utrace__hist_action *a,
			struct elt *e, uint64_t v)
{
	uint32_t s;
	bool ok;

	if (!track_new(a, v, atomic_load_explicit(&m->snap_val, memory_order_relaxed)) ||
	    !seq_write_begin(&m->snap_seq, &s))
		return false;
	ok = track_new(a, v, atomic_load_explicit(&m->snap_val, memory_order_relaxed));
	if (ok) {
		atomic_store_explicit(&m->snap_val, v, memory_order_release);
		atomic_store_explicit(&m->snap_elt, e, memory_order_release);
	}
	seq_write_end(&m->snap_seq, s);
	return ok;
}

/* An action's parameters: numbers, or the address of a string's copy. */
static void action_params(const struct utrace__hist *h, const struct utrace__hist_action *a,
			  const unsigned char *r, uint32_t size, const struct utrace__hist_ctx *ctx,
			  const uint64_t *refv, const uint64_t *own, struct utrace__hist_fire *fire,
			  unsigned int which)
{
	unsigned int i, n = 0;

	for (i = 0; i < a->nr_params; i++) {
		const struct utrace__hist_operand *o = &a->p[i];
		bool str = o->ref >= 0 ? h->refs[o->ref].is_str :
			   o->ref == UTRACE__HO_OWN ? h->vars[o->var].is_str :
			   o->ref == UTRACE__HO_FIELD &&
			   (o->f.flags & (UTRACE__HF_STRING | UTRACE__HF_EXECNAME));

		if (str)
			fire->params[which][i] =
				(uintptr_t)operand_text(h, o, r, size, ctx, fire, fire->str[which][n++],
							UTRACE__HIST_STR_MAX);
		else
			fire->params[which][i] = operand_value(h, o, r, ctx, refv, own);
	}
}

/* check_track_val(), save_track_val() for trace() and snapshot(): true
 * when v is a new maximum, or changed. */
static bool track_update(const struct utrace__hist_action *a, struct elt *e, uint64_t v)
{
	uint64_t old = atomic_load_explicit(&e->track, memory_order_relaxed);

	if (a->handler == UTRACE__HA_ONCHANGE)
		return v != old && atomic_exchange_explicit(&e->track, v, memory_order_relaxed) != v;
	while (v > old)
		if (atomic_compare_exchange_weak_explicit(&e->track, &old, v, memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	return false;
}

/* save_track_val() and save_track_data_vars() for save(): the value and
 * the fields kept with it change together, under the entry's track_seq
 * (the kernel's are not atomic with each other). */
static void track_save(const struct utrace__hist *h, const struct utrace__hist_action *a,
		       struct elt *e, uint64_t v, const unsigned char *r, uint32_t size,
		       const struct utrace__hist_ctx *ctx)
{
	_Atomic uint64_t *w = save_area(h, e);
	uint64_t str[UTRACE__HIST_STR_MAX / 8];
	uint32_t s, i, j, n;

	if (!track_new(a, v, atomic_load_explicit(&e->track, memory_order_relaxed)) ||
	    !seq_write_begin(&e->track_seq, &s))
		return;
	if (!track_new(a, v, atomic_load_explicit(&e->track, memory_order_relaxed))) {
		seq_write_end(&e->track_seq, s);
		return;
	}
	atomic_store_explicit(&e->track, v, memory_order_release);
	for (i = 0; i < a->nr_params; i++) {
		const struct utrace__hist_field *f = &a->p[i].f;
		_Atomic uint64_t *to = w + a->save_off[i] / 8;

		if (!(f->flags & UTRACE__HF_STRING)) {
			atomic_store_explicit(to, field_value(h, f, r, ctx), memory_order_release);
			continue;
		}
		n = (save_cap(f) + 7) / 8;
		memset(str, 0, n * 8);
		copy_str(f, r, size, (char *)str, save_cap(f));
		for (j = 0; j < n; j++)
			atomic_store_explicit(&to[j], str[j], memory_order_release);
	}
	seq_write_end(&e->track_seq, s);
}

int utrace__hist_add_vars(struct utrace__hist_map *m, const struct utrace__hist *h,
			  const void *rec, uint32_t size,
			  const struct utrace__hist_ctx *ctx,
			  struct utrace__hist_map *const *ref_maps, struct utrace__hist_fire *fire)
{
	int ret = 0;
	const unsigned char *r = rec;
	unsigned char key[KEY_SIZE_MAX];
	uint64_t refv[UTRACE__HIST_REFS_MAX], own[UTRACE__HIST_VARS_MAX];
	struct elt *e;
	unsigned int i;

	if (!h)
		h = m->h;
	if (!make_key(h, r, size, ctx, key))
		return -1;
	/* resolve_var_refs(): each read once, with this key */
	for (i = 0; i < h->nr_refs; i++) {
		struct utrace__hist_map *rm = ref_maps[i];
		uint32_t bit = 1u << h->refs[i].idx, old;

		if (!rm || rm->h->key_size != h->key_size)
			return -1;
		e = map_insert(rm, key, ctx, false);
		if (!e)
			return -1;
		old = atomic_fetch_and_explicit(&e->var_set, ~bit, memory_order_acquire);
		if (!(old & bit))
			return -1;
		refv[i] = atomic_load_explicit(&e->vars[h->refs[i].idx], memory_order_relaxed);
		if (h->refs[i].is_str)
			vstr_read(rm->h, &rm->h->vars[h->refs[i].idx], e, fire->refstr[i]);
	}
	atomic_fetch_add_explicit(&m->hits, 1, memory_order_relaxed);
	e = map_insert(m, key, ctx, true);
	if (!e) {
		atomic_fetch_add_explicit(&m->drops, 1, memory_order_relaxed);
		return 0;
	}
	for (i = 0; i < h->nr_vals; i++)
		atomic_fetch_add_explicit(&e->sums[i], field_value(h, &h->vals[i], r, ctx),
					  memory_order_relaxed);
	/* hist_trigger_elt_update(): the variables, strings first (their
	 * bits are set with the others, after them) */
	if (h->vstr_size)
		vstr_store(h, e, r, size, ctx, fire);
	for (i = 0; i < h->nr_vars; i++) {
		const struct utrace__hist_var *v = &h->vars[i];
		uint64_t x = v->is_str ? 0 : node_value(h, v, 0, r, ctx, refv, own);

		own[i] = x;
		atomic_store_explicit(&e->vars[i], x, memory_order_relaxed);
		atomic_fetch_or_explicit(&e->var_set, 1u << i, memory_order_release);
	}
	if (h->action) {
		action_params(h, h->action, r, size, ctx, refv, own, fire, 0);
		ret |= 1;
	}
	if (h->track && h->track->kind == UTRACE__HA_SAVE) {
		track_save(h, h->track, e, own[h->track->track_var], r, size, ctx);
	} else if (h->track && track_update(h->track, e, own[h->track->track_var])) {
		const struct utrace__hist_action *a = h->track;

		if (a->kind == UTRACE__HA_TRACE) {
			action_params(h, a, r, size, ctx, refv, own, fire, 1);
			ret |= 2;
		}
		if (a->kind == UTRACE__HA_SNAPSHOT && snap_update(m, a, e, own[a->track_var]))
			ret |= 4;
	}
	return ret;
}

/* ------------------------------------------------------------ the hist file */

static int64_t cmp_num(const unsigned char *a, const unsigned char *b, uint32_t size,
		       bool is_signed)
{
	uint64_t x = read_num(a, size, is_signed), y = read_num(b, size, is_signed);

	if (is_signed)
		return (int64_t)x < (int64_t)y ? -1 : (int64_t)x > (int64_t)y;
	return x < y ? -1 : x > y;
}

static int cmp_key_field(const struct utrace__hist_field *k, const struct elt *a,
			 const struct elt *b)
{
	const unsigned char *x = a->key + k->key_offset, *y = b->key + k->key_offset;

	if (k->flags & UTRACE__HF_STRING) {
		int c = strcmp((const char *)x, (const char *)y);

		return c < 0 ? -1 : c > 0;
	}
	return (int)cmp_num(x, y, k->cmp_size, k->cmp_signed);
}

/* An entry as printed: its sums read once, so that the sort compares
 * values that writers adding meanwhile (a live table) do not change. */
struct row {
	const struct elt *e;
	uint64_t sums[UTRACE__HIST_VALS_MAX];
};

static int cmp_entries(const void *pa, const void *pb, void *arg)
{
	const struct utrace__hist *h = arg;
	const struct row *ra = pa, *rb = pb;
	const struct elt *a = ra->e, *b = rb->e;
	unsigned int i;
	int c;

	for (i = 0; i < h->nr_sort; i++) {
		const struct utrace__hist_sort *s = &h->sort[i];

		if (s->is_key) {
			c = cmp_key_field(&h->keys[s->idx], a, b);
		} else {
			uint64_t x = ra->sums[s->idx], y = rb->sums[s->idx];

			c = x < y ? -1 : x > y;
		}
		if (c)
			return s->descending ? -c : c;
	}
	/* the kernel leaves ties in its heap sort's order: the keys here */
	for (i = 0; i < h->nr_keys; i++) {
		c = cmp_key_field(&h->keys[i], a, b);
		if (c)
			return c;
	}
	return 0;
}

static void sym_print(struct sbuf *b, const struct utrace__hist_print_opts *o,
		      const struct elt *e, uint64_t addr, bool offset, int width)
{
	const char *name;
	uint64_t start, size;
	char s[512];

	if (o->sym && o->sym(o->sym_arg, e->owner, addr, &name, &start, &size) == 0) {
		if (offset)
			snprintf(s, sizeof(s), "%s+0x%" PRIx64 "/0x%" PRIx64, name, addr - start,
				 size);
		else
			snprintf(s, sizeof(s), "%s", name);
	} else {
		snprintf(s, sizeof(s), "0x%" PRIx64, addr);
	}
	sb_printf(b, "%-*s", width, s);
}

/* The kernel's hist_trigger_print_key(). */
static void key_print(struct sbuf *b, const struct utrace__hist *h,
		      const struct utrace__hist_print_opts *o, const struct elt *e)
{
	unsigned int i;

	sb_printf(b, "{ ");
	for (i = 0; i < h->nr_keys; i++) {
		const struct utrace__hist_field *k = &h->keys[i];
		const unsigned char *kp = e->key + k->key_offset;
		uint64_t v;

		memcpy(&v, kp, 8);
		if (i)
			sb_printf(b, ", ");
		if (k->flags & UTRACE__HF_HEX) {
			sb_printf(b, "%s: %" PRIx64, k->name, v);
		} else if (k->flags & (UTRACE__HF_SYM | UTRACE__HF_SYM_OFFSET)) {
			bool off = k->flags & UTRACE__HF_SYM_OFFSET;

			sb_printf(b, "%s: [%" PRIx64 "] ", k->name, v);
			sym_print(b, o, e, v, off, off ? 55 : 45);
		} else if (k->flags & UTRACE__HF_EXECNAME) {
			sb_printf(b, "%s: %-16s[%10" PRIu64 "]", k->name, e->comm, v);
		} else if (k->flags & UTRACE__HF_SYSCALL) {
			const char *name = o->syscall ? o->syscall(v) : NULL;

			sb_printf(b, "%s: %-30s[%3" PRIu64 "]", k->name,
				  name ? name : "unknown_syscall", v);
		} else if (k->flags & UTRACE__HF_LOG2) {
			sb_printf(b, "%s: ~ 2^%-2" PRIu64, k->name, v);
		} else if (k->flags & UTRACE__HF_BUCKET) {
			sb_printf(b, "%s: ~ %" PRIu64 "-%" PRIu64, k->name, v, v + k->buckets - 1);
		} else if (k->flags & UTRACE__HF_STRING) {
			sb_printf(b, "%s: %-50s", k->name, (const char *)kp);
		} else {
			sb_printf(b, "%s: %10" PRIu64, k->name, v);
		}
	}
	sb_printf(b, " }");
}

/* The kernel's __get_percentage(): 100 times the percentage. */
static unsigned int percentage(uint64_t val, uint64_t total)
{
	if (!total)
		return val ? UINT32_MAX : 0;
	if (val < UINT64_MAX / 10000)
		return (unsigned int)(val * 10000 / total);
	total /= 10000;
	if (!total)
		return val ? UINT32_MAX : 0;
	return (unsigned int)(val / total);
}

static void val_print(struct sbuf *b, const struct utrace__hist_field *f, uint64_t v,
		      uint64_t total, uint64_t max)
{
	if (f->flags & UTRACE__HF_PERCENT) {
		unsigned int pc = percentage(v, total);

		if (pc == UINT32_MAX)
			sb_printf(b, " %s (%%):[ERROR]", f->name);
		else
			sb_printf(b, " %s (%%): %3u.%02u", f->name, pc / 100, pc % 100);
	} else if (f->flags & UTRACE__HF_GRAPH) {
		unsigned int len = percentage(v, max), i;
		char bar[21];

		if (len == UINT32_MAX) {
			snprintf(bar, sizeof(bar), "[ERROR]");
		} else {
			len = len * 20 / 10000;
			for (i = 0; i < 20; i++)
				bar[i] = i < len ? '#' : ' ';
			bar[20] = 0;
		}
		sb_printf(b, " %s: %20s", f->name, bar);
	} else if (f->flags & UTRACE__HF_HEX) {
		sb_printf(b, " %s: %10" PRIx64, f->name, v);
	} else {
		sb_printf(b, " %s: %10" PRIu64, f->name, v);
	}
}

/* track_data_print(): the onmax()/onchange() value and what save() kept,
 * copied under the entry's track_seq. */
static void track_print(struct sbuf *b, const struct utrace__hist *h, const struct elt *e)
{
	const struct utrace__hist_action *a = h->track;
	const _Atomic uint64_t *w = save_area(h, e);
	uint64_t save[UTRACE__HIST_PARAMS_MAX * UTRACE__HIST_STR_MAX / 8], x;
	uint32_t n, s, i;
	unsigned int tries = 0;

	if (!a || a->kind == UTRACE__HA_SNAPSHOT)
		return;
	n = a->kind == UTRACE__HA_SAVE ? h->save_size / 8 : 0;
	do {
		s = seq_read_begin(&e->track_seq);
		x = atomic_load_explicit(&e->track, memory_order_acquire);
		for (i = 0; i < n; i++)
			save[i] = atomic_load_explicit(&w[i], memory_order_acquire);
	} while (seq_read_retry(&e->track_seq, s, &tries));
	sb_printf(b, "\n\t%s: %10" PRIu64, a->handler == UTRACE__HA_ONMAX ? "max" : "changed", x);
	for (i = 0; a->kind == UTRACE__HA_SAVE && i < a->nr_params; i++) {
		const struct utrace__hist_field *f = &a->p[i].f;
		char *str = (char *)save + a->save_off[i];

		if (f->flags & UTRACE__HF_STRING) {
			str[save_cap(f) - 1] = 0;       /* a copy given up on */
			sb_printf(b, "  %s: %-32s", f->name, str);
			continue;
		}
		memcpy(&x, str, 8);
		sb_printf(b, "  %s: %10" PRIu64, f->name, x);
	}
}

/* track_data_snapshot_print() */
static void snap_print(struct sbuf *b, const struct utrace__hist_map *m,
		       const struct utrace__hist_print_opts *o)
{
	const struct utrace__hist_action *a = m->h->track;
	const struct elt *e;
	unsigned int tries = 0;
	uint32_t s;
	uint64_t v;

	if (!a || a->kind != UTRACE__HA_SNAPSHOT)
		return;
	do {
		s = seq_read_begin(&m->snap_seq);
		e = atomic_load_explicit(&m->snap_elt, memory_order_acquire);
		v = atomic_load_explicit(&m->snap_val, memory_order_acquire);
	} while (seq_read_retry(&m->snap_seq, s, &tries));
	if (!e)
		return;
	sb_printf(b, "\nSnapshot taken (see tracing/snapshot).  Details:\n");
	sb_printf(b, "\ttriggering value { %s(%s) }: %10" PRIu64,
		  a->handler == UTRACE__HA_ONMAX ? "onmax" : "onchange", a->var_str, v);
	sb_printf(b, "\ttriggered by event with key: ");
	key_print(b, m->h, o, e);
	sb_printf(b, "\n");
}

int utrace__hist_print(struct utrace__hist_map *m, const struct utrace__hist_print_opts *o,
		       FILE *out)
{
	static const struct utrace__hist_print_opts none;
	const struct utrace__hist *h = m->h;
	uint64_t total[UTRACE__HIST_VALS_MAX] = { 0 }, max[UTRACE__HIST_VALS_MAX] = { 0 };
	struct sbuf b = { 0 };
	struct row *v;
	uint32_t i, n = 0, j;
	int ret = 0;

	if (!o)
		o = &none;
	v = malloc((m->max_elts ? m->max_elts : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < m->nr_slots; i++) {
		struct elt *e = atomic_load_explicit(&m->slots[i].elt, memory_order_acquire);

		if (!e || e == &dead_elt || n >= m->max_elts)
			continue;
		v[n].e = e;
		for (j = 0; j < h->nr_vals; j++)
			v[n].sums[j] = atomic_load_explicit(&e->sums[j], memory_order_relaxed);
		n++;
	}
	qsort_r(v, n, sizeof(*v), cmp_entries, (void *)h);
	for (j = 0; j < h->nr_vals; j++)
		for (i = 0; i < n; i++) {
			uint64_t x = v[i].sums[j];

			total[j] += x;
			if (x > max[j])
				max[j] = x;
		}
	sb_printf(&b, "# event histogram\n#\n# trigger info: ");
	info_print(&b, o->info ? o->info : h, o->paused);
	sb_printf(&b, "#\n\n");
	for (i = 0; i < n; i++) {
		key_print(&b, h, o, v[i].e);
		for (j = 0; j < h->nr_vals; j++) {
			uint64_t x = v[i].sums[j];

			if (j == 0 && h->nohitcount)
				continue;
			if (j)
				sb_printf(&b, " ");
			val_print(&b, &h->vals[j], x, total[j], max[j]);
		}
		track_print(&b, h, v[i].e);
		sb_printf(&b, "\n");
		if (b.len > 1 << 16 && !b.oom) {
			if (fwrite(b.p, 1, b.len, out) != b.len)
				ret = -EIO;
			b.len = 0;
		}
	}
	snap_print(&b, m, o);
	sb_printf(&b, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %u\n    Dropped: %" PRIu64
		  "\n", atomic_load(&m->hits), n, atomic_load(&m->drops));
	if (b.oom)
		ret = -ENOMEM;
	else if (b.len && fwrite(b.p, 1, b.len, out) != b.len)
		ret = -EIO;
	free(b.p);
	free(v);
	return ret;
}
