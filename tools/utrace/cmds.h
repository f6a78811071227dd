/* SPDX-License-Identifier: MIT */
/* The subcommands of utrace: each lives in cmd-<name>.c. */
#ifndef UTRACE_TOOL_CMDS_H
#define UTRACE_TOOL_CMDS_H

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
int cmd_mount(int argc, char **argv);

#endif /* UTRACE_TOOL_CMDS_H */
