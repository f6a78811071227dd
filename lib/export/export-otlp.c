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
	struct utrace__obuf body, key;
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
	free(x);
}

void utrace__otlp_get_stats(const struct utrace__otlp *x, struct utrace__otlp_stats *st)
{
	size_t i;

	*st = x->st;
	st->open_slices = x->st.replaced_begins;
	for (i = 0; i < OPEN_BUCKETS; i++) {
		const struct open_slice *s;

		for (s = x->open[i]; s; s = s->next)
			st->open_slices++;
	}
}

static struct group *group_of(struct utrace__otlp *x, const struct utrace__tf_process *p)
{
	struct group *g;
	size_t i;

	for (i = 0; i < x->nr_groups; i++)
		if (x->groups[i].pid == p->pid)
			return &x->groups[i];
	g = realloc(x->groups, (x->nr_groups + 1) * sizeof(*g));
	if (!g)
		return NULL;
	x->groups = g;
	g += x->nr_groups;
	memset(g, 0, sizeof(*g));
	g->pid = p->pid;
	g->comm = strdup(p->comm ? p->comm : "");
	g->exe = strdup(p->exe ? p->exe : "");
	if (!g->comm || !g->exe) {
		free(g->comm);
		free(g->exe);
		return NULL;
	}
	x->nr_groups++;
	return g;
}

static void attr_str(struct utrace__obuf *b, const char *key, const char *v, bool first)
{
	utrace__ob_puts(b, first ? "{\"key\":\"" : ",{\"key\":\"");
	utrace__ob_puts(b, key);
	utrace__ob_puts(b, "\",\"value\":{\"stringValue\":");
	utrace__ob_json_str(b, v, strlen(v));
	utrace__ob_puts(b, "}}");
}

/* "resource":{...},"scope...":[{"scope":{...}," of a group */
static void put_resource(struct utrace__otlp *x, struct group *g, const char *scope)
{
	struct utrace__obuf *b = &x->body;
	const char *base = strrchr(g->exe, '/');

	utrace__ob_puts(b, "{\"resource\":{\"attributes\":[{\"key\":\"process.pid\","
			"\"value\":{\"intValue\":\"");
	utrace__ob_num(b, g->pid, 0, ' ', false);
	utrace__ob_puts(b, "\"}}");
	attr_str(b, "process.executable.name", g->comm[0] ? g->comm :
		 base ? base + 1 : g->exe, false);
	if (g->exe[0])
		attr_str(b, "process.executable.path", g->exe, false);
	attr_str(b, "service.name", x->o.service ? x->o.service :
		 g->comm[0] ? g->comm : "unknown_service:utrace", false);
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
	return r;
}

int utrace__otlp_flush(struct utrace__otlp *x)
{
	int r = send_batch(x, UTRACE__OTLP_LOGS);

	return r ? r : send_batch(x, UTRACE__OTLP_TRACES);
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

/* splitmix64's finalizer: the ids' bits */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void put_hex(struct utrace__obuf *b, uint64_t v)
{
	utrace__ob_printf(b, "%016llx", (unsigned long long)(v ? v : 1));
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
	char t[24];
	uint64_t h;

	b->len = 0;
	snprintf(t, sizeof(t), "%llu", (unsigned long long)s->start);
	h = utrace__hash_str(s->hash, t);
	utrace__ob_puts(b, "{\"traceId\":\"");
	put_hex(b, mix(h ^ 0x7472616365ULL));      /* "trace" */
	put_hex(b, mix(h + 0x9e3779b97f4a7c15ULL));
	utrace__ob_puts(b, "\",\"spanId\":\"");
	put_hex(b, mix(h ^ 0x7370616eULL));         /* "span" */
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
			const struct utrace__tf_item *it, uint64_t t)
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
		s->next = x->open[h % OPEN_BUCKETS];
		x->open[h % OPEN_BUCKETS] = s;
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
		po.otlp_seq = x->seq + 1;
		r = utrace__printer_item(p, &item);
		if (r < 0 || !b->len)
			continue;
		x->seq++;
		x->st.records++;
		if (item.kind == UTRACE__TF_LOST)
			x->st.lost += item.lost;
		g = group_of(x, item.proc);
		r = g ? group_put(x, &g->logs, &g->nr_logs, &x->nr_logs, &x->logs_since, b->p,
				  b->len) : -ENOMEM;
		if (r >= 0 && item.kind == UTRACE__TF_EVENT) {
			x->st.events++;
			x->nr_log_events++;
			ss.g = g;
			ss.end = g->logs.len;
			ss.proc = item.proc;
			ss.tid = item.thread ? item.thread->tid : item.proc->pid;
		}
		if (r >= 0 && x->o.nr_slices && item.kind == UTRACE__TF_EVENT)
			r = match_slices(x, p, g, &item, item.time + (uint64_t)time_offset);
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
