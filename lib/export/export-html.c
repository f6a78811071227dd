/* SPDX-License-Identifier: MIT */
/*
 * Export to one self-contained HTML page (utrace convert --format html):
 * a timeline per thread, grouped by process, that a browser draws on a
 * <canvas>, with the printed line and fields of each event, the begin/end
 * pairs given with --slice as bars and their latency histograms
 * (docs/html-export.md).  Nothing is fetched: the page's script and style
 * (export-html.html, embedded at build time) and the data are all in the
 * file.
 *
 * The page is written as it is read, in one pass over the merged stream:
 *
 *     template head (style, body, up to the data marker)
 *     <script type=application/json id=ut-meta>   processes, threads,
 *                                                event names, slices
 *     per chunk of up to 65536 events:
 *       <script type=application/octet-stream class=ut-chunk data-base=NS>
 *         base64 of the columns, little-endian:
 *           u32 time - base (ns) [n] | u16 thread [n] | u16 name [n]
 *           | u16 text [n] | u16 cpu [n] | u32 begin event [s] | u32 end event [s]
 *           | u16 slice [s]
 *       <script type=application/json class=ut-text>  the chunk's texts
 *       <script type=application/json class=ut-estk>  the call stacks of
 *         events, as far as they came: {"f": new frame names, "s": new
 *         stacks (frame name indexes, innermost first), "e": [[event, stack]]}
 *     <script type=application/json id=ut-stacks> the call stacks'
 *                                                flame graphs, per event
 *     <script type=application/json id=ut-end>    totals
 *     template tail (the page's script)
 *
 * An event's text is its printed line after "name: " and, after a 0x1f,
 * its fields as `utrace script --fields` prints them (left out when they
 * are the same text); the same text in a chunk is written once.  A chunk ends early when a time would not fit
 * its u32 offset (4.29 s after its first event).  Slices are written in
 * the chunk of their end event, as the global indexes of both events.
 *
 * Call stacks (utrace record -g's ftrace:stack / stack_ref, the stacktrace
 * trigger's ftrace:user_stack, each the record after its event on the
 * same thread) are no events of the page: each is added to the flame
 * graph of its event's name, a tree of frames outermost first (a node
 * per distinct path, named as utrace script names the frame, without the
 * offset), written as [name, count, [children]] nodes.
 *
 * Memory: one chunk (its columns and its texts, about 1 MB for 65536
 * events of 10-byte texts), the tables of threads and names (file-sized
 * but small), and the begins waiting for their end (one per key seen and
 * not yet closed).  Everything else goes to the file as it comes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export-walk.h"
#include "print.h"
#include "problems.h"
#include "stacktab.h"

/* export-html-page.c, generated from export-html.html by meson */
extern const char utrace__html_page[];
extern const size_t utrace__html_page_len;

#define DATA_MARK "<!--UTRACE-DATA-->"
#define CHUNK_MAX 65536u
#define NR_SPEC_MAX 64u
#define TYPE_LOST 0u         /* name 0: the lost-events markers */

/* A --slice BEGIN.FIELD:END.FIELD */
struct spec {
	const char *text;
	struct utrace__xslice x;         /* parsed as json and perfetto parse it */
	uint64_t nr, unclosed;
	bool begin_seen, end_seen;
};

/* Where a numeric field of a format is (for the slices). */
struct key_field {
	bool ok;
	uint32_t offset, size;
};

/* What the page needs of each format of the file. */
struct fmt_info {
	const struct utrace__tf_format *f;
	uint32_t type;                   /* index in the names table */
	struct key_field bkey[NR_SPEC_MAX], ekey[NR_SPEC_MAX];
	bool is_begin, is_end;
};

/* A chained hash table of byte keys (texts of a chunk, open begins). */
struct hnode {
	struct hnode *next;
	uint64_t hash;
	uint32_t val;
	uint32_t len;
	char key[];
};

struct htab {
	struct hnode **b;
	size_t cap, nr;
};

struct conv {
	struct utrace__tf *tf;
	const char *name, *out;
	FILE *fp;
	struct spec *specs;
	size_t nr_specs;
	struct fmt_info *fi;             /* sorted by f */
	size_t nr_fi;
	char **types;                    /* "system:name" */
	size_t nr_types;
	const struct utrace__tf_thread **thr;  /* the page's threads, in its order */
	size_t nr_thr;
	struct thr_ref *tmap;            /* every thread an item names: its row */
	size_t nr_tmap;
	/* the row of the kernel's own items (its per-CPU losses) */
	struct utrace__tf_process kproc;
	struct utrace__tf_thread kthr;
	struct utrace__printer *text, *fields;
	struct utrace__obuf line, scratch;
	/* the chunk */
	uint64_t base;
	uint32_t n, *dt;
	uint16_t *tthr, *ttype, *ttext, *tcpu;
	struct htab texts;
	struct utrace__obuf tjson;       /* the texts, as JSON strings */
	uint32_t ntext;
	uint32_t *sb, *se;
	uint16_t *ss;
	size_t ns, cap_s;
	/* the whole */
	struct htab open;                /* (spec, pid, key) -> begin event */
	uint64_t nr_events, nr_lost;
	uint32_t nr_chunks;
	bool nomem;
	/* the flame graphs: a root per event name (fg_root[type], 0: none) */
	struct utrace__stacktab stacks;
	struct fg_node *fg;
	size_t nr_fg, cap_fg;
	uint32_t *fg_root;               /* [nr_types] */
	uint32_t *last_type;             /* [nr_thr]: its last event's, 0: none */
	struct htab fnames;              /* frame names -> index in fname */
	struct hnode **fname;
	size_t nr_fname, cap_fname;
	uint64_t nr_stacks;
	/* each event's stack, for its side panel (ut-estk) */
	uint32_t *last_ev;               /* [nr_thr]: its last event's index */
	struct htab stk;                 /* frame name indexes -> stack */
	uint32_t nr_stk;
	size_t names_written;            /* of fname, in earlier ut-estk */
	uint32_t *fidx;                  /* a stack's frame names, innermost first */
	size_t cap_fidx;
	struct utrace__obuf estk_s, estk_e;
};

