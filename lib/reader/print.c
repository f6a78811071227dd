/* SPDX-License-Identifier: MIT */
/*
 * The printer (print.h): the events of a trace file in time order, one
 * line each, in the layout of the kernel's trace file:
 *
 *             comm-tid     [cpu] .....  sec.usec: event: TP_printk text
 *
 * or each event's fields (--fields), or one JSON object per event (--json).
 *
 * The text after "event: " is what libtraceevent prints from the event's
 * format and record (tep_print_event, TEP_PRINT_INFO), once formats.c has
 * found the record safe to give it.
 */
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "clock.h"
#include "fields.h"
#include "filter.h"
#include "print.h"
#include "stacktab.h"
#include "probe.h"
#include "problems.h"
#include "traceline.h"

struct utrace__printer {
	const struct utrace__print_opts *o;
	struct utrace__fmts fmts;
	const char *name;
	struct trace_seq seq;
	struct utrace__obuf ob;
	uint64_t lost;
	bool lost_unknown;
	FILE *out;
	uint64_t nr_lines;               /* event lines printed */
	uint64_t nr_printed;             /* events printed, in any mode */
	unsigned char *cpu_seen;         /* annotate_cpus: one byte per CPU */
	size_t cpu_seen_len;
	/* UTRACE__PF_LATENCY: the line whose context waits for the time of
	 * the event after it (its "+delay"), its body in ob from 'at' */
	struct {
		bool on;
		bool in_ns;
		size_t at;
		char comm[17];
		uint32_t pid, cpu;
		uint8_t flags, preempt;
		uint64_t time, idx;
	} lat;
	uint64_t lat_idx;                /* lines printed (verbose's index) */
	/* UTRACE__OUT_OTLP */
	struct utrace__obuf text;        /* the event's text, its body */
	size_t attr_at, attr_len;        /* its attribute list in ob */
	struct utrace__rec last;         /* the last event appended */
	bool has_last;
	struct utrace__stacktab stacks;  /* record -g's stacks (ftrace:stack) */
	/* function_graph's lines (UTRACE__OUT_TEXT): an entry waits for the
	 * next item, which makes it a leaf "foo();" when it is its exit
	 * (fg_lookahead: whole files only), and each thread's entry times
	 * by depth give the "}" lines their duration */
	bool fg_lookahead;
	struct {
		bool on;
		uint32_t tid, cpu, depth;
		uint64_t func, time;
		char name[160];
		char comm[17];
	} fgp;
	struct fg_thread {
		uint32_t tid;
		uint32_t cap;
		uint64_t *t;
	} *fgt;
	size_t nr_fgt;
};

static bool select_fmt(const void *arg, const char *system, const char *name)
{
	return utrace__print_select(arg, system, name);
}

/* Set up after sc->o (and sc->fmts.pr) are set; -ENOMEM or -EINVAL. */
static int printer_init(struct utrace__printer *sc, struct utrace__tf *tf)
{
	int r = utrace__fmts_init(&sc->fmts, tf);

	sc->fmts.select = select_fmt;
	sc->fmts.select_arg = sc->o;
	trace_seq_init(&sc->seq);
	return r;
}

static void fg_free(struct utrace__printer *sc);

static void printer_fini(struct utrace__printer *sc)
{
	fg_free(sc);
	free(sc->cpu_seen);
	free(sc->ob.p);
	free(sc->text.p);
	if (sc->seq.buffer)
		trace_seq_destroy(&sc->seq);
	utrace__fmts_fini(&sc->fmts);
	utrace__stacktab_free(&sc->stacks);
}

