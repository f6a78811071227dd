/* SPDX-License-Identifier: MIT */
/*
 * The trace file reader (docs/trace-file-format.md).
 *
 * Opening reads the whole file once and trusts nothing in it:
 *
 *   1. the header: magic, version, sizes, byte order;
 *   2. each record: its size against the end of the file (a size that
 *      runs past it ends the reading: a cut, or corruption when the size
 *      is beyond any real record), its payload against its type's minimum,
 *      each string's NUL inside the payload;
 *   3. each PAGE: its commit against the page, then every event header of
 *      its commit area (lengths, padding, time extends, the record at
 *      least as long as the common fields).
 *
 * A bad record is left out (the first one is reported) and the reading
 * goes on with the next one.  What survives is an index: processes
 * (a second PROCESS record for a pid starts a new process: exec or pid
 * reuse), per-process event formats by id, and for each thread the list
 * of its pages sorted by seq.
 *
 * Reading merges the threads: each thread is a stream of events in time
 * order (pages in seq order, events of a page in order), and a binary heap
 * over the streams, keyed by (time, stream's first appearance in the file),
 * yields the earliest head each time.  A stream's head is its next event,
 * or a lost-event marker: before the first event of a page that has
 * lost_before > 0 or RB_MISSED_EVENTS, and after the thread's last event
 * for its LOST records.  Page timestamps are in the process's clock unit
 * and are converted to CLOCK_MONOTONIC ns as they are read.
 *
 *      thread A pages:  [a1 a2 a3] [a4 a5]          heap of heads: (t, A)
 *      thread B pages:  [b1 b2] <lost 3> [b3 b4]                   (t, B)
 *      merged:          a1 b1 a2 b2 a3 <lost 3> b3 a4 ...
 *
 * A file is mapped, not read into memory, and the mapping's pages are
 * given back (MADV_DONTNEED) each time DROP_EVERY bytes more of it have
 * been read, by the opening pass or by the iterators: the reader's
 * resident memory stays about DROP_EVERY whatever the file's size (a
 * file of 50 M events was 1.2 GB resident).  The pages read again come
 * back from the page cache (or the file) unchanged, so every pointer into
 * the file stays good.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file-reader.h"
#include "file-format.h"
#include "page.h"
#include "pool.h"
#include "table.h"
#include "tsc-time.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the reader reads little-endian files on a little-endian host");

#define HEADER_MIN 64
#define REC_HDR UTRACE_TF_REC_HDR
#define PAGE_META sizeof(struct utrace__tf_page_rec)
#define MAX_RECORD (64ULL << 20)         /* a bigger size is corruption, not a cut */
#define COMMON_SIZE 8                    /* common_type .. common_pid */

static inline uint16_t le16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A map from 64-bit keys to non-NULL pointers: the one table (table.h),
 * the key's bijective hash standing for the key. */
struct map {
	struct utrace__table t;
};

static void *map_get(const struct map *m, uint64_t k)
{
	size_t v = utrace__table_get(&m->t, utrace__hash_u64(k), UTRACE__TABLE_EMPTY);

	return v == UTRACE__TABLE_EMPTY ? NULL : (void *)(uintptr_t)v;
}

static int map_put(struct map *m, uint64_t k, void *v)
{
	return utrace__table_put(&m->t, utrace__hash_u64(k), (size_t)(uintptr_t)v);
}

static void map_free(struct map *m)
{
	utrace__table_free(&m->t);
}

/* Make room for one more element of an array. */
static int grow(void *arrp, size_t *cap, size_t n, size_t elem)
{
	void **arr = arrp;
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

struct page_ref {
	uint64_t rec_off;                /* the PAGE or KPAGE record */
	uint64_t seq, lost_before;
	uint32_t cpu;
	uint32_t plen;                   /* the page's bytes (KPAGE: its own) */
	uint64_t page;                   /* file offset of the page's bytes */
};

struct process {
	struct utrace__tf_process pub;
	uint32_t index;
	bool unusable;                   /* bad PROCESS record, or TSC time
					    without calibration: not read */
	struct utrace__tf_format **by_id;
	uint32_t nr_by_id;
	uint8_t *rejected;               /* ids whose FORMAT was bad: a bitmap */
	struct utrace_calib_point *pts;  /* CALIB records by index ({0, 0}: none) */
	size_t nr_pts, cap_pts;
	struct utrace__tsc_seg *segs;    /* their conversion (tsc-time.c); */
	size_t nr_segs;                  /* 0: the file's CLOCK records */
	struct utrace_calib_ext *xs;     /* CALIBX records by index (point 0: none) */
	size_t nr_xs, cap_xs;
	struct utrace__tsc_seg *rsegs;   /* TSC to CLOCK_MONOTONIC_RAW */
	size_t nr_rsegs;                 /* 0: no raw time */
	int64_t *boot, *tai;             /* per point: the offsets from mono */
	uint32_t tclock;                 /* the clock shown (enum utrace_trace_clock) */
	struct tf_sym *syms;             /* SYMBOL records, sorted at first use */
	size_t nr_syms, cap_syms;
	bool syms_sorted;
	struct tf_obj *objs;             /* OBJECT records */
	size_t nr_objs, cap_objs;
};

struct tf_sym {
	uint64_t addr, size;
	const char *name;                /* in the file's bytes */
};

struct tf_obj {
	uint64_t start, end, bias;
	const char *path;                /* in the file's bytes */
};

struct thread {
	struct utrace__tf_thread pub;
	struct process *proc;
	struct page_ref *pages;
	size_t nr_pages, cap_pages;
	uint64_t lost_records;           /* LOST records' counts */
};

struct format {
	struct utrace__tf_format pub;
	char *name;
};

/*
 * Kernel events (KFORMAT, KPAGE, KTASK records).  Their formats belong to
 * one pseudo-process, the kernel (pid 0, never in the process list); their
 * pages to one stream per CPU (a thread of the kernel, not in the thread
 * list either); each event is told as a thread of its own task, found by
 * its common_pid: a KTASK names it and gives its thread group.
 */
struct ktask {
	struct process p;
	struct thread t;
};

#define KCPU_MAX 8192                    /* the kernel's NR_CPUS limit */

struct utrace__tf {
	char *name;
	const unsigned char *data;
	size_t size;
	void *map_base;                  /* mmap()ed, or */
	void *copy;                      /* read() into memory */
	uint64_t read_since_drop;        /* bytes (atomic): tf_read() */
	uint32_t page_size;
	uint64_t realtime_ns, monotonic_ns;

	struct process **procs;
	size_t nr_procs, cap_procs;
	struct thread **threads;
	size_t nr_threads, cap_threads;
	struct format **fmts;
	size_t nr_fmts, cap_fmts;
	struct map pids;                 /* pid -> its latest process */
	struct map tids;                 /* process index << 32 | tid -> thread */

	struct process *kproc;           /* kernel events: their formats, */
	struct thread **kcpu;            /* their pages by CPU (in file order), */
	size_t nr_kcpu, cap_kcpu;
	struct map kcpu_map;             /* cpu + 1 -> its stream */
	struct ktask **ktasks;           /* the tasks they name */
	size_t nr_ktasks, cap_ktasks;
	struct map ktask_map;            /* pid + 1 -> its task */

	uint32_t flags;                  /* the header's */
	bool has_end;                    /* an END record was read */
	bool cut;                        /* the file was cut at cut_at */
	uint64_t cut_at;
	unsigned int nr_clock;           /* CLOCK records: the first, the last */
	uint64_t tsc0, ns0, tsc1, ns1;

	uint64_t nr_events, nr_bad;
	char *error, *warning;
	bool nomem;
};

static const char *const type_names[] = {
	[UTRACE_TF_CLOCK] = "CLOCK", [UTRACE_TF_PROCESS] = "PROCESS", [UTRACE_TF_SYMBOL] = "SYMBOL",
	[UTRACE_TF_FORMAT] = "FORMAT", [UTRACE_TF_THREAD] = "THREAD",
	[UTRACE_TF_PAGE] = "PAGE", [UTRACE_TF_LOST] = "LOST",
	[UTRACE_TF_STATS] = "STATS", [UTRACE_TF_END] = "END",
	[UTRACE_TF_CALIB] = "CALIB", [UTRACE_TF_KFORMAT] = "KFORMAT",
	[UTRACE_TF_KPAGE] = "KPAGE", [UTRACE_TF_KTASK] = "KTASK",
	[UTRACE_TF_CALIBX] = "CALIBX", [UTRACE_TF_OBJECT] = "OBJECT",
};

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;

	if (vasprintf(&s, fmt, ap) < 0)
		return NULL;
	return s;
}

