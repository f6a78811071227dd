/* SPDX-License-Identifier: MIT */
/*
 * event.c's entry points inside libutrace: the record of an event when it
 * has no page to go to (no pool: the record hook and UTRACE_PRINT only),
 * and what a commit shows to them.
 */
#ifndef UTRACE_RUNTIME_EVENT_H
#define UTRACE_RUNTIME_EVENT_H

#include <sys/types.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

/**
 * utrace__gettid - the calling thread's id, cached per thread
 *
 * Return: the kernel's thread id of the caller.
 */
pid_t utrace__gettid(void) UTRACE_HIDDEN;

/**
 * utrace__thread_after_fork - forget the cached thread id in a fork child
 *
 * The thread that called fork() is the child's only thread, with an id of
 * its own.
 */
void utrace__thread_after_fork(void) UTRACE_HIDDEN;

/*
 * Sees every committed record (tests; and the writer).  NULL: nobody
 * looks.
 */
extern void (*utrace__record_hook)(const struct utrace_event *ev,
				   const void *rec, unsigned int size) UTRACE_HIDDEN;

/**
 * utrace__set_record_hook - set utrace__record_hook (tests)
 * @hook: called with each committed record, or NULL
 *
 * Set it through this, not by assignment: while a hook is set, events
 * leave the inlined writer for the library's path, which calls it.
 */
void utrace__set_record_hook(void (*hook)(const struct utrace_event *ev,
					  const void *rec, unsigned int size)) UTRACE_HIDDEN;

/**
 * utrace__reserve_scratch - reserve an event's record in the probe's frame
 * @r: the reservation, filled in
 * @ev: the event
 * @scratch: the probe's stack buffer
 * @size: bytes of the record
 *
 * The path without a pool (UTRACE_PRINT or the record hook alone).
 *
 * Return: the record to fill in, or NULL when it is larger than
 * UTRACE_EVENT_MAX (counted, dropped).
 */
void *utrace__reserve_scratch(struct utrace_tp_reserve *r, struct utrace_event *ev,
			      void *scratch, unsigned int size)
	UTRACE_HIDDEN;

/**
 * utrace__commit_observe - show a committed record to the hook and printer
 * @r: the reservation being committed
 */
void utrace__commit_observe(struct utrace_tp_reserve *r)
	UTRACE_HIDDEN;

/**
 * utrace__print_set_dest - where UTRACE_PRINT said to print events
 * @dest: "stderr", "stdout" or a file's path (copied); read at start-up
 */
void utrace__print_set_dest(const char *dest) UTRACE_HIDDEN;

/**
 * utrace__print_open - open UTRACE_PRINT's destination, once
 *
 * When the first events register, so that a process without events
 * leaves no file behind.  A refused destination is said once.  The
 * writer is above this file: its caller calls utrace__fast_update()
 * after it, so that events leave the inlined writer for the printer.
 */
void utrace__print_open(void) UTRACE_HIDDEN;

/* Where events are printed as lines (UTRACE_PRINT), or -1; and its name. */
extern int utrace__print_fd UTRACE_HIDDEN;
extern const char *utrace__print_path UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_EVENT_H */
