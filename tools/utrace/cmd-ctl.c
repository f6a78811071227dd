/* SPDX-License-Identifier: MIT */
/*
 * The commands that act on running processes through their agents:
 *   utrace ps                         the traceable processes
 *   utrace list [-p PID|-a] [PATTERN] their events (available_events)
 *   utrace enable|disable -p PID EVENTS...
 *   utrace filter -p PID EVENT|SYSTEM EXPR
 *   utrace trigger -p PID EVENT [COMMAND]
 *   utrace show|pipe|clear -p PID...|-a
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl-client.h"
#include "cmds.h"
#include "kevents.h"
#include "live.h"

struct targets {
	pid_t *pids;
	size_t nr;
	bool all;
	bool all_users;        /* --all-users: -a takes every user's (root) */
	struct utrace__ctl **c;
	size_t nr_c;
};

static int add_pid(struct targets *t, const char *cmd, const char *arg)
{
	pid_t v, *p;

	if (!parse_pid(arg, &v))
		return usage_error(cmd, "'%s' is not a process id", arg);
	p = realloc(t->pids, (t->nr + 1) * sizeof(*p));
	if (!p) {
		fprintf(stderr, "utrace: out of memory\n");
		return 1;
	}
	t->pids = p;
	t->pids[t->nr++] = v;
	return 0;
}

/* Connect to the chosen processes; 0, or the exit status. */
static int connect_targets(struct targets *t, bool need_one)
{
	char err[512];
	size_t i;

	if (t->all) {
		struct utrace__ctl_proc *ps;
		size_t n;

		if (utrace__ctl_list(&ps, &n, t->all_users ? UTRACE__CTL_ALL_USERS : 0) < 0) {
			fprintf(stderr, "utrace: --all-users: only root may see other users' "
				"processes\n");
			return 1;
		}
		for (i = 0; i < n; i++) {
			pid_t *p = realloc(t->pids, (t->nr + 1) * sizeof(*p));

			if (!p)
				break;
			t->pids = p;
			t->pids[t->nr++] = ps[i].pid;
		}
		free(ps);
		if (!t->nr && need_one) {
			fprintf(stderr, "utrace: no traceable process is running\n");
			return 1;
		}
	}
	t->c = calloc(t->nr ? t->nr : 1, sizeof(*t->c));
	if (!t->c) {
		fprintf(stderr, "utrace: out of memory\n");
		return 1;
	}
	for (i = 0; i < t->nr; i++) {
		if (utrace__ctl_open(t->pids[i], &t->c[t->nr_c], err, sizeof(err)) < 0) {
			if (t->all)
				continue;   /* it exited meanwhile */
			fprintf(stderr, "utrace: %s\n", err);
			return 1;
		}
		t->nr_c++;
	}
	return 0;
}

static void free_targets(struct targets *t)
{
	size_t i;

	for (i = 0; i < t->nr_c; i++)
		utrace__ctl_close(t->c[i]);
	free(t->c);
	free(t->pids);
}

static int ctl_fail(struct utrace__ctl *c, int r, const char *what)
{
	const char *m = utrace__ctl_errmsg(c);

	if (m && *m)
		fprintf(stderr, "utrace: %s\n", m);
	else
		fprintf(stderr, "utrace: process %d: %s: %s\n", (int)utrace__ctl_pid(c),
			what, strerror(-r));
	return 1;
}

/* getopt's code of --all-users (no short option) */
#define OPT_ALL_USERS 0x100

/*
 * Common options: -p PID (repeatable), -a, --all-users, -h.  'extra' are the command's
 * own short options handled by 'opt'.
 */
struct cmd_desc {
	const char *name;
	const char *usage;
	bool pids;             /* takes -p/-a */
};

