/* SPDX-License-Identifier: MIT */
/*
 * The rules of the control: what each request of a client (utrace CLI,
 * FUSE mount) does to this process.  agent.c is the transport: it reads a
 * request, calls one function here and sends what it returns.  Like the
 * kernel's tracefs file operations calling apply_event_filter(), or
 * LTTng-UST's lttng-ust-comm.c (transport) calling lttng-ust-abi.c
 * (commands).
 *
 * Here: switching events on and off, compiling and installing filters
 * and their error_log entries, tracing_on, the buffer's size and
 * clearing, and the attached recorder (`utrace record -p`) with the
 * events to put back when it goes.  All of it runs on the agent thread,
 * one request at a time (agent.c's busy_mutex), so the state below needs
 * no lock of its own; the registry's is taken where events are walked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jump.h"
#include "clock.h"
#include "control.h"
#include "problems.h"
#include "setevent.h"
#include "filter.h"
#include "stacks.h"
#include "instance.h"
#include "internal.h"
#include "marker.h"
#include "record.h"
#include "synth.h"
#include "trigger.h"
#include "writer.h"
#include "tp.h"
#include "uprobes.h"

/* As the kernel's tracing error_log: the last 8 entries; the kernel takes
 * filter writes shorter than a page, so an entry shows that much of one. */
#define ERROR_LOG_MAX 8
#define ERROR_LOG_CMD_MAX 4095

/* As the kernel's buffer_size_kb: at most 64 GiB, at least 2 pages. */
#define BUFFER_SIZE_MAX (1ULL << 36)
#define BUFFER_PAGES_MIN 2

/* An attached `utrace record -p`: its socket, and what to restore. */
static int rec_sock = -1;
static uint32_t rec_old_mode;
static int *rec_saved_ids;             /* events that were on at the attach */
static size_t rec_nr_saved;
static bool rec_stacks;                /* it switched stacks on (record -g -p) */

/*
 * What each buffer has of its own: the top level (ctxs[0]) and each
 * instance (ctxs[1 + i], utrace__inst[i]).  'cur' is the instance the
 * request being served is for (-1: the top level), 'C' its context.
 */
struct ctl_ctx {
	char *name;                  /* the instance's name; NULL: free slot */
	uint32_t tag;                /* told apart from an earlier one in the slot */
	int pool_fd;
	uint64_t buffer_size;
	uint32_t mode;
	char *error_log[ERROR_LOG_MAX];
	unsigned int nr_error_log;
	/* set_event_pid and set_event_notrace_pid (enum utrace_ctl_pid_list),
	 * sorted, without repeats, and the predicate on common_pid they make
	 * (NULL when both are empty) */
	uint32_t *pid_list[2];
	size_t pid_nr[2];
	char *pid_pred;
};

static struct ctl_ctx ctxs[1 + UTRACE_INSTANCES_MAX];
static struct ctl_ctx *C = &ctxs[0];
static int cur = -1;
static uint32_t inst_tags;
static unsigned int inst_gens;

static int inst_buffer_size(uint64_t bytes, uint64_t *size);

/* The pages of a buffer_size_kb write of 'bytes' (whole pages, at least 2). */
static uint64_t size_pages(uint64_t bytes)
{
	uint64_t pages = (bytes + UTRACE_PAGE_DATA - 1) / UTRACE_PAGE_DATA;

	return pages < BUFFER_PAGES_MIN ? BUFFER_PAGES_MIN : pages;
}

/* An event's filter slot in the current instance, made on first use. */
static struct utrace__inst_filter *ifilt_of(const struct utrace__event_state *cst)
{
	struct utrace__event_state *st = (struct utrace__event_state *)cst;

	if (!st->ifilt) {
		struct utrace__inst_filter *a = calloc(UTRACE_INSTANCES_MAX, sizeof(*a));

		if (!a)
			return NULL;
		__atomic_store_n(&st->ifilt, a, __ATOMIC_RELEASE);
	}
	return &st->ifilt[cur];
}

/* The user's expression of an event in the current instance (or NULL). */
static const char *expr_of(const struct utrace__event_state *st)
{
	if (cur < 0)
		return st->filter_expr;
	return st->ifilt ? st->ifilt[cur].expr : NULL;
}

/* What its filter file reads (NULL: "none\n"). */
static const char *text_of(const struct utrace__event_state *st)
{
	if (cur < 0)
		return st->filter_text;
	return st->ifilt ? st->ifilt[cur].text : NULL;
}

/* Put 'v' in '*slot' (NULL: drop 'v'), freeing what was there. */
static void replace_str(char **slot, char *v)
{
	if (!slot) {
		free(v);
		return;
	}
	free(*slot);
	*slot = v;
}

/* Replace what its filter file reads; takes 'text'. */
static void set_text(struct utrace__event_state *st, char *text)
{
	struct utrace__inst_filter *f = cur < 0 ? NULL : ifilt_of(st);

	replace_str(cur < 0 ? &st->filter_text : f ? &f->text : NULL, text);
}

/* --- events --- */

/* Registry lock held. */
static struct utrace_event *find_id(uint32_t id)
{
	return utrace__registry_find_id(id);
}

struct list_arg {
	char *buf;
	size_t len, cap;
	uint32_t nr, nr_on;
	bool fail;
};

/* One entry of the list: its message and "system\0name\0". */
static int list_put(struct list_arg *a, struct utrace_ctl_event_msg m, const char *system,
		    const char *name)
{
	size_t sl = strlen(system) + 1, nl = strlen(name) + 1;
	size_t need = sizeof(m) + sl + nl;

	m.len = (uint16_t)(sl + nl);
	if (!a->buf)
		return 0;
	if (sl + nl > 0xffff)
		return 0;
	if (a->len + need > a->cap) {
		size_t cap = a->cap * 2 + need;
		char *b = realloc(a->buf, cap);

		if (!b) {
			a->fail = true;
			return 1;
		}
		a->buf = b;
		a->cap = cap;
	}
	memcpy(a->buf + a->len, &m, sizeof(m));
	memcpy(a->buf + a->len + sizeof(m), system, sl);
	memcpy(a->buf + a->len + sizeof(m) + sl, name, nl);
	a->len += need;
	return 0;
}

static int list_cb(struct utrace_event *ev, void *arg)
{
	struct list_arg *a = arg;
	const struct utrace__event_state *st = ev->priv;
	bool on = utrace__event_on_inst(ev, cur);
	struct utrace_ctl_event_msg m = { (uint32_t)ev->id,
					  (uint8_t)((on ? UTRACE_CTL_EV_ON : 0) |
						    (utrace__trigger_soft(st, cur) ?
						     UTRACE_CTL_EV_SOFT : 0)),
					  expr_of(st) != NULL, 0 };

	a->nr++;
	a->nr_on += on;
	return list_put(a, m, ev->cls->system, ev->name);
}

static void list_removed_cb(uint32_t id, const char *system, const char *name,
			    const char *text, void *arg)
{
	struct utrace_ctl_event_msg m = { id, 0, 0, 0 };
	struct list_arg *a = arg;

	(void)text;
	if (a->fail)
		return;
	a->nr++;
	if (list_put(a, m, system, name))
		a->fail = true;
}

/**
 * utrace__control_event_list - the list of events (UTRACE_CTL_EVENTS)
 * @removed: the events removed instead (registry.c, "retired"), whose
 *           records may still be in the buffers
 * @buf: set to the entries, struct utrace_ctl_event_msg then
 *       "system\0name\0" each, in registration order; malloc()ed
 * @len: set to the bytes of @buf
 * @nr: set to the number of events
 *
 * Return: 0, or -ENOMEM (then @buf is NULL).
 */
int utrace__control_event_list(bool removed, char **buf, size_t *len, uint32_t *nr)
{
	struct list_arg a = { .buf = malloc(4096), .cap = 4096 };

	*buf = NULL;
	if (!a.buf)
		return -ENOMEM;
	if (removed)
		utrace__registry_foreach_retired(list_removed_cb, &a);
	else
		utrace__registry_foreach(list_cb, &a);
	if (a.fail) {
		free(a.buf);
		return -ENOMEM;
	}
	*buf = a.buf;
	*len = a.len;
	*nr = a.nr;
	return 0;
}

/**
 * utrace__control_format - an event's format file (UTRACE_CTL_FORMAT)
 * @id: the event's id
 * @text: set to the text, malloc()ed, when 0 is returned
 *
 * Return: 0, -ENOENT (no such event) or -ENOMEM.
 */
int utrace__control_format(uint32_t id, char **text)
{
	struct utrace_event *ev;

	utrace__registry_lock();
	ev = find_id(id);
	*text = ev ? utrace_event_format(ev) : NULL;
	utrace__registry_unlock();
	if (!ev) {
		/* a removed event's records may still be in the buffers */
		char *system = NULL;
		int r = utrace__registry_retired_format(id, &system, text);

		free(system);
		return r;
	}
	return *text ? 0 : -ENOMEM;
}

