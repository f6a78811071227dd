/* SPDX-License-Identifier: MIT */
/*
 * Hist triggers (hist.h), the `hist` file: its entries sorted and printed
 * with the kernel's format strings (hist_show(), hist_trigger_entry_print()).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hist-internal.h"

/* ------------------------------------------------------------ the hist file */

static int64_t cmp_num(const unsigned char *a, const unsigned char *b, uint32_t size,
		       bool is_signed)
{
	uint64_t x = utrace__hist_read_num(a, size, is_signed), y = utrace__hist_read_num(b, size, is_signed);

	if (is_signed)
		return (int64_t)x < (int64_t)y ? -1 : (int64_t)x > (int64_t)y;
	return x < y ? -1 : x > y;
}

static int cmp_key_field(const struct utrace__hist_field *k, const struct elt *a,
			 const struct elt *b)
{
	const unsigned char *x = a->key + k->key_offset, *y = b->key + k->key_offset;

	if (k->flags & UTRACE__HF_STRING) {
		int c = strcmp((const char *)x, (const char *)y);

		return c < 0 ? -1 : c > 0;
	}
	return (int)cmp_num(x, y, k->cmp_size, k->cmp_signed);
}

/* An entry as printed: its sums read once, so that the sort compares
 * values that writers adding meanwhile (a live table) do not change. */
struct row {
	const struct elt *e;
	uint64_t sums[UTRACE__HIST_VALS_MAX];
};

static int cmp_entries(const void *pa, const void *pb, void *arg)
{
	const struct utrace__hist *h = arg;
	const struct row *ra = pa, *rb = pb;
	const struct elt *a = ra->e, *b = rb->e;
	unsigned int i;
	int c;

	for (i = 0; i < h->nr_sort; i++) {
		const struct utrace__hist_sort *s = &h->sort[i];

		if (s->is_key) {
			c = cmp_key_field(&h->keys[s->idx], a, b);
		} else {
			uint64_t x = ra->sums[s->idx], y = rb->sums[s->idx];

			c = x < y ? -1 : x > y;
		}
		if (c)
			return s->descending ? -c : c;
	}
	/* the kernel leaves ties in its heap sort's order: the keys here */
	for (i = 0; i < h->nr_keys; i++) {
		c = cmp_key_field(&h->keys[i], a, b);
		if (c)
			return c;
	}
	return 0;
}

static void sym_print(struct sbuf *b, const struct utrace__hist_print_opts *o,
		      const struct elt *e, uint64_t addr, bool offset, int width)
{
	const char *name;
	uint64_t start, size;
	char s[512];

	if (o->sym && o->sym(o->sym_arg, e->owner, addr, &name, &start, &size) == 0) {
		if (offset)
			snprintf(s, sizeof(s), "%s+0x%" PRIx64 "/0x%" PRIx64, name, addr - start,
				 size);
		else
			snprintf(s, sizeof(s), "%s", name);
	} else {
		snprintf(s, sizeof(s), "0x%" PRIx64, addr);
	}
	utrace__sb_printf(b, "%-*s", width, s);
}

