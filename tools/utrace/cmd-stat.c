/* SPDX-License-Identifier: MIT */
/*
 * utrace stat: run a command and count its utrace events and software
 * counters, in the layout of `perf stat`.  The work is the reader
 * library's (lib/reader/stat.c); here are the options.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stat.h"
#include "cmds.h"

static const char usage_text[] =
	"usage: utrace stat [-e EVENTS] [-x SEP | -j] [-I MSEC] [-r N] [-o FILE]\n"
	"                   [--rusage] -- COMMAND [ARGS]\n"
	"\n"
	"Run COMMAND and count its utrace events and its software counters\n"
	"(task-clock, context-switches, cpu-migrations, page-faults), as 'perf stat'\n"
	"shows them.  The events are counted by recording them into a temporary\n"
	"file; the counters come from perf_event_open() on the command, or from\n"
	"getrusage() where that is denied.  The exit status is the command's.\n"
	"\n"
	"  -e, --event EVENTS  the events to count, in the kernel's set_event syntax\n"
	"                      (sys:event, sys:*, *:event, !...), ',' apart\n"
	"                      (default: all the events of the program)\n"
	"  -x, --field-separator SEP  CSV lines, fields apart by SEP, as perf stat -x\n"
	"  -j, --json-output   one JSON object a line, as perf stat -j\n"
	"  -I, --interval-print MSEC  the software counters every MSEC milliseconds\n"
	"                      (the events are counted at the end)\n"
	"  -r, --repeat N      run the command N times; print the means and their\n"
	"                      spread\n"
	"  -o, --output FILE   print the counts into FILE (default: stderr, as perf)\n"
	"      --rusage        take the counters from getrusage(), not\n"
	"                      perf_event_open()\n"
	"  -h, --help          show this text\n";

static int number(const char *s, unsigned int *v)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	if (!*s || *end || n == 0 || n > 1000000)
		return -1;
	*v = (unsigned int)n;
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json-output", no_argument, NULL, 'j' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "rusage", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct utrace__stat_opts o = { .runs = 1, .self = "/proc/self/exe" };
	const char *output = NULL;
	char self[PATH_MAX];
	FILE *out = stderr;
	ssize_t n;
	int c, status;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:e:x:jI:r:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.events = optarg;
			break;
		case 'x':
			o.sep = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'I':
			if (number(optarg, &o.interval_ms) < 0 || o.interval_ms < 10)
				return usage_error("stat", "bad interval '%s': give milliseconds, "
						   "10 or more", optarg);
			break;
		case 'r':
			if (number(optarg, &o.runs) < 0)
				return usage_error("stat", "bad repeat count '%s'", optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'R':
			o.rusage = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return usage_error("stat", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("stat", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("stat", "%s", "no command: give -- COMMAND [ARGS]");
	if (o.sep && o.json)
		return usage_error("stat", "%s", "-x and -j do not go together");
	if (o.interval_ms && o.runs > 1)
		return usage_error("stat", "%s", "-I and -r do not go together");
	o.argv = argv + optind;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		o.self = self;
	}
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			perror(output);
			return 1;
		}
	}
	status = utrace__stat_run(&o, out);
	if (output && fclose(out) != 0) {
		perror(output);
		return 1;
	}
	return status;
}