/**
 * utrace__control_set_event - a line written to set_event (UTRACE_CTL_SET_EVENT)
 * @line: the line, not NUL-terminated; white space around it is ignored
 * @len: its bytes
 *
 * A line that enables events makes the pool first, so that they record.
 *
 * Return: the number of events changed (0 for an empty line), or a
 * negative code (-EINVAL: matched nothing or malformed).
 */
int utrace__control_set_event(const char *line, size_t len)
{
	size_t b = 0, e = len;
	char *s;
	int r = 0;

	while (b < e && strchr(" \t\n\r\f\v", line[b]))
		b++;
	while (e > b && strchr(" \t\n\r\f\v", line[e - 1]))
		e--;
	if (b == e)
		return 0;
	s = strndup(line + b, e - b);
	if (!s)
		return -ENOMEM;
	if (s[0] != '!')
		r = utrace__pool_ensure();
	if (r == 0)
		r = utrace__registry_set_event_inst(s, cur);
	free(s);
	return r;
}

struct sys_arg {
	const char *system;          /* NULL or "": every system */
	const char *expr;
	int on;                      /* enable_system: 0/1 */
	int matched;
	int ret;
};

static int enable_sys_cb(struct utrace_event *ev, void *arg)
{
	struct sys_arg *a = arg;
	int r;

	if (a->system && *a->system && strcmp(ev->cls->system, a->system))
		return 0;
	if (((const struct utrace__event_state *)ev->priv)->ignore_enable)
		return 0;   /* ftrace's own events: never on */
	a->matched++;
	r = utrace__event_enable_inst(ev, cur, a->on);
	if (r < 0)
		a->ret = r;
	return 0;
}

/**
 * utrace__control_clear_events - switch every event off (UTRACE_CTL_CLEAR_EVENTS)
 *
 * Return: 0, or the last error of an event that could not be switched off.
 */
int utrace__control_clear_events(void)
{
	struct sys_arg sa = { .system = NULL, .on = 0 };

	utrace__registry_lock();
	utrace__registry_foreach(enable_sys_cb, &sa);
	utrace__registry_unlock();
	return sa.ret;
}

/**
 * utrace__control_enable - switch one event on or off (UTRACE_CTL_ENABLE)
 * @id: the event's id
 * @on: on (the pool is made first) or off
 *
 * Return: 0, -ENOENT (no such event) or a negative code.
 */
int utrace__control_enable(uint32_t id, bool on)
{
	struct utrace_event *ev;
	int r = on ? utrace__pool_ensure() : 0;

	utrace__registry_lock();
	ev = find_id(id);
	if (!ev)
		r = -ENOENT;
	else if (r == 0)
		r = utrace__event_enable_inst(ev, cur, on);
	utrace__registry_unlock();
	return r;
}

/**
 * utrace__control_enable_system - switch a subsystem's events (UTRACE_CTL_ENABLE_SYSTEM)
 * @system: the subsystem, not NUL-terminated; "" for every event
 * @len: its bytes
 * @on: on (the pool is made first) or off
 *
 * Return: 0, -ENOENT (no event in it), or the last error of an event.
 */
int utrace__control_enable_system(const char *system, size_t len, bool on)
{
	char *s = strndup(system, len);
	int r = on && s ? utrace__pool_ensure() : s ? 0 : -ENOMEM;

	if (r == 0) {
		struct sys_arg sa = { .system = s, .on = on };

		utrace__registry_lock();
		utrace__registry_foreach(enable_sys_cb, &sa);
		utrace__registry_unlock();
		r = sa.ret ? sa.ret : sa.matched ? 0 : -ENOENT;
	}
	free(s);
	return r;
}

/* --- filters and error_log --- */

/* Add an entry to error_log; takes 'text' (malloc()ed, may be NULL). */
static void log_error(char *text)
{
	uint64_t t = utrace__mono_ns();
	char *e;
	int n;

	if (!text)
		return;
	n = asprintf(&e, "[%5llu.%06llu] %s", (unsigned long long)(t / 1000000000),
		     (unsigned long long)(t % 1000000000 / 1000), text);
	free(text);
	if (n < 0)
		return;
	if (C->nr_error_log == ERROR_LOG_MAX) {
		free(C->error_log[0]);
		memmove(C->error_log, C->error_log + 1, (ERROR_LOG_MAX - 1) * sizeof(*C->error_log));
		C->nr_error_log--;
	}
	C->error_log[C->nr_error_log++] = e;
}

/* error_log's entry for a filter that was refused, the command cut short
 * as the kernel's would be. */
static void log_filter_error(const char *expr, const struct utrace__filter_error *fe)
{
	struct utrace__filter_error e = *fe;
	char *cut = NULL;

	if (strlen(expr) > ERROR_LOG_CMD_MAX) {
		cut = strndup(expr, ERROR_LOG_CMD_MAX);
		if (!cut)
			return;
		if (e.pos > ERROR_LOG_CMD_MAX)
			e.pos = ERROR_LOG_CMD_MAX;
	}
	log_error(utrace__filter_log_text(cut ? cut : expr, &e));
	free(cut);
}

/*
 * Install (or remove, f NULL) the program an event runs.  The writer reads
 * ev->filter under the RCU read lock; the old program is freed after a
 * grace period.  Registry lock held.
 */
static void set_program(struct utrace_event *ev, struct utrace__filter *f)
{
	struct utrace__event_state *st = ev->priv;
	struct utrace__inst_filter *slot = cur < 0 ? NULL : ifilt_of(st);
	struct utrace__filter *old;

	if (cur >= 0) {
		if (!slot) {
			utrace__filter_free(f);
			return;
		}
		old = slot->filter;
		__atomic_store_n(&slot->filter, f, __ATOMIC_RELEASE);
		if (old && utrace__filter_sync())
			utrace__filter_free(old);
		return;
	}
	old = st->filter;
	st->filter = f;
	if (!old && f)
		utrace__filter_count(1);
	__atomic_store_n(&ev->filter, (void *)f, __ATOMIC_RELEASE);
	if (old && !f)
		utrace__filter_count(-1);
	/* Freed once no thread can be running it; kept (a small leak) if a
	 * thread has stayed inside one event too long to wait for. */
	if (old && utrace__filter_sync())
		utrace__filter_free(old);
}

/* Install an event's program, the user's expression that compiled (expr,
 * NULL: none) and the filter file's text; takes expr and text. */
static void set_filter(struct utrace_event *ev, struct utrace__filter *f, char *expr,
		       char *text)
{
	struct utrace__event_state *st = ev->priv;
	struct utrace__inst_filter *slot = cur < 0 ? NULL : ifilt_of(st);

	replace_str(cur < 0 ? &st->filter_expr : slot ? &slot->expr : NULL, expr);
	set_text(st, text);
	set_program(ev, f);
}

/* --- triggers (trigger.c) --- */

/**
 * utrace__control_trigger - a write to an event's trigger file (UTRACE_CTL_TRIGGER)
 * @id: the event's id
 * @text: what was written, not NUL-terminated
 * @len: its bytes
 * @truncate: the file was opened with O_TRUNC: the hist triggers go first
 * @log: set to the error_log entry of a refused write (malloc()ed), or NULL
 *
 * The triggers of the buffer the request is for.  ftrace's print has a
 * trigger file (the marker runs its triggers); the other ftrace events
 * have none.
 *
 * Return: 0, -ENOENT (no such event), or the kernel's -errno.
 */
int utrace__control_trigger(uint32_t id, const char *text, size_t len, bool truncate,
			    char **log)
{
	struct utrace_event *ev;
	int r = 0;

	*log = NULL;
	utrace__registry_lock();
	ev = find_id(id);
	if (!ev || (((struct utrace__event_state *)ev->priv)->ignore_enable &&
		    !utrace__marker_is_print(ev))) {
		r = -ENOENT;
	} else {
		if (truncate)
			utrace__trigger_truncate(ev, cur);
		if (len)
			r = utrace__trigger_write(ev, cur, text, len, log);
	}
	utrace__registry_unlock();
	if (*log) {
		char *copy = strdup(*log);

		log_error(copy);
	}
	return r;
}

/**
 * utrace__control_trigger_text - an event's trigger or hist file (UTRACE_CTL_TRIGGER_TEXT,
 * UTRACE_CTL_HIST)
 * @id: the event's id
 * @hist: the hist file, else the trigger file
 * @text: set to the text, malloc()ed, when 0 is returned
 *
 * Return: 0, -ENOENT (no such event) or -ENOMEM.
 */
