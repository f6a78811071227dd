/* SPDX-License-Identifier: MIT */
/*
 * OpenTelemetry export (export.h): requests of OTLP/HTTP in its JSON
 * encoding (opentelemetry-proto, collector/logs/v1/logs_service.proto
 * and collector/trace/v1/trace_service.proto; docs/utrace-export.1).
 *
 * The printer (print.c, UTRACE__OUT_OTLP) makes each event a LogRecord;
 * here the records wait in one group per process until a batch is full
 * (or, live, old enough), then become one request:
 *
 *   {"resourceLogs":[
 *     {"resource":{"attributes":[process.pid, process.executable.name,
 *                                process.executable.path, service.name]},
 *      "scopeLogs":[{"scope":{"name":"utrace","version":"0.1.0"},
 *                    "logRecords":[RECORD,RECORD,...]}]},
 *     ... one per process with records in the batch ]}
 *
 * Slices (--slice BEGIN.FIELD:END.FIELD): a begin event is kept, by its
 * process and key, until the end event of the same key; the pair is a
 * Span named after the begin event, with its attributes, sent the same
 * way as "resourceSpans".  Its ids are made from the process, the key and
 * the begin's time, so that exporting a file twice gives the same spans.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <utrace/reader.h>

#include "export.h"
#include "hash.h"
#include "obuf.h"
#include "pool.h"
#include "print.h"
#include "problems.h"
#include "stacktab.h"

/* The records and spans of one process that wait for their batch. */
struct group {
	uint32_t pid;
	char *comm, *exe;
	char *cmdline;                      /* NULL: not known */
	uint64_t start;                     /* in service.instance.id */
	bool has_start;
	bool gone;                          /* forgotten once sent */
	struct utrace__obuf logs, spans;    /* ','-separated JSON objects */
	size_t nr_logs, nr_spans;
};

/* A begin event waiting for its end. */
struct open_slice {
	struct open_slice *next;
	uint64_t hash;
	uint32_t pid;
	size_t slice;
	char *key;
	char *name;
	uint64_t start;                     /* Unix ns */
	char *attrs;                        /* its attribute list, "[...]" */
	char trace[33], span[17], parent[17];   /* hex; parent "": none */
	bool has_trace;                     /* from the trace field */
};

/* An event's trace context ("": none). */
struct ctx {
	char trace[33], span[17], parent[17];
};

#define OPEN_BUCKETS 4096

struct utrace__otlp {
	struct utrace__otlp_opts o;
	struct group *groups;
	size_t nr_groups;
	size_t nr_logs, nr_spans;           /* waiting, all groups */
	size_t nr_log_events;               /* of the logs waiting, events */
	struct timespec logs_since, spans_since;  /* the oldest waiting */
	struct utrace__otlp_stats st;
	uint64_t seq;
	int failed;                         /* send()'s failure: only count */
	struct open_slice *open[OPEN_BUCKETS];
	struct utrace__obuf body, key, rec;
	uint64_t cur_start;                 /* the trace file's start (Unix ns) */
	size_t nr_open_traced;              /* open slices with a trace field */
	uint64_t since;                     /* the flight window, Unix ns */
	const char *tag;                    /* utrace.flight of each record */
};

static void slice_strdup(char **to, const char *s, size_t n, int *err)
{
	*to = strndup(s, n);
	if (!*to)
		*err = -ENOMEM;
}

/* "[SYS:]NAME.FIELD" into its parts. */
static int parse_end(const char *s, size_t n, char **sys, char **name, char **field)
{
	const char *dot = memrchr(s, '.', n), *colon = memchr(s, ':', n);
	int err = 0;

	if (!dot || dot == s || dot + 1 == s + n || (colon && (colon > dot || colon == s)))
		return -EINVAL;
	if (colon)
		slice_strdup(sys, s, (size_t)(colon - s), &err);
	else
		colon = s - 1;
	slice_strdup(name, colon + 1, (size_t)(dot - colon - 1), &err);
	slice_strdup(field, dot + 1, (size_t)(s + n - dot - 1), &err);
	return err;
}

int utrace__otlp_slice_parse(const char *text, struct utrace__otlp_slice *s)
{
	const char *mid;
	int r;

	memset(s, 0, sizeof(*s));
	/* the ':' between the two ends: the one after the first '.' */
	mid = strchr(text, '.');
	mid = mid ? strchr(mid, ':') : NULL;
	if (!mid)
		return -EINVAL;
	r = parse_end(text, (size_t)(mid - text), &s->begin_sys, &s->begin, &s->begin_field);
	if (!r)
		r = parse_end(mid + 1, strlen(mid + 1), &s->end_sys, &s->end, &s->end_field);
	if (r)
		utrace__otlp_slice_free(s);
	return r;
}