bool utrace__print_select(const struct utrace__print_opts *o, const char *system,
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

const char *utrace__item_comm(const struct utrace__tf_item *it)
{
	if (it->thread->comm && it->thread->comm[0])
		return it->thread->comm;
	if (it->proc->comm && it->proc->comm[0])
		return it->proc->comm;
	return "<...>";
}

/* "%16s-%-7d [%03d] ..... %5lu.%06lu: " of the comm, tid, cpu and time:
 * the one prefix of the runtime's UTRACE_PRINT too (common/traceline.h). */
void utrace__print_prefix(struct utrace__obuf *b, const char *comm, uint32_t tid,
			  uint32_t cpu, uint64_t time, bool irq_info, bool in_ns)
{
	size_t n = strlen(comm);

	utrace__ob_reserve(b, n + UTRACE_TRACE_PREFIX_ROOM);
	if (b->cap - b->len < n + UTRACE_TRACE_PREFIX_ROOM)
		return;
	b->len += utrace__trace_prefix_clock(b->p + b->len, comm, n, tid, cpu, time, irq_info,
					     in_ns);
}

/* How a field's value is written: --fields, --json, or an OTLP AnyValue. */
enum field_style { FS_TEXT, FS_JSON, FS_OTLP };

static void put_number(struct utrace__obuf *b, uint64_t v, bool is_signed, enum field_style st)
{
	if (st == FS_OTLP) {
		/* int64 as a decimal string (OTLP's JSON encoding); an
		 * unsigned value past INT64_MAX would change sign: a string */
		utrace__ob_puts(b, !is_signed && v > INT64_MAX ? "{\"stringValue\":\""
							       : "{\"intValue\":\"");
	}
	if (is_signed)
		utrace__ob_snum(b, (int64_t)v);
	else
		utrace__ob_num(b, v, 0, ' ', false);
	if (st == FS_OTLP)
		utrace__ob_puts(b, "\"}");
}

/* The value of one field (after the common ones) of a checked record. */
static void put_field_value(struct utrace__obuf *b, const struct utrace__rec *r,
			    const struct tep_format_field *f, enum field_style st)
{
	struct utrace__fdesc d;
	struct utrace__fval v;
	uint32_t i;

	utrace__fdesc_init(&d, f);
	utrace__fdesc_read(&d, r, &v);
	if (v.kind == UTRACE__FVAL_NUM) {
		put_number(b, v.num, v.is_signed, st);
	} else if (v.kind == UTRACE__FVAL_STR) {
		if (st == FS_OTLP)
			utrace__ob_puts(b, "{\"stringValue\":");
		if (st == FS_TEXT)
			utrace__ob_put(b, v.p, v.len);
		else
			utrace__ob_json_str(b, (const char *)v.p, v.len);
		if (st == FS_OTLP)
			utrace__ob_putc(b, '}');
	} else {
		utrace__ob_puts(b, st == FS_OTLP ? "{\"arrayValue\":{\"values\":[" :
				   st == FS_JSON ? "[" : "{");
		for (i = 0; i < v.len / v.elem_size; i++) {
			if (i)
				utrace__ob_putc(b, ',');
			put_number(b, utrace__fval_elem(&v, i), v.is_signed, st);
		}
		utrace__ob_puts(b, st == FS_OTLP ? "]}}" : st == FS_JSON ? "]" : "}");
	}
}

/* Every field after the common ones: name=value, or "name":value. */
static void put_fields(struct utrace__obuf *b, const struct utrace__rec *r, bool json)
{
	struct tep_format_field *f;
	bool first = true;

	for (f = r->e->ev->format.fields; f; f = f->next) {
		if (json) {
			if (!first)
				utrace__ob_putc(b, ',');
			utrace__ob_json_str(b, f->name, strlen(f->name));
			utrace__ob_putc(b, ':');
		} else {
			utrace__ob_putc(b, ' ');
			utrace__ob_puts(b, f->name);
			utrace__ob_putc(b, '=');
		}
		first = false;
		put_field_value(b, r, f, json ? FS_JSON : FS_TEXT);
	}
}

/* ,"time":..,"pid":..,"tid":..,"cpu":..,"comm":".." of a JSON line */
static void json_common(struct utrace__obuf *b, const struct utrace__tf_item *it)
{
	utrace__ob_puts(b, ",\"time\":");
	utrace__ob_num(b, it->time, 0, ' ', false);
	utrace__ob_puts(b, ",\"pid\":");
	utrace__ob_num(b, it->proc->pid, 0, ' ', false);
	utrace__ob_puts(b, ",\"tid\":");
	utrace__ob_num(b, it->thread->tid, 0, ' ', false);
	utrace__ob_puts(b, ",\"cpu\":");
	utrace__ob_num(b, it->cpu, 0, ' ', false);
	utrace__ob_puts(b, ",\"comm\":");
	utrace__ob_json_str(b, utrace__item_comm(it), strlen(utrace__item_comm(it)));
}

/*
 * UTRACE__OUT_OTLP: one OTLP LogRecord in the JSON encoding of OTLP/HTTP
 * (opentelemetry-proto logs/v1/logs.proto; lowerCamelCase names, 64-bit
 * integers as decimal strings), without a newline:
 *
 *   {"timeUnixNano":"T","observedTimeUnixNano":"O","severityNumber":9,
 *    "severityText":"INFO","eventName":"SYSTEM:NAME","body":{"stringValue":"TEXT"},
 *    "attributes":[{"key":"event.system","value":{"stringValue":"demo"}},...]}
 *
 * The attributes utrace adds come first; the event's fields follow, under
 * their names: C identifiers, which have no '.', so that only "cpu" can
 * meet one of utrace's keys ("field.cpu" then).  The exporter adds
 * log.record.uid and the trace context (export-otlp.c).
 */
static void otlp_key(struct utrace__obuf *b, const char *key, bool first)
{
	utrace__ob_puts(b, first ? "{\"key\":" : ",{\"key\":");
	utrace__ob_json_str(b, key, strlen(key));
	utrace__ob_puts(b, ",\"value\":");
}

static void otlp_str(struct utrace__obuf *b, const char *key, const char *v, size_t n)
{
	otlp_key(b, key, false);
	utrace__ob_puts(b, "{\"stringValue\":");
	utrace__ob_json_str(b, v, n);
	utrace__ob_puts(b, "}}");
}

static void otlp_int(struct utrace__obuf *b, const char *key, uint64_t v, bool first)
{
	otlp_key(b, key, first);
	utrace__ob_puts(b, "{\"intValue\":\"");
	utrace__ob_num(b, v, 0, ' ', false);
	utrace__ob_puts(b, "\"}}");
}

/* The record up to its attribute list, and utrace's own attributes. */
static void otlp_start(struct utrace__printer *sc, const struct utrace__tf_item *it,
		       const char *system, const char *name, bool warn)
{
	struct utrace__obuf *b = &sc->ob;
	const char *comm = utrace__item_comm(it);
	uint64_t t = it->time + (uint64_t)sc->o->otlp_time_offset;

	utrace__ob_puts(b, "{\"timeUnixNano\":\"");
	utrace__ob_num(b, t, 0, ' ', false);
	utrace__ob_puts(b, "\",\"observedTimeUnixNano\":\"");
	utrace__ob_num(b, sc->o->otlp_observed, 0, ' ', false);
	utrace__ob_puts(b, warn ? "\",\"severityNumber\":13,\"severityText\":\"WARN\""
				: "\",\"severityNumber\":9,\"severityText\":\"INFO\"");
	/* the event's name as the record's eventName (the attribute
	 * event.name is deprecated), "SYSTEM:NAME" as utrace names events */
	utrace__ob_puts(b, ",\"eventName\":\"");
	utrace__ob_puts(b, system);
	utrace__ob_putc(b, ':');
	utrace__ob_puts(b, name);
	utrace__ob_puts(b, "\",\"body\":{\"stringValue\":");
	utrace__ob_json_str(b, sc->text.p, sc->text.len);
	utrace__ob_puts(b, "},\"attributes\":");
	sc->attr_at = b->len;
	utrace__ob_putc(b, '[');
	otlp_int(b, "utrace.seq", sc->o->otlp_seq, true);
	otlp_str(b, "event.system", system, strlen(system));
	otlp_int(b, "thread.id", it->thread->tid, false);
	otlp_str(b, "thread.name", comm, strlen(comm));
	otlp_int(b, "cpu", it->cpu, false);
}

static void otlp_end(struct utrace__printer *sc)
{
	utrace__ob_putc(&sc->ob, ']');
	sc->attr_len = sc->ob.len - sc->attr_at;
	utrace__ob_putc(&sc->ob, '}');
}

static void otlp_event(struct utrace__printer *sc, const struct utrace__tf_item *it,
		       const struct utrace__fmt *e, const struct utrace__rec *r)
{
	struct utrace__obuf *b = &sc->ob;
	struct tep_format_field *f;

	otlp_start(sc, it, e->system, e->name, false);
	for (f = r->e->ev->format.fields; f; f = f->next) {
		otlp_key(b, strcmp(f->name, "cpu") ? f->name : "field.cpu", false);
		put_field_value(b, r, f, FS_OTLP);
		utrace__ob_putc(b, '}');
	}
	otlp_end(sc);
	sc->last = *r;
	sc->has_last = true;
}

static void otlp_lost(struct utrace__printer *sc, const struct utrace__tf_item *it)
{
	sc->text.len = 0;
	utrace__ob_puts(&sc->text, it->lost ? "[LOST " : "[LOST EVENTS]");
	if (it->lost) {
		utrace__ob_num(&sc->text, it->lost, 0, ' ', false);
		utrace__ob_puts(&sc->text, " EVENTS]");
	}
	otlp_start(sc, it, "utrace", "lost", true);
	if (it->lost)
		otlp_int(&sc->ob, "utrace.lost", it->lost, false);
	otlp_end(sc);
}

static void put_lost(struct utrace__printer *sc, const struct utrace__tf_item *it)
{
	struct utrace__obuf *b = &sc->ob;

	if (it->lost)
		sc->lost += it->lost;
	else
		sc->lost_unknown = true;
	if (sc->o->mode == UTRACE__OUT_OTLP) {
		otlp_lost(sc, it);
		return;
	}
	if (sc->o->mode == UTRACE__OUT_JSON) {
		utrace__ob_puts(b, "{\"lost\":");
		if (it->lost)
			utrace__ob_num(b, it->lost, 0, ' ', false);
		else
			utrace__ob_puts(b, "null");
		json_common(b, it);
		utrace__ob_puts(b, "}\n");
		return;
	}
	utrace__print_prefix(b, utrace__item_comm(it), it->thread->tid, it->cpu, it->time,
			     !sc->o->no_irq_info, utrace__trace_clock_in_ns(it->proc->trace_clock));
	if (it->lost) {
		utrace__ob_puts(b, "[LOST ");
		utrace__ob_num(b, it->lost, 0, ' ', false);
		utrace__ob_puts(b, " EVENTS]\n");
	} else {
		utrace__ob_puts(b, "[LOST EVENTS]\n");
	}
}

/*
 * The kernel's trace file, when its buffer was overrun, marks where each
 * CPU's events start (test_cpu_buff_start()): before the first line of
 * each CPU but the very first line of the output.  CPUs past 65535 (a
 * file could say anything) are not marked.
 */
static void annotate_cpu(struct utrace__printer *sc, uint32_t cpu)
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
		utrace__ob_puts(&sc->ob, line);
	}
}

