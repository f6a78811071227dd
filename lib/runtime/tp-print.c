/* SPDX-License-Identifier: MIT */
/*
 * Text for compiled TP_printk: the bounded buffer (the kernel's trace_seq)
 * and the __print_*() helpers, with the output of the kernel's
 * kernel/trace/trace_output.c.  Each helper appends its text and a NUL to
 * the scratch buffer 'p' and returns where its text starts, so several
 * helpers can feed one printf.  None allocates.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void utrace_seq_init(struct utrace_seq *s, char *buf, unsigned int size)
{
	s->buf = buf;
	s->len = 0;
	s->size = size;
	s->full = 0;
	if (size)
		buf[0] = 0;
}

static void seq_vprintf(struct utrace_seq *s, const char *fmt, va_list ap)
{
	unsigned int room;
	int n;

	if (s->full || s->len >= s->size)
		return;
	room = s->size - s->len;
	n = vsnprintf(s->buf + s->len, room, fmt, ap);
	if (n < 0)
		return;
	if ((unsigned int)n >= room) {
		s->len = s->size - 1;
		s->full = 1;
		return;
	}
	s->len += (unsigned int)n;
}

void utrace_seq_printf(struct utrace_seq *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	seq_vprintf(s, fmt, ap);
	va_end(ap);
}

static void seq_puts(struct utrace_seq *s, const char *str)
{
	utrace_seq_printf(s, "%s", str);
}

/* End a helper's text with its NUL and return where it began. */
static const char *seq_finish(struct utrace_seq *p, unsigned int start)
{
	if (p->len < p->size) {
		p->buf[p->len] = 0;
		if (p->len + 1 < p->size)
			p->len++;
	}
	return p->buf + start;
}

const char *utrace_tp_print_flags(struct utrace_seq *p, const char *delim,
				  unsigned long flags,
				  const struct utrace_print_flag *tab)
{
	unsigned int start = p->len;
	int first = 1;

	for (; tab->name && flags; tab++) {
		if ((flags & tab->mask) != tab->mask)
			continue;
		flags &= ~tab->mask;
		if (!first && delim)
			seq_puts(p, delim);
		first = 0;
		seq_puts(p, tab->name);
	}
	if (flags) {
		if (!first && delim)
			seq_puts(p, delim);
		utrace_seq_printf(p, "0x%lx", flags);
	}
	return seq_finish(p, start);
}

const char *utrace_tp_print_symbols(struct utrace_seq *p, unsigned long val,
				    const struct utrace_print_flag *tab)
{
	unsigned int start = p->len;

	for (; tab->name; tab++) {
		if (val == tab->mask) {
			seq_puts(p, tab->name);
			return seq_finish(p, start);
		}
	}
	utrace_seq_printf(p, "0x%lx", val);
	return seq_finish(p, start);
}

const char *utrace_tp_print_array(struct utrace_seq *p, const void *buf,
				  int count, size_t el_size)
{
	const unsigned char *ptr = buf;
	unsigned int start = p->len;
	const char *prefix = "";
	int i;

	seq_puts(p, "{");
	for (i = 0; i < count; i++) {
		switch (el_size) {
		case 1: {
			uint8_t v;
			memcpy(&v, ptr, 1);
			utrace_seq_printf(p, "%s0x%x", prefix, v);
			break;
		}
		case 2: {
			uint16_t v;
			memcpy(&v, ptr, 2);
			utrace_seq_printf(p, "%s0x%x", prefix, v);
			break;
		}
		case 4: {
			uint32_t v;
			memcpy(&v, ptr, 4);
			utrace_seq_printf(p, "%s0x%x", prefix, v);
			break;
		}
		case 8: {
			unsigned long long v;
			memcpy(&v, ptr, 8);
			utrace_seq_printf(p, "%s0x%llx", prefix, v);
			break;
		}
		default:
			utrace_seq_printf(p, "BAD SIZE:%zu 0x%x", el_size, *ptr);
			break;
		}
		prefix = ",";
		ptr += el_size;
	}
	seq_puts(p, "}");
	return seq_finish(p, start);
}

const char *utrace_tp_print_hex(struct utrace_seq *p, const void *buf,
				int len, int concatenate)
{
	const unsigned char *b = buf;
	unsigned int start = p->len;
	int i;

	for (i = 0; i < len; i++) {
		if (!concatenate && i)
			seq_puts(p, " ");
		utrace_seq_printf(p, "%02x", b[i]);
	}
	return seq_finish(p, start);
}

/* The kernel's "%*pb": 32-bit chunks in hex, most significant first,
 * comma-separated, the first chunk as wide as its bits need. */
const char *utrace_tp_print_bitmask(struct utrace_seq *p, const void *buf,
				    unsigned int len)
{
	const unsigned char *b = buf;
	unsigned int start = p->len, nr_bits = len * 8;
	int i, chunksz, first = 1;

	if (!nr_bits)
		return seq_finish(p, start);
	chunksz = (int)(nr_bits & 31);
	if (!chunksz)
		chunksz = 32;
	for (i = (int)((nr_bits + 31) / 32 * 32) - 32; i >= 0; i -= 32) {
		uint32_t val = 0;
		int k;

		for (k = 0; k < 4 && (unsigned int)(i / 8 + k) < len; k++)
			val |= (uint32_t)b[i / 8 + k] << (8 * k);
		if (chunksz < 32)
			val &= (1u << chunksz) - 1;
		utrace_seq_printf(p, "%s%0*x", first ? "" : ",",
				  (chunksz + 3) / 4, val);
		first = 0;
		chunksz = 32;
	}
	return seq_finish(p, start);
}

