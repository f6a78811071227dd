/* SPDX-License-Identifier: MIT */
/* The subcommands of utrace: each lives in cmd-<name>.c. */
#ifndef UTRACE_TOOL_CMDS_H
#define UTRACE_TOOL_CMDS_H

int cmd_record(int argc, char **argv);
int cmd_script(int argc, char **argv);

#endif /* UTRACE_TOOL_CMDS_H */