/* The first problem wins; "'name': " is put in front. */
static void set_error(struct utrace__tf *tf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct utrace__tf *tf, const char *fmt, ...)
{
	va_list ap;
	char *m;

	if (tf->error)
		return;
	va_start(ap, fmt);
	m = vformat(fmt, ap);
	va_end(ap);
	if (m && asprintf(&tf->error, "'%s': %s", tf->name, m) < 0)
		tf->error = NULL;
	free(m);
	if (!tf->error)
		tf->nomem = true;
}

/* A bad record at file offset 'off': counted, the first one reported. */
static int bad(struct utrace__tf *tf, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct utrace__tf *tf, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	char *m;

	tf->nr_bad++;
	if (tf->error)
		return -EBADMSG;
	va_start(ap, fmt);
	m = vformat(fmt, ap);
	va_end(ap);
	set_error(tf, "record at offset %llu: %s", (unsigned long long)off,
		  m ? m : "(out of memory)");
	free(m);
	return -EBADMSG;
}

static int nomem(struct utrace__tf *tf)
{
	tf->nomem = true;
	set_error(tf, "out of memory");
	return -ENOMEM;
}

/*
 * Walking a page's events: the page codec's cursor (page.h), and the
 * record at least as long as the common fields.
 */
static int pg_next(struct utrace_rb_cursor *c, const unsigned char **rec, uint32_t *len,
		   uint32_t *at, char *why, size_t whylen)
{
	int r = utrace__rb_next(c, why, whylen);

	if (r != UTRACE_RB_EVENT)
		return r;
	if (c->len < COMMON_SIZE) {
		if (why)
			snprintf(why, whylen, "event at offset %llu: record of %u "
				 "bytes is shorter than the common fields (8 bytes)",
				 (unsigned long long)(c->base + c->at), c->len);
		return UTRACE_RB_BAD;
	}
	*rec = c->rec;
	*len = c->len;
	*at = c->at;
	return UTRACE_RB_EVENT;
}

/* Set up a cursor on a page of 'plen' bytes at file offset 'page'. */
#define DROP_EVERY (16u << 20)

/* 'bytes' more of the mapped file were read: past DROP_EVERY, the
 * mapping's pages go (the file's comment).  Iterators of several threads
 * may call it at once. */
static void tf_read(const struct utrace__tf *tf, uint64_t bytes)
{
	struct utrace__tf *w = (struct utrace__tf *)tf;  /* (the counter only) */

	if (!tf->map_base ||
	    __atomic_add_fetch(&w->read_since_drop, bytes, __ATOMIC_RELAXED) < DROP_EVERY)
		return;
	__atomic_store_n(&w->read_since_drop, 0, __ATOMIC_RELAXED);
	(void)madvise(tf->map_base, tf->size, MADV_DONTNEED);
}

static void pg_load(const struct utrace__tf *tf, uint64_t page, uint32_t plen,
		    struct utrace_rb_cursor *c, uint64_t *commit_word)
{
	*commit_word = utrace__rb_load(c, tf->data + page, plen - UTRACE_PAGE_HDR,
				       page + UTRACE_PAGE_HDR);
}

/* A page time in the process's trace clock (ns, or ticks for x86-tsc);
 * 'hint': the caller's last segment of p's chain. */
static inline uint64_t to_ns(const struct utrace__tf *tf, const struct process *p,
			     uint64_t t, uint32_t *hint)
{
	uint64_t ns;

	if (p->pub.clock == 0)
		return t;
	switch (p->tclock) {
	case UTRACE_TCLOCK_MONO:
		break;
	case UTRACE_TCLOCK_X86_TSC:
		return t;
	case UTRACE_TCLOCK_BOOT:
	case UTRACE_TCLOCK_TAI:
		if (!p->nr_segs)
			break;
		ns = utrace__tsc_time_hint(p->segs, p->nr_segs, t, hint);
		return ns + (uint64_t)(p->tclock == UTRACE_TCLOCK_BOOT ? p->boot[*hint] :
				       p->tai[*hint]);
	default:                         /* mono_raw, and sched_clock's names */
		if (p->nr_rsegs)
			return utrace__tsc_time_hint(p->rsegs, p->nr_rsegs, t, hint);
		break;
	}
	if (p->nr_segs)
		return utrace__tsc_time_hint(p->segs, p->nr_segs, t, hint);
	return utrace__tf_tsc_to_ns(t, tf->tsc0, tf->ns0, tf->tsc1, tf->ns1);
}

uint64_t utrace__tf_proc_time(const struct utrace__tf *tf, const struct utrace__tf_process *proc,
			      uint64_t t)
{
	const struct process *p = (const struct process *)(const void *)
				  ((const char *)proc - offsetof(struct process, pub));
	uint32_t hint = 0;

	return to_ns(tf, p, t, &hint);
}

/* The NUL-terminated string at *p inside [*p, end); NULL if none. */
static const char *take_str(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *s = *p, *nul;

	if (s >= end)
		return NULL;
	nul = memchr(s, 0, (size_t)(end - s));
	if (!nul)
		return NULL;
	*p = nul + 1;
	return (const char *)s;
}

static struct process *find_proc(struct utrace__tf *tf, uint32_t pid)
{
	return map_get(&tf->pids, (uint64_t)pid + 1);
}

static struct thread *get_thread(struct utrace__tf *tf, struct process *p, uint32_t tid)
{
	uint64_t key = (uint64_t)p->index << 32 | tid;
	struct thread *t = map_get(&tf->tids, key);

	if (t)
		return t;
	if (grow(&tf->threads, &tf->cap_threads, tf->nr_threads, sizeof(*tf->threads)))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (map_put(&tf->tids, key, t)) {
		free(t);
		return NULL;
	}
	t->proc = p;
	t->pub.proc = &p->pub;
	t->pub.tid = tid;
	tf->threads[tf->nr_threads++] = t;
	return t;
}

/* A record of a pid needs its PROCESS record first. */
static struct process *need_proc(struct utrace__tf *tf, uint64_t off, uint32_t type,
				 uint32_t pid)
{
	struct process *p = find_proc(tf, pid);

	if (!p)
		bad(tf, off, "%s record of pid %u comes before its PROCESS record",
		    type_names[type], pid);
	return p;
}

/*
 * A bad PROCESS record still makes a process, one that is not read, so
 * that the records of its pid that follow are not reported again.
 */
static int rec_process(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		       uint64_t size)
{
	const unsigned char *s = p + 16, *end = p + size;
	const char *comm, *exe = NULL, *why = NULL;
	struct process *pr;

	comm = take_str(&s, end);
	if (!comm)
		why = "comm has no NUL inside the record";
	else if (!(exe = take_str(&s, end)))
		why = "exe has no NUL inside the record";
	if (grow(&tf->procs, &tf->cap_procs, tf->nr_procs, sizeof(*tf->procs)))
		return nomem(tf);
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return nomem(tf);
	pr->pub.pid = le32(p + offsetof(struct utrace__tf_process_rec, pid));
	pr->pub.ppid = le32(p + offsetof(struct utrace__tf_process_rec, ppid));
	pr->pub.clock = le32(p + offsetof(struct utrace__tf_process_rec, clock));
	pr->pub.trace_clock = le32(p + offsetof(struct utrace__tf_process_rec, trace_clock));
	if (pr->pub.trace_clock >= UTRACE_TCLOCK_NR)
		pr->pub.trace_clock = UTRACE_TCLOCK_MONO;     /* told in finish() */
	pr->pub.comm = comm && exe ? comm : "";
	pr->pub.exe = comm && exe ? exe : "";
	pr->pub.offset = off;
	pr->index = (uint32_t)tf->nr_procs;
	pr->unusable = why || pr->pub.clock > 1;
	if (map_put(&tf->pids, (uint64_t)pr->pub.pid + 1, pr)) {
		free(pr);
		return nomem(tf);
	}
	tf->procs[tf->nr_procs++] = pr;
	if (why)
		return bad(tf, off, "PROCESS record: %s", why);
	if (pr->pub.clock > 1)
		return bad(tf, off, "PROCESS record: pid %u has unknown clock %u",
			   pr->pub.pid, pr->pub.clock);
	return 0;
}

