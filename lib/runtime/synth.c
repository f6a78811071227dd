/* SPDX-License-Identifier: MIT */
/*
 * Synthetic events (synth.h), in the rules of the kernel's
 * trace_events_synth.c: the definition's syntax and errors
 * (parse_synth_field(), __create_synth_event()), the format (every field
 * in a u64 slot: synth_event_define_fields()), the print fmt
 * (__set_synth_event_print_fmt()), the readback (synth_event_show()) and
 * the removal rules (EBUSY while a trigger's action holds the event, or
 * while it is on).
 *
 * The list is changed by the agent thread only, one request at a time;
 * the printer of UTRACE_PRINT reads it (an acquire load of the head) to
 * find an event by its id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "synth.h"

struct synth_field {
	char *type, *name;
	unsigned int size;
	unsigned int offset;             /* in the record */
	bool is_signed;
	bool is_string;                  /* char[N]: a STR_VAR_LEN_MAX slot */
};

/* A char[N] field's slot (the kernel's STR_VAR_LEN_MAX) */
#define STR_SLOT 256

struct utrace__synth {
	struct utrace__synth *next;
	char *name;
	unsigned int nr;
	struct synth_field f[UTRACE__SYNTH_FIELDS_MAX];
	struct utrace_event_field ef[UTRACE__SYNTH_FIELDS_MAX];
	char *print[2];
	int refs;                        /* actions that generate it */
	struct utrace_event_class cls;
	struct utrace_tracepoint tp;
	struct utrace_event ev;
	struct utrace_event *mod[1];
};

static struct utrace__synth *synths;    /* in the order they were made */
static const struct utrace__synth *pending;   /* the one being registered */

/* ---- the writer ---- */

static void record(void *data, const uint64_t *vals)
{
	struct utrace_event *ev = data;
	const struct utrace__synth *s = ev->unit;
	unsigned char scratch[UTRACE_EVENT_MAX];
	struct utrace_tp_reserve r;
	unsigned char *rec;
	unsigned int i;

	rec = utrace_tp_reserve(&r, ev, scratch, s->cls.struct_size);
	if (!rec)
		return;
	memset(rec + 8, 0, s->cls.struct_size - 8);
	for (i = 0; i < s->nr; i++) {
		/* the value's low bytes (trace_event_raw_event_synth()) */
		unsigned char *at = rec + s->f[i].offset;
		uint8_t b = (uint8_t)vals[i];
		uint16_t h = (uint16_t)vals[i];
		uint32_t w = (uint32_t)vals[i];
		const char *str = (const char *)(uintptr_t)vals[i];

		if (s->f[i].is_string) {
			/* trace_string(): a NUL-terminated copy, strscpy() */
			if (str)
				memcpy(at, str, strnlen(str, STR_SLOT - 1));
			continue;
		}
		switch (s->f[i].size) {
		case 1:
			memcpy(at, &b, 1);
			break;
		case 2:
			memcpy(at, &h, 2);
			break;
		case 4:
			memcpy(at, &w, 4);
			break;
		default:
			memcpy(at, &vals[i], 8);
		}
	}
	utrace_tp_commit(&r);
}

/*
 * Synthetic records written by this thread's actions, nested: a trigger
 * on a synthetic event may generate that event again, which would recurse
 * without end.  The kernel's ring buffer refuses a fifth nesting level
 * (trace_recursive_lock()); so does this.
 */
static __thread unsigned int depth;
#define SYNTH_DEPTH_MAX 4