int utrace__control_trigger_text(uint32_t id, bool hist, char **text)
{
	struct utrace_event *ev;

	*text = NULL;
	utrace__registry_lock();
	ev = find_id(id);
	if (ev && (!((struct utrace__event_state *)ev->priv)->ignore_enable ||
		   utrace__marker_is_print(ev)))
		*text = hist ? utrace__trigger_hist_text(ev, cur) : utrace__trigger_text(ev, cur);
	else
		ev = NULL;
	utrace__registry_unlock();
	return *text ? 0 : ev ? -ENOMEM : -ENOENT;
}

/**
 * utrace__control_synth - synthetic_events (UTRACE_CTL_SYNTH)
 * @what: enum utrace_ctl_synth
 * @data, @len: WRITE's lines
 * @text: READ's text (else untouched)
 *
 * A refused line's error_log entry goes to the top-level error_log.
 *
 * Return: 0, or the negative errno of the kernel's write() or open().
 */
int utrace__control_synth(int32_t what, const char *data, size_t len, char **text)
{
	char *log = NULL;
	int r;

	switch (what) {
	case UTRACE_CTL_SYNTH_READ:
		*text = utrace__synth_text();
		return *text ? 0 : -ENOMEM;
	case UTRACE_CTL_SYNTH_CLEAR:
		return utrace__synth_clear();
	case UTRACE_CTL_SYNTH_WRITE:
	case UTRACE_CTL_SYNTH_DYN:
		r = utrace__synth_write(data, len, what == UTRACE_CTL_SYNTH_DYN, &log);
		if (log) {
			struct ctl_ctx *saved = C;

			C = &ctxs[0];
			log_error(log);
			C = saved;
		}
		return r;
	default:
		return -EINVAL;
	}
}

/* --- set_event_pid, set_event_notrace_pid --- */

/*
 * The program an event runs: its own expression (st->filter_expr) AND
 * 'pred', NULL when it has neither.  The user's expression compiled on
 * its own before, so its errors (and their positions) are its own; this
 * only fails without memory.  Returns 0 or -errno.
 */
static int compile_program(const struct utrace__event_state *st, const char *expr,
			   const char *pred, struct utrace__filter **out)
{
	struct utrace__filter_error fe;
	char *both = NULL;
	const char *s = expr ? expr : pred;
	int r;

	*out = NULL;
	if (st->ignore_enable) {
		/* ftrace's print and raw_data: trace_marker writes, which the
		 * kernel records whatever the pid lists say */
		pred = NULL;
		s = expr;
	}
	if (!s)
		return 0;
	if (expr && pred) {
		/* The kernel takes a dangling "&&", "||" or "!" at the end
		 * ("common_pid == 1 &&"), and so does the compiler, but not
		 * inside parentheses: joined without it. */
		size_t n = strlen(expr);

		for (;;) {
			while (n && (expr[n - 1] == ' ' || expr[n - 1] == '\t' ||
				     expr[n - 1] == '\n'))
				n--;
			if (n >= 2 && (!strncmp(expr + n - 2, "&&", 2) ||
				       !strncmp(expr + n - 2, "||", 2)))
				n -= 2;
			else if (n && expr[n - 1] == '!')
				n--;
			else
				break;
		}
		if (asprintf(&both, "(%.*s) && (%s)", (int)n, expr, pred) < 0)
			return -ENOMEM;
		s = both;
	}
	r = utrace__filter_compile(s, st->fields, st->nr_fields, out, &fe);
	free(both);
	return r < 0 ? r : 0;
}

/* The expression as the kernel's strstrip() leaves it (trailing white
 * space); malloc()ed. */
