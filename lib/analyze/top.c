/* SPDX-License-Identifier: MIT */
/*
 * `utrace top` (top.h): the table of `utrace report`, live.
 *
 * The tool takes the events of the buffers every little while as a trace
 * file image in memory (tools/utrace/live.c), which goes right after.  A
 * report's rows point at records of the file they count, so each image
 * gets a report of its own, and what outlives the image is text: the rows
 * as they are printed (utrace__report_rows()), merged here by their cells,
 * with their counts (and a latency's durations).  Two keys that print the
 * same (a field whose print format maps two values to one name) make one
 * row here, as they look one on the screen.  A latency's begins still
 * waiting at the end of an image carry over to the next images' reports
 * as text (their pairing key, time and cells, utrace__report_carry_out()),
 * so that a pair may span any number of reads; at most TOP_PENDING_MAX of
 * them are kept, none older than TOP_PENDING_AGE seconds of the trace's
 * clock (those dropped count as unmatched begins).
 *
 *      UtraceTop:     500 events/s  events: 1000  lost: 0  [pid 42, 2.0 s, per interval]
 *   -------------------------------------------------------------------------
 *
 *     Overhead  Samples  Command  Event
 *     ........  .......  .......  .....
 *
 *       50.00%      500  app      app:req_end
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "latcols.h"
#include "table.h"
#include "obuf.h"
#include "top.h"

/* A row: its cells, its count, a latency row's durations. */
struct trow {
	char *key;                      /* the cells, '\x1f' apart */
	uint64_t hash;
	char **cells;
	uint64_t count;
	uint64_t *v;
	size_t nv, cap;
};

struct ttab {
	size_t ncols;
	char **head;                    /* taken from the first rows */
	bool *right;
	struct trow *rows;
	size_t nr, cap;
	struct utrace__table index;     /* the keys' hashes to rows */
	uint64_t total;
	uint64_t pairs, unmatched_begin, unmatched_end;
};

#define TOP_PENDING_MAX 65536
#define TOP_PENDING_AGE 600

/* The begins of a --latency still waiting, carried from image to image. */
struct tpend {
	struct utrace__rpend *p;
	size_t n;
};

struct utrace__top {
	const struct utrace__report_opts *o;
	bool cumulative;
	struct ttab counts;
	struct ttab *lat;               /* one per --latency */
	struct tpend *pend;             /* one per --latency */
	size_t ncols_lat;               /* the cells of a carried begin */
	uint64_t now;                   /* the latest event's time */
	uint64_t events, lost;          /* this interval's */
	bool lost_unknown;
	uint64_t all_events;
	uint64_t problems;
	char problem[256];
};

static void row_free(struct trow *w, size_t ncols)
{
	size_t j;

	for (j = 0; w->cells && j < ncols; j++)
		free(w->cells[j]);
	free(w->cells);
	free(w->key);
	free(w->v);
}

/* The rows go; the columns stay. */
static void ttab_clear(struct ttab *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		row_free(&t->rows[i], t->ncols);
	t->nr = 0;
	utrace__table_clear(&t->index);
	t->total = t->pairs = t->unmatched_begin = t->unmatched_end = 0;
}

static void ttab_fini(struct ttab *t)
{
	size_t j;

	ttab_clear(t);
	for (j = 0; t->head && j < t->ncols; j++)
		free(t->head[j]);
	free(t->head);
	free(t->right);
	free(t->rows);
	utrace__table_free(&t->index);
	memset(t, 0, sizeof(*t));
}

/* The row whose cells are key, made (with no cells yet) when new. */
static struct trow *ttab_get(struct ttab *t, char *key, bool *made)
{
	uint64_t h = utrace__hash_str(UTRACE_HASH_INIT, key);
	struct trow *w;
	size_t pos, j;

	*made = false;
	pos = utrace__table_start(&t->index, h);
	while (utrace__table_next(&t->index, h, &pos, &j)) {
		w = &t->rows[j];
		if (!strcmp(w->key, key))
			return w;
	}
	if (t->nr == t->cap) {
		size_t c = t->cap ? t->cap * 2 : 64;
		struct trow *a = realloc(t->rows, c * sizeof(*a));

		if (!a)
			return NULL;
		t->rows = a;
		t->cap = c;
	}
	if (utrace__table_add(&t->index, h, t->nr) < 0)
		return NULL;
	w = &t->rows[t->nr++];
	memset(w, 0, sizeof(*w));
	w->key = key;
	w->hash = h;
	*made = true;
	return w;
}