void utrace__synth_fire(struct utrace__synth *s, const uint64_t *vals)
{
	struct utrace_tracepoint *tp = &s->tp;
	struct utrace_tracepoint_func *it;
	void *fast;

	/* as the generated __traceiter_<name>(): the probes that are
	 * registered while the event is on */
	if (!__atomic_load_n(&tp->enabled, __ATOMIC_RELAXED) || depth >= SYNTH_DEPTH_MAX)
		return;
	depth++;
	fast = __atomic_load_n(&tp->fast_data, __ATOMIC_ACQUIRE);
	if (fast) {
		((void (*)(void *, const uint64_t *))tp->builtin)(fast, vals);
		depth--;
		return;
	}
	utrace_tp_read_lock();
	it = __atomic_load_n(&tp->funcs, __ATOMIC_CONSUME);
	if (it)
		for (; it->func; it++)
			((void (*)(void *, const uint64_t *))it->func)(it->data, vals);
	utrace_tp_read_unlock();
	depth--;
}

/* ---- the event's callbacks ---- */

static const struct utrace_event_field *fields_of(unsigned int *nr)
{
	*nr = pending->nr;
	return pending->ef;
}

/* print_synth_event(): "lat=12 pid=3" */
static void output(struct utrace_seq *seq, const void *rec)
{
	const struct utrace_entry *ent = rec;
	const struct utrace__synth *s;
	unsigned int i;

	for (s = __atomic_load_n(&synths, __ATOMIC_ACQUIRE); s; s = s->next)
		if (s->ev.id == ent->type)
			break;
	for (i = 0; s && i < s->nr; i++) {
		const unsigned char *p = (const unsigned char *)rec + s->f[i].offset;
		const char *sep = i + 1 < s->nr ? " " : "";
		uint64_t u = 0;
		int64_t v;

		if (s->f[i].is_string) {
			utrace_seq_printf(seq, "%s=%.*s%s", s->f[i].name, STR_SLOT - 1,
					  (const char *)p, sep);
			continue;
		}
		memcpy(&u, p, s->f[i].size);
		if (s->f[i].is_signed && s->f[i].size < 8 && (u >> (8 * s->f[i].size - 1)) & 1)
			u |= ~0ULL << (8 * s->f[i].size);
		v = (int64_t)u;
		if (!strcmp(s->f[i].type, "gfp_t"))
			utrace_seq_printf(seq, "%s=%llx%s", s->f[i].name, (unsigned long long)u, sep);
		else if (s->f[i].is_signed)
			utrace_seq_printf(seq, "%s=%lld%s", s->f[i].name, (long long)v, sep);
		else
			utrace_seq_printf(seq, "%s=%llu%s", s->f[i].name, (unsigned long long)u, sep);
	}
}

/* ---- definitions ---- */

