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

#ifdef UTRACE_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "file-reader.h"
#include "histfile.h"
#include "cmds.h"

static const char usage_text[] =
	"usage: utrace hist [-i FILE] EVENT TRIGGER...\n"
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
	"  -i, --input FILE  the trace file (default: utrace.dat)\n"
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct utrace__histfile_opts o = { 0 };
	const char *input = "utrace.dat";
	struct utrace__tf *tf = NULL;
	int c, status;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return usage_error("hist", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("hist", "unknown option '%s'", argv[optind - 1]);
		}
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
