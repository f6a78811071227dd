/* SPDX-License-Identifier: MIT */
/*
 * utrace mount: the files of a process's tracefs tree, byte for byte as
 * the kernel's (kernel/trace/trace.c, trace_events.c, trace_events_filter.c;
 * transcripts in the project's reference/tracefs-kernel).  Each function
 * says which kernel function it follows.  trace_pipe lives in mount-fs.c,
 * since it blocks.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ctl-client.h"
#include "ctlproto.h"
#include "page.h"
#include "pool.h"
#include "live.h"
#include "mount.h"

#define EVENT_BUF_SIZE 127       /* longest set_event token (kernel trace_events.c) */
#define FILTER_MAX 4096          /* filter writes must be shorter than PAGE_SIZE */
#define TRACER_SIZE_MAX 100      /* MAX_TRACER_SIZE: a longer current_tracer write is cut */
#define CLOCK_BUF 64
#define MARKER_SEND_MAX 8192     /* more than a marker record holds */             /* trace_clock and trace_options writes are shorter */

/*
 * The trace options of an instance (trace_options, options/), in the
 * order and with the defaults of the kernel's instance; transcript
 * 07-controls.txt.  OPT_FILE: the option has a file in options/ (the
 * kernel gives none to the top-level-only flags).  OPT_NOP: an option of
 * the nop tracer; test_nop_refuse refuses every write (nop_set_flag()).
 * Only overwrite is the process's (the buffer's mode); the others live in
 * the mount (mount_opts_get()).
 */
enum { OPT_ON = 1, OPT_FILE = 2, OPT_NOP = 4, OPT_REFUSE = 8, OPT_GRAPH = 16 };
static const struct topt {
	const char *name;
	unsigned int flags;
} topts[] = {
	{ "print-parent", OPT_ON | OPT_FILE },
	{ "sym-offset", OPT_FILE },
	{ "sym-addr", OPT_FILE },
	{ "verbose", OPT_FILE },
	{ "raw", OPT_FILE },
	{ "hex", OPT_FILE },
	{ "bin", OPT_FILE },
	{ "block", OPT_FILE },
	{ "fields", OPT_FILE },
	{ "trace_printk", OPT_ON },
	{ "annotate", OPT_ON | OPT_FILE },
	{ "userstacktrace", OPT_FILE },
	{ "sym-userobj", OPT_FILE },
	{ "printk-msg-only", 0 },
	{ "context-info", OPT_ON | OPT_FILE },
	{ "latency-format", OPT_FILE },
	{ "record-cmd", OPT_ON },
	{ "record-tgid", OPT_FILE },
	{ "overwrite", OPT_ON | OPT_FILE },
	{ "disable_on_free", OPT_FILE },
	{ "irq-info", OPT_ON | OPT_FILE },
	{ "markers", OPT_ON | OPT_FILE },
	{ "event-fork", OPT_FILE },
	{ "trace_printk_dest", OPT_FILE },
	{ "copy_trace_marker", OPT_FILE },
	{ "pause-on-trace", OPT_FILE },
	{ "hash-ptr", OPT_ON | OPT_FILE },
	{ "function-trace", OPT_ON | OPT_FILE },
	{ "function-fork", OPT_FILE },
	{ "stacktrace", OPT_FILE },
	{ "test_nop_accept", OPT_FILE | OPT_NOP },
	{ "test_nop_refuse", OPT_FILE | OPT_NOP | OPT_REFUSE },
	/* the function_graph tracer's that change its text (OPT_GRAPH: in
	 * options/, not in trace_options while nop is the tracer, as the
	 * kernel lists only the current tracer's there) */
	{ "funcgraph-overrun", OPT_FILE | OPT_GRAPH },
	{ "funcgraph-cpu", OPT_ON | OPT_FILE | OPT_GRAPH },
	{ "funcgraph-overhead", OPT_ON | OPT_FILE | OPT_GRAPH },
	{ "funcgraph-proc", OPT_FILE | OPT_GRAPH },
	{ "funcgraph-duration", OPT_ON | OPT_FILE | OPT_GRAPH },
	{ "funcgraph-abstime", OPT_FILE | OPT_GRAPH },
	{ "funcgraph-irqs", OPT_ON | OPT_FILE | OPT_GRAPH },
	{ "funcgraph-tail", OPT_FILE | OPT_GRAPH },
};
#define NR_TOPTS (sizeof(topts) / sizeof(topts[0]))
/* The function_graph tracer's options that live in the process
 * (lib/runtime/ftrace.c), after the table's in options/: evid NR_TOPTS + i. */
static const struct {
	const char *name;
	uint32_t file;           /* enum utrace_ctl_ftrace_file */
} tracer_opts[] = {
	{ "graph-time", UTRACE_CTL_FT_GRAPH_TIME },
};
#define NR_TRACER_OPTS (sizeof(tracer_opts) / sizeof(tracer_opts[0]))
#define TOPT_VERBOSE 3
#define TOPT_RAW 4
#define TOPT_HEX 5
#define TOPT_CONTEXT_INFO 14
#define TOPT_LATENCY_FORMAT 15
#define TOPT_RECORD_TGID 17
#define TOPT_OVERWRITE 18
#define TOPT_IRQ_INFO 20
#define TOPT_MARKERS 21
#define TOPT_FG_OVERRUN 32
#define TOPT_FG_CPU 33
#define TOPT_FG_OVERHEAD 34
#define TOPT_FG_PROC 35
#define TOPT_FG_DURATION 36
#define TOPT_FG_ABSTIME 37
#define TOPT_FG_TAIL 39