static int parse_common(const struct cmd_desc *d, int argc, char **argv,
			struct targets *t, const char *extra,
			const struct option *extra_long, int (*opt)(int c, void *arg),
			void *arg)
{
	struct option longopts[16] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "all-users", no_argument, NULL, OPT_ALL_USERS },
	};
	char shortopts[64];
	int c, n = 4, r;

	for (; extra_long && extra_long->name && n < 15; extra_long++)
		longopts[n++] = *extra_long;
	snprintf(shortopts, sizeof(shortopts), ":%sh%s", d->pids ? "p:a" : "",
		 extra ? extra : "");
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!d->pids)
				return usage_error(d->name, "unknown option '%s'", "-p");
			if ((r = add_pid(t, d->name, optarg)))
				return r;
			break;
		case 'a':
			if (!d->pids)
				return usage_error(d->name, "unknown option '%s'", "-a");
			t->all = true;
			break;
		case OPT_ALL_USERS:
			if (!d->pids && strcmp(d->name, "ps"))
				return usage_error(d->name, "unknown option '%s'", "--all-users");
			t->all_users = true;
			break;
		case 'h':
			fputs(d->usage, stdout);
			return -1;
		case ':':
			return usage_error(d->name, "option '%s' needs a value",
					   argv[optind - 1]);
		case '?':
			return usage_error(d->name, "unknown option '%s'", argv[optind - 1]);
		default:
			if (!opt || (r = opt(c, arg)))
				return opt ? r : usage_error(d->name, "unknown option '%s'",
							     argv[optind - 1]);
		}
	}
	if (t->all && t->nr)
		return usage_error(d->name, "%s", "-a and -p do not go together");
	if (t->all_users && t->nr)
		return usage_error(d->name, "%s", "--all-users and -p do not go together");
	if (t->all_users && d->pids)
		t->all = true;
	return 0;
}

/* --- ps --- */

static const struct cmd_desc ps_desc = { "ps",
	"usage: utrace ps [--all-users]\n"
	"\n"
	"List the running processes that can be traced (they use libutrace and\n"
	"have events) in the runtime directory ($UTRACE_RUNTIME_DIR, else\n"
	"$XDG_RUNTIME_DIR/utrace, else /tmp/utrace-UID).  --all-users (root):\n"
	"every user's processes, wherever their runtime directory is.\n"
	"\n"
	"  PID      the process\n"
	"  COMMAND  its name\n"
	"  EVENTS   events it has\n"
	"  ON       events switched on\n"
	"  BUFFER   its buffer's size ('-' while it has none)\n"
	"  USED     how much of the buffer holds events\n"
	"  LOST     events lost (buffer full, or overwritten)\n"
	"  SITES    its tracepoint call sites: 'nop:N', N sites that are a 5-byte\n"
	"           NOP while their event is off (jump labels); 'branch:N', N\n"
	"           sites that load and test a flag (built without jump labels,\n"
	"           UTRACE_NO_JUMP_LABEL set, or code that cannot be written);\n"
	"           both when they differ by object; '-' for none\n"
	"\n"
	"A process is asked for at most 1 s, and all of them for 2 s at most: one\n"
	"that does not answer in time (stopped, or busy) is listed with '?'.\n", false };

