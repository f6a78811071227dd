/* SPDX-License-Identifier: MIT */
/*
 * uprobe_events and uprobe_profile of the traced process (uprobes.c):
 * what the control layer calls.
 */
#ifndef UTRACE_PROBE_UPROBES_H
#define UTRACE_PROBE_UPROBES_H

#include <stdbool.h>

#include "compiler.h"
#include "probe.h"

/**
 * utrace__uprobes_write - apply one line of uprobe_events
 * @line: a definition, "-:[GRP/]EVENT", a comment or nothing
 * @err: filled on error; err->logged: add utrace__probe_log_text() to
 *       the top-level error_log
 *
 * Return: 0, or the negative errno of the kernel's write().
 */
int utrace__uprobes_write(const char *line, struct utrace__probe_error *err) UTRACE_HIDDEN;

/* An open with O_TRUNC: removes every probe event, -EBUSY (and none
 * removed) when one is enabled. */
int utrace__uprobes_clear(void) UTRACE_HIDDEN;

/* What utrace__uprobes_text() gives. */
enum utrace__uprobes_text_kind {
	UTRACE__UPROBES_EVENTS,       /* uprobe_events */
	UTRACE__UPROBES_PROFILE,      /* uprobe_profile */
	UTRACE__UPROBES_VERBOSE,      /* uprobe_events, each line followed by
				       * "    # " and where it is placed */
};

/* The text, malloc()ed; NULL when out of memory. */
char *utrace__uprobes_text(enum utrace__uprobes_text_kind kind) UTRACE_HIDDEN;

/* Note the objects loaded at start (libutrace's constructor): they are
 * never unloaded, so their probes stay through a dlclose(). */
void utrace__uprobes_snapshot(void) UTRACE_HIDDEN;

/* Apply $UTRACE_PROBES (definitions separated by newlines or ';'), at
 * start; errors are said on stderr. */
void utrace__uprobes_from_env(void) UTRACE_HIDDEN;

/* This thread does only utrace's own work (the agent's): the probes it
 * hits (malloc, open, ...) are skipped, not run nor counted. */
void utrace__uprobes_quiet_thread(void) UTRACE_HIDDEN;

#endif /* UTRACE_PROBE_UPROBES_H */
