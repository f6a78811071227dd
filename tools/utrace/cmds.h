/* SPDX-License-Identifier: MIT */
/* The subcommands of utrace: each lives in cmd-<name>.c. */
#ifndef UTRACE_TOOL_CMDS_H
#define UTRACE_TOOL_CMDS_H

#include <stdio.h>

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
int cmd_top(int argc, char **argv);
int cmd_hist(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_enter(int argc, char **argv);
int cmd_probe(int argc, char **argv);

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

#endif /* UTRACE_TOOL_CMDS_H */