void utrace__otlp_slice_free(struct utrace__otlp_slice *s)
{
	free(s->begin_sys);
	free(s->begin);
	free(s->begin_field);
	free(s->end_sys);
	free(s->end);
	free(s->end_field);
	memset(s, 0, sizeof(*s));
}

struct utrace__otlp *utrace__otlp_new(const struct utrace__otlp_opts *o)
{
	struct utrace__otlp *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->o = *o;
	if (!x->o.batch)
		x->o.batch = 512;
	return x;
}

static void free_open(struct open_slice *s)
{
	free(s->key);
	free(s->name);
	free(s->attrs);
	free(s);
}

void utrace__otlp_free(struct utrace__otlp *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->nr_groups; i++) {
		free(x->groups[i].comm);
		free(x->groups[i].exe);
		free(x->groups[i].cmdline);
		free(x->groups[i].logs.p);
		free(x->groups[i].spans.p);
	}
	for (i = 0; i < OPEN_BUCKETS; i++)
		while (x->open[i]) {
			struct open_slice *s = x->open[i];

			x->open[i] = s->next;
			free_open(s);
		}
	free(x->groups);
	free(x->body.p);
	free(x->key.p);
	free(x->rec.p);
	free(x);
}

void utrace__otlp_get_stats(const struct utrace__otlp *x, struct utrace__otlp_stats *st)
{
	size_t i;

	*st = x->st;
	st->open_slices = x->st.replaced_begins + x->st.abandoned;
	for (i = 0; i < OPEN_BUCKETS; i++) {
		const struct open_slice *s;

		for (s = x->open[i]; s; s = s->next)
			st->open_slices++;
	}
}

/* The group of a process, made when new (comm, exe: NULL when not known). */
static struct group *group_of(struct utrace__otlp *x, uint32_t pid, const char *comm,
			      const char *exe)
{
	struct group *g = NULL;
	size_t i;

	for (i = 0; i < x->nr_groups && !g; i++)
		if (x->groups[i].pid == pid && !x->groups[i].gone)
			g = &x->groups[i];
	if (!g) {
		g = realloc(x->groups, (x->nr_groups + 1) * sizeof(*g));
		if (!g)
			return NULL;
		x->groups = g;
		g += x->nr_groups;
		memset(g, 0, sizeof(*g));
		g->pid = pid;
		x->nr_groups++;
	}
	/* what a trace file knows of the process, once known */
	if (comm && *comm && (!g->comm || !*g->comm)) {
		free(g->comm);
		g->comm = strdup(comm);
	}
	if (exe && *exe && (!g->exe || !*g->exe)) {
		free(g->exe);
		g->exe = strdup(exe);
	}
	if (!g->comm)
		g->comm = strdup("");
	if (!g->exe)
		g->exe = strdup("");
	if (!g->has_start && x->cur_start) {
		g->start = x->cur_start;
		g->has_start = true;
	}
	return g->comm && g->exe ? g : NULL;
}

int utrace__otlp_set_process(struct utrace__otlp *x, uint32_t pid, const char *command_line,
			     uint64_t start)
{
	struct group *g = group_of(x, pid, NULL, NULL);

	if (!g)
		return -ENOMEM;
	g->start = start;
	g->has_start = true;
	if (command_line) {
		free(g->cmdline);
		g->cmdline = strdup(command_line);
		if (!g->cmdline)
			return -ENOMEM;
	}
	return 0;
}

static void attr_str(struct utrace__obuf *b, const char *key, const char *v, bool first)
{
	utrace__ob_puts(b, first ? "{\"key\":\"" : ",{\"key\":\"");
	utrace__ob_puts(b, key);
	utrace__ob_puts(b, "\",\"value\":{\"stringValue\":");
	utrace__ob_json_str(b, v, strlen(v));
	utrace__ob_puts(b, "}}");
}

/* splitmix64's finalizer: the ids' bits */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The user's (or the machine's) value of a resource attribute, or NULL. */
static const char *user_attr(const struct utrace__otlp *x, const char *key)
{
	size_t i;

	for (i = 0; i < x->o.nr_resource; i++)
		if (!strcmp(x->o.resource[i].key, key))
			return x->o.resource[i].value;
	return NULL;
}

/*
 * service.instance.id: a UUID (the semantic conventions' advice) that is
 * the same each time the same process of the same machine is exported,
 * and differs between processes (the pid and its start) and machines
 * (host.id): the version 8 ("custom") layout of RFC 9562.
 */
