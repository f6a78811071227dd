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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <wchar.h>

#include "internal.h"
#include "pfmt.h"
#include "symbols.h"

void utrace_seq_init(struct utrace_seq *s, char *buf, unsigned int size)
{
	s->buf = buf;
	s->len = 0;
	s->size = size;
	s->full = 0;
	if (size)
		buf[0] = 0;
}

/* glibc's vsnprintf for one conversion (or plain text), cut at the
 * buffer's end. */
static void seq_vlibc(struct utrace_seq *s, const char *fmt, va_list ap)
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

static void seq_libc(struct utrace_seq *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	seq_vlibc(s, fmt, ap);
	va_end(ap);
}

static void seq_write(struct utrace_seq *s, const char *text, size_t len)
{
	unsigned int room;

	if (s->full || s->len >= s->size || !len)
		return;
	room = s->size - s->len - 1;    /* the NUL */
	if (len > room) {
		len = room;
		s->full = 1;
	}
	memcpy(s->buf + s->len, text, len);
	s->len += (unsigned int)len;
	s->buf[s->len] = 0;
}

/*
 * Copy len bytes the program's own TP_printk points at, never faulting:
 * through process_vm_readv() on this process, which answers EFAULT for
 * memory that is not there.  Where the call is refused (a seccomp
 * filter), the bytes are read directly, as the kernel does.  Returns the
 * bytes copied.
 */
static size_t safe_read(void *dst, uintptr_t addr, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n >= 0)
		return (size_t)n;
	if (errno == ENOSYS || errno == EPERM) {
		memcpy(dst, (const void *)addr, len);
		return len;
	}
	return 0;
}

/* Text of a %p extension with the conversion's width and precision, as
 * the kernel's string_nocheck() pads it. */
static void seq_padded(struct utrace_seq *s, const char *text, int left, int width, int prec)
{
	if (width > (int)s->size)       /* the line is cut there anyway */
		width = (int)s->size;
	if (prec >= 0)
		seq_libc(s, left ? "%-*.*s" : "%*.*s", width < 0 ? 0 : width, prec, text);
	else
		seq_libc(s, left ? "%-*s" : "%*s", width < 0 ? 0 : width, text);
}

/* One %p conversion: the kernel's pointer().  spec is the conversion as
 * written (for plain pointers, which glibc prints). */
static void seq_pointer(struct utrace_seq *s, const char *spec, bool has_w, int w,
			bool has_p, int prec, int left, const void *ptr,
			const struct utrace__pext *x)
{
	uintptr_t addr = (uintptr_t)ptr;
	unsigned char mem[UTRACE__PEXT_MAX_BITS / 8];
	char text[UTRACE__PEXT_TEXT_MAX];
	int width = has_w ? w : -1;
	const char *bad;
	size_t need, got;

	switch (x->kind) {
	case UTRACE__PEXT_POINTER:
		/* glibc's "0x..." ("(nil)"), never the kernel's hash */
		if (has_w && has_p)
			seq_libc(s, spec, w, prec, ptr);
		else if (has_w)
			seq_libc(s, spec, w, ptr);
		else if (has_p)
			seq_libc(s, spec, prec, ptr);
		else
			seq_libc(s, spec, ptr);
		return;
	case UTRACE__PEXT_RAW:
		if (has_w && w < 0) {
			w = -w;
			left = 1;
		}
		if (has_w)
			seq_libc(s, left ? "%-*lx" : "%*lx", w, (unsigned long)addr);
		else
			seq_libc(s, "%016lx", (unsigned long)addr);
		return;
	case UTRACE__PEXT_SYMBOL: {
		const char *name = NULL;

		if (has_w && w < 0) {
			width = -w;
			left = 1;
		}
		uint64_t start = 0, size = 0;

		if (utrace__sym_lookup((uintptr_t)utrace__pext_lookup_addr(x, addr), &name,
				       &start, &size) < 0)
			name = NULL;
		utrace__pext_symbol(x, addr, name, start, size, text, sizeof(text));
		seq_padded(s, text, left, width, has_p ? prec : -1);
		return;
	}
	default:
		break;
	}
	if (has_w && w < 0) {   /* a negative '*' width: left-justified */
		width = w = -w;
		left = 1;
	}
	need = utrace__pext_need(x, width);
	if ((x->kind == UTRACE__PEXT_HEX || x->kind == UTRACE__PEXT_ESCAPE) && !need)
		return;         /* a zero length prints nothing, even for NULL */
	bad = utrace__pext_bad_pointer(addr);
	if (bad) {
		seq_padded(s, bad, left, width, has_p ? prec : -1);
		return;
	}
	got = safe_read(mem, addr, need);
	if (x->kind == UTRACE__PEXT_IPSA && got < need)
		got += 0;       /* a sockaddr_in may end before sockaddr_in6 would */
	else if (got < need) {
		seq_padded(s, "(efault)", left, width, has_p ? prec : -1);
		return;
	}
	if (utrace__pext_padded(x)) {
		utrace__pext_render(x, width, mem, got, text, sizeof(text));
		seq_padded(s, text, left, width, has_p ? prec : -1);
		return;
	}
	/* bitmaps, hex, escapes: straight into the line */
	if (!s->full && s->len + 1 < s->size) {
		size_t n = utrace__pext_render(x, width, mem, got, s->buf + s->len,
					       s->size - s->len);

		s->len += (unsigned int)n;
		if (s->len + 1 >= s->size)
			s->full = 1;
	}
}

/* The length modifier of a conversion. */
enum len_mod { LM_NONE, LM_HH, LM_H, LM_L, LM_LL, LM_LD, LM_J, LM_Z, LM_T };