/* ps: how long one process, and all of them, may take to answer */
#define PS_PROC_TIMEOUT_MS 1000
#define PS_TOTAL_TIMEOUT_MS 2000

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void human(char *buf, size_t len, uint64_t v)
{
	if (v >= (1ull << 30))
		snprintf(buf, len, "%.1fG", (double)v / (1ull << 30));
	else if (v >= (1ull << 20))
		snprintf(buf, len, "%.1fM", (double)v / (1ull << 20));
	else if (v >= 1024)
		snprintf(buf, len, "%.1fK", (double)v / 1024);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* ps's SITES column: "nop:N", "branch:N", both, or "-" */
static void sites_text(char *buf, size_t len, const struct utrace__ctl_info *in)
{
	if (in->jump_sites && in->branch_sites)
		snprintf(buf, len, "nop:%u,branch:%u", in->jump_sites, in->branch_sites);
	else if (in->jump_sites)
		snprintf(buf, len, "nop:%u", in->jump_sites);
	else if (in->branch_sites)
		snprintf(buf, len, "branch:%u", in->branch_sites);
	else
		snprintf(buf, len, "-");
}

int cmd_ps(int argc, char **argv)
{
	struct targets t = { 0 };
	struct utrace__ctl_proc *ps;
	size_t n, i;
	int r = parse_common(&ps_desc, argc, argv, &t, NULL, NULL, NULL, NULL);

	if (r)
		return r < 0 ? 0 : r;
	if (optind < argc)
		return usage_error("ps", "unexpected argument '%s'", argv[optind]);
	if (utrace__ctl_list(&ps, &n, t.all_users ? UTRACE__CTL_ALL_USERS : 0) < 0) {
		fprintf(stderr, "utrace: --all-users: only root may see other users' processes\n");
		free_targets(&t);
		return 1;
	}
	printf("%7s %-16s %6s %5s %7s %5s %10s %s\n", "PID", "COMMAND", "EVENTS", "ON",
	       "BUFFER", "USED", "LOST", "SITES");
	/* Bounded whatever the processes do: each gets PS_PROC_TIMEOUT_MS,
	 * less when the total is nearly spent; once it is, the rest are
	 * listed without asking. */
	long long end = ms_now() + PS_TOTAL_TIMEOUT_MS;

	for (i = 0; i < n; i++) {
		struct utrace__ctl *c;
		struct utrace__ctl_info in;
		long long left = end - ms_now();
		char buf[32];

		if (left <= 0) {
			printf("%7d %-16s %6s %5s %7s %5s %10s ?\n", (int)ps[i].pid, ps[i].comm,
			       "?", "?", "?", "?", "?");
			continue;
		}
		r = utrace__ctl_open_wait(ps[i].pid, &c, NULL, 0, left < PS_PROC_TIMEOUT_MS ?
					  (int)left : PS_PROC_TIMEOUT_MS);
		if (r == -EBUSY) {      /* there, but its agent is busy */
			printf("%7d %-16s %6s %5s %7s %5s %10s ?\n", (int)ps[i].pid, ps[i].comm,
			       "?", "?", "?", "?", "?");
			continue;
		}
		if (r < 0)
			continue;
		left = end - ms_now();
		utrace__ctl_set_timeout(c, left < 1 ? 1 : left < PS_PROC_TIMEOUT_MS ? (int)left :
					PS_PROC_TIMEOUT_MS);
		if (utrace__ctl_info(c, &in) != 0) {
			printf("%7d %-16s %6s %5s %7s %5s %10s ?\n", (int)ps[i].pid, ps[i].comm,
			       "?", "?", "?", "?", "?");
		} else {
			if (in.has_pool)
				human(buf, sizeof(buf), in.buffer_size);
			else
				snprintf(buf, sizeof(buf), "-");
			char sites[48];

			sites_text(sites, sizeof(sites), &in);
			printf("%7u %-16s %6u %5u %7s %4llu%% %10llu %s\n", in.pid, in.comm,
			       in.nr_events, in.nr_enabled, buf,
			       in.nr_pages ? (unsigned long long)(in.pages_used * 100 /
								  in.nr_pages) : 0ull,
			       (unsigned long long)in.lost, sites);
		}
		utrace__ctl_close(c);
	}
	free(ps);
	free_targets(&t);
	return 0;
}

/* --- list --- */

static const struct cmd_desc list_desc = { "list",
	"usage: utrace list [-p PID... | -a] [PATTERN]\n"
	"       utrace list -p PID --format EVENT\n"
	"       utrace list -k [PATTERN]\n"
	"\n"
	"Print the events of running processes as the kernel's available_events\n"
	"does: one 'system:event' line each, in registration order.  Without -p,\n"
	"the events of every traceable process, each once.\n"
	"\n"
	"  -p, --pid PID       this process (may repeat)\n"
	"  -a, --all           every traceable process of the runtime directory\n"
	"                      (the default)\n"
	"      --all-users     -a for root: every user's processes\n"
	"  PATTERN             only events whose 'system:event' matches this glob\n"
	"      --format EVENT  print the event's format file instead\n"
	"                      (EVENT is system:event or event)\n"
	"  -k, --kernel        the kernel's events instead (its tracefs\n"
	"                      available_events), which utrace record -e takes\n", true };

static int list_opt(int c, void *arg)
{
	if (c != 'F')
		return 129;
	*(const char **)arg = optarg;
	return 0;
}

static bool event_is(const struct utrace__ctl_event *e, const char *spec)
{
	const char *colon = strchr(spec, ':');

	if (!colon)
		return !strcmp(e->name, spec);
	return !strncmp(e->system, spec, (size_t)(colon - spec)) &&
	       !e->system[colon - spec] && !strcmp(e->name, colon + 1);
}

int cmd_list(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "format", required_argument, NULL, 'F' }, { NULL, 0, NULL, 0 } };
	struct targets t = { 0 };
	const char *format = NULL, *pattern = NULL;
	char **seen = NULL;
	size_t nr_seen = 0, i, j, k;
	int r, status = 0;
	bool found = false;

	/* -k: the kernel's events (kevents.c), no process asked */
	for (i = 1; i < (size_t)argc && strcmp(argv[i], "--"); i++) {
		if (strcmp(argv[i], "-k") && strcmp(argv[i], "--kernel"))
			continue;
		if (argc > 3 || (argc == 3 && argv[i == 1 ? 2 : 1][0] == '-'))
			return usage_error("list", "%s takes only a PATTERN", argv[i]);
		return kev_list(argc == 3 ? argv[i == 1 ? 2 : 1] : NULL);
	}
	r = parse_common(&list_desc, argc, argv, &t, NULL, lo, list_opt, &format);
	if (r)
		return r < 0 ? 0 : r;
	if (optind < argc)
		pattern = argv[optind++];
	if (optind < argc)
		return usage_error("list", "unexpected argument '%s'", argv[optind]);
	if (!t.nr)
		t.all = true;
	if ((r = connect_targets(&t, format != NULL))) {
		free_targets(&t);
		return r;
	}
	for (i = 0; i < t.nr_c && !(format && found); i++) {
		struct utrace__ctl_event *evs;
		size_t nr;

		r = utrace__ctl_events(t.c[i], &evs, &nr);
		if (r < 0) {
			if (!t.all)
				status = ctl_fail(t.c[i], r, "cannot list its events");
			continue;
		}
		for (j = 0; j < nr; j++) {
			char name[512];

			if (format) {
				char *text;

				if (!event_is(&evs[j], format))
					continue;
				found = true;
				r = utrace__ctl_format(t.c[i], evs[j].id, &text);
				if (r < 0) {
					status = ctl_fail(t.c[i], r, "cannot read the format");
					break;
				}
				fputs(text, stdout);
				free(text);
				break;
			}
			if (utrace__ctl_event_is_ftrace(&evs[j]))
				continue;
			snprintf(name, sizeof(name), "%s:%s", evs[j].system, evs[j].name);
			if (pattern && fnmatch(pattern, name, 0))
				continue;
			for (k = 0; k < nr_seen; k++)
				if (!strcmp(seen[k], name))
					break;
			if (k < nr_seen)
				continue;
			char **s = realloc(seen, (nr_seen + 1) * sizeof(*s));

			if (s) {
				seen = s;
				seen[nr_seen] = strdup(name);
				if (seen[nr_seen])
					nr_seen++;
			}
			found = true;
			puts(name);
		}
		utrace__ctl_events_free(evs, nr);
	}
	if (format && !found && !status) {
		fprintf(stderr, "utrace: no event '%s' in the process%s\n", format,
			t.nr_c > 1 ? "es" : "");
		status = 1;
	}
	for (k = 0; k < nr_seen; k++)
		free(seen[k]);
	free(seen);
	free_targets(&t);
	return status;
}