/* The kernel's hist_trigger_print_key(). */
static void key_print(struct sbuf *b, const struct utrace__hist *h,
		      const struct utrace__hist_print_opts *o, const struct elt *e)
{
	unsigned int i;
	bool multiline = false;

	utrace__sb_printf(b, "{ ");
	for (i = 0; i < h->nr_keys; i++) {
		const struct utrace__hist_field *k = &h->keys[i];
		const unsigned char *kp = e->key + k->key_offset;
		uint64_t v;

		memcpy(&v, kp, 8);
		if (i)
			utrace__sb_printf(b, ", ");
		if (k->src == UTRACE__HS_STACK) {
			/* the kernel's hist_trigger_stacktrace_print() */
			unsigned int j;

			utrace__sb_printf(b, "%s:\n", k->name);
			for (j = 0; j < UTRACE__HIST_STACK_DEPTH; j++) {
				memcpy(&v, kp + 8 * j, 8);
				if (!v)
					break;
				utrace__sb_printf(b, "%*c", 1 + 8, ' ');
				sym_print(b, o, e, v, true, 0);
				utrace__sb_printf(b, "\n");
			}
			multiline = true;
			continue;
		}
		if (k->flags & UTRACE__HF_HEX) {
			utrace__sb_printf(b, "%s: %" PRIx64, k->name, v);
		} else if (k->flags & (UTRACE__HF_SYM | UTRACE__HF_SYM_OFFSET)) {
			bool off = k->flags & UTRACE__HF_SYM_OFFSET;

			utrace__sb_printf(b, "%s: [%" PRIx64 "] ", k->name, v);
			sym_print(b, o, e, v, off, off ? 55 : 45);
		} else if (k->flags & UTRACE__HF_EXECNAME) {
			utrace__sb_printf(b, "%s: %-16s[%10" PRIu64 "]", k->name, e->comm, v);
		} else if (k->flags & UTRACE__HF_SYSCALL) {
			const char *name = o->syscall ? o->syscall(v) : NULL;

			utrace__sb_printf(b, "%s: %-30s[%3" PRIu64 "]", k->name,
				  name ? name : "unknown_syscall", v);
		} else if (k->flags & UTRACE__HF_LOG2) {
			utrace__sb_printf(b, "%s: ~ 2^%-2" PRIu64, k->name, v);
		} else if (k->flags & UTRACE__HF_BUCKET) {
			utrace__sb_printf(b, "%s: ~ %" PRIu64 "-%" PRIu64, k->name, v, v + k->buckets - 1);
		} else if (k->flags & UTRACE__HF_STRING) {
			utrace__sb_printf(b, "%s: %-50s", k->name, (const char *)kp);
		} else {
			utrace__sb_printf(b, "%s: %10" PRIu64, k->name, v);
		}
	}
	utrace__sb_printf(b, multiline ? "}" : " }");
}

/* The kernel's __get_percentage(): 100 times the percentage. */
static unsigned int percentage(uint64_t val, uint64_t total)
{
	if (!total)
		return val ? UINT32_MAX : 0;
	if (val < UINT64_MAX / 10000)
		return (unsigned int)(val * 10000 / total);
	total /= 10000;
	if (!total)
		return val ? UINT32_MAX : 0;
	return (unsigned int)(val / total);
}

static void val_print(struct sbuf *b, const struct utrace__hist_field *f, uint64_t v,
		      uint64_t total, uint64_t max)
{
	if (f->flags & UTRACE__HF_PERCENT) {
		unsigned int pc = percentage(v, total);

		if (pc == UINT32_MAX)
			utrace__sb_printf(b, " %s (%%):[ERROR]", f->name);
		else
			utrace__sb_printf(b, " %s (%%): %3u.%02u", f->name, pc / 100, pc % 100);
	} else if (f->flags & UTRACE__HF_GRAPH) {
		unsigned int len = percentage(v, max), i;
		char bar[21];

		if (len == UINT32_MAX) {
			snprintf(bar, sizeof(bar), "[ERROR]");
		} else {
			len = len * 20 / 10000;
			for (i = 0; i < 20; i++)
				bar[i] = i < len ? '#' : ' ';
			bar[20] = 0;
		}
		utrace__sb_printf(b, " %s: %20s", f->name, bar);
	} else if (f->flags & UTRACE__HF_HEX) {
		utrace__sb_printf(b, " %s: %10" PRIx64, f->name, v);
	} else {
		utrace__sb_printf(b, " %s: %10" PRIu64, f->name, v);
	}
}

/* track_data_print(): the onmax()/onchange() value and what save() kept,
 * copied under the entry's track_seq. */
static void track_print(struct sbuf *b, const struct utrace__hist *h, const struct elt *e)
{
	const struct utrace__hist_action *a = h->track;
	const _Atomic uint64_t *w = utrace__hist_save_area(h, e);
	uint64_t save[UTRACE__HIST_PARAMS_MAX * UTRACE__HIST_STR_MAX / 8], x;
	uint32_t n, s, i;
	unsigned int tries = 0;

	if (!a || a->kind == UTRACE__HA_SNAPSHOT)
		return;
	n = a->kind == UTRACE__HA_SAVE ? h->save_size / 8 : 0;
	do {
		s = utrace__hist_seq_read_begin(&e->track_seq);
		x = atomic_load_explicit(&e->track, memory_order_acquire);
		for (i = 0; i < n; i++)
			save[i] = atomic_load_explicit(&w[i], memory_order_acquire);
	} while (utrace__hist_seq_read_retry(&e->track_seq, s, &tries));
	utrace__sb_printf(b, "\n\t%s: %10" PRIu64, a->handler == UTRACE__HA_ONMAX ? "max" : "changed", x);
	for (i = 0; a->kind == UTRACE__HA_SAVE && i < a->nr_params; i++) {
		const struct utrace__hist_field *f = &a->p[i].f;
		char *str = (char *)save + a->save_off[i];

		if (f->flags & UTRACE__HF_STRING) {
			str[utrace__hist_save_cap(f) - 1] = 0;       /* a copy given up on */
			utrace__sb_printf(b, "  %s: %-32s", f->name, str);
			continue;
		}
		memcpy(&x, str, 8);
		utrace__sb_printf(b, "  %s: %10" PRIu64, f->name, x);
	}
}

