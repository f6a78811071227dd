/* SPDX-License-Identifier: MIT */
/* The subcommands of utrace: each lives in cmd-<name>.c. */
#ifndef UTRACE_TOOL_CMDS_H
#define UTRACE_TOOL_CMDS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

int cmd_record(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_enable(int argc, char **argv);
int cmd_disable(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_pipe(int argc, char **argv);
int cmd_clear(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
/* One -e argument of utrace script (or report) into set_event tokens in
 * o (ev, ev_text pointing into arg, ev_matched): 0, -ENOMEM, or
 * UTRACE_EBADSPEC for a token the kernel refuses (cmd-script.c). */
struct utrace__print_opts;
int script_add_events(struct utrace__print_opts *o, char *arg);
/* utrace hist -p: the hist files of running processes (cmd-ctl.c). */
int cmd_hist_live(const pid_t *pids, size_t nr, const char *event);
int cmd_mount(int argc, char **argv);
int cmd_enter(int argc, char **argv);
int cmd_probe(int argc, char **argv);

/* A temporary file for a recording ("/tmp/utrace-WHO-XXXXXX"); -1 (said
 * on stderr).  (cmd-stat.c) */
int cmd_temp_trace(char *path, size_t len, const char *who);
/* Run argv under `self record -o path -- argv...` (self: the utrace
 * binary), its lines on stderr as the user would see them.  Returns the
 * recorder's exit status, or -1 when it could not be run.  (cmd-stat.c) */
int cmd_record_command(const char *self, char **argv, const char *path);

/* "utrace CMD: <fmt with arg>; see 'utrace CMD --help'" on stderr; 129. */
static inline int usage_error(const char *cmd, const char *fmt, const char *arg)
	__attribute__((format(printf, 2, 0)));
static inline int usage_error(const char *cmd, const char *fmt, const char *arg)
{
	fprintf(stderr, "utrace %s: ", cmd);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'utrace %s --help'\n", cmd);
	return 129;
}

/* A process id given on the command line: decimal, 1 to 2^31-1. */
static inline bool parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > 0x7fffffff)
		return false;
	*pid = (pid_t)v;
	return true;
}

#endif /* UTRACE_TOOL_CMDS_H */
