/* SPDX-License-Identifier: MIT */
/*
 * The kernel's trace-line prefix, written once for every path that prints
 * events: UTRACE_PRINT in the traced program (runtime/event.c) and the
 * reader's printer (reader/print.c: script, show, pipe, the mount).
 */
#ifndef UTRACE_COMMON_TRACELINE_H
#define UTRACE_COMMON_TRACELINE_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

/* Room utrace__trace_prefix() needs beyond the comm's own bytes. */
#define UTRACE_TRACE_PREFIX_ROOM 80

/**
 * utrace__trace_prefix - write "%16s-%-7d [%03d] ..... %5lu.%06lu: "
 * @p:        where; room for @comm_len + UTRACE_TRACE_PREFIX_ROOM bytes
 * @comm:     the thread's name (@comm_len bytes, no NUL needed)
 * @tid:      the thread's id
 * @cpu:      the CPU the event was written on
 * @time_ns:  the event's time, nanoseconds, printed rounded to the
 *            microsecond as the kernel's trace does (ns2usecs())
 *
 * Without printf (a fifth of the time of a printed line) and without
 * locks or allocation, so that the runtime's print path may use it.
 * Return: the number of bytes written (no NUL is added).
 */
size_t utrace__trace_prefix(char *p, const char *comm, size_t comm_len,
			    uint32_t tid, uint32_t cpu, uint64_t time_ns) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_TRACELINE_H */
