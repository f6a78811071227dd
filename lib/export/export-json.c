/* SPDX-License-Identifier: MIT */
/*
 * Export to JSON (utrace convert --format json): Chrome's trace event
 * format ("Trace Event Format", the JSON that chrome://tracing, Perfetto
 * UI and speedscope read), one event a line:
 *
 *     {"traceEvents":[
 *     {"name":"process_name","ph":"M","pid":42,"tid":42,"args":{"name":"app"}},
 *     {"name":"thread_name","ph":"M","pid":42,"tid":43,"args":{"name":"worker"}},
 *     {"name":"req_begin","cat":"app","ph":"i","s":"t","ts":812044105.123,
 *      "pid":42,"tid":43,"args":{"id":1,"path":"/index.html"}},
 *     ...
 *     ],
 *     "displayTimeUnit":"ns","otherData":{...}}
 *
 * ts is CLOCK_MONOTONIC in microseconds with the nanoseconds as three
 * decimals, exact.  cat is the event's system, args every field after
 * the common ones as `utrace script --json` writes them (numbers as
 * numbers, strings escaped, arrays as arrays).  A --slice begin is "B",
 * its end "E"; a --counter value a "C" event of the process; events lost
 * while recording a "lost_events" instant of category "utrace" with args
 * {"count":N} (null when the count is not known).
 */
#include <string.h>

#include <utrace/reader.h>

#include "export-walk.h"

struct json_out {
	bool first;                      /* no event written yet */
};

static void sep(struct utrace__xwalk *w)
{
	struct json_out *j = w->ctx;

	if (j->first)
		j->first = false;
	else
		utrace__ob_put(&w->ob, ",\n", 2);
}

/* ,"pid":P,"tid":T */
static void put_ids(struct utrace__obuf *b, uint32_t pid, uint32_t tid)
{
	utrace__ob_puts(b, ",\"pid\":");
	utrace__ob_num(b, pid, 0, ' ', false);
	utrace__ob_puts(b, ",\"tid\":");
	utrace__ob_num(b, tid, 0, ' ', false);
}

/* ,"ts":us.nnn */
static void put_ts(struct utrace__obuf *b, uint64_t ns)
{
	utrace__ob_puts(b, ",\"ts\":");
	utrace__ob_num(b, ns / 1000, 0, ' ', false);
	utrace__ob_putc(b, '.');
	utrace__ob_num(b, ns % 1000, 3, '0', false);
}

static void put_meta(struct utrace__xwalk *w, const char *what, uint32_t pid, uint32_t tid,
		     const char *name)
{
	struct utrace__obuf *b = &w->ob;

	sep(w);
	utrace__ob_puts(b, "{\"name\":\"");
	utrace__ob_puts(b, what);
	utrace__ob_puts(b, "\",\"ph\":\"M\"");
	put_ids(b, pid, tid);
	utrace__ob_puts(b, ",\"args\":{\"name\":");
	utrace__ob_json_str(b, name, strlen(name));
	utrace__ob_puts(b, "}}");
}

static void json_start(struct utrace__xwalk *w, uint64_t first)
{
	const struct utrace__tf_process *p;
	const struct utrace__tf_thread *t;
	size_t i;

	(void)first;
	utrace__ob_puts(&w->ob, "{\"traceEvents\":[\n");
	for (i = 0; i < w->nr_procs && (p = w->proc[i]); i++)
		if (p->comm && p->comm[0])
			put_meta(w, "process_name", p->pid, p->pid, p->comm);
	for (i = 0; i < w->nr_threads && (t = w->thr[i]); i++)
		if (utrace__xw_thread_name(t))
			put_meta(w, "thread_name", t->proc->pid, utrace__xw_tid(t),
				 utrace__xw_thread_name(t));
}

static void put_num(struct utrace__obuf *b, uint64_t v, bool is_signed)
{
	if (is_signed)
		utrace__ob_snum(b, (int64_t)v);
	else
		utrace__ob_num(b, v, 0, ' ', false);
}