/* "name: <name>\nID: <decimal>\n" */
static int format_head(const char *text, const char **name, size_t *name_len,
		       unsigned long long *id, const char **body)
{
	const char *p, *nl;

	if (strncmp(text, "name: ", 6))
		return -1;
	p = text + 6;
	nl = strchr(p, '\n');
	if (!nl || nl == p)
		return -1;
	*name = p;
	*name_len = (size_t)(nl - p);
	p = nl + 1;
	if (strncmp(p, "ID: ", 4))
		return -1;
	p += 4;
	if (*p < '0' || *p > '9')
		return -1;
	*id = 0;
	while (*p >= '0' && *p <= '9') {
		if (*id > 100000000ULL)
			return -1;
		*id = *id * 10 + (unsigned long long)(*p++ - '0');
	}
	if (*p != '\n')
		return -1;
	*body = p + 1;
	return 0;
}

/* Events of an id whose FORMAT was bad are left out without a word. */
static void mark_rejected(struct process *pr, unsigned long long id)
{
	if (id > 0xffff || (id < pr->nr_by_id && pr->by_id[id]))
		return;
	if (!pr->rejected)
		pr->rejected = calloc(1, 0x10000 / 8);
	if (pr->rejected)
		pr->rejected[id / 8] |= (uint8_t)(1u << (id % 8));
}