static const struct mentry pid_entries[] = {
	{ "README", MK_README },
	{ "available_events", MK_AVAILABLE_EVENTS },
	{ "buffer_size_kb", MK_BUFFER_SIZE_KB },
	{ "buffer_total_size_kb", MK_BUFFER_TOTAL_SIZE_KB },
	{ "available_tracers", MK_AVAILABLE_TRACERS },
	{ "available_filter_functions", MK_AVAILABLE_FILTER_FUNCS },
	{ "current_tracer", MK_CURRENT_TRACER },
	{ "enabled_functions", MK_ENABLED_FUNCS },
	{ "function_profile_enabled", MK_FUNC_PROFILE_ENABLED },
	{ "max_graph_depth", MK_MAX_GRAPH_DEPTH },
	{ "set_ftrace_filter", MK_SET_FTRACE_FILTER },
	{ "set_ftrace_notrace", MK_SET_FTRACE_NOTRACE },
	{ "set_ftrace_notrace_pid", MK_SET_FTRACE_NOTRACE_PID },
	{ "set_ftrace_pid", MK_SET_FTRACE_PID },
	{ "set_graph_function", MK_SET_GRAPH_FUNCTION },
	{ "dynamic_events", MK_DYNAMIC_EVENTS },
	{ "error_log", MK_ERROR_LOG },
	{ "events", MK_EVENTS },
	{ "instances", MK_INSTANCES },
	{ "options", MK_OPTIONS },
	{ "per_cpu", MK_PER_CPU },
	{ "saved_cmdlines", MK_SAVED_CMDLINES },
	{ "set_event", MK_SET_EVENT },
	{ "set_event_notrace_pid", MK_SET_EVENT_NOTRACE_PID },
	{ "set_event_pid", MK_SET_EVENT_PID },
	{ "snapshot", MK_SNAPSHOT },
	{ "synthetic_events", MK_SYNTH_EVENTS },
	{ "trace", MK_TRACE },
	{ "trace_clock", MK_TRACE_CLOCK },
	{ "trace_marker", MK_TRACE_MARKER },
	{ "trace_marker_raw", MK_TRACE_MARKER_RAW },
	{ "trace_options", MK_TRACE_OPTIONS },
	{ "trace_pipe", MK_TRACE_PIPE },
	{ "trace_stat", MK_TRACE_STAT },
	{ "tracing_on", MK_TRACING_ON },
	{ "uprobe_events", MK_UPROBE_EVENTS },
	{ "uprobe_profile", MK_UPROBE_PROFILE },
	{ NULL, MK_ROOT },
};
static const struct mentry events_entries[] = {
	{ "enable", MK_EVENTS_ENABLE },
	{ "header_event", MK_HEADER_EVENT },
	{ "header_page", MK_HEADER_PAGE },
	{ NULL, MK_ROOT },
};
static const struct mentry sys_entries[] = {
	{ "enable", MK_SYS_ENABLE },
	{ "filter", MK_SYS_FILTER },
	{ NULL, MK_ROOT },
};
static const struct mentry ev_entries[] = {
	{ "enable", MK_EV_ENABLE },
	{ "filter", MK_EV_FILTER },
	{ "format", MK_EV_FORMAT },
	{ "hist", MK_EV_HIST },
	{ "id", MK_EV_ID },
	{ "trigger", MK_EV_TRIGGER },
	{ NULL, MK_ROOT },
};
/* ftrace's print: the trace_marker's triggers */
static const struct mentry print_ev_entries[] = {
	{ "format", MK_EV_FORMAT },
	{ "hist", MK_EV_HIST },
	{ "id", MK_EV_ID },
	{ "trigger", MK_EV_TRIGGER },
	{ NULL, MK_ROOT },
};
static const struct mentry ftrace_ev_entries[] = {
	{ "format", MK_EV_FORMAT },
	{ "id", MK_EV_ID },
	{ NULL, MK_ROOT },
};
static const struct mentry cpu_entries[] = {
	{ "buffer_size_kb", MK_CPU_BUFFER_SIZE_KB },
	{ "stats", MK_CPU_STATS },
	{ "trace", MK_CPU_TRACE },
	{ "trace_pipe", MK_CPU_TRACE_PIPE },
	{ "trace_pipe_raw", MK_CPU_TRACE_PIPE_RAW },
	{ NULL, MK_ROOT },
};

static const struct mentry no_entries[] = { { NULL, MK_ROOT } };

/* An instance's: those of the process directory less README,
 * available_events, saved_cmdlines and instances, which are top-level
 * files in the kernel. */
static struct mentry inst_table[sizeof(pid_entries) / sizeof(pid_entries[0])];

/* The function tracers' files: the process's (UTRACE_CTL_FTRACE), none
 * in instances (one tracer per process). */
static int ftrace_file_id(enum mkind k)
{
	switch (k) {
	case MK_CURRENT_TRACER: return UTRACE_CTL_FT_CURRENT_TRACER;
	case MK_AVAILABLE_TRACERS: return UTRACE_CTL_FT_AVAILABLE_TRACERS;
	case MK_AVAILABLE_FILTER_FUNCS: return UTRACE_CTL_FT_AVAILABLE_FUNCS;
	case MK_SET_FTRACE_FILTER: return UTRACE_CTL_FT_FILTER;
	case MK_SET_FTRACE_NOTRACE: return UTRACE_CTL_FT_NOTRACE;
	case MK_SET_GRAPH_FUNCTION: return UTRACE_CTL_FT_GRAPH_FUNCTION;
	case MK_MAX_GRAPH_DEPTH: return UTRACE_CTL_FT_MAX_GRAPH_DEPTH;
	case MK_ENABLED_FUNCS: return UTRACE_CTL_FT_ENABLED_FUNCS;
	case MK_FUNC_PROFILE_ENABLED: return UTRACE_CTL_FT_PROFILE_ENABLED;
	case MK_SET_FTRACE_PID: return UTRACE_CTL_FT_SET_PID;
	case MK_SET_FTRACE_NOTRACE_PID: return UTRACE_CTL_FT_NOTRACE_PID;
	default: return -1;
	}
}

static bool ftrace_file(enum mkind k)
{
	return ftrace_file_id(k) >= 0 && k != MK_CURRENT_TRACER && k != MK_AVAILABLE_TRACERS;
}

static bool ftrace_list(enum mkind k)
{
	return k == MK_SET_FTRACE_FILTER || k == MK_SET_FTRACE_NOTRACE ||
	       k == MK_SET_GRAPH_FUNCTION || k == MK_SET_FTRACE_PID ||
	       k == MK_SET_FTRACE_NOTRACE_PID;
}
static pthread_once_t inst_once = PTHREAD_ONCE_INIT;

static void inst_table_make(void)
{
	size_t i, n = 0;

	for (i = 0; pid_entries[i].name; i++) {
		enum mkind k = pid_entries[i].kind;

		if (k != MK_README && k != MK_AVAILABLE_EVENTS && k != MK_SAVED_CMDLINES &&
		    k != MK_INSTANCES && k != MK_UPROBE_EVENTS && k != MK_UPROBE_PROFILE &&
		    k != MK_SYNTH_EVENTS && k != MK_DYNAMIC_EVENTS && !ftrace_file(k) &&
		    k != MK_TRACE_STAT)
			inst_table[n++] = pid_entries[i];
	}
	inst_table[n] = (struct mentry){ NULL, MK_ROOT };
}

static const struct mentry *inst_entries(void)
{
	pthread_once(&inst_once, inst_table_make);
	return inst_table;
}

const struct mentry *mount_fixed_entries(const struct mnode *dir)
{
	switch (dir->kind) {
	case MK_PID: return pid_entries;
	case MK_INST: return inst_entries();
	case MK_EVENTS: return events_entries;
	case MK_SYS: return mount_sys_ftrace(dir->sys) ? no_entries : sys_entries;
	case MK_EV:
		if (mount_sys_ftrace(dir->sys))
			return dir->ev && !strcmp(dir->ev, "print") ? print_ev_entries :
			       ftrace_ev_entries;
		return ev_entries;
	case MK_CPU: return cpu_entries;
	default: return no_entries;
	}
}

const char *mount_option_file(uint32_t i)
{
	uint32_t k;

	for (k = 0; k < NR_TOPTS; k++)
		if ((topts[k].flags & OPT_FILE) && !i--)
			return topts[k].name;
	return i < NR_TRACER_OPTS ? tracer_opts[i].name : NULL;
}

int mount_option_lookup(const char *name)
{
	uint32_t k;

	for (k = 0; k < NR_TOPTS; k++)
		if ((topts[k].flags & OPT_FILE) && !strcmp(topts[k].name, name))
			return (int)k;
	for (k = 0; k < NR_TRACER_OPTS; k++)
		if (!strcmp(tracer_opts[k].name, name))
			return (int)(NR_TOPTS + k);
	return -ENOENT;
}

/* The modes of an instance of tracefs (ls -la instances/<name>). */
unsigned int mount_mode(enum mkind k)
{
	switch (k) {
	case MK_ROOT: return 0755;
	case MK_LINK: return 0777;
	case MK_PID: case MK_OPTIONS: case MK_PER_CPU: case MK_CPU: return 0750;
	case MK_TRACE_STAT: return 0750;
	case MK_INSTANCES: case MK_INST: return 0750;
	case MK_EVENTS: case MK_SYS: case MK_EV: return 0755;
	case MK_AVAILABLE_EVENTS: case MK_BUFFER_TOTAL_SIZE_KB: case MK_TRACE_PIPE:
	case MK_EV_FORMAT: case MK_EV_ID: case MK_AVAILABLE_TRACERS: case MK_EV_HIST:
	case MK_README: case MK_SAVED_CMDLINES: case MK_UPROBE_PROFILE:
	case MK_AVAILABLE_FILTER_FUNCS: case MK_ENABLED_FUNCS:
	case MK_HEADER_PAGE: case MK_HEADER_EVENT:
	case MK_CPU_TRACE_PIPE: case MK_CPU_TRACE_PIPE_RAW: case MK_CPU_STATS:
		return 0440;
	case MK_TRACE_MARKER: case MK_TRACE_MARKER_RAW:
		return 0220;
	default:
		return 0640;
	}
}

