/* SPDX-License-Identifier: MIT */
/*
 * utrace top: the table of `utrace report` over the events of running
 * processes, refreshed every few seconds, as `perf top`.  The table is the
 * reader library's (lib/reader/top.c), the buffers are read as `utrace
 * pipe` reads them (live.c); here are the options, the events switched on
 * and back, and the terminal.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "ctl-client.h"
#include "live.h"
#include "top.h"

static const char usage_text[] =
	"usage: utrace top [-p PID... | -a] [-e EVENTS] [-s KEYS] [-d SECS]\n"
	"                  [--latency BEGIN.FIELD:END.FIELD] [--cumulative]\n"
	"                  [--stdio] [-n N]\n"
	"\n"
	"Count the events of running processes by sort keys, as 'utrace report'\n"
	"does for a file, and show the table every SECS seconds, as 'perf top'.\n"
	"top reads a buffer of its own in each process (an instance named\n"
	"utrace-top-PID, removed at the end), so a running 'utrace record' or\n"
	"trace_pipe reader misses nothing.  On a terminal the screen is redrawn;\n"
	"'q' or Ctrl-C quits.  Otherwise (a pipe, --stdio, -n) each snapshot is\n"
	"printed after the last.\n"
	"\n"
	"  -p, --pid PID       this process (may repeat)\n"
	"  -a, --all           every traceable process of the runtime directory,\n"
	"                      those that start later too\n"
	"      --all-users     -a for root: every user's processes\n"
	"  -e, --event EVENTS  switch these on, in the kernel's set_event syntax\n"
	"                      (sys:event, sys:*, *:event, !...), ',' apart\n"
	"                      (default: all the events of the processes)\n"
	"  -s, --sort KEYS     ',' apart (default: comm,event): comm, pid, tid,\n"
	"                      event, cpu, or [EVENT.]FIELD[/raw] (as report)\n"
	"  -d, --delay SECS    seconds between refreshes (default 2, as perf top)\n"
	"      --latency BEGIN.FIELD:END.FIELD\n"
	"                      also the latency between events paired by a field\n"
	"                      (may repeat)\n"
	"      --cumulative    counts since the start (default: per interval)\n"
	"      --stdio         print snapshots one after another, no screen\n"
	"  -n, --iterations N  print N snapshots, then exit (implies --stdio)\n"
	"  -h, --help          show this text\n";

/* How often the buffers are emptied between two refreshes (a latency's
 * begins still waiting carry over from one image to the next). */
#define TAKE_MS 100
/* How often top looks for events that registered since (seconds). */
#define NEW_EVENTS_S 0.25

static volatile sig_atomic_t stop, resized;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A process's events and whether each was on, before top changed them. */
struct saved {
	struct utrace__ctl *c;
	struct utrace__ctl_event *evs;
	size_t nr;
};

/*
 * Switch the events on in every process (all when events is NULL).
 * quiet: a process found later by -a; an entry that matches none of its
 * events is not said, and one whose events cannot be listed is left.
 */
static int enable_events(struct saved *sv, size_t n, char *const *events, size_t nr_events,
			 bool quiet)
{
	size_t i, k;
	int status = 0;

	for (i = 0; i < n; i++)
		if (utrace__ctl_events(sv[i].c, &sv[i].evs, &sv[i].nr) < 0) {
			if (quiet)
				return 1;
			fprintf(stderr, "utrace: process %d: cannot list its events\n",
				(int)utrace__ctl_pid(sv[i].c));
			return 1;
		}
	for (k = 0; k < (nr_events ? nr_events : 1); k++) {
		char *copy = strdup(nr_events ? events[k] : "*:*"), *save = NULL, *tok;

		if (!copy)
			return 1;
		for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
			bool any = false;

			for (i = 0; i < n; i++)
				if (utrace__ctl_set_event(sv[i].c, tok, strlen(tok)) > 0)
					any = true;
			if (!any && !quiet) {
				fprintf(stderr, "utrace: no event matches '%s'%s\n", tok,
					n == 1 ? "" : " in any of the processes");
				status = 1;
			}
		}
		free(copy);
	}
	return status;
}

/*
 * Events that registered since top switched them on (a library a server
 * loads as it starts, after top attached: set_event took the events there
 * were then, and those of the library stayed off in top's buffer, so a
 * top started with the server could show nothing at all).  Each process
 * whose count of events grew gets the entries again, quietly.
 */
