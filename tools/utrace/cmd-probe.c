/* SPDX-License-Identifier: MIT */
/*
 * utrace probe: dynamic probes in running processes, through their
 * agents (uprobe_events and uprobe_profile of lib/probe):
 *   utrace probe [-p PID] DEFINITION...    add (without -p: check only)
 *   utrace probe -p PID -l                 list, as cat uprobe_events
 *   utrace probe -p PID -d EVENT...        remove ([GROUP/]EVENT)
 *   utrace probe -p PID --profile          hits and misses (uprobe_profile)
 * The options are a table so that more (DWARF's --vars, --line, --funcs)
 * slot in without touching the rest.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "ctl-client.h"
#include "inject.h"
#include "kuprobe.h"
#include "probe-dwarf.h"
#include "probe.h"

static const char probe_usage[] =
	"usage: utrace probe [-p PID] DEFINITION...\n"
	"       utrace probe -p PID -l [-v] | --profile\n"
	"       utrace probe -p PID -d [GROUP/]EVENT...\n";

/* after probe_usage and probe_dwarf_help (-x, -k) */
static const char probe_help[] =
	"\n"
	"Place dynamic probes in a running process, as the kernel's uprobe_events:\n"
	"no rebuild, no utrace events needed in it, only its agent (a program\n"
	"started by 'utrace record --probe' has it; into any other, adding probes\n"
	"loads libutrace with ptrace, see 'utrace attach'). Each probe is an event\n"
	"GROUP:EVENT that 'utrace enable', set_event and filters work on.\n"
	"\n"
	"  p[:[GROUP/]EVENT] [OBJ:]SYMBOL[+OFFS] [FETCHARGS]  probe an instruction\n"
	"  p[:[GROUP/]EVENT] OBJ:0xOFFSET [FETCHARGS]        (OFFSET: in the file)\n"
	"  r[:[GROUP/]EVENT] [OBJ:]SYMBOL [FETCHARGS]        probe the function's returns\n"
	"  FETCHARGS: [NAME=]FETCHARG[:TYPE] with FETCHARG %%REG, @ADDR, @+OFFS, @SYM,\n"
	"    $stackN, $stack, $retval, $comm, $argN, +|-[u]OFFS(FETCHARG), \\IMM,\n"
	"    \\\"STR\"; TYPE u8..u64, s8..s64, x8..x64, char, string, ustring,\n"
	"    symbol, b<width>@<offset>/<size>, TYPE[N]\n"
	"\n"
	"  -p, --pid PID   the process (without it, definitions are only checked)\n"
	"  -l, --list      print its definitions (uprobe_events)\n"
	"  -v, --verbose   with -l: under each, where it is placed (the function,\n"
	"                  an IFUNC's implementation, sites), or that it waits\n"
	"                  for its library to be loaded\n"
	"  -d, --delete    remove these events ('-:' lines)\n"
	"      --profile   print hits and misses of each probe (uprobe_profile)\n"
	"  -h, --help      this text\n"
	"\n"
	"A bad definition is refused with the kernel's message and a caret under\n"
	"the fault. See utrace-probe(1).\n";

struct probe_opts {
	pid_t pid;
	bool list, del, profile, verbose;
};

enum { OPT_PROFILE = 256 };

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "list", no_argument, NULL, 'l' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "delete", no_argument, NULL, 'd' },
	{ "profile", no_argument, NULL, OPT_PROFILE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* 0, -1 (--help), or an exit status */
static int parse_opts(int argc, char **argv, struct probe_opts *o)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:ldvh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!parse_pid(optarg, &o->pid))
				return usage_error("probe", "'%s' is not a process id", optarg);
			break;
		case 'l': o->list = true; break;
		case 'v': o->verbose = true; break;
		case 'd': o->del = true; break;
		case OPT_PROFILE: o->profile = true; break;
		case 'h':
			fputs(probe_usage, stdout);
			fputs(probe_dwarf_help, stdout);
			fputs(probe_help, stdout);
			return -1;
		default:
			return usage_error("probe", "%s", "unknown option");
		}
	}
	if ((o->list || o->del || o->profile) && !o->pid)
		return usage_error("probe", "%s", "which process? give -p PID");
	if (o->list + o->del + o->profile > 1)
		return usage_error("probe", "%s", "give one of -l, -d and --profile");
	if (o->verbose && !o->list)
		return usage_error("probe", "%s", "-v goes with -l");
	if ((o->list || o->profile) && optind != argc)
		return usage_error("probe", "'%s': -l and --profile take no argument",
				   argv[optind]);
	if (!o->list && !o->profile && optind == argc)
		return usage_error("probe", "%s", o->del ? "which event?" : "which definition?");
	return 0;
}