/* ,"args":{...} of every field */
static void put_args(struct utrace__obuf *b, const struct utrace__xev *ev)
{
	const struct utrace__xfmt *xf = ev->xf;
	struct utrace__fval v;
	size_t i;
	uint32_t k;

	utrace__ob_puts(b, ",\"args\":{");
	for (i = 0; i < xf->nr_fields; i++) {
		const char *name = xf->fields[i].name;

		if (i)
			utrace__ob_putc(b, ',');
		utrace__ob_json_str(b, name, strlen(name));
		utrace__ob_putc(b, ':');
		utrace__fdesc_read(&xf->fields[i], ev->r, &v);
		if (v.kind == UTRACE__FVAL_NUM) {
			put_num(b, v.num, v.is_signed);
		} else if (v.kind == UTRACE__FVAL_STR) {
			utrace__ob_json_str(b, (const char *)v.p, v.len);
		} else {
			utrace__ob_putc(b, '[');
			for (k = 0; k < v.len / v.elem_size; k++) {
				if (k)
					utrace__ob_putc(b, ',');
				put_num(b, utrace__fval_elem(&v, k), v.is_signed);
			}
			utrace__ob_putc(b, ']');
		}
	}
	utrace__ob_putc(b, '}');
}

static void json_event(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	struct utrace__obuf *b = &w->ob;
	const char *sys = ev->xf->e->system, *name = ev->xf->e->name;

	/* function_graph's slices (--slice funcgraph_entry.func:
	 * funcgraph_exit.func) named by their function, nested as the
	 * calls were */
	if (ev->kind != UTRACE__X_INSTANT && !strcmp(sys, "ftrace") &&
	    !strncmp(name, "funcgraph_", 10) && ev->it->len >= 16) {
		const char *fn = NULL;
		uint64_t addr, start, size;

		memcpy(&addr, ev->it->rec + 8, 8);
		if (utrace__tf_sym_lookup(NULL, ev->it->proc, addr, &fn, &start, &size) == 0 && fn)
			name = fn;
	}
	sep(w);
	utrace__ob_puts(b, "{\"name\":");
	utrace__ob_json_str(b, name, strlen(name));
	utrace__ob_puts(b, ",\"cat\":");
	utrace__ob_json_str(b, sys, strlen(sys));
	if (ev->kind == UTRACE__X_BEGIN)
		utrace__ob_puts(b, ",\"ph\":\"B\"");
	else if (ev->kind == UTRACE__X_END)
		utrace__ob_puts(b, ",\"ph\":\"E\"");
	else
		utrace__ob_puts(b, ",\"ph\":\"i\",\"s\":\"t\"");
	put_ts(b, ev->it->time);
	put_ids(b, ev->pid, ev->tid);
	put_args(b, ev);
	utrace__ob_putc(b, '}');
}

static void json_counter(struct utrace__xwalk *w, const struct utrace__xev *ev, size_t c,
			 const struct utrace__fval *v)
{
	struct utrace__obuf *b = &w->ob;
	const char *given = w->counter_text[c], *field = strrchr(given, '.') + 1;

	sep(w);
	utrace__ob_puts(b, "{\"name\":");
	utrace__ob_json_str(b, given, strlen(given));
	utrace__ob_puts(b, ",\"ph\":\"C\"");
	put_ts(b, ev->it->time);
	put_ids(b, ev->pid, ev->pid);
	utrace__ob_puts(b, ",\"args\":{");
	utrace__ob_json_str(b, field, strlen(field));
	utrace__ob_putc(b, ':');
	put_num(b, v->num, v->is_signed);
	utrace__ob_puts(b, "}}");
}

static void json_lost(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	struct utrace__obuf *b = &w->ob;

	sep(w);
	utrace__ob_puts(b, "{\"name\":\"lost_events\",\"cat\":\"utrace\",\"ph\":\"i\",\"s\":\"t\"");
	put_ts(b, ev->it->time);
	put_ids(b, ev->pid, ev->tid);
	utrace__ob_puts(b, ",\"args\":{\"count\":");
	if (ev->it->lost)
		utrace__ob_num(b, ev->it->lost, 0, ' ', false);
	else
		utrace__ob_puts(b, "null");
	utrace__ob_puts(b, "}}");
}

static void json_end(struct utrace__xwalk *w)
{
	struct utrace__obuf *b = &w->ob;

	utrace__ob_puts(b, "\n],\n\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":"
			"\"CLOCK_MONOTONIC\",\"source\":");
	utrace__ob_json_str(b, w->name, strlen(w->name));
	utrace__ob_puts(b, ",\"writer\":\"utrace ");
	utrace__ob_puts(b, utrace_reader_version());
	utrace__ob_puts(b, "\"}}\n");
}

static const struct utrace__xwriter json_writer = {
	.start = json_start,
	.event = json_event,
	.counter = json_counter,
	.lost = json_lost,
	.end = json_end,
};

int utrace__export_json(struct utrace__tf *tf, const char *out,
			const struct utrace__export_opts *o)
{
	struct json_out j = { .first = true };

	return utrace__export_walk(tf, out, o, &json_writer, &j);
}