/* A row's cells, '\x1f' apart (the key of the row). */
static char *join_cells(char *const *cells, size_t n)
{
	size_t len = 1, j, k;
	char *key;

	for (j = 0; j < n; j++)
		len += strlen(cells[j]) + 1;
	key = malloc(len);
	if (!key)
		return NULL;
	for (k = 0, j = 0; j < n; j++) {
		size_t l = strlen(cells[j]);

		if (j)
			key[k++] = '\x1f';
		memcpy(key + k, cells[j], l);
		k += l;
	}
	key[k] = 0;
	return key;
}

/* A row's count and durations into the table; its cells (t->ncols of
 * them) are taken when the row is new. */
static int ttab_add(struct ttab *t, char ***cells, uint64_t count, const uint64_t *v, size_t nv)
{
	char *key = join_cells(*cells, t->ncols);
	struct trow *w;
	bool made;

	if (!key)
		return -ENOMEM;
	w = ttab_get(t, key, &made);
	if (!w) {
		free(key);
		return -ENOMEM;
	}
	if (made) {
		w->cells = *cells;
		*cells = NULL;
	} else {
		free(key);
	}
	w->count += count;
	t->total += count;
	if (!nv)
		return 0;
	if (w->nv + nv > w->cap) {
		size_t c = w->cap ? w->cap : 16;
		uint64_t *a;

		while (c < w->nv + nv)
			c *= 2;
		a = realloc(w->v, c * sizeof(*a));
		if (!a)
			return -ENOMEM;
		w->v = a;
		w->cap = c;
	}
	memcpy(w->v + w->nv, v, nv * sizeof(*w->v));
	w->nv += nv;
	return 0;
}

/* The rows of one image into the table (their cells are taken). */
static int ttab_merge(struct ttab *t, struct utrace__report_rows *rr)
{
	size_t i;

	if (!t->head) {
		t->ncols = rr->ncols;
		t->head = rr->head;
		t->right = rr->right;
		rr->head = NULL;
		rr->right = NULL;
	}
	if (rr->ncols != t->ncols)
		return -EINVAL;         /* the keys make the columns: never */
	for (i = 0; i < rr->nrows; i++)
		if (ttab_add(t, &rr->cell[i], rr->count[i], rr->lat ? rr->lat[i] : NULL,
			     rr->lat ? rr->nr_lat[i] : 0) < 0)
			return -ENOMEM;
	return 0;
}

static void pend_one_free(const struct utrace__top *t, struct utrace__rpend *b)
{
	size_t j;

	for (j = 0; b->cells && j < t->ncols_lat; j++)
		free(b->cells[j]);
	free(b->cells);
	free(b->id);
	b->cells = NULL;
	b->id = NULL;
}

static void pend_free(const struct utrace__top *t, struct utrace__rpend *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		pend_one_free(t, &p[i]);
	free(p);
}

static int cmp_pend_time(const void *pa, const void *pb)
{
	const struct utrace__rpend *a = pa, *b = pb;

	return a->time < b->time ? 1 : a->time > b->time ? -1 : 0;
}

/*
 * What an image's report of --latency li leaves: the ends paired with
 * carried begins go into the table (the begin's cells where it has them,
 * the end's for the others), and the begins still waiting, carried ones
 * and new ones, are those of the next image, the oldest dropped past the
 * bounds.
 */
static int carry(struct utrace__top *t, size_t li, struct utrace__rcarry *c)
{
	struct tpend *tp = &t->pend[li];
	struct ttab *tab = &t->lat[li];
	struct utrace__rpend *np;
	size_t i, j, n = 0;

	if (c->ncols != tab->ncols || (tp->n && c->ncols != t->ncols_lat))
		return -EINVAL;         /* the keys make the columns: never */
	t->ncols_lat = c->ncols;
	tab->unmatched_begin += c->replaced;
	for (i = 0; i < c->nmatch; i++) {
		struct utrace__rmatch *m = &c->match[i];
		struct utrace__rpend *b = &tp->p[m->from];

		for (j = 0; b->cells && j < c->ncols; j++) {
			if (!b->cells[j])
				continue;
			free(m->cells[j]);
			m->cells[j] = b->cells[j];
			b->cells[j] = NULL;
		}
		pend_one_free(t, b);
		if (ttab_add(tab, &m->cells, 1, &m->d, 1) < 0)
			return -ENOMEM;
		tab->pairs++;
	}
	np = calloc(c->npend + 1, sizeof(*np));
	if (!np)
		return -ENOMEM;
	for (i = 0; i < c->npend; i++) {
		struct utrace__rpend *b = c->pend[i].from ? &tp->p[c->pend[i].from - 1] : &c->pend[i];

		if (b->time + (uint64_t)TOP_PENDING_AGE * 1000000000 < t->now) {
			tab->unmatched_begin++;
			continue;       /* too old: its end is not coming */
		}
		np[n] = *b;
		np[n++].from = 0;
		b->cells = NULL;
		b->id = NULL;
	}
	if (n > TOP_PENDING_MAX) {
		qsort(np, n, sizeof(*np), cmp_pend_time);       /* newest first */
		tab->unmatched_begin += n - TOP_PENDING_MAX;
		for (i = TOP_PENDING_MAX; i < n; i++)
			pend_one_free(t, &np[i]);
		n = TOP_PENDING_MAX;
	}
	pend_free(t, tp->p, tp->n);     /* those replaced, and the moved */
	tp->p = np;
	tp->n = n;
	return 0;
}