static void enable_new_events(struct saved *sv, size_t n, char *const *events, size_t nr_events)
{
	struct utrace__ctl_info in;
	size_t i;

	for (i = 0; i < n; i++) {
		if (utrace__ctl_info(sv[i].c, &in) < 0 || in.nr_events == sv[i].nr)
			continue;
		utrace__ctl_events_free(sv[i].evs, sv[i].nr);
		sv[i].evs = NULL;
		sv[i].nr = 0;
		enable_events(&sv[i], 1, events, nr_events, true);
	}
}

static int take_one(void *arg, struct utrace__tf *tf)
{
	return utrace__top_add(arg, tf);
}

static int take_none(void *arg, struct utrace__tf *tf)
{
	(void)arg;
	(void)tf;
	return 0;
}

struct screen {
	bool tty;
	bool raw;                       /* stdin's modes changed */
	struct termios saved;
};

static void screen_enter(struct screen *sc)
{
	struct termios t;

	/* the alternate screen, no cursor (as top(1)) */
	fputs("\033[?1049h\033[?25l", stdout);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &sc->saved) == 0) {
		t = sc->saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		sc->raw = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
	}
}

static void screen_leave(struct screen *sc)
{
	if (sc->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &sc->saved);
	fputs("\033[?25h\033[?1049l", stdout);
	fflush(stdout);
}

/* 'q' typed? */
static bool quit_key(void)
{
	char buf[64];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf)), i;

	for (i = 0; i < n; i++)
		if (buf[i] == 'q' || buf[i] == 'Q')
			return true;
	return false;
}

static int parse_delay(const char *s, double *d)
{
	char *end;

	errno = 0;
	*d = strtod(s, &end);
	return errno || end == s || *end || !(*d >= 0.1 && *d <= 3600) ? -1 : 0;
}

struct top_args {
	pid_t *pids;
	size_t nr_pids;
	bool all, cumulative, stdio_mode;
	bool all_users;        /* --all-users: -a takes every user's (root) */
	char **events;
	size_t nr_events;
	const char *sort;
	double delay;
	long iterations;
	struct utrace__report_opts o;
};

