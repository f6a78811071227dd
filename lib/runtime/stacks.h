/* SPDX-License-Identifier: MIT */
/*
 * Call stacks of every event (utrace record -g / --call-graph, issue 32):
 * the user stack at the event, from the traced call site outwards, up to
 * a number of frames, by frame pointers (fp) or from .eh_frame with
 * libunwind (dwarf), stored once per distinct stack.
 *
 * Switched on by UTRACE_STACKS=MODE[,SIZE[,FRAMES]] (MODE fp or dwarf;
 * SIZE: the stack bytes above the traced call site's frame walked at
 * most, as perf's dump size, default 8192; FRAMES: at most this many
 * frames, default 64, at most UTRACE__STACK_FRAMES_MAX), which utrace
 * record sets; or, in a running process, by utrace record -g -p (the
 * control's UTRACE_CTL_STACKS) while that recorder is attached.
 *
 * Two builtin ftrace events carry them (docs/trace-file-format.md):
 *   ftrace:stack      id (u32), nr (u32), caller[] (unsigned long, nr):
 *                     a distinct stack, the first time it is seen (and
 *                     the stack of the event just before it)
 *   ftrace:stack_ref  id (u32): the event just before it had stack id
 * Each follows its event in the thread's buffer: a stack_ref is written
 * into the event's page right after it when it fits (the writer's commit,
 * no second reserve), else, as a stack's definition, nested in the event.
 */
#ifndef UTRACE_RUNTIME_STACKS_H
#define UTRACE_RUNTIME_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

#define UTRACE__STACK_FRAMES_MAX 128

/* Read UTRACE_STACKS (library init): 1 when stacks are on, 0 when off,
 * -EINVAL when it is malformed (stacks stay off). */
int utrace__stacks_init(void) UTRACE_HIDDEN;

/* `utrace record -g -p PID` (UTRACE_CTL_STACKS): switch stacks on now
 * with spec as UTRACE_STACKS's.  1 switched on, 0 on already with the
 * same spec, -EBUSY on with another, -EINVAL malformed (or dwarf without
 * libunwind).  The agent's thread only. */
int utrace__stacks_set(const char *spec) UTRACE_HIDDEN;

/* The recorder that switched them on went: off again (stacks that
 * UTRACE_STACKS switched on at the start stay on). */
void utrace__stacks_unset(void) UTRACE_HIDDEN;

/* The frames walks leave out (libutrace's, the registered objects'
 * generated code), worked out now: for hist:keys=stacktrace. */
void utrace__stacks_skip_init(void) UTRACE_HIDDEN;

/* Register ftrace:stack and ftrace:stack_ref when stacks are on. */
void utrace__stacks_register(void) UTRACE_HIDDEN;

/* The writer: the stack of the event ev being committed (nothing for
 * ftrace's own events).  With ref not NULL and the stack already defined,
 * only its id is returned and *ref set to ftrace:stack_ref: the writer
 * appends the stack_ref record to the event in place.  Otherwise the
 * record (ftrace:stack or stack_ref) is written nested in the event
 * (the stash), and 0 is returned. */
uint32_t utrace__stacks_capture(const struct utrace_event *ev, const struct utrace_event **ref)
	UTRACE_HIDDEN;

/* A recorder attaches (record -p): it has seen none of the stacks
 * written so far, so each is written whole again the next time. */
void utrace__stacks_forget(void) UTRACE_HIDDEN;

/* In a fork child: the table of stacks is the parent's; start afresh. */
void utrace__stacks_after_fork(void) UTRACE_HIDDEN;

/*
 * The walk itself (also for the tests and bench): up to max return
 * addresses of the calling thread into ips, innermost first, from the
 * caller of this function; by frame pointers when dwarf is false, every
 * read checked against the thread's stack bounds first; no frame beyond
 * size bytes above the first frame kept.  The number found.
 */
unsigned int utrace__stack_walk(uintptr_t *ips, unsigned int max, bool dwarf, uintptr_t size)
	UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_STACKS_H */