/* A node of a flame graph: its frame's name, its stacks, its first child
 * and next sibling (indexes in cv->fg, 0: none; node 0 is not used). */
struct fg_node {
	uint32_t name, count, child, next;
};

/* --- hash table ---------------------------------------------------------- */

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;      /* FNV-1a */

	while (n--)
		h = (h ^ *s++) * 0x100000001b3ull;
	return h;
}

static struct hnode **ht_slot(struct htab *t, const void *key, size_t len, uint64_t h)
{
	struct hnode **pp = &t->b[h & (t->cap - 1)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && (*pp)->len == len && !memcmp((*pp)->key, key, len))
			break;
	return pp;
}

static int ht_grow(struct htab *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i;
	struct hnode **b = calloc(cap, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		while (t->b[i]) {
			struct hnode *e = t->b[i];

			t->b[i] = e->next;
			e->next = b[e->hash & (cap - 1)];
			b[e->hash & (cap - 1)] = e;
		}
	free(t->b);
	t->b = b;
	t->cap = cap;
	return 0;
}

/* The node of key, added with *added set when new; NULL: out of memory. */
static struct hnode *ht_get(struct htab *t, const void *key, size_t len, bool *added)
{
	uint64_t h = hash_bytes(key, len);
	struct hnode **pp, *e;

	*added = false;
	if (t->nr >= t->cap && ht_grow(t) < 0)
		return NULL;
	pp = ht_slot(t, key, len, h);
	if (*pp)
		return *pp;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return NULL;
	e->next = NULL;
	e->hash = h;
	e->len = (uint32_t)len;
	e->val = 0;
	memcpy(e->key, key, len);
	*pp = e;
	t->nr++;
	*added = true;
	return e;
}

/* Take key out; its value, or -1 when it was not there. */
static int64_t ht_take(struct htab *t, const void *key, size_t len)
{
	struct hnode **pp, *e;
	uint32_t v;

	if (!t->cap)
		return -1;
	pp = ht_slot(t, key, len, hash_bytes(key, len));
	if (!*pp)
		return -1;
	e = *pp;
	v = e->val;
	*pp = e->next;
	free(e);
	t->nr--;
	return v;
}

static void ht_clear(struct htab *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		while (t->b[i]) {
			struct hnode *e = t->b[i];

			t->b[i] = e->next;
			free(e);
		}
	t->nr = 0;
}

static void ht_free(struct htab *t)
{
	ht_clear(t);
	free(t->b);
	t->b = NULL;
	t->cap = 0;
}

/* --- writing ------------------------------------------------------------- */

/* A JSON string that cannot end its <script> element: '<' as \u003c. */
static void put_jstr(struct conv *cv, struct utrace__obuf *b, const char *s, size_t n)
{
	size_t i;

	cv->scratch.len = 0;
	utrace__ob_json_str(&cv->scratch, s, n);
	if (cv->scratch.nomem) {
		b->nomem = true;
		return;
	}
	for (i = 0; i < cv->scratch.len; i++) {
		if (cv->scratch.p[i] == '<')
			utrace__ob_puts(b, "\\u003c");
		else
			utrace__ob_putc(b, cv->scratch.p[i]);
	}
}

static void put_base64(struct utrace__obuf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;
	char *o;

	utrace__ob_reserve(b, (n + 2) / 3 * 4);
	if (b->cap - b->len < (n + 2) / 3 * 4)
		return;
	o = b->p + b->len;
	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = tab[(v >> 6) & 63];
		*o++ = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);

		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	b->len = (size_t)(o - b->p);
}

static void put_le(struct utrace__obuf *b, uint64_t v, int size)
{
	unsigned char x[8];
	int i;

	for (i = 0; i < size; i++)
		x[i] = (unsigned char)(v >> (8 * i));
	utrace__ob_put(b, x, (size_t)size);
}

static void put_col32(struct utrace__obuf *b, const uint32_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put_le(b, v[i], 4);
}

static void put_col16(struct utrace__obuf *b, const uint16_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		put_le(b, v[i], 2);
}

static int write_buf(struct conv *cv, struct utrace__obuf *b)
{
	if (b->nomem)
		return -ENOMEM;
	if (b->len && fwrite(b->p, 1, b->len, cv->fp) != b->len)
		return -EIO;
	b->len = 0;
	return 0;
}

/* Write the chunk and start an empty one. */
/* <script class=ut-estk>: the names, stacks and event stacks since the last. */
static void put_estk(struct conv *cv, struct utrace__obuf *b)
{
	size_t i;

	utrace__ob_puts(b, "<script type=\"application/json\" class=\"ut-estk\">{\"f\":[");
	for (i = cv->names_written; i < cv->nr_fname; i++) {
		if (i > cv->names_written)
			utrace__ob_putc(b, ',');
		put_jstr(cv, b, cv->fname[i]->key, cv->fname[i]->len);
	}
	cv->names_written = cv->nr_fname;
	utrace__ob_puts(b, "],\"s\":[");
	utrace__ob_put(b, cv->estk_s.p, cv->estk_s.len);
	utrace__ob_puts(b, "],\"e\":[");
	utrace__ob_put(b, cv->estk_e.p, cv->estk_e.len);
	utrace__ob_puts(b, "]}</script>\n");
	if (cv->estk_s.nomem || cv->estk_e.nomem)
		b->nomem = true;
	cv->estk_s.len = cv->estk_e.len = 0;
}

