/* SPDX-License-Identifier: MIT */
/*
 * marker.c: ftrace's own events ("ftrace:print", "ftrace:raw_data"), which
 * the trace_marker and trace_marker_raw files record.
 */
#ifndef UTRACE_RUNTIME_MARKER_H
#define UTRACE_RUNTIME_MARKER_H

#include <stdbool.h>
#include <stddef.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

#define UTRACE_MARKER_PRINT_HDR 16   /* common fields, ip */
#define UTRACE_MARKER_RAW_HDR 12     /* common fields, id */
/*
 * The kernel cuts a trace_marker write to what its largest event holds
 * (4054 bytes) and refuses a longer trace_marker_raw write; utrace's
 * largest record is UTRACE_EVENT_MAX bytes.
 */
#define UTRACE_MARKER_PRINT_MAX (UTRACE_EVENT_MAX - UTRACE_MARKER_PRINT_HDR - 2)
#define UTRACE_MARKER_RAW_MAX (UTRACE_EVENT_MAX - UTRACE_MARKER_RAW_HDR)

/**
 * utrace__marker_register - register the ftrace events (at start-up)
 */
void utrace__marker_register(void) UTRACE_HIDDEN;

/* Whether ev is ftrace's print, the one with a trigger file. */
bool utrace__marker_is_print(const struct utrace_event *ev) UTRACE_HIDDEN;

/**
 * utrace__marker_record - record a marker write, on the calling thread
 * @raw:  trace_marker_raw (a 4-byte id, then bytes) or trace_marker (text)
 * @data: what was written
 * @len:  its bytes
 *
 * As the kernel's tracing_mark_write(): the text is cut to
 * UTRACE_MARKER_PRINT_MAX bytes and gets a newline if it has none; and
 * tracing_mark_raw_write(): at least the id, at most UTRACE_MARKER_RAW_MAX
 * bytes after it.
 *
 * Return: the bytes taken, -EINVAL (a raw write too short or too long) or
 * -EBADF (not recorded: tracing_on is 0 or the buffer has no room).
 */
int utrace__marker_record(bool raw, const void *data, size_t len) UTRACE_HIDDEN;

/* ftrace:user_stack (FTRACE_STACK_ENTRIES callers): 16 + 64 bytes. */
#define UTRACE_USER_STACK_ENTRIES 8
#define UTRACE_USER_STACK_SIZE (16 + 8 * UTRACE_USER_STACK_ENTRIES)
#ifdef UTRACE_HAVE_LIBUNWIND
#define UTRACE_HAVE_UNWINDER 1
#else
#define UTRACE_HAVE_UNWINDER 0
#endif

/**
 * utrace__user_stack_register - register ftrace:user_stack, once
 *
 * On the first stacktrace trigger (so that the ids of the other events
 * do not depend on it).
 *
 * Return: false when this build has no unwinder (no libunwind).
 */
bool utrace__user_stack_register(void) UTRACE_HIDDEN;

/*
 * The frames a stack leaves out, innermost first: libutrace's own and
 * those of the event's generated code in its object (its probe, its
 * iterator: the functions named utrace_event_* and __traceiter_*, which an
 * -O2 build may clone, .constprop, or reach by a tail call), as address
 * ranges, worked out once when the trigger is set.
 */
#define UTRACE__STACK_SKIP_MAX 64
struct utrace__stack_skip {
	unsigned int nr;
	uintptr_t lo[UTRACE__STACK_SKIP_MAX], hi[UTRACE__STACK_SKIP_MAX];
};

/**
 * utrace__stack_skip_of - the ranges to leave out for an event
 * @probe: an address of the event's generated code (its class's probe)
 * @s: filled in (libutrace first; what does not fit is not left out)
 */
void utrace__stack_skip_of(uintptr_t probe, struct utrace__stack_skip *s) UTRACE_HIDDEN;

/**
 * utrace__user_stack_record - record the calling thread's stack (writer)
 * @skip: what to leave out (utrace__stack_skip_of())
 *
 * The stacktrace trigger: up to 8 return addresses, from the code that
 * fired the event (the traced call site) outwards, unwound with
 * libunwind's local unwinder (DWARF CFI, so frame pointers are not
 * needed; unw_step() is safe in a signal handler), into an
 * ftrace:user_stack record, nested in the event's.  The innermost frames
 * up to the last one in @skip are left out; the slots after the
 * outermost frame stay 0 (the end, as the kernel's).
 */
void utrace__user_stack_record(const struct utrace__stack_skip *skip) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_MARKER_H */
