/* SPDX-License-Identifier: MIT */
/*
 * Trace instances (the mount's instances/<name>/, the kernel's
 * trace_array): buffers of their own, with their own enables, filters,
 * tracing_on and pid lists.  The top-level buffer is utrace__pool; an
 * instance is one entry of utrace__inst[].
 *
 * The writer's cost: none while no instance exists.  mkdir sets
 * UTRACE_TRACING_INSTANCES in utrace__tracing_off, which the reserve's
 * first test already reads, so that every event then takes the slow path
 * (writer.c, reserve_inst()): the record is built once in the probe's
 * frame and copied into the top-level page and into each instance that
 * has the event on and whose filter takes it.
 */
#ifndef UTRACE_RUNTIME_INSTANCE_H
#define UTRACE_RUNTIME_INSTANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

struct utrace_pool;
struct utrace__filter;

/* At most this many instances per process (the kernel has no limit). */
#define UTRACE_INSTANCES_MAX 32

/* What the writer reads of an instance; written by the agent thread. */
struct utrace__inst_target {
	struct utrace_pool *pool;    /* NULL: no such instance (any more) */
	unsigned int gen;            /* changes with every pool: threads re-attach */
	int tracing_off;             /* its tracing_on is 0 */
};

extern struct utrace__inst_target utrace__inst[UTRACE_INSTANCES_MAX] UTRACE_HIDDEN;

/* An event's filter in one instance (utrace__event_state.ifilt[i]). */
struct utrace__inst_filter {
	struct utrace__filter *filter;   /* the program the writer runs */
	char *text;                      /* what the filter file reads; NULL: "none\n" */
	char *expr;                      /* the user's expression that compiled */
};

/* Bits of utrace__tracing_off. */
#define UTRACE_TRACING_OFF 1         /* top-level tracing_on is 0 */
#define UTRACE_TRACING_INSTANCES 2   /* an instance exists: the slow path */
#define UTRACE_TRACING_TRIGGERS 4    /* an event has a trigger (trigger.h) */

#endif /* UTRACE_RUNTIME_INSTANCE_H */