static int flush_chunk(struct conv *cv)
{
	struct utrace__obuf *b = &cv->line;
	struct utrace__obuf bin = { 0 };
	int r;

	if (!cv->n)
		return 0;
	put_col32(&bin, cv->dt, cv->n);
	put_col16(&bin, cv->tthr, cv->n);
	put_col16(&bin, cv->ttype, cv->n);
	put_col16(&bin, cv->ttext, cv->n);
	put_col16(&bin, cv->tcpu, cv->n);
	put_col32(&bin, cv->sb, cv->ns);
	put_col32(&bin, cv->se, cv->ns);
	put_col16(&bin, cv->ss, cv->ns);
	b->len = 0;
	utrace__ob_printf(b, "<script type=\"application/octet-stream\" class=\"ut-chunk\" "
			  "data-base=\"%llu\" data-n=\"%u\" data-s=\"%zu\">",
			  (unsigned long long)cv->base, cv->n, cv->ns);
	if (bin.nomem)
		b->nomem = true;
	else
		put_base64(b, (const unsigned char *)bin.p, bin.len);
	free(bin.p);
	utrace__ob_puts(b, "</script>\n<script type=\"application/json\" class=\"ut-text\">[");
	utrace__ob_put(b, cv->tjson.p, cv->tjson.len);
	utrace__ob_puts(b, "]</script>\n");
	if (cv->tjson.nomem)
		b->nomem = true;
	put_estk(cv, b);
	r = write_buf(cv, b);
	cv->n = 0;
	cv->ns = 0;
	cv->ntext = 0;
	cv->tjson.len = 0;
	ht_clear(&cv->texts);
	cv->nr_chunks++;
	return r;
}

/* --- the tables ---------------------------------------------------------- */

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;

	return x < y ? -1 : x > y;
}

static int fi_cmp(const void *a, const void *b)
{
	return ptr_cmp(&((const struct fmt_info *)a)->f, &((const struct fmt_info *)b)->f);
}

static struct fmt_info *fi_find(struct conv *cv, const struct utrace__tf_format *f)
{
	struct fmt_info key = { .f = f };

	return bsearch(&key, cv->fi, cv->nr_fi, sizeof(*cv->fi), fi_cmp);
}

/* A thread as items name it, and its row in the page. */
struct thr_ref {
	const struct utrace__tf_thread *t;
	uint32_t row;
};

/* The row of an item's thread: its own, or for a task that kernel events
 * name, the row of the file's thread with its tid and pid, else its own;
 * the kernel's own items (losses of its per-CPU streams) the kernel row. */
static int thr_find(struct conv *cv, const struct utrace__tf_thread *t)
{
	struct thr_ref key = { .t = t };
	const struct thr_ref *p = bsearch(&key, cv->tmap, cv->nr_tmap, sizeof(*cv->tmap),
					  ptr_cmp);

	if (p)
		return (int)p->row;
	return cv->thr[cv->nr_thr - 1] == &cv->kthr ? (int)cv->nr_thr - 1 : -1;
}

static int add_thread(struct conv *cv, const struct utrace__tf_thread *t, size_t nr_user)
{
	size_t row;

	for (row = 0; row < nr_user; row++)
		if (cv->thr[row]->tid == t->tid && cv->thr[row]->proc->pid == t->proc->pid)
			break;
	if (row == nr_user) {
		if (cv->nr_thr == 65535) {
			utrace__say("utrace: '%s': more than 65535 threads; the html page "
				    "takes 65535\n", cv->name);
			return -EINVAL;
		}
		row = cv->nr_thr;
		cv->thr[cv->nr_thr++] = t;
	}
	cv->tmap[cv->nr_tmap].t = t;
	cv->tmap[cv->nr_tmap++].row = (uint32_t)row;
	return 0;
}

/* Where the numeric field 'name' is in the format's text, from its
 * "\tfield:TYPE NAME;\toffset:N;\tsize:M;" line. */
static struct key_field find_field(const struct utrace__tf_format *f, const char *name)
{
	struct key_field k = { 0 };
	const char *s = f->body;
	size_t n = strlen(name);

	while (s && (s = strstr(s, "field:"))) {
		const char *semi = strchr(s, ';'), *nm;
		unsigned int off, size;

		if (!semi)
			break;
		for (nm = semi; nm > s && nm[-1] != ' ' && nm[-1] != ':' && nm[-1] != '\t'; nm--)
			;
		if ((size_t)(semi - nm) == n && !memcmp(nm, name, n) &&
		    strncmp(s, "field:__data_loc", 16) && strncmp(s, "field:__rel_loc", 15) &&
		    sscanf(semi, ";\toffset:%u;\tsize:%u;", &off, &size) == 2 &&
		    (size == 1 || size == 2 || size == 4 || size == 8)) {
			k.ok = true;
			k.offset = off;
			k.size = size;
			return k;
		}
		s = semi;
	}
	return k;
}

/* Split BEGIN.FIELD:END.FIELD (an event may be system:name): 0 or -EINVAL. */
static int add_type(struct conv *cv, const struct utrace__tf_format *f, uint32_t *type)
{
	size_t i, n = strlen(f->system) + strlen(f->name) + 2;
	char *s, **v;

	s = malloc(n);
	if (!s)
		return -ENOMEM;
	snprintf(s, n, "%s:%s", f->system, f->name);
	for (i = 1; i < cv->nr_types; i++)
		if (!strcmp(cv->types[i], s)) {
			free(s);
			*type = (uint32_t)i;
			return 0;
		}
	v = realloc(cv->types, (cv->nr_types + 1) * sizeof(*v));
	if (!v) {
		free(s);
		return -ENOMEM;
	}
	cv->types = v;
	*type = (uint32_t)cv->nr_types;
	cv->types[cv->nr_types++] = s;
	return 0;
}

