// SPDX-License-Identifier: MIT
/*
 * Printing a uprobe event's record as the kernel's print_uprobe_event()
 * does (probe.h): "(0xIP) name=value ..." or "(0xRET <- 0xFUNC) ...".
 * Strings of length 0 print "(fault)"; numbers use the type's format.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "probe.h"


struct out {
	char *s;
	size_t cap, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->cap ? o->s + o->len : NULL,
		      o->len < o->cap ? o->cap - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void print_one(struct out *o, const struct utrace__probe_arg *a, const uint8_t *p,
		      int (*sym)(uint64_t, char *, size_t))
{
	uint64_t u = 0;

	memcpy(&u, p, a->size);
	if (a->bf_width) {
		put(o, "%" PRIu64, u);
		return;
	}
	switch (a->type) {
	case UTRACE__PT_U8: case UTRACE__PT_U16: case UTRACE__PT_U32: case UTRACE__PT_U64:
		put(o, "%" PRIu64, u);
		break;
	case UTRACE__PT_S8: put(o, "%d", (int8_t)u); break;
	case UTRACE__PT_S16: put(o, "%d", (int16_t)u); break;
	case UTRACE__PT_S32: put(o, "%d", (int32_t)u); break;
	case UTRACE__PT_S64: put(o, "%" PRId64, (int64_t)u); break;
	case UTRACE__PT_CHAR: put(o, "'%c'", (char)u); break;
	case UTRACE__PT_SYMBOL: {
		char name[256];

		if (sym && sym(u, name, sizeof(name)) > 0)
			put(o, "%s", name);
		else
			put(o, "0x%" PRIx64, u);
		break;
	}
	default:   /* x8..x64 */
		put(o, "0x%" PRIx64, u);
		break;
	}
}

int utrace__probe_print(const struct utrace__probe_def *d, const uint8_t *rec,
			size_t len, char *out, size_t cap,
			int (*sym)(uint64_t addr, char *buf, size_t len))
{
	struct out o = { out, cap, 0 };
	uint64_t a0 = 0, a1 = 0;

	if (cap)
		out[0] = '\0';
	if (len < d->size)
		return 0;
	memcpy(&a0, rec + 8, 8);
	if (d->kind == 'r') {
		memcpy(&a1, rec + 16, 8);
		put(&o, "(0x%" PRIx64 " <- 0x%" PRIx64 ")", a1, a0);
	} else {
		put(&o, "(0x%" PRIx64 ")", a0);
	}
	for (unsigned int i = 0; i < d->nr_args; i++) {
		const struct utrace__probe_arg *a = &d->args[i];

		put(&o, " %s=", a->name);
		if (a->type == UTRACE__PT_STRING || a->type == UTRACE__PT_USTRING) {
			uint32_t loc;
			size_t off, n;

			memcpy(&loc, rec + a->offset, 4);
			off = loc & 0xffff;
			n = loc >> 16;
			if (!n || off + n > len)
				put(&o, "(fault)");
			else
				put(&o, "\"%.*s\"", (int)strnlen((const char *)rec + off, n),
				    (const char *)rec + off);
			continue;
		}
		if (a->count) {
			put(&o, "{");
			for (unsigned int k = 0; k < a->count; k++) {
				if (k)
					put(&o, ",");
				print_one(&o, a, rec + a->offset + k * a->size, sym);
			}
			put(&o, "}");
		} else {
			print_one(&o, a, rec + a->offset, sym);
		}
	}
	return (int)o.len;
}
