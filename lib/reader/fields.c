/* SPDX-License-Identifier: MIT */
/* The value of an event's field (fields.h). */
#include <string.h>

#include <event-parse.h>

#include "fields.h"

/* The element type of a field: "__data_loc unsigned int[]" -> "unsigned int". */
void utrace__elem_type(const struct tep_format_field *f, char *t, size_t len)
{
	const char *s = f->type, *e;

	if (!strncmp(s, "__data_loc ", 11))
		s += 11;
	else if (!strncmp(s, "__rel_loc ", 10))
		s += 10;
	if (!strncmp(s, "const ", 6))
		s += 6;
	e = strchr(s, '[');
	if (!e)
		e = s + strlen(s);
	while (e > s && e[-1] == ' ')
		e--;
	if ((size_t)(e - s) >= len)
		e = s + len - 1;
	memcpy(t, s, (size_t)(e - s));
	t[e - s] = 0;
}

unsigned int utrace__elem_size(const struct tep_format_field *f, const char *t)
{
	static const struct { const char *t; unsigned int size; } sizes[] = {
		{ "char", 1 }, { "signed char", 1 }, { "unsigned char", 1 }, { "u8", 1 },
		{ "s8", 1 }, { "bool", 1 }, { "_Bool", 1 }, { "short", 2 },
		{ "unsigned short", 2 }, { "u16", 2 }, { "s16", 2 }, { "int", 4 },
		{ "unsigned int", 4 }, { "unsigned", 4 }, { "u32", 4 }, { "s32", 4 },
		{ "long", 8 }, { "unsigned long", 8 }, { "long long", 8 },
		{ "unsigned long long", 8 }, { "u64", 8 }, { "s64", 8 }, { "size_t", 8 },
	};
	size_t i;

	if (!(f->flags & TEP_FIELD_IS_DYNAMIC) && f->elementsize)
		return f->elementsize;
	if (t[0] && t[strlen(t) - 1] == '*')
		return 8;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(sizes[i].t, t))
			return sizes[i].size;
	return 1;
}

static bool num_size(unsigned int n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

void utrace__fdesc_init(struct utrace__fdesc *d, const struct tep_format_field *f)
{
	unsigned int n = (unsigned int)f->size;
	bool is_struct;
	char t[64];

	utrace__elem_type(f, t, sizeof(t));
	is_struct = !strncmp(t, "struct ", 7);
	d->f = f;
	d->name = f->name;
	d->dynamic = f->flags & TEP_FIELD_IS_DYNAMIC;
	d->is_signed = f->flags & TEP_FIELD_IS_SIGNED;
	d->hex = (f->flags & TEP_FIELD_IS_POINTER) || strchr(t, '*');
	d->count = 0;
	if (!d->dynamic && !(f->flags & TEP_FIELD_IS_ARRAY) && num_size(n) && !is_struct) {
		d->kind = UTRACE__FVAL_NUM;
		d->elem_size = n;
		return;
	}
	if (!strcmp(t, "char")) {
		d->kind = UTRACE__FVAL_STR;
		d->elem_size = 1;
		d->count = d->dynamic ? 0 : n;
		return;
	}
	d->kind = UTRACE__FVAL_ARRAY;
	d->elem_size = utrace__elem_size(f, t);
	if (is_struct || !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) ||
	    !num_size(d->elem_size)) {
		d->elem_size = 1;        /* a struct, or elements of no number size: bytes */
		d->is_signed = false;
	}
	if (!d->dynamic)
		d->count = n / d->elem_size;
}

static uint64_t num(const unsigned char *p, unsigned int size, bool is_signed)
{
	uint64_t v = utrace__read_num(p, (int)size);

	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	return v;
}

void utrace__fdesc_read(const struct utrace__fdesc *d, const struct utrace__rec *r,
			struct utrace__fval *v)
{
	const struct tep_format_field *f = d->f;
	const unsigned char *p = r->d + f->offset;
	uint32_t n = (uint32_t)f->size;

	v->kind = d->kind;
	v->is_signed = d->is_signed;
	v->elem_size = d->elem_size;
	if (d->kind == UTRACE__FVAL_NUM) {
		v->num = num(p, d->elem_size, d->is_signed);
		return;
	}
	if (d->dynamic) {
		/* utrace__fmts_check() found the data inside the record */
		p = utrace__dyn_data(f, r, &n);
	} else if (!n && d->kind == UTRACE__FVAL_ARRAY && (f->flags & TEP_FIELD_IS_ARRAY) &&
		   r->size > (uint32_t)f->offset) {
		/* a flexible array at the end (ftrace:stack's caller[]): the
		 * rest of the record */
		n = r->size - (uint32_t)f->offset;
	}
	v->p = p;
	if (d->kind == UTRACE__FVAL_STR)
		v->len = (uint32_t)strnlen((const char *)p, n);
	else
		v->len = n / d->elem_size * d->elem_size;
}

const unsigned char *utrace__dyn_data(const struct tep_format_field *f,
				      const struct utrace__rec *r, uint32_t *n)
{
	uint64_t val = utrace__read_num(r->d + f->offset, f->size);
	uint32_t o = (uint32_t)(val & 0xffff);

	*n = f->size == 2 ? r->size - o : (uint32_t)((val >> 16) & 0xffff);
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		o += (uint32_t)(f->offset + f->size);
	return r->d + o;
}

uint64_t utrace__fval_elem(const struct utrace__fval *v, uint32_t i)
{
	return num(v->p + (size_t)i * v->elem_size, v->elem_size, v->is_signed);
}