/* The key field of a slice's event, or false (said). */
static bool key_of(struct conv *cv, const struct spec *sp, const struct utrace__tf_format *f,
		   const char *field, struct key_field *k)
{
	*k = find_field(f, field);
	if (!k->ok)
		utrace__say("utrace: '%s': --slice '%s': event '%s:%s' has no number "
			    "field '%s'\n", cv->name, sp->text, f->system, f->name, field);
	return k->ok;
}

/* The threads, the formats and the slices, before any event. */
static int build_tables(struct conv *cv)
{
	const struct utrace__tf_thread *t;
	struct utrace__tf_format *f;
	size_t i, j;
	int r;

	size_t nr_user = 0, nr_k = 0;

	while (utrace__tf_thread(cv->tf, nr_user))
		nr_user++;
	while (utrace__tf_ktask(cv->tf, nr_k))
		nr_k++;
	cv->thr = calloc(nr_user + nr_k + 2, sizeof(*cv->thr));
	cv->tmap = calloc(nr_user + nr_k + 1, sizeof(*cv->tmap));
	if (!cv->thr || !cv->tmap)
		return -ENOMEM;
	/* the file's threads in file order, then the kernel events' tasks
	 * that are none of them, then the kernel's row if it has events */
	for (i = 0; (t = utrace__tf_thread(cv->tf, i)); i++)
		if ((r = add_thread(cv, t, 0)) < 0)
			return r;
	for (i = 0; (t = utrace__tf_ktask(cv->tf, i)); i++)
		if ((r = add_thread(cv, t, nr_user)) < 0)
			return r;
	if (utrace__tf_nr_kernel_events(cv->tf) || nr_k) {
		if (cv->nr_thr == 65535) {
			utrace__say("utrace: '%s': more than 65535 threads; the html "
				    "page takes 65535\n", cv->name);
			return -EINVAL;
		}
		cv->kproc.comm = "kernel";
		cv->kproc.exe = "";
		cv->kthr.proc = &cv->kproc;
		cv->thr[cv->nr_thr++] = &cv->kthr;
	}
	/* the search wants them sorted */
	qsort(cv->tmap, cv->nr_tmap, sizeof(*cv->tmap), ptr_cmp);

	cv->types = calloc(1, sizeof(*cv->types));
	if (!cv->types || !(cv->types[0] = strdup("[lost]")))
		return -ENOMEM;
	cv->nr_types = 1;
	for (cv->nr_fi = 0; utrace__tf_format(cv->tf, cv->nr_fi); cv->nr_fi++)
		;
	cv->fi = calloc(cv->nr_fi + 1, sizeof(*cv->fi));
	if (!cv->fi)
		return -ENOMEM;
	for (i = 0; (f = utrace__tf_format(cv->tf, i)); i++) {
		struct fmt_info *fi = &cv->fi[i];

		fi->f = f;
		r = add_type(cv, f, &fi->type);
		if (r < 0)
			return r;
		if (cv->nr_types > 65535) {
			utrace__say("utrace: '%s': more than 65535 event names; the html "
				    "page takes 65535\n", cv->name);
			return -EINVAL;
		}
		for (j = 0; j < cv->nr_specs; j++) {
			struct spec *sp = &cv->specs[j];

			if (utrace__set_event_matches(&sp->x.b.m, f->system, f->name)) {
				sp->begin_seen = fi->is_begin = true;
				if (!key_of(cv, sp, f, sp->x.b.field, &fi->bkey[j]))
					return -EINVAL;
			}
			if (utrace__set_event_matches(&sp->x.e.m, f->system, f->name)) {
				sp->end_seen = fi->is_end = true;
				if (!key_of(cv, sp, f, sp->x.e.field, &fi->ekey[j]))
					return -EINVAL;
			}
		}
	}
	qsort(cv->fi, cv->nr_fi, sizeof(*cv->fi), fi_cmp);
	for (j = 0; j < cv->nr_specs; j++) {
		struct spec *sp = &cv->specs[j];

		if (!sp->begin_seen || !sp->end_seen) {
			utrace__say("utrace: '%s': --slice '%s': no event '%s' in the file\n",
				    cv->name, sp->text, sp->begin_seen ? sp->x.e.event :
				    sp->x.b.event);
			return -EINVAL;
		}
	}
	return 0;
}

static void put_meta(struct conv *cv, struct utrace__obuf *b)
{
	const struct utrace__tf_process *p;
	const struct utrace__tf_thread *t;
	size_t i;

	utrace__ob_puts(b, "<script type=\"application/json\" id=\"ut-meta\">{\"file\":");
	put_jstr(cv, b, cv->name, strlen(cv->name));
	utrace__ob_puts(b, ",\"procs\":[");
	for (i = 0; (p = utrace__tf_process(cv->tf, i)); i++) {
		utrace__ob_printf(b, "%s{\"pid\":%u,\"comm\":", i ? "," : "", p->pid);
		put_jstr(cv, b, p->comm ? p->comm : "", p->comm ? strlen(p->comm) : 0);
		utrace__ob_puts(b, ",\"exe\":");
		put_jstr(cv, b, p->exe ? p->exe : "", p->exe ? strlen(p->exe) : 0);
		utrace__ob_putc(b, '}');
	}
	/* threads in the page's row order */
	utrace__ob_puts(b, "],\"threads\":[");
	for (i = 0; i < cv->nr_thr; i++) {
		const char *comm;

		t = cv->thr[i];
		comm = t->comm && t->comm[0] ? t->comm :
		       t->proc->comm && t->proc->comm[0] ? t->proc->comm : "<...>";
		utrace__ob_printf(b, "%s{\"tid\":%u,\"pid\":%u,\"comm\":", i ? "," : "",
				  t->tid, t->proc->pid);
		put_jstr(cv, b, comm, strlen(comm));
		utrace__ob_putc(b, '}');
	}
	utrace__ob_puts(b, "],\"names\":[");
	for (i = 0; i < cv->nr_types; i++) {
		if (i)
			utrace__ob_putc(b, ',');
		put_jstr(cv, b, cv->types[i], strlen(cv->types[i]));
	}
	utrace__ob_puts(b, "],\"slices\":[");
	for (i = 0; i < cv->nr_specs; i++) {
		if (i)
			utrace__ob_putc(b, ',');
		put_jstr(cv, b, cv->specs[i].text, strlen(cv->specs[i].text));
	}
	utrace__ob_puts(b, "]}</script>\n");
}