static void put_instance_id(struct utrace__obuf *b, const struct utrace__otlp *x,
			    const struct group *g)
{
	char t[64];
	uint64_t h = utrace__hash_str(UTRACE_HASH_INIT, x->o.host_id ? x->o.host_id : ""), a, c;

	snprintf(t, sizeof(t), "%u/%llu/", g->pid, (unsigned long long)g->start);
	h = utrace__hash_str(utrace__hash_str(h, t), g->exe);
	a = mix(h ^ 0x696e7374ULL);
	c = mix(h + 0x9e3779b97f4a7c15ULL);
	a = (a & ~0xf000ULL) | 0x8000ULL;                     /* version 8 */
	c = (c & ~(3ULL << 62)) | (2ULL << 62);               /* variant 10 */
	snprintf(t, sizeof(t), "%08llx-%04llx-%04llx-%04llx-%012llx",
		 (unsigned long long)(a >> 32), (unsigned long long)(a >> 16 & 0xffff),
		 (unsigned long long)(a & 0xffff), (unsigned long long)(c >> 48),
		 (unsigned long long)(c & 0xffffffffffffULL));
	attr_str(b, "service.instance.id", t, false);
}

/* "resource":{...},"scope...":[{"scope":{...}," of a group: the process's
 * own attributes, unless the user gave them, then the user's. */
static void put_resource(struct utrace__otlp *x, struct group *g, const char *scope)
{
	struct utrace__obuf *b = &x->body;
	const char *base = strrchr(g->exe, '/');
	size_t i;

	utrace__ob_puts(b, "{\"resource\":{\"attributes\":[{\"key\":\"process.pid\","
			"\"value\":{\"intValue\":\"");
	utrace__ob_num(b, g->pid, 0, ' ', false);
	utrace__ob_puts(b, "\"}}");
	if (!user_attr(x, "process.executable.name"))
		attr_str(b, "process.executable.name", g->comm[0] ? g->comm :
			 base ? base + 1 : g->exe, false);
	if (g->exe[0] && !user_attr(x, "process.executable.path"))
		attr_str(b, "process.executable.path", g->exe, false);
	if (g->cmdline && !user_attr(x, "process.command_line"))
		attr_str(b, "process.command_line", g->cmdline, false);
	if (!user_attr(x, "service.name"))
		attr_str(b, "service.name", x->o.service ? x->o.service :
			 g->comm[0] ? g->comm : "unknown_service:utrace", false);
	if (!user_attr(x, "service.instance.id"))
		put_instance_id(b, x, g);
	for (i = 0; i < x->o.nr_resource; i++)
		attr_str(b, x->o.resource[i].key, x->o.resource[i].value, false);
	utrace__ob_puts(b, "]},\"");
	utrace__ob_puts(b, scope);
	utrace__ob_puts(b, "\":[{\"scope\":{\"name\":\"utrace\",\"version\":\"");
	utrace__ob_puts(b, utrace_reader_version());
	utrace__ob_puts(b, "\"},\"");
}

/* Make the request of what waits and send it. */
static int send_batch(struct utrace__otlp *x, enum utrace__otlp_signal sig)
{
	bool logs = sig == UTRACE__OTLP_LOGS;
	size_t n = logs ? x->nr_logs : x->nr_spans, i, ev;
	struct utrace__obuf *b = &x->body;
	bool first = true;
	int r = 0;

	if (!n)
		return 0;
	b->len = 0;
	utrace__ob_puts(b, logs ? "{\"resourceLogs\":[" : "{\"resourceSpans\":[");
	for (i = 0; i < x->nr_groups; i++) {
		struct group *g = &x->groups[i];
		struct utrace__obuf *items = logs ? &g->logs : &g->spans;

		if (!items->len)
			continue;
		if (!first)
			utrace__ob_putc(b, ',');
		first = false;
		put_resource(x, g, logs ? "scopeLogs" : "scopeSpans");
		utrace__ob_puts(b, logs ? "logRecords\":[" : "spans\":[");
		utrace__ob_put(b, items->p, items->len);
		utrace__ob_puts(b, "]}]}");
		items->len = 0;
		if (logs)
			g->nr_logs = 0;
		else
			g->nr_spans = 0;
	}
	utrace__ob_puts(b, "]}");
	ev = logs ? x->nr_log_events : 0;
	if (logs)
		x->nr_logs = x->nr_log_events = 0;
	else
		x->nr_spans = 0;
	if (b->nomem)
		return -ENOMEM;
	if (!x->failed) {
		r = x->o.send(x->o.arg, sig, b->p, b->len, n, ev);
		if (r < 0 && !x->o.keep_going) {
			x->failed = r;
		} else if (r >= 0 && logs) {
			x->st.sent_records += n;
			x->st.sent_events += ev;
		} else if (r >= 0) {
			x->st.sent_spans += n;
		}
	}
	return x->failed;
}

static void free_group(struct group *g)
{
	free(g->comm);
	free(g->exe);
	free(g->cmdline);
	free(g->logs.p);
	free(g->spans.p);
}

