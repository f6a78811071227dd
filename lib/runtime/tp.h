/* SPDX-License-Identifier: MIT */
/*
 * tracepoint.c's entry points inside libutrace: probe lists changed
 * without waiting (reap() waits and frees), fork, and the filter's RCU
 * read side.  The public half is in <utrace/tracepoint.h>.
 */
#ifndef UTRACE_RUNTIME_TP_H
#define UTRACE_RUNTIME_TP_H

#include <stdbool.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

/**
 * utrace__tp_add - add a probe to a tracepoint, not waiting
 * @tp: the tracepoint
 * @fn: the probe
 * @data: its data
 *
 * The old probe array is freed by utrace__tp_reap().
 *
 * Return: 0, -EEXIST, -ENOMEM, -EINVAL, or the error of the event's
 * register function.
 */
int utrace__tp_add(struct utrace_tracepoint *tp, utrace_probe_fn fn,
		   void *data) UTRACE_HIDDEN;

/**
 * utrace__tp_remove - remove a probe from a tracepoint, not waiting
 * @tp: the tracepoint
 * @fn: the probe
 * @data: its data
 *
 * Return: 0, -ENOENT, -ENOMEM or -EINVAL.
 */
int utrace__tp_remove(struct utrace_tracepoint *tp, utrace_probe_fn fn,
		      void *data) UTRACE_HIDDEN;

/**
 * utrace__tp_reap - free the probe arrays replaced so far
 *
 * Waits for a grace period, unless the caller is inside a read-side
 * section (a probe changing probes): the arrays then wait for a later call.
 */
void utrace__tp_reap(void) UTRACE_HIDDEN;


/**
 * utrace__tp_before_fork - hold the probe lists across fork()
 */
void utrace__tp_before_fork(void) UTRACE_HIDDEN;

/**
 * utrace__tp_after_fork - let go of the probe lists after fork()
 * @child: nonzero in the child, 0 in the parent
 */
void utrace__tp_after_fork(int child) UTRACE_HIDDEN;

struct utrace__filter_ctx;

/**
 * utrace__filter_run - run an event's filter under the RCU read lock
 * @ev: the event, whose ev->filter is read once
 * @rec: the record
 * @size: its bytes
 * @ctx: CPU and comm of the writer
 *
 * Return: true when the record passes (or the event has no filter).
 */
bool utrace__filter_run(const struct utrace_event *ev, const void *rec,
			unsigned int size, const struct utrace__filter_ctx *ctx)
	UTRACE_HIDDEN;

/**
 * utrace__filter_run_at - run the filter program at '*fp' under the RCU read lock
 * @fp: where the program's pointer is (NULL: none)
 * @rec: the record
 * @size: its bytes
 * @ctx: CPU and comm of the writer
 *
 * Return: true when the record passes (or there is no program).
 */
bool utrace__filter_run_at(void *const *fp, const void *rec, unsigned int size,
			   const struct utrace__filter_ctx *ctx) UTRACE_HIDDEN;

/*
 * utrace__tp_calling - the tracepoint whose regfunc or unregfunc is
 * running (they take no argument): one pair of functions can serve many
 * tracepoints, as the dynamic probes' events do (uprobes.c).  Valid only
 * inside those calls (the registry's lock is held).
 */
struct utrace_tracepoint *utrace__tp_calling(void) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_TP_H */
