/* SPDX-License-Identifier: MIT */
/*
 * The kernel's trace-line prefix, written once for every path that prints
 * events: UTRACE_PRINT in the traced program (runtime/event.c) and the
 * reader's printer (reader/print.c: script, show, pipe, the mount).
 */
#ifndef UTRACE_COMMON_TRACELINE_H
#define UTRACE_COMMON_TRACELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Room utrace__trace_prefix() needs beyond the comm's own bytes. */
#define UTRACE_TRACE_PREFIX_ROOM 80

/* The decimal digits of v, ending at 'end', at least 'min' of them, the
 * missing ones 'pad'; returns where they begin. */
static inline char *utrace__tl_digits(char *end, uint64_t v, size_t min, char pad)
{
	char *d = end;

	do {
		*--d = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while ((size_t)(end - d) < min)
		*--d = pad;
	return d;
}

static inline char *utrace__tl_put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/**
 * utrace__trace_prefix - write "%16s-%-7d [%03d] ..... %5lu.%06lu: "
 * @p:        where; room for @comm_len + UTRACE_TRACE_PREFIX_ROOM bytes
 * @comm:     the thread's name (@comm_len bytes, no NUL needed)
 * @tid:      the thread's id
 * @cpu:      the CPU the event was written on
 * @time_ns:  the event's time, nanoseconds, printed rounded to the
 *            microsecond as the kernel's trace does (ns2usecs())
 * @irq_info: with the flags column "....." (the kernel's irq-info option,
 *            on by default); without, "%16s-%-7d [%03d]  %5lu.%06lu: "
 *
 * @in_ns:    false for a counter clock (x86-tsc): the count, "%12llu"
 *            in place of the seconds, as the kernel prints such clocks
 *
 * Without printf (a fifth of the time of a printed line) and without
 * locks or allocation, so that the runtime's print path may use it;
 * inline, as `utrace script` prints millions of lines.
 * Return: the number of bytes written (no NUL is added).
 */
static inline size_t utrace__trace_prefix_clock(char *p, const char *comm, size_t comm_len,
						 uint32_t tid, uint32_t cpu, uint64_t time_ns,
						 bool irq_info, bool in_ns)
{
	char t[24], *e = t + sizeof(t), *d, *start = p;
	/* rounded to the microsecond, as the kernel's ns2usecs() does */
	uint64_t usecs = time_ns / 1000 + (time_ns % 1000 >= 500);
	size_t k;

	for (k = comm_len; k < 16; k++)
		*p++ = ' ';
	p = utrace__tl_put(p, comm, comm_len);
	*p++ = '-';
	d = utrace__tl_digits(e, tid, 1, ' ');
	p = utrace__tl_put(p, d, (size_t)(e - d));
	for (k = (size_t)(e - d); k < 7; k++)
		*p++ = ' ';
	p = utrace__tl_put(p, " [", 2);
	d = utrace__tl_digits(e, cpu, 3, '0');
	p = utrace__tl_put(p, d, (size_t)(e - d));
	if (irq_info)
		p = utrace__tl_put(p, "] ..... ", 8);
	else
		p = utrace__tl_put(p, "]  ", 3);
	if (!in_ns) {
		/* trace_print_time(): a counter clock, " %12llu" */
		d = utrace__tl_digits(e, time_ns, 12, ' ');
		p = utrace__tl_put(p, d, (size_t)(e - d));
		p = utrace__tl_put(p, ": ", 2);
		return (size_t)(p - start);
	}
	d = utrace__tl_digits(e, usecs / 1000000, 5, ' ');
	p = utrace__tl_put(p, d, (size_t)(e - d));
	*p++ = '.';
	d = utrace__tl_digits(e, usecs % 1000000, 6, '0');
	p = utrace__tl_put(p, d, 6);
	p = utrace__tl_put(p, ": ", 2);
	return (size_t)(p - start);
}

static inline size_t utrace__trace_prefix(char *p, const char *comm, size_t comm_len,
					   uint32_t tid, uint32_t cpu, uint64_t time_ns,
					   bool irq_info)
{
	return utrace__trace_prefix_clock(p, comm, comm_len, tid, cpu, time_ns, irq_info, true);
}

/*
 * Put a record's common_preempt_count into the flags column of a prefix
 * that utrace__trace_prefix() wrote with irq_info (the kernel's
 * trace_print_lat_fmt(): preempt-depth, then migrate-disable, each a hex
 * digit or '.').  utrace's own events record 0; trace_marker's record 1.
 */
static inline void utrace__trace_prefix_preempt(char *prefix, size_t comm_len, uint32_t tid,
						uint32_t cpu, unsigned int preempt_count)
{
	static const char hex[] = "0123456789abcdef";
	size_t at = (comm_len > 16 ? comm_len : 16) + 1, n;

	for (n = 1; tid >= 10; tid /= 10)
		n++;
	at += (n > 7 ? n : 7) + 2;
	for (n = 1; cpu >= 10; cpu /= 10)
		n++;
	at += (n > 3 ? n : 3) + 2;      /* "] ", then the five flags */
	if (preempt_count & 0xf)
		prefix[at + 3] = hex[preempt_count & 0xf];
	if (preempt_count & 0xf0)
		prefix[at + 4] = hex[(preempt_count >> 4) & 0xf];
}

#endif /* UTRACE_COMMON_TRACELINE_H */