/* Drop the forgotten groups with nothing waiting. */
static void compact(struct utrace__otlp *x)
{
	size_t i, k = 0;

	for (i = 0; i < x->nr_groups; i++) {
		struct group *g = &x->groups[i];

		if (g->gone && !g->logs.len && !g->spans.len)
			free_group(g);
		else
			x->groups[k++] = *g;
	}
	x->nr_groups = k;
}

void utrace__otlp_forget(struct utrace__otlp *x, uint32_t pid)
{
	size_t i;

	for (i = 0; i < OPEN_BUCKETS; i++) {
		struct open_slice **pp = &x->open[i], *s;

		while ((s = *pp)) {
			if (s->pid != pid) {
				pp = &s->next;
				continue;
			}
			*pp = s->next;
			if (s->has_trace)
				x->nr_open_traced--;
			free_open(s);
			x->st.abandoned++;
		}
	}
	for (i = 0; i < x->nr_groups; i++)
		if (x->groups[i].pid == pid)
			x->groups[i].gone = true;
}

void utrace__otlp_set_window(struct utrace__otlp *x, uint64_t since_ns, const char *tag)
{
	x->since = since_ns;
	x->tag = tag;
}

size_t utrace__otlp_nr_processes(const struct utrace__otlp *x)
{
	return x->nr_groups;
}

static bool older(const struct timespec *since, uint64_t ns)
{
	struct timespec now;
	int64_t d;

	clock_gettime(CLOCK_MONOTONIC, &now);
	d = (int64_t)(now.tv_sec - since->tv_sec) * 1000000000 + (now.tv_nsec - since->tv_nsec);
	return d >= 0 && (uint64_t)d >= ns;
}

int utrace__otlp_tick(struct utrace__otlp *x)
{
	int r = 0;

	if (x->nr_logs && older(&x->logs_since, x->o.batch_ns))
		r = send_batch(x, UTRACE__OTLP_LOGS);
	if (!r && x->nr_spans && older(&x->spans_since, x->o.batch_ns))
		r = send_batch(x, UTRACE__OTLP_TRACES);
	compact(x);
	return r;
}

int utrace__otlp_flush(struct utrace__otlp *x)
{
	int r = send_batch(x, UTRACE__OTLP_LOGS);

	r = r ? r : send_batch(x, UTRACE__OTLP_TRACES);
	compact(x);
	return r;
}

/* Append one JSON object to a group's list. */
static int group_put(struct utrace__otlp *x, struct utrace__obuf *to, size_t *nr,
		     size_t *total, struct timespec *since, const char *s, size_t len)
{
	if (to->len)
		utrace__ob_putc(to, ',');
	utrace__ob_put(to, s, len);
	if (to->nomem)
		return -ENOMEM;
	(*nr)++;
	if (!(*total)++)
		clock_gettime(CLOCK_MONOTONIC, since);
	return 0;
}

/*
 * A call stack (utrace record -g's ftrace:stack / ftrace:stack_ref, the
 * stacktrace trigger's ftrace:user_stack) is no log record of its own: it
 * becomes the code.stacktrace attribute (OpenTelemetry's semantic
 * conventions: one frame a line, innermost first) of its event, the
 * record just put for the same thread, still at the end of its group's
 * buffer (not when a batch went out in between).
 */
struct stack_state {
	struct utrace__stacktab tab;
	struct group *g;                 /* the last event's record: its group, */
	size_t end;                      /* where it ends there, */
	const void *proc;                /* its process and thread */
	uint32_t tid;
};

static bool is_stack(const struct utrace__tf_item *it, enum utrace__stack_kind *kind)
{
	if (it->kind != UTRACE__TF_EVENT || !it->format || it->kernel)
		return false;
	*kind = utrace__stack_kind(it->format->system, it->format->name);
	return *kind != UTRACE__STACK_NONE ||
	       (!strcmp(it->format->system, "ftrace") && !strcmp(it->format->name, "user_stack"));
}

static int put_stack_attr(struct stack_state *ss, const struct utrace__tf_item *it,
			  enum utrace__stack_kind kind)
{
	const uint64_t *ips = NULL;
	uint64_t v[8];
	uint32_t nr = 0, i, tid = it->thread ? it->thread->tid : it->proc->pid;
	struct utrace__obuf text = { 0 }, *b;
	int r = 0;