/* synth_field_size(): 0 for a type it does not know. */
static unsigned int type_size(const char *t)
{
	static const struct { const char *type; unsigned int size; } sizes[] = {
		{ "s64", 8 }, { "u64", 8 }, { "s32", 4 }, { "u32", 4 }, { "s16", 2 },
		{ "u16", 2 }, { "s8", 1 }, { "u8", 1 }, { "char", 1 }, { "unsigned char", 1 },
		{ "int", 4 }, { "unsigned int", 4 }, { "long", 8 }, { "unsigned long", 8 },
		{ "bool", 1 }, { "pid_t", 4 }, { "gfp_t", 4 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(t, sizes[i].type))
			return sizes[i].size;
	return 0;
}

/* synth_field_fmt() */
static const char *type_fmt(const char *t)
{
	static const struct { const char *type, *fmt; } fmts[] = {
		{ "s64", "%lld" }, { "s32", "%d" }, { "u32", "%u" }, { "s16", "%d" },
		{ "u16", "%u" }, { "s8", "%d" }, { "u8", "%u" }, { "char", "%d" },
		{ "unsigned char", "%u" }, { "int", "%d" }, { "unsigned int", "%u" },
		{ "long", "%ld" }, { "unsigned long", "%lu" }, { "bool", "%d" },
		{ "pid_t", "%d" }, { "gfp_t", "%x" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (!strcmp(t, fmts[i].type))
			return fmts[i].fmt;
	if (strstr(t, "char["))
		return "%s";
	return "%llu";
}

/* is_good_name() */
static bool good_name(const char *n)
{
	if (!*n || !(*n == '_' || (*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z')))
		return false;
	for (; *n; n++)
		if (!(*n == '_' || (*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9')))
			return false;
	return true;
}

static struct utrace__synth *find(const char *name)
{
	struct utrace__synth *s;

	for (s = synths; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

static void synth_free(struct utrace__synth *s)
{
	unsigned int i;

	if (!s)
		return;
	for (i = 0; i < s->nr; i++) {
		free(s->f[i].type);
		free(s->f[i].name);
	}
	free(s->print[0]);
	free(s->print[1]);
	free(s->name);
	free(s);
}

/* The error_log entry: "synthetic_events: error: MSG\n  Command: CMD\n" and
 * the caret under the first occurrence of 'at' (the kernel's err_pos()). */
static int refuse(char **log, const char *cmd, const char *msg, const char *at, int err)
{
	const char *p = at ? strstr(cmd, at) : NULL;
	int pos = p ? (int)(p - cmd) : 0;

	if (asprintf(log, "synthetic_events: error: %s\n  Command: %s\n%*s^\n", msg, cmd,
		     11 + pos, "") < 0)
		*log = NULL;
	return err;
}

/*
 * synth_field_string_size(): N of "char[N]" (1 to STR_SLOT), 0 for "char[]"
 * (a dynamic string), -1 for a bad array.
 */
static int string_size(const char *type)
{
	const char *start = strstr(type, "char["), *end;
	unsigned long n;
	char *stop;

	start += sizeof("char[") - 1;
	end = strchr(type, ']');
	if (!end || end < start || end[1] || end - start > 3)
		return -1;
	if (end == start)
		return 0;
	n = strtoul(start, &stop, 0);
	if (stop != end || n > STR_SLOT)
		return -1;
	return (int)n;
}

/*
 * One field out of the words of a ';' part: "[unsigned] TYPE NAME[ARRAY]"
 * (parse_synth_field()).  Several fields in one part apart by white space
 * only are the kernel's older syntax, which it still takes.
 */
static int parse_field(struct utrace__synth *s, char **argv, unsigned int argc,
		       unsigned int *used, const char *cmd, char **log)
{
	struct synth_field *f = &s->f[s->nr];
	const char *prefix = "", *type = argv[0], *name, *array;
	int len, n;

	if (!strcmp(type, "unsigned")) {
		if (argc < 3)
			return refuse(log, cmd, "Incomplete type", type, -EINVAL);
		prefix = "unsigned ";
		type = argv[1];
		name = argv[2];
		*used += 3;
	} else {
		name = argc > 1 ? argv[1] : NULL;
		*used += 2;
	}
	if (!name)
		return refuse(log, cmd, "Invalid field", type, -EINVAL);
	if (s->nr == UTRACE__SYNTH_FIELDS_MAX)
		return refuse(log, cmd, "Too many fields", NULL, -EINVAL);
	array = strchr(name, '[');
	len = array ? (int)(array - name) : (int)strlen(name);
	f->name = strndup(name, (size_t)len);
	if (asprintf(&f->type, "%s%s%s", prefix, type, array ? array : "") < 0)
		f->type = NULL;
	s->nr++;        /* freed with the event */
	if (!f->type || !f->name)
		return -ENOMEM;
	if (!good_name(f->name))
		return refuse(log, cmd, "Illegal name", name, -EINVAL);
	f->size = type_size(f->type);
	if (!f->size && strstr(f->type, "char[")) {
		n = string_size(f->type);
		if (n < 0)
			return refuse(log, cmd, "Invalid array specification", name, -EINVAL);
		if (!n)
			/* __data_loc char[]: not offered */
			return refuse(log, cmd, "Invalid type", type, -EINVAL);
		f->size = (unsigned int)n;
		f->is_string = true;
	}
	if (!f->size)
		return refuse(log, cmd, "Invalid type", type, -EINVAL);
	/* synth_field_signed() */
	f->is_signed = f->type[0] != 'u' && strcmp(f->type, "gfp_t");
	return 0;
}

static int make_print(struct utrace__synth *s)
{
	char *fmt = NULL, *args = NULL;
	size_t nf = 0, na = 0;
	FILE *a, *b;
	unsigned int i;
	bool bad;

	a = open_memstream(&fmt, &nf);
	b = open_memstream(&args, &na);
	if (a) {
		fputc('"', a);
		for (i = 0; i < s->nr; i++)
			fprintf(a, "%s=%s%s", s->f[i].name, type_fmt(s->f[i].type),
				i + 1 < s->nr ? ", " : "");
		fputc('"', a);
	}
	for (i = 0; b && i < s->nr; i++)
		fprintf(b, "%sREC->%s", i ? ", " : "", s->f[i].name);
	/* both closed, whatever the first says */
	bad = a ? fclose(a) != 0 : true;
	bad = (b ? fclose(b) != 0 : true) || bad;
	if (bad) {
		free(fmt);
		free(args);
		return -ENOMEM;
	}
	s->print[0] = fmt;
	s->print[1] = args;
	return 0;
}

static int create(char *line, char **log)
{
	char *cmd = strdup(line), *name, *rest, *part, *save = NULL;
	struct utrace__synth *s, **pp;
	struct utrace__event_state *st;
	unsigned int i, off;
	int r;

	if (!cmd)
		return -ENOMEM;
	name = line;
	rest = line + strcspn(line, " \t");
	if (*rest)
		*rest++ = 0;
	r = -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto out;
	s->name = strdup(name);
	if (!s->name)
		goto out;
	if (!good_name(name)) {
		r = refuse(log, cmd, "Illegal name", name, -EINVAL);
		goto out;
	}
	if (find(name)) {
		r = refuse(log, cmd, "Event already exists", name, -EEXIST);
		goto out;
	}
	for (part = strtok_r(rest, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
		char *argv[2 * UTRACE__SYNTH_FIELDS_MAX + 2], *w, *wsave = NULL;
		unsigned int argc = 0, used = 0;

		for (w = strtok_r(part, " \t", &wsave); w; w = strtok_r(NULL, " \t", &wsave)) {
			if (argc == sizeof(argv) / sizeof(argv[0]) - 1) {
				r = refuse(log, cmd, "Too many fields", NULL, -EINVAL);
				goto out;
			}
			argv[argc++] = w;
		}
		argv[argc] = NULL;
		while (used < argc) {
			r = parse_field(s, argv + used, argc - used, &used, cmd, log);
			if (r < 0)
				goto out;
		}
	}
	if (!s->nr) {
		r = refuse(log, cmd, "Command must be of the form: <name> field[;field] ...", NULL,
			   -EINVAL);
		goto out;
	}
	/* synth_event_define_fields(): a u64 slot each, STR_SLOT bytes for
	 * a char[N] */
	off = 8;
	for (i = 0; i < s->nr; i++) {
		struct synth_field *f = &s->f[i];

		f->offset = off;
		off += f->is_string ? STR_SLOT : 8;
		if (off > UTRACE_EVENT_MAX) {
			r = refuse(log, cmd, "Too many fields", NULL, -EINVAL);
			goto out;
		}
		s->ef[i] = (struct utrace_event_field){ f->type, f->name, (int)f->offset,
							(int)f->size, f->is_signed,
							UTRACE_FIELD_PLAIN, 0 };
		if (f->is_string)
			/* "char comm[16]" in the format, as the kernel's f_show() */
			s->ef[i] = (struct utrace_event_field){ "char", f->name, (int)f->offset,
								(int)f->size, 1, UTRACE_FIELD_ARRAY,
								(int)f->size };
	}
	r = make_print(s);
	if (r < 0)
		goto out;
	s->tp.name = s->name;
	s->cls.system = "synthetic";
	s->cls.fields = fields_of;
	s->cls.struct_size = off;
	s->cls.probe = (utrace_probe_fn)record;
	s->ev.name = s->name;
	s->ev.cls = &s->cls;
	s->ev.tp = &s->tp;
	s->ev.output = output;
	s->ev.print = (const char *const *)s->print;
	s->ev.unit = s;
	s->mod[0] = &s->ev;
	pending = s;
	utrace__registry_add_module(s->mod, s->mod + 1, NULL, NULL);
	pending = NULL;
	st = s->ev.priv;
	if (!st) {
		/* the module may be kept without its event */
		utrace_tp_unregister_module(s->mod, s->mod + 1);
		r = -ENOMEM;
		goto out;
	}
	/* the registry reads plain char as unsigned (-funsigned-char); a
	 * synthetic event's char is signed:1 (synth_field_signed()) */
	for (i = 0; i < st->nr_fields; i++)
		st->fields[i].is_signed = s->f[i].is_signed;
	for (pp = &synths; *pp; pp = &(*pp)->next)
		;
	__atomic_store_n(pp, s, __ATOMIC_RELEASE);
	s = NULL;
	r = 0;
out:
	synth_free(s);
	free(cmd);
	return r;
}

static bool busy(const struct utrace__synth *s)
{
	const struct utrace__event_state *st = s->ev.priv;

	return s->refs || (st && (__atomic_load_n(&st->enabled, __ATOMIC_RELAXED) ||
				  st->inst_on || st->soft));
}

static void destroy(struct utrace__synth *s)
{
	struct utrace__synth **pp;

	for (pp = &synths; *pp != s; pp = &(*pp)->next)
		;
	__atomic_store_n(pp, s->next, __ATOMIC_RELEASE);
	/* waits until no thread is inside the event */
	utrace_tp_unregister_module(s->mod, s->mod + 1);
	synth_free(s);
}

/* synth_event_delete() */
static int delete(const char *name)
{
	struct utrace__synth *s = find(name);

	if (!s)
		return -ENOENT;
	if (busy(s))
		return -EBUSY;
	destroy(s);
	return 0;
}

int utrace__synth_write(const char *text, size_t len, char **log)
{
	char *buf = strndup(text, len), *line, *next, *b, *e;
	int r = 0;

	*log = NULL;
	if (!buf)
		return -ENOMEM;
	for (line = buf; line && !r; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		/* comments and white space (trace_parse_run_command()) */
		e = strchr(line, '#');
		if (e)
			*e = 0;
		b = line + strspn(line, " \t");
		e = b + strlen(b);
		while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			*--e = 0;
		if (!*b)
			continue;
		if (*b == '!') {
			/* "!name [fields]": the name alone counts
			 * (create_or_delete_synth_event()) */
			b[strcspn(b, " \t")] = 0;
			r = delete(b + 1);
		}
		else
			r = create(b, log);
	}
	free(buf);
	return r;
}

int utrace__synth_clear(void)
{
	const struct utrace__synth *s;

	for (s = synths; s; s = s->next)
		if (busy(s))
			return -EBUSY;
	while (synths)
		destroy(synths);
	return 0;
}

char *utrace__synth_text(void)
{
	const struct utrace__synth *s;
	char *text = NULL;
	size_t n = 0;
	unsigned int i;
	FILE *f = open_memstream(&text, &n);

	if (!f)
		return NULL;
	for (s = synths; s; s = s->next) {
		fprintf(f, "%s\t", s->name);
		for (i = 0; i < s->nr; i++)
			fprintf(f, "%s %s%s", s->f[i].type, s->f[i].name, i + 1 < s->nr ? "; " : "");
		fputc('\n', f);
	}
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

struct utrace__synth *utrace__synth_get(const char *name)
{
	struct utrace__synth *s = find(name);

	if (s)
		s->refs++;
	return s;
}

void utrace__synth_put(struct utrace__synth *s)
{
	if (s)
		s->refs--;
}

const struct utrace_event_field *utrace__synth_fields(const struct utrace__synth *s,
						      unsigned int *nr)
{
	*nr = s->nr;
	return s->ef;
}