/*
 * ftrace's own events, which the kernel prints with code rather than by
 * format (kernel/trace/trace_output.c): trace_print_print() for the
 * trace_marker's "print", the text as it is (its newline included, up to
 * a NUL); trace_raw_data() for trace_marker_raw's "raw_data", the id and
 * every byte of the record after it.
 */
static bool is_ftrace_printed(const struct utrace__fmt *e)
{
	return !strcmp(e->system, "ftrace") &&
	       (!strcmp(e->name, "print") || !strcmp(e->name, "raw_data"));
}

/* ---- the function tracers' lines (kernel/trace/trace_functions_graph.c) ---- */

enum { FT_NONE, FT_FUNCTION, FT_GRAPH_ENT, FT_GRAPH_RET };

static int ftrace_kind(const struct utrace__fmt *e)
{
	if (strcmp(e->system, "ftrace"))
		return FT_NONE;
	if (!strcmp(e->name, "function"))
		return FT_FUNCTION;
	if (!strcmp(e->name, "funcgraph_entry"))
		return FT_GRAPH_ENT;
	if (!strcmp(e->name, "funcgraph_exit"))
		return FT_GRAPH_RET;
	return FT_NONE;
}

static void put_line_start(struct utrace__printer *sc, const struct utrace__tf_item *it);

static uint64_t rd64(const unsigned char *d, size_t off)
{
	uint64_t v;

	memcpy(&v, d + off, 8);
	return v;
}

/* %ps: the symbol's name, or the address in hex */
static void ps_name(const struct utrace__rec *r, uint64_t addr, char *buf, size_t len)
{
	const char *name = NULL;
	uint64_t start = 0, size = 0;

	if (r->syms && r->syms(r->syms_ctx, r->proc, addr, &name, &start, &size) >= 0 && name)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
}

static unsigned int fg_flags(const struct utrace__printer *sc)
{
	return sc->o->mode == UTRACE__OUT_TEXT ? sc->o->pflags : 0;
}

/* print_graph_prologue(): funcgraph-abstime's "secs.usecs |  ", the
 * CPU's " 1) " (print_graph_cpu()), funcgraph-proc's "comm-tid | "
 * (print_graph_proc(): the comm cut to 7, centred in 14) */
static void fg_prologue(struct utrace__printer *sc, uint32_t cpu, uint32_t tid,
			const char *comm, uint64_t time)
{
	unsigned int pf = fg_flags(sc);
	char tmp[64];

	sc->nr_lines++;
	if (pf & UTRACE__PF_FG_ABSTIME) {
		snprintf(tmp, sizeof(tmp), "%5llu.%06llu |  ",
			 (unsigned long long)(time / 1000000000ULL),
			 (unsigned long long)(time % 1000000000ULL / 1000));
		utrace__ob_puts(&sc->ob, tmp);
	}
	if (!(pf & UTRACE__PF_FG_NO_CPU)) {
		long n = sysconf(_SC_NPROCESSORS_CONF);
		int w = 1;

		for (; n >= 10; n /= 10)
			w++;
		snprintf(tmp, sizeof(tmp), " %*u) ", w, (unsigned int)cpu);
		utrace__ob_puts(&sc->ob, tmp);
	}
	if (pf & UTRACE__PF_FG_PROC) {
		char who[40];
		int len = snprintf(who, sizeof(who), "%.7s-%u", comm ? comm : "<...>",
				   (unsigned int)tid);
		int spaces = len < 14 ? 14 - len : 0;

		for (int i = 0; i < spaces / 2; i++)
			utrace__ob_putc(&sc->ob, ' ');
		utrace__ob_puts(&sc->ob, who);
		for (int i = 0; i < spaces - spaces / 2; i++)
			utrace__ob_putc(&sc->ob, ' ');
		utrace__ob_puts(&sc->ob, " | ");
	}
}

/* The duration column without a duration (FLAGS_FILL_FULL) */
static void fg_fill(struct utrace__printer *sc)
{
	if (!(fg_flags(sc) & UTRACE__PF_FG_NO_DURATION))
		utrace__ob_puts(&sc->ob, "              |  ");
}

/* print_graph_duration(): trace_find_mark() (funcgraph-overhead) and
 * trace_print_graph_duration(), then "|  "; nothing without
 * funcgraph-duration */
static void fg_duration(struct utrace__printer *sc, uint64_t ns)
{
	static const struct { uint64_t over; char mark; } marks[] = {
		{ 1000000000ULL, '$' }, { 100000000ULL, '@' }, { 10000000ULL, '*' },
		{ 1000000ULL, '#' }, { 100000ULL, '!' }, { 10000ULL, '+' },
	};
	struct utrace__obuf *b = &sc->ob;
	unsigned int pf = fg_flags(sc);
	char us[24], tmp[64], mark = ' ';
	int len;

	if (pf & UTRACE__PF_FG_NO_DURATION)
		return;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (!(pf & UTRACE__PF_FG_NO_OVERHEAD) && ns > marks[i].over) {
			mark = marks[i].mark;
			break;
		}
	len = snprintf(us, sizeof(us), "%" PRIu64, ns / 1000);
	snprintf(tmp, sizeof(tmp), "%c %s", mark, us);
	utrace__ob_puts(b, tmp);
	if (len < 7) {
		char frac[8];

		snprintf(frac, sizeof(frac), "%03u", (unsigned int)(ns % 1000));
		frac[8 - len - 1 < 3 ? 8 - len - 1 : 3] = '\0';
		utrace__ob_putc(b, '.');
		utrace__ob_puts(b, frac);
		len += (int)strlen(frac) + 1;
	}
	utrace__ob_puts(b, " us ");
	for (; len < 8; len++)
		utrace__ob_putc(b, ' ');
	utrace__ob_puts(b, "|  ");
}

static void fg_indent(struct utrace__obuf *b, uint32_t depth)
{
	for (uint32_t i = 0; i < depth && i < 4096; i++)
		utrace__ob_puts(b, "  ");
}

static struct fg_thread *fg_thread(struct utrace__printer *sc, uint32_t tid)
{
	struct fg_thread *t;