/* 'text_id': the format text's ID line, when it has one, else 'id'. */
static int reject_format(struct utrace__tf *tf, uint64_t off, struct process *pr,
			 uint32_t id, unsigned long long text_id, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static int reject_format(struct utrace__tf *tf, uint64_t off, struct process *pr,
			 uint32_t id, unsigned long long text_id, const char *fmt, ...)
{
	va_list ap;
	char *m;

	mark_rejected(pr, id);
	mark_rejected(pr, text_id);
	va_start(ap, fmt);
	m = vformat(fmt, ap);
	va_end(ap);
	bad(tf, off, "%s record: %s", pr == tf->kproc ? "KFORMAT" : "FORMAT",
	    m ? m : "(out of memory)");
	free(m);
	return -EBADMSG;
}

/* The format of event 'id' of process 'pr' (the kernel's for KFORMAT):
 * "system\0format\0" in [s, end). */
static int add_format(struct utrace__tf *tf, uint64_t off, struct process *pr, uint32_t id,
		      const unsigned char *s, const unsigned char *end)
{
	uint32_t pid = pr->pub.pid;
	const char *sys, *text, *name, *body;
	unsigned long long text_id;
	struct format *f;
	size_t name_len;

	sys = take_str(&s, end);
	if (!sys)
		return reject_format(tf, off, pr, id, id, "system has no NUL inside the "
				     "record");
	text = take_str(&s, end);
	if (!text)
		return reject_format(tf, off, pr, id, id, "format text has no NUL inside "
				     "the record");
	if (format_head(text, &name, &name_len, &text_id, &body))
		return reject_format(tf, off, pr, id, id, "the format text does not "
				     "begin with 'name: ' and 'ID: ' lines");
	if (id > 0xffff)
		return reject_format(tf, off, pr, id, text_id, "event id %u does not fit "
				     "common_type (16 bits)", id);
	if (text_id != id)
		return reject_format(tf, off, pr, id, text_id, "id %u differs from the "
				     "format text's ID %llu", id, text_id);
	if (id < pr->nr_by_id && pr->by_id[id]) {
		if (!strcmp(pr->by_id[id]->text, text))
			return 0;
		if (pr == tf->kproc)
			return reject_format(tf, off, pr, id, id, "a second, different "
					     "format for kernel event id %u", id);
		return reject_format(tf, off, pr, id, id, "a second, different format "
				     "for event id %u of pid %u", id, pid);
	}
	if (id >= pr->nr_by_id) {
		uint32_t n = id + 1 > pr->nr_by_id * 2 ? id + 1 : pr->nr_by_id * 2;
		void *a = realloc(pr->by_id, n * sizeof(*pr->by_id));

		if (!a)
			return nomem(tf);
		pr->by_id = a;
		memset(pr->by_id + pr->nr_by_id, 0, (n - pr->nr_by_id) * sizeof(*pr->by_id));
		pr->nr_by_id = n;
	}
	if (grow(&tf->fmts, &tf->cap_fmts, tf->nr_fmts, sizeof(*tf->fmts)))
		return nomem(tf);
	f = calloc(1, sizeof(*f));
	if (!f || !(f->name = strndup(name, name_len))) {
		free(f);
		return nomem(tf);
	}
	f->pub.proc = &pr->pub;
	f->pub.id = id;
	f->pub.system = sys;
	f->pub.name = f->name;
	f->pub.text = text;
	f->pub.text_len = strlen(text);
	f->pub.body = body;
	f->pub.offset = off;
	pr->by_id[id] = &f->pub;
	tf->fmts[tf->nr_fmts++] = f;
	return 0;
}

static int rec_format(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		      uint64_t size)
{
	uint32_t pid = le32(p + offsetof(struct utrace__tf_format_rec, pid));
	struct process *pr = need_proc(tf, off, UTRACE_TF_FORMAT, pid);

	if (!pr)
		return -EBADMSG;
	return add_format(tf, off, pr, le32(p + offsetof(struct utrace__tf_format_rec, id)),
			  p + sizeof(struct utrace__tf_format_rec), p + size);
}

/* Check every event header of the page of record 'off' (at file offset
 * 'pg', 'plen' bytes); count its events. */
static int check_page(struct utrace__tf *tf, uint64_t off, uint64_t pg, uint32_t plen,
		      uint64_t *nr)
{
	const unsigned char *page = tf->data + pg;
	uint64_t word = le64(page + 8), commit = word & UTRACE_RB_COMMIT_MASK;
	const unsigned char *rec;
	struct utrace_rb_cursor c;
	uint32_t len, at;
	char why[200];
	int r;

	*nr = 0;
	if (commit > plen - UTRACE_PAGE_HDR)
		return bad(tf, off, "page commit %llu exceeds the page's %u data bytes "
			   "(page size %u)", (unsigned long long)commit,
			   plen - UTRACE_PAGE_HDR, plen);
	pg_load(tf, pg, plen, &c, &word);
	while ((r = pg_next(&c, &rec, &len, &at, why, sizeof(why))) == UTRACE_RB_EVENT)
		(*nr)++;
	if (r == UTRACE_RB_BAD)
		return bad(tf, off, "%s", why);
	return 0;
}

/* The kernel pseudo-process, made at its first record. */
static struct process *kernel_proc(struct utrace__tf *tf)
{
	if (!tf->kproc) {
		tf->kproc = calloc(1, sizeof(*tf->kproc));
		if (!tf->kproc)
			return NULL;
		tf->kproc->pub.comm = "kernel";
		tf->kproc->pub.exe = "";
		tf->kproc->index = UINT32_MAX;
	}
	return tf->kproc;
}

static int rec_kformat(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		       uint64_t size)
{
	struct process *k = kernel_proc(tf);

	if (!k)
		return nomem(tf);
	return add_format(tf, off, k, le32(p + offsetof(struct utrace__tf_kformat_rec, id)),
			  p + sizeof(struct utrace__tf_kformat_rec), p + size);
}

/* The task of kernel events with common_pid 'pid' (made unnamed). */
static struct ktask *get_ktask(struct utrace__tf *tf, uint32_t pid)
{
	struct ktask *k = map_get(&tf->ktask_map, (uint64_t)pid + 1);

	if (k)
		return k;
	if (grow(&tf->ktasks, &tf->cap_ktasks, tf->nr_ktasks, sizeof(*tf->ktasks)))
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	if (map_put(&tf->ktask_map, (uint64_t)pid + 1, k)) {
		free(k);
		return NULL;
	}
	k->p.pub.pid = pid;
	k->p.pub.comm = "";
	k->p.pub.exe = "";
	k->p.index = UINT32_MAX;
	k->t.proc = &k->p;
	k->t.pub.proc = &k->p.pub;
	k->t.pub.tid = pid;
	tf->ktasks[tf->nr_ktasks++] = k;
	return k;
}

static int rec_ktask(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		     uint64_t size)
{
	const unsigned char *s = p + sizeof(struct utrace__tf_ktask_rec);
	const char *comm = take_str(&s, p + size);
	struct ktask *k;

	if (!comm)
		return bad(tf, off, "KTASK record: comm has no NUL inside the record");
	k = get_ktask(tf, le32(p + offsetof(struct utrace__tf_ktask_rec, pid)));
	if (!k)
		return nomem(tf);
	k->p.pub.pid = le32(p + offsetof(struct utrace__tf_ktask_rec, tgid));
	k->p.pub.comm = comm;
	k->t.pub.comm = comm;
	return 0;
}

/*
 * A kernel page: checked as a PAGE's, its length its own (the kernel's
 * sub-buffer size); the lost count the kernel stores after the data
 * (RB_MISSED_STORED) read when it is inside the page.  Each common_pid
 * gets its task.
 */
static int rec_kpage(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		     uint64_t size)
{
	uint32_t cpu = le32(p + offsetof(struct utrace__tf_kpage_rec, cpu));
	uint64_t pg = off + REC_HDR + sizeof(struct utrace__tf_kpage_rec), nr, word, commit;
	uint64_t plen = size - sizeof(struct utrace__tf_kpage_rec);
	const unsigned char *rec;
	struct utrace_rb_cursor c;
	struct page_ref *ref;
	struct thread *t;
	uint32_t len, at;

	if (plen < UTRACE_PAGE_HDR || plen > (1u << 20))
		return bad(tf, off, "KPAGE record: a page of %llu bytes is not from 16 to "
			   "1048576", (unsigned long long)plen);
	if (cpu >= KCPU_MAX)
		return bad(tf, off, "KPAGE record: CPU %u is not below %u", cpu, KCPU_MAX);
	if (!kernel_proc(tf))
		return nomem(tf);
	if (check_page(tf, off, pg, (uint32_t)plen, &nr))
		return -EBADMSG;
	t = map_get(&tf->kcpu_map, (uint64_t)cpu + 1);
	if (!t) {
		if (grow(&tf->kcpu, &tf->cap_kcpu, tf->nr_kcpu, sizeof(*tf->kcpu)))
			return nomem(tf);
		t = calloc(1, sizeof(*t));
		if (!t)
			return nomem(tf);
		if (map_put(&tf->kcpu_map, (uint64_t)cpu + 1, t)) {
			free(t);
			return nomem(tf);
		}
		t->proc = tf->kproc;
		t->pub.proc = &tf->kproc->pub;
		t->pub.comm = "kernel";
		tf->kcpu[tf->nr_kcpu++] = t;
	}
	if (grow(&t->pages, &t->cap_pages, t->nr_pages, sizeof(*t->pages)))
		return nomem(tf);
	pg_load(tf, pg, (uint32_t)plen, &c, &word);
	while (pg_next(&c, &rec, &len, &at, NULL, 0) == UTRACE_RB_EVENT)
		if (!get_ktask(tf, le32(rec + 4)))
			return nomem(tf);
	ref = &t->pages[t->nr_pages++];
	ref->rec_off = off;
	ref->page = pg;
	ref->plen = (uint32_t)plen;
	ref->cpu = cpu;
	ref->seq = le64(p + offsetof(struct utrace__tf_kpage_rec, seq));
	ref->lost_before = 0;
	commit = word & UTRACE_RB_COMMIT_MASK;
	if ((word & UTRACE_RB_MISSED_STORED) && commit + 8 <= plen - UTRACE_PAGE_HDR)
		ref->lost_before = le64(tf->data + pg + UTRACE_PAGE_HDR + commit);
	t->pub.nr_events += nr;
	t->pub.nr_pages++;
	tf->nr_events += nr;
	return 0;
}

static int rec_thread(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		      uint64_t size)
{
	const unsigned char *s = p + 8;
	const char *comm = take_str(&s, p + size);
	struct process *pr;
	struct thread *t;

	if (!comm)
		return bad(tf, off, "THREAD record: comm has no NUL inside the record");
	pr = need_proc(tf, off, UTRACE_TF_THREAD,
		       le32(p + offsetof(struct utrace__tf_thread_rec, pid)));
	if (!pr)
		return -EBADMSG;
	t = get_thread(tf, pr, le32(p + offsetof(struct utrace__tf_thread_rec, tid)));
	if (!t)
		return nomem(tf);
	t->pub.comm = comm;
	return 0;
}

static int rec_page(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		    uint64_t size)
{
	struct page_ref *ref;
	struct process *pr;
	struct thread *t;
	uint64_t nr;

	if (size < PAGE_META + (uint64_t)tf->page_size)
		return bad(tf, off, "PAGE record of %llu bytes is shorter than 32 + the "
			   "page size %u", (unsigned long long)size, tf->page_size);
	pr = need_proc(tf, off, UTRACE_TF_PAGE,
		       le32(p + offsetof(struct utrace__tf_page_rec, pid)));
	if (!pr)
		return -EBADMSG;
	if (check_page(tf, off, off + REC_HDR + PAGE_META, tf->page_size, &nr))
		return -EBADMSG;
	t = get_thread(tf, pr, le32(p + offsetof(struct utrace__tf_page_rec, tid)));
	if (!t || grow(&t->pages, &t->cap_pages, t->nr_pages, sizeof(*t->pages)))
		return nomem(tf);
	ref = &t->pages[t->nr_pages++];
	ref->rec_off = off;
	ref->page = off + REC_HDR + PAGE_META;
	ref->plen = tf->page_size;
	ref->cpu = le32(p + offsetof(struct utrace__tf_page_rec, cpu));
	ref->seq = le64(p + offsetof(struct utrace__tf_page_rec, seq));
	ref->lost_before = le64(p + offsetof(struct utrace__tf_page_rec, lost_before));
	t->pub.nr_events += nr;
	tf->nr_events += nr;
	return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int rec_lost(struct utrace__tf *tf, uint64_t off, const unsigned char *p)
{
	struct process *pr = need_proc(tf, off, UTRACE_TF_LOST,
				       le32(p + offsetof(struct utrace__tf_lost_rec, pid)));
	struct thread *t;

	if (!pr)
		return -EBADMSG;
	t = get_thread(tf, pr, le32(p + offsetof(struct utrace__tf_lost_rec, tid)));
	if (!t)
		return nomem(tf);
	t->lost_records = add_sat(t->lost_records,
				  le64(p + offsetof(struct utrace__tf_lost_rec, count)));
	return 0;
}

static int rec_stats(struct utrace__tf *tf, uint64_t off, const unsigned char *p)
{
	struct process *pr = need_proc(tf, off, UTRACE_TF_STATS,
				       le32(p + offsetof(struct utrace__tf_stats_rec, pid)));

	if (!pr)
		return -EBADMSG;
	pr->pub.has_stats = true;
	pr->pub.written = le64(p + offsetof(struct utrace__tf_stats_rec, written));
	pr->pub.lost = le64(p + offsetof(struct utrace__tf_stats_rec, lost));
	pr->pub.missed = le32(p + offsetof(struct utrace__tf_stats_rec, missed));
	return 0;
}

static void rec_clock(struct utrace__tf *tf, const unsigned char *p)
{
	uint64_t tsc = le64(p + offsetof(struct utrace__tf_clock_rec, tsc));
	uint64_t ns = le64(p + offsetof(struct utrace__tf_clock_rec, ns));

	if (!tf->nr_clock) {
		tf->tsc0 = tsc;
		tf->ns0 = ns;
	}
	tf->tsc1 = tsc;
	tf->ns1 = ns;
	tf->nr_clock++;
}

/*
 * A CALIB or CALIBX record (both start with u32 pid, u32 index): its
 * process, with the process's table of that type ('arrp', *nr entries)
 * grown with zeroed entries to hold the index.  NULL when the record is
 * bad or memory ran out (*err says which, after saying why).
 */
static struct process *calib_slot(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
				  uint32_t type, uint32_t *idx, int *err)
{
	uint32_t pid = le32(p), i = le32(p + 4);
	struct process *pr = need_proc(tf, off, type, pid);

	*idx = i;
	if (!pr) {
		*err = -EBADMSG;
		return NULL;
	}
	if (i >= UTRACE_POOL_CALIB) {
		*err = bad(tf, off, "%s record: point %u of pid %u is past the %u a process has",
			   type_names[type], i, pid, UTRACE_POOL_CALIB);
		return NULL;
	}
	return pr;
}

static int grow_to(void *arrp, size_t *nr, size_t *cap, size_t elem, uint32_t i)
{
	while (*nr <= i) {
		if (grow(arrp, cap, *nr, elem))
			return -ENOMEM;
		memset((char *)*(void **)arrp + *nr * elem, 0, elem);
		(*nr)++;
	}
	return 0;
}

/* Kept by index; the first record of an index wins. */
static int rec_calib(struct utrace__tf *tf, uint64_t off, const unsigned char *p)
{
	uint32_t i;
	int err = 0;
	struct process *pr = calib_slot(tf, off, p, UTRACE_TF_CALIB, &i, &err);

	if (!pr)
		return err;
	if (grow_to(&pr->pts, &pr->nr_pts, &pr->cap_pts, sizeof(*pr->pts), i))
		return nomem(tf);
	if (!pr->pts[i].ns) {
		pr->pts[i].tsc = le64(p + offsetof(struct utrace__tf_calib_rec, tsc));
		pr->pts[i].ns = le64(p + offsetof(struct utrace__tf_calib_rec, ns));
	}
	return 0;
}

/* Kept by index, as CALIB records. */
static int rec_calibx(struct utrace__tf *tf, uint64_t off, const unsigned char *p)
{
	uint32_t i;
	int err = 0;
	struct process *pr = calib_slot(tf, off, p, UTRACE_TF_CALIBX, &i, &err);

	if (!pr)
		return err;
	if (grow_to(&pr->xs, &pr->nr_xs, &pr->cap_xs, sizeof(*pr->xs), i))
		return nomem(tf);
	if (!pr->xs[i].point) {
		pr->xs[i].tsc = le64(p + offsetof(struct utrace__tf_calibx_rec, tsc));
		pr->xs[i].raw = le64(p + offsetof(struct utrace__tf_calibx_rec, raw));
		pr->xs[i].boot = (int64_t)le64(p + offsetof(struct utrace__tf_calibx_rec, boot));
		pr->xs[i].tai = (int64_t)le64(p + offsetof(struct utrace__tf_calibx_rec, tai));
		pr->xs[i].point = 1;
	}
	return 0;
}

static const uint64_t min_payload[] = {
	[UTRACE_TF_CLOCK] = sizeof(struct utrace__tf_clock_rec),
	[UTRACE_TF_PROCESS] = sizeof(struct utrace__tf_process_rec),
	[UTRACE_TF_FORMAT] = sizeof(struct utrace__tf_format_rec),
	[UTRACE_TF_THREAD] = sizeof(struct utrace__tf_thread_rec),
	[UTRACE_TF_PAGE] = PAGE_META,
	[UTRACE_TF_LOST] = sizeof(struct utrace__tf_lost_rec),
	[UTRACE_TF_STATS] = sizeof(struct utrace__tf_stats_rec),
	[UTRACE_TF_CALIB] = sizeof(struct utrace__tf_calib_rec),
	[UTRACE_TF_SYMBOL] = sizeof(struct utrace__tf_symbol_rec),
	[UTRACE_TF_KFORMAT] = sizeof(struct utrace__tf_kformat_rec),
	[UTRACE_TF_KPAGE] = sizeof(struct utrace__tf_kpage_rec),
	[UTRACE_TF_KTASK] = sizeof(struct utrace__tf_ktask_rec),
	[UTRACE_TF_CALIBX] = sizeof(struct utrace__tf_calibx_rec),
	[UTRACE_TF_OBJECT] = sizeof(struct utrace__tf_object_rec),
};

/* A SYMBOL record: kept with its process (the latest of its pid). */
static int rec_symbol(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		      uint64_t size)
{
	const unsigned char *s = p + sizeof(struct utrace__tf_symbol_rec), *end = p + size;
	uint32_t pid = le32(p + offsetof(struct utrace__tf_symbol_rec, pid));
	struct process *pr = need_proc(tf, off, UTRACE_TF_SYMBOL, pid);
	const char *name;

	if (!pr)
		return 0;
	name = take_str(&s, end);
	if (!name)
		return bad(tf, off, "SYMBOL record: name has no NUL inside the record");
	if (grow(&pr->syms, &pr->cap_syms, pr->nr_syms, sizeof(*pr->syms)))
		return nomem(tf);
	pr->syms[pr->nr_syms++] = (struct tf_sym){
		le64(p + offsetof(struct utrace__tf_symbol_rec, addr)),
		le64(p + offsetof(struct utrace__tf_symbol_rec, size)), name };
	pr->syms_sorted = false;
	return 0;
}

/* An OBJECT record: kept with its process (the latest of its pid). */
static int rec_object(struct utrace__tf *tf, uint64_t off, const unsigned char *p,
		      uint64_t size)
{
	const unsigned char *s = p + sizeof(struct utrace__tf_object_rec), *end = p + size;
	uint32_t pid = le32(p + offsetof(struct utrace__tf_object_rec, pid));
	struct process *pr = need_proc(tf, off, UTRACE_TF_OBJECT, pid);
	const char *path;

	if (!pr)
		return 0;
	path = take_str(&s, end);
	if (!path)
		return bad(tf, off, "OBJECT record: path has no NUL inside the record");
	if (grow(&pr->objs, &pr->cap_objs, pr->nr_objs, sizeof(*pr->objs)))
		return nomem(tf);
	pr->objs[pr->nr_objs++] = (struct tf_obj){
		le64(p + offsetof(struct utrace__tf_object_rec, start)),
		le64(p + offsetof(struct utrace__tf_object_rec, end)),
		le64(p + offsetof(struct utrace__tf_object_rec, bias)), path };
	return 0;
}

int utrace__tf_obj_lookup(const struct utrace__tf_process *proc, uint64_t addr,
			  const char **path, uint64_t *bias)
{
	const struct process *pr;
	size_t i;

	if (!proc)
		return -ENOENT;
	pr = (const struct process *)((const char *)proc - offsetof(struct process, pub));
	/* the latest first: an object loaded again elsewhere */
	for (i = pr->nr_objs; i > 0; i--) {
		const struct tf_obj *o = &pr->objs[i - 1];

		if (addr >= o->start && addr < o->end) {
			*path = o->path;
			*bias = o->bias;
			return 0;
		}
	}
	return -ENOENT;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct tf_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int utrace__tf_sym_lookup(void *ctx, const struct utrace__tf_process *proc, uint64_t addr,
			  const char **name, uint64_t *start, uint64_t *size)
{
	struct process *pr;
	size_t lo = 0, hi, i;

	(void)ctx;
	if (!proc)
		return -ENOENT;
	pr = (struct process *)((char *)proc - offsetof(struct process, pub));
	if (!pr->nr_syms)
		return -ENOENT;
	if (!pr->syms_sorted) {
		qsort(pr->syms, pr->nr_syms, sizeof(*pr->syms), sym_cmp);
		pr->syms_sorted = true;
	}
	hi = pr->nr_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pr->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i > 0 && lo - i < 8; i--) {
		const struct tf_sym *sy = &pr->syms[i - 1];

		if (addr - sy->addr < sy->size) {
			*name = sy->name;
			*start = sy->addr;
			*size = sy->size;
			return 0;
		}
	}
	return -ENOENT;
}

int utrace__tf_sym_at(const struct utrace__tf_process *proc, size_t i, const char **name,
		      uint64_t *addr, uint64_t *size)
{
	const struct process *pr;

	if (!proc)
		return -ENOENT;
	pr = (const struct process *)((const char *)proc - offsetof(struct process, pub));
	if (i >= pr->nr_syms)
		return -ENOENT;
	*name = pr->syms[i].name;
	*addr = pr->syms[i].addr;
	*size = pr->syms[i].size;
	return 0;
}

static int read_record(struct utrace__tf *tf, uint64_t off, uint32_t type,
		       const unsigned char *p, uint64_t size)
{
	if (type < sizeof(min_payload) / sizeof(min_payload[0]) && min_payload[type] &&
	    size < min_payload[type])
		return bad(tf, off, "%s record of %llu bytes is shorter than %llu",
			   type_names[type], (unsigned long long)size,
			   (unsigned long long)min_payload[type]);
	switch (type) {
	case UTRACE_TF_CLOCK:
		rec_clock(tf, p);
		return 0;
	case UTRACE_TF_PROCESS:
		return rec_process(tf, off, p, size);
	case UTRACE_TF_FORMAT:
		return rec_format(tf, off, p, size);
	case UTRACE_TF_THREAD:
		return rec_thread(tf, off, p, size);
	case UTRACE_TF_PAGE:
		return rec_page(tf, off, p, size);
	case UTRACE_TF_LOST:
		return rec_lost(tf, off, p);
	case UTRACE_TF_STATS:
		return rec_stats(tf, off, p);
	case UTRACE_TF_END:
		tf->has_end = true;
		return 0;
	case UTRACE_TF_CALIB:
		return rec_calib(tf, off, p);
	case UTRACE_TF_SYMBOL:
		return rec_symbol(tf, off, p, size);
	case UTRACE_TF_KFORMAT:
		return rec_kformat(tf, off, p, size);
	case UTRACE_TF_KPAGE:
		return rec_kpage(tf, off, p, size);
	case UTRACE_TF_KTASK:
		return rec_ktask(tf, off, p, size);
	case UTRACE_TF_CALIBX:
		return rec_calibx(tf, off, p);
	case UTRACE_TF_OBJECT:
		return rec_object(tf, off, p, size);
	default:
		return 0;                /* unknown types are skipped */
	}
}

static int read_header(struct utrace__tf *tf, uint32_t *header_size)
{
	const unsigned char *h = tf->data;
	uint32_t v;

	if (tf->size < 8 || memcmp(h, UTRACE_TF_MAGIC, 8)) {
		set_error(tf, tf->size ? "not a utrace trace file (no \"UTRACE\" magic "
			  "at offset 0)" : "empty file, not a utrace trace file");
		return -EBADMSG;
	}
	if (tf->size < HEADER_MIN) {
		set_error(tf, "file cut short in its header (%zu of 64 bytes)", tf->size);
		return -EBADMSG;
	}
	if ((v = le32(h + 8)) != UTRACE_TF_VERSION) {
		set_error(tf, "offset 8: trace file version %u is not supported "
			  "(this reader reads version 1)", v);
		return -EBADMSG;
	}
	v = le32(h + 20);
	if (v == 0x04030201) {
		set_error(tf, "offset 20: big-endian trace files are not supported");
		return -EBADMSG;
	}
	if (v != 0x01020304) {
		set_error(tf, "offset 20: bad byte-order word 0x%08x", v);
		return -EBADMSG;
	}
	*header_size = le32(h + 12);
	if (*header_size < HEADER_MIN || *header_size > tf->size) {
		set_error(tf, "offset 12: header size %u is not from 64 to the file "
			  "size (%zu)", *header_size, tf->size);
		return -EBADMSG;
	}
	v = le32(h + 16);
	if (v < 256 || v > (1u << 20) || (v & (v - 1))) {
		set_error(tf, "offset 16: page size %u is not a power of two from 256 "
			  "to 1048576", v);
		return -EBADMSG;
	}
	tf->page_size = v;
	if ((v = le32(h + 24)) != 8) {
		set_error(tf, "offset 24: long size %u is not supported (only 8)", v);
		return -EBADMSG;
	}
	tf->flags = le32(h + 28);
	tf->realtime_ns = le64(h + 32);
	tf->monotonic_ns = le64(h + 40);
	return 0;
}

static int cmp_page(const void *a, const void *b)
{
	const struct page_ref *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->rec_off < y->rec_off ? -1 : x->rec_off > y->rec_off;
}

/*
 * The file ends at 'off' before its END record: cut short by a recorder
 * that was killed, crashed or found the disk full (the writer keeps every
 * record before the last one whole).  Not an error: what came before is
 * read as usual.
 */
static void set_cut(struct utrace__tf *tf, uint64_t off)
{
	tf->cut = true;
	tf->cut_at = off;
	free(tf->warning);
	if (asprintf(&tf->warning, "'%s': file cut short at byte %llu (the recording "
		     "did not end cleanly)", tf->name, (unsigned long long)off) < 0)
		tf->warning = NULL;
}

/*
 * The clocks beside mono, from the CALIBX records: CLOCK_MONOTONIC_RAW
 * as a chain of its own (the same conversion as mono's, from the raw
 * points that follow each other from the first), and per mono segment
 * the offsets of CLOCK_BOOTTIME and CLOCK_TAI read with its point (a
 * point without them takes the last before it, or the first after).
 */
static int other_clocks(struct process *p)
{
	struct utrace_calib_point *rp;
	size_t n = p->nr_segs, i, k;
	int64_t boot = 0, tai = 0;

	for (i = 0; i < n && i < p->nr_xs && !p->xs[i].point; i++)
		;
	if (i == n || i >= p->nr_xs)
		return 0;                /* no CALIBX: mono only */
	boot = p->xs[i].boot;
	tai = p->xs[i].tai;
	p->boot = malloc(n * sizeof(*p->boot));
	p->tai = malloc(n * sizeof(*p->tai));
	rp = malloc(n * sizeof(*rp));
	if (!p->boot || !p->tai || !rp) {
		free(rp);
		return -ENOMEM;
	}
	for (i = 0, k = 0; i < n; i++) {
		if (i < p->nr_xs && p->xs[i].point) {
			boot = p->xs[i].boot;
			tai = p->xs[i].tai;
			if (k == i)
				rp[k++] = (struct utrace_calib_point){ p->xs[i].tsc, p->xs[i].raw };
		}
		p->boot[i] = boot;
		p->tai[i] = tai;
	}
	if (k >= 2 && (p->rsegs = malloc(k * sizeof(*p->rsegs))))
		p->nr_rsegs = utrace__tsc_chain(rp, k, p->rsegs);
	free(rp);
	return 0;
}

/* Whether p's times can be shown in clock 'id'. */
static bool tclock_ok(const struct process *p, uint32_t id)
{
	switch (id) {
	case UTRACE_TCLOCK_MONO:
		return true;
	case UTRACE_TCLOCK_X86_TSC:
		return p->pub.clock == UTRACE_CLOCK_TSC;
	case UTRACE_TCLOCK_BOOT:
	case UTRACE_TCLOCK_TAI:
		return p->boot != NULL;
	default:
		return id < UTRACE_TCLOCK_NR && p->nr_rsegs > 0;
	}
}

int utrace__tf_set_clock(struct utrace__tf *tf, uint32_t id, uint32_t *bad_pid)
{
	size_t i;

	for (i = 0; i < tf->nr_procs; i++)
		if (!tf->procs[i]->unusable && !tclock_ok(tf->procs[i], id)) {
			*bad_pid = tf->procs[i]->pub.pid;
			return -ENOENT;
		}
	for (i = 0; i < tf->nr_procs; i++) {
		tf->procs[i]->tclock = id;
		tf->procs[i]->pub.trace_clock = id;
	}
	return 0;
}

uint32_t utrace__tf_proc_clock(const struct utrace__tf_process *proc)
{
	return ((const struct process *)(const void *)proc)->tclock;
}

/* After the records: calibration, page order. */
static void finish(struct utrace__tf *tf)
{
	size_t i, j, k;

	for (i = 0; i < tf->nr_procs; i++) {
		struct process *p = tf->procs[i];

		/* The process's own points, as many as follow each other
		 * from the first (a file cut short may miss some). */
		for (j = 0; j < p->nr_pts && p->pts[j].ns; j++)
			;
		if (p->pub.clock == 1 && j >= 2) {
			p->segs = malloc(j * sizeof(*p->segs));
			if (!p->segs) {
				nomem(tf);
				return;
			}
			p->nr_segs = utrace__tsc_chain(p->pts, j, p->segs);
			if (!p->nr_segs)
				bad(tf, p->pub.offset, "pid %u: its CALIB points are out of "
				    "order; its times come from the CLOCK records", p->pub.pid);
			else if (other_clocks(p) < 0) {
				nomem(tf);
				return;
			}
		}
		p->tclock = p->pub.trace_clock;
		if (!tclock_ok(p, p->tclock))
			p->tclock = UTRACE_TCLOCK_MONO;
		p->pub.trace_clock = p->tclock;
		if (p->unusable || p->pub.clock != 1 || p->nr_segs ||
		    (tf->nr_clock >= 2 && tf->tsc1 != tf->tsc0))
			continue;
		p->unusable = true;
		bad(tf, p->pub.offset, "pid %u records TSC time, but the file has %s; "
		    "its events cannot be timed", p->pub.pid,
		    tf->nr_clock < 2 ? (tf->nr_clock ? "one CLOCK record, not two" :
					"no CLOCK record") :
		    "two CLOCK records with the same TSC value");
	}
	for (i = 0; i < tf->nr_threads; i++) {
		struct thread *t = tf->threads[i];

		for (j = 1; j < t->nr_pages; j++)
			if (cmp_page(&t->pages[j - 1], &t->pages[j]) > 0)
				break;
		if (j < t->nr_pages)
			qsort(t->pages, t->nr_pages, sizeof(*t->pages), cmp_page);
		for (j = k = 0; j < t->nr_pages; j++) {
			if (k && t->pages[k - 1].seq == t->pages[j].seq) {
				bad(tf, t->pages[j].rec_off, "PAGE record: page %llu of "
				    "thread %u (pid %u) appears twice",
				    (unsigned long long)t->pages[j].seq, t->pub.tid,
				    t->proc->pub.pid);
				continue;
			}
			t->pages[k++] = t->pages[j];
		}
		t->nr_pages = k;
		t->pub.nr_pages = k;
		t->pub.lost = t->lost_records;
		for (j = 0; j < k; j++)
			t->pub.lost = add_sat(t->pub.lost, t->pages[j].lost_before);
	}
	/* A CPU's kernel pages, in the order the recorder read them. */
	for (i = 0; i < tf->nr_kcpu; i++) {
		struct thread *t = tf->kcpu[i];

		qsort(t->pages, t->nr_pages, sizeof(*t->pages), cmp_page);
		for (j = k = 0; j < t->nr_pages; j++) {
			if (k && t->pages[k - 1].seq == t->pages[j].seq) {
				bad(tf, t->pages[j].rec_off, "KPAGE record: page %llu of CPU %u "
				    "appears twice", (unsigned long long)t->pages[j].seq,
				    t->pages[j].cpu);
				continue;
			}
			t->pages[k++] = t->pages[j];
		}
		t->nr_pages = k;
		t->pub.nr_pages = k;
	}
}

static int parse(struct utrace__tf *tf)
{
	uint32_t header_size;
	uint64_t off;

	if (read_header(tf, &header_size))
		return -EBADMSG;
	off = header_size;
	while (off < tf->size) {
		uint64_t rest = tf->size - off, size;
		uint32_t type;

		if (rest < REC_HDR) {
			set_cut(tf, off);
			break;
		}
		type = le32(tf->data + off);
		size = le64(tf->data + off + 8);
		if (size > rest - REC_HDR) {
			if (size > MAX_RECORD)
				bad(tf, off, "size %llu runs past the end of the file "
				    "(%zu bytes)", (unsigned long long)size, tf->size);
			else
				set_cut(tf, off);
			break;
		}
		if (read_record(tf, off, type, tf->data + off + REC_HDR, size) == -ENOMEM)
			return -ENOMEM;
		tf_read(tf, REC_HDR + size);
		off += REC_HDR + size;
		off = (off + 7) & ~7ULL;
		if (type == UTRACE_TF_END)
			break;           /* what may follow is not part of the file */
	}
	/* Every record whole, but the writer did not get to its END. */
	if (!tf->cut && (tf->flags & UTRACE_TF_FLAG_END) && !tf->has_end)
		set_cut(tf, off < tf->size ? off : tf->size);
	finish(tf);
	if (tf->nomem)
		return -ENOMEM;
	return tf->error ? -EBADMSG : 0;
}

static struct utrace__tf *tf_new(const char *name)
{
	struct utrace__tf *tf = calloc(1, sizeof(*tf));

	if (!tf)
		return NULL;
	tf->name = strdup(name);
	if (!tf->name) {
		free(tf);
		return NULL;
	}
	return tf;
}

int utrace__tf_open_mem(const void *data, size_t size, const char *name,
			struct utrace__tf **tfp)
{
	struct utrace__tf *tf = tf_new(name);

	*tfp = tf;
	if (!tf)
		return -ENOMEM;
	tf->data = data;
	tf->size = size;
	return parse(tf);
}

/* Not a regular file (a pipe): read it into memory. */
static int read_all(struct utrace__tf *tf, int fd)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			unsigned char *b = realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	tf->copy = buf;
	tf->data = buf;
	tf->size = n;
	return 0;
}

int utrace__tf_open(const char *path, struct utrace__tf **tfp)
{
	struct utrace__tf *tf = tf_new(path);
	struct stat st;
	int fd, r = 0;

	*tfp = tf;
	if (!tf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		r = -EISDIR;
		goto fail;
	}
	if (S_ISREG(st.st_mode)) {
		if (st.st_size > 0) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
				       fd, 0);

			if (m == MAP_FAILED) {
				r = -errno;
				goto fail;
			}
			tf->map_base = m;
			tf->data = m;
			tf->size = (size_t)st.st_size;
		}
	} else if ((r = read_all(tf, fd)) < 0) {
		goto fail;
	}
	close(fd);
	return parse(tf);
