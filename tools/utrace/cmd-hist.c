/* SPDX-License-Identifier: MIT */
/*
 * utrace hist: the kernel's hist triggers run on a trace file, printed as
 * the event's hist file.  The work is the reader library's
 * (lib/reader/histfile.c); here are the options.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef UTRACE_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "file-reader.h"
#include "histfile.h"
#include "cmds.h"

static const char usage_text[] =
	"usage: utrace hist [-i FILE] [-s DEFINITION]... EVENT TRIGGER... [EVENT TRIGGER...]...\n"
	"       utrace hist -p PID... EVENT\n"
	"\n"
	"Run the kernel's hist triggers on the events EVENT (SYSTEM:NAME or NAME) of a\n"
	"trace file and print what the event's 'hist' file would show: one table per\n"
	"trigger, in the layout of Linux's events/<sys>/<event>/hist.  A TRIGGER is\n"
	"what is written to the event's trigger file:\n"
	"\n"
	"  hist:keys=FIELD[.MOD][,FIELD...][:values=FIELD[,FIELD]][:sort=FIELD[.descending]\n"
	"       [,FIELD]][:size=N][:pause][:continue][:clear][:name=NAME][:nohitcount]\n"
	"       [if FILTER]\n"
	"\n"
	"(key=, val=, vals= are the same).  Key modifiers: .hex .sym .sym-offset\n"
	".execname (of common_pid) .syscall .log2 .buckets=N .usecs; value modifiers:\n"
	".hex .percent .graph.  Special fields: common_pid, common_timestamp,\n"
	"common_cpu, hitcount.  A trigger the kernel refuses is refused with its\n"
	"message and its error_log entry.  See utrace-hist(1).\n"
	"\n"
	"Inter-event triggers work as in the traced program: variables (name=EXPR),\n"
	"$name of an earlier trigger (or SYSTEM.EVENT.$name), onmatch(SYS.EVENT),\n"
	"onmax($var) and onchange($var) with .trace(), .save() or .SYNTH(); give the\n"
	"triggers of each event after that EVENT, and define the synthetic events the\n"
	"actions write with -s (a line of synthetic_events); triggers on one are given\n"
	"after synthetic:NAME.  The records are then read in time order.\n"
	"\n"
	"With -p, print the hist file of EVENT in running processes: the tables of\n"
	"the hist triggers set there with 'utrace trigger' (or the mount's trigger\n"
	"files), aggregated inside the process as the events happen.\n"
	"\n"
	"  -i, --input FILE  the trace file (default: utrace.dat)\n"
	"  -p, --pid PID     a running process (may repeat)\n"
	"  -s, --synth DEF   a synthetic event, as written to synthetic_events\n"
	"  -h, --help        show this text\n";

#ifdef UTRACE_HAVE_SECCOMP
#define NR_NAMES 1024
static char *names[NR_NAMES];

/* .syscall: this machine's name of a system call number (libseccomp). */
static const char *syscall_name(uint64_t nr)
{
	if (nr >= NR_NAMES)
		return NULL;
	if (!names[nr])
		names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
	return names[nr];
}

static void names_free(void)
{
	size_t i;

	for (i = 0; i < NR_NAMES; i++)
		free(names[i]);
}
#else
#define syscall_name NULL
static void names_free(void)
{
}
#endif

/* A TRIGGER argument ("hist:...", "!hist:..."); anything else is an EVENT. */
static bool is_trigger(const char *a)
{
	a += strspn(a, " \t");
	if (*a == '!')
		return true;
	return !strncmp(a, "hist", 4) && (!a[4] || strchr(": \t", a[4]));
}

int cmd_hist(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },
		{ "synth", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct utrace__histfile_opts o = { 0 };
	const char *input = "utrace.dat";
	struct utrace__tf *tf = NULL;
	pid_t *pids = NULL;
	size_t nr_pids = 0, nr_synth = 0;
	bool input_given = false;
	const char **events;
	char **synth, **triggers;
	int c, status, i;

	opterr = 0;
	optind = 0;
	/* what the arguments hold, at most (freed at the end) */
	events = calloc((size_t)argc + 1, sizeof(*events));
	synth = calloc((size_t)argc + 1, sizeof(*synth));
	triggers = calloc((size_t)argc + 1, sizeof(*triggers));
	if (!events || !synth || !triggers) {
		status = 1;
		fprintf(stderr, "utrace: out of memory\n");
		goto out;
	}
	while ((c = getopt_long(argc, argv, "+:i:p:s:h", longopts, NULL)) != -1) {
		pid_t *np;

		switch (c) {
		case 's':
			synth[nr_synth++] = optarg;
			break;
		case 'i':
			input = optarg;
			input_given = true;
			break;
		case 'p':
			np = realloc(pids, (nr_pids + 1) * sizeof(*np));
			if (!np) {
				fprintf(stderr, "utrace: out of memory\n");
				status = 1;
				goto out;
			}
			pids = np;
			if (!parse_pid(optarg, &pids[nr_pids])) {
				status = usage_error("hist", "'%s' is not a process id", optarg);
				goto out;
			}
			nr_pids++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			status = 0;
			goto out;
		case ':':
			status = usage_error("hist", "option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			status = usage_error("hist", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (nr_pids) {
		if (input_given || nr_synth)
			status = usage_error("hist", "%s", "-i or -s and -p do not go together");
		else if (argc - optind != 1)
			status = usage_error("hist", "%s", "with -p, give one EVENT (set triggers "
					     "with 'utrace trigger')");
		else
			status = cmd_hist_live(pids, nr_pids, argv[optind]);
		goto out;
	}
	if (optind >= argc) {
		status = usage_error("hist", "%s", "no event: give EVENT TRIGGER...");
		goto out;
	}
	/* EVENT TRIGGER... [EVENT TRIGGER...]...: a trigger starts with "hist" */
	for (i = optind; i < argc; i++) {
		if (!is_trigger(argv[i])) {
			if (i + 1 >= argc || !is_trigger(argv[i + 1])) {
				status = usage_error("hist", "no trigger for '%s': give EVENT "
						     "'hist:keys=...'", argv[i]);
				goto out;
			}
			events[o.nr_triggers] = argv[i];
			continue;
		}
		if (i == optind) {
			status = usage_error("hist", "'%s' is not an event: give EVENT TRIGGER...",
					     argv[i]);
			goto out;
		}
		if (!events[o.nr_triggers])
			events[o.nr_triggers] = events[o.nr_triggers - 1];
		triggers[o.nr_triggers++] = argv[i];
	}
	o.events = events;
	o.triggers = triggers;
	o.synth = synth;
	o.nr_synth = nr_synth;
	o.syscall = syscall_name;
	if (utrace__tf_open(input, &tf) == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto out;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	status = utrace__hist_file(&o, tf, stdout);
	utrace__tf_close(tf);
	names_free();
out:
	free(pids);
	free(events);
	free(synth);
	free(triggers);
	return status;
}
