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
/* Bumped whenever utrace__pool changes (fork): threads re-attach. */
extern unsigned int utrace__pool_gen UTRACE_HIDDEN;
/* tracing_on written 0 through the control: events are dropped uncounted. */
extern int utrace__tracing_off UTRACE_HIDDEN;

/* event.c: the paths without a pool (UTRACE_PRINT alone), and what a
 * commit shows to the record hook and the printer. */
void *utrace__reserve_scratch(struct utrace_tp_reserve *r, struct utrace_event *ev,
			      void *scratch, unsigned int size)
	UTRACE_HIDDEN;
void utrace__commit_observe(struct utrace_tp_reserve *r)
	UTRACE_HIDDEN;
bool utrace__rb_after_fork(void) UTRACE_HIDDEN;

/* Grace periods for filter programs (writer.c). */
bool utrace__filter_sync_init(void) UTRACE_HIDDEN;
bool utrace__filter_sync(void) UTRACE_HIDDEN;
bool utrace__threads_quiesce(void) UTRACE_HIDDEN;

/* tracepoint.c: run the event's filter under the RCU read lock. */
struct utrace__filter_ctx;
bool utrace__filter_run(const struct utrace_event *ev, const void *rec,
			unsigned int size, const struct utrace__filter_ctx *ctx)
	UTRACE_HIDDEN;

#endif /* UTRACE_RINGBUF_WRITER_H */