/* The definitions in the process (glob writes say how many they added). */
static size_t defs_in(struct utrace__ctl *c)
{
	char *text = NULL;
	size_t n = 0;

	if (utrace__ctl_uprobe_text(c, 0, &text) < 0 || !text)
		return 0;
	for (const char *l = text; *l; l++)
		n += *l == '\n';
	free(text);
	return n;
}

/* A glob without a process: the definitions it stands for in the file,
 * each checked and printed as one written out would be. */
static int check_glob(const char *def)
{
	struct utrace__probe_error err;
	char **lines;
	size_t n, bad = 0;
	int r = utrace__probe_expand(def, &utrace__probe_files_here, &lines, &n, &err);

	if (r) {
		fprintf(stderr, "utrace probe: '%s': %s\n", def, err.msg);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		struct utrace__probe_def *d;
		enum utrace__probe_cmd cmd;
		char *s;

		r = utrace__probe_parse(lines[i], &utrace__probe_files_here, &cmd, &d, &err);
		if (!r && cmd == UTRACE__PROBE_ADD && (r = utrace__probe_site_check_file(d, &err)))
			utrace__probe_def_free(d);
		if (r) {
			probe_say_error("utrace probe", lines[i], r, &err);
			bad++;
			continue;
		}
		s = utrace__probe_canonical(d);
		printf("%s\n", s ? s : "?");
		free(s);
		utrace__probe_def_free(d);
	}
	fprintf(stderr, "utrace probe: '%s': %zu function%s match%s", def, n, n == 1 ? "" : "s",
		n == 1 ? "es" : "");
	if (bad)
		fprintf(stderr, ", %zu of them refused (a process passes them over)", bad);
	fputc('\n', stderr);
	utrace__probe_lines_free(lines, n);
	return bad == n;
}

/* Without a process: parse, check the site as a process would (the one
 * check, utrace__probe_site_rules()), and print the line uprobe_events
 * would show. */
static int check_only(int argc, char **argv)
{
	int status = 0;

	for (int i = optind; i < argc; i++) {
		struct utrace__probe_error err;
		struct utrace__probe_def *d;
		enum utrace__probe_cmd cmd;
		int r;

		if (utrace__probe_is_glob(argv[i])) {
			status |= check_glob(argv[i]);
			continue;
		}
		r = utrace__probe_parse(argv[i], &utrace__probe_files_here, &cmd, &d, &err);
		if (!r && cmd == UTRACE__PROBE_ADD && (r = utrace__probe_site_check_file(d, &err)))
			utrace__probe_def_free(d);
		if (r) {
			probe_say_error("utrace probe", argv[i], r, &err);
			status = 1;
			continue;
		}
		if (cmd == UTRACE__PROBE_ADD) {
			char *s = utrace__probe_canonical(d);

			printf("%s\n", s ? s : "?");
			free(s);
			if (d->symbol && utrace__probe_file_ifunc(d->path, d->symbol))
				fprintf(stderr, "utrace probe: note: %s is an IFUNC: in the file this is "
					"its resolver, which runs once; in a process (-p, record --probe) "
					"the probe goes on the implementation the process uses\n",
					d->symbol);
		}
		utrace__probe_def_free(d);
	}
	return status;
}

/* After a refused write: the process's error_log entry, without its time. */
static void say_error(struct utrace__ctl *c, const char *line, int r)
{
	char *log = NULL, *e;

	if (utrace__ctl_error_log(c, &log) >= 0 && log &&
	    (e = strstr(log, "] trace_uprobe: ")) != NULL) {
		char *last;

		while ((last = strstr(e + 1, "] trace_uprobe: ")) != NULL)
			e = last;
		fprintf(stderr, "utrace probe: process %d: %s", (int)utrace__ctl_pid(c), e + 2);
	} else {
		fprintf(stderr, "utrace probe: process %d: '%s': %s\n", (int)utrace__ctl_pid(c),
			line, strerror(-r));
	}
	free(log);
}

