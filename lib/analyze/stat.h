/* SPDX-License-Identifier: MIT */
/*
 * The worker of `utrace stat` (stat.c): run a command, count its utrace
 * events and the software counters of a machine without a PMU, and print
 * them in the layout of `perf stat`.  Internal to the reader library.
 */
#ifndef UTRACE_READER_STAT_H
#define UTRACE_READER_STAT_H

#include <stdbool.h>
#include <stdio.h>

#include "compiler.h"

struct utrace__stat_opts {
	char **argv;                    /* the command, NULL-terminated */
	const char *events;             /* -e, ',' apart; NULL: all */
	const char *sep;                /* -x: CSV with this separator */
	bool json;                      /* -j */
	unsigned int interval_ms;       /* -I (0: none) */
	unsigned int runs;              /* -r (1 at least) */
	bool rusage;                    /* --rusage: getrusage() only */
	const char *self;               /* the utrace binary, to run its recorder */
};

/*
 * Run the command o->runs times under `utrace record` into a temporary
 * file, with task-clock, context-switches, cpu-migrations and page-faults
 * counted by perf_event_open() (or getrusage() where it is denied), and
 * print the counts to out.  Returns the command's exit status (of the
 * last run), or 1 when utrace itself failed.
 */
int utrace__stat_run(const struct utrace__stat_opts *o, FILE *out) UTRACE_HIDDEN;

/*
 * Run argv under `self record -o path -- argv...` (self: the utrace
 * binary), its lines on stderr as the user would see them.  Returns the
 * recorder's exit status, or -1 when it could not be run.
 */
int utrace__record_command(const char *self, char **argv, const char *path) UTRACE_HIDDEN;

/* A temporary file for a recording ("/tmp/utrace-XXXXXX"); -1 (said). */
int utrace__temp_trace(char *path, size_t len, const char *who) UTRACE_HIDDEN;

#endif /* UTRACE_READER_STAT_H */