	if (kind != UTRACE__STACK_NONE) {
		r = utrace__stacktab_item(&ss->tab, it->proc, kind, it->rec, it->len, &ips, &nr);
		if (r == -ENOMEM)
			return r;
	} else {
		for (; nr < 8 && 16 + 8 * (nr + 1) <= it->len; nr++) {
			memcpy(&v[nr], it->rec + 16 + 8 * nr, 8);
			if (!v[nr])
				break;
		}
		ips = v;
	}
	if (!ips || !ss->g || ss->proc != it->proc || ss->tid != tid ||
	    ss->g->logs.len != ss->end || ss->end < 2 ||
	    memcmp(ss->g->logs.p + ss->end - 2, "]}", 2))
		return 0;
	for (i = 0; i < nr; i++) {
		char name[512];

		utrace__stack_frame_name(it->proc, ips[i], true, name, sizeof(name));
		if (i)
			utrace__ob_putc(&text, '\n');
		utrace__ob_puts(&text, name);
	}
	b = &ss->g->logs;
	b->len -= 2;
	utrace__ob_puts(b, ",{\"key\":\"code.stacktrace\",\"value\":{\"stringValue\":");
	utrace__ob_json_str(b, text.p ? text.p : "", text.len);
	utrace__ob_puts(b, "}}]}");
	ss->end = b->len;
	r = text.nomem || b->nomem ? -ENOMEM : 0;
	free(text.p);
	return r;
}

static bool name_is(const char *sys, const char *name, const struct utrace__tf_format *f)
{
	return !strcmp(name, f->name) && (!sys || !strcmp(sys, f->system));
}

/* an id is never 0 */
static uint64_t nz(uint64_t v)
{
	return v ? v : 1;
}

static uint64_t open_hash(uint32_t pid, size_t slice, const char *key)
{
	uint64_t h = UTRACE_HASH_INIT ^ ((uint64_t)pid << 20) ^ slice;

	return utrace__hash_str(h, key);
}

/* The span of an open slice that ended at 'end' (Unix ns). */
static int put_span(struct utrace__otlp *x, struct group *g, const struct open_slice *s,
		    uint64_t end)
{
	struct utrace__obuf *b = &x->body;

	b->len = 0;
	utrace__ob_puts(b, "{\"traceId\":\"");
	utrace__ob_puts(b, s->trace);
	utrace__ob_puts(b, "\",\"spanId\":\"");
	utrace__ob_puts(b, s->span);
	if (s->parent[0]) {
		utrace__ob_puts(b, "\",\"parentSpanId\":\"");
		utrace__ob_puts(b, s->parent);
	}
	utrace__ob_puts(b, "\",\"name\":");
	utrace__ob_json_str(b, s->name, strlen(s->name));
	/* SPAN_KIND_INTERNAL */
	utrace__ob_puts(b, ",\"kind\":1,\"startTimeUnixNano\":\"");
	utrace__ob_num(b, s->start, 0, ' ', false);
	utrace__ob_puts(b, "\",\"endTimeUnixNano\":\"");
	utrace__ob_num(b, end, 0, ' ', false);
	utrace__ob_puts(b, "\",\"attributes\":");
	utrace__ob_puts(b, s->attrs);
	utrace__ob_puts(b, "}");
	if (b->nomem)
		return -ENOMEM;
	x->st.spans++;
	return group_put(x, &g->spans, &g->nr_spans, &x->nr_spans, &x->spans_since, b->p,
			 b->len);
}

/* The innermost slice open in process pid with the trace id 'trace', or NULL. */
static const struct open_slice *enclosing(const struct utrace__otlp *x, uint32_t pid,
					  const char *trace)
{
	const struct open_slice *best = NULL, *s;
	size_t i;

	if (!x->nr_open_traced)
		return NULL;
	for (i = 0; i < OPEN_BUCKETS; i++)
		for (s = x->open[i]; s; s = s->next)
			if (s->pid == pid && s->has_trace && !strcmp(s->trace, trace) &&
			    (!best || s->start >= best->start))
				best = s;
	return best;
}

/*
 * A new slice's ids: its trace id from the begin event's trace field,
 * else made from the process, the key and the begin's time (so that
 * exporting a file twice gives the same spans); its span id from the
 * span field, else made the same way; its parent from the parent field
 * (or the trace field's traceparent), else the innermost slice of the
 * same trace still open in the process, if any.
 */
static void slice_ids(struct utrace__otlp *x, struct open_slice *s, const struct ctx *cx)
{
	char t[24];
	uint64_t h;

	snprintf(t, sizeof(t), "%llu", (unsigned long long)s->start);
	h = utrace__hash_str(s->hash, t);
	if (cx->trace[0]) {
		memcpy(s->trace, cx->trace, sizeof(s->trace));
		s->has_trace = true;
	} else {
		snprintf(s->trace, sizeof(s->trace), "%016llx%016llx",
			 (unsigned long long)nz(mix(h ^ 0x7472616365ULL)),
			 (unsigned long long)nz(mix(h + 0x9e3779b97f4a7c15ULL)));
	}
	if (cx->span[0])
		memcpy(s->span, cx->span, sizeof(s->span));
	else
		snprintf(s->span, sizeof(s->span), "%016llx",
			 (unsigned long long)nz(mix(h ^ 0x7370616eULL)));
	if (cx->parent[0]) {
		memcpy(s->parent, cx->parent, sizeof(s->parent));
	} else if (s->has_trace) {
		const struct open_slice *e = enclosing(x, s->pid, s->trace);

		if (e)
			memcpy(s->parent, e->span, sizeof(s->parent));
	}
}

