/* SPDX-License-Identifier: MIT */
/*
 * The worker of `utrace stat` (stat.c): count a command's utrace events
 * and the software counters of a machine without a PMU, and print them in
 * the layout of `perf stat`.  The command (cmd-stat.c) runs the command.
 */
#ifndef UTRACE_READER_STAT_H
#define UTRACE_READER_STAT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "compiler.h"

struct utrace__stat_opts {
	char **argv;                    /* the command, NULL-terminated */
	const char *events;             /* -e, ',' apart; NULL: all */
	const char *sep;                /* -x: CSV with this separator */
	bool json;                      /* -j */
	unsigned int interval_ms;       /* -I (0: none) */
	unsigned int runs;              /* -r (1 at least) */
	bool rusage;                    /* --rusage: getrusage() only */
};

struct rusage;
struct utrace__stat;

/*
 * What the command (cmd-stat.c) does with these: o->runs times, run the
 * command under `utrace record` into a temporary file, the recorder
 * telling the command's pid before its exec (UTRACE__STAT); around each
 * run, utrace__stat_run_begin() (task-clock, context-switches,
 * cpu-migrations and page-faults counted by perf_event_open() on the
 * command, or getrusage() where it is denied), utrace__stat_run_wait()
 * while it runs (the -I lines), utrace__stat_run_end() with its
 * getrusage(), utrace__stat_add_run() with the recording; then
 * utrace__stat_print() prints the counts to out.
 */

/* Return: 0 or -ENOMEM. */
int utrace__stat_new(const struct utrace__stat_opts *o, FILE *out, struct utrace__stat **sp)
	UTRACE_HIDDEN;
void utrace__stat_free(struct utrace__stat *s) UTRACE_HIDDEN;

/* The command (cmd, held before its exec) is about to go: its counters. */
void utrace__stat_run_begin(struct utrace__stat *s, pid_t cmd) UTRACE_HIDDEN;

/* Until the command is gone: the -I lines meanwhile. */
void utrace__stat_run_wait(struct utrace__stat *s) UTRACE_HIDDEN;

/* The run ended: its counters, or what getrusage() said of the command. */
void utrace__stat_run_end(struct utrace__stat *s, const struct rusage *ru) UTRACE_HIDDEN;

/* Count the run's recording (path) into the means.  Return: 0, -ENOMEM,
 * or -EINVAL: a bad -e (said). */
int utrace__stat_add_run(struct utrace__stat *s, const char *path) UTRACE_HIDDEN;

/* The counts, as perf stat prints them (to the out of utrace__stat_new()). */
void utrace__stat_print(struct utrace__stat *s) UTRACE_HIDDEN;

#endif /* UTRACE_READER_STAT_H */