unsigned int mount_nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned int)n : 1;
}

int mount_ctl(const struct mnode *m, struct utrace__ctl **c)
{
	int err;

	*c = NULL;
	if (mount_proc(m->pid, m->start, NULL, NULL, NULL, NULL) < 0)
		return -ENOENT;
	err = utrace__ctl_open(m->pid, c, NULL, 0);
	if (err < 0)
		return mount_gone(err, -ENOENT);
	utrace__ctl_set_instance(*c, m->inst);
	return 0;
}

int mount_events(const struct mnode *m, struct utrace__ctl_event **evs, size_t *nr)
{
	struct utrace__ctl *c;
	int err = mount_ctl(m, &c);

	if (err < 0)
		return err;
	err = utrace__ctl_events(c, evs, nr);
	utrace__ctl_close(c);
	return err < 0 ? mount_gone(err, -ENOENT) : 0;
}

/*
 * kstrtoul_from_user(): at most 66 bytes are looked at, NUL-terminated;
 * an optional '+', decimal digits, one optional '\n', nothing else.
 * -ERANGE on overflow, -EINVAL otherwise.
 */
int mount_kstrtoul_user(const char *buf, size_t len, unsigned long long *val)
{
	char tmp[1 + 64 + 1 + 1];
	unsigned long long v = 0;
	const char *s = tmp;
	bool overflow = false;
	size_t digits = 0;

	if (len > sizeof(tmp) - 1)
		len = sizeof(tmp) - 1;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	if (*s == '+')
		s++;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (v > (~0ULL - d) / 10)
			overflow = true;
		v = v * 10 + d;
	}
	if (overflow)
		return -ERANGE;
	if (!digits)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*val = v;
	return 0;
}

/* The kernel's isspace(): <ctype.h> of the C locale plus 0xa0. */
static bool kspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/*
 * trace_get_user() with a fresh parser, as ftrace_event_write() uses it:
 * skip white space, take one token up to white space or NUL (at most
 * EVENT_BUF_SIZE bytes), and count the one byte that ended it.  Returns
 * the bytes consumed; *toklen is 0 when only white space came.
 */
long mount_get_token(const char *buf, size_t cnt, size_t *tok, size_t *toklen)
{
	size_t read = 0, idx = 0, start;
	unsigned char ch;

	*tok = *toklen = 0;
	if (!cnt)
		return 0;
	ch = (unsigned char)buf[read++];
	cnt--;
	while (cnt && kspace(ch)) {
		ch = (unsigned char)buf[read++];
		cnt--;
	}
	if (kspace(ch) || !ch)
		return (long)read;
	start = read - 1;
	while (cnt && !kspace(ch) && ch) {
		if (idx < EVENT_BUF_SIZE)
			idx++;
		else
			return -EINVAL;
		ch = (unsigned char)buf[read++];
		cnt--;
	}
	if (!kspace(ch) && ch) {
		/* the write ended inside the token: its last byte belongs to it */
		if (idx < EVENT_BUF_SIZE)
			idx++;
		else
			return -EINVAL;
	}
	*tok = start;
	*toklen = idx;
	return (long)read;
}

struct sbuf {
	char *p;
	size_t len, cap;
};

static int sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int sb_str(struct sbuf *b, const char *s)
{
	return sb_add(b, s, strlen(s));
}

/* available_events, set_event: "sys:name\n" in registration order. */
static int text_event_list(struct utrace__ctl *c, bool enabled_only, struct sbuf *b)
{
	struct utrace__ctl_event *evs;
	size_t nr, i;
	int err = utrace__ctl_events(c, &evs, &nr);

	if (err < 0)
		return err;
	for (i = 0; i < nr && !err; i++) {
		/* set_event lists the events a trigger holds too, as the
		 * kernel's (EVENT_FILE_FL_ENABLED) */
		if ((enabled_only && !evs[i].enabled && !evs[i].soft) ||
		    mount_sys_ftrace(evs[i].system))
			continue;
		err = sb_str(b, evs[i].system);
		if (!err)
			err = sb_add(b, ":", 1);
		if (!err)
			err = sb_str(b, evs[i].name);
		if (!err)
			err = sb_add(b, "\n", 1);
	}
	utrace__ctl_events_free(evs, nr);
	return err;
}

/*
 * system_enable_read() for events/enable (sys NULL) and events/<sys>/enable:
 * '0' none on, '1' all on, 'X' mixed, '?' no events.  event_enable_read()
 * for one event, which is gone (ENODEV) when its id went away.
 */
static int text_enable(struct utrace__ctl *c, const struct mnode *m, struct sbuf *b)
{
	static const char set_to_char[4] = { '?', '0', '1', 'X' };
	struct utrace__ctl_event *evs;
	size_t nr, i;
	unsigned int set = 0;
	bool found = false, soft = false;
	char out[3];
	int err = utrace__ctl_events(c, &evs, &nr);

	if (err < 0)
		return err;
	for (i = 0; i < nr; i++) {
		if (m->kind == MK_EV_ENABLE) {
			if (evs[i].id == m->evid) {
				set = evs[i].enabled ? 2 : 1;
				soft = evs[i].soft;
				found = true;
				break;
			}
			continue;
		}
		if ((m->kind == MK_SYS_ENABLE && strcmp(evs[i].system, m->sys)) ||
		    mount_sys_ftrace(evs[i].system))
			continue;
		/* a trigger's event counts as on (EVENT_FILE_FL_ENABLED) */
		set |= 1u << (evs[i].enabled || evs[i].soft ? 1 : 0);
		if (set == 3)
			break;
	}
	utrace__ctl_events_free(evs, nr);
	if (m->kind == MK_EV_ENABLE && !found)
		return -ENODEV;
	/* event_enable_read(): "*" while a trigger holds the event */
	out[0] = set_to_char[set];
	out[1] = soft ? '*' : '\n';
	out[2] = '\n';
	return sb_add(b, out, soft ? 3 : 2);
}

static int text_number(struct sbuf *b, unsigned long long v)
{
	char tmp[32];

	snprintf(tmp, sizeof(tmp), "%llu\n", v);
	return sb_str(b, tmp);
}

static int take_text(struct sbuf *b, char *text, int err)
{
	if (err < 0)
		return err;
	err = text ? sb_str(b, text) : 0;
	free(text);
	return err;
}

/*
 * dynamic_events: the uprobes as uprobe_events shows them, then the
 * synthetic events with the "s:synthetic/" the kernel's
 * synth_event_show() puts before them.  (The kernel lists all kinds in
 * the order they were made; here each kind keeps its own order.)
 */
static int text_dynamic_events(struct utrace__ctl *c, struct sbuf *b)
{
	char *t = NULL, *line, *nl;
	int err = utrace__ctl_uprobe_text(c, 0, &t);

	err = take_text(b, t, err);
	if (err < 0)
		return err;
	t = NULL;
	err = utrace__ctl_synth_text(c, &t);
	for (line = t; err >= 0 && line && *line; line = nl) {
		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		err = sb_str(b, "s:synthetic/");
		if (err >= 0)
			err = sb_add(b, line, (size_t)(nl - line));
	}
	free(t);
	return err < 0 ? err : 0;
}

