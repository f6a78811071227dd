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
#include "synthdef.h"

struct utrace__synth {
	struct utrace__synth *next;
	struct utrace__synth_def d;
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
	unsigned int size = utrace__synth_def_size(&s->d, vals);
	struct utrace_tp_reserve r;
	unsigned char *rec;

	rec = utrace_tp_reserve(&r, ev, scratch, size);
	if (!rec)
		return;
	utrace__synth_def_fill(&s->d, rec, size, vals);
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
	*nr = pending->d.nr;
	return pending->d.ef;
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
	for (i = 0; s && i < s->d.nr; i++) {
		const unsigned char *p = (const unsigned char *)rec + s->d.f[i].offset;
		const char *sep = i + 1 < s->d.nr ? " " : "";
		uint64_t u = 0;
		int64_t v;

		if (s->d.f[i].is_dynamic) {
			uint32_t loc;

			memcpy(&loc, p, 4);
			utrace_seq_printf(seq, "%s=%.*s%s", s->d.f[i].name, (int)(loc >> 16),
					  (const char *)rec + (loc & 0xffff), sep);
			continue;
		}
		if (s->d.f[i].is_string) {
			utrace_seq_printf(seq, "%s=%.*s%s", s->d.f[i].name, UTRACE__SYNTH_STR_SLOT - 1,
					  (const char *)p, sep);
			continue;
		}
		memcpy(&u, p, s->d.f[i].size);
		if (s->d.f[i].is_signed && s->d.f[i].size < 8 && (u >> (8 * s->d.f[i].size - 1)) & 1)
			u |= ~0ULL << (8 * s->d.f[i].size);
		v = (int64_t)u;
		if (!strcmp(s->d.f[i].type, "gfp_t"))
			utrace_seq_printf(seq, "%s=%llx%s", s->d.f[i].name, (unsigned long long)u, sep);
		else if (s->d.f[i].is_signed)
			utrace_seq_printf(seq, "%s=%lld%s", s->d.f[i].name, (long long)v, sep);
		else
			utrace_seq_printf(seq, "%s=%llu%s", s->d.f[i].name, (unsigned long long)u, sep);
	}
}

/* ---- definitions ---- */

static struct utrace__synth *find(const char *name)
{
	struct utrace__synth *s;

	for (s = synths; s; s = s->next)
		if (!strcmp(s->d.name, name))
			return s;
	return NULL;
}

static void synth_free(struct utrace__synth *s)
{
	if (!s)
		return;
	utrace__synth_def_fini(&s->d);
	free(s->print[0]);
	free(s->print[1]);
	free(s);
}

/* A definition; cmd is what error_log shows (line, or its dynamic_events
 * line). */
static int create(const char *line, const char *cmd, char **log)
{
	struct utrace__synth *s, **pp;
	struct utrace__event_state *st;
	unsigned int i;
	char *name;
	int r;

	/* the command's and the name's checks first
	 * (create_or_delete_synth_event(), __create_synth_event()) */
	r = utrace__synth_check_command(line, cmd, log);
	if (r < 0)
		return r;
	name = strndup(line, strcspn(line, " \t"));
	s = calloc(1, sizeof(*s));
	if (!s || !name) {
		free(s);
		free(name);
		return -ENOMEM;
	}
	if (find(name)) {
		r = utrace__synth_refuse(log, cmd, "Event already exists", name, -EEXIST);
		free(name);
		goto out;
	}
	free(name);
	r = utrace__synth_def_parse_cmd(line, cmd, &s->d, log);
	if (r < 0)
		goto out;
	r = utrace__synth_def_print(&s->d, &s->print[0], &s->print[1]);
	if (r < 0)
		goto out;
	s->tp.name = s->d.name;
	s->cls.system = "synthetic";
	s->cls.fields = fields_of;
	s->cls.struct_size = s->d.struct_size;
	s->cls.probe = (utrace_probe_fn)record;
	s->ev.name = s->d.name;
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
		st->fields[i].is_signed = s->d.f[i].is_signed;
	for (pp = &synths; *pp; pp = &(*pp)->next)
		;
	__atomic_store_n(pp, s, __ATOMIC_RELEASE);
	s = NULL;
	r = 0;
out:
	synth_free(s);
	return r;
}

static bool busy(const struct utrace__synth *s)
{
	const struct utrace__event_state *st = s->ev.priv;

	return s->refs || (st && (__atomic_load_n(&st->enabled, __ATOMIC_RELAXED) ||
				  __atomic_load_n(&st->inst_on, __ATOMIC_RELAXED) || st->soft));
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

int utrace__synth_write(const char *text, size_t len, bool dyn, char **log)
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
		if (dyn) {
			const char *def;

			r = utrace__synth_dyn_line(b, &def, log);
			if (r == 0)
				r = create(def, b, log);
		} else if (*b == '!') {
			/* "!name [fields]": the name alone counts
			 * (create_or_delete_synth_event()) */
			b[strcspn(b, " \t")] = 0;
			r = delete(b + 1);
		}
		else
			r = create(b, b, log);
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
		fprintf(f, "%s\t", s->d.name);
		for (i = 0; i < s->d.nr; i++)
			fprintf(f, "%s %s%s", s->d.f[i].type, s->d.f[i].name, i + 1 < s->d.nr ? "; " : "");
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
	*nr = s->d.nr;
	return s->d.ef;
}
