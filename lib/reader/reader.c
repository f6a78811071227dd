/* SPDX-License-Identifier: MIT */
/*
 * The reader library's public API (utrace/reader.h): a trace file, its
 * merged events, their formats and fields through libtraceevent, and the
 * printer of `utrace script` for one record at a time.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>

#include <utrace/reader.h>
#include <utrace/utrace.h>

#include "file-reader.h"
#include "log.h"
#include "formats.h"
#include "pool.h"
#include "print.h"

/* What utrace_reader_next() hands out, with the item behind it. */
struct record {
	struct utrace_record pub;
	struct utrace__tf_item item;
};

struct utrace_reader {
	struct utrace__tf *tf;
	struct utrace__tf_iter *it;
	struct utrace__print_opts opts;
	struct utrace__printer *printer;
	struct record rec;
	char error[512];
};

const char *utrace_reader_version(void)
{
	return UTRACE__VERSION_STRING;
}

const char *utrace_reader_strerror(int err)
{
	return utrace__strerror(err);
}

int utrace_reader_open(const char *path, struct utrace_reader **rp)
{
	struct utrace_reader *r;
	struct utrace__fmts *fmts;
	int ret;

	*rp = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	ret = utrace__tf_open(path, &r->tf);
	if (ret < 0 && ret != -EBADMSG)
		goto fail;
	if (r->tf) {
		/* the API's times are CLOCK_MONOTONIC, whatever trace_clock
		 * the processes had chosen */
		uint32_t bad_pid;

		utrace__tf_set_clock(r->tf, UTRACE_TCLOCK_MONO, &bad_pid);
	}
	r->opts = (struct utrace__print_opts){ .input = path, .mode = UTRACE__OUT_TEXT,
					       .quiet = true };
	r->printer = utrace__printer_new(&r->opts, r->tf);
	if (!r->printer || utrace__tf_iter_new(r->tf, &r->it) < 0) {
		ret = -ENOMEM;
		goto fail;
	}
	/* problems are kept for utrace_reader_error(), never printed */
	fmts = utrace__printer_fmts(r->printer);
	fmts->pr.quiet = true;
	fmts->pr.keep = r->error;
	fmts->pr.keep_len = sizeof(r->error);
	if (utrace__tf_error(r->tf))
		snprintf(r->error, sizeof(r->error), "%s", utrace__tf_error(r->tf));
	*rp = r;
	return ret;
fail:
	utrace_reader_close(r);
	return ret;
}

void utrace_reader_close(struct utrace_reader *r)
{
	if (!r)
		return;
	utrace__printer_free(r->printer);
	utrace__tf_iter_free(r->it);
	utrace__tf_close(r->tf);
	free(r);
}

const char *utrace_reader_error(const struct utrace_reader *r)
{
	return r->error[0] ? r->error : NULL;
}

int utrace_reader_next(struct utrace_reader *r, const struct utrace_record **rec)
{
	struct utrace__tf_item *it = &r->rec.item;
	struct utrace_record *p = &r->rec.pub;
	int ret;

	do
		ret = utrace__tf_iter_next(r->it, it);
	while (ret > 0 && it->kind != UTRACE__TF_EVENT);
	if (ret <= 0)
		return ret;
	*p = (struct utrace_record){
		.time = it->time, .pid = it->proc->pid, .tid = it->thread->tid,
		.cpu = it->cpu, .id = it->id,
		.system = it->format ? it->format->system : NULL,
		.name = it->format ? it->format->name : NULL,
		.comm = utrace__item_comm(it), .data = it->rec, .size = it->len,
	};
	*rec = p;
	return 1;
}

struct tep_handle *utrace_reader_tep(struct utrace_reader *r)
{
	return utrace__printer_fmts(r->printer)->tep;
}

static const struct utrace__tf_item *item_of(const struct utrace_record *rec)
{
	return &((const struct record *)(const void *)
		 ((const char *)rec - offsetof(struct record, pub)))->item;
}

