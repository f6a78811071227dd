/* SPDX-License-Identifier: MIT */
/*
 * Packing events into the pages of one kernel ring-buffer CPU stream, in
 * nanoseconds: what trace-cmd reads, from trace.dat (export-tracedat.c)
 * and from the mount's per_cpu/cpuN/trace_pipe_raw.
 *
 * The events come in time order.  The first event of a page has delta 0
 * (the page's time stamp is its time), a delta of 2^27 ns or more goes
 * into a time extend before the event, a delta of 2^59 ns or more starts
 * a new page; time never goes back on the stream.  Lost events are marked
 * the kernel's way: the next page gets RB_MISSED_EVENTS in its commit
 * word, and, when the count is known and fits, RB_MISSED_STORED with the
 * count as a long after the data.
 */
#ifndef UTRACE_READER_RBPACK_H
#define UTRACE_READER_RBPACK_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"

struct utrace__rbpack {
	/* Set by the user: */
	uint32_t data_size;              /* bytes of event data a page holds */
	unsigned char *page;             /* 16 + data_size bytes; NULL: only
					  * place the events (count pages) */
	/* A page is complete (in page, when there is one): 0 or -1. */
	int (*emit)(struct utrace__rbpack *pk);
	/* The packer's: */
	bool open;                       /* a page is being filled */
	uint32_t used;                   /* event bytes on it */
	uint32_t reserve;                /* bytes kept free for the lost count */
	uint64_t page_ts, last_ts;
	bool page_missed;                /* events were lost before the page */
	uint64_t page_lost;              /* how many; 0: not known */
	bool lost_pending;               /* lost events before the next event */
	uint64_t lost;                   /* their known count */
};

/**
 * utrace__rbpack_event() - add an event
 * @pk: the packer
 * @t: its time, ns
 * @rec: its record
 * @len: the record's bytes (utrace_rb_event_size(@len) <= data_size)
 * @id: written over the record's common_type; -1: left as it is
 *
 * Return: 0, or -1 when emit() failed.
 */
int utrace__rbpack_event(struct utrace__rbpack *pk, uint64_t t, const unsigned char *rec,
			 uint32_t len, int32_t id) UTRACE_HIDDEN;

/* Events were lost before the next one: 'count' of them (0: not known). */
void utrace__rbpack_lost(struct utrace__rbpack *pk, uint64_t count) UTRACE_HIDDEN;

/* Complete the page being filled, if any: 0, or -1 when emit() failed. */
int utrace__rbpack_flush(struct utrace__rbpack *pk) UTRACE_HIDDEN;

#endif /* UTRACE_READER_RBPACK_H */