static char *strip_expr(const char *in, size_t len)
{
	char *s = strndup(in, len);
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
		     s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

/* One event's filter; returns 0 or the kernel's -errno.  Registry lock held. */
static int filter_event(struct utrace_event *ev, const char *expr,
			struct utrace__filter_error *fe)
{
	const struct utrace__event_state *st = ev->priv;
	struct utrace__filter *f = NULL;
	char *text, *keep;
	int r;

	memset(fe, 0, sizeof(*fe));
	if (utrace__filter_is_clear(expr)) {
		r = compile_program(st, NULL, C->pid_pred, &f);
		set_filter(ev, f, NULL, NULL);
		return r;
	}
	r = utrace__filter_compile(expr, st->fields, st->nr_fields, &f, fe);
	if (r < 0) {
		/* As the kernel: a failed write drops the old filter and the
		 * file reads back the error. */
		struct utrace__filter *p = NULL;

		compile_program(st, NULL, C->pid_pred, &p);
		set_filter(ev, p, NULL, utrace__filter_error_text(expr, fe));
		log_filter_error(expr, fe);
		return r;
	}
	if (C->pid_pred) {
		/* the user's expression AND the threads of set_event_pid */
		utrace__filter_free(f);
		r = compile_program(st, expr, C->pid_pred, &f);
		if (r < 0)
			return r;
	}
	text = malloc(strlen(expr) + 2);
	keep = strdup(expr);
	if (!text || !keep) {
		free(text);
		free(keep);
		utrace__filter_free(f);
		return -ENOMEM;
	}
	sprintf(text, "%s\n", expr);
	set_filter(ev, f, keep, text);
	return 0;
}

/*
 * UTRACE_FILTER: filters from the start, as `utrace record --filter` passes
 * them.  Entries "EVENT:EXPRESSION" (EVENT in set_event syntax: sys:event,
 * sys:*, event), ';' or a newline apart outside quotes.  Each event gets
 * the filter of the last entry that matches it when it registers, before
 * UTRACE_EVENTS switches it on, so no event it rejects is ever written.
 * A bad entry or expression gives one line on stderr (and an error_log
 * entry, as a refused write of the filter file) and the event stays
 * unfiltered, as in the kernel; the program runs on.
 */
struct filter_spec {
	char *event;                       /* the EVENT part, as given */
	char *expr;
	struct utrace__set_event_match m;
};
static struct filter_spec *fspec;
static size_t nr_fspec;

static struct utrace__problems fspec_problems = { .max = 5, .say = NULL };

static void fspec_say(const char *msg)
{
	utrace__warn("%s", msg);
}

/* Split "EVENT:EXPRESSION" (length len) and add it; false when malformed. */
static bool fspec_add(const char *e, size_t len)
{
	size_t ev, evlen, ex, i;
	struct filter_spec *n, *f;

	for (i = 0; i < len && isspace((unsigned char)e[i]); i++)
		;
	if (i == len)
		return true;
	if (utrace__split_event_filter(e, len, &ev, &evlen, &ex) < 0)
		return false;
	n = realloc(fspec, (nr_fspec + 1) * sizeof(*n));
	if (!n)
		return true;
	fspec = n;
	f = &fspec[nr_fspec];
	f->event = strndup(e + ev, evlen);
	f->expr = strip_expr(e + ex, len - ex);
	if (!f->event || !f->expr ||
	    utrace__parse_set_event(f->event, evlen, &f->m) < 0) {
		bool oom = !f->event || !f->expr;

		free(f->event);
		free(f->expr);
		return oom;
	}
	nr_fspec++;
	return true;
}

/**
 * utrace__control_filter_spec_set - take the UTRACE_FILTER value
 * @value: the variable's text
 *
 * Called once at start, before any event registers.  Malformed entries
 * are reported here and left out.
 */
void utrace__control_filter_spec_set(const char *value)
{
	const char *p = value, *start = value;
	char quote = 0;

	fspec_problems.say = fspec_say;
	for (;; p++) {
		if (quote && *p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p && quote) {
			if (*p == quote)
				quote = 0;
			continue;
		}
		if (*p == '"' || *p == '\'') {
			quote = *p;
			continue;
		}
		if (*p && *p != ';' && *p != '\n')
			continue;
		if (!fspec_add(start, (size_t)(p - start))) {
			while (isspace((unsigned char)*start))
				start++;
			utrace__problem(&fspec_problems, "UTRACE_FILTER: malformed entry "
					"'%.*s': give EVENT:EXPRESSION",
					p - start > 200 ? 200 : (int)(p - start), start);
		}
		if (!*p)
			break;
		start = p + 1;
	}
	if (utrace__problems_more(&fspec_problems))
		utrace__warn("UTRACE_FILTER: %llu more malformed entries",
			     (unsigned long long)utrace__problems_more(&fspec_problems));
}

/**
 * utrace__control_filter_spec_apply - give a new event its UTRACE_FILTER filter
 * @ev: the event, just registered; registry lock held
 */
void utrace__control_filter_spec_apply(struct utrace_event *ev)
{
	struct utrace__filter_error fe;
	const struct filter_spec *f = NULL;
	size_t i;

	for (i = 0; i < nr_fspec; i++)
		if (utrace__set_event_matches(&fspec[i].m, ev->cls->system, ev->name))
			f = &fspec[i];
	if (!f) {
		/* no filter of its own: set_event_pid's threads, if any */
		struct utrace__filter *p = NULL;

		if (ctxs[0].pid_pred && compile_program(ev->priv, NULL, ctxs[0].pid_pred, &p) == 0)
			set_program(ev, p);
		return;
	}
	if (filter_event(ev, f->expr, &fe) == 0)
		return;
	if (fe.msg[0]) {
		size_t pos = fe.pos < 0 ? 0 : (size_t)fe.pos, len = strlen(f->expr);

		utrace__warn("UTRACE_FILTER: bad filter for '%s:%s': %s at position %zu "
			     "of '%s'; the event is not filtered", ev->cls->system,
			     ev->name, fe.msg, pos > len ? len : pos, f->expr);
	} else {
		utrace__warn("UTRACE_FILTER: bad filter for '%s:%s': '%s' %s; the event is "
			     "not filtered", ev->cls->system, ev->name, f->expr,
			     fe.err == -ENOMEM ? "needs more memory than there is" :
			     "cannot be compiled (Error: (0))");
	}
}

/**
 * utrace__control_filter - write an event's filter file (UTRACE_CTL_FILTER)
 * @id: the event's id
 * @expr: the expression, not NUL-terminated; "0" clears the filter
 * @len: its bytes
 * @fe: set to the kernel's error of an expression that did not compile;
 *      all zero otherwise
 *
 * As the kernel, a refused expression drops the old filter, the file
 * reads back the error and error_log has an entry.
 *
 * Return: 0, -ENOENT (no such event), or the kernel's -errno of the write.
 */
int utrace__control_filter(uint32_t id, const char *expr, size_t len,
			   struct utrace__filter_error *fe)
{
	struct utrace_event *ev;
	char *s = strip_expr(expr, len);
	int r;

	memset(fe, 0, sizeof(*fe));
	if (!s)
		return -ENOMEM;
	utrace__registry_lock();
	ev = find_id(id);
	r = ev ? filter_event(ev, s, fe) : -ENOENT;
	utrace__registry_unlock();
	free(s);
	return r;
}

static int filter_sys_cb(struct utrace_event *ev, void *arg)
{
	struct sys_arg *a = arg;
	struct utrace__filter_error fe;

	if (strcmp(ev->cls->system, a->system))
		return 0;
	a->matched++;
	if (filter_event(ev, a->expr, &fe) < 0 && !utrace__filter_is_clear(a->expr)) {
		/* The kernel's subsystem rule: an event that cannot take the
		 * filter stays unfiltered and says so, with the caret at 0. */
		struct utrace__event_state *st = ev->priv;
		struct utrace__filter_error se = { -EINVAL, 0, "" };

		snprintf(se.msg, sizeof(se.msg), "%s", UTRACE__FILTER_MSG_BAD_SUBSYS);
		set_text(st, utrace__filter_error_text(a->expr, &se));
		/* (filter_event left it without an expression of its own) */
		/* filter_event logged the event's own error: replace it */
		if (C->nr_error_log) {
			free(C->error_log[C->nr_error_log - 1]);
			C->nr_error_log--;
		}
		log_filter_error(a->expr, &se);
	}
	return 0;
}

/**
 * utrace__control_filter_system - write a subsystem's filter file (UTRACE_CTL_FILTER_SYSTEM)
 * @payload: "system\0expr", the expression not NUL-terminated
 * @len: bytes of @payload
 *
 * The kernel's subsystem rule: each event that cannot take the expression
 * stays unfiltered and reads back (and logs) UTRACE__FILTER_MSG_BAD_SUBSYS.
 *
 * Return: 0, -ENOENT (no event in the subsystem), -EINVAL (no NUL after
 * the system) or -ENOMEM.
 */
int utrace__control_filter_system(const char *payload, size_t len)
{
	size_t sl = strnlen(payload, len);
	struct sys_arg sa;
	char *s;

	if (sl == len)
		return -EINVAL;
	s = strip_expr(payload + sl + 1, len - sl - 1);
	if (!s)
		return -ENOMEM;
	sa = (struct sys_arg){ .system = payload, .expr = s };
	utrace__registry_lock();
	utrace__registry_foreach(filter_sys_cb, &sa);
	utrace__registry_unlock();
	free(s);
	return sa.matched ? 0 : -ENOENT;
}

/**
 * utrace__control_filter_text - read an event's filter file (UTRACE_CTL_FILTER_TEXT)
 * @id: the event's id
 * @text: set to the text ("none\n" without a filter), malloc()ed
 *
 * Return: 0, -ENOENT (no such event) or -ENOMEM.
 */
int utrace__control_filter_text(uint32_t id, char **text)
{
	struct utrace_event *ev;

	utrace__registry_lock();
	ev = find_id(id);
	*text = NULL;
	if (ev) {
		const struct utrace__event_state *st = ev->priv;

		*text = strdup(text_of(st) ? text_of(st) : "none\n");
	}
	utrace__registry_unlock();
	return *text ? 0 : ev ? -ENOMEM : -ENOENT;
}

static int count_sys_cb(struct utrace_event *ev, void *arg)
{
	struct sys_arg *a = arg;

	if (!strcmp(ev->cls->system, a->system))
		a->matched++;
	return 0;
}

/**
 * utrace__control_filter_system_text - read a subsystem's filter file
 * @system: the subsystem, not NUL-terminated
 * @len: its bytes
 * @text: set to the kernel's text of that file, malloc()ed
 *
 * UTRACE_CTL_FILTER_SYSTEM_TEXT.
 *
 * Return: 0, -ENOENT (no event in the subsystem) or -ENOMEM.
 */
int utrace__control_filter_system_text(const char *system, size_t len, char **text)
{
	char *s = strndup(system, len);
	struct sys_arg sa = { .system = s ? s : "" };

	utrace__registry_lock();
	if (s)
		utrace__registry_foreach(count_sys_cb, &sa);
	utrace__registry_unlock();
	free(s);
	*text = NULL;
	if (!sa.matched)
		return -ENOENT;
	*text = strdup("### global filter ###\n"
		       "# Use this to set filters for multiple events.\n"
		       "# Only events with the given fields will be affected.\n"
		       "# If no events are modified, an error message will be displayed here\n");
	return *text ? 0 : -ENOMEM;
}

/**
 * utrace__control_uprobe - uprobe_events and uprobe_profile (UTRACE_CTL_UPROBE)
 * @what: enum utrace_ctl_uprobe
 * @data, @len: WRITE's lines
 * @text: READ's and PROFILE's text
 *
 * A write applies its lines in order and stops at the first that fails;
 * the kernel's errors go to the top-level error_log, whatever instance
 * the request came for (as the kernel's trace_uprobe errors do).
 *
 * Return: 0, or the negative errno of the kernel's write().
 */
int utrace__control_uprobe(int32_t what, const char *data, size_t len, char **text)
{
	struct utrace__probe_error err;
	char *buf, *line, *next;
	int r = 0;

	switch (what) {
	case UTRACE_CTL_UPROBE_READ:
	case UTRACE_CTL_UPROBE_PROFILE:
	case UTRACE_CTL_UPROBE_VERBOSE:
		*text = utrace__uprobes_text(what == UTRACE_CTL_UPROBE_PROFILE ?
					     UTRACE__UPROBES_PROFILE :
					     what == UTRACE_CTL_UPROBE_VERBOSE ?
					     UTRACE__UPROBES_VERBOSE : UTRACE__UPROBES_EVENTS);
		return *text ? 0 : -ENOMEM;
	case UTRACE_CTL_UPROBE_CLEAR:
		return utrace__uprobes_clear();
	case UTRACE_CTL_UPROBE_WRITE:
		break;
	default:
		return -EINVAL;
	}
	buf = strndup(data, len);
	if (!buf)
		return -ENOMEM;
	for (line = buf; line && !r; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		r = utrace__uprobes_write(line, &err);
		if (r && err.logged) {
			struct ctl_ctx *saved = C;

			C = &ctxs[0];
			log_error(utrace__probe_log_text(&err));
			C = saved;
		}
	}
	free(buf);
	return r;
}

/**
 * utrace__control_error_log - read error_log (UTRACE_CTL_ERROR_LOG)
 * @text: set to its entries, oldest first ("" when empty), malloc()ed
 *
 * Return: 0 or -ENOMEM.
 */
int utrace__control_error_log(char **text)
{
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < C->nr_error_log; i++)
		len += strlen(C->error_log[i]);
	*text = malloc(len + 1);
	if (!*text)
		return -ENOMEM;
	(*text)[0] = 0;
	for (i = 0; i < C->nr_error_log; i++)
		strcat(*text, C->error_log[i]);
	return 0;
}

/**
 * utrace__control_error_log_clear - empty error_log (UTRACE_CTL_ERROR_LOG_CLEAR)
 */
void utrace__control_error_log_clear(void)
{
	while (C->nr_error_log)
		free(C->error_log[--C->nr_error_log]);
}

/* --- the buffer --- */