struct tep_event *utrace_record_event(struct utrace_reader *r,
				      const struct utrace_record *rec)
{
	const struct utrace__tf_item *it = item_of(rec);
	struct utrace__fmts *fmts = utrace__printer_fmts(r->printer);
	struct utrace__fmt *e;
	struct utrace__rec copy;

	if (!it->format) {
		snprintf(r->error, sizeof(r->error), "'%s': event at offset %llu: %s %u "
			 "has no %s for event id %u", fmts->name,
			 (unsigned long long)it->offset, UTRACE__TF_NO_FORMAT_ARGS(it));
		return NULL;
	}
	e = utrace__fmts_get(fmts, it->format);
	if (!e || (!e->state && utrace__fmts_parse(fmts, e) < 0))
		return NULL;
	if (e->state < 0)
		return NULL;             /* utrace__fmts_parse() said why */
	if (utrace__fmts_check(fmts, e, it, false, &copy, r->error, sizeof(r->error)) <= 0)
		return NULL;
	return e->ev;
}

/* The field 'name' of the record's event; 0 or a negative code. */
static int find_field(struct utrace_reader *r, const struct utrace_record *rec,
		      const char *name, struct tep_format_field **f)
{
	struct tep_event *ev = utrace_record_event(r, rec);

	if (!ev)
		return -EBADMSG;
	*f = tep_find_any_field(ev, name);
	return *f ? 0 : -ENOENT;
}

int utrace_record_field_num(struct utrace_reader *r, const struct utrace_record *rec,
			    const char *name, uint64_t *val)
{
	struct tep_format_field *f;
	int ret = find_field(r, rec, name, &f);
	uint64_t v;

	if (ret < 0)
		return ret;
	if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) ||
	    (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8))
		return -EINVAL;
	v = utrace__read_num((const unsigned char *)rec->data + f->offset, f->size);
	if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8 &&
	    (v >> (f->size * 8 - 1)) & 1)
		v |= ~0ULL << (f->size * 8);
	*val = v;
	return 0;
}

int utrace_record_field_str(struct utrace_reader *r, const struct utrace_record *rec,
			    const char *name, const char **str, size_t *len)
{
	const unsigned char *d = rec->data;
	struct tep_format_field *f;
	int ret = find_field(r, rec, name, &f);
	uint32_t o, n;

	if (ret < 0)
		return ret;
	if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) ||
	    (strncmp(f->type, "char ", 5) && strncmp(f->type, "char[", 5) &&
	     strncmp(f->type, "__data_loc char[", 16) &&
	     strncmp(f->type, "__rel_loc char[", 15)))
		return -EINVAL;
	o = (uint32_t)f->offset;
	n = (uint32_t)f->size;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		/* inside the record: utrace_record_event() checked it */
		uint64_t v = utrace__read_num(d + f->offset, f->size);

		o = (uint32_t)(v & 0xffff);
		n = f->size == 2 ? rec->size - o : (uint32_t)((v >> 16) & 0xffff);
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			o += (uint32_t)(f->offset + f->size);
	}
	*str = (const char *)d + o;
	*len = strnlen(*str, n);
	return 0;
}

/* The record's line in the printer's buffer; its length or a negative code. */
static int print_line(struct utrace_reader *r, const struct utrace_record *rec)
{
	struct utrace__obuf *b = utrace__printer_buf(r->printer);
	struct utrace__fmts *fmts = utrace__printer_fmts(r->printer);
	uint64_t problems = fmts->pr.count;
	int ret;

	b->len = 0;
	ret = utrace__printer_item(r->printer, item_of(rec));
	if (ret < 0)
		return ret;
	if (fmts->pr.count != problems || !b->len)
		return -EBADMSG;         /* r->error says why */
	if (b->len > INT32_MAX)
		return -ENOMEM;
	return (int)b->len;
}

int utrace_record_print(struct utrace_reader *r, const struct utrace_record *rec,
			char *buf, size_t size)
{
	int n = print_line(r, rec);
	size_t k;

	if (n < 0 || !size)
		return n;
	k = (size_t)n < size - 1 ? (size_t)n : size - 1;
	memcpy(buf, utrace__printer_buf(r->printer)->p, k);
	buf[k] = 0;
	return n;
}

int utrace_record_fprint(struct utrace_reader *r, const struct utrace_record *rec,
			 FILE *f)
{
	int n = print_line(r, rec);

	if (n < 0)
		return n;
	if (fwrite(utrace__printer_buf(r->printer)->p, 1, (size_t)n, f) != (size_t)n)
		return -EIO;
	return n;
}