/* --- enable, disable --- */

static const struct cmd_desc enable_desc = { "enable",
	"usage: utrace enable -p PID... EVENTS...\n"
	"\n"
	"Switch events on in running processes, at once, as writing them to the\n"
	"kernel's set_event does.  EVENTS in set_event syntax: system:event,\n"
	"system:* (or system:), *:event (or :event), a bare system or event name,\n"
	"*:*; a '!' prefix switches off.  Each may also be ',' separated.\n"
	"\n"
	"  -p, --pid PID   this process (may repeat)\n"
	"  -a, --all       every traceable process of the runtime directory\n"
	"      --all-users -a for root: every user's processes\n", true };

static const struct cmd_desc disable_desc = { "disable",
	"usage: utrace disable -p PID... EVENTS...\n"
	"\n"
	"Switch events off in running processes (set_event syntax, as for\n"
	"'utrace enable').\n"
	"\n"
	"  -p, --pid PID   this process (may repeat)\n"
	"  -a, --all       every traceable process of the runtime directory\n"
	"      --all-users -a for root: every user's processes\n", true };

static int enable_cmd(const struct cmd_desc *d, int argc, char **argv, bool on)
{
	struct targets t = { 0 };
	int r = parse_common(d, argc, argv, &t, NULL, NULL, NULL, NULL), status = 0;
	size_t i;
	int a;

	if (r)
		return r < 0 ? 0 : r;
	if (!t.nr && !t.all)
		return usage_error(d->name, "%s", "which process? give -p PID or -a");
	if (optind >= argc)
		return usage_error(d->name, "%s", "no events given");
	if ((r = connect_targets(&t, true))) {
		free_targets(&t);
		return r;
	}
	for (a = optind; a < argc; a++) {
		char *copy = strdup(argv[a]), *save = NULL, *tok;

		if (!copy)
			break;
		for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
			char buf[512];
			bool any = false;

			if ((size_t)snprintf(buf, sizeof(buf), "%s%s", on ? "" : "!", tok) >=
			    sizeof(buf)) {
				fprintf(stderr, "utrace: event name too long: '%s'\n", tok);
				status = 1;
				continue;
			}
			if (!on && tok[0] == '!')
				snprintf(buf, sizeof(buf), "%s", tok + 1);
			for (i = 0; i < t.nr_c; i++) {
				r = utrace__ctl_set_event(t.c[i], buf, strlen(buf));
				if (r > 0)
					any = true;
				else if (r != -EINVAL)
					status = ctl_fail(t.c[i], r, "cannot change events");
			}
			if (!any && !status) {
				fprintf(stderr, "utrace: no event matches '%s'%s\n", tok,
					t.nr_c == 1 ? "" : " in any of the processes");
				status = 1;
			}
		}
		free(copy);
	}
	free_targets(&t);
	return status;
}