/* Is there a synthetic event called 'name' (len bytes)? */
static bool synth_exists(struct utrace__ctl *c, const char *name, size_t len)
{
	char *t = NULL, *line;
	bool found = false;

	if (utrace__ctl_synth_text(c, &t) < 0 || !t)
		return false;
	for (line = t; line && *line && !found;) {
		found = !strncmp(line, name, len) &&
			(line[len] == '\t' || line[len] == ' ' || line[len] == '\n' || line[len] == '\0');
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	free(t);
	return found;
}

/*
 * One line written to dynamic_events (dyn_event_write() -> create_dyn_event()):
 * "s:[synthetic/]NAME FIELDS" makes a synthetic event, "-:[GRP/]NAME"
 * removes a dynamic event of either kind, anything else is a probe
 * definition for uprobe_events (which gives the kernel's errors).
 */
static int dynamic_line(struct utrace__ctl *c, const char *l, size_t n)
{
	char *cmd;
	int err;

	while (n && (l[n - 1] == '\n' || l[n - 1] == ' ' || l[n - 1] == '\t'))
		n--;
	while (n && (*l == ' ' || *l == '\t'))
		l++, n--;
	if (!n || *l == '#')
		return 0;
	if (n > 2 && !strncmp(l, "s:", 2)) {
		/* create_synth_event(): the line as it is, for its errors */
		err = utrace__ctl_synth_write_dyn(c, l, n);
		if (err != -EOPNOTSUPP)
			return err;
		l += 2, n -= 2;
		if (n > 10 && !strncmp(l, "synthetic/", 10))
			l += 10, n -= 10;
		return utrace__ctl_synth_write(c, l, n);
	}
	if (n > 2 && !strncmp(l, "-:", 2)) {
		const char *name = l + 2, *end = l + n, *slash = memchr(name, '/', (size_t)(end - name));
		const char *sp = memchr(name, ' ', (size_t)(end - name));
		bool synth;

		if (sp)
			end = sp;
		if (slash && slash < end) {
			synth = (size_t)(slash - name) == 9 && !strncmp(name, "synthetic", 9);
			name = slash + 1;
		} else {
			synth = synth_exists(c, name, (size_t)(end - name));
		}
		if (synth) {
			if (asprintf(&cmd, "!%.*s", (int)(end - name), name) < 0)
				return -ENOMEM;
			err = utrace__ctl_synth_write(c, cmd, strlen(cmd));
			free(cmd);
			return err;
		}
	}
	return utrace__ctl_uprobe_write(c, l, n);
}

static int write_dynamic_events(struct utrace__ctl *c, const char *buf, size_t len)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;
		int err = dynamic_line(c, buf + i, n);

		if (err < 0)
			return err;
		i += n + (nl ? 1 : 0);
	}
	return 0;
}

static uint64_t opts_default(void);

/* The options that change the trace text (the kernel's trace_flags that
 * print_trace_line() and trace_default_header() read). */
unsigned int mount_live_flags(const struct mnode *m)
{
	uint64_t opts = mount_opts_get(m->pid, m->start, m->inst, opts_default());
	static const struct { unsigned int topt, live; bool off; } map[] = {
		{ TOPT_IRQ_INFO, LIVE_NO_IRQ_INFO, true },
		{ TOPT_CONTEXT_INFO, LIVE_NO_CONTEXT, true },
		{ TOPT_RAW, LIVE_RAW, false },
		{ TOPT_HEX, LIVE_HEX, false },
		{ TOPT_LATENCY_FORMAT, LIVE_LATENCY, false },
		{ TOPT_RECORD_TGID, LIVE_TGID, false },
		{ TOPT_VERBOSE, LIVE_VERBOSE, false },
		{ TOPT_FG_OVERRUN, LIVE_FG_OVERRUN, false },
		{ TOPT_FG_CPU, LIVE_FG_NO_CPU, true },
		{ TOPT_FG_OVERHEAD, LIVE_FG_NO_OVERHEAD, true },
		{ TOPT_FG_PROC, LIVE_FG_PROC, false },
		{ TOPT_FG_DURATION, LIVE_FG_NO_DURATION, true },
		{ TOPT_FG_ABSTIME, LIVE_FG_ABSTIME, false },
		{ TOPT_FG_TAIL, LIVE_FG_TAIL, false },
	};
	unsigned int flags = 0, i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if ((opts >> map[i].topt & 1) != map[i].off)
			flags |= map[i].live;
	return flags;
}

/* trace: the kernel's header and the lines of what the buffer holds. */
/* The snapshot file: the copy kept by the mount (mount_snap_print()). */
static int text_snapshot(struct utrace__ctl *c, const struct mnode *m, struct sbuf *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int err;

	if (!mem)
		return -ENOMEM;
	err = mount_snap_print(c, m->pid, m->start, m->inst, mount_live_flags(m), mem);
	if (fclose(mem) != 0 && !err)
		err = -ENOMEM;
	if (!err)
		err = sb_add(b, buf ? buf : "", len);
	free(buf);
	return err;
}

/* tracing_snapshot_write(): 0 frees, 1 takes (allocating), any other
 * number empties an allocated snapshot. */
static long write_snapshot(struct utrace__ctl *c, const struct mnode *m, const char *buf,
			   size_t len)
{
	unsigned long long v;
	struct live *lv;
	int err = mount_kstrtoul_user(buf, len, &v);

	if (err)
		return err;
	/* the snapshot trigger's copy goes too: this write says what is kept */
	utrace__ctl_snapshot_free(c);
	if (v == 0) {
		mount_snap_free(m->pid, m->start, m->inst);
	} else if (v == 1) {
		err = live_open(&c, 1, &lv);
		if (err < 0)
			return err;
		err = mount_snap_take(m->pid, m->start, m->inst, lv);
		live_close(lv);
		if (err < 0)
			return err;
	} else {
		mount_snap_clear(m->pid, m->start, m->inst);
	}
	return (long)len;
}

static int text_trace(struct utrace__ctl *c, const struct mnode *m, struct sbuf *b)
{
	struct live *lv;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	long n;
	int err = live_open(&c, 1, &lv);

	if (err < 0)
		return err;
	if (m->kind == MK_CPU_TRACE)
		live_set_cpu(lv, (int)m->evid);
	if (!m->inst) {
		char *t = NULL;

		/* (an older runtime: nop) */
		if (utrace__ctl_ftrace_text(c, UTRACE_CTL_FT_CURRENT_TRACER, &t) == 0 && t) {
			t[strcspn(t, "\n")] = '\0';
			live_set_tracer(lv, t);
		}
		free(t);
	}
	mem = open_memstream(&buf, &len);
	if (!mem) {
		live_close(lv);
		return -ENOMEM;
	}
	n = live_print(lv, LIVE_HEADER | mount_live_flags(m), mem);
	if (fclose(mem) != 0 && n >= 0)
		n = -ENOMEM;
	live_close(lv);
	if (n >= 0)
		err = sb_add(b, buf ? buf : "", len);
	else
		err = (int)n;
	free(buf);
	return err;
}

/*
 * per_cpu/cpuN/stats: tracing_stats_read().  The buffer is the process's,
 * one for all CPUs: overrun and dropped events are its counts, not the
 * CPU's; commit overrun cannot happen (a writer is never interrupted by
 * another on its page); read events are those this mount's readers took.
 */