/* One row of the kernel's hex_dump_to_buffer(): groups of 1, 2, 4 or 8
 * bytes (host order), then, with ascii, the bytes as text from the column
 * a full row's hex would end at. */
static void hex_dump_row(struct utrace_seq *p, const unsigned char *ptr,
			 size_t len, int rowsize, int groupsize, int ascii)
{
	unsigned int line = p->len;
	int ascii_column;
	size_t j;

	if ((len % (size_t)groupsize) != 0)
		groupsize = 1;
	ascii_column = rowsize * 2 + rowsize / groupsize + 1;
	for (j = 0; j < len; j += (size_t)groupsize) {
		const char *sep = j ? " " : "";

		switch (groupsize) {
		case 8: {
			unsigned long long v;
			memcpy(&v, ptr + j, 8);
			utrace_seq_printf(p, "%s%16.16llx", sep, v);
			break;
		}
		case 4: {
			uint32_t v;
			memcpy(&v, ptr + j, 4);
			utrace_seq_printf(p, "%s%8.8x", sep, (unsigned int)v);
			break;
		}
		case 2: {
			uint16_t v;
			memcpy(&v, ptr + j, 2);
			utrace_seq_printf(p, "%s%4.4x", sep, (unsigned int)v);
			break;
		}
		default:
			utrace_seq_printf(p, "%s%02x", sep, ptr[j]);
			break;
		}
	}
	if (!ascii)
		return;
	while (!p->full && p->len - line < (unsigned int)ascii_column)
		seq_puts(p, " ");
	for (j = 0; j < len; j++) {
		unsigned char ch = ptr[j];

		utrace_seq_printf(p, "%c", ch >= 0x20 && ch < 0x7f ? ch : '.');
	}
}

/* The kernel's trace_print_hex_dump_seq(): a newline, then one line per
 * row of rowsize (16 or 32) bytes, each after prefix_str and, for
 * DUMP_PREFIX_OFFSET, the row's offset ("%.8x: ") or, for
 * DUMP_PREFIX_ADDRESS, its address ("%p: "). */
const char *utrace_tp_print_hex_dump(struct utrace_seq *p,
				     const char *prefix_str, int prefix_type,
				     int rowsize, int groupsize,
				     const void *buf, size_t len, int ascii)
{
	const unsigned char *ptr = buf;
	unsigned int start = p->len;
	size_t i;

	if (rowsize != 16 && rowsize != 32)
		rowsize = 16;
	if (groupsize != 1 && groupsize != 2 && groupsize != 4 && groupsize != 8)
		groupsize = 1;
	if (!prefix_str)
		prefix_str = "";
	seq_puts(p, "\n");
	for (i = 0; i < len; i += (size_t)rowsize) {
		size_t n = len - i < (size_t)rowsize ? len - i : (size_t)rowsize;

		if (prefix_type == UTRACE_DUMP_PREFIX_ADDRESS)
			utrace_seq_printf(p, "%s%p: ", prefix_str,
					  (const void *)(ptr + i));
		else if (prefix_type == UTRACE_DUMP_PREFIX_OFFSET)
			utrace_seq_printf(p, "%s%.8x: ", prefix_str,
					  (unsigned int)i);
		else
			seq_puts(p, prefix_str);
		hex_dump_row(p, ptr + i, n, rowsize, groupsize, ascii);
		seq_puts(p, "\n");
	}
	return seq_finish(p, start);
}

/* The kernel's trace_seq_acquire() (__get_buf()): len bytes of the
 * scratch buffer for TP_printk's own use.  Where the kernel warns and
 * hands out the buffer's end anyway, this returns NULL. */
/*
 * __get_buf(): like the kernel's trace_seq_acquire(), never NULL for a
 * sane size, since kernel-style TP_printk code writes into it without a
 * check.  With no room left in the line it marks the line full (the text
 * is cut there) and lends a per-thread spill buffer instead, so the
 * program's own code cannot write past the line.  NULL only for more than
 * the spill buffer holds.
 */
char *utrace_tp_seq_acquire(struct utrace_seq *p, unsigned int len)
{
	static __thread char spill[4096];
	char *ret = p->buf + p->len;

	if (p->full || len > p->size - p->len) {
		p->full = 1;
		return len <= sizeof(spill) ? spill : NULL;
	}
	p->len += len;
	return ret;
}

size_t utrace_tp_vstr_len(const char *fmt, va_list *ap)
{
	va_list cp;
	int n;

	va_copy(cp, *ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	return n < 0 ? 1 : (size_t)n + 1;
}

void utrace_tp_copy_vstr(char *dst, unsigned int cap, const char *fmt,
			 va_list *ap)
{
	va_list cp;

	if (!cap)
		return;
	va_copy(cp, *ap);
	if (vsnprintf(dst, cap, fmt, cp) < 0)
		dst[0] = 0;
	va_end(cp);
}

int utrace_event_print(const struct utrace_event *ev, const void *rec,
		       char *buf, size_t len)
{
	struct utrace_seq s;

	if (!ev || !rec || !buf || !len)
		return -EINVAL;
	utrace_seq_init(&s, buf, len > 0xffffffffu ? 0xffffffffu : (unsigned int)len);
	ev->output(&s, rec);
	return (int)s.len;
}