int cmd_enable(int argc, char **argv)
{
	return enable_cmd(&enable_desc, argc, argv, true);
}

int cmd_disable(int argc, char **argv)
{
	return enable_cmd(&disable_desc, argc, argv, false);
}

/* --- filter --- */

static const struct cmd_desc filter_desc = { "filter",
	"usage: utrace filter -p PID... EVENT|SYSTEM EXPR\n"
	"\n"
	"Set the filter of an event (system:event or event) or of every event of\n"
	"a system, in the kernel's filter language (see utrace-filter(1)):\n"
	"  utrace filter -p 1234 sample:sample_work 'count > 10 && name ~ \"job*\"'\n"
	"EXPR '0' removes the filter.  A bad expression is refused with the\n"
	"kernel's message and a caret under the place of the error.\n"
	"\n"
	"  -p, --pid PID   this process (may repeat)\n"
	"  -a, --all       every traceable process of the runtime directory\n"
	"      --all-users -a for root: every user's processes\n", true };

int cmd_filter(int argc, char **argv)
{
	struct targets t = { 0 };
	int r = parse_common(&filter_desc, argc, argv, &t, NULL, NULL, NULL, NULL);
	const char *what, *expr;
	int status = 0;
	size_t i, j;

	if (r)
		return r < 0 ? 0 : r;
	if (!t.nr && !t.all)
		return usage_error("filter", "%s", "which process? give -p PID or -a");
	if (argc - optind != 2)
		return usage_error("filter", "%s", "give an EVENT or SYSTEM and one EXPR "
				   "(quote it)");
	what = argv[optind];
	expr = argv[optind + 1];
	if ((r = connect_targets(&t, true))) {
		free_targets(&t);
		return r;
	}
	for (i = 0; i < t.nr_c; i++) {
		struct utrace__ctl_event *evs;
		size_t nr;
		bool done = false, is_sys = false;

		r = utrace__ctl_events(t.c[i], &evs, &nr);
		if (r < 0) {
			status = ctl_fail(t.c[i], r, "cannot list its events");
			continue;
		}
		for (j = 0; j < nr && !done; j++) {
			struct utrace__ctl_filter_error fe;

			if (!strchr(what, ':') && !strcmp(evs[j].system, what))
				is_sys = true;
			if (!event_is(&evs[j], what))
				continue;
			done = true;
			r = utrace__ctl_filter(t.c[i], evs[j].id, expr, &fe);
			if (r >= 0)
				continue;
			if (utrace__ctl_errmsg(t.c[i])[0]) {
				status = ctl_fail(t.c[i], r, "cannot set the filter");
				continue;
			}
			/* The kernel's message, and the expression with a
			 * caret under the error. */
			fprintf(stderr, "utrace: process %d: bad filter for '%s:%s': %s\n",
				(int)utrace__ctl_pid(t.c[i]), evs[j].system, evs[j].name,
				fe.msg[0] ? fe.msg : "Error: (0)");
			fprintf(stderr, "  %s\n  %*s^\n", expr, fe.msg[0] ? fe.pos : 0, "");
			status = 1;
		}
		if (!done && is_sys) {
			done = true;
			r = utrace__ctl_filter_system(t.c[i], what, expr);
			if (r < 0)
				status = ctl_fail(t.c[i], r, "cannot set the filter");
			else {
				/* As the kernel, a system filter always
				 * "succeeds"; say which events refused it. */
				for (j = 0; j < nr; j++) {
					char *text;

					if (strcmp(evs[j].system, what) ||
					    utrace__ctl_filter_text(t.c[i], evs[j].id, &text) < 0)
						continue;
					if (strstr(text, "parse_error:"))
						fprintf(stderr, "utrace: process %d: '%s:%s' "
							"has no such fields: left unfiltered\n",
							(int)utrace__ctl_pid(t.c[i]),
							evs[j].system, evs[j].name);
					free(text);
				}
			}
		}
		if (!done) {
			fprintf(stderr, "utrace: process %d has no event or system '%s'\n",
				(int)utrace__ctl_pid(t.c[i]), what);
			status = 1;
		}
		utrace__ctl_events_free(evs, nr);
	}
	free_targets(&t);
	return status;
}