struct utrace__top *utrace__top_new(const struct utrace__report_opts *o, bool cumulative)
{
	struct utrace__top *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->o = o;
	t->cumulative = cumulative;
	t->lat = calloc(o->nr_lat + 1, sizeof(*t->lat));
	t->pend = calloc(o->nr_lat + 1, sizeof(*t->pend));
	if (!t->lat || !t->pend) {
		free(t->lat);
		free(t->pend);
		free(t);
		return NULL;
	}
	return t;
}

void utrace__top_free(struct utrace__top *t)
{
	size_t i;

	if (!t)
		return;
	ttab_fini(&t->counts);
	for (i = 0; i < t->o->nr_lat; i++) {
		ttab_fini(&t->lat[i]);
		pend_free(t, t->pend[i].p, t->pend[i].n);
	}
	free(t->lat);
	free(t->pend);
	free(t);
}

int utrace__top_add(struct utrace__top *t, struct utrace__tf *tf)
{
	struct utrace__tf_iter *it = NULL;
	struct utrace__report *r;
	struct utrace__report_rows rr;
	struct utrace__rcarry rc;
	struct utrace__tf_item item;
	const char *last;
	uint64_t n, a, b, c;
	bool unknown;
	size_t i;
	int e;

	if (!tf || !utrace__tf_page_size(tf))
		return 0;
	r = utrace__report_new(t->o, tf);
	if (!r)
		return -ENOMEM;
	for (i = 0, e = 0; e >= 0 && i < t->o->nr_lat; i++)
		e = utrace__report_carry_in(r, i, t->pend[i].p, t->pend[i].n);
	/* counts need no order; latencies need time order */
	if (e >= 0)
		e = t->o->nr_lat ? utrace__tf_iter_new(tf, &it) :
			utrace__tf_iter_new_unordered(tf, &it);
	while (e >= 0 && (e = utrace__tf_iter_next(it, &item)) > 0) {
		if (item.kind == UTRACE__TF_EVENT) {
			t->events++;
			if (t->now < item.time)
				t->now = item.time;
		}
		e = utrace__report_item(r, &item);
	}
	utrace__tf_iter_free(it);
	if (e >= 0)
		e = utrace__report_rows(r, -1, &rr);
	if (e >= 0) {
		e = ttab_merge(&t->counts, &rr);
		utrace__report_rows_free(&rr);
	}
	for (i = 0; e >= 0 && i < t->o->nr_lat; i++) {
		e = utrace__report_rows(r, (long)i, &rr);
		if (e < 0)
			break;
		e = ttab_merge(&t->lat[i], &rr);
		utrace__report_rows_free(&rr);
		utrace__report_lat_counts(r, i, &a, &b, &c);
		t->lat[i].pairs += a;
		t->lat[i].unmatched_end += c;
		if (e >= 0)
			e = utrace__report_carry_out(r, i, &rc);
		if (e >= 0) {
			e = carry(t, i, &rc);
			utrace__report_carry_free(&rc);
		}
	}
	t->lost += utrace__report_lost(r, &unknown);
	t->lost_unknown |= unknown;
	n = utrace__report_problems(r, &last);
	if (n) {
		t->problems += n;
		snprintf(t->problem, sizeof(t->problem), "%s", last);
	}
	utrace__report_free(r);
	return e < 0 ? e : 0;
}

void utrace__top_next(struct utrace__top *t)
{
	size_t i;

	t->all_events += t->events;
	t->events = 0;
	t->lost = 0;
	t->lost_unknown = false;
	if (t->cumulative)
		return;
	ttab_clear(&t->counts);
	for (i = 0; i < t->o->nr_lat; i++)
		ttab_clear(&t->lat[i]);
}

