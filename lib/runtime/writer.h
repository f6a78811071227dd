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

#endif /* UTRACE_RINGBUF_WRITER_H */