static int info_cb(struct utrace_event *ev, void *arg)
{
	struct utrace_ctl_info_msg *m = arg;
	const struct utrace__event_state *st = ev->priv;

	if (st->ignore_enable)
		return 0;    /* ftrace's own, not in available_events */
	m->nr_events++;
	m->nr_enabled += utrace__event_on_inst(ev, cur);
	return 0;
}

/**
 * utrace__control_info - what `utrace ps` shows of this process (UTRACE_CTL_INFO)
 * @m: filled in: ids, names, events, and the pool's size and counts
 *
 * The counts come from our own record of the pool, not from its header,
 * shared memory that anyone with the descriptor can write.
 *
 * Return: 0.
 */
int utrace__control_info(struct utrace_ctl_info_msg *m)
{
	struct utrace_pool *p = cur < 0 ? __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE) :
		utrace__inst[cur].pool;
	int cfd;
	ssize_t n;

	memset(m, 0, sizeof(*m));
	m->pid = (uint32_t)getpid();
	m->ppid = (uint32_t)getppid();
	m->uid = (uint32_t)getuid();
	cfd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		n = read(cfd, m->comm, sizeof(m->comm) - 1);
		close(cfd);
		while (n > 0 && (m->comm[n - 1] == '\n' || !m->comm[n - 1]))
			m->comm[--n] = 0;
	}
	n = readlink("/proc/self/exe", m->exe, sizeof(m->exe) - 1);
	if (n < 0)
		m->exe[0] = 0;
	utrace__registry_foreach(info_cb, m);
	utrace__jump_stats(&m->jump_sites, &m->branch_sites);
	m->tracing_on = utrace__control_tracing_on(-1);
	m->recorder = cur < 0 && rec_sock >= 0;
	if (p) {
		m->has_pool = 1;
		m->mode = p->mode;
		/* a pool that can grow: the pages it has so far */
		m->nr_pages = utrace__pool_dealt(p);
		m->buffer_size = (uint64_t)m->nr_pages * UTRACE_PAGE_SIZE;
		utrace__pool_usage(p, &m->pages_used, &m->written, &m->lost);
	} else {
		m->buffer_size = utrace__pool_next_size() / UTRACE_PAGE_SIZE * UTRACE_PAGE_SIZE;
		m->mode = UTRACE_MODE_OVERWRITE;
	}
	return 0;
}

/**
 * utrace__control_tracing_on - read or write tracing_on (UTRACE_CTL_TRACING_ON)
 * @on: 1 or 0 to write; anything else only reads
 *
 * Off, the writer drops events without counting them.
 *
 * Return: 1 when tracing is on, 0 when off.
 */
int utrace__control_tracing_on(int32_t on)
{
	if (cur >= 0) {
		if (on == 0 || on == 1)
			__atomic_store_n(&utrace__inst[cur].tracing_off, !on, __ATOMIC_RELEASE);
		return !__atomic_load_n(&utrace__inst[cur].tracing_off, __ATOMIC_RELAXED);
	}
	if (on == 1)
		__atomic_fetch_and(&utrace__tracing_off, ~UTRACE_TRACING_OFF, __ATOMIC_RELEASE);
	else if (on == 0)
		__atomic_fetch_or(&utrace__tracing_off, UTRACE_TRACING_OFF, __ATOMIC_RELEASE);
	utrace__fast_update();
	return !(__atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED) & UTRACE_TRACING_OFF);
}

/**
 * utrace__control_trace_marker - a write to trace_marker or trace_marker_raw (UTRACE_CTL_MARKER)
 * @data: what was written (trace_marker_raw: a 4-byte id, then bytes)
 * @len:  its bytes
 * @raw:  trace_marker_raw
 *
 * As the kernel's marker, it records whether or not an event is on (the
 * pool is made first) as long as tracing_on is 1.  The agent thread
 * writes the record, on behalf of the task that wrote the file.
 *
 * Return: the bytes taken (trace_marker cuts a long write), -EINVAL or
 * -EBADF (tracing_on is 0, or no room): utrace__marker_record().
 */
int utrace__control_trace_marker(const char *data, size_t len, bool raw)
{
	if (cur >= 0) {
		int r;

		if (__atomic_load_n(&utrace__inst[cur].tracing_off, __ATOMIC_RELAXED))
			return raw && len < 4 ? -EINVAL : -EBADF;
		utrace__marker_inst = cur;
		r = utrace__marker_record(raw, data, len);
		utrace__marker_inst = -1;
		return r;
	}
	if (!(__atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED) & UTRACE_TRACING_OFF)) {
		int r = utrace__pool_ensure();

		if (r < 0)
			return r;
	}
	return utrace__marker_record(raw, data, len);
}

/**
 * utrace__control_buffer_size - read or write buffer_size_kb (UTRACE_CTL_BUFFER_SIZE)
 * @bytes: the bytes of event data asked for, or 0 to only read
 * @size: set to the bytes of event data the buffer holds, after the write
 *
 * As the kernel's: whole pages of UTRACE_PAGE_DATA bytes, at least 2
 * pages.  A buffer that exists is replaced (its events dropped).
 *
 * Return: 0, -EINVAL (more than 64 GiB), -EBUSY (a recorder is attached)
 * or -errno.
 */
int utrace__control_buffer_size(uint64_t bytes, uint64_t *size)
{
	struct utrace_pool *p;
	uint64_t pages;
	int r;

	if (cur >= 0)
		return inst_buffer_size(bytes, size);
	if (bytes) {
		if (bytes > BUFFER_SIZE_MAX)
			return -EINVAL;
		pages = size_pages(bytes);
		r = rec_sock >= 0 ? -EBUSY : utrace__pool_resize(pages * UTRACE_PAGE_SIZE);
		if (r < 0)
			return r;
	}
	p = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);
	pages = p ? utrace__pool_dealt(p) : utrace__pool_next_size() / UTRACE_PAGE_SIZE;
	*size = (pages < BUFFER_PAGES_MIN ? BUFFER_PAGES_MIN : pages) * UTRACE_PAGE_DATA;
	return 0;
}

/**
 * utrace__control_clear_buffer - forget the events recorded so far (UTRACE_CTL_CLEAR_BUFFER)
 *
 * The agent cannot touch a page another thread is writing: it stores a
 * time before which readers skip events, and the overwritten count then.
 */
void utrace__control_clear_buffer(void)
{
	struct utrace_pool *p = cur >= 0 ? utrace__inst[cur].pool :
		__atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);

	if (p)
		utrace__pool_mark_clear(p, utrace__clock_now());
}

/**
 * utrace__control_pool_fd - the pool's memfd for a reader (UTRACE_CTL_POOL)
 *
 * The pool is made if there was none.
 *
 * Return: the descriptor (ours: the caller sends a copy), or -errno.
 */
int utrace__control_pool_fd(void)
{
	int r = cur >= 0 ? 0 : utrace__pool_ensure();

	if (cur >= 0)
		return C->pool_fd;
	return r < 0 ? r : utrace__pool_fd;
}

int utrace__control_pool_fd_of(int inst)
{
	return inst < 0 ? utrace__pool_fd : ctxs[1 + inst].name ? ctxs[1 + inst].pool_fd : -1;
}

int utrace__control_instance(void)
{
	return cur;
}

/**
 * utrace__control_pool_mode - read or write the overwrite option (UTRACE_CTL_POOL_MODE)
 * @mode: UTRACE_MODE_OVERWRITE or UTRACE_MODE_DISCARD to write; anything
 *        else only reads
 *
 * The kernel's options/overwrite: the buffer's mode changes at once, and
 * a buffer made later (the first, or a resized one) has it too.
 *
 * Return: the mode now, or -EBUSY (a recorder reads the buffer and chose
 * its mode).
 */
int utrace__control_pool_mode(int32_t mode)
{
	if (cur >= 0) {
		struct utrace_pool *p = utrace__inst[cur].pool;

		if (mode == UTRACE_MODE_OVERWRITE || mode == UTRACE_MODE_DISCARD) {
			C->mode = (uint32_t)mode;
			__atomic_store_n(&p->mode, (uint32_t)mode, __ATOMIC_RELAXED);
		}
		return (int)C->mode;
	}
	if (mode == UTRACE_MODE_OVERWRITE || mode == UTRACE_MODE_DISCARD)
		return utrace__pool_set_mode((uint32_t)mode);
	return (int)utrace__pool_get_mode();
}

/**
 * utrace__control_trace_clock - read or write trace_clock (UTRACE_CTL_TRACE_CLOCK)
 * @id: enum utrace_trace_clock to write; -1 reads; -2 asks which clocks
 *      the process can give
 *
 * Return: the clock now, the bits of the clocks it has, or -EINVAL.
 */
