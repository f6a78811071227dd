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
	"usage: utrace hist [-i FILE] EVENT TRIGGER...\n"
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
	"With -p, print the hist file of EVENT in running processes: the tables of\n"
	"the hist triggers set there with 'utrace trigger' (or the mount's trigger\n"
	"files), aggregated inside the process as the events happen.\n"
	"\n"
	"  -i, --input FILE  the trace file (default: utrace.dat)\n"
	"  -p, --pid PID     a running process (may repeat)\n"
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

int cmd_hist(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct utrace__histfile_opts o = { 0 };
	const char *input = "utrace.dat";
	struct utrace__tf *tf = NULL;
	pid_t *pids = NULL;
	size_t nr_pids = 0;
	bool input_given = false;
	int c, status;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:i:p:h", longopts, NULL)) != -1) {
		pid_t *np;

		switch (c) {
		case 'i':
			input = optarg;
			input_given = true;
			break;
		case 'p':
			np = realloc(pids, (nr_pids + 1) * sizeof(*np));
			if (!np) {
				free(pids);
				fprintf(stderr, "utrace: out of memory\n");
				return 1;
			}
			pids = np;
			if (!parse_pid(optarg, &pids[nr_pids])) {
				free(pids);
				return usage_error("hist", "'%s' is not a process id", optarg);
			}
			nr_pids++;
			break;
		case 'h':
			free(pids);
			fputs(usage_text, stdout);
			return 0;
		case ':':
			free(pids);
			return usage_error("hist", "option '%s' needs a value", argv[optind - 1]);
		default:
			free(pids);
			return usage_error("hist", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (nr_pids) {
		if (input_given)
			status = usage_error("hist", "%s", "-i and -p do not go together");
		else if (argc - optind != 1)
			status = usage_error("hist", "%s", "with -p, give one EVENT (set triggers "
					     "with 'utrace trigger')");
		else
			status = cmd_hist_live(pids, nr_pids, argv[optind]);
		free(pids);
		return status;
	}
	if (optind >= argc)
		return usage_error("hist", "%s", "no event: give EVENT TRIGGER...");
	if (optind + 1 >= argc)
		return usage_error("hist", "%s", "no trigger: give EVENT 'hist:keys=...'");
	o.event = argv[optind];
	o.triggers = argv + optind + 1;
	o.nr_triggers = (size_t)(argc - optind - 1);
	o.syscall = syscall_name;
	if (utrace__tf_open(input, &tf) == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	status = utrace__hist_file(&o, tf, stdout);
	utrace__tf_close(tf);
	names_free();
	return status;
}