static bool is_hex(const char *s, size_t n)
{
	size_t i;
	bool nonzero = false;

	for (i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		nonzero |= s[i] != '0';
	}
	return nonzero;
}

/* n (16 or 32) hex digits of an id into out (n + 1 bytes), lowercase:
 * the text's own when it is one, else made from it. */
static void id_of(const char *text, size_t n, char *out)
{
	size_t i;

	if (strlen(text) == n && is_hex(text, n)) {
		for (i = 0; i < n; i++)
			out[i] = (char)tolower((unsigned char)text[i]);
		out[n] = 0;
		return;
	}
	uint64_t h = utrace__hash_str(UTRACE_HASH_INIT ^ n, text);

	if (n == 32)
		snprintf(out, n + 1, "%016llx%016llx", (unsigned long long)nz(mix(h)),
			 (unsigned long long)mix(h + 0x9e3779b97f4a7c15ULL));
	else
		snprintf(out, n + 1, "%016llx", (unsigned long long)nz(mix(h)));
}

/* "00-TRACE-PARENT-FLAGS" (W3C traceparent, version 00 or later)? */
static bool is_traceparent(const char *s)
{
	return strlen(s) >= 55 && is_hex(s, 2) && s[2] == '-' && is_hex(s + 3, 32) &&
	       s[35] == '-' && is_hex(s + 36, 16) && s[52] == '-' &&
	       (s[0] != '0' || s[1] != '0' || s[55] == 0) && strncmp(s, "ff", 2);
}

/* The field 'name' of the event just printed into x->key (its text):
 * true when it has one, not empty. */
static bool field_text(struct utrace__otlp *x, struct utrace__printer *p, const char *name)
{
	x->key.len = 0;
	if (!name || utrace__printer_field_text(p, name, &x->key) < 0)
		return false;
	utrace__ob_putc(&x->key, 0);
	return !x->key.nomem && x->key.p[0];
}

/* The trace context of the event just printed. */
static void event_ctx(struct utrace__otlp *x, struct utrace__printer *p, struct ctx *cx)
{
	memset(cx, 0, sizeof(*cx));
	if (field_text(x, p, x->o.trace_field)) {
		if (is_traceparent(x->key.p)) {
			id_of(x->key.p + 3, 32, cx->trace);
			x->key.p[52] = 0;
			id_of(x->key.p + 36, 16, cx->parent);
		} else {
			id_of(x->key.p, 32, cx->trace);
		}
	}
	if (field_text(x, p, x->o.span_field))
		id_of(x->key.p, 16, cx->span);
	if (field_text(x, p, x->o.parent_field))
		id_of(x->key.p, 16, cx->parent);
}

/*
 * log.record.uid (the semantic conventions' "SHOULD be a ULID"): the
 * record's time in ms, then 80 bits made from the machine, the process,
 * the thread, the CPU, the time in ns and the event's name, so that a
 * record has the same uid however often it is sent or exported, and a
 * store can drop the copies a retry made.
 */
static void put_uid(struct utrace__obuf *b, const struct utrace__otlp *x,
		    const struct utrace__tf_item *it, uint64_t t)
{
	static const char b32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	char u[27], k[96];
	uint64_t h = utrace__hash_str(UTRACE_HASH_INIT, x->o.host_id ? x->o.host_id : ""), hi, lo;
	int i;

	snprintf(k, sizeof(k), "/%u/%u/%u/%llu/", it->proc->pid, it->thread ? it->thread->tid : 0,
		 it->cpu, (unsigned long long)t);
	h = utrace__hash_str(h, k);
	if (it->format)
		h = utrace__hash_str(utrace__hash_str(h, it->format->system), it->format->name);
	else
		h = mix(h ^ it->lost ^ 0x6c6f7374ULL);
	/* 128 bits: 48 of ms, 80 of the hash */
	hi = (t / 1000000) << 16 | (mix(h) >> 48);
	lo = mix(h + 0x9e3779b97f4a7c15ULL);
	for (i = 0; i < 26; i++) {
		int bit = 125 - 5 * i;          /* the low bit of char i */
		unsigned int v;

		if (bit >= 64)
			v = (unsigned int)(hi >> (bit - 64));
		else if (bit > 59)
			v = (unsigned int)(lo >> bit | hi << (64 - bit));
		else if (bit >= 0)
			v = (unsigned int)(lo >> bit);
		else
			v = (unsigned int)(lo << -bit);
		u[i] = b32[v & 31];
	}
	u[26] = 0;
	utrace__ob_puts(b, ",{\"key\":\"log.record.uid\",\"value\":{\"stringValue\":\"");
	utrace__ob_puts(b, u);
	utrace__ob_puts(b, "\"}}");
}