/*
 * The kernel's printf for TP_printk: a walk over the format that renders
 * the %p extensions itself and hands every other conversion, with its
 * flags, width, precision and length, to glibc's snprintf one at a time,
 * taking each argument from ap by its type (so '*' widths and precisions
 * take theirs in order).  %n writes nothing.
 */
static void seq_vprintf(struct utrace_seq *s, const char *fmt, va_list ap)
{
	const char *p = fmt;

	while (*p && !s->full) {
		const char *pct = strchr(p, '%'), *c, *lstart;
		char spec[32];
		size_t sl = 0;
		bool has_w = false, has_p = false;
		int w = 0, prec = -1, left = 0;
		enum len_mod lm = LM_NONE;

		if (!pct) {
			seq_write(s, p, strlen(p));
			break;
		}
		seq_write(s, p, (size_t)(pct - p));
		c = pct + 1;
		spec[sl++] = '%';
		while (*c && strchr("-+ #0'", *c)) {
			if (*c == '-')
				left = 1;
			if (sl < 8)
				spec[sl++] = *c;
			c++;
		}
		if (*c == '*') {
			has_w = true;
			w = va_arg(ap, int);
			c++;
		} else if (*c >= '1' && *c <= '9') {
			has_w = true;
			w = (int)strtol(c, (char **)&c, 10);
		}
		if (has_w)
			spec[sl++] = '*';
		if (*c == '.') {
			c++;
			has_p = true;
			if (*c == '*') {
				prec = va_arg(ap, int);
				c++;
			} else {
				prec = (int)strtol(c, (char **)&c, 10);
			}
			spec[sl++] = '.';
			spec[sl++] = '*';
		}
		lstart = c;
		switch (*c) {
		case 'h': lm = c[1] == 'h' ? LM_HH : LM_H; c += c[1] == 'h' ? 2 : 1; break;
		case 'l': lm = c[1] == 'l' ? LM_LL : LM_L; c += c[1] == 'l' ? 2 : 1; break;
		case 'q': case 'L': lm = LM_LD; c++; break;
		case 'j': lm = LM_J; c++; break;
		case 'z': case 'Z': lm = LM_Z; c++; break;
		case 't': lm = LM_T; c++; break;
		default: break;
		}
		while (lstart < c && sl < sizeof(spec) - 3)      /* as written */
			spec[sl++] = *lstart++;
		if (!*c) {      /* a lone '%' at the end */
			seq_write(s, pct, strlen(pct));
			break;
		}
		spec[sl++] = *c;
		spec[sl] = 0;
		p = c + 1;
		/* padding past the line's end is cut anyway: not made */
		if (*c != 'p') {
			int room = (int)(s->size > 0x100000 ? 0x100000 : s->size);

			w = w > room ? room : w < -room ? -room : w;
			prec = prec > room ? room : prec;
		}

#define EMIT(val)							\
	do {								\
		if (has_w && has_p)					\
			seq_libc(s, spec, w, prec, val);		\
		else if (has_w)						\
			seq_libc(s, spec, w, val);			\
		else if (has_p)						\
			seq_libc(s, spec, prec, val);			\
		else							\
			seq_libc(s, spec, val);				\
	} while (0)

		switch (*c) {
		case '%':
			seq_write(s, "%", 1);
			break;
		case 'd': case 'i':
			switch (lm) {
			case LM_L: EMIT(va_arg(ap, long)); break;
			case LM_LL: case LM_LD: EMIT(va_arg(ap, long long)); break;
			case LM_J: EMIT(va_arg(ap, intmax_t)); break;
			case LM_Z: EMIT(va_arg(ap, ssize_t)); break;
			case LM_T: EMIT(va_arg(ap, ptrdiff_t)); break;
			default: EMIT(va_arg(ap, int)); break;
			}
			break;
		case 'u': case 'o': case 'x': case 'X':
			switch (lm) {
			case LM_L: EMIT(va_arg(ap, unsigned long)); break;
			case LM_LL: case LM_LD: EMIT(va_arg(ap, unsigned long long)); break;
			case LM_J: EMIT(va_arg(ap, uintmax_t)); break;
			case LM_Z: EMIT(va_arg(ap, size_t)); break;
			case LM_T: EMIT(va_arg(ap, ptrdiff_t)); break;
			default: EMIT(va_arg(ap, unsigned int)); break;
			}
			break;
		case 'c':
			if (lm == LM_L)
				EMIT(va_arg(ap, wint_t));
			else
				EMIT(va_arg(ap, int));
			break;
		case 'C':
			EMIT(va_arg(ap, wint_t));
			break;
		case 's':
			if (lm == LM_L)
				EMIT(va_arg(ap, const wchar_t *));
			else
				EMIT(va_arg(ap, const char *));
			break;
		case 'S':
			EMIT(va_arg(ap, const wchar_t *));
			break;
		case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
			if (lm == LM_LD)
				EMIT(va_arg(ap, long double));
			else
				EMIT(va_arg(ap, double));
			break;
		case 'm':
			EMIT(0);
			break;
		case 'n':
			(void)va_arg(ap, void *);
			break;
		case 'p': {
			struct utrace__pext x;
			const void *ptr = va_arg(ap, const void *);

			p += utrace__pext_parse(p, &x);
			seq_pointer(s, spec, has_w, w, has_p, prec, left, ptr, &x);
			break;
		}
		default:        /* not a conversion: the text as written */
			seq_write(s, pct, (size_t)(p - pct));
			break;
		}
#undef EMIT
	}
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