static int text_stats(struct utrace__ctl *c, const struct mnode *m, struct sbuf *b)
{
	struct live_stats st;
	struct timespec now;
	struct live *lv;
	char t[512];
	uint64_t us, nus;
	int err = live_open(&c, 1, &lv);

	if (err < 0)
		return err;
	live_set_cpu(lv, (int)m->evid);
	err = live_stats(lv, &st);
	live_close(lv);
	if (err < 0)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* ns2usecs() rounds */
	us = (st.oldest_ns + 500) / 1000;
	nus = (uint64_t)now.tv_sec * 1000000 + ((uint64_t)now.tv_nsec + 500) / 1000;
	snprintf(t, sizeof(t),
		 "entries: %llu\n"
		 "overrun: %llu\n"
		 "commit overrun: 0\n"
		 "bytes: %llu\n"
		 "oldest event ts: %5llu.%06llu\n"
		 "now ts: %5llu.%06llu\n"
		 "dropped events: %llu\n"
		 "read events: %llu\n",
		 (unsigned long long)st.entries, (unsigned long long)st.overrun,
		 (unsigned long long)st.bytes,
		 (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000),
		 (unsigned long long)(nus / 1000000), (unsigned long long)(nus % 1000000),
		 (unsigned long long)st.dropped, (unsigned long long)st.read);
	return sb_str(b, t);
}

static int tid_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/*
 * saved_cmdlines_show(): "<pid> <comm>" a line, for the process's threads
 * (/proc/<pid>/task), in tid order.  A thread that ends meanwhile is left out.
 */
static int text_saved_cmdlines(const struct mnode *m, struct sbuf *b)
{
	char path[64], comm[32], line[64];
	struct dirent *de;
	long *tids = NULL;
	size_t nr = 0, cap = 0, i;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)m->pid);
	d = opendir(path);
	if (!d)
		return -ENODEV;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (nr == cap) {
			long *t = realloc(tids, (cap = cap ? cap * 2 : 64) * sizeof(*t));

			if (!t) {
				err = -ENOMEM;
				break;
			}
			tids = t;
		}
		tids[nr++] = tid;
	}
	closedir(d);
	if (!err)
		qsort(tids, nr, sizeof(*tids), tid_cmp);
	for (i = 0; !err && i < nr; i++) {
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/task/%ld/comm", (int)m->pid, tids[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n <= 0)
			continue;
		comm[n] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(line, sizeof(line), "%ld %s\n", tids[i], comm);
		err = sb_str(b, line);
	}
	free(tids);
	return err;
}

static uint64_t opts_default(void)
{
	uint64_t v = 0;
	size_t k;

	for (k = 0; k < NR_TOPTS; k++)
		if (topts[k].flags & OPT_ON)
			v |= 1ULL << k;
	return v;
}

/* The options of a process directory; overwrite is the buffer's mode. */
static int opts_now(struct utrace__ctl *c, const struct mnode *m, uint64_t *opts)
{
	int mode = utrace__ctl_pool_mode(c, -1);

	if (mode < 0)
		return mode;
	*opts = mount_opts_get(m->pid, m->start, m->inst, opts_default()) &
		~(1ULL << TOPT_OVERWRITE);
	if (mode == UTRACE_MODE_OVERWRITE)
		*opts |= 1ULL << TOPT_OVERWRITE;
	return 0;
}

/* tracing_trace_options_show(): "name" or "noname", one a line. */
static int text_trace_options(struct utrace__ctl *c, const struct mnode *m, struct sbuf *b)
{
	uint64_t opts;
	size_t k;
	int err = opts_now(c, m, &opts);

	for (k = 0; !err && k < NR_TOPTS; k++) {
		if (topts[k].flags & OPT_GRAPH)
			continue;
		if (!(opts >> k & 1))
			err = sb_str(b, "no");
		if (!err)
			err = sb_str(b, topts[k].name);
		if (!err)
			err = sb_add(b, "\n", 1);
	}
	return err;
}

/* The order of the kernel's trace_clocks[] (trace.c); counter and uptime
 * are not there: utrace cannot give them. */
static const uint32_t clock_order[] = {
	UTRACE_TCLOCK_LOCAL, UTRACE_TCLOCK_GLOBAL, UTRACE_TCLOCK_PERF, UTRACE_TCLOCK_MONO,
	UTRACE_TCLOCK_MONO_RAW, UTRACE_TCLOCK_BOOT, UTRACE_TCLOCK_TAI, UTRACE_TCLOCK_X86_TSC,
};

/* tracing_clock_show(): the clocks the process can give, the one in use
 * in brackets.  As the kernel lists the clocks of its build and
 * architecture, only those are listed, so that a client that tries every
 * clock listed (ftracetest's basic3) gets what it was promised: a
 * process timed without the TSC, or of an older runtime, has mono only. */
static int text_trace_clock(struct utrace__ctl *c, struct sbuf *b)
{
	int cur = utrace__ctl_trace_clock(c, -1);
	int has = cur < 0 ? -1 : utrace__ctl_trace_clock(c, -2);
	size_t k;
	int err = 0;

	if (cur < 0 || has < 0) {
		cur = UTRACE_TCLOCK_MONO;
		has = 1 << UTRACE_TCLOCK_MONO;
	}
	for (k = 0; !err && k < sizeof(clock_order) / sizeof(clock_order[0]); k++) {
		uint32_t id = clock_order[k];
		const char *name = utrace__trace_clock_name(id);

		if (!(has >> id & 1))
			continue;
		if (b->len)
			err = sb_str(b, " ");
		if (!err && id == (uint32_t)cur)
			err = sb_str(b, "[");
		if (!err)
			err = sb_str(b, name);
		if (!err && id == (uint32_t)cur)
			err = sb_str(b, "]");
	}
	return err ? err : sb_str(b, "\n");
}