/*
 * The printer's record (in 'b': {...,"attributes":[...]}) with what it
 * does not know: log.record.uid, and the trace context; into x->rec.
 */
static void finish_record(struct utrace__otlp *x, const struct utrace__obuf *b,
			  const struct utrace__tf_item *it, uint64_t t, const struct ctx *cx)
{
	struct utrace__obuf *o = &x->rec;

	o->len = 0;
	if (b->len < 2 || b->p[b->len - 1] != '}' || b->p[b->len - 2] != ']') {
		utrace__ob_put(o, b->p, b->len);
		return;
	}
	utrace__ob_put(o, b->p, b->len - 2);
	put_uid(o, x, it, t);
	if (x->tag) {
		utrace__ob_puts(o, ",{\"key\":\"utrace.flight\",\"value\":{\"stringValue\":");
		utrace__ob_json_str(o, x->tag, strlen(x->tag));
		utrace__ob_puts(o, "}}");
	}
	utrace__ob_putc(o, ']');
	if (cx->trace[0]) {
		utrace__ob_puts(o, ",\"traceId\":\"");
		utrace__ob_puts(o, cx->trace);
		utrace__ob_putc(o, '"');
		if (cx->span[0]) {
			utrace__ob_puts(o, ",\"spanId\":\"");
			utrace__ob_puts(o, cx->span);
			utrace__ob_putc(o, '"');
		}
	}
	utrace__ob_putc(o, '}');
}

/*
 * The key of slice i in the event just printed (its field 'field', into
 * x->key) and where the open slice of that key is, or would be linked:
 * *ppp (**ppp NULL: none open).  0, -ENOENT (no such field) or -ENOMEM.
 */
static int find_open(struct utrace__otlp *x, struct utrace__printer *p, uint32_t pid, size_t i,
		     const char *field, uint64_t *hp, struct open_slice ***ppp)
{
	struct open_slice *s, **pp;
	uint64_t h;

	x->key.len = 0;
	if (utrace__printer_field_text(p, field, &x->key) < 0)
		return -ENOENT;
	utrace__ob_putc(&x->key, 0);
	if (x->key.nomem)
		return -ENOMEM;
	h = open_hash(pid, i, x->key.p);
	for (pp = &x->open[h % OPEN_BUCKETS]; (s = *pp); pp = &s->next)
		if (s->hash == h && s->pid == pid && s->slice == i && !strcmp(s->key, x->key.p))
			break;
	*hp = h;
	*ppp = pp;
	return 0;
}

/* The event just printed opens or closes slices. */
static int match_slices(struct utrace__otlp *x, struct utrace__printer *p, struct group *g,
			const struct utrace__tf_item *it, uint64_t t, const struct ctx *cx)
{
	const struct utrace__tf_format *f = it->format;
	uint32_t pid = it->proc->pid;
	size_t i;
	int r;

	for (i = 0; i < x->o.nr_slices; i++) {
		const struct utrace__otlp_slice *sl = &x->o.slices[i];
		bool end = name_is(sl->end_sys, sl->end, f);
		bool begin = name_is(sl->begin_sys, sl->begin, f);
		struct open_slice *s, **pp;
		size_t at, len;
		uint64_t h;

		if (end) {
			r = find_open(x, p, pid, i, sl->end_field, &h, &pp);
			if (r == -ENOMEM)
				return r;
			if (!r && (s = *pp)) {
				*pp = s->next;
				if (s->has_trace)
					x->nr_open_traced--;
				r = put_span(x, g, s, t);
				free_open(s);
				if (r < 0)
					return r;
				if (x->nr_spans >= x->o.batch &&
				    send_batch(x, UTRACE__OTLP_TRACES) == -ENOMEM)
					return -ENOMEM;
				continue;   /* an event both ends: it closes */
			}
			if (!r && !begin)
				x->st.stray_ends++;
		}
		if (!begin)
			continue;
		r = find_open(x, p, pid, i, sl->begin_field, &h, &pp);
		if (r == -ENOMEM)
			return r;
		if (r)
			continue;
		/* a begin again with the key open: the older one never ends */
		if ((s = *pp)) {
			*pp = s->next;
			if (s->has_trace)
				x->nr_open_traced--;
			free_open(s);
			x->st.replaced_begins++;
		}
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		utrace__printer_otlp_attrs(p, &at, &len);
		s->hash = h;
		s->pid = it->proc->pid;
		s->slice = i;
		s->start = t;
		s->key = strdup(x->key.p);
		s->name = strdup(f->name);
		s->attrs = strndup(utrace__printer_buf(p)->p + at, len);
		if (!s->key || !s->name || !s->attrs) {
			free_open(s);
			return -ENOMEM;
		}
		slice_ids(x, s, cx);
		s->next = x->open[h % OPEN_BUCKETS];
		x->open[h % OPEN_BUCKETS] = s;
		if (s->has_trace)
			x->nr_open_traced++;
	}
	return 0;
}