static int parse_args(int argc, char **argv, struct top_args *a)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "all-users", no_argument, NULL, 'U' },
		{ "event", required_argument, NULL, 'e' },
		{ "sort", required_argument, NULL, 's' },
		{ "delay", required_argument, NULL, 'd' },
		{ "latency", required_argument, NULL, 'L' },
		{ "cumulative", no_argument, NULL, 'C' },
		{ "stdio", no_argument, NULL, 'S' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	size_t bad = 0;
	char *end;
	void *v;
	int c, r;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":p:ae:s:d:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': {
			pid_t pid;

			if (!parse_pid(optarg, &pid))
				return usage_error("top", "'%s' is not a process id", optarg);
			if (!(v = realloc(a->pids, (a->nr_pids + 1) * sizeof(*a->pids))))
				goto nomem;
			a->pids = v;
			a->pids[a->nr_pids++] = pid;
			break;
		}
		case 'a':
			a->all = true;
			break;
		case 'U':
			a->all = a->all_users = true;
			break;
		case 'e':
			if (!(v = realloc(a->events, (a->nr_events + 1) * sizeof(*a->events))))
				goto nomem;
			a->events = v;
			a->events[a->nr_events++] = optarg;
			break;
		case 's':
			a->sort = optarg;
			break;
		case 'd':
			if (parse_delay(optarg, &a->delay) < 0)
				return usage_error("top", "bad delay '%s': give seconds, 0.1 to 3600",
						   optarg);
			break;
		case 'L':
			if (!(v = realloc(a->o.lat, (a->o.nr_lat + 1) * sizeof(*a->o.lat))))
				goto nomem;
			a->o.lat = v;
			r = utrace__report_parse_latency(optarg, &a->o.lat[a->o.nr_lat]);
			if (r == -EINVAL)
				return usage_error("top", "bad latency '%s': give BEGIN.FIELD:"
						   "END.FIELD, as req_begin.id:req_end.id", optarg);
			if (r < 0)
				goto nomem;
			a->o.nr_lat++;
			break;
		case 'C':
			a->cumulative = true;
			break;
		case 'S':
			a->stdio_mode = true;
			break;
		case 'n':
			errno = 0;
			a->iterations = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || a->iterations <= 0 ||
			    a->iterations > 1000000)
				return usage_error("top", "bad number of iterations '%s'", optarg);
			a->stdio_mode = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return -1;
		case ':':
			return usage_error("top", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("top", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("top", "unexpected argument '%s'", argv[optind]);
	if (a->all && a->nr_pids)
		return usage_error("top", "%s", "-a and -p do not go together");
	if (!a->all && !a->nr_pids)
		return usage_error("top", "%s", "which process? give -p PID or -a");
	r = utrace__report_parse_sort(a->sort, &a->o.keys, &a->o.nr_keys, &bad);
	if (r == -EINVAL)
		return usage_error("top", "bad sort key at '%s': give comm, pid, tid, event, cpu "
				   "or [EVENT.]FIELD[/raw]", a->sort + bad);
	if (r < 0)
		goto nomem;
	a->o.one_table = true;
	return 0;
nomem:
	fprintf(stderr, "utrace: out of memory\n");
	return 1;
}

/* Connect to the processes: 0, or the exit status. */
/*
 * top reads a buffer of its own in each process, an instance named
 * utrace-top-<top's pid> (as `trace-cmd record -B` and perf's own
 * buffers): consuming the top-level buffer took the events of a running
 * `utrace record` or trace_pipe reader, and switching events there changed
 * what they got.  Instances of tops that have exited are removed first.
 * Returns 0 with the control set to the new instance, or -errno.
 */
static int use_instance(struct utrace__ctl *c)
{
	char name[32], *list = NULL, *line;
	int h;

	utrace__ctl_set_instance(c, 0);
	if (utrace__ctl_instances(c, &list) >= 0 && list) {
		for (line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
			char *sp = strchr(line, ' ');
			char *end;
			long pid;

			if (!sp || strncmp(sp + 1, "utrace-top-", 11))
				continue;
			pid = strtol(sp + 12, &end, 10);
			if (*end || pid <= 0 || pid == getpid() ||
			    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			utrace__ctl_instance_rmdir(c, sp + 1);
		}
	}
	free(list);
	snprintf(name, sizeof(name), "utrace-top-%d", (int)getpid());
	h = utrace__ctl_instance_mkdir(c, name);
	if (h == -EEXIST) {
		/* ours from an earlier run of this pid: start afresh */
		utrace__ctl_instance_rmdir(c, name);
		h = utrace__ctl_instance_mkdir(c, name);
	}
	if (h < 0)
		return h;
	utrace__ctl_set_instance(c, (uint32_t)h);
	return 0;
}

/* The instance of use_instance() removed, the control back at the top. */
static void drop_instance(struct utrace__ctl *c)
{
	char name[32];

	snprintf(name, sizeof(name), "utrace-top-%d", (int)getpid());
	utrace__ctl_set_instance(c, 0);
	utrace__ctl_instance_rmdir(c, name);
}

static int connect_all(struct top_args *a, struct utrace__ctl ***cs, size_t *n)
{
	char err[512];
	size_t i;

	if (a->all) {
		struct utrace__ctl_proc *ps = NULL;
		size_t np = 0;

		if (utrace__ctl_list(&ps, &np, a->all_users ? UTRACE__CTL_ALL_USERS : 0) < 0) {
			fprintf(stderr, "utrace: --all-users: only root may see other users' "
				"processes\n");
			return 1;
		}
		a->pids = calloc(np + 1, sizeof(*a->pids));
		for (i = 0; a->pids && i < np; i++)
			if (ps[i].pid != getpid())
				a->pids[a->nr_pids++] = ps[i].pid;
		free(ps);
		if (!a->pids) {
			fprintf(stderr, "utrace: out of memory\n");
			return 1;
		}
	}
	*cs = calloc(a->nr_pids + 1, sizeof(**cs));
	if (!*cs) {
		fprintf(stderr, "utrace: out of memory\n");
		return 1;
	}
	for (i = 0; i < a->nr_pids; i++) {
		int r;

		if (utrace__ctl_open(a->pids[i], &(*cs)[*n], err, sizeof(err)) < 0) {
			if (a->all)
				continue;
			fprintf(stderr, "utrace: %s\n", err);
			return 1;
		}
		if ((r = use_instance((*cs)[*n])) < 0) {
			utrace__ctl_close((*cs)[*n]);
			if (a->all)
				continue;
			fprintf(stderr, "utrace: process %d: cannot make a buffer for top "
				"(instance utrace-top-%d): %s\n", (int)a->pids[i], (int)getpid(),
				strerror(-r));
			return 1;
		}
		(*n)++;
	}
	if (!*n && !a->all) {
		fprintf(stderr, "utrace: no traceable process is running\n");
		return 1;
	}
	return 0;
}

/* The processes top reads: their controls and what it changed in them. */
struct procs {
	struct utrace__ctl **cs;
	struct saved *sv;
	size_t n;                       /* connected (some may have exited) */
	size_t alive;                   /* read now */
	pid_t *tried;                   /* -a: pids seen that could not be read */
	size_t nr_tried;
};

static bool known_pid(const struct procs *ps, pid_t pid)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (utrace__ctl_pid(ps->cs[i]) == pid)
			return true;
	for (i = 0; i < ps->nr_tried; i++)
		if (ps->tried[i] == pid)
			return true;
	return pid == getpid();
}

/* -a: read the traceable processes that started since; -ENOMEM or 0. */
static int adopt_new(struct top_args *a, struct procs *ps, struct live *lv)
{
	struct utrace__ctl_proc *list = NULL;
	size_t nl = 0, i;
	int ret = 0;

	utrace__ctl_list(&list, &nl, a->all_users ? UTRACE__CTL_ALL_USERS : 0);
	for (i = 0; i < nl && !ret; i++) {
		struct utrace__ctl **cs;
		struct saved *sv;
		struct utrace__ctl *c;
		pid_t *t;
		char err[256];

		if (known_pid(ps, list[i].pid))
			continue;
		cs = realloc(ps->cs, (ps->n + 1) * sizeof(*cs));
		if (cs)
			ps->cs = cs;
		sv = realloc(ps->sv, (ps->n + 1) * sizeof(*sv));
		if (sv)
			ps->sv = sv;
		t = realloc(ps->tried, (ps->nr_tried + 1) * sizeof(*t));
		if (t)
			ps->tried = t;
		if (!cs || !sv || !t) {
			ret = -ENOMEM;
			break;
		}
		if (utrace__ctl_open(list[i].pid, &c, err, sizeof(err)) < 0) {
			ps->tried[ps->nr_tried++] = list[i].pid;
			continue;
		}
		if (use_instance(c) < 0) {
			ps->tried[ps->nr_tried++] = list[i].pid;
			utrace__ctl_close(c);
			continue;
		}
		ps->sv[ps->n] = (struct saved){ .c = c };
		if (enable_events(&ps->sv[ps->n], 1, a->events, a->nr_events, true) &&
		    !ps->sv[ps->n].evs) {
			ps->tried[ps->nr_tried++] = list[i].pid;
			drop_instance(c);
			utrace__ctl_close(c);
			continue;
		}
		if (live_add(lv, c) < 0) {
			utrace__ctl_events_free(ps->sv[ps->n].evs, ps->sv[ps->n].nr);
			ps->tried[ps->nr_tried++] = list[i].pid;
			drop_instance(c);
			utrace__ctl_close(c);
			continue;
		}
		ps->cs[ps->n++] = c;
		ps->alive++;
	}
	free(list);
	return ret;
}

/* Refresh until 'q', a signal, -n snapshots, or the processes are gone
 * (with -a: never; processes that start are read from the next refresh,
 * those that exit are dropped). */
static int run(struct top_args *a, struct live *lv, struct utrace__top *top, struct procs *ps)
{
	char what[64];
	struct screen sc = { .tty = !a->stdio_mode && isatty(STDOUT_FILENO) };
	double last = now_s(), next = last + a->delay;
	long drawn = 0;
	bool gone = false;
	int status = 0;

	/* top counts from its start: what the buffers hold is dropped */
	if (live_take(lv, take_none, NULL) < 0 && !a->all) {
		fprintf(stderr, "utrace: the process%s exited\n", a->nr_pids > 1 ? "es" : "");
		return 1;
	}
	if (a->all)
		ps->alive -= live_drop_gone(lv);
	last = now_s();
	next = last + a->delay;
	if (sc.tty)
		screen_enter(&sc);
	double look = last + NEW_EVENTS_S;
	while (!stop && !gone) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		struct utrace__top_screen s = { .what = what };
		struct winsize ws;
		double t = now_s();
		int wait = (int)((next - t) * 1000);
		long r;

		if (wait > TAKE_MS)
			wait = TAKE_MS;
		if (poll(&pfd, sc.raw ? 1 : 0, wait > 0 ? wait : 0) > 0 && quit_key())
			break;
		if (now_s() >= look) {
			enable_new_events(ps->sv, ps->n, a->events, a->nr_events);
			look = now_s() + NEW_EVENTS_S;
		}
		r = live_take(lv, take_one, top);
		if (r == -ENOMEM) {
			fprintf(stderr, "utrace: out of memory\n");
			status = 1;
			break;
		}
		if (a->all) {
			/* the exited were read out by this take */
			ps->alive -= live_drop_gone(lv);
		} else {
			gone = r < 0;   /* the processes exited: a last snapshot */
		}
		t = now_s();
		if (t < next && !resized && !gone)
			continue;
		resized = 0;
		if (ps->alive == 1 && !a->all)
			snprintf(what, sizeof(what), "pid %d", (int)utrace__ctl_pid(ps->cs[0]));
		else
			snprintf(what, sizeof(what), "%zu process%s", ps->alive,
				 ps->alive == 1 ? "" : "es");
		s.seconds = t - last;
		if (sc.tty) {
			if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row) {
				s.rows = ws.ws_row;
				s.cols = ws.ws_col;
			}
			fputs("\033[H\033[2J", stdout);
		} else if (drawn) {
			putchar('\n');
		}
		if (utrace__top_print(top, &s, stdout) < 0 || fflush(stdout) != 0) {
			status = 1;
			break;
		}
		drawn++;
		if (t < next && !gone)
			continue;       /* a redraw for a new size: same interval */
		utrace__top_next(top);
		last = t;
		next = t + a->delay;
		if (a->all && adopt_new(a, ps, lv) < 0) {
			fprintf(stderr, "utrace: out of memory\n");
			status = 1;
			break;
		}
		if (a->iterations && drawn >= a->iterations)
			break;
	}
	if (sc.tty)
		screen_leave(&sc);
	if (gone)
		fprintf(stderr, "utrace: the process%s exited\n", a->nr_pids > 1 ? "es" : "");
	return status;
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = { .sort = "comm,event", .delay = 2.0 };
	struct sigaction sa = { .sa_handler = on_stop }, sw = { .sa_handler = on_winch };
	struct utrace__top *top = NULL;
	struct procs ps = { 0 };
	struct live *lv = NULL;
	size_t i;
	int status = parse_args(argc, argv, &a), r;

	if (status)
		goto done;
	if ((status = connect_all(&a, &ps.cs, &ps.n)))
		goto done;
	ps.sv = calloc(ps.n, sizeof(*ps.sv));
	top = utrace__top_new(&a.o, a.cumulative);
	if (!ps.sv || !top) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto done;
	}
	for (i = 0; i < ps.n; i++)
		ps.sv[i].c = ps.cs[i];
	ps.alive = ps.n;
	/* from here, a signal only ends the loop: the events go back */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGWINCH, &sw, NULL);
	signal(SIGPIPE, SIG_IGN);
	status = enable_events(ps.sv, ps.n, a.events, a.nr_events, false);
	if (a.all)
		status = 0;     /* said; the events may come with later processes */
	if (!status && (r = live_open(ps.cs, ps.n, &lv)) < 0) {
		fprintf(stderr, "utrace: cannot read the buffers: %s\n", strerror(-r));
		status = 1;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (!status && !stop)
		status = run(&a, lv, top, &ps);
done:
	live_close(lv);
	/* the instances go, and with them the events top switched on */
	for (i = 0; i < ps.n; i++)
		drop_instance(ps.cs[i]);
	utrace__top_free(top);
	for (i = 0; ps.sv && i < ps.n; i++)
		utrace__ctl_events_free(ps.sv[i].evs, ps.sv[i].nr);
	free(ps.sv);
	for (i = 0; i < ps.n; i++)
		utrace__ctl_close(ps.cs[i]);
	free(ps.cs);
	free(ps.tried);
	free(a.pids);
	free(a.events);
	utrace__report_keys_free(a.o.keys, a.o.nr_keys);
	for (i = 0; i < a.o.nr_lat; i++)
		utrace__report_latency_free(&a.o.lat[i]);
	free(a.o.lat);
	return status < 0 ? 0 : status;
}