/* ------------------------------------------------------------ the screen */

static const struct ttab *sort_tab;
static const double *sort_mean;

/* by count (a latency's mean) down, then by the cells */
static int cmp_rows(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	double x = sort_mean ? sort_mean[a] : (double)sort_tab->rows[a].count;
	double y = sort_mean ? sort_mean[b] : (double)sort_tab->rows[b].count;

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(sort_tab->rows[a].key, sort_tab->rows[b].key);
}

/* The order of the rows, and the widths of the key columns over the first
 * 'shown' of them. */
static size_t *order_rows(const struct ttab *t, const double *mean, size_t shown,
			  size_t *width)
{
	size_t *ord = calloc(t->nr + 1, sizeof(*ord)), i, j;

	if (!ord)
		return NULL;
	for (i = 0; i < t->nr; i++)
		ord[i] = i;
	sort_tab = t;
	sort_mean = mean;
	qsort(ord, t->nr, sizeof(*ord), cmp_rows);
	sort_mean = NULL;
	for (j = 0; j < t->ncols; j++) {
		width[j] = strlen(t->head[j]);
		for (i = 0; i < shown && i < t->nr; i++)
			if (width[j] < strlen(t->rows[ord[i]].cells[j]))
				width[j] = strlen(t->rows[ord[i]].cells[j]);
	}
	return ord;
}

static void put_cell(struct utrace__obuf *b, const struct ttab *t, const size_t *w, size_t j,
		     const char *s)
{
	utrace__ob_printf(b, t->right[j] ? "  %*s" : "  %-*s", (int)w[j], s);
}

static void put_dots(struct utrace__obuf *b, size_t n)
{
	utrace__ob_puts(b, "  ");
	while (n--)
		utrace__ob_putc(b, '.');
}

static int print_counts(const struct utrace__top *t, struct utrace__obuf *b, size_t max)
{
	const struct ttab *c = &t->counts;
	size_t *w = calloc(c->ncols + 1, sizeof(*w)), *ord, i, j, sw = 7;
	char num[32];

	if (!w)
		return -ENOMEM;
	ord = order_rows(c, NULL, max, w);
	if (!ord) {
		free(w);
		return -ENOMEM;
	}
	if (c->nr) {
		snprintf(num, sizeof(num), "%" PRIu64, c->rows[ord[0]].count);
		if (sw < strlen(num))
			sw = strlen(num);
	}
	utrace__ob_printf(b, "  Overhead  %*s", (int)sw, "Samples");
	for (j = 0; j < c->ncols; j++)
		put_cell(b, c, w, j, c->head[j]);
	utrace__ob_puts(b, "\n  ........  ");
	for (j = 0; j < sw; j++)
		utrace__ob_putc(b, '.');
	for (j = 0; j < c->ncols; j++)
		put_dots(b, w[j]);
	utrace__ob_puts(b, "\n\n");
	for (i = 0; i < c->nr && i < max; i++) {
		const struct trow *r = &c->rows[ord[i]];

		utrace__ob_printf(b, "   %6.2f%%  %*" PRIu64, c->total ? 100.0 * (double)r->count /
				  (double)c->total : 0.0, (int)sw, r->count);
		for (j = 0; j < c->ncols; j++)
			put_cell(b, c, w, j, r->cells[j]);
		utrace__ob_putc(b, '\n');
	}
	free(ord);
	free(w);
	return 0;
}

