/* SPDX-License-Identifier: MIT */
/* The writer's entry points inside libutrace (see writer.c). */
#ifndef UTRACE_RINGBUF_WRITER_H
#define UTRACE_RINGBUF_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include <utrace/tracepoint.h>

#include "pool.h"

/* The pool of this process, or NULL when nothing records it. */
extern struct utrace_pool *utrace__pool UTRACE_HIDDEN;
/* Bumped whenever utrace__pool changes (fork): threads re-attach.  Its
 * bit UTRACE_TP_SLOW sends every event to the library's path (see
 * utrace__fast_update()). */
#define utrace__pool_gen (utrace_tp_fast_v2.gen)
/**
 * utrace__filter_count - an event's filter is set (+1) or removed (-1)
 * @delta: +1 before ev->filter is set, -1 after it is cleared
 *
 * Keeps UTRACE_TP_FILTER of the generation word: set while any event
 * has a filter.
 */
void utrace__filter_count(int delta) UTRACE_HIDDEN;
/* tracing_on written 0 through the control: events are dropped uncounted. */
extern int utrace__tracing_off UTRACE_HIDDEN;
/* The buffer this thread's trace_marker records go to (-1: top level). */
extern __thread int utrace__marker_inst UTRACE_HIDDEN;

/**
 * utrace__rb_after_fork - forget the parent's pages in a fork child
 *
 * Return: whether the forking thread was inside an event (fork() from a
 * signal handler): the caller must then replace the parent's pool with
 * private memory rather than unmap it.
 */
bool utrace__rb_after_fork(void) UTRACE_HIDDEN;

/**
 * utrace__fast_update - switch the inlined writer on or off for all threads
 *
 * Call after changing the pool, tracing_on, instances, the record hook or
 * the print destination.
 */
void utrace__fast_update(void) UTRACE_HIDDEN;

/**
 * utrace__fast_init - decide where the inlined writer reads the CPU
 *
 * Called once at start-up, after utrace__clock_init().
 */
void utrace__fast_init(void) UTRACE_HIDDEN;

struct utrace__filter_ctx;

/**
 * struct utrace__trigger_ops - the event triggers, as the writer and the
 * marker run them
 * @run:    utrace__triggers_run(): an event's triggers on its record,
 *          before (@post false) and after (@post true) its commit
 * @run_in: utrace__triggers_run_in(): one buffer's triggers on a record
 *          already committed (the marker's)
 * @any_in: utrace__triggers_any_in(): whether the event has triggers in
 *          the buffer (a hint, lock-free)
 *
 * trigger.c is above the writer (its triggers record events of their own,
 * and reach the agent and the synthetic events): the writer reaches it
 * through these, installed by init.c before any event registers, as the
 * registry reaches the layers above it through struct utrace__registry_ops.
 */
struct utrace__trigger_ops {
	void (*run)(struct utrace_event *ev, const void *rec, uint32_t size,
		    const struct utrace__filter_ctx *fc, bool post);
	void (*run_in)(struct utrace_event *ev, int inst, const void *rec, uint32_t size,
		       const struct utrace__filter_ctx *fc);
	bool (*any_in)(const struct utrace_event *ev, int inst);
};

/**
 * utrace__writer_set_trigger_ops - install the triggers (init.c, once)
 * @ops: the hooks, which must outlive every event
 */
void utrace__writer_set_trigger_ops(const struct utrace__trigger_ops *ops) UTRACE_HIDDEN;

/**
 * utrace__writer_trigger_ops - the triggers installed, or NULL before
 *
 * Return: what utrace__writer_set_trigger_ops() installed; NULL while no
 * event has registered (none can have a trigger then).
 */
const struct utrace__trigger_ops *utrace__writer_trigger_ops(void) UTRACE_HIDDEN;

/* Grace periods for filter programs. */

/**
 * utrace__filter_sync_init - use membarrier() for filter grace periods
 *
 * Called once by the agent thread (it may sleep).
 *
 * Return: whether the lock-free filter path is on.
 */
bool utrace__filter_sync_init(void) UTRACE_HIDDEN;

/**
 * utrace__filter_sync - wait until no thread runs a replaced filter program
 *
 * Return: false if a thread stayed inside one event for more than about a
 * second: the caller must then not free the old program.
 */
bool utrace__filter_sync(void) UTRACE_HIDDEN;

/**
 * utrace__threads_quiesce - wait until the threads inside an event leave it
 *
 * Return: false when it cannot tell (no membarrier, TSan) or a thread
 * stayed inside one event too long.
 */
bool utrace__threads_quiesce(void) UTRACE_HIDDEN;

/* record -g: the function that records each event's stack at its commit
 * (stacks.c: utrace__stacks_capture(); NULL: none).  Set once, at init,
 * before utrace__fast_update(): while set, every event takes the
 * library's path (the inlined writer cannot walk stacks). */
void utrace__writer_set_stack_capture(uint32_t (*fn)(const struct utrace_event *ev,
						     const struct utrace_event **ref)) UTRACE_HIDDEN;

#endif /* UTRACE_RINGBUF_WRITER_H */
