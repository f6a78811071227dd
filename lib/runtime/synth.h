/* SPDX-License-Identifier: MIT */
/*
 * Synthetic events (the kernel's synthetic_events file,
 * kernel/trace/trace_events_synth.c): events defined at run time by a
 * line "NAME TYPE FIELD[; TYPE FIELD]...", in the system "synthetic".
 * Each is an event like the others (its format, enable, filter and
 * trigger files); its records are written only by a hist trigger's
 * onmatch() action, never by a call site.
 *
 * The definitions and the record layout are synthdef.h's.
 */
#ifndef UTRACE_RUNTIME_SYNTH_H
#define UTRACE_RUNTIME_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

#include "synthdef.h"

struct utrace__synth;

/**
 * utrace__synth_write - a write to synthetic_events (agent)
 * @text: what was written: lines, each a definition or "!NAME"
 * @len: its bytes
 * @dyn: the lines are dynamic_events' "s:[synthetic/]NAME FIELD..." (the
 *       kernel's create_synth_event(), its own errors and error_log
 *       command)
 * @log: set to the error_log entry of a refused line (malloc()ed,
 *       without its time stamp), or NULL
 *
 * The lines are applied in order; the first refused one ends the write.
 *
 * Return: 0, or the kernel's -errno (-EINVAL, -EEXIST, -ENOENT, -EBUSY,
 * -ENOMEM).
 */
int utrace__synth_write(const char *text, size_t len, bool dyn, char **log) UTRACE_HIDDEN;

/* An open with O_TRUNC: every synthetic event goes, or none when one is
 * busy (-EBUSY, the kernel's dyn_events_release_all()). */
int utrace__synth_clear(void) UTRACE_HIDDEN;

/* What synthetic_events reads: "NAME\tTYPE FIELD; TYPE FIELD\n" each, in
 * the order they were made; NULL when out of memory.  malloc()ed. */
char *utrace__synth_text(void) UTRACE_HIDDEN;

/**
 * utrace__synth_get - a synthetic event by name, held (agent)
 *
 * A held event cannot be removed (-EBUSY): a hist trigger's action holds
 * the event it generates.
 *
 * Return: the event, or NULL.
 */
struct utrace__synth *utrace__synth_get(const char *name) UTRACE_HIDDEN;
void utrace__synth_put(struct utrace__synth *s) UTRACE_HIDDEN;

/* Its fields (the record's, after the common ones) and how many. */
const struct utrace_event_field *utrace__synth_fields(const struct utrace__synth *s,
						      unsigned int *nr) UTRACE_HIDDEN;

/**
 * utrace__synth_fire - write one record of the event (writer)
 * @s: the event (held)
 * @vals: a value for each field, in order
 *
 * Nothing when the event is off (and no trigger holds it).  Lock-free,
 * allocation-free; nested in the record of the event that fired it.
 */
void utrace__synth_fire(struct utrace__synth *s, const uint64_t *vals) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_SYNTH_H */