	for (size_t i = 0; i < sc->nr_fgt; i++)
		if (sc->fgt[i].tid == tid)
			return &sc->fgt[i];
	t = realloc(sc->fgt, (sc->nr_fgt + 1) * sizeof(*t));
	if (!t)
		return NULL;
	sc->fgt = t;
	t = &sc->fgt[sc->nr_fgt++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/* The entry time of a thread's frame at a depth: set (time) or taken (0). */
static uint64_t fg_time(struct utrace__printer *sc, uint32_t tid, uint32_t depth, uint64_t time,
			bool set)
{
	struct fg_thread *t = fg_thread(sc, tid);
	uint64_t v;

	if (!t || depth >= (1u << 20))
		return 0;
	if (depth >= t->cap) {
		uint32_t cap = depth + 64;
		uint64_t *n = realloc(t->t, cap * sizeof(*n));

		if (!n)
			return 0;
		memset(n + t->cap, 0, (cap - t->cap) * sizeof(*n));
		t->t = n;
		t->cap = cap;
	}
	v = t->t[depth];
	t->t[depth] = set ? time : 0;
	return v;
}

/* The entry that waited is not a leaf: "foo() {" */
static void fg_flush(struct utrace__printer *sc)
{
	struct utrace__obuf *b = &sc->ob;

	if (!sc->fgp.on)
		return;
	sc->fgp.on = false;
	fg_prologue(sc, sc->fgp.cpu, sc->fgp.tid, sc->fgp.comm, sc->fgp.time);
	fg_fill(sc);
	fg_indent(b, sc->fgp.depth);
	utrace__ob_puts(b, sc->fgp.name);
	utrace__ob_puts(b, "() {\n");
}

static void fg_free(struct utrace__printer *sc)
{
	for (size_t i = 0; i < sc->nr_fgt; i++)
		free(sc->fgt[i].t);
	free(sc->fgt);
	sc->fgt = NULL;
	sc->nr_fgt = 0;
}

/* The kernel's lines of the three events (trace_fn_trace(),
 * print_graph_entry(), print_graph_return()). */
static void put_ftrace_fn(struct utrace__printer *sc, const struct utrace__tf_item *it,
			  const struct utrace__rec *r, int kind)
{
	struct utrace__obuf *b = &sc->ob;
	uint32_t tid = it->thread->tid, depth;
	char name[160], parent[160];
	uint64_t func = rd64(r->d, 8);

	if (kind == FT_FUNCTION) {
		ps_name(r, func, name, sizeof(name));
		ps_name(r, rd64(r->d, 16), parent, sizeof(parent));
		put_line_start(sc, it);
		utrace__ob_puts(b, name);
		utrace__ob_puts(b, " <-");
		utrace__ob_puts(b, parent);
		utrace__ob_putc(b, '\n');
		return;
	}
	memcpy(&depth, r->d + 16, 4);
	if (kind == FT_GRAPH_ENT) {
		fg_flush(sc);
		fg_time(sc, tid, depth, it->time, true);
		sc->fgp.on = true;
		sc->fgp.tid = tid;
		sc->fgp.cpu = it->cpu;
		sc->fgp.depth = depth;
		sc->fgp.func = func;
		sc->fgp.time = it->time;
		snprintf(sc->fgp.comm, sizeof(sc->fgp.comm), "%s", utrace__item_comm(it));
		ps_name(r, func, sc->fgp.name, sizeof(sc->fgp.name));
		if (!sc->fg_lookahead)
			fg_flush(sc);
		return;
	}
	if (sc->fgp.on && sc->fgp.tid == tid && sc->fgp.depth == depth && sc->fgp.func == func) {
		/* print_graph_entry_leaf() */
		sc->fgp.on = false;
		fg_time(sc, tid, depth, 0, false);
		fg_prologue(sc, it->cpu, tid, sc->fgp.comm, sc->fgp.time);
		fg_duration(sc, it->time - sc->fgp.time);
		fg_indent(b, depth);
		utrace__ob_puts(b, sc->fgp.name);
		utrace__ob_puts(b, "();\n");
		return;
	}
	fg_flush(sc);
	{
		uint64_t t0 = fg_time(sc, tid, depth, 0, false);
		uint32_t overrun;

		fg_prologue(sc, it->cpu, tid, utrace__item_comm(it), it->time);
		if (t0 && it->time >= t0)
			fg_duration(sc, it->time - t0);
		else
			fg_fill(sc);
		fg_indent(b, depth);
		/* "}", or with the function's name when its entry is not
		 * known or funcgraph-tail is on */
		if (t0 && !(fg_flags(sc) & UTRACE__PF_FG_TAIL)) {
			utrace__ob_puts(b, "}\n");
		} else {
			ps_name(r, func, name, sizeof(name));
			utrace__ob_printf(b, "} /* %s */\n", name);
		}
		memcpy(&overrun, r->d + 20, 4);
		if (fg_flags(sc) & UTRACE__PF_FG_OVERRUN)
			utrace__ob_printf(b, " (Overruns: %u)\n", (unsigned int)overrun);
	}
}

/* ns2usecs(): rounded to the microsecond */
static uint64_t ns2usecs(uint64_t ns)
{
	return (ns + 500) / 1000;
}

/* The kernel's trace_print_lat_fmt() of a record's flags and preempt
 * count: irqs-off, need-resched, hardirq/softirq, preempt-depth,
 * migrate-disable. */
static void lat_fmt(char out[5], uint8_t flags, uint8_t preempt)
{
	static const char hex[] = "0123456789abcdef";
	bool bh = flags & 0x80, nmi = flags & 0x40, hard = flags & 0x08, soft = flags & 0x10;

	out[0] = (flags & 0x01) && bh ? 'D' : (flags & 0x01) ? 'd' : bh ? 'b' :
		 (flags & 0x02) ? 'X' : '.';
	switch (flags & 0x24) {
	case 0x24: out[1] = 'N'; break;
	case 0x04: out[1] = 'n'; break;
	case 0x20: out[1] = 'p'; break;
	default: out[1] = '.'; break;
	}
	out[2] = nmi && hard ? 'Z' : nmi ? 'z' : hard && soft ? 'H' : hard ? 'h' : soft ? 's' : '.';
	out[3] = preempt & 0xf ? hex[preempt & 0xf] : '.';
	out[4] = preempt & 0xf0 ? hex[preempt >> 4] : '.';
}

/*
 * latency-format: the waiting line's context, now that the time of the
 * event after it is known (the kernel's trace_print_lat_context():
 * lat_print_generic() or the verbose columns, then lat_print_timestamp()),
 * put in front of its body.
 */
static void lat_end(struct utrace__printer *sc, uint64_t next_ts)
{
	struct utrace__obuf *b = &sc->ob;
	uint64_t abs = sc->lat.time - sc->o->time_start, rel = next_ts - sc->lat.time;
	char p[192], mark = ' ';
	int n;

	if (!sc->lat.on)
		return;
	sc->lat.on = false;
	if (sc->lat.in_ns) {
		abs = ns2usecs(abs);
		rel = ns2usecs(rel);
	}
	if (sc->o->pflags & UTRACE__PF_VERBOSE) {
		n = snprintf(p, sizeof(p), "%16s %7u %3u %u %08x %08llx ", sc->lat.comm,
			     (unsigned int)sc->lat.pid, (unsigned int)sc->lat.cpu,
			     (unsigned int)sc->lat.flags, (unsigned int)(sc->lat.preempt & 0xf),
			     (unsigned long long)sc->lat.idx);
		if (sc->lat.in_ns)
			n += snprintf(p + n, sizeof(p) - (size_t)n,
				      "[%08llx] %llu.%03llums (+%llu.%03llums): ",
				      (unsigned long long)ns2usecs(sc->lat.time),
				      (unsigned long long)(abs / 1000), (unsigned long long)(abs % 1000),
				      (unsigned long long)(rel / 1000), (unsigned long long)(rel % 1000));
		else
			n += snprintf(p + n, sizeof(p) - (size_t)n, "[%016llx] %llu (+%llu): ",
				      (unsigned long long)sc->lat.time, (unsigned long long)abs,
				      (unsigned long long)rel);
	} else {
		n = snprintf(p, sizeof(p), "%8.8s-%-7u %3u", sc->lat.comm, (unsigned int)sc->lat.pid,
			     (unsigned int)sc->lat.cpu);
		lat_fmt(p + n, sc->lat.flags, sc->lat.preempt);
		n += 5;
		if (sc->lat.in_ns) {
			/* trace_find_mark(): the delay to the next event */
			static const struct { uint64_t us; char c; } marks[] = {
				{ 1000000, '$' }, { 100000, '@' }, { 10000, '*' },
				{ 1000, '#' }, { 100, '!' }, { 10, '+' },
			};
			unsigned int i;

			for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
				if (rel > marks[i].us) {
					mark = marks[i].c;
					break;
				}
			n += snprintf(p + n, sizeof(p) - (size_t)n, " %4lluus%c: ",
				      (unsigned long long)abs, mark);
		} else {
			n += snprintf(p + n, sizeof(p) - (size_t)n, " %4llu: ",
				      (unsigned long long)abs);
		}
	}
	if (n < 0 || (size_t)n >= sizeof(p))
		n = (int)strnlen(p, sizeof(p) - 1);
	utrace__ob_reserve(b, (size_t)n);
	if (b->cap - b->len < (size_t)n)
		return;
	memmove(b->p + sc->lat.at + n, b->p + sc->lat.at, b->len - sc->lat.at);
	memcpy(b->p + sc->lat.at, p, (size_t)n);
	b->len += (size_t)n;
}

/* latency-format: this line's context waits for the next event's time. */
static void lat_begin(struct utrace__printer *sc, const struct utrace__tf_item *it)
{
	lat_end(sc, it->time);
	sc->lat.on = true;
	sc->lat.at = sc->ob.len;
	sc->lat.in_ns = utrace__trace_clock_in_ns(it->proc->trace_clock);
	snprintf(sc->lat.comm, sizeof(sc->lat.comm), "%s", utrace__item_comm(it));
	sc->lat.pid = it->thread->tid;
	sc->lat.cpu = it->cpu;
	sc->lat.flags = it->rec[2];
	sc->lat.preempt = it->rec[3];
	sc->lat.time = it->time;
	sc->lat.idx = sc->lat_idx++;
}

/* The CPU mark, and the line's context: the usual prefix with the
 * record's preempt count (and with record-tgid the process's id after the
 * pid, trace_print_context()), latency-format's, or none. */
static void put_line_start(struct utrace__printer *sc, const struct utrace__tf_item *it)
{
	struct utrace__obuf *b = &sc->ob;
	const char *comm = utrace__item_comm(it);
	unsigned int pf = sc->o->mode == UTRACE__OUT_TEXT ? sc->o->pflags : 0;
	size_t at, n = strlen(comm), cut;
	uint32_t v;

	if (sc->o->annotate_cpus)
		annotate_cpu(sc, it->cpu);
	sc->nr_lines++;
	if (pf & UTRACE__PF_NO_CONTEXT)
		return;
	if (pf & UTRACE__PF_LATENCY) {
		lat_begin(sc, it);
		return;
	}
	at = b->len;
	utrace__print_prefix(b, comm, it->thread->tid, it->cpu, it->time, !sc->o->no_irq_info,
			     utrace__trace_clock_in_ns(it->proc->trace_clock));
	if (!sc->o->no_irq_info && it->rec[3] && b->len > at)
		utrace__trace_prefix_preempt(b->p + at, n, it->thread->tid, it->cpu, it->rec[3]);
	if (!(pf & UTRACE__PF_TGID) || b->len == at)
		return;
	/* "%16s-%-7d " then "(%7d) " */
	cut = (n > 16 ? n : 16) + 1;
	for (n = 1, v = it->thread->tid; v >= 10; v /= 10)
		n++;
	cut += (n > 7 ? n : 7) + 1;
	{
		char tg[24];
		int k = snprintf(tg, sizeof(tg), "(%7u) ", (unsigned int)it->proc->pid);

		utrace__ob_reserve(b, (size_t)k);
		if (b->cap - b->len < (size_t)k || at + cut > b->len)
			return;
		memmove(b->p + at + cut + k, b->p + at + cut, b->len - at - cut);
		memcpy(b->p + at + cut, tg, (size_t)k);
		b->len += (size_t)k;
	}
}

static void put_ftrace(struct utrace__obuf *b, const char *name, const unsigned char *d,
		       uint32_t len);

/*
 * raw and hex (print_raw_fmt(), print_hex_fmt()): the context as numbers,
 * then the event's raw form: the marker's "# ip text" (trace_print_raw()),
 * trace_marker_raw's bytes as always, any other event "type: N" (the
 * kernel's trace_nop_print(), which every event without a raw print of
 * its own has); hex ends each line with one more newline.
 */
static void put_raw_line(struct utrace__printer *sc, const struct utrace__tf_item *it,
			 const struct utrace__fmt *e)
{
	struct utrace__obuf *b = &sc->ob;
	bool ctx = !(sc->o->pflags & UTRACE__PF_NO_CONTEXT);

	if (sc->o->pflags & UTRACE__PF_HEX) {
		if (ctx)
			utrace__ob_printf(b, "%08x %08x %016llx ", (unsigned int)it->thread->tid,
					  (unsigned int)it->cpu, (unsigned long long)it->time);
		utrace__ob_printf(b, "type: %u\n\n", (unsigned int)it->id);
		return;
	}
	if (ctx)
		utrace__ob_printf(b, "%u %u %llu ", (unsigned int)it->thread->tid,
				  (unsigned int)it->cpu, (unsigned long long)it->time);
	if (is_ftrace_printed(e) && !strcmp(e->name, "print") && it->len >= 16) {
		const char *s = (const char *)it->rec + 16;
		uint64_t ip;

		memcpy(&ip, it->rec + 8, 8);
		utrace__ob_printf(b, "# %llx ", (unsigned long long)ip);
		utrace__ob_put(b, s, strnlen(s, it->len - 16));
		return;
	}
	if (is_ftrace_printed(e)) {
		put_ftrace(b, e->name, it->rec, it->len);
		return;
	}
	utrace__ob_printf(b, "type: %u\n", (unsigned int)it->id);
}

static void put_ftrace(struct utrace__obuf *b, const char *name, const unsigned char *d,
		       uint32_t len)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t i;

	if (!strcmp(name, "print")) {
		const char *s = (const char *)d + 16;

		if (len < 16) {
			utrace__ob_puts(b, "[record too short]\n");
			return;
		}
		utrace__ob_puts(b, "tracing_mark_write: ");
		utrace__ob_put(b, s, strnlen(s, len - 16));
		return;
	}
	if (len >= 12) {             /* raw_data */
		char tmp[32];
		uint32_t id;

		memcpy(&id, d + 8, 4);
		snprintf(tmp, sizeof(tmp), "# %x buf:", id);
		utrace__ob_puts(b, tmp);
		for (i = 12; i < len; i++) {
			char x[3] = { ' ', hex[d[i] >> 4], hex[d[i] & 0xf] };

			utrace__ob_put(b, x, 3);
		}
		utrace__ob_putc(b, '\n');
		return;
	}
	utrace__ob_puts(b, "[record too short]\n");
}

/*
 * A uprobe event (fields __probe_ip, or __probe_func and __probe_ret_ip,
 * then the arguments) prints as the kernel's print_uprobe_event() does,
 * not by its print fmt: "(0x...)", "(0xRET <- 0xFUNC)" (the print fmt has
 * them the other way round), and "(fault)" for a string it could not read.
 */
static const struct utrace__probe_def *probe_of(struct utrace__fmt *e)
{
	struct utrace_event_field v[UTRACE_PROBE_MAX_ARGS + 2];
	struct tep_format_field *f;
	unsigned int n = 0;

	if (e->probe_state)
		return e->probe;
	e->probe_state = -1;
	if (!e->ev || !e->ev->print_fmt.format)
		return NULL;
	for (f = e->ev->format.fields; f && n < sizeof(v) / sizeof(v[0]); f = f->next, n++) {
		v[n] = (struct utrace_event_field){
			f->type, f->name, f->offset, f->size,
			!!(f->flags & TEP_FIELD_IS_SIGNED),
			f->flags & TEP_FIELD_IS_DYNAMIC ? UTRACE_FIELD_STRING : UTRACE_FIELD_PLAIN, 0,
		};
	}
	if (f || !n)
		return NULL;
	e->probe = utrace__probe_def_from_format(v, n, e->ev->print_fmt.format);
	if (e->probe)
		e->probe_state = 1;
	return e->probe;
}

/* The symbol type: the process's symbol, as the kernel's %pS. */
static int probe_sym(void *ctx, uint64_t addr, char *buf, size_t len)
{
	const struct utrace__rec *r = ctx;
	const char *name = NULL;
	uint64_t start = 0, size = 0;
	int n;

	if (!r->syms || r->syms(r->syms_ctx, r->proc, addr, &name, &start, &size) < 0 || !name)
		return 0;
	n = snprintf(buf, len, "%s+0x%" PRIx64 "/0x%" PRIx64, name, addr - start, size);
	return n > 0 && (size_t)n < len ? n : 0;
}

/*
 * ftrace:user_stack (the stacktrace trigger's record) as the kernel's
 * stack traces print: "<user stack trace>", then one " => " line a frame,
 * named as %pS names (function+0xoff/0xsize) from the process's symbols,
 * "<%016lx>" (trace_user_stack_print()'s form) where none holds it; up to
 * the first 0, which ends the stack.
 */
static bool is_user_stack(const struct utrace__fmt *e)
{
	return !strcmp(e->system, "ftrace") && !strcmp(e->name, "user_stack");
}

static void put_user_stack(struct utrace__obuf *b, const struct utrace__rec *r, size_t len)
{
	char sym[512];
	size_t at;

	utrace__ob_puts(b, "<user stack trace>");
	for (at = 16; at + 8 <= len; at += 8) {
		uint64_t ip;

		memcpy(&ip, r->d + at, sizeof(ip));
		if (!ip || ip == UINT64_MAX)
			break;
		utrace__stack_frame_name(r->proc, ip, true, sym, sizeof(sym));
		utrace__ob_puts(b, "\n => ");
		utrace__ob_puts(b, sym);
	}
}

static void put_frames(struct utrace__obuf *b, const struct utrace__rec *r, const uint64_t *ips,
		       uint32_t nr)
{
	char sym[512];
	uint32_t i;

	utrace__ob_puts(b, "<user stack trace>");
	for (i = 0; i < nr; i++) {
		utrace__stack_frame_name(r->proc, ips[i], true, sym, sizeof(sym));
		utrace__ob_puts(b, "\n => ");
		utrace__ob_puts(b, sym);
	}
}

/* record -g's ftrace:stack and ftrace:stack_ref: the stack of the event
 * before, printed as the stacktrace trigger's */
static int put_stack(struct utrace__printer *sc, const struct utrace__rec *r,
		     enum utrace__stack_kind kind, size_t len)
{
	const uint64_t *ips;
	uint32_t nr, id;
	int e = utrace__stacktab_item(&sc->stacks, r->proc, kind, r->d, len, &ips, &nr);