/* --- events -------------------------------------------------------------- */

/* The text of the printer's line after its prefix and "name: ". */
static const char *line_rest(struct conv *cv, struct utrace__printer *p,
			     const struct utrace__tf_item *it, size_t *len)
{
	struct utrace__obuf *ob = utrace__printer_buf(p);
	const char *s, *e;
	size_t skip;

	cv->scratch.len = 0;
	utrace__print_prefix(&cv->scratch, utrace__item_comm(it), it->thread->tid, it->cpu,
			     it->time, false, true);
	skip = cv->scratch.len;
	if (ob->len < skip) {
		*len = 0;
		return "";
	}
	s = ob->p + skip;
	e = ob->p + ob->len;
	/* "name: text" or "name: f=v ..." (event names hold no ':') */
	if (it->kind == UTRACE__TF_EVENT) {
		const char *c = memchr(s, ':', (size_t)(e - s));

		if (c)
			s = c + 1;
	}
	if (e > s && e[-1] == '\n')
		e--;
	if (s < e && *s == ' ')
		s++;
	*len = (size_t)(e - s);
	return s;
}

static int add_slice(struct conv *cv, uint32_t spec, uint32_t b, uint32_t e)
{
	if (cv->ns == cv->cap_s) {
		size_t cap = cv->cap_s ? cv->cap_s * 2 : 1024;
		uint32_t *sb = realloc(cv->sb, cap * sizeof(*sb)), *se;
		uint16_t *ss;

		if (!sb)
			return -ENOMEM;
		cv->sb = sb;
		se = realloc(cv->se, cap * sizeof(*se));
		if (!se)
			return -ENOMEM;
		cv->se = se;
		ss = realloc(cv->ss, cap * sizeof(*ss));
		if (!ss)
			return -ENOMEM;
		cv->ss = ss;
		cv->cap_s = cap;
	}
	cv->sb[cv->ns] = b;
	cv->se[cv->ns] = e;
	cv->ss[cv->ns] = (uint16_t)spec;
	cv->ns++;
	cv->specs[spec].nr++;
	return 0;
}

/* Pair event 'idx': an end closes the latest open begin of the same
 * (slice, process, key); a begin opens (or replaces) one. */
static int pair(struct conv *cv, const struct fmt_info *fi, const struct utrace__tf_item *it,
		uint32_t idx)
{
	struct { uint32_t spec, pid; uint64_t key; } k;
	size_t j;
	int r;

	for (j = 0; j < cv->nr_specs; j++) {
		const struct key_field *ek = &fi->ekey[j], *bk = &fi->bkey[j];

		memset(&k, 0, sizeof(k));
		k.spec = (uint32_t)j;
		k.pid = it->proc->pid;
		if (ek->ok && (uint64_t)ek->offset + ek->size <= it->len) {
			int64_t b;

			k.key = utrace__read_num(it->rec + ek->offset, (int)ek->size);
			b = ht_take(&cv->open, &k, sizeof(k));
			if (b >= 0 && (r = add_slice(cv, (uint32_t)j, (uint32_t)b, idx)) < 0)
				return r;
		}
		if (bk->ok && (uint64_t)bk->offset + bk->size <= it->len) {
			struct hnode *e;
			bool added;

			k.key = utrace__read_num(it->rec + bk->offset, (int)bk->size);
			e = ht_get(&cv->open, &k, sizeof(k), &added);
			if (!e)
				return -ENOMEM;
			e->val = idx;
		}
	}
	return 0;
}