int mount_file_text(struct mfile *f, char **text, size_t *len)
{
	const struct mnode *m = &f->m;
	struct sbuf b = { 0 };
	struct utrace__ctl *c;
	uint64_t size = 0;
	char *t = NULL;
	int err;

	*text = NULL;
	*len = 0;
	switch (m->kind) {
	case MK_EV_ID:
		/* event_id_read(): no need to reach the process */
		err = text_number(&b, m->evid);
		goto out;
	case MK_CURRENT_TRACER:     /* tracing_set_trace_read() */
	case MK_AVAILABLE_TRACERS:  /* show_traces_open() */
		/* an instance's, or a runtime without function tracers: nop */
		if (m->inst || mount_ctl(m, &c) < 0) {
			err = sb_str(&b, "nop\n");
			goto out;
		}
		err = utrace__ctl_ftrace_text(c, (uint32_t)ftrace_file_id(m->kind), &t);
		utrace__ctl_close(c);
		if (err == -EOPNOTSUPP) {
			err = sb_str(&b, "nop\n");
			goto out;
		}
		err = take_text(&b, t, err);
		goto out;
	case MK_README:
		err = sb_str(&b, mount_readme);
		goto out;
	case MK_HEADER_PAGE: {      /* show_header_page_file() */
		char hp[512];

		utrace__rb_header_page(hp, sizeof(hp), UTRACE_PAGE_DATA);
		err = sb_str(&b, hp);
		goto out;
	}
	case MK_HEADER_EVENT:       /* show_header_event_file() */
		err = sb_str(&b, utrace__rb_header_event);
		goto out;
	case MK_SAVED_CMDLINES:
		err = mount_proc(m->pid, m->start, NULL, NULL, NULL, NULL) < 0 ? -ENODEV
			: text_saved_cmdlines(m, &b);
		goto out;
	default:
		break;
	}
	err = mount_ctl(m, &c);
	if (err < 0)
		return mount_gone(err, -ENODEV);
	switch (m->kind) {
	case MK_AVAILABLE_EVENTS:
		err = text_event_list(c, false, &b);
		break;
	case MK_SET_EVENT:
		err = text_event_list(c, true, &b);
		break;
	case MK_TRACING_ON:
		err = utrace__ctl_tracing_on(c, -1);
		if (err >= 0)
			err = text_number(&b, (unsigned long long)err);
		break;
	case MK_TRACE_CLOCK:
		err = text_trace_clock(c, &b);
		break;
	case MK_BUFFER_SIZE_KB:
	case MK_CPU_BUFFER_SIZE_KB:
	case MK_BUFFER_TOTAL_SIZE_KB:
		/* one buffer per process: both files show its size */
		err = utrace__ctl_buffer_size(c, 0, &size);
		if (err >= 0)
			err = text_number(&b, size >> 10);
		break;
	case MK_TRACE:
	case MK_CPU_TRACE:
		err = text_trace(c, m, &b);
		break;
	case MK_SNAPSHOT:
		err = text_snapshot(c, m, &b);
		break;
	case MK_CPU_STATS:
		err = text_stats(c, m, &b);
		break;
	case MK_ERROR_LOG:
		err = utrace__ctl_error_log(c, &t);
		err = take_text(&b, t, err);
		break;
	case MK_UPROBE_EVENTS:
	case MK_UPROBE_PROFILE:
		err = utrace__ctl_uprobe_text(c, m->kind == MK_UPROBE_PROFILE, &t);
		err = take_text(&b, t, err);
		break;
	case MK_AVAILABLE_FILTER_FUNCS:
	case MK_SET_FTRACE_FILTER:
	case MK_SET_FTRACE_NOTRACE:
	case MK_SET_GRAPH_FUNCTION:
	case MK_MAX_GRAPH_DEPTH:
	case MK_ENABLED_FUNCS:
	case MK_FUNC_PROFILE_ENABLED:
	case MK_SET_FTRACE_PID:
	case MK_SET_FTRACE_NOTRACE_PID:
		err = utrace__ctl_ftrace_text(c, (uint32_t)ftrace_file_id(m->kind), &t);
		err = take_text(&b, t, err);
		break;
	case MK_STAT_FUNCTION:  /* trace_stat/function<N> (stat_seq_show()) */
		err = utrace__ctl_ftrace_text(c, UTRACE_CTL_FT_STAT_FUNCTION | m->evid, &t);
		err = take_text(&b, t, err);
		break;
	case MK_SYNTH_EVENTS:
		err = utrace__ctl_synth_text(c, &t);
		err = take_text(&b, t, err);
		break;
	case MK_DYNAMIC_EVENTS:
		err = text_dynamic_events(c, &b);
		break;
	case MK_SET_EVENT_PID:
	case MK_SET_EVENT_NOTRACE_PID:
		err = utrace__ctl_event_pid_text(c, m->kind == MK_SET_EVENT_NOTRACE_PID, &t);
		err = take_text(&b, t, err);
		break;
	case MK_EVENTS_ENABLE:
	case MK_SYS_ENABLE:
	case MK_EV_ENABLE:
		err = text_enable(c, m, &b);
		break;
	case MK_SYS_FILTER:
		err = utrace__ctl_filter_system_text(c, m->sys, &t);
		err = take_text(&b, t, err);
		break;
	case MK_EV_FILTER:
		err = utrace__ctl_filter_text(c, m->evid, &t);
		err = take_text(&b, t, err);
		break;
	case MK_EV_TRIGGER:
	case MK_EV_HIST:
		err = utrace__ctl_trigger_text(c, m->evid, m->kind == MK_EV_HIST, &t);
		if (err == -ENOENT)
			err = -ENODEV;
		err = take_text(&b, t, err);
		break;
	case MK_EV_FORMAT:
		err = utrace__ctl_format(c, m->evid, &t);
		if (err == -ENOENT)
			err = -ENODEV;
		err = take_text(&b, t, err);
		break;
	case MK_TRACE_OPTIONS:
		err = text_trace_options(c, m, &b);
		break;
	case MK_OPTION: {           /* trace_options_core_read() */
		uint64_t opts;

		if (m->evid >= NR_TOPTS) {      /* trace_options_read(): the process's */
			err = utrace__ctl_ftrace_text(c, tracer_opts[m->evid - NR_TOPTS].file, &t);
			err = take_text(&b, t, err);
			break;
		}
		err = opts_now(c, m, &opts);
		if (!err)
			err = sb_str(&b, opts >> m->evid & 1 ? "1\n" : "0\n");
		break;
	}
	default:
		err = -EINVAL;
		break;
	}
	utrace__ctl_close(c);
out:
	if (err < 0) {
		free(b.p);
		return err;
	}
	*text = b.p;
	*len = b.len;
	return 0;
}

/* Clearing done by an open with O_TRUNC for writing, or the truncate after it. */
static int truncate_action(const struct mnode *m)
{
	struct utrace__ctl *c;
	int err;

	if (m->kind != MK_SET_EVENT && m->kind != MK_TRACE && m->kind != MK_ERROR_LOG &&
	    m->kind != MK_CPU_TRACE && m->kind != MK_SET_EVENT_PID &&
	    m->kind != MK_SET_EVENT_NOTRACE_PID && m->kind != MK_EV_TRIGGER &&
	    m->kind != MK_UPROBE_EVENTS && m->kind != MK_SYNTH_EVENTS &&
	    m->kind != MK_DYNAMIC_EVENTS && !ftrace_list(m->kind))
		return 0;
	if ((err = mount_ctl(m, &c)) < 0)
		return err;
	if (m->kind == MK_SET_EVENT)
		err = utrace__ctl_clear_events(c);       /* ftrace_event_set_open() */
	else if (ftrace_list(m->kind))
		/* ftrace_regex_open(), ftrace_graph_open(): O_TRUNC empties */
		err = utrace__ctl_ftrace_clear(c, (uint32_t)ftrace_file_id(m->kind));
	else if (m->kind == MK_EV_TRIGGER)
		/* event_trigger_regex_open(): the hist triggers go */
		err = utrace__ctl_trigger(c, m->evid, "", 1, NULL);
	else if (m->kind == MK_UPROBE_EVENTS)
		err = utrace__ctl_uprobe_clear(c);       /* probes_open(): EBUSY */
	else if (m->kind == MK_SYNTH_EVENTS)
		err = utrace__ctl_synth_clear(c);        /* synth_events_open(): EBUSY */
	else if (m->kind == MK_DYNAMIC_EVENTS) {
		/* dyn_events_release_all(): every kind */
		err = utrace__ctl_uprobe_clear(c);
		if (!err)
			err = utrace__ctl_synth_clear(c);
	}
	else if (m->kind == MK_SET_EVENT_PID || m->kind == MK_SET_EVENT_NOTRACE_PID)
		/* ftrace_event_set_pid_open() */
		err = utrace__ctl_event_pid_clear(c, m->kind == MK_SET_EVENT_NOTRACE_PID);
	else if (m->kind == MK_TRACE || m->kind == MK_CPU_TRACE) {
		/* tracing_open(): one buffer for all CPUs, all of it; the
		 * per_cpu stats count from there (live_clear()) */
		struct live *lv;

		if (live_open(&c, 1, &lv) == 0) {
			err = live_clear(lv);
			live_close(lv);
		} else {
			err = utrace__ctl_clear_buffer(c);
		}
		mount_pipe_clear(m->pid, m->start, m->inst);
	}
	else
		err = utrace__ctl_error_log_clear(c);    /* tracing_err_log_open() */
	utrace__ctl_close(c);
	return err < 0 ? err : 0;
}