fail:
	if (fd >= 0)
		close(fd);
	if (asprintf(&tf->error, "cannot read '%s': %s", path, strerror(-r)) < 0)
		tf->error = NULL;
	return r;
}

void utrace__tf_close(struct utrace__tf *tf)
{
	size_t i;

	if (!tf)
		return;
	for (i = 0; i < tf->nr_procs; i++) {
		free(tf->procs[i]->by_id);
		free(tf->procs[i]->rejected);
		free(tf->procs[i]->pts);
		free(tf->procs[i]->segs);
		free(tf->procs[i]->xs);
		free(tf->procs[i]->rsegs);
		free(tf->procs[i]->boot);
		free(tf->procs[i]->tai);
		free(tf->procs[i]->syms);
		free(tf->procs[i]->objs);
		free(tf->procs[i]);
	}
	for (i = 0; i < tf->nr_threads; i++) {
		free(tf->threads[i]->pages);
		free(tf->threads[i]);
	}
	for (i = 0; i < tf->nr_fmts; i++) {
		free(tf->fmts[i]->name);
		free(tf->fmts[i]);
	}
	for (i = 0; i < tf->nr_kcpu; i++) {
		free(tf->kcpu[i]->pages);
		free(tf->kcpu[i]);
	}
	for (i = 0; i < tf->nr_ktasks; i++)
		free(tf->ktasks[i]);
	if (tf->kproc) {
		free(tf->kproc->by_id);
		free(tf->kproc->rejected);
		free(tf->kproc);
	}
	free(tf->kcpu);
	free(tf->ktasks);
	map_free(&tf->kcpu_map);
	map_free(&tf->ktask_map);
	free(tf->procs);
	free(tf->threads);
	free(tf->fmts);
	map_free(&tf->pids);
	map_free(&tf->tids);
	if (tf->map_base)
		munmap(tf->map_base, tf->size);
	free(tf->copy);
	free(tf->error);
	free(tf->warning);
	free(tf->name);
	free(tf);
}