/* track_data_snapshot_print() */
static void snap_print(struct sbuf *b, const struct utrace__hist_map *m,
		       const struct utrace__hist_print_opts *o)
{
	const struct utrace__hist_action *a = m->h->track;
	const struct elt *e;
	unsigned int tries = 0;
	uint32_t s;
	uint64_t v;

	if (!a || a->kind != UTRACE__HA_SNAPSHOT)
		return;
	do {
		s = utrace__hist_seq_read_begin(&m->snap_seq);
		e = atomic_load_explicit(&m->snap_elt, memory_order_acquire);
		v = atomic_load_explicit(&m->snap_val, memory_order_acquire);
	} while (utrace__hist_seq_read_retry(&m->snap_seq, s, &tries));
	if (!e)
		return;
	utrace__sb_printf(b, "\nSnapshot taken (see tracing/snapshot).  Details:\n");
	utrace__sb_printf(b, "\ttriggering value { %s(%s) }: %10" PRIu64,
		  a->handler == UTRACE__HA_ONMAX ? "onmax" : "onchange", a->var_str, v);
	utrace__sb_printf(b, "\ttriggered by event with key: ");
	key_print(b, m->h, o, e);
	utrace__sb_printf(b, "\n");
}

int utrace__hist_print(struct utrace__hist_map *m, const struct utrace__hist_print_opts *o,
		       FILE *out)
{
	static const struct utrace__hist_print_opts none;
	const struct utrace__hist *h = m->h;
	uint64_t total[UTRACE__HIST_VALS_MAX] = { 0 }, max[UTRACE__HIST_VALS_MAX] = { 0 };
	struct sbuf b = { 0 };
	struct row *v;
	uint32_t i, n = 0, j;
	int ret = 0;

	if (!o)
		o = &none;
	v = malloc((m->max_elts ? m->max_elts : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < m->nr_slots; i++) {
		struct elt *e = atomic_load_explicit(&m->slots[i].elt, memory_order_acquire);

		if (!e || e == &utrace__hist_dead_elt || n >= m->max_elts)
			continue;
		v[n].e = e;
		for (j = 0; j < h->nr_vals; j++)
			v[n].sums[j] = atomic_load_explicit(&e->sums[j], memory_order_relaxed);
		n++;
	}
	qsort_r(v, n, sizeof(*v), cmp_entries, (void *)h);
	for (j = 0; j < h->nr_vals; j++)
		for (i = 0; i < n; i++) {
			uint64_t x = v[i].sums[j];

			total[j] += x;
			if (x > max[j])
				max[j] = x;
		}
	utrace__sb_printf(&b, "# event histogram\n#\n# trigger info: ");
	utrace__hist_info_print(&b, o->info ? o->info : h, o->paused);
	utrace__sb_printf(&b, "#\n\n");
	for (i = 0; i < n; i++) {
		key_print(&b, h, o, v[i].e);
		for (j = 0; j < h->nr_vals; j++) {
			uint64_t x = v[i].sums[j];

			if (j == 0 && h->nohitcount)
				continue;
			if (j)
				utrace__sb_printf(&b, " ");
			val_print(&b, &h->vals[j], x, total[j], max[j]);
		}
		track_print(&b, h, v[i].e);
		utrace__sb_printf(&b, "\n");
		if (b.len > 1 << 16 && !b.oom) {
			if (fwrite(b.p, 1, b.len, out) != b.len)
				ret = -EIO;
			b.len = 0;
		}
	}
	snap_print(&b, m, o);
	utrace__sb_printf(&b, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %u\n    Dropped: %" PRIu64
		  "\n", atomic_load(&m->hits), n, atomic_load(&m->drops));
	if (b.oom)
		ret = -ENOMEM;
	else if (b.len && fwrite(b.p, 1, b.len, out) != b.len)
		ret = -EIO;
	free(b.p);
	free(v);
	return ret;
}
