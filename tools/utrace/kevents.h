/* SPDX-License-Identifier: MIT */
/*
 * Kernel events in a recording (utrace record -e sched:sched_switch):
 * a tracing instance of the recorder's own, its pages copied into the
 * trace file as KPAGE records beside the programs' pages (kevents.c).
 */
#ifndef UTRACE_TOOL_KEVENTS_H
#define UTRACE_TOOL_KEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct utrace__tfw;
struct kev;

/*
 * Whether an -e entry names kernel events: "kernel:SYS:EV" always (the
 * prefix is dropped into *entry), "user:SYS:EV" never (dropped too), else
 * when its system (before ':', without a leading '!') is a system of the
 * kernel's tracefs events/ directory.  A bare name or a wildcard system
 * is the programs'.
 */
bool kev_is_kernel(const char **entry);
/* Why kev_is_kernel() could not tell an entry without a prefix (tracefs
 * not readable here: it took it for the programs'), or NULL. */
const char *kev_cannot_tell(void);

/* Why kernel events cannot be recorded here, or NULL when they can (the
 * tracefs directory mounted, if root, and writable). */
const char *kev_unavailable(void);

/*
 * Set up the instance "utrace-record-<our pid>" for the kernel entries
 * (a stale one of a recorder that died is removed first): trace clock
 * mono (checked), options event-fork and record-tgid, the entries
 * enabled, the filters ("EVENT:EXPRESSION", EVENT as set_event's) written
 * to the filter files of the enabled events they name, their formats
 * written to 'out'; its tracing stays off.  NULL after saying why on
 * stderr (a filter the kernel refuses, one naming no enabled event);
 * nothing is left behind then.
 */
struct kev *kev_start(struct utrace__tfw *out, char **entries, size_t nr,
		      char **filters, size_t nr_filters);
/* Remove the instances of recorders that died (kev_start does it too;
 * the kernel-uprobe fallback first, so their probes can be removed). */
void kev_remove_stale(void);
/* Trace the tasks of these processes (and, through event-fork, their
 * children) from now on: 0, or -1 said why. */
int kev_set_pids(struct kev *k, const pid_t *pids, size_t nr_pids);
/* Copy the pages the kernel has filled to the file. */
void kev_poll(struct kev *k);
/* Stop, copy what is left, name the tasks, remove the instance (k may
 * be NULL); the number of kernel events written, and those the kernel
 * lost (*lost_unknown: some without a count). */
unsigned long long kev_stop(struct kev *k, unsigned long long *lost, bool *lost_unknown);

/* utrace list --kernel: the kernel's events, "system:event" a line,
 * those matching 'glob' (NULL: all); 0 or 1 (said why). */
int kev_list(const char *glob);

#endif /* UTRACE_TOOL_KEVENTS_H */
