/* SPDX-License-Identifier: MIT */
/*
 * utrace - the command-line front end.  A table of subcommands in the
 * style of perf and git; each later subcommand lives in cmd-<name>.c.
 */
#include <stdio.h>
#include <string.h>

#include <utrace/reader.h>
#include <utrace/utrace.h>

#include "cmds.h"
#include "inject.h"
#include "problems.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd commands[] = {
	{ "record", cmd_record, "run a command and record its events into a trace file" },
	{ "script", cmd_script, "print the events of a trace file in time order" },
	{ "report", cmd_report, "count the events of a trace file by keys, and latencies (perf report)" },
	{ "hist", cmd_hist, "run the kernel's hist triggers on a trace file (events/*/hist)" },
	{ "stat", cmd_stat, "run a command and count its events and software counters (perf stat)" },
	{ "top", cmd_top, "count the events of running processes live, by keys (perf top)" },
	{ "convert", cmd_convert, "export a trace file: trace.dat, html, ctf, sqlite, json, perfetto" },
	{ "export", cmd_export, "send events to an OpenTelemetry Collector (OTLP/HTTP)" },
	{ "agent", cmd_agent, "send every traced process's events to a collector (OTLP)" },
	{ "mount", cmd_mount, "mount the tracefs files of running processes (FUSE)" },
	{ "enter", cmd_enter, "run a command that sees a process's tree as /sys/kernel/tracing" },
	{ "ps", cmd_ps, "list the running processes that can be traced" },
	{ "list", cmd_list, "list the events of running processes" },
	{ "enable", cmd_enable, "switch events on in running processes" },
	{ "disable", cmd_disable, "switch events off in running processes" },
	{ "filter", cmd_filter, "set an event's filter in running processes" },
	{ "trigger", cmd_trigger, "set or read an event's triggers in running processes (hist, traceon...)" },
	{ "show", cmd_show, "print the buffers of running processes (trace)" },
	{ "pipe", cmd_pipe, "print events as they come, consuming them (trace_pipe)" },
	{ "clear", cmd_clear, "empty the buffers of running processes" },
	{ "attach", cmd_attach, "make running processes traceable that never linked libutrace (ptrace)" },
	{ "probe", cmd_probe, "dynamic probes in running processes (uprobe_events); -x C names, -k the kernel's" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	const struct cmd *c;

	fprintf(f,
		"usage: utrace [--version] [--help] <command> [<args>]\n"
		"\n"
		"utrace brings the Linux kernel's tracing system to user-space programs.\n"
		"Events are declared with the kernel's TRACE_EVENT() macros (see\n"
		"libutrace(3)); a program built with them reads, at start:\n"
		"\n"
		"  UTRACE_EVENTS=LIST   events on from the start, in the kernel's set_event\n"
		"                       syntax (sys:event, sys:*, *:event, !sys:event), ',' or\n"
		"                       ' ' apart\n"
		"  UTRACE_PRINT=DEST    'stderr' or a file: print each event as a line of the\n"
		"                       kernel's trace file\n"
		"  UTRACE_FILTER=LIST   filters from the start, EVENT:EXPRESSION entries in\n"
		"                       the kernel's filter language, ';' apart\n"
		"\n");
	if (commands[0].name) {
		fprintf(f, "commands:\n");
		for (c = commands; c->name; c++)
			fprintf(f, "  %-10s %s\n", c->name, c->help);
	}
	fprintf(f, "\nSee 'utrace <command> --help' for a command's options.\n");
}

/* What the libraries say goes to stderr, in its place among the output
 * (stderr is unbuffered, as the libraries' own fprintf() once wrote). */
static void print_stderr(const char *text)
{
	fputs(text, stderr);
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	utrace__set_printer(print_stderr);
	if (argc < 2) {
		usage(stderr);
		return 129;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("utrace %s\n", utrace_reader_version());
		return 0;
	}
	for (c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "utrace: '%s' is not a utrace command; see 'utrace --help'\n",
		argv[1]);
	return 129;
}