static int print_latency(const struct utrace__top *t, size_t li, struct utrace__obuf *b,
			 size_t max)
{
	const struct ttab *l = &t->lat[li];
	const struct utrace__rlatency *spec = &t->o->lat[li];
	size_t *w = calloc(l->ncols + 1, sizeof(*w)), *ord = NULL, i, j;
	double *mean = calloc(l->nr + 1, sizeof(*mean));
	char (*st)[UTRACE__LAT_COLS][UTRACE__LAT_CELL] = calloc(l->nr + 1, sizeof(*st));
	size_t lw[UTRACE__LAT_COLS];
	int ret = -ENOMEM;

	utrace__ob_printf(b, "\n  Latency: %s%s%s -> %s%s%s   pairs: %" PRIu64 "  unmatched "
			  "begins: %" PRIu64 "  unmatched ends: %" PRIu64 "\n\n", spec->begin,
			  spec->begin_field ? "." : "", spec->begin_field ? spec->begin_field : "",
			  spec->end, spec->end_field ? "." : "", spec->end_field ? spec->end_field : "",
			  l->pairs, l->unmatched_begin, l->unmatched_end);
	if (!w || !mean || !st)
		goto out;
	for (j = 0; j < UTRACE__LAT_COLS; j++)
		lw[j] = strlen(utrace__lat_heads[j]);
	for (i = 0; i < l->nr; i++) {
		struct trow *r = &l->rows[i];

		if (r->nv)
			mean[i] = utrace__lat_cells(r->v, r->nv, st[i], lw);
	}
	if (!l->head) {
		ret = 0;                /* no pair yet: no columns known */
		goto out;
	}
	ord = order_rows(l, mean, max, w);
	if (!ord)
		goto out;
	for (j = 0; j < l->ncols; j++)
		put_cell(b, l, w, j, l->head[j]);
	for (j = 0; j < UTRACE__LAT_COLS; j++)
		utrace__ob_printf(b, "  %*s", (int)lw[j], utrace__lat_heads[j]);
	utrace__ob_putc(b, '\n');
	for (j = 0; j < l->ncols; j++)
		put_dots(b, w[j]);
	for (j = 0; j < UTRACE__LAT_COLS; j++)
		put_dots(b, lw[j]);
	utrace__ob_puts(b, "\n\n");
	for (i = 0; i < l->nr && i < max; i++) {
		size_t k = ord[i];

		for (j = 0; j < l->ncols; j++)
			put_cell(b, l, w, j, l->rows[k].cells[j]);
		for (j = 0; j < UTRACE__LAT_COLS; j++)
			utrace__ob_printf(b, "  %*s", (int)lw[j], st[k][j]);
		utrace__ob_putc(b, '\n');
	}
	ret = 0;
out:
	free(w);
	free(ord);
	free(mean);
	free(st);
	return ret;
}

/* The buffer's lines, at most s->rows of them (the last without its
 * newline, so that a terminal does not scroll), each cut to s->cols and
 * without trailing blanks. */
static int put_screen(const struct utrace__obuf *b, const struct utrace__top_screen *s, FILE *out)
{
	const char *p = b->p, *end = b->p + b->len;
	unsigned int line = 0;

	while (p < end && (!s->rows || line < s->rows)) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (s->cols && n > s->cols)
			n = s->cols;
		while (n && p[n - 1] == ' ')
			n--;            /* a left-aligned last column's padding */
		if (fwrite(p, 1, n, out) != n)
			return -EIO;
		line++;
		if (nl && (!s->rows || line < s->rows))
			fputc('\n', out);
		p = nl ? nl + 1 : end;
	}
	return ferror(out) ? -EIO : 0;
}

int utrace__top_print(struct utrace__top *t, const struct utrace__top_screen *s, FILE *out)
{
	struct utrace__obuf b = { 0 };
	size_t max = (size_t)-1, lat_max = (size_t)-1, i, dash;
	int e = 0;

	utrace__ob_printf(&b, "   UtraceTop: %8.0f events/s  events: %" PRIu64 "  lost: %" PRIu64
			  "%s  [%s, %.1f s, %s]\n", s->seconds > 0 ? (double)t->events /
			  s->seconds : 0.0, t->events, t->lost, t->lost_unknown ? "+" : "",
			  s->what, s->seconds, t->cumulative ? "cumulative" : "per interval");
	dash = s->cols && s->cols < 79 ? s->cols : 79;
	for (i = 0; i < dash; i++)
		utrace__ob_putc(&b, '-');
	utrace__ob_puts(&b, "\n");
	if (t->problems)
		utrace__ob_printf(&b, "  problems: %" PRIu64 ", the latest: %s\n", t->problems,
				  t->problem);
	utrace__ob_putc(&b, '\n');
	if (s->rows) {
		/* header, column heads; a latency's title and heads, and a
		 * few of its rows; the counts get the rest */
		size_t used = 6 + (t->problems ? 1 : 0), lat_lines = 0;

		lat_max = 5;
		for (i = 0; i < t->o->nr_lat; i++)
			lat_lines += 5 + lat_max;
		max = s->rows > used + lat_lines + 3 ? s->rows - used - lat_lines : 3;
	}
	if (t->counts.head)
		e = print_counts(t, &b, max);
	else
		utrace__ob_puts(&b, "  (no events yet)\n");
	for (i = 0; e >= 0 && i < t->o->nr_lat; i++)
		e = print_latency(t, i, &b, lat_max);
	if (e >= 0 && b.nomem)
		e = -ENOMEM;
	if (e >= 0)
		e = put_screen(&b, s, out);
	free(b.p);
	return e;
}