	if (e == -ENOMEM)
		return e;
	if (e < 0 || (kind == UTRACE__STACK_REF && !ips)) {
		memcpy(&id, r->d + 8, 4);
		utrace__ob_printf(&sc->ob, "<user stack trace>\n => [stack %u not in the file]",
				  e < 0 ? 0 : id);
		return 0;
	}
	put_frames(&sc->ob, r, ips, nr);
	return 0;
}

static int put_probe_event(struct utrace__obuf *b, const struct utrace__probe_def *d,
			   const struct utrace__rec *r, size_t len)
{
	char line[4096];
	int n = utrace__probe_print(d, r->d, len, line, sizeof(line), probe_sym, (void *)r);

	if (n < 0)
		return -EINVAL;
	utrace__ob_put(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	return 0;
}

static int put_event(struct utrace__printer *sc, const struct utrace__tf_item *it)
{
	struct utrace__tf_format *f = it->format;
	struct utrace__obuf *b = &sc->ob;
	struct tep_record record;
	struct utrace__fmt *e;
	struct utrace__rec r;
	int ok;

	if (!f) {
		utrace__fmts_no_format(&sc->fmts, it);
		return 0;
	}
	e = utrace__fmts_get(&sc->fmts, f);
	if (!e)
		return -ENOMEM;
	if (!e->selected)
		return 0;
	if (!e->state && utrace__fmts_parse(&sc->fmts, e) < 0)
		return -ENOMEM;
	if (e->state < 0)
		return 0;                /* utrace__fmts_parse() said why */
	if (e->filter) {
		struct utrace__filter_ctx ctx = { it->cpu, utrace__item_comm(it) };

		if (!utrace__filter_match(e->filter, it->rec, (unsigned int)it->len, &ctx))
			return 0;
	}
	if (sc->o->mode == UTRACE__OUT_TEXT &&
	    (sc->o->pflags & (UTRACE__PF_RAW | UTRACE__PF_HEX))) {
		/* numbers and the raw print: no field is read */
		sc->nr_printed++;
		put_raw_line(sc, it, e);
		return 0;
	}
	if (sc->fgp.on && (sc->o->mode != UTRACE__OUT_TEXT || ftrace_kind(e) != FT_GRAPH_RET))
		fg_flush(sc);
	if (sc->o->mode == UTRACE__OUT_TEXT && is_ftrace_printed(e)) {
		/* printed by code, not by its format: nothing to check */
		sc->nr_printed++;
		put_line_start(sc, it);
		put_ftrace(b, e->name, it->rec, it->len);
		return 0;
	}
	ok = utrace__fmts_check_item(&sc->fmts, e, it, (sc->o->mode == UTRACE__OUT_TEXT ||
						       sc->o->mode == UTRACE__OUT_OTLP) &&
				     !is_ftrace_printed(e), &r);
	if (ok <= 0)
		return ok;
	sc->nr_printed++;
	if (sc->o->mode == UTRACE__OUT_TEXT && ftrace_kind(e) != FT_NONE &&
	    it->len >= (ftrace_kind(e) == FT_GRAPH_RET ? 40u : 24u)) {
		put_ftrace_fn(sc, it, &r, ftrace_kind(e));
		return 0;
	}
	if (sc->o->mode == UTRACE__OUT_JSON) {
		utrace__ob_puts(b, "{\"name\":\"");
		utrace__ob_json_chars(b, e->system, strlen(e->system));
		utrace__ob_putc(b, ':');
		utrace__ob_json_chars(b, e->name, strlen(e->name));
		utrace__ob_putc(b, '"');
		json_common(b, it);
		utrace__ob_puts(b, ",\"fields\":{");
		put_fields(b, &r, true);
		utrace__ob_puts(b, "}}\n");
		return 0;
	}
	if (sc->o->mode == UTRACE__OUT_TEXT && utrace__stack_kind(e->system, e->name)) {
		int se;

		put_line_start(sc, it);
		se = put_stack(sc, &r, utrace__stack_kind(e->system, e->name), it->len);
		utrace__ob_putc(b, '\n');
		return se;
	}
	if (sc->o->mode == UTRACE__OUT_TEXT && is_user_stack(e)) {
		put_line_start(sc, it);
		put_user_stack(b, &r, it->len);
		utrace__ob_putc(b, '\n');
		return 0;
	}
	if (sc->o->mode != UTRACE__OUT_OTLP) {
		put_line_start(sc, it);
		utrace__ob_puts(b, e->name);
	}
	if (sc->o->mode == UTRACE__OUT_FIELDS) {
		utrace__ob_putc(b, ':');
		put_fields(b, &r, false);
		utrace__ob_putc(b, '\n');
		return 0;
	}
	if (sc->o->mode == UTRACE__OUT_OTLP && is_ftrace_printed(e)) {
		sc->text.len = 0;
		put_ftrace(&sc->text, e->name, it->rec, it->len);
		while (sc->text.len && sc->text.p[sc->text.len - 1] == '\n')
			sc->text.len--;
		otlp_event(sc, it, e, &r);
		return 0;
	}
	if (sc->o->mode != UTRACE__OUT_OTLP)
		utrace__ob_put(b, ": ", 2);
	if (sc->o->mode == UTRACE__OUT_TEXT && probe_of(e)) {
		if (put_probe_event(b, e->probe, &r, it->len) < 0)
			return -ENOMEM;
		utrace__ob_putc(b, '\n');
		return 0;
	}
	memset(&record, 0, sizeof(record));
	record.data = (void *)r.d;
	record.size = (int)it->len;
	record.cpu = (int)it->cpu;
	record.ts = it->time;
	trace_seq_reset(&sc->seq);
	tep_print_event(sc->fmts.tep, &sc->seq, &record, "%s", TEP_PRINT_INFO);
	if (sc->seq.state != TRACE_SEQ__GOOD)
		return -ENOMEM;
	if (sc->o->mode == UTRACE__OUT_OTLP) {
		sc->text.len = 0;
		utrace__ob_put(&sc->text, sc->seq.buffer, sc->seq.len);
		otlp_event(sc, it, e, &r);
		return 0;
	}
	utrace__ob_put(b, sc->seq.buffer, sc->seq.len);
	utrace__ob_putc(b, '\n');
	return 0;
}

/* Write out what is printed; a latency-format line waiting for its
 * context stays. */
static int flush_out(struct utrace__printer *sc)
{
	size_t n = sc->lat.on ? sc->lat.at : sc->ob.len;

	if (!n)
		return 0;
	if (fwrite(sc->ob.p, 1, n, sc->out) != n)
		return -EIO;
	memmove(sc->ob.p, sc->ob.p + n, sc->ob.len - n);
	sc->ob.len -= n;
	sc->lat.at = 0;
	return 0;
}

/*
 * --filter: compile each entry for the events of the file it is for,
 * before anything is printed.  A bad expression is said as `utrace
 * filter` says it, with the kernel's message and a caret; -EINVAL then,
 * or -ENOMEM.
 */
static int compile_filters(struct utrace__printer *sc, struct utrace__tf *tf)
{
	struct utrace__tf_format *f;
	size_t i, j;

	for (i = 0; (f = utrace__tf_format(tf, i)); i++) {
		struct utrace__fmt *e = utrace__fmts_get(&sc->fmts, f);
		struct utrace__print_filter *pf = NULL;
		struct utrace__filter_error fe;
		struct utrace_event_field *fields;
		struct utrace__filter_syms syms = { utrace__proc_sym_by_name, utrace__proc_sym_by_addr,
						    (void *)f->proc };
		uint64_t start, size;
		unsigned int nr = 0;
		const char *name;
		char *expr;
		int r;

		if (!e)
			return -ENOMEM;
		for (j = 0; j < sc->o->nr_filters; j++)
			if (utrace__set_event_matches(&sc->o->filters[j].m, e->system, e->name))
				pf = &sc->o->filters[j];
		if (!pf || !e->selected || e->filter)
			continue;
		pf->matched = true;
		if (!e->state && utrace__fmts_parse(&sc->fmts, e) < 0)
			return -ENOMEM;
		if (e->state < 0 || !e->ev)
			continue;        /* utrace__fmts_parse() said why */
		fields = utrace__fmt_fields(e->ev, &nr);
		expr = strdup(pf->expr);
		if (!fields || !expr) {
			free(fields);
			free(expr);
			return -ENOMEM;
		}
		/* as the kernel's strstrip() */
		for (j = strlen(expr); j && strchr(" \t\r\n", expr[j - 1]); j--)
			expr[j - 1] = 0;
		memset(&fe, 0, sizeof(fe));
		if (strstr(expr, ".function") &&
		    utrace__tf_sym_at(f->proc, 0, &name, &start, &size) < 0) {
			/* the function's address range is the traced
			 * process's: its SYMBOL records, or nothing */
			utrace__say("utrace: '.function' in the filter for '%s:%s' needs the "
				    "symbols of pid %u, and '%s' has none (a recording has them "
				    "when an event prints %%ps or %%pS)\n", e->system, e->name,
				    f->proc->pid, sc->name);
			free(fields);
			free(expr);
			return -EINVAL;
		}
		r = utrace__filter_compile_syms(expr, fields, nr, &syms, &e->filter, &fe);
		free(fields);
		if (r < 0) {
			utrace__say("utrace: bad filter for '%s:%s': %s\n  %s\n  %*s^\n",
				    e->system, e->name, fe.msg[0] ? fe.msg : "Error: (0)", expr,
				    fe.msg[0] ? (fe.pos < 0 ? 0 : fe.pos) : 0, "");
			free(expr);
			return r == -ENOMEM ? r : -EINVAL;
		}
		free(expr);
	}
	return 0;
}

/*
 * The worker: print what can be read of an open trace file, and say what
 * was wrong with it on stderr.  Returns the exit status (0 or 1).
 */
int utrace__print_file(const struct utrace__print_opts *o, struct utrace__tf *tf, FILE *out)
{
	struct utrace__printer sc = { .o = o, .name = utrace__tf_name(tf), .out = out };
	struct utrace__tf_format *f;
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	int r = 0, status = 0;
	size_t i;

	/* A cut file is said once, after its events, with their count; the
	 * status stays 0 for it (what was printed is right, as perf and
	 * trace-cmd do with a truncated file). */
	if (utrace__tf_warning(tf) && !o->quiet && !utrace__tf_cut(tf, NULL))
		utrace__say("utrace: %s\n", utrace__tf_warning(tf));
	if (utrace__tf_error(tf)) {
		utrace__problem(&sc.fmts.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&sc.fmts.pr, utrace__tf_nr_bad(tf) - 1);
	}
	if (!utrace__tf_page_size(tf))
		goto out;                /* not even a header */
	if (printer_init(&sc, tf) < 0) {
		utrace__say("utrace: cannot set up libtraceevent\n");
		status = 1;
		goto out;
	}
	for (i = 0; (f = utrace__tf_format(tf, i)); i++)
		if (!utrace__fmts_get(&sc.fmts, f)) {
			r = -ENOMEM;
			goto out;
		}
	/* A name that matches nothing is a mistake (a typo, the wrong
	 * file): said before printing anything, as the kernel refuses it. */
	if (!o->quiet) {
		size_t bad = 0;

		for (i = 0; i < o->nr_ev; i++)
			if (!o->ev_matched[i]) {
				utrace__say("utrace: no event in '%s' matches '%s'\n",
					    sc.name, o->ev_text[i]);
				bad++;
			}
		if (bad) {
			utrace__say("utrace: the events in the file: utrace script --list "
				    "-i '%s'\n", sc.name);
			status = 1;
			goto out;
		}
	}
	if (o->nr_filters) {
		r = compile_filters(&sc, tf);
		if (r == -EINVAL) {
			r = 0;
			status = 1;
			goto out;
		}
		if (r < 0)
			goto out;
		for (i = 0; i < o->nr_filters; i++)
			if (!o->filters[i].matched && !o->quiet) {
				utrace__say("utrace: no event in '%s' matches the filter "
					    "'%s'\n", sc.name, o->filters[i].text);
				status = 1;
			}
		if (status)
			goto out;
	}
	sc.fg_lookahead = true;
	r = utrace__tf_iter_new(tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		r = utrace__printer_item(&sc, &item);
		if (sc.ob.len >= 1 << 16 && flush_out(&sc) < 0)
			break;
	}
	fg_flush(&sc);
	/* the last line: no event after it (lat_print_timestamp()'s
	 * next_ts = ts) */
	lat_end(&sc, sc.lat.time);
	if (flush_out(&sc) < 0 || fflush(out) != 0 || ferror(out)) {
		/* a reader that went away (| head) is not worth a word */
		if (errno != EPIPE)
			utrace__say("utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
out:
	if (r == -ENOMEM) {
		utrace__say("utrace: '%s': out of memory\n", sc.name);
		status = 1;
	}
	if (utrace__tf_cut(tf, NULL) && utrace__tf_warning(tf) && !o->quiet)
		utrace__say("utrace: %s: printed the %llu events before it\n",
			utrace__tf_warning(tf), (unsigned long long)sc.nr_printed);
	for (size_t k = 0; !o->quiet && utrace__tf_process(tf, k); k++) {
		const struct utrace__tf_process *pr = utrace__tf_process(tf, k);

		if (pr->has_stats && pr->missed)
			utrace__say("utrace: '%s': pid %u (%s) dropped its recorder, which "
				"had stopped reading: %u event formats or objects never reached "
				"the file\n", sc.name, pr->pid, pr->comm, pr->missed);
	}
	utrace__problems_end(&sc.fmts.pr, sc.name, "the records or events concerned were "
			     "left out");
	if (sc.fmts.pr.count)
		status = 1;
	if (o->quiet)
		;
	else if (sc.lost && !sc.lost_unknown)
		utrace__say("utrace: '%s': %llu events lost (see the [LOST] lines)\n",
			    sc.name, (unsigned long long)sc.lost);
	else if (sc.lost)
		utrace__say("utrace: '%s': at least %llu events lost (see the [LOST] "
			    "lines)\n", sc.name, (unsigned long long)sc.lost);
	else if (sc.lost_unknown)
		utrace__say("utrace: '%s': events were lost (see the [LOST] lines)\n",
			    sc.name);
	utrace__tf_iter_free(it);
	printer_fini(&sc);
	return status;
}

struct utrace__printer *utrace__printer_new(const struct utrace__print_opts *o,
					    struct utrace__tf *tf)
{
	struct utrace__printer *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->o = o;
	p->name = utrace__tf_name(tf);
	if (printer_init(p, tf) < 0) {
		utrace__printer_free(p);
		return NULL;
	}
	return p;
}

int utrace__printer_item(struct utrace__printer *p, const struct utrace__tf_item *it)
{
	int r = 0;

	p->has_last = false;
	p->attr_len = 0;
	if (it->kind == UTRACE__TF_LOST) {
		fg_flush(p);
		put_lost(p, it);
	}
	else
		r = put_event(p, it);
	return p->ob.nomem ? -ENOMEM : r;
}

struct utrace__obuf *utrace__printer_buf(struct utrace__printer *p)
{
	return &p->ob;
}

struct utrace__fmts *utrace__printer_fmts(struct utrace__printer *p)
{
	return &p->fmts;
}

void utrace__printer_free(struct utrace__printer *p)
{
	if (!p)
		return;
	printer_fini(p);
	free(p);
}

void utrace__printer_otlp_attrs(struct utrace__printer *p, size_t *at, size_t *len)
{
	*at = p->attr_at;
	*len = p->attr_len;
}

int utrace__printer_field_text(struct utrace__printer *p, const char *name,
			       struct utrace__obuf *b)
{
	struct tep_format_field *f;

	if (!p->has_last)
		return -ENOENT;
	for (f = p->last.e->ev->format.fields; f; f = f->next)
		if (!strcmp(f->name, name)) {
			put_field_value(b, &p->last, f, FS_TEXT);
			return 0;
		}
	return -ENOENT;
}