/* The forms of probe-dwarf.c; -x BIN -p PID DEF...: its raw definitions
 * to the process's agent, as 'utrace probe -p PID RAW...'. */
static int probe_dwarf(int argc, char **argv)
{
	struct probe_dwarf_raw ag = { 0 };
	char pidstr[24], **av;
	int i, r = utrace_probe_dwarf_main(argc, argv, &ag);

	if (!ag.raw)
		return r;
	av = calloc((size_t)ag.nr + 4, sizeof(*av));
	if (av) {
		snprintf(pidstr, sizeof(pidstr), "%ld", ag.pid);
		av[0] = (char *)"probe";
		av[1] = (char *)"-p";
		av[2] = pidstr;
		for (i = 0; i < ag.nr; i++)
			av[3 + i] = ag.raw[i];
		r = cmd_probe(ag.nr + 3, av);
	} else {
		r = 1;
	}
	for (i = 0; i < ag.nr; i++)
		free(ag.raw[i]);
	free(ag.raw);
	free(av);
	return r;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_opts o = { 0 };
	struct utrace__ctl *c;
	char err[512];
	int r, status = 0, rounds = 0;

	/* -x (C names through DWARF) and -k (the kernel's uprobes):
	 * probe-dwarf.c; -x -p PID comes back with raw definitions */
	if (probe_dwarf_wants(argc, argv))
		return probe_dwarf(argc, argv);
	r = parse_opts(argc, argv, &o);
	if (r)
		return r < 0 ? 0 : r;
	if (!o.pid)
		return check_only(argc, argv);
again:
	/* adding probes to a process without libutrace loads it (inject.c) */
	if (!(o.list || o.profile || o.del)) {
		if (utrace_ctl_open_attach(o.pid, &c, "utrace probe") < 0)
			return 1;
	} else if (utrace__ctl_open(o.pid, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "utrace probe: %s\n", err);
		return 1;
	}
	if (o.list || o.profile) {
		char *text;

		r = utrace__ctl_uprobe_text(c, o.verbose ? 2 : o.profile, &text);
		if (r < 0) {
			fprintf(stderr, "utrace probe: process %d: %s\n", (int)o.pid, strerror(-r));
			status = 1;
		} else {
			fputs(text, stdout);
			free(text);
		}
		utrace__ctl_close(c);
		return status;
	}
	utrace__ctl_error_log_clear(c);
	for (int i = optind; i < argc; i++) {
		char *line = NULL;

		if (o.del) {
			if (asprintf(&line, "-:%s", argv[i]) < 0)
				line = NULL;
		} else {
			line = strdup(argv[i]);
		}
		if (!line) {
			fprintf(stderr, "utrace probe: out of memory\n");
			status = 1;
			break;
		}
		size_t before = o.del ? 0 : defs_in(c);

		r = utrace__ctl_uprobe_write(c, line, strlen(line));
		if ((r == -EPIPE || r == -ECONNRESET) && !o.del && ++rounds < 8 &&
		    kill(o.pid, 0) == 0) {
			/* the process ran a new program (execve) as the
			 * probes were added: its agent went with the old
			 * one; attach to the new one and add them again */
			free(line);
			utrace__ctl_close(c);
			status = 0;
			goto again;
		}
		if (r >= 0 && !o.del && utrace__probe_is_glob(line))
			fprintf(stderr, "utrace probe: process %d: '%s': %zu definitions added\n",
				(int)o.pid, line, defs_in(c) - before);
		if (r < 0) {
			if (o.del)
				fprintf(stderr, "utrace probe: process %d: '%s': %s\n", (int)o.pid,
					argv[i], r == -EBUSY ? "the event is enabled" :
					r == -ENOENT ? "no such event" : strerror(-r));
			else
				say_error(c, line, r);
			status = 1;
		}
		free(line);
	}
	utrace__ctl_close(c);
	return status;
}