/* --- trigger --- */

static const struct cmd_desc trigger_desc = { "trigger",
	"usage: utrace trigger -p PID... EVENT [COMMAND]\n"
	"\n"
	"Write COMMAND to the trigger file of an event (system:event or event) of\n"
	"running processes, as 'echo COMMAND > events/SYS/EVENT/trigger' does in the\n"
	"kernel's tracefs; without COMMAND, print the trigger file.  Commands, each\n"
	"with an optional count and filter, '!' in front removes one:\n"
	"  hist:keys=FIELD[.MOD],...[:vals=...][:sort=...][:size=N][:pause][:cont]\n"
	"       [:clear][:name=NAME] [if FILTER]   aggregate in the process\n"
	"       [:VAR=EXPR][:onmatch(SYS.EVENT).trace(SYNTH,PARAM,...)]  variables\n"
	"       and synthetic events (the mount's synthetic_events)\n"
	"       [:onmax($VAR).save(FIELD,...)|.trace(...)|.snapshot()][:onchange(...)...]\n"
	"  traceon[:N] [if FILTER]      switch tracing_on on\n"
	"  traceoff[:N] [if FILTER]     switch tracing_on off\n"
	"  stacktrace[:N] [if FILTER]   record the thread's stack (ftrace:user_stack)\n"
	"  snapshot[:N] [if FILTER]     copy the buffer (the mount's snapshot file)\n"
	"  enable_event:SYS:EVENT[:N] [if FILTER]    switch another event on\n"
	"  disable_event:SYS:EVENT[:N] [if FILTER]   switch another event off\n"
	"  enable_hist:SYS:EVENT[:N] [if FILTER]     run another event's hist triggers\n"
	"  disable_hist:SYS:EVENT[:N] [if FILTER]    pause another event's hist triggers\n"
	"The tables of the hist triggers: utrace hist -p PID EVENT.  A command the\n"
	"kernel refuses is refused with its errno and its error_log entry.\n"
	"See utrace-trigger(1).\n"
	"\n"
	"  -p, --pid PID   this process (may repeat)\n"
	"  -a, --all       every traceable process of the runtime directory\n"
	"      --all-users -a for root: every user's processes\n", true };