static int add_event(struct conv *cv, const struct utrace__tf_item *it)
{
	struct utrace__obuf *tb = utrace__printer_buf(cv->text);
	struct utrace__obuf *fb = utrace__printer_buf(cv->fields);
	const struct fmt_info *fi = NULL;
	const char *s;
	struct hnode *node;
	size_t len, before;
	bool added;
	int r, th;

	tb->len = 0;
	fb->len = 0;
	r = utrace__printer_item(cv->text, it);
	if (r < 0)
		return r;
	if (!tb->len)
		return 0;                /* not printed: the printer said why */
	if (it->kind == UTRACE__TF_EVENT) {
		fi = fi_find(cv, it->format);
		r = utrace__printer_item(cv->fields, it);
		if (r < 0)
			return r;
	} else {
		cv->nr_lost += it->lost;
	}
	th = thr_find(cv, it->thread);
	if (th < 0)
		return 0;                /* cannot be: every item has a thread */
	if (cv->n && (it->time < cv->base || it->time - cv->base > UINT32_MAX ||
		      cv->n == CHUNK_MAX)) {
		r = flush_chunk(cv);
		if (r < 0)
			return r;
	}
	if (!cv->n)
		cv->base = it->time;
	/* the text: the line's rest, 0x1f, the fields */
	cv->line.len = 0;
	s = line_rest(cv, cv->text, it, &len);
	utrace__ob_put(&cv->line, s, len);
	if (fi && fb->len) {
		size_t tlen = cv->line.len;

		s = line_rest(cv, cv->fields, it, &len);
		/* the fields, when they are not the line's text already */
		if (len != tlen || memcmp(s, cv->line.p, len)) {
			utrace__ob_putc(&cv->line, '\x1f');
			utrace__ob_put(&cv->line, s, len);
		}
	}
	if (cv->line.nomem)
		return -ENOMEM;
	node = ht_get(&cv->texts, cv->line.p, cv->line.len, &added);
	if (!node)
		return -ENOMEM;
	if (added) {
		node->val = cv->ntext++;
		before = cv->tjson.len;
		if (before)
			utrace__ob_putc(&cv->tjson, ',');
		put_jstr(cv, &cv->tjson, cv->line.p, cv->line.len);
		if (cv->tjson.nomem)
			return -ENOMEM;
	}
	cv->dt[cv->n] = (uint32_t)(it->time - cv->base);
	cv->tthr[cv->n] = (uint16_t)th;
	cv->ttype[cv->n] = (uint16_t)(fi ? fi->type : TYPE_LOST);
	cv->last_type[th] = fi && cv->nr_events < UINT32_MAX ? fi->type : 0;  /* the stack after it is its */
	cv->last_ev[th] = (uint32_t)cv->nr_events;
	cv->ttext[cv->n] = (uint16_t)node->val;
	cv->tcpu[cv->n] = (uint16_t)(it->cpu > 65535 ? 65535 : it->cpu);
	cv->n++;
	if (fi && (fi->is_begin || fi->is_end) && cv->nr_events < UINT32_MAX) {
		r = pair(cv, fi, it, (uint32_t)cv->nr_events);
		if (r < 0)
			return r;
	}
	cv->nr_events++;
	return 0;
}

/* --- the flame graphs ----------------------------------------------------- */

/* A new node of frame 'name' (0: the root); its index, 0: no memory. */
static uint32_t fg_new(struct conv *cv, uint32_t name)
{
	if (cv->nr_fg == cv->cap_fg) {
		size_t cap = cv->cap_fg ? 2 * cv->cap_fg : 256;
		struct fg_node *n = cap > UINT32_MAX ? NULL : realloc(cv->fg, cap * sizeof(*n));

		if (!n)
			return 0;
		cv->fg = n;
		cv->cap_fg = cap;
		if (!cv->nr_fg)
			cv->nr_fg = 1;   /* index 0: none */
	}
	cv->fg[cv->nr_fg] = (struct fg_node){ name, 0, 0, 0 };
	return (uint32_t)cv->nr_fg++;
}

/* The index of frame name s; -1: no memory. */
static int64_t fname_of(struct conv *cv, const char *s)
{
	bool added;
	struct hnode *e = ht_get(&cv->fnames, s, strlen(s), &added);

	if (!e)
		return -1;
	if (added) {
		if (cv->nr_fname == cv->cap_fname) {
			size_t cap = cv->cap_fname ? 2 * cv->cap_fname : 256;
			struct hnode **n = realloc(cv->fname, cap * sizeof(*n));

			if (!n)
				return -1;
			cv->fname = n;
			cv->cap_fname = cap;
		}
		e->val = (uint32_t)cv->nr_fname;
		cv->fname[cv->nr_fname++] = e;
	}
	return e->val;
}

static bool is_stack(const struct utrace__tf_item *it, enum utrace__stack_kind *kind)
{
	if (it->kind != UTRACE__TF_EVENT || !it->format || it->kernel)
		return false;
	*kind = utrace__stack_kind(it->format->system, it->format->name);
	return *kind != UTRACE__STACK_NONE ||
	       (!strcmp(it->format->system, "ftrace") && !strcmp(it->format->name, "user_stack"));
}

/* A stack record: into the flame graph of its thread's last event.  0 or
 * -ENOMEM. */
static int add_stack(struct conv *cv, const struct utrace__tf_item *it,
		     enum utrace__stack_kind kind)
{
	const uint64_t *ips = NULL;
	uint64_t v[8];
	uint32_t nr = 0, type, node, c, i;
	char name[512];
	int64_t fn;
	int th = thr_find(cv, it->thread);

	if (kind != UTRACE__STACK_NONE) {
		if (utrace__stacktab_item(&cv->stacks, it->proc, kind, it->rec, it->len, &ips,
					  &nr) == -ENOMEM)
			return -ENOMEM;
	} else {
		for (; nr < 8 && 16 + 8 * (nr + 1) <= it->len; nr++) {
			memcpy(&v[nr], it->rec + 16 + 8 * nr, 8);
			if (!v[nr])
				break;
		}
		ips = v;
	}
	if (th < 0 || !ips || !nr || !(type = cv->last_type[th]))
		return 0;
	cv->last_type[th] = 0;           /* one stack an event */
	if (nr > cv->cap_fidx) {
		uint32_t *n = realloc(cv->fidx, nr * sizeof(*n));

		if (!n)
			return -ENOMEM;
		cv->fidx = n;
		cv->cap_fidx = nr;
	}
	if (!cv->fg_root[type] && !(cv->fg_root[type] = fg_new(cv, 0)))
		return -ENOMEM;
	node = cv->fg_root[type];
	cv->fg[node].count++;
	for (i = nr; i-- > 0;) {         /* outermost first */
		utrace__stack_frame_name(it->proc, ips[i], false, name, sizeof(name));
		fn = fname_of(cv, name);
		if (fn < 0)
			return -ENOMEM;
		cv->fidx[i] = (uint32_t)fn;
		for (c = cv->fg[node].child; c && cv->fg[c].name != (uint32_t)fn; c = cv->fg[c].next)
			;
		if (!c) {
			uint32_t last;

			c = fg_new(cv, (uint32_t)fn);
			if (!c)
				return -ENOMEM;
			/* children in the order they were first seen */
			last = cv->fg[node].child;
			if (!last) {
				cv->fg[node].child = c;
			} else {
				while (cv->fg[last].next)
					last = cv->fg[last].next;
				cv->fg[last].next = c;
			}
		}
		node = c;
		cv->fg[node].count++;
	}
	cv->nr_stacks++;
	/* the event's own stack, for its side panel */
	{
		bool added;
		struct hnode *e = ht_get(&cv->stk, cv->fidx, nr * sizeof(*cv->fidx), &added);

		if (!e)
			return -ENOMEM;
		if (added) {
			e->val = cv->nr_stk++;
			utrace__ob_puts(&cv->estk_s, cv->estk_s.len ? ",[" : "[");
			for (i = 0; i < nr; i++)
				utrace__ob_printf(&cv->estk_s, i ? ",%u" : "%u", cv->fidx[i]);
			utrace__ob_putc(&cv->estk_s, ']');
		}
		utrace__ob_printf(&cv->estk_e, "%s[%u,%u]", cv->estk_e.len ? "," : "",
				  cv->last_ev[th], e->val);
	}
	return 0;
}