int utrace__control_trace_clock(int32_t id)
{
	if (cur >= 0) {
		/* an instance's clock is its own pool's (made at mkdir) */
		struct utrace_pool *p = utrace__inst[cur].pool;

		if (id == -1)
			return (int)__atomic_load_n(&p->trace_clock, __ATOMIC_RELAXED);
		if (id == -2)
			return (int)utrace__pool_trace_clocks();
		if (id < 0 || id >= UTRACE_TCLOCK_NR || !((utrace__pool_trace_clocks() >> id) & 1))
			return -EINVAL;
		__atomic_store_n(&p->trace_clock, (uint32_t)id, __ATOMIC_RELEASE);
		utrace__pool_mark_clear(p, utrace__clock_now());
		return id;
	}
	if (id == -1)
		return (int)utrace__pool_get_trace_clock();
	if (id == -2)
		return (int)utrace__pool_trace_clocks();
	if (id < 0)
		return -EINVAL;
	return utrace__pool_set_trace_clock((uint32_t)id);
}

/* --- the attached recorder --- */

static void forget_saved(void)
{
	free(rec_saved_ids);
	rec_saved_ids = NULL;
	rec_nr_saved = 0;
}

static int save_cb(struct utrace_event *ev, void *arg)
{
	(void)arg;
	if (__atomic_load_n(&((struct utrace__event_state *)ev->priv)->enabled, __ATOMIC_RELAXED)) {
		int *n = realloc(rec_saved_ids, (rec_nr_saved + 1) * sizeof(*n));

		if (!n)
			return 1;
		rec_saved_ids = n;
		rec_saved_ids[rec_nr_saved++] = ev->id;
	}
	return 0;
}

static int restore_cb(struct utrace_event *ev, void *arg)
{
	size_t i;
	int on = 0;

	(void)arg;
	for (i = 0; i < rec_nr_saved; i++)
		if (rec_saved_ids[i] == ev->id)
			on = 1;
	utrace_event_enable(ev, on);
	return 0;
}

/**
 * utrace__control_attach - attach `utrace record -p` (UTRACE_CTL_ATTACH)
 * @path: the recorder's socket, not NUL-terminated
 * @len: its bytes
 * @mode: the pool mode while it records
 *
 * Keeps which events are on and the pool's mode, to put them back when
 * the recorder goes (utrace__control_recorder_gone()).
 *
 * Return: 0, -EBUSY (a recorder is attached) or -errno.
 */
int utrace__control_attach(const char *path, size_t len, uint32_t mode)
{
	char *s;
	int r;

	if (cur >= 0)
		return -EINVAL;         /* a recording is of the top level only */
	if (rec_sock >= 0)
		return -EBUSY;
	s = strndup(path, len);
	if (!s)
		return -ENOMEM;
	utrace__pool_ensure();
	rec_old_mode = utrace__pool ? utrace__pool->mode : UTRACE_MODE_OVERWRITE;
	utrace__registry_lock();
	utrace__registry_foreach(save_cb, NULL);
	utrace__registry_unlock();
	/* the stacks it will see named by id: each written whole again */
	utrace__stacks_forget();
	r = utrace__record_attach(s, mode);
	free(s);
	if (r < 0) {
		forget_saved();
		return r;
	}
	rec_sock = r;
	return 0;
}

/**
 * utrace__control_stacks - the attached recorder's call stacks (UTRACE_CTL_STACKS)
 * @spec: UTRACE_STACKS's MODE[,SIZE[,FRAMES]], not NUL-terminated
 * @len: its bytes
 *
 * `utrace record -g -p PID`: every event carries its stack until the
 * recorder goes (utrace__control_recorder_gone() switches them off).
 *
 * Return: 0, -EINVAL (no recorder attached, malformed, or dwarf without
 * libunwind), -EBUSY (on already, by UTRACE_STACKS, with another spec).
 */
int utrace__control_stacks(const char *spec, size_t len)
{
	char *s;
	int r;

	if (cur >= 0 || rec_sock < 0)
		return -EINVAL;
	s = strndup(spec, len);
	if (!s)
		return -ENOMEM;
	r = utrace__stacks_set(s);
	free(s);
	if (r == 1)
		rec_stacks = true;
	return r < 0 ? r : 0;
}

/**
 * utrace__control_recorder_fd - the attached recorder's socket
 *
 * The agent polls it to learn when the recorder goes.
 *
 * Return: the socket, or -1 when no recorder is attached.
 */
int utrace__control_recorder_fd(void)
{
	return rec_sock;
}

/**
 * utrace__control_recorder_gone - the attached recorder went away
 *
 * Even killed: events and the pool's mode go back to what they were at
 * the attach.
 */
void utrace__control_recorder_gone(void)
{
	if (rec_stacks)
		utrace__stacks_unset();
	rec_stacks = false;
	utrace__record_detach(rec_sock, rec_old_mode);
	rec_sock = -1;
	utrace__registry_lock();
	utrace__registry_foreach(restore_cb, NULL);
	utrace__registry_unlock();
	forget_saved();
}

/**
 * utrace__control_after_fork_child - forget the parent's control state
 *
 * The parent's recorder is not the child's (record.c closed its socket),
 * and error_log starts empty.
 */
/* The parent's instances, in a fork child: their triggers and filters go
 * once the child's agent runs (utrace__control_fork_cleanup()). */
static uint32_t stale_insts;

void utrace__control_after_fork_child(void)
{
	int i;

	rec_sock = -1;
	forget_saved();
	/* the parent's recorder's stacks: not the child's */
	if (rec_stacks)
		utrace__stacks_unset();
	rec_stacks = false;
	utrace__control_error_log_clear();
	/* The instances' pools are the parent's (MAP_SHARED): forgotten,
	 * left mapped. */
	for (i = 0; i < UTRACE_INSTANCES_MAX; i++) {
		struct ctl_ctx *x = &ctxs[1 + i];

		if (!x->name)
			continue;
		__atomic_store_n(&utrace__inst[i].pool, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&utrace__inst[i].gen, ++inst_gens, __ATOMIC_RELEASE);
		if (x->pool_fd >= 0)
			close(x->pool_fd);
		free(x->name);
		memset(x, 0, sizeof(*x));
		stale_insts |= 1u << i;
	}
	utrace__registry_instances_after_fork();
	__atomic_fetch_and(&utrace__tracing_off, ~UTRACE_TRACING_INSTANCES, __ATOMIC_RELEASE);
	utrace__fast_update();
}

/* --- set_event_pid, set_event_notrace_pid --- */

/* The kernel's kstrtoul(s, 0, &v): an optional '+', then decimal, octal
 * after a '0' or hexadecimal after "0x", all of it, without overflow. */