const char *utrace__tf_error(const struct utrace__tf *tf)
{
	return tf->error ? tf->error : tf->nomem ? "out of memory" : NULL;
}

uint64_t utrace__tf_nr_bad(const struct utrace__tf *tf)
{
	return tf->nr_bad;
}

const char *utrace__tf_warning(const struct utrace__tf *tf)
{
	return tf->warning;
}

bool utrace__tf_cut(const struct utrace__tf *tf, uint64_t *offset)
{
	if (tf->cut && offset)
		*offset = tf->cut_at;
	return tf->cut;
}

const char *utrace__tf_name(const struct utrace__tf *tf)
{
	return tf->name;
}

uint32_t utrace__tf_page_size(const struct utrace__tf *tf)
{
	return tf->page_size;
}

void utrace__tf_start_time(const struct utrace__tf *tf, uint64_t *realtime_ns,
			   uint64_t *monotonic_ns)
{
	*realtime_ns = tf->realtime_ns;
	*monotonic_ns = tf->monotonic_ns;
}

uint64_t utrace__tf_nr_events(const struct utrace__tf *tf)
{
	return tf->nr_events;
}

const struct utrace__tf_process *utrace__tf_process(const struct utrace__tf *tf, size_t i)
{
	return i < tf->nr_procs ? &tf->procs[i]->pub : NULL;
}