int mount_file_open(struct mfile *f)
{
	if ((f->flags & O_ACCMODE) != O_RDONLY && (f->flags & O_TRUNC))
		return truncate_action(&f->m);
	return 0;
}

int mount_file_truncate(const struct mnode *m)
{
	return truncate_action(m);
}

/* A write of 0 or 1 (kstrtoul_from_user()), else EINVAL: the enable
 * files' and the options' grammar. */
static int kstrto01(const char *buf, size_t len, unsigned long long *v)
{
	int err = mount_kstrtoul_user(buf, len, v);

	return err < 0 ? err : *v > 1 ? -EINVAL : 0;
}

/* event_enable_write(), system_enable_write(): 0 or 1, else EINVAL. */
static long write_enable(const struct mnode *m, struct utrace__ctl *c, const char *buf,
			 size_t len)
{
	unsigned long long v;
	int err = kstrto01(buf, len, &v);

	if (err < 0)
		return err;
	if (m->kind == MK_EV_ENABLE) {
		err = utrace__ctl_enable(c, m->evid, (int)v);
		if (err == -ENOENT)
			err = -ENODEV;
	} else {
		err = utrace__ctl_enable_system(c, m->kind == MK_SYS_ENABLE ? m->sys : "",
						(int)v);
		/* __ftrace_set_clr_event() found nothing to switch */
		if (err == -ENOENT)
			err = -EINVAL;
	}
	return err < 0 ? err : (long)len;
}

/* ftrace_event_write(): one token per write, the bytes it took. */
static long write_set_event(struct utrace__ctl *c, const char *buf, size_t len)
{
	size_t tok, toklen;
	long read = mount_get_token(buf, len, &tok, &toklen);
	int err;

	if (read < 0 || !toklen)
		return read;
	err = utrace__ctl_set_event(c, buf + tok, toklen);
	return err < 0 ? err : read;
}

/* A trigger that takes snapshots: the snapshot command, a hist trigger's
 * snapshot() action. */
static bool wants_snapshot(const char *cmd)
{
	while (kspace((unsigned char)*cmd))
		cmd++;
	return !strncmp(cmd, "snapshot", 8) || (!strncmp(cmd, "hist", 4) &&
						 strstr(cmd, ".snapshot()"));
}

/* event_filter_write(), subsystem_filter_write(); event_trigger_write(),
 * where the whole write is one command too. */
static long write_filter(const struct mnode *m, struct utrace__ctl *c, const char *buf,
			 size_t len)
{
	char *expr;
	int err;

	if (len >= FILTER_MAX)
		return -EINVAL;
	expr = malloc(len + 1);
	if (!expr)
		return -ENOMEM;
	memcpy(expr, buf, len);
	expr[len] = '\0';
	if (m->kind == MK_EV_TRIGGER) {
		err = utrace__ctl_trigger(c, m->evid, expr, 0, NULL);
		if (err >= 0 && wants_snapshot(expr))
			/* register_snapshot_trigger(), the snapshot() action:
			 * tracing_alloc_snapshot_instance() */
			err = mount_snap_alloc(m->pid, m->start, m->inst);
	} else if (m->kind == MK_EV_FILTER) {
		err = utrace__ctl_filter(c, m->evid, expr, NULL);
	} else {
		err = utrace__ctl_filter_system(c, m->sys, expr);
		if (err == -ENOENT)
			err = -ENODEV;  /* apply_subsystem_event_filter(): no events */
	}
	free(expr);
	return err < 0 ? err : (long)len;
}

/* The agent rounds as the kernel does (whole 4080-byte pages, at least 2). */
static int write_buffer_size(struct utrace__ctl *c, uint64_t size)
{
	uint64_t now = 0;
	int err = utrace__ctl_buffer_size(c, size, &now);

	return err < 0 ? err : 0;
}