static bool pid_kstrtoul(const char *s, size_t len, uint64_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (i < len && s[i] == '+')
		i++;
	if (i < len && s[i] == '0') {
		base = 8;
		if (i + 2 < len && tolower((unsigned char)s[i + 1]) == 'x' &&
		    isxdigit((unsigned char)s[i + 2])) {
			base = 16;
			i += 2;
		}
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		int c = tolower((unsigned char)s[i]);
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else
			return false;
		if (d >= base || v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	*out = v;
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Append "common_pid == a" or the range a..b to 'out' for the allowed
 * list (in 1), or their negation for the refused one (in 0). */
static int pred_ranges(FILE *out, const uint32_t *v, size_t n, bool in)
{
	size_t i = 0;
	bool first = true;

	while (i < n) {
		size_t j = i;

		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		fputs(first ? "" : in ? " || " : " && ", out);
		if (i == j)
			fprintf(out, "common_pid %s %u", in ? "==" : "!=", v[i]);
		else if (in)
			fprintf(out, "(common_pid >= %u && common_pid <= %u)", v[i], v[j]);
		else
			fprintf(out, "(common_pid < %u || common_pid > %u)", v[i], v[j]);
		first = false;
		i = j + 1;
	}
	return 0;
}

/* The predicate of the two lists, as the kernel's
 * trace_ignore_this_task(): listed in set_event_pid (when it is not
 * empty) and not in set_event_notrace_pid.  NULL with both empty. */
static int make_pred(uint32_t *const list[2], const size_t nr[2], char **out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	*out = NULL;
	if (!nr[0] && !nr[1])
		return 0;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	if (nr[0]) {
		fputs("(", f);
		pred_ranges(f, list[0], nr[0], true);
		fputs(")", f);
	}
	if (nr[1]) {
		fputs(nr[0] ? " && (" : "(", f);
		pred_ranges(f, list[1], nr[1], false);
		fputs(")", f);
	}
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

struct pid_arg {
	const char *pred;
	struct utrace__filter **progs;
	size_t n, cap;
	int err;
};

/* Compile each event's new program, installed only once all have. */
static int pid_compile_cb(struct utrace_event *ev, void *arg)
{
	struct pid_arg *a = arg;
	const struct utrace__event_state *st = ev->priv;

	if (a->n == a->cap) {
		size_t cap = a->cap * 2 + 16;
		struct utrace__filter **p = realloc(a->progs, cap * sizeof(*p));

		if (!p) {
			a->err = -ENOMEM;
			return 1;
		}
		a->progs = p;
		a->cap = cap;
	}
	a->err = compile_program(st, expr_of(st), a->pred, &a->progs[a->n]);
	if (a->err < 0)
		return 1;
	a->n++;
	return 0;
}

static int pid_install_cb(struct utrace_event *ev, void *arg)
{
	struct pid_arg *a = arg;

	set_program(ev, a->progs[a->n++]);
	return 0;
}

/* Make 'v' (nr tids, sorted, taken) list 'which' and give every event
 * its new program; all or nothing.  Registry lock not held. */
static int pid_install(unsigned int which, uint32_t *v, size_t nr)
{
	uint32_t *list[2] = { C->pid_list[0], C->pid_list[1] };
	size_t nrs[2] = { C->pid_nr[0], C->pid_nr[1] }, i;
	struct pid_arg a = { 0 };
	char *pred;
	int r;

	list[which] = v;
	nrs[which] = nr;
	r = make_pred(list, nrs, &pred);
	if (r < 0) {
		free(v);
		return r;
	}
	a.pred = pred;
	utrace__registry_lock();
	utrace__registry_foreach(pid_compile_cb, &a);
	if (a.err == 0) {
		a.n = 0;
		utrace__registry_foreach(pid_install_cb, &a);
	} else {
		for (i = 0; i < a.n; i++)
			utrace__filter_free(a.progs[i]);
	}
	utrace__registry_unlock();
	free(a.progs);
	if (a.err < 0) {
		free(pred);
		free(v);
		return a.err;
	}
	free(C->pid_list[which]);
	C->pid_list[which] = v;
	C->pid_nr[which] = nr;
	free(C->pid_pred);
	C->pid_pred = pred;
	return 0;
}

/**
 * utrace__pid_list_add - the kernel's trace_pid_write() parse: the thread
 * ids of a write added to a sorted list
 * @old, @nold: the list as it is (sorted, no duplicates)
 * @buf, @len: what was written
 * @out, @nr: set to the new list (malloc()ed, sorted, no duplicates), or
 *            NULL when the write held no number (the list stays)
 * @taken: set to the bytes the write takes
 *
 * Return: 0, -EINVAL (a number that does not parse, a token of 128 bytes
 * or more), -EPERM (2^30 or more once cut to 32 bits), -ENOMEM.
 */
int utrace__pid_list_add(const uint32_t *old, size_t nold, const char *buf, size_t len,
			 uint32_t **out, size_t *nr_out, size_t *taken_out)
{
	size_t cap = nold + 16, nr, i = 0, o, taken = len;
	uint32_t *v;

	*out = NULL;
	*nr_out = 0;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (nold)                           /* (an empty list is NULL) */
		memcpy(v, old, nold * sizeof(*v));
	nr = nold;
	while (i < len) {
		size_t s;
		uint64_t n;

		while (i < len && isspace((unsigned char)buf[i]))
			i++;
		if (i == len)
			break;
		if (!buf[i]) {
			/* trace_get_user(): a NUL where a number would start
			 * ends the write, taken up to it */
			taken = i + 1;
			break;
		}
		s = i;
		while (i < len && !isspace((unsigned char)buf[i]) && buf[i])
			i++;
		if (i - s > 127 || !pid_kstrtoul(buf + s, i - s, &n)) {
			free(v);
			return -EINVAL;
		}
		if ((uint32_t)n >= 1u << 30) {
			free(v);
			return -EPERM;
		}
		if (nr == cap) {
			uint32_t *p = realloc(v, (cap *= 2) * sizeof(*v));

			if (!p) {
				free(v);
				return -ENOMEM;
			}
			v = p;
		}
		v[nr++] = (uint32_t)n;
		if (i < len && !buf[i])
			i++;        /* a NUL after a number ends it, as white space */
	}
	*taken_out = taken;
	if (nr == nold) {
		free(v);
		return 0;
	}
	qsort(v, nr, sizeof(*v), cmp_u32);
	for (i = 0, o = 0; i < nr; i++)
		if (!o || v[o - 1] != v[i])
			v[o++] = v[i];
	*out = v;
	*nr_out = o;
	return 0;
}

/**
 * utrace__control_event_pid - set_event_pid and set_event_notrace_pid (UTRACE_CTL_EVENT_PID)
 * @which: UTRACE_CTL_PIDS (set_event_pid) or UTRACE_CTL_NOTRACE_PIDS
 * @action: UTRACE_CTL_PID_READ, UTRACE_CTL_PID_CLEAR (an open with O_TRUNC)
 *          or UTRACE_CTL_PID_ADD (a write)
 * @buf: what was written, not NUL-terminated (ADD)
 * @len: its bytes
 * @text: set to what the file reads (READ): the thread ids in ascending
 *        order, one a line, "" when empty; malloc()ed
 *
 * As the kernel's trace_pid_write(), a write adds the numbers it holds
 * (white space or a NUL apart, each as kstrtoul(s, 0) reads it, a token
 * of 128 bytes or more is too long; a NUL where a number would start ends
 * the write there) to the list, all or none: -EINVAL for one
 * that does not parse, -EPERM (the kernel's trace_pid_list_set() -1) for
 * one of 2^30 or more once cut to 32 bits; a write without a number
 * leaves the list as it was.  Then every event's program becomes its own
 * filter AND the threads the lists let through, as
 * trace_ignore_this_task().
 *
 * Return: the bytes taken (ADD), 0, or -errno.
 */
int utrace__control_event_pid(uint32_t which, int32_t action, const char *buf, size_t len,
			      char **text)
{
	uint32_t *v = NULL;
	size_t nr = 0, o, taken = len;
	int r;

	if (text)
		*text = NULL;
	if (which > UTRACE_CTL_NOTRACE_PIDS)
		return -EINVAL;
	if (action == UTRACE_CTL_PID_READ) {
		char *b = NULL;
		size_t bl = 0;
		FILE *f = open_memstream(&b, &bl);

		if (!f || !text)
			return -ENOMEM;
		for (o = 0; o < C->pid_nr[which]; o++)
			fprintf(f, "%u\n", C->pid_list[which][o]);
		if (fclose(f) != 0 || !b) {
			free(b);
			return -ENOMEM;
		}
		*text = b;
		return 0;
	}
	if (action == UTRACE_CTL_PID_CLEAR)
		return C->pid_nr[which] ? pid_install(which, NULL, 0) : 0;
	if (action != UTRACE_CTL_PID_ADD)
		return -EINVAL;
	r = utrace__pid_list_add(C->pid_list[which], C->pid_nr[which], buf, len, &v, &nr,
				 &taken);
	if (r < 0)
		return r;
	if (!v)
		return (int)(taken > INT32_MAX ? INT32_MAX : taken);
	r = pid_install(which, v, nr);
	return r < 0 ? r : (int)(taken > INT32_MAX ? INT32_MAX : taken);
}

/* --- instances (instances/<name>/ of the mount) --- */

/* Instance i's pool of 'bytes', replacing the one it has (if any).  The old
 * one is unmapped once no thread can still be writing into it. */
static int inst_new_pool(int i, uint64_t bytes)
{
	struct ctl_ctx *x = &ctxs[1 + i];
	struct utrace_pool *p, *old = utrace__inst[i].pool;
	int fd = utrace__pool_create(bytes, x->mode, &p), oldfd = x->pool_fd;
	struct utrace_pool *top = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);

	if (fd < 0)
		return fd;
	if (top)
		utrace__pool_calib_copy(p, top);
	x->pool_fd = fd;
	x->buffer_size = bytes;
	__atomic_store_n(&utrace__inst[i].pool, p, __ATOMIC_RELEASE);
	__atomic_store_n(&utrace__inst[i].gen, ++inst_gens, __ATOMIC_RELEASE);
	if (old) {
		__atomic_store_n(&old->dead, UTRACE_POOL_REPLACED, __ATOMIC_RELEASE);
		close(oldfd);
		/* Kept mapped (a leak) when we cannot tell that nobody writes it. */
		if (utrace__threads_quiesce())
			utrace__pool_unmap(old);
	}
	return 0;
}

/**
 * utrace__control_calib_timer - add the calibration points due in the instances' pools
 *
 * Return: milliseconds until the next is due, or -1 when none is.
 */
int utrace__control_calib_timer(void)
{
	uint64_t due = UINT64_MAX;
	int i;

	for (i = 0; i < UTRACE_INSTANCES_MAX; i++) {
		struct utrace_pool *p = utrace__inst[i].pool;
		uint64_t d;

		if (!p)
			continue;
		utrace__pool_calib_tick(p);
		d = utrace__pool_calib_due(p);
		if (d < due)
			due = d;
	}
	if (due == UINT64_MAX)
		return -1;
	return due / 1000000 >= 60000 ? 60000 : (int)(due / 1000000) + 1;
}

/* buffer_size_kb of the current instance (see utrace__control_buffer_size()). */
static int inst_buffer_size(uint64_t bytes, uint64_t *size)
{
	struct utrace_pool *p = utrace__inst[cur].pool;
	uint64_t pages;

	if (bytes) {
		if (bytes > BUFFER_SIZE_MAX)
			return -EINVAL;
		pages = size_pages(bytes);
		if (!p || p->nr_pages != pages) {
			int r = inst_new_pool(cur, pages * UTRACE_PAGE_SIZE);

			if (r < 0)
				return r;
		}
		p = utrace__inst[cur].pool;
	}
	pages = p->nr_pages;
	*size = (pages < BUFFER_PAGES_MIN ? BUFFER_PAGES_MIN : pages) * UTRACE_PAGE_DATA;
	return 0;
}

static int inst_find(const char *name, size_t len)
{
	int i;

	for (i = 0; i < UTRACE_INSTANCES_MAX; i++)
		if (ctxs[1 + i].name && strlen(ctxs[1 + i].name) == len &&
		    !memcmp(ctxs[1 + i].name, name, len))
			return i;
	return -1;
}

/* The handle of instance i in requests (UTRACE_CTL_INST_SHIFT). */
static uint32_t inst_handle(int i)
{
	return (uint32_t)(i + 1) | ctxs[1 + i].tag << UTRACE_CTL_INST_IDX_BITS;
}

/**
 * utrace__control_select - the buffer the next request is for
 * @handle: 0 for the top level, else an instance's handle from
 *          utrace__control_instance_list()
 *
 * Return: 0, or -ENODEV when the instance was removed (as the kernel
 * answers on a file of a removed instance).
 */
int utrace__control_select(uint32_t handle)
{
	uint32_t idx = handle & ((1u << UTRACE_CTL_INST_IDX_BITS) - 1);

	cur = -1;
	C = &ctxs[0];
	if (!handle)
		return 0;
	if (idx == 0 || idx > UTRACE_INSTANCES_MAX || !ctxs[idx].name ||
	    inst_handle((int)idx - 1) != handle)
		return -ENODEV;
	cur = (int)idx - 1;
	C = &ctxs[idx];
	return 0;
}

/**
 * utrace__control_instance_list - the instances (UTRACE_CTL_INSTANCES)
 * @text: set to one "<handle> <name>\n" a line, malloc()ed
 *
 * Return: 0 or -ENOMEM.
 */
int utrace__control_instance_list(char **text)
{
	char *b = NULL;
	size_t bl = 0;
	FILE *f = open_memstream(&b, &bl);
	int i;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < UTRACE_INSTANCES_MAX; i++)
		if (ctxs[1 + i].name)
			fprintf(f, "%u %s\n", inst_handle(i), ctxs[1 + i].name);
	if (fclose(f) != 0 || !b) {
		free(b);
		return -ENOMEM;
	}
	*text = b;
	return 0;
}

/**
 * utrace__control_instance_mkdir - make an instance (UTRACE_CTL_INSTANCE_MKDIR)
 * @name: its name, not NUL-terminated
 * @len: its bytes
 *
 * A buffer of the top level's default size, in overwrite mode, no event
 * on, tracing_on 1.  The top-level pool is made too: the writer counts on
 * a thread's slot there while it copies into an instance.
 *
 * Return: the handle, -EEXIST, -EINVAL (an empty name or one with '/' or
 * a NUL), -ENAMETOOLONG, -ENOSPC (UTRACE_INSTANCES_MAX instances exist)
 * or -errno.
 */
int utrace__control_instance_mkdir(const char *name, size_t len)
{
	struct ctl_ctx *x;
	int i, r;

	if (!len || memchr(name, '/', len) || memchr(name, 0, len))
		return -EINVAL;
	if (len > 255)
		return -ENAMETOOLONG;
	if (inst_find(name, len) >= 0)
		return -EEXIST;
	for (i = 0; i < UTRACE_INSTANCES_MAX && ctxs[1 + i].name; i++)
		;
	if (i == UTRACE_INSTANCES_MAX) {
		/* (a limit of utrace's: said in the top level's error_log) */
		char *e;

		if (asprintf(&e, "instances: error: A process has at most %d instances\n"
			     "  Command: mkdir %.*s\n", UTRACE_INSTANCES_MAX, (int)len,
			     name) >= 0)
			log_error(e);
		return -ENOSPC;
	}
	r = utrace__pool_ensure();
	if (r < 0)
		return r;
	x = &ctxs[1 + i];
	memset(x, 0, sizeof(*x));
	x->pool_fd = -1;
	x->mode = UTRACE_MODE_OVERWRITE;
	x->name = strndup(name, len);
	if (!x->name)
		return -ENOMEM;
	r = inst_new_pool(i, utrace__pool_next_size());
	if (r < 0) {
		free(x->name);
		x->name = NULL;
		return r;
	}
	x->tag = ++inst_tags & ((1u << (24 - UTRACE_CTL_INST_IDX_BITS)) - 1);
	__atomic_store_n(&utrace__inst[i].tracing_off, 0, __ATOMIC_RELEASE);
	__atomic_fetch_or(&utrace__tracing_off, UTRACE_TRACING_INSTANCES, __ATOMIC_RELEASE);
	utrace__fast_update();
	return (int)inst_handle(i);
}

static int inst_off_cb(struct utrace_event *ev, void *arg)
{
	struct utrace__event_state *st = ev->priv;
	int i = *(int *)arg;

	if (utrace__event_on_inst(ev, i))
		utrace__event_enable_inst(ev, i, false);
	if (st->ifilt) {
		struct utrace__inst_filter *f = &st->ifilt[i];
		struct utrace__filter *old = f->filter;

		__atomic_store_n(&f->filter, NULL, __ATOMIC_RELEASE);
		if (old && utrace__filter_sync())
			utrace__filter_free(old);
		free(f->text);
		free(f->expr);
		f->text = f->expr = NULL;
	}
	return 0;
}

/**
 * utrace__control_fork_cleanup - the parent's instances, in a fork child
 *
 * Their triggers (which the child's events still run, and which a new
 * instance of the child at the same place would show), enables and
 * filters go, as at rmdir.  Not in the fork handler: removing a trigger
 * waits for a grace period, which a fork from a signal handler inside an
 * event would hold.  The child's agent thread calls it before it serves
 * any request.
 */
void utrace__control_fork_cleanup(void)
{
	uint32_t m = stale_insts;
	int i;

	if (!m)
		return;
	stale_insts = 0;
	utrace__registry_lock();
	while (m) {
		i = __builtin_ctz(m);
		m &= m - 1;
		utrace__triggers_inst_gone(i);
		utrace__registry_foreach(inst_off_cb, &i);
	}
	utrace__registry_unlock();
}

/**
 * utrace__control_instance_rmdir - remove an instance (UTRACE_CTL_INSTANCE_RMDIR)
 * @name: its name, not NUL-terminated
 * @len: its bytes
 *
 * Its events go off, its filters and lists are freed, and its pool is
 * unmapped once no thread can be writing into it (kept, a leak, when
 * that cannot be told: ThreadSanitizer builds, no membarrier).  Whether a
 * file of it is open is the mount's to know (EBUSY there).
 *
 * Return: the instance's index (its snapshot is the agent's to drop) or
 * -ENOENT.
 */
int utrace__control_instance_rmdir(const char *name, size_t len)
{
	int i = inst_find(name, len), k, any = 0;
	struct ctl_ctx *x;
	struct utrace_pool *p;

	if (i < 0)
		return -ENOENT;
	x = &ctxs[1 + i];
	utrace__registry_lock();
	cur = i;
	C = x;
	/* its triggers first: they may switch its events on */
	utrace__triggers_inst_gone(i);
	utrace__registry_foreach(inst_off_cb, &i);
	cur = -1;
	C = &ctxs[0];
	utrace__registry_unlock();
	p = utrace__inst[i].pool;
	__atomic_store_n(&utrace__inst[i].pool, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&utrace__inst[i].gen, ++inst_gens, __ATOMIC_RELEASE);
	for (k = 0; k < UTRACE_INSTANCES_MAX; k++)
		any |= k != i && ctxs[1 + k].name != NULL;
	if (!any)
		__atomic_fetch_and(&utrace__tracing_off, ~UTRACE_TRACING_INSTANCES,
				   __ATOMIC_RELEASE);
	utrace__fast_update();
	if (p) {
		__atomic_store_n(&p->dead, UTRACE_POOL_REPLACED, __ATOMIC_RELEASE);
		if (utrace__threads_quiesce())
			utrace__pool_unmap(p);
	}
	if (x->pool_fd >= 0)
		close(x->pool_fd);
	while (x->nr_error_log)
		free(x->error_log[--x->nr_error_log]);
	free(x->pid_list[0]);
	free(x->pid_list[1]);
	free(x->pid_pred);
	free(x->name);
	memset(x, 0, sizeof(*x));
	x->pool_fd = -1;
	return i;
}