const struct utrace__tf_thread *utrace__tf_thread(const struct utrace__tf *tf, size_t i)
{
	return i < tf->nr_threads ? &tf->threads[i]->pub : NULL;
}

const struct utrace__tf_thread *utrace__tf_ktask(const struct utrace__tf *tf, size_t i)
{
	return i < tf->nr_ktasks ? &tf->ktasks[i]->t.pub : NULL;
}

uint64_t utrace__tf_nr_kernel_events(const struct utrace__tf *tf)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < tf->nr_kcpu; i++)
		n += tf->kcpu[i]->pub.nr_events;
	return n;
}

struct utrace__tf_format *utrace__tf_format(const struct utrace__tf *tf, size_t i)
{
	return i < tf->nr_fmts ? &tf->fmts[i]->pub : NULL;
}

struct utrace__tf_format *utrace__tf_find_format(const struct utrace__tf *tf,
						 const struct utrace__tf_process *proc,
						 uint32_t id)
{
	const struct process *p = (const struct process *)proc;

	(void)tf;
	return id < p->nr_by_id ? p->by_id[id] : NULL;
}

/* The merge. */
struct stream {
	struct thread *t;
	size_t next_page;
	struct utrace_rb_cursor c;
	bool in_page, final_lost_done, any;
	uint64_t page_off;
	uint32_t cpu;
	uint32_t seg;                    /* the last time's segment (to_ns()) */
	/* the head */
	int kind;                        /* 0: the stream is done */
	uint64_t key;                    /* ns; UINT64_MAX: "at the end" */
	const unsigned char *rec;
	uint32_t len, at;
	uint64_t lost;
	uint64_t last_time;
};