/* Find the event 'what' in process c: 0 and its id, or 1 (said). */
static int find_event_id(struct utrace__ctl *c, const char *what, uint32_t *id)
{
	struct utrace__ctl_event *evs;
	size_t nr, j;
	int r = utrace__ctl_events(c, &evs, &nr);

	if (r < 0)
		return ctl_fail(c, r, "cannot list its events");
	for (j = 0; j < nr; j++)
		if (!utrace__ctl_event_is_ftrace(&evs[j]) && event_is(&evs[j], what))
			break;
	if (j < nr)
		*id = evs[j].id;
	utrace__ctl_events_free(evs, nr);
	if (j < nr)
		return 0;
	fprintf(stderr, "utrace: process %d has no event '%s'\n", (int)utrace__ctl_pid(c), what);
	return 1;
}

/* Print the trigger (hist false) or hist file of 'what' in each process. */
static int trigger_show(struct targets *t, const char *what, bool hist)
{
	int status = 0, r;
	size_t i;

	for (i = 0; i < t->nr_c; i++) {
		uint32_t id;
		char *text;

		if (find_event_id(t->c[i], what, &id)) {
			status = 1;
			continue;
		}
		r = utrace__ctl_trigger_text(t->c[i], id, hist, &text);
		if (r < 0) {
			status = ctl_fail(t->c[i], r, hist ? "cannot read the hist file" :
					  "cannot read the trigger file");
			continue;
		}
		if (t->nr_c > 1)
			printf("# process %d\n", (int)utrace__ctl_pid(t->c[i]));
		fputs(text, stdout);
		free(text);
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	return status;
}

int cmd_trigger(int argc, char **argv)
{
	struct targets t = { 0 };
	int r = parse_common(&trigger_desc, argc, argv, &t, NULL, NULL, NULL, NULL);
	const char *what, *cmd;
	int status = 0;
	size_t i;

	if (r) {
		free_targets(&t);
		return r < 0 ? 0 : r;
	}
	if (!t.nr && !t.all)
		return usage_error("trigger", "%s", "which process? give -p PID or -a");
	if (argc - optind < 1 || argc - optind > 2) {
		free_targets(&t);
		return usage_error("trigger", "%s", "give an EVENT and at most one COMMAND "
				   "(quote it)");
	}
	what = argv[optind];
	cmd = argc - optind == 2 ? argv[optind + 1] : NULL;
	if ((r = connect_targets(&t, true))) {
		free_targets(&t);
		return r;
	}
	if (!cmd) {
		status = trigger_show(&t, what, false);
		free_targets(&t);
		return status;
	}
	for (i = 0; i < t.nr_c; i++) {
		uint32_t id;
		char *log = NULL;

		if (find_event_id(t.c[i], what, &id)) {
			status = 1;
			continue;
		}
		r = utrace__ctl_trigger(t.c[i], id, cmd, 0, &log);
		if (r < 0 && utrace__ctl_errmsg(t.c[i])[0]) {
			status = ctl_fail(t.c[i], r, "cannot set the trigger");
		} else if (r < 0) {
			/* what `echo CMD > trigger` says, and the kernel's
			 * error_log entry */
			fprintf(stderr, "utrace: process %d: trigger '%s' for '%s' refused: %s%s\n",
				(int)utrace__ctl_pid(t.c[i]), cmd, what, strerror(-r),
				log ? "; error_log:" : "");
			if (log)
				fputs(log, stderr);
			status = 1;
		}
		free(log);
	}
	free_targets(&t);
	return status;
}

/* utrace hist -p PID... EVENT: the live hist file of running processes. */
int cmd_hist_live(const pid_t *pids, size_t nr, const char *event)
{
	struct targets t = { 0 };
	int status;
	size_t i;

	for (i = 0; i < nr; i++) {
		char buf[16];

		snprintf(buf, sizeof(buf), "%d", (int)pids[i]);
		if ((status = add_pid(&t, "hist", buf))) {
			free_targets(&t);
			return status;
		}
	}
	status = connect_targets(&t, true);
	if (!status)
		status = trigger_show(&t, event, true);
	free_targets(&t);
	return status;
}

/* --- show, pipe, clear --- */

static const struct cmd_desc show_desc = { "show",
	"usage: utrace show -p PID... | -a\n"
	"\n"
	"Print the events in the buffers of running processes, as the kernel's\n"
	"trace file shows them (its header, then one line per event, merged in\n"
	"time order), without consuming them.\n"
	"\n"
	"  -p, --pid PID   this process (may repeat)\n"
	"  -a, --all       every traceable process of the runtime directory\n"
	"      --all-users -a for root: every user's processes\n", true };

static const struct cmd_desc pipe_desc = { "pipe",
	"usage: utrace pipe -p PID... | -a\n"
	"\n"
	"Print events as they come, as the kernel's trace_pipe: what is printed\n"
	"is consumed (gone from 'utrace show'); waits for more until Ctrl-C or\n"
	"until the processes exit.\n"
	"\n"
	"  -p, --pid PID   this process (may repeat)\n"
	"  -a, --all       every traceable process of the runtime directory\n"
	"      --all-users -a for root: every user's processes\n", true };

static const struct cmd_desc clear_desc = { "clear",
	"usage: utrace clear -p PID... | -a\n"
	"\n"
	"Empty the buffers of running processes (as opening the kernel's trace\n"
	"file with O_TRUNC).\n"
	"\n"
	"  -p, --pid PID   this process (may repeat)\n"
	"  -a, --all       every traceable process of the runtime directory\n"
	"      --all-users -a for root: every user's processes\n", true };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int live_cmd(const struct cmd_desc *d, int argc, char **argv)
{
	struct targets t = { 0 };
	struct live *lv = NULL;
	int r = parse_common(d, argc, argv, &t, NULL, NULL, NULL, NULL), status = 0;

	if (r)
		return r < 0 ? 0 : r;
	if (!t.nr && !t.all)
		return usage_error(d->name, "%s", "which process? give -p PID or -a");
	if (optind < argc)
		return usage_error(d->name, "unexpected argument '%s'", argv[optind]);
	if ((r = connect_targets(&t, true))) {
		free_targets(&t);
		return r;
	}
	if (!strcmp(d->name, "clear")) {
		size_t i;

		for (i = 0; i < t.nr_c; i++) {
			r = utrace__ctl_clear_buffer(t.c[i]);
			if (r < 0)
				status = ctl_fail(t.c[i], r, "cannot clear its buffer");
		}
		free_targets(&t);
		return status;
	}
	r = live_open(t.c, t.nr_c, &lv);
	if (r < 0) {
		size_t i;

		for (i = 0; i < t.nr_c && !utrace__ctl_errmsg(t.c[i])[0]; i++)
			;
		if (i < t.nr_c)
			fprintf(stderr, "utrace: %s\n", utrace__ctl_errmsg(t.c[i]));
		else
			fprintf(stderr, "utrace: cannot read the buffers: %s\n", strerror(-r));
		free_targets(&t);
		return 1;
	}
	if (!strcmp(d->name, "show")) {
		r = (int)live_print(lv, LIVE_HEADER, stdout);
		if (r < 0) {
			fprintf(stderr, "utrace: cannot read the buffers: %s\n", strerror(-r));
			status = 1;
		}
	} else {
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
		setvbuf(stdout, NULL, _IOFBF, 1 << 16);
		while (!stop) {
			long n = live_print(lv, LIVE_CONSUME, stdout);
			struct timespec ts = { 0, 50 * 1000 * 1000 };

			if (n < 0)
				break;    /* the processes are gone */
			/* the reader went away (| head): the printer's own
			 * flush may have met it, leaving nothing to flush */
			if (fflush(stdout) != 0 || ferror(stdout))
				break;
			if (n == 0)
				nanosleep(&ts, NULL);
		}
	}
	if (fflush(stdout) != 0 && !stop && strcmp(d->name, "pipe")) {
		fprintf(stderr, "utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	live_close(lv);
	free_targets(&t);
	return status;
}

int cmd_show(int argc, char **argv)
{
	return live_cmd(&show_desc, argc, argv);
}

int cmd_pipe(int argc, char **argv)
{
	return live_cmd(&pipe_desc, argc, argv);
}

int cmd_clear(int argc, char **argv)
{
	return live_cmd(&clear_desc, argc, argv);
}