/* strstrip() of a NUL-terminated buffer: the kernel's white space both sides. */
static char *kstrip(char *s)
{
	size_t n = strlen(s);

	while (n && kspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (kspace((unsigned char)*s))
		s++;
	return s;
}

/* tracing_set_trace_write(): at most MAX_TRACER_SIZE bytes are looked at,
 * stripped; nop is the one tracer there is. */
static long write_current_tracer(const char *buf, size_t len)
{
	char tmp[TRACER_SIZE_MAX + 1];
	size_t n = len > TRACER_SIZE_MAX ? TRACER_SIZE_MAX : len;

	memcpy(tmp, buf, n);
	tmp[n] = '\0';
	return strcmp(kstrip(tmp), "nop") ? -EINVAL : (long)len;
}

/* tracing_clock_write(): shorter than 64 bytes, stripped, a clock's
 * name; tracing_set_clock() resets the buffer, the process does (and the
 * mount forgets what its trace_pipe readers held). */
static long write_trace_clock(struct utrace__ctl *c, const struct mnode *m,
			      const char *buf, size_t len)
{
	char tmp[CLOCK_BUF];
	int id, r;

	if (len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	id = utrace__trace_clock_parse(kstrip(tmp));
	if (id < 0)
		return -EINVAL;
	r = utrace__ctl_trace_clock(c, id);
	if (r == -EOPNOTSUPP)    /* an older runtime: mono only */
		return id == UTRACE_TCLOCK_MONO ? (long)len : -EINVAL;
	if (r < 0)
		return r;
	mount_pipe_clear(m->pid, m->start, m->inst);
	return (long)len;
}

/* set_tracer_flag() and nop_set_flag() for option 'k'. */
static int set_option(struct utrace__ctl *c, const struct mnode *m, size_t k, bool on)
{
	uint64_t opts;
	int err;

	if (topts[k].flags & OPT_REFUSE)
		return -EINVAL;
	if (k == TOPT_OVERWRITE) {
		err = utrace__ctl_pool_mode(c, on ? UTRACE_MODE_OVERWRITE : UTRACE_MODE_DISCARD);
		return err < 0 ? err : 0;
	}
	opts = mount_opts_get(m->pid, m->start, m->inst, opts_default());
	opts = on ? opts | 1ULL << k : opts & ~(1ULL << k);
	mount_opts_set(m->pid, m->start, m->inst, opts);
	return 0;
}

/* tracing_trace_options_write(), trace_set_options(): one name, "no" to clear. */
static long write_trace_options(struct utrace__ctl *c, const struct mnode *m,
				const char *buf, size_t len)
{
	char tmp[CLOCK_BUF], *s;
	bool neg = false;
	size_t k;
	int err;

	if (len >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, buf, len);
	tmp[len] = '\0';
	s = kstrip(tmp);
	if (!strncmp(s, "no", 2)) {
		neg = true;
		s += 2;
	}
	for (k = 0; k < NR_TOPTS; k++)
		if (!strcmp(topts[k].name, s))
			break;
	if (k == NR_TOPTS)
		return -EINVAL;
	err = set_option(c, m, k, !neg);
	return err < 0 ? err : (long)len;
}

/* trace_options_core_write(), trace_options_write(): 0 or 1. */
static long write_option(struct utrace__ctl *c, const struct mnode *m, const char *buf,
			 size_t len)
{
	unsigned long long v;
	int err = kstrto01(buf, len, &v);

	if (err < 0)
		return err;
	if (m->evid >= NR_TOPTS) {
		err = utrace__ctl_ftrace_write(c, tracer_opts[m->evid - NR_TOPTS].file,
					       v ? "1" : "0", 1);
		return err < 0 ? err : (long)len;
	}
	/* trace_options_write(): a tracer's option is asked only to change */
	if (topts[m->evid].flags & OPT_NOP) {
		uint64_t opts = mount_opts_get(m->pid, m->start, m->inst, opts_default());

		if ((opts >> m->evid & 1) == v)
			return (long)len;
	}
	err = set_option(c, m, m->evid, v);
	return err < 0 ? err : (long)len;
}

/*
 * tracing_mark_write(), tracing_mark_raw_write(): refused while the
 * markers option is off; the agent records the event and cuts or refuses
 * as the kernel does (utrace__marker_record()).
 */
static long write_marker(const struct mnode *m, const char *buf, size_t len)
{
	uint64_t opts = mount_opts_get(m->pid, m->start, m->inst, opts_default());
	struct utrace__ctl *c;
	int err;

	if (!(opts >> TOPT_MARKERS & 1))
		return -EINVAL;
	/* more than a record holds: the agent would cut or refuse it alike */
	if (len > MARKER_SEND_MAX) {
		if (m->kind == MK_TRACE_MARKER_RAW)
			return -EINVAL;
		len = MARKER_SEND_MAX;
	}
	if ((err = mount_ctl(m, &c)) < 0)
		return mount_gone(err, -ENODEV);
	err = utrace__ctl_marker(c, m->kind == MK_TRACE_MARKER_RAW, buf, len);
	utrace__ctl_close(c);
	return err;
}

/*
 * set_event_pid, set_event_notrace_pid: ftrace_event_pid_write().  A write
 * longer than a request holds is taken up to its last white space there
 * (a short write; the writer sends the rest as the next).
 */
static long write_event_pid(struct utrace__ctl *c, int notrace, const char *buf, size_t len)
{
	size_t n = len;

	if (n > UTRACE_CTL_EVENT_PID_MAX) {
		n = UTRACE_CTL_EVENT_PID_MAX;
		while (n && !isspace((unsigned char)buf[n - 1]))
			n--;
		if (!n)
			return -EINVAL;     /* a number far longer than the kernel's 127 bytes */
	}
	return utrace__ctl_event_pid_add(c, notrace, buf, n);
}

long mount_file_write(struct mfile *f, const char *buf, size_t len)
{
	const struct mnode *m = &f->m;
	struct utrace__ctl *c;
	unsigned long long v;
	long ret;
	int err;

	switch (m->kind) {
	case MK_TRACE:          /* tracing_write_stub() */
	case MK_CPU_TRACE:
	case MK_ERROR_LOG:      /* tracing_err_log_write() */
		return (long)len;
	case MK_CURRENT_TRACER:
		if (m->inst)
			return write_current_tracer(buf, len);
		break;
	case MK_TRACE_MARKER:
	case MK_TRACE_MARKER_RAW:
		return write_marker(m, buf, len);
	case MK_TRACE_CLOCK:
	case MK_TRACE_OPTIONS:
	case MK_OPTION:
	case MK_SET_EVENT:
	case MK_SET_EVENT_PID:
	case MK_SET_EVENT_NOTRACE_PID:
	case MK_TRACING_ON:
	case MK_BUFFER_SIZE_KB:
	case MK_CPU_BUFFER_SIZE_KB:
	case MK_EVENTS_ENABLE:
	case MK_SYS_ENABLE:
	case MK_SYS_FILTER:
	case MK_EV_ENABLE:
	case MK_EV_FILTER:
	case MK_EV_TRIGGER:
	case MK_UPROBE_EVENTS:
	case MK_SYNTH_EVENTS:
	case MK_DYNAMIC_EVENTS:
	case MK_SNAPSHOT:
	case MK_SET_FTRACE_FILTER:
	case MK_SET_FTRACE_NOTRACE:
	case MK_SET_GRAPH_FUNCTION:
	case MK_MAX_GRAPH_DEPTH:
	case MK_FUNC_PROFILE_ENABLED:
	case MK_SET_FTRACE_PID:
	case MK_SET_FTRACE_NOTRACE_PID:
		break;
	default:
		return -EINVAL;  /* a file without a write operation */
	}
	if ((ret = mount_ctl(m, &c)) < 0)
		return mount_gone((int)ret, -ENODEV);
	switch (m->kind) {
	case MK_TRACE_CLOCK:
		ret = write_trace_clock(c, m, buf, len);
		break;
	case MK_SET_EVENT:
		ret = write_set_event(c, buf, len);
		break;
	case MK_SET_EVENT_PID:
	case MK_SET_EVENT_NOTRACE_PID:
		ret = write_event_pid(c, m->kind == MK_SET_EVENT_NOTRACE_PID, buf, len);
		break;
	case MK_TRACING_ON:     /* rb_simple_write(): any number, non-zero is on */
		err = mount_kstrtoul_user(buf, len, &v);
		if (!err)
			err = utrace__ctl_tracing_on(c, v != 0);
		ret = err < 0 ? err : (long)len;
		break;
	case MK_BUFFER_SIZE_KB: /* tracing_entries_write(): KiB, 0 is EINVAL */
	case MK_CPU_BUFFER_SIZE_KB:     /* the one buffer of every CPU */
		err = mount_kstrtoul_user(buf, len, &v);
		if (!err && (!v || v > (~0ULL >> 10)))
			err = -EINVAL;
		if (!err)
			err = write_buffer_size(c, v << 10);
		ret = err < 0 ? err : (long)len;
		break;
	case MK_EVENTS_ENABLE:
	case MK_SYS_ENABLE:
	case MK_EV_ENABLE:
		ret = write_enable(m, c, buf, len);
		break;
	case MK_TRACE_OPTIONS:
		ret = write_trace_options(c, m, buf, len);
		break;
	case MK_OPTION:
		ret = write_option(c, m, buf, len);
		break;
	case MK_UPROBE_EVENTS:  /* probes_write(): the lines in order, all taken */
		err = utrace__ctl_uprobe_write(c, buf, len);
		ret = err < 0 ? err : (long)len;
		break;
	case MK_SNAPSHOT:
		ret = write_snapshot(c, m, buf, len);
		break;
	case MK_CURRENT_TRACER: {
		/* tracing_set_trace_write(): MAX_TRACER_SIZE bytes, stripped */
		char tmp[TRACER_SIZE_MAX + 1];
		size_t n = len > TRACER_SIZE_MAX ? TRACER_SIZE_MAX : len;

		memcpy(tmp, buf, n);
		tmp[n] = '\0';
		err = utrace__ctl_ftrace_write(c, UTRACE_CTL_FT_CURRENT_TRACER, kstrip(tmp),
					       strlen(kstrip(tmp)));
		if (err == -EOPNOTSUPP)
			ret = write_current_tracer(buf, len);
		else
			ret = err < 0 ? err : (long)len;
		break;
	}
	case MK_SET_FTRACE_FILTER:
	case MK_SET_FTRACE_NOTRACE:
	case MK_SET_GRAPH_FUNCTION:
	case MK_MAX_GRAPH_DEPTH:
	case MK_FUNC_PROFILE_ENABLED:
	case MK_SET_FTRACE_PID:
	case MK_SET_FTRACE_NOTRACE_PID:
		err = utrace__ctl_ftrace_write(c, (uint32_t)ftrace_file_id(m->kind), buf, len);
		ret = err < 0 ? err : (long)len;
		break;
	case MK_SYNTH_EVENTS:   /* synth_events_write(): the lines in order */
		err = utrace__ctl_synth_write(c, buf, len);
		ret = err < 0 ? err : (long)len;
		break;
	case MK_DYNAMIC_EVENTS: /* dyn_event_write(): the lines in order */
		err = write_dynamic_events(c, buf, len);
		ret = err < 0 ? err : (long)len;
		break;
	default:
		ret = write_filter(m, c, buf, len);
		break;
	}
	utrace__ctl_close(c);
	return ret;
}