/* Node n as [name, count, [children]], without recursion (a stack may be
 * deep): the path to the node is kept in 'path'. */
static void put_tree(struct conv *cv, struct utrace__obuf *b, uint32_t root, const char *rname)
{
	uint32_t *path = NULL, depth = 0, cap = 0, n = root;

	for (;;) {
		const struct fg_node *f = &cv->fg[n];

		utrace__ob_putc(b, '[');
		if (n == root)
			put_jstr(cv, b, rname, strlen(rname));
		else
			put_jstr(cv, b, cv->fname[f->name]->key, cv->fname[f->name]->len);
		utrace__ob_printf(b, ",%u,[", f->count);
		if (f->child) {
			if (depth == cap) {
				uint32_t *np = realloc(path, (cap ? 2 * cap : 64) * sizeof(*np));

				if (!np) {
					b->nomem = true;
					break;
				}
				path = np;
				cap = cap ? 2 * cap : 64;
			}
			path[depth++] = n;
			n = f->child;
			continue;
		}
		/* a leaf: close it, and its parents while they have no next */
		utrace__ob_puts(b, "]]");
		while (n != root && !cv->fg[n].next) {
			n = path[--depth];
			utrace__ob_puts(b, "]]");
		}
		if (n == root)
			break;
		utrace__ob_putc(b, ',');
		n = cv->fg[n].next;
	}
	free(path);
}

/* <script id=ut-stacks>: [{"name", "stacks", "tree"}] per event name with stacks. */
static void put_stacks(struct conv *cv, struct utrace__obuf *b)
{
	size_t t;
	bool first = true;

	utrace__ob_puts(b, "<script type=\"application/json\" id=\"ut-stacks\">[");
	for (t = 0; t < cv->nr_types; t++) {
		if (!cv->fg_root[t])
			continue;
		utrace__ob_puts(b, first ? "{\"name\":" : ",{\"name\":");
		first = false;
		put_jstr(cv, b, cv->types[t], strlen(cv->types[t]));
		utrace__ob_printf(b, ",\"stacks\":%u,\"tree\":", cv->fg[cv->fg_root[t]].count);
		put_tree(cv, b, cv->fg_root[t], "all");
		utrace__ob_putc(b, '}');
	}
	utrace__ob_puts(b, "]</script>\n");
}

/* --- the whole ------------------------------------------------------------ */

static int write_page(struct conv *cv)
{
	const char *page = utrace__html_page, *mark = strstr(page, DATA_MARK);
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	struct utrace__obuf *b = &cv->line;
	size_t head, j;
	int r;

	if (!mark)
		return -EINVAL;          /* the build embeds a page with its mark */
	head = (size_t)(mark - page);
	if (fwrite(page, 1, head, cv->fp) != head)
		return -EIO;
	b->len = 0;
	put_meta(cv, b);
	r = write_buf(cv, b);
	if (r < 0)
		return r;
	cv->fg_root = calloc(cv->nr_types + 1, sizeof(*cv->fg_root));
	cv->last_type = calloc(cv->nr_thr + 1, sizeof(*cv->last_type));
	cv->last_ev = calloc(cv->nr_thr + 1, sizeof(*cv->last_ev));
	if (!cv->fg_root || !cv->last_type || !cv->last_ev)
		return -ENOMEM;
	r = utrace__tf_iter_new(cv->tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		enum utrace__stack_kind kind;

		if (is_stack(&item, &kind))
			r = add_stack(cv, &item, kind);
		else
			r = add_event(cv, &item);
		if (r < 0)
			break;
		r = 1;
	}
	utrace__tf_iter_free(it);
	if (r >= 0)
		r = flush_chunk(cv);
	if (r < 0)
		return r;
	for (j = 0; j < cv->nr_specs; j++)
		cv->specs[j].unclosed = 0;
	/* what was begun and never ended, per slice */
	for (j = 0; j < cv->open.cap; j++) {
		struct hnode *e;

		for (e = cv->open.b[j]; e; e = e->next) {
			uint32_t spec;

			memcpy(&spec, e->key, sizeof(spec));
			cv->specs[spec].unclosed++;
		}
	}
	b->len = 0;
	put_stacks(cv, b);
	if (b->nomem)
		return -ENOMEM;
	utrace__ob_printf(b, "<script type=\"application/json\" id=\"ut-end\">{\"events\":%llu,"
			  "\"lost\":%llu,\"chunks\":%u,\"unclosed\":[",
			  (unsigned long long)cv->nr_events, (unsigned long long)cv->nr_lost,
			  cv->nr_chunks);
	for (j = 0; j < cv->nr_specs; j++)
		utrace__ob_printf(b, "%s%llu", j ? "," : "",
				  (unsigned long long)cv->specs[j].unclosed);
	utrace__ob_puts(b, "]}</script>\n");
	r = write_buf(cv, b);
	if (r < 0)
		return r;
	mark += strlen(DATA_MARK);
	j = utrace__html_page_len - (size_t)(mark - page);
	if (fwrite(mark, 1, j, cv->fp) != j)
		return -EIO;
	return 0;
}

