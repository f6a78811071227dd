/* SPDX-License-Identifier: MIT */
/*
 * What the exports that write each field (CTF, SQLite) share: the fields
 * of a format as `utrace script --fields` prints them, their values in a
 * record, and one reading of the file that hands formats, events and
 * lost-event markers to the export (export.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include "export.h"

static bool num_size(unsigned int n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

struct utrace__xfield *utrace__xfields(const struct utrace__fmt *e, unsigned int *nr)
{
	const struct tep_format_field *f;
	struct utrace__xfield *v;
	unsigned int n = 0;

	for (f = e->ev->format.fields; f; f = f->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NULL;
	for (n = 0, f = e->ev->format.fields; f; f = f->next, n++) {
		struct utrace__xfield *x = &v[n];
		unsigned int size = (unsigned int)f->size;
		char t[64];

		utrace__elem_type(f, t, sizeof(t));
		x->name = f->name;
		x->f = f;
		x->is_signed = f->flags & TEP_FIELD_IS_SIGNED;
		x->hex = (f->flags & TEP_FIELD_IS_POINTER) || strchr(t, '*');
		if (!strcmp(t, "char") && (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))) {
			x->kind = UTRACE__X_STR;
		} else if (f->flags & TEP_FIELD_IS_DYNAMIC) {
			x->kind = UTRACE__X_SEQ;
			x->es = utrace__elem_size(f, t);
		} else if (!(f->flags & TEP_FIELD_IS_ARRAY) && num_size(size) &&
			   strncmp(t, "struct ", 7)) {
			x->kind = UTRACE__X_NUM;
			x->es = size;
		} else {
			x->kind = UTRACE__X_ARRAY;
			x->es = (f->flags & TEP_FIELD_IS_ARRAY) && strncmp(t, "struct ", 7) ?
				utrace__elem_size(f, t) : 1;
			if (!num_size(x->es))
				x->es = 1;
			if (x->es == 1 && !(f->flags & TEP_FIELD_IS_ARRAY))
				x->is_signed = false;   /* a struct: its bytes */
			x->count = size / x->es;
		}
		if (x->kind == UTRACE__X_STR && !(f->flags & TEP_FIELD_IS_DYNAMIC))
			x->count = size;
	}
	*nr = n;
	return v;
}

void utrace__xvalue(const struct utrace__xfield *x, const struct utrace__rec *r,
		    struct utrace__xval *v)
{
	const struct tep_format_field *f = x->f;
	const unsigned char *p = r->d + f->offset;
	uint32_t n = (uint32_t)f->size;

	if (x->kind == UTRACE__X_NUM) {
		v->num = utrace__read_num(p, (int)x->es);
		if (x->is_signed && x->es < 8 && (v->num >> (x->es * 8 - 1)) & 1)
			v->num |= ~0ULL << (x->es * 8);
		return;
	}
	if (f->flags & TEP_FIELD_IS_DYNAMIC)
		p = utrace__dyn_data(f, r, &n);
	if (x->kind == UTRACE__X_STR)
		n = (uint32_t)strnlen((const char *)p, n);
	else
		n -= n % x->es;
	v->p = p;
	v->n = n;
}

int utrace__xwalk(struct utrace__tf *tf, const struct utrace__xwalk *w)
{
	struct utrace__fmts fmts = { 0 };
	struct utrace__tf_format *f;
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	const char *name = utrace__tf_name(tf);
	int r = 0, status = 0;
	size_t i;

	if (utrace__tf_warning(tf))
		fprintf(stderr, "utrace: %s\n", utrace__tf_warning(tf));
	if (utrace__tf_error(tf)) {
		utrace__problem(&fmts.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&fmts.pr, utrace__tf_nr_bad(tf) - 1);
	}
	if (!utrace__tf_page_size(tf))
		goto out;                /* not even a header: said above */
	if (utrace__fmts_init(&fmts, tf) < 0) {
		fprintf(stderr, "utrace: cannot set up libtraceevent\n");
		status = 1;
		goto out;
	}
	/* every format first, in file order */
	for (i = 0; r >= 0 && (f = utrace__tf_format(tf, i)); i++) {
		struct utrace__fmt *e = utrace__fmts_get(&fmts, f);

		if (!e) {
			r = -ENOMEM;
			break;
		}
		if (e->state)
			continue;        /* seen */
		if (utrace__fmts_parse(&fmts, e) < 0)
			r = -ENOMEM;
		else if (e->state > 0)
			r = w->format(w->ctx, e);
	}
	if (r >= 0)
		r = utrace__tf_iter_new(tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		struct utrace__fmt *e;
		struct utrace__rec rec;
		char why[256];
		int ok;

		if (item.kind == UTRACE__TF_LOST) {
			r = w->lost(w->ctx, &item);
			continue;
		}
		if (!item.format) {
			if (!item.format_rejected)
				utrace__fmts_problem(&fmts, "'%s': record at offset %llu: event "
					"at offset %llu: %s %u has no %s for event id %u",
					name, (unsigned long long)item.page_offset,
					(unsigned long long)item.offset,
					UTRACE__TF_NO_FORMAT_ARGS(&item));
			continue;
		}
		e = utrace__fmts_get(&fmts, item.format);
		if (!e) {
			r = -ENOMEM;
			break;
		}
		if (e->state <= 0)
			continue;        /* said when parsed */
		ok = utrace__fmts_check(&fmts, e, &item, false, &rec, why, sizeof(why));
		if (ok < 0) {
			r = ok;
			break;
		}
		if (!ok) {
			utrace__fmts_problem(&fmts, "'%s': record at offset %llu: event at "
				"offset %llu: '%s:%s': %s", name,
				(unsigned long long)item.page_offset,
				(unsigned long long)item.offset, e->system, e->name, why);
			continue;
		}
		r = w->event(w->ctx, &item, e, &rec);
	}
out:
	if (r == -ENOMEM)
		fprintf(stderr, "utrace: '%s': out of memory\n", name);
	if (r < 0)
		status = 1;
	utrace__problems_end(&fmts.pr, name, "the records or events concerned were left out");
	if (fmts.pr.count)
		status = 1;
	utrace__tf_iter_free(it);
	utrace__fmts_fini(&fmts);
	return status;
}