struct utrace__tf_iter {
	struct utrace__tf *tf;
	bool unordered;                  /* thread by thread, no times */
	struct stream *s;
	size_t nr;
	uint32_t *heap;
	size_t nh;
	uint64_t last_time;
};

/* advance(): the stream's next page, its lost-events marker, or its end. */
static void advance_slow(const struct utrace__tf *tf, struct stream *s, bool no_time)
{
	const struct process *p = s->t->proc;

	for (;;) {
		if (s->in_page) {
			if (pg_next(&s->c, &s->rec, &s->len, &s->at, NULL, 0) == UTRACE_RB_EVENT) {
				s->kind = UTRACE__TF_EVENT;
				s->key = no_time ? 0 : to_ns(tf, p, s->c.ts, &s->seg);
				return;
			}
			s->in_page = false;
		}
		if (s->next_page < s->t->nr_pages) {
			const struct page_ref *ref = &s->t->pages[s->next_page++];
			uint64_t word;

			pg_load(tf, ref->page, ref->plen, &s->c, &word);
			tf_read(tf, ref->plen);
			s->in_page = true;
			s->cpu = ref->cpu;
			s->page_off = ref->rec_off;
			if (ref->lost_before || (word & UTRACE_RB_MISSED_EVENTS)) {
				struct utrace_rb_cursor peek = s->c;
				const unsigned char *rec;
				uint32_t len, at;

				pg_next(&peek, &rec, &len, &at, NULL, 0);
				s->kind = UTRACE__TF_LOST;
				s->lost = ref->lost_before;
				s->key = to_ns(tf, p, peek.ts, &s->seg);
				return;
			}
			continue;
		}
		if (s->t->lost_records && !s->final_lost_done) {
			s->final_lost_done = true;
			s->kind = UTRACE__TF_LOST;
			s->lost = s->t->lost_records;
			s->key = s->any ? s->last_time : UINT64_MAX;
			return;
		}
		s->kind = 0;
		return;
	}
}

/* The stream's next item into its head: inline the next event of the
 * page (nearly every call), the rest out of line. */
static inline void advance(const struct utrace__tf *tf, struct stream *s, bool no_time)
{
	if (s->in_page && pg_next(&s->c, &s->rec, &s->len, &s->at, NULL, 0) == UTRACE_RB_EVENT) {
		s->kind = UTRACE__TF_EVENT;
		s->key = no_time ? 0 : to_ns(tf, s->t->proc, s->c.ts, &s->seg);
		return;
	}
	s->in_page = false;
	advance_slow(tf, s, no_time);
}

static inline bool before(const struct utrace__tf_iter *it, uint32_t a, uint32_t b)
{
	return it->s[a].key < it->s[b].key || (it->s[a].key == it->s[b].key && a < b);
}

static void sift_down(struct utrace__tf_iter *it, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		uint32_t tmp;

		if (l < it->nh && before(it, it->heap[l], it->heap[m]))
			m = l;
		if (l + 1 < it->nh && before(it, it->heap[l + 1], it->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = it->heap[i];
		it->heap[i] = it->heap[m];
		it->heap[m] = tmp;
		i = m;
	}
}

static int iter_new(struct utrace__tf *tf, struct utrace__tf_iter **itp, bool unordered)
{
	struct utrace__tf_iter *it = calloc(1, sizeof(*it));
	size_t i;

	*itp = NULL;
	if (!it)
		return -ENOMEM;
	it->tf = tf;
	it->unordered = unordered;
	it->s = calloc(tf->nr_threads + tf->nr_kcpu + 1, sizeof(*it->s));
	it->heap = calloc(tf->nr_threads + tf->nr_kcpu + 1, sizeof(*it->heap));
	if (!it->s || !it->heap) {
		utrace__tf_iter_free(it);
		return -ENOMEM;
	}
	for (i = 0; i < tf->nr_threads + tf->nr_kcpu; i++) {
		struct stream *s = &it->s[it->nr];
		struct thread *t = i < tf->nr_threads ? tf->threads[i] :
				   tf->kcpu[i - tf->nr_threads];

		if (t->proc->unusable)
			continue;
		s->t = t;
		if (s->t->nr_pages)
			s->cpu = s->t->pages[s->t->nr_pages - 1].cpu;
		advance(tf, s, unordered);
		if (s->kind)
			it->heap[it->nh++] = (uint32_t)it->nr;
		it->nr++;
	}
	for (i = it->nh / 2; i-- > 0;)
		sift_down(it, i);
	*itp = it;
	return 0;
}

int utrace__tf_iter_new(struct utrace__tf *tf, struct utrace__tf_iter **itp)
{
	return iter_new(tf, itp, false);
}

int utrace__tf_iter_new_unordered(struct utrace__tf *tf, struct utrace__tf_iter **itp)
{
	return iter_new(tf, itp, true);
}

int utrace__tf_iter_next(struct utrace__tf_iter *it, struct utrace__tf_item *item)
{
	struct stream *s;

	if (!it->nh)
		return 0;
	s = &it->s[it->heap[0]];
	item->kind = (enum utrace__tf_kind)s->kind;
	item->time = s->key == UINT64_MAX ? it->last_time : s->key;
	item->cpu = s->cpu;
	item->proc = &s->t->proc->pub;
	item->thread = &s->t->pub;
	item->page_offset = s->page_off;
	item->kernel = s->t->proc == it->tf->kproc;
	if (s->kind == UTRACE__TF_EVENT) {
		item->id = le16(s->rec);
		item->format = utrace__tf_find_format(it->tf, item->proc, item->id);
		if (item->kernel) {
			/* a kernel event: told as a thread of its task */
			const struct ktask *k = map_get(&it->tf->ktask_map,
							(uint64_t)le32(s->rec + 4) + 1);

			if (k) {
				item->proc = &k->p.pub;
				item->thread = &k->t.pub;
			}
		}
		item->format_rejected = !item->format && s->t->proc->rejected &&
			(s->t->proc->rejected[item->id / 8] >> (item->id % 8) & 1);
		item->rec = s->rec;
		item->len = s->len;
		item->offset = s->c.base + s->at;
		item->lost = 0;
		s->last_time = s->key;
		s->any = true;
	} else {
		item->id = 0;
		item->format = NULL;
		item->format_rejected = false;
		item->rec = NULL;
		item->len = 0;
		item->offset = s->page_off;
		item->lost = s->lost;
	}
	if (item->time > it->last_time)
		it->last_time = item->time;
	advance(it->tf, s, it->unordered);
	if (!s->kind)
		it->heap[0] = it->heap[--it->nh];
	/* one stream left (or a file of one thread): nothing to order; two:
	 * one comparison */
	if (!it->unordered && it->nh == 2) {
		if (before(it, it->heap[1], it->heap[0])) {
			uint32_t tmp = it->heap[0];

			it->heap[0] = it->heap[1];
			it->heap[1] = tmp;
		}
	} else if (!it->unordered && it->nh > 2) {
		sift_down(it, 0);
	}
	return 1;
}

void utrace__tf_iter_free(struct utrace__tf_iter *it)
{
	if (!it)
		return;
	free(it->s);
	free(it->heap);
	free(it);
}