int utrace__otlp_add(struct utrace__otlp *x, struct utrace__tf *tf, int64_t time_offset)
{
	struct utrace__print_opts po = { .input = utrace__tf_name(tf),
					 .mode = UTRACE__OUT_OTLP, .quiet = true,
					 .otlp_time_offset = time_offset };
	struct utrace__printer *p;
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	struct timespec now;
	struct ctx cx;
	uint64_t t;
	uint32_t bad_pid;
	struct stack_state ss = { 0 };
	int r, status = 0;

	/* OTLP's times are Unix times: from CLOCK_MONOTONIC, whatever trace
	 * clock the recording was made in (every process can give it) */
	utrace__tf_set_clock(tf, UTRACE_TCLOCK_MONO, &bad_pid);
	if (utrace__tf_error(tf)) {
		utrace__say("utrace: %s\n", utrace__tf_error(tf));
		status = 1;
	}
	if (!utrace__tf_page_size(tf))
		return status;
	{
		uint64_t rt, mono;

		utrace__tf_start_time(tf, &rt, &mono);
		x->cur_start = rt;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	po.otlp_observed = (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
	p = utrace__printer_new(&po, tf);
	if (!p)
		return -ENOMEM;
	r = utrace__tf_iter_new(tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		struct utrace__obuf *b = utrace__printer_buf(p);
		enum utrace__stack_kind kind;
		struct group *g;

		if (is_stack(&item, &kind)) {
			r = put_stack_attr(&ss, &item, kind);
			if (r == -ENOMEM)
				break;
			continue;
		}
		/* the flight recorder's last N seconds only */
		if (x->since && item.time + (uint64_t)time_offset < x->since) {
			if (item.kind == UTRACE__TF_EVENT)
				x->st.before_window++;
			continue;
		}
		po.otlp_seq = x->seq + 1;
		r = utrace__printer_item(p, &item);
		if (r < 0 || !b->len)
			continue;
		x->seq++;
		x->st.records++;
		if (item.kind == UTRACE__TF_LOST)
			x->st.lost += item.lost;
		g = group_of(x, item.proc->pid, item.proc->comm, item.proc->exe);
		memset(&cx, 0, sizeof(cx));
		t = item.time + (uint64_t)time_offset;
		if (item.kind == UTRACE__TF_EVENT && (x->o.trace_field || x->o.span_field ||
						      x->o.parent_field)) {
			event_ctx(x, p, &cx);
			/* an event of a trace without a span of its own is in the
			 * innermost slice of that trace open in its process */
			if (cx.trace[0] && !cx.span[0]) {
				const struct open_slice *e = enclosing(x, item.proc->pid, cx.trace);

				if (e)
					memcpy(cx.span, e->span, sizeof(cx.span));
			}
		}
		finish_record(x, b, &item, t, &cx);
		r = g && !x->rec.nomem ? group_put(x, &g->logs, &g->nr_logs, &x->nr_logs,
						   &x->logs_since, x->rec.p, x->rec.len) : -ENOMEM;
		if (r >= 0 && item.kind == UTRACE__TF_EVENT) {
			x->st.events++;
			x->nr_log_events++;
			ss.g = g;
			ss.end = g->logs.len;
			ss.proc = item.proc;
			ss.tid = item.thread ? item.thread->tid : item.proc->pid;
		}
		if (r >= 0 && x->o.nr_slices && item.kind == UTRACE__TF_EVENT)
			r = match_slices(x, p, g, &item, t, &cx);
		b->len = 0;
		if (r >= 0 && x->nr_logs >= x->o.batch)
			r = send_batch(x, UTRACE__OTLP_LOGS);
		if (r == -ENOMEM)
			break;
		r = 0;
	}
	utrace__tf_iter_free(it);
	utrace__stacktab_free(&ss.tab);
	utrace__problems_end(&utrace__printer_fmts(p)->pr, utrace__tf_name(tf),
			     "the records or events concerned were left out");
	if (utrace__printer_fmts(p)->pr.count)
		status = 1;
	utrace__printer_free(p);
	if (r == -ENOMEM)
		return r;
	return x->failed ? x->failed : status;
}
