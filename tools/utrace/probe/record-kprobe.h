/* SPDX-License-Identifier: MIT */
/*
 * utrace record --kernel-probe DEF: the kernel's uprobes as kernel events
 * of the recording (record-kprobe.c).
 */
#ifndef UTRACE_TOOL_RECORD_KPROBE_H
#define UTRACE_TOOL_RECORD_KPROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Check each definition (an instruction boundary, lib/probe/kuprobe.c),
 * write it to uprobe_events in the group utrace_<our pid>, and append its
 * "GROUP:EVENT" to the kernel entries (*kevents, realloc'ed) so the
 * recorder's tracing instance enables it for the traced processes.  OBJ
 * is looked up in pids[0] if any, else defaults to cmd (found in PATH).
 * Probes and instances left by killed recorders are removed first; ours
 * are removed at exit (after the instance: the kernel refuses to remove
 * an enabled probe).  0, or -1 after saying why (none left behind).
 */
int rec_kprobes_start(char ***kevents, size_t *nr_kevents, char **defs, size_t nr,
		      const pid_t *pids, size_t nr_pids, const char *cmd);

/*
 * utrace record --probe DEF: check each definition before the command
 * starts, as far as can be done outside the process: its syntax (the
 * kernel's error_log entry, caret included) and, for an object named by
 * its path or a library the tool maps itself (libc.so.6), its symbol and
 * the site, by the check the process makes (utrace__probe_site_rules()).
 * Other objects and the program's own symbols are left to the process
 * (the command may exec other programs), which tells the recorder what it
 * refuses.  0, or -1 after saying why.
 */
int rec_probes_check(char **defs, size_t nr);

/*
 * Whether the command can start, as execvp() would look for it (in PATH
 * when it has no '/'): 0 with its path in path, or -errno with why filled
 * ("no such command in PATH", strerror()).
 */
int rec_cmd_runnable(const char *cmd, char *path, size_t n, char *why, size_t wn);

/* Whether one of these processes still runs (kernel-only -p processes:
 * the recording lasts as long as they do). */
bool rec_pids_alive(const pid_t *pids, size_t nr);

#endif /* UTRACE_TOOL_RECORD_KPROBE_H */