static void conv_free(struct conv *cv)
{
	size_t i;

	for (i = 0; i < cv->nr_specs; i++) {
		free(cv->specs[i].x.text);
	}
	free(cv->specs);
	for (i = 0; i < cv->nr_types; i++)
		free(cv->types[i]);
	free(cv->types);
	free(cv->fi);
	free(cv->thr);
	free(cv->tmap);
	free(cv->dt);
	free(cv->tthr);
	free(cv->ttype);
	free(cv->ttext);
	free(cv->tcpu);
	free(cv->sb);
	free(cv->se);
	free(cv->ss);
	free(cv->line.p);
	free(cv->scratch.p);
	free(cv->tjson.p);
	ht_free(&cv->texts);
	ht_free(&cv->open);
	ht_free(&cv->fnames);
	free(cv->fname);
	free(cv->fg);
	free(cv->fg_root);
	free(cv->last_type);
	free(cv->last_ev);
	free(cv->fidx);
	free(cv->estk_s.p);
	free(cv->estk_e.p);
	ht_free(&cv->stk);
	utrace__stacktab_free(&cv->stacks);
	utrace__printer_free(cv->text);
	utrace__printer_free(cv->fields);
}

int utrace__export_html(struct utrace__tf *tf, const char *out, const char *const *slices,
			size_t nr_slices)
{
	struct utrace__print_opts text_o = { .mode = UTRACE__OUT_TEXT, .no_irq_info = true };
	struct utrace__print_opts fields_o = { .mode = UTRACE__OUT_FIELDS, .no_irq_info = true };
	struct conv cv = { .tf = tf, .name = utrace__tf_name(tf), .out = out };
	struct utrace__problems none = { 0 }, *pr = &none;
	struct stat st;
	int r = 0, status = 0, werr = 0;
	size_t i;

	if (nr_slices > NR_SPEC_MAX) {
		utrace__say("utrace: at most %u --slice\n", NR_SPEC_MAX);
		return 1;
	}
	cv.specs = calloc(nr_slices + 1, sizeof(*cv.specs));
	if (!cv.specs)
		goto nomem;
	for (i = 0; i < nr_slices; i++, cv.nr_specs++) {
		cv.specs[i].text = slices[i];
		r = utrace__xslice_parse(slices[i], &cv.specs[i].x);
		if (r == -ENOMEM) {
			cv.nr_specs++;
			goto nomem;
		}
		if (r < 0) {
			utrace__say("utrace: bad --slice '%s': give BEGIN.FIELD:END.FIELD, "
				    "as sample:req_start.id:sample:req_end.id\n", slices[i]);
			cv.nr_specs++;
			conv_free(&cv);
			return 1;
		}
	}

	if (utrace__tf_warning(tf))
		utrace__say("utrace: %s\n", utrace__tf_warning(tf));
	if (!utrace__tf_page_size(tf)) {
		if (utrace__tf_error(tf))
			utrace__say("utrace: %s\n", utrace__tf_error(tf));
		conv_free(&cv);
		return 1;                /* not even a header */
	}
	r = build_tables(&cv);
	if (r == -EINVAL) {
		conv_free(&cv);
		return 1;
	}
	if (r < 0)
		goto nomem;
	cv.text = utrace__printer_new(&text_o, tf);
	cv.fields = utrace__printer_new(&fields_o, tf);
	if (!cv.text || !cv.fields) {
		utrace__say("utrace: cannot set up libtraceevent\n");
		conv_free(&cv);
		return 1;
	}
	utrace__printer_fmts(cv.fields)->pr.quiet = true;   /* said once, by cv.text */
	pr = &utrace__printer_fmts(cv.text)->pr;
	if (utrace__tf_error(tf)) {
		utrace__problem(pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(pr, utrace__tf_nr_bad(tf) - 1);
	}
	cv.dt = malloc(CHUNK_MAX * sizeof(*cv.dt));
	cv.tthr = malloc(CHUNK_MAX * sizeof(*cv.tthr));
	cv.ttype = malloc(CHUNK_MAX * sizeof(*cv.ttype));
	cv.ttext = malloc(CHUNK_MAX * sizeof(*cv.ttext));
	cv.tcpu = malloc(CHUNK_MAX * sizeof(*cv.tcpu));
	if (!cv.dt || !cv.tthr || !cv.ttype || !cv.ttext || !cv.tcpu)
		goto nomem;

	cv.fp = fopen(out, "we");
	if (!cv.fp) {
		utrace__say("utrace: cannot open '%s': %s\n", out, strerror(errno));
		conv_free(&cv);
		return 1;
	}
	r = write_page(&cv);
	if (r == -EIO)
		werr = errno;
	if (fclose(cv.fp) != 0 && !r) {
		werr = errno;
		r = -EIO;
	}
	if (r == -EIO)
		utrace__say("utrace: cannot write '%s': %s\n", out, strerror(werr));
	if (r < 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
		unlink(out);             /* no half-written page */
	if (r == -ENOMEM)
		goto nomem;
	if (r < 0)
		status = 1;
	goto out;
nomem:
	utrace__say("utrace: '%s': out of memory\n", cv.name);
	status = 1;
out:
	utrace__problems_end(pr, cv.name, "the records or events concerned were left out");
	if (pr->count)
		status = 1;
	conv_free(&cv);
	return status;
}
