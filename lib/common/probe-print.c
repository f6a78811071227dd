// SPDX-License-Identifier: MIT
/*
 * Printing a uprobe event's record as the kernel's print_uprobe_event()
 * does (probe.h): "(0xIP) name=value ..." or "(0xRET <- 0xFUNC) ...".
 * Strings of length 0 print "(fault)"; numbers use the type's format.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
		      utrace__probe_sym_fn sym, void *ctx)
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

		if (sym && sym(ctx, u, name, sizeof(name)) > 0)
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
			size_t len, char *out, size_t cap, utrace__probe_sym_fn sym, void *ctx)
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
				print_one(&o, a, rec + a->offset + k * a->size, sym, ctx);
			}
			put(&o, "}");
		} else {
			print_one(&o, a, rec + a->offset, sym, ctx);
		}
	}
	return (int)o.len;
}

/*
 * The def a format file describes, for printing recorded uprobe events
 * (the reader has formats, not definitions).  Each argument's type comes
 * from its conversion in the print fmt and its field's size.
 */
static const char *conv_type(const char *p, unsigned int size, uint8_t *type, size_t *len)
{
	static const struct {
		const char *conv;
		uint8_t u, s, x;   /* by size: the type's base, +0..3 for 1,2,4,8 */
	} convs[] = {
		{ "0x%Lx", 0, 0, UTRACE__PT_X8 }, { "0x%x", 0, 0, UTRACE__PT_X8 },
		{ "%Lu", UTRACE__PT_U8, 0, 0 }, { "%u", UTRACE__PT_U8, 0, 0 },
		{ "%Ld", 0, UTRACE__PT_S8, 0 }, { "%d", 0, UTRACE__PT_S8, 0 },
		{ "'%c'", UTRACE__PT_CHAR, 0, 0 }, { "\"%s\"", UTRACE__PT_STRING, 0, 0 },
		/* libtraceevent keeps the format file's escapes */
		{ "\\\"%s\\\"", UTRACE__PT_STRING, 0, 0 },
		{ "%pS", UTRACE__PT_SYMBOL, 0, 0 },
		/* the reader's formats.c has made %pS a %s of the name */
		{ "%s", UTRACE__PT_SYMBOL, 0, 0 },
	};
	unsigned int step = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;

	for (size_t i = 0; i < sizeof(convs) / sizeof(convs[0]); i++) {
		size_t n = strlen(convs[i].conv);

		if (strncmp(p, convs[i].conv, n))
			continue;
		*len = n;
		if (convs[i].u == UTRACE__PT_CHAR || convs[i].u == UTRACE__PT_STRING ||
		    convs[i].u == UTRACE__PT_SYMBOL)
			*type = convs[i].u;
		else
			*type = (uint8_t)((convs[i].u | convs[i].s | convs[i].x) + step);
		return p + n;
	}
	return NULL;
}

struct utrace__probe_def *utrace__probe_def_from_format(const struct utrace_event_field *fields,
							unsigned int nr, const char *fmt)
{
	struct utrace__probe_def *d = calloc(1, sizeof(*d));
	const char *p = fmt;
	unsigned int first;

	if (!d)
		return NULL;
	if (nr >= 2 && !strcmp(fields[0].name, "__probe_func") &&
	    !strcmp(fields[1].name, "__probe_ret_ip") && !strncmp(p, "(%lx <- %lx)", 12)) {
		d->kind = 'r';
		first = 2;
		p += 12;
	} else if (nr >= 1 && !strcmp(fields[0].name, "__probe_ip") && !strncmp(p, "(%lx)", 5)) {
		d->kind = 'p';
		first = 1;
		p += 5;
	} else {
		goto fail;
	}
	d->nr_args = nr - first;
	d->args = calloc(d->nr_args ? d->nr_args : 1, sizeof(*d->args));
	if (!d->args)
		goto fail;
	d->size = fields[first - 1].offset + 8u;
	for (unsigned int i = 0; i < d->nr_args; i++) {
		const struct utrace_event_field *f = &fields[first + i];
		struct utrace__probe_arg *a = &d->args[i];
		size_t nl = strlen(f->name), cl;
		bool arr;

		if (*p++ != ' ' || strncmp(p, f->name, nl) || p[nl] != '=')
			goto fail;
		p += nl + 1;
		arr = *p == '{';
		if (arr)
			p++;
		a->name = strdup(f->name);
		if (!a->name)
			goto fail;
		a->offset = (uint16_t)f->offset;
		unsigned int esz = 4, nel = 1;

		if (f->kind != UTRACE_FIELD_STRING) {
			/* the element's size: the field's over the count */
			for (const char *q = p; arr && *q && *q != '}'; q++)
				nel += *q == ',';
			esz = (unsigned int)f->size / nel;
			if (esz != 1 && esz != 2 && esz != 4 && esz != 8)
				goto fail;
		}
		for (unsigned int k = 0;; k++) {
			p = conv_type(p, esz, &a->type, &cl);
			if (!p)
				goto fail;
			a->size = (uint8_t)esz;
			if (!arr)
				break;
			a->count = (uint8_t)(k + 1);
			if (*p == '}') {
				p++;
				break;
			}
			if (*p++ != ',')
				goto fail;
		}
		if ((unsigned int)f->offset + (unsigned int)f->size > d->size)
			d->size = (unsigned int)f->offset + (unsigned int)f->size;
	}
	if (*p)
		goto fail;
	return d;
fail:
	utrace__probe_def_free(d);
	return NULL;
}
