/* SPDX-License-Identifier: MIT */
/*
 * Event triggers (the kernel's events/<sys>/<ev>/trigger,
 * kernel/trace/trace_events_trigger.c and trace_events_hist.c): hist,
 * traceon, traceoff, stacktrace (with libunwind), enable_event and
 * disable_event, each with an optional count (":N") and filter ("if ...").
 *
 * The agent (control.c) parses and installs them; the writer runs them
 * on each record of the event (writer.c, commit_inst(), through the
 * struct utrace__trigger_ops that init.c installs: the triggers are above
 * the writer, whose events they record).  While any
 * event has a trigger, UTRACE_TRACING_TRIGGERS is set in
 * utrace__tracing_off, which the reserve already tests: the events that
 * hold a trigger (st->soft) take the slow path, where the record is built
 * apart, the triggers run, and it is copied into the buffers that have
 * the event on (none while it is off: the kernel's soft mode).
 *
 * Each instance has its own triggers on each event (an 'inst' of -1 is
 * the top level's), which act on that instance.  ftrace's print
 * (trace_marker) has triggers too: the marker runs them on its record
 * (marker.c), the writer does not.
 */
#ifndef UTRACE_RUNTIME_TRIGGER_H
#define UTRACE_RUNTIME_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <utrace/tracepoint.h>

#include "compiler.h"
#include "filter.h"

struct utrace__trig_list;

struct utrace__event_state;

/**
 * utrace__triggers_run - run an event's triggers on its record (writer),
 * those of the top level and of every instance
 * @ev: the event
 * @rec: its record, whole
 * @size: its bytes
 * @fc: the writer's CPU and comm
 * @post: false: the hist triggers and those without a filter, before the
 *        record is committed; true: the others, after it (the kernel's
 *        event_triggers_post_call())
 *
 * Lock-free and allocation-free; runs under the RCU read lock.
 */
void utrace__triggers_run(struct utrace_event *ev, const void *rec, uint32_t size,
			  const struct utrace__filter_ctx *fc, bool post) UTRACE_HIDDEN;

/* The triggers of one instance (-1: the top level), all of them, on a
 * record already committed: the marker's (its record without the
 * newline the marker adds, as the kernel's tracing_mark_write() has it). */
void utrace__triggers_run_in(struct utrace_event *ev, int inst, const void *rec,
			     uint32_t size, const struct utrace__filter_ctx *fc) UTRACE_HIDDEN;

/**
 * utrace__triggers_set_snapshot - who takes the snapshot trigger's copy
 * @fn: asks for a copy of a buffer's pool (-1: the top level's); the
 *      agent's utrace__agent_snapshot_request(), installed by init.c
 *      (the agent is above the triggers)
 *
 * Without it the snapshot trigger fires and nothing is copied, as when no
 * agent runs.
 */
void utrace__triggers_set_snapshot(void (*fn)(int inst)) UTRACE_HIDDEN;

/* Whether the event has triggers in the instance (a hint, lock-free). */
bool utrace__triggers_any_in(const struct utrace_event *ev, int inst) UTRACE_HIDDEN;

/* How many triggers of the instance (-1: the top level) hold the event:
 * its enable file there shows the kernel's soft mode ("0*", "1*"). */
unsigned int utrace__trigger_soft(const struct utrace__event_state *st, int inst)
	UTRACE_HIDDEN;

/**
 * utrace__trigger_write - a write to the event's trigger file (agent)
 * @ev: the event (registry lock held)
 * @inst: the instance whose file it is (-1: the top level)
 * @text: what was written, not NUL-terminated
 * @len: its bytes
 * @log: set to the error_log entry of a refused write (malloc()ed,
 *       without its time stamp), or NULL
 *
 * Return: 0, or the kernel's -errno (-EINVAL, -EEXIST, -ENOENT, -ENOMEM).
 */
int utrace__trigger_write(struct utrace_event *ev, int inst, const char *text, size_t len,
			  char **log) UTRACE_HIDDEN;

/* An open of the trigger file with O_TRUNC: every hist trigger goes (the
 * kernel's unreg_all, which only hist triggers have). */
void utrace__trigger_truncate(struct utrace_event *ev, int inst) UTRACE_HIDDEN;

/* The trigger file's text; NULL when out of memory.  malloc()ed. */
char *utrace__trigger_text(struct utrace_event *ev, int inst) UTRACE_HIDDEN;

/* The hist file's text: each hist trigger's table, "\n\n" apart; NULL
 * when out of memory.  malloc()ed. */
char *utrace__trigger_hist_text(struct utrace_event *ev, int inst) UTRACE_HIDDEN;

/* An event goes away (dlclose; registry lock held): its triggers, and
 * those of other events that enable or disable it, are removed. */
void utrace__triggers_event_gone(struct utrace_event *ev) UTRACE_HIDDEN;

/* An instance goes away (rmdir; registry lock held): its triggers are
 * removed, as the kernel's clear_event_triggers(). */
void utrace__triggers_inst_gone(int inst) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_TRIGGER_H */
