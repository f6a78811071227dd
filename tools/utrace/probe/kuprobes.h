/* SPDX-License-Identifier: MIT */
/*
 * The kernel's uprobe_events for the kernel-uprobe fallback (utrace probe
 * -k, utrace record --kernel-probe): lines are written and removed here;
 * lib/probe/kuprobe.c makes and checks them.  utrace record's own probes
 * are in the group utrace_<recorder pid>, so that one left by a recorder
 * that was killed is found and removed by the next.
 */
#ifndef UTRACE_TOOL_KUPROBES_H
#define UTRACE_TOOL_KUPROBES_H

#include <stddef.h>

/* Why uprobe_events cannot be written here, or NULL. */
const char *kup_unavailable(void);
/* Append a line to uprobe_events: 0, or -errno with err filled (the
 * kernel's error_log line when it has one). */
int kup_write(const char *line, char *err, size_t n);
/* Remove GRP/EVENT ("-:GRP/EVENT"): 0 or -errno, err filled. */
int kup_remove(const char *grp_event, char *err, size_t n);
/* Remove the probes of groups utrace_<pid> whose recorder is gone. */
void kup_remove_stale(void);

#endif /* UTRACE_TOOL_KUPROBES_H */
