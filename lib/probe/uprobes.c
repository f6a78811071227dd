// SPDX-License-Identifier: MIT
/*
 * uprobe_events in the traced process (libutrace): the table of dynamic
 * probe events, each registered with the runtime as a one-event module
 * so that it is listed, enabled, filtered and recorded like a static
 * event (events/<group>/<event>/, set_event, the per-thread pages).
 *
 *   definition line --parse.c--> utrace__probe_def
 *        --resolve here--> object (dl_iterate_phdr), address, function
 *        --engine.h--> one probe site per address (a return probe: one
 *                      per exit of the function)
 *        --registry--> struct utrace_event "group:event"
 *
 * A hit calls on_hit() on the thread that hit; when the event is on
 * anywhere it runs the event's tracepoint as the generated
 * __traceiter_<name>() does, whose recording probe fetches the
 * arguments into a record.  Several definitions may share an event (the
 * kernel's multi-probe events: same name, same arguments).
 *
 * Probes are placed when defined (a bad site is refused at once, which
 * the kernel does not do) and cost only the jump and one load while the
 * event is off; hits are counted, as the kernel's, only while it is on.
 * Removing waits until no thread is in a handler (utrace__probe_detach)
 * or in the event's probe (the registry), then frees.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <utrace/tracepoint.h>

#include "elfsyms.h"
#include "instance.h"
#include "internal.h"
#include "log.h"
#include "probe.h"
#include "uprobes.h"

#define MAX_EXITS 64
#define MAX_FAST_ARGS 8  /* %REG arguments stored without the fetch program */
#define NR_SLOTS 256   /* probe events at a time (slot_on_fn) */

struct uevent;

/* One definition line. */
struct uprobe {
	struct uprobe *next;           /* in its event */
	struct uevent *ue;
	struct utrace__probe_def *def;
	char *canon;
	char *shown_path;              /* uprobe_profile's first column */
	struct utrace__probe_env env;
	uint64_t addrs[MAX_EXITS];     /* the sites: the address, or each exit */
	size_t nr_addrs;
	size_t func_len;
	char fname[128];               /* the function, for messages */
	struct utrace__probe_site **sites;   /* placed while the event is on */
	size_t nr_sites;
	uint64_t hits, misses;
	/* (REFCTR): the SDT semaphore, counted up while the sites are
	 * placed, as the kernel's uprobe_register() does; NULL: none */
	uint16_t *sema;
	bool sema_held;
	/* the record written by the inlined writer (record_fast()): the
	 * arguments when all are plain %REG[:TYPE] (nr_fast >= 0), each a
	 * register's index in utrace_probe_regs, its width and place */
	bool inline_ok;                /* no strings, at most 112 bytes */
	int nr_fast;                   /* -1: run the fetch program */
	struct { uint8_t reg, bytes; uint16_t off; } fast[MAX_FAST_ARGS];
};

/* One event (one or more definitions). */
struct uevent {
	struct uevent *next;
	struct utrace_event ev;
	struct utrace_event_class cls;
	struct utrace_tracepoint tp;
	const char *print[2];
	char *fmt, *fmt_args;
	char *name;                    /* "group:event" for the tracepoint */
	struct utrace_event *mod[1];
	struct uprobe *probes;
	unsigned int slot;
	bool registered;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct uevent *uevents;        /* newest first, read lock-free by output() */
static unsigned int nr_defs;

/* ---- objects and symbols of this process ---- */

struct obj_query {
	const char *want;      /* "" = the program; a path; or a bare name */
	bool by_name;
	char path[PATH_MAX];
	uint64_t bias;
	const ElfW(Phdr) *phdr;
	unsigned int phnum;
	bool found;
};

static void exe_path(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
}

static int obj_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj_query *q = arg;
	char path[PATH_MAX], real[PATH_MAX];
	const char *base;
	bool first = !q->found && info->dlpi_name && !info->dlpi_name[0] &&
		     q->phdr == NULL;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		snprintf(path, sizeof(path), "%s", info->dlpi_name);
	else if (first)
		exe_path(path, sizeof(path));
	else
		return 0;
	if (q->want[0] == '\0') {
		if (!first)
			return 0;
	} else if (q->by_name) {
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (strcmp(base, q->want))
			return 0;
	} else {
		if (!realpath(path, real) || strcmp(real, q->want))
			return 0;
	}
	snprintf(q->path, sizeof(q->path), "%s", path);
	q->bias = info->dlpi_addr;
	q->phdr = info->dlpi_phdr;
	q->phnum = info->dlpi_phnum;
	q->found = true;
	return 1;
}

/* Find a loaded object: by path (any spelling of it), by its file's
 * name, or "" for the program. */
static int find_object(const char *want, bool by_name, struct obj_query *q)
{
	char real[PATH_MAX];

	memset(q, 0, sizeof(*q));
	q->by_name = by_name;
	if (!by_name && want[0]) {
		if (!realpath(want, real))
			return -ENOENT;
		q->want = real;
	} else {
		q->want = want;
	}
	dl_iterate_phdr(obj_cb, q);
	q->want = NULL;
	return q->found ? 0 : -ENOENT;
}

/* A file offset's address in the file (PT_LOAD), or 0. */
static uint64_t off_to_vaddr(const struct obj_query *q, uint64_t off, bool *ok)
{
	for (unsigned int i = 0; i < q->phnum; i++) {
		const ElfW(Phdr) *p = &q->phdr[i];

		if (p->p_type == PT_LOAD && off >= p->p_offset && off < p->p_offset + p->p_filesz) {
			*ok = true;
			return off - p->p_offset + p->p_vaddr;
		}
	}
	*ok = false;
	return 0;
}

/* Whether the 2 bytes at vaddr stay writable once loaded: in a PF_W
 * segment, outside PT_GNU_RELRO (made read-only after relocation). */
static bool writable(const struct obj_query *q, uint64_t vaddr)
{
	bool w = false;

	for (unsigned int i = 0; i < q->phnum; i++) {
		const ElfW(Phdr) *p = &q->phdr[i];
		bool in = vaddr >= p->p_vaddr && vaddr + 2 <= p->p_vaddr + p->p_memsz;

		if (p->p_type == PT_LOAD && in && (p->p_flags & PF_W))
			w = true;
		if (p->p_type == PT_GNU_RELRO && vaddr + 2 > p->p_vaddr &&
		    vaddr < p->p_vaddr + p->p_memsz)
			return false;
	}
	return w;
}

static uint64_t vaddr_to_off(const struct obj_query *q, uint64_t vaddr, bool *ok)
{
	for (unsigned int i = 0; i < q->phnum; i++) {
		const ElfW(Phdr) *p = &q->phdr[i];

		if (p->p_type == PT_LOAD && vaddr >= p->p_vaddr &&
		    vaddr < p->p_vaddr + p->p_filesz) {
			*ok = true;
			return vaddr - p->p_vaddr + p->p_offset;
		}
	}
	*ok = false;
	return 0;
}

static int load_symtab(const char *path, struct utrace__symtab *t)
{
	char exe[PATH_MAX];
	int fd, r;

	if (!path[0]) {
		exe_path(exe, sizeof(exe));
		path = exe;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = utrace__symtab_load(fd, t);
	close(fd);
	return r;
}

static int res_object(void *data, const char *name, char *path, size_t len)
{
	struct obj_query q;

	(void)data;
	if (find_object(name, true, &q) < 0)
		return -ENOENT;
	snprintf(path, len, "%s", q.path);
	return 0;
}

static int res_symbol(void *data, const char *path, const char *sym, uint64_t *vaddr,
		      uint64_t *off, uint64_t *size)
{
	const struct utrace__sym *s;
	struct utrace__symtab t;
	struct obj_query q;
	int r = -ENOENT;
	bool ok;

	(void)data;
	if (find_object(path, false, &q) < 0 || load_symtab(q.path, &t) < 0)
		return -ENOENT;
	s = utrace__symtab_by_name(&t, sym);
	if (s) {
		*vaddr = s->addr;
		*size = s->size;
		*off = vaddr_to_off(&q, *vaddr, &ok);
		r = ok ? 0 : -ENOENT;
	}
	utrace__symtab_free(&t);
	return r;
}

static const struct utrace__probe_resolver resolver = {
	.object = res_object,
	.symbol = res_symbol,
};

/* ---- hits ---- */

/* (not inlined into record_fast(): its frame stays out of the usual case) */
static __attribute__((noinline)) void record(void *data, struct uprobe *p,
					     const struct utrace_probe_regs *regs)
{
	struct utrace_event *ev = data;
	unsigned char buf[UTRACE_EVENT_MAX] __attribute__((aligned(8)));
	struct utrace_tp_reserve r;
	unsigned int faults = 0;
	size_t len;
	uint8_t *rec;

	if (!p->def->nr_strings) {
		/* the size is known: fetched straight into the page */
		rec = utrace_tp_reserve(&r, ev, buf, p->def->size);
		if (!rec)
			return;
		utrace__probe_fetch(p->def, regs, &p->env, rec, p->def->size, &faults);
	} else {
		len = utrace__probe_fetch(p->def, regs, &p->env, buf, sizeof(buf), &faults);
		rec = len >= 8 ? utrace_tp_reserve(&r, ev, buf, (unsigned int)len) : NULL;
		if (!rec)
			goto out;
		if (rec != buf)
			memcpy(rec + 8, buf + 8, len - 8);
	}
	utrace_tp_commit(&r);
out:
	if (faults)
		__atomic_fetch_add(&p->misses, faults, __ATOMIC_RELAXED);
}

/* Plan record_fast() for p's definition. */
static void plan_fast(struct uprobe *p)
{
	const struct utrace__probe_def *d = p->def;

	/* the size limit of utrace__reserve_inline() */
	p->inline_ok = !d->nr_strings && d->size <= 112;
	p->nr_fast = d->kind == 'p' && d->nr_args <= MAX_FAST_ARGS ? (int)d->nr_args : -1;
	for (unsigned int i = 0; i < d->nr_args && p->nr_fast >= 0; i++) {
		const struct utrace__probe_arg *a = &d->args[i];

		if (a->nr_insns != 1 || a->insns[0].op != UTRACE__POP_REG || a->bf_width ||
		    a->count || a->insns[0].imm < 0 ||
		    a->insns[0].imm >= (int64_t)(sizeof(struct utrace_probe_regs) / 8) ||
		    (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8)) {
			p->nr_fast = -1;
			break;
		}
		p->fast[i].reg = (uint8_t)a->insns[0].imm;
		p->fast[i].bytes = a->size;
		p->fast[i].off = a->offset;
	}
}

#ifdef UTRACE__INLINE_WRITER
/* record_fast()'s other cases, through the library, as the generated
 * probe's utrace_event_rec_<call>: the stash of a signal handler copied in
 * first (utrace__slow_enter()). */
static __attribute__((noinline)) void record_slow(void *data, struct uprobe *p,
						  const struct utrace_probe_regs *regs)
{
	utrace__slow_enter();
	record(data, p, regs);
}

/* record_fast() for a definition that needs its fetch program (out of
 * line: the usual case keeps to the caller-saved registers). */
static __attribute__((noinline)) void fetch_inline(void *data, struct uprobe *p,
						   const struct utrace_probe_regs *regs,
						   uint8_t *rec, struct utrace_tp_thread_v1 *t,
						   struct utrace_tp_page_v1 *page, uint64_t commit)
{
	/* (the reservation in registers: its address does not escape) */
	struct utrace__fast f = { t, page, commit };
	unsigned int faults = 0;

	utrace__probe_fetch(p->def, regs, &p->env, rec, p->def->size, &faults);
	utrace__commit_event_inline(&f, data, rec, (unsigned int)p->def->size);
	if (faults)
		__atomic_fetch_add(&p->misses, faults, __ATOMIC_RELAXED);
}
#endif

/*
 * The recording probe's usual case, as the generated probe of a static
 * event (stage 6: utrace_event_raw_event_<call>): the record reserved and
 * committed by the inlined writer (tracepoint.h), the %REG arguments
 * stored as they are.  Called only while record() is the event's only
 * probe (tracepoint.c: set_fast()); anything
 * else (tracing_on, instances, triggers, nesting and signals, a new page,
 * a print or record hook: UTRACE_TP_SLOW) goes to record() through the
 * library, as the generated probe does; the event's filter runs on the
 * record in place (utrace__commit_event_inline()).
 */
static void record_fast(void *data, struct uprobe *p, const struct utrace_probe_regs *regs)
{
#ifdef UTRACE__INLINE_WRITER
	const struct utrace__probe_def *d = p->def;
	const uint64_t *r = (const uint64_t *)regs;
	struct utrace__fast f;
	uint8_t *rec;
	int n;

	if (__builtin_expect(!p->inline_ok, 0))
		goto slow;
	rec = utrace__reserve_inline(&f, data, (unsigned int)d->size);
	if (__builtin_expect(!rec, 0))
		goto slow;
	n = p->nr_fast;     /* (in a register: the stores may alias p) */
	if (__builtin_expect(n < 0, 0)) {
		fetch_inline(data, p, regs, rec, f.t, f.page, f.commit);
		return;
	}
	{
		memcpy(rec + 8, &regs->ip, 8);
		for (int i = 0; i < n; i++) {
			uint8_t *to = rec + p->fast[i].off;
			uint64_t v = r[p->fast[i].reg];

			/* (compares, not a jump table: fewer instructions) */
			if (p->fast[i].bytes == 8) {
				memcpy(to, &v, 8);
			} else if (p->fast[i].bytes == 4) {
				uint32_t x = (uint32_t)v;

				memcpy(to, &x, 4);
			} else if (p->fast[i].bytes == 2) {
				uint16_t x = (uint16_t)v;

				memcpy(to, &x, 2);
			} else {
				*to = (uint8_t)v;
			}
		}
	}
	utrace__commit_event_inline(&f, data, rec, (unsigned int)d->size);
	return;
slow:
	/* (a tail call: nothing kept across it) */
	record_slow(data, p, regs);
	return;
#endif
	record(data, p, regs);
}

/* The tracepoint's probes, one by one (a filter, other probes). */
static __attribute__((noinline)) void on_hit_all(struct uprobe *p,
						 const struct utrace_probe_regs *regs)
{
	struct utrace_tracepoint *tp = &p->ue->tp;
	struct utrace_tracepoint_func *it;

	utrace_tp_read_lock();
	it = __atomic_load_n(&tp->funcs, __ATOMIC_CONSUME);
	if (it)
		for (; it->func; it++)
			((void (*)(void *, struct uprobe *, const struct utrace_probe_regs *))
			 it->func)(it->data, p, regs);
	utrace_tp_read_unlock();
}

/* As the generated __traceiter_<name>() (stages/stage0). */
static void on_hit(void *data, const struct utrace_probe_regs *regs)
{
	struct uprobe *p = data;
	void *fast;

	/* hits are the engine's (its handler calls), no locked add here */
	fast = __atomic_load_n(&p->ue->tp.fast_data, __ATOMIC_ACQUIRE);
	if (fast)
		/* (the builtin is record(), set at registration) */
		record_fast(fast, p, regs);
	else
		on_hit_all(p, regs);
}

/* ---- the event's callbacks (they have no context: found by id) ---- */

static const struct uevent *pending;   /* the event being registered */

static const struct utrace_event_field *fields_of(unsigned int *nr)
{
	const struct utrace__probe_def *d = pending->probes->def;

	*nr = d->nr_fields;
	return d->fields;
}

static void output(struct utrace_seq *s, const void *rec)
{
	const struct utrace_entry *ent = rec;
	const struct uevent *ue;
	int n;

	for (ue = __atomic_load_n(&uevents, __ATOMIC_ACQUIRE); ue; ue = ue->next)
		if (ue->ev.id == ent->type)
			break;
	if (!ue || s->len >= s->size)
		return;
	/* the record's size is not known here: strings are checked against
	 * the largest record the event can have */
	n = utrace__probe_print(ue->probes->def, rec, utrace__probe_record_max(ue->probes->def),
				s->buf + s->len, s->size - s->len, NULL, NULL);
	if (n > 0)
		s->len += (unsigned int)n < s->size - s->len ? (unsigned int)n :
			  s->size - s->len - 1;
}

/* ---- placing and removing ---- */

/* Remove the sites; their hits and misses stay counted in p. */
static void detach_all(struct uprobe *p)
{
	for (size_t i = 0; i < p->nr_sites; i++) {
		if (!p->sites[i])
			continue;
		/* counted before: the site is not ours after the detach (the
		 * few hits in between are lost) */
		__atomic_fetch_add(&p->hits, utrace__probe_hits(p->sites[i]), __ATOMIC_RELAXED);
		__atomic_fetch_add(&p->misses, utrace__probe_misses(p->sites[i]), __ATOMIC_RELAXED);
		utrace__probe_detach(p->sites[i]);
		p->sites[i] = NULL;
	}
	p->nr_sites = 0;
	if (p->sema_held) {
		__atomic_fetch_sub(p->sema, 1, __ATOMIC_RELAXED);
		p->sema_held = false;
	}
}

static void free_probe(struct uprobe *p)
{
	detach_all(p);
	free(p->sites);
	utrace__probe_def_free(p->def);
	free(p->canon);
	free(p->shown_path);
	free(p);
}

/* Our own error (a check the kernel lacks), logged like the kernel's:
 * caret under the place (word 1). */
static int place_error(struct utrace__probe_error *err, int e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int place_error(struct utrace__probe_error *err, int e, const char *fmt, ...)
{
	va_list ap;
	const char *sp = strchr(err->command, ' ');

	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	err->err = -e;
	err->logged = true;
	err->pos = sp ? (int)(sp - err->command) + 1 : 0;
	return -e;
}

/* @len bytes of the file at @off, malloc()ed; NULL on error. */
static uint8_t *file_bytes(const char *path, uint64_t off, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t *b = fd >= 0 ? malloc(len ? len : 1) : NULL;

	if (b && pread(fd, b, len, (off_t)off) != (ssize_t)len) {
		free(b);
		b = NULL;
	}
	if (fd >= 0)
		close(fd);
	return b;
}

/*
 * Resolve and check a definition: its object, address and function, and
 * that the engine's decoder accepts each site (the kernel checks none).
 * The sites are placed only while the event is on (attach_sites()).
 */
static int prepare(struct uprobe *p, struct utrace__probe_error *err)
{
	struct utrace__probe_def *d = p->def;
	char why[UTRACE_PROBE_WHY_MAX] = "";
	const struct utrace__sym *fs;
	struct utrace__symtab t;
	struct obj_query q;
	uint64_t vaddr, func, addr, foff;
	uint8_t *code;
	size_t n = 0;
	bool ok;
	int r;

	plan_fast(p);
	if (find_object(d->path, false, &q) < 0)
		return place_error(err, ENOENT, "File is not loaded in this process");
	free(p->shown_path);
	p->shown_path = strdup(d->path[0] ? d->path : q.path);
	if (!d->path[0]) {
		/* the program itself: uprobe_events names its file */
		char *path = strdup(q.path);

		if (!path)
			return place_error(err, ENOMEM, "Out of memory");
		free(d->path);
		d->path = path;
	}
	p->env.bias = q.bias;
	if (!d->resolved) {
		uint64_t va, off, size;

		if (res_symbol(NULL, d->path, d->symbol, &va, &off, &size) < 0)
			return place_error(err, ENOENT, "Failed to find the given symbol");
		d->offset = off + (uint64_t)d->symoff;
		d->resolved = true;
	}
	vaddr = off_to_vaddr(&q, d->offset, &ok);
	if (!ok)
		return place_error(err, EINVAL, "Offset is not in a loaded segment");
	if (d->refctr) {
		uint64_t sv = off_to_vaddr(&q, d->refctr, &ok);

		/* as the kernel's valid_ref_ctr_vma(): in a writable mapping
		 * of the file; 16 bits, aligned */
		if (!ok || (sv & 1) || !writable(&q, sv))
			return place_error(err, EINVAL, "Reference counter offset is not in a "
					   "writable segment");
		p->sema = (uint16_t *)(uintptr_t)(q.bias + sv);
	}
	if (load_symtab(q.path, &t) < 0)
		return place_error(err, EINVAL, "No symbol table to find the function");
	fs = utrace__symtab_find(&t, vaddr);
	if (!fs || !fs->size) {
		utrace__symtab_free(&t);
		return place_error(err, EINVAL, "Offset is not inside a function");
	}
	func = q.bias + fs->addr;
	addr = q.bias + vaddr;
	foff = vaddr_to_off(&q, fs->addr, &ok);
	/* the engine's reasons start "+0xOFF ...": the function's name first */
	snprintf(p->fname, sizeof(p->fname), "%s",
		 fs->name < t.strings_len ? t.strings + fs->name : "?");
	p->func_len = fs->size;
	utrace__symtab_free(&t);
	p->env.func = func;
	/* decoded from the file: in memory, another probe's int3 or jump
	 * may be there already */
	code = ok ? file_bytes(q.path, foff, p->func_len) : NULL;
	if (!code)
		return place_error(err, EINVAL, "Cannot read the function from its file");
	if (d->kind == 'r') {
		if (addr != func) {
			free(code);
			return place_error(err, EINVAL, "Return probe must be at a function's entry");
		}
		r = utrace__probe_decode_exits(code, p->func_len, func, p->addrs, MAX_EXITS, &n, why);
		free(code);
		if (r < 0)
			return place_error(err, -r, "Cannot probe: %s%s", p->fname, why);
		if (n > MAX_EXITS)
			return place_error(err, E2BIG, "Too many exits (%zu)", n);
		if (!n)
			return place_error(err, EINVAL, "The function has no exit to probe");
	} else {
		r = utrace__probe_decode_check(code, p->func_len, func, addr, why);
		free(code);
		if (r < 0)
			return place_error(err, -r, "Cannot probe: %s%s", p->fname, why);
		p->addrs[0] = addr;
		n = 1;
	}
	p->sites = calloc(n, sizeof(*p->sites));
	if (!p->sites)
		return place_error(err, ENOMEM, "Out of memory");
	p->nr_addrs = n;
	return 0;
}

/* Place a probe's sites (the event is being switched on); site_lock held. */
static int attach_sites(struct uprobe *p)
{
	char why[UTRACE_PROBE_WHY_MAX] = "";
	int r;

	for (size_t i = p->nr_sites; i < p->nr_addrs; i++) {
		r = utrace__probe_attach((uintptr_t)p->addrs[i], (uintptr_t)p->env.func, p->func_len,
					 on_hit, p, &p->sites[i], why);
		if (r < 0) {
			utrace__warn("cannot probe %s: %s%s", p->def->event, p->fname, why);
			detach_all(p);
			return r;
		}
		p->nr_sites = i + 1;
	}
	if (p->sema && !p->sema_held) {
		__atomic_fetch_add(p->sema, 1, __ATOMIC_RELAXED);
		p->sema_held = true;
	}
	return 0;
}

/*
 * The tracepoint's regfunc/unregfunc run when its first probe comes and
 * its last goes (the event switched on or off anywhere), under the
 * registry's locks: they take only site_lock.  They have no argument, so
 * each event gets a slot with a pair of its own.
 */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uevent *slots[NR_SLOTS];

static int slot_on(unsigned int n)
{
	int r = 0;

	pthread_mutex_lock(&site_lock);
	if (slots[n])
		for (struct uprobe *p = slots[n]->probes; p && !r; p = p->next)
			r = attach_sites(p);
	if (r)
		for (struct uprobe *p = slots[n]->probes; p; p = p->next)
			detach_all(p);
	pthread_mutex_unlock(&site_lock);
	return r;
}

static void slot_off(unsigned int n)
{
	pthread_mutex_lock(&site_lock);
	if (slots[n])
		for (struct uprobe *p = slots[n]->probes; p; p = p->next)
			detach_all(p);
	pthread_mutex_unlock(&site_lock);
}

#define SLOT(n)								\
	static int slot_on_##n(void) { return slot_on(0x##n); }		\
	static void slot_off_##n(void) { slot_off(0x##n); }
#define SLOT_ON(n) slot_on_##n,
#define SLOT_OFF(n) slot_off_##n,
#define SLOTS16(m, h) m(h##0) m(h##1) m(h##2) m(h##3) m(h##4) m(h##5) m(h##6) m(h##7) \
	m(h##8) m(h##9) m(h##a) m(h##b) m(h##c) m(h##d) m(h##e) m(h##f)
#define SLOTS256(m) SLOTS16(m, 0) SLOTS16(m, 1) SLOTS16(m, 2) SLOTS16(m, 3)	\
	SLOTS16(m, 4) SLOTS16(m, 5) SLOTS16(m, 6) SLOTS16(m, 7) SLOTS16(m, 8)	\
	SLOTS16(m, 9) SLOTS16(m, a) SLOTS16(m, b) SLOTS16(m, c) SLOTS16(m, d)	\
	SLOTS16(m, e) SLOTS16(m, f)
SLOTS256(SLOT)
static int (*const slot_on_fn[NR_SLOTS])(void) = { SLOTS256(SLOT_ON) };
static void (*const slot_off_fn[NR_SLOTS])(void) = { SLOTS256(SLOT_OFF) };

static bool event_busy(const struct uevent *ue)
{
	const struct utrace__event_state *st = ue->ev.priv;

	return st && (st->enabled || st->inst_on);
}

/* "(%lx) a=%d", REC->... into the registry's two halves */
static int split_print(struct uevent *ue, const char *pf)
{
	const char *cut = strstr(pf, "\", REC->__probe_");

	if (!cut)
		return -EINVAL;
	ue->fmt = strndup(pf, (size_t)(cut - pf + 1));
	ue->fmt_args = strdup(cut + 3);
	if (!ue->fmt || !ue->fmt_args)
		return -ENOMEM;
	ue->print[0] = ue->fmt;
	ue->print[1] = ue->fmt_args;
	return 0;
}

static void free_uevent(struct uevent *ue)
{
	struct uprobe *p, *n;

	for (p = ue->probes; p; p = n) {
		n = p->next;
		free_probe(p);
		nr_defs--;
	}
	free(ue->fmt);
	free(ue->fmt_args);
	free(ue->name);
	free(ue);
}

static int new_event(struct uprobe *p, struct uevent **out)
{
	struct utrace__probe_def *d = p->def;
	struct uevent *ue = calloc(1, sizeof(*ue));
	int r;

	if (!ue)
		return -ENOMEM;
	if (asprintf(&ue->name, "%s:%s", d->group, d->event) < 0) {
		ue->name = NULL;
		free(ue);
		return -ENOMEM;
	}
	r = split_print(ue, d->print_fmt);
	if (r) {
		free_uevent(ue);
		return r;
	}
	ue->probes = p;
	p->ue = ue;
	ue->tp.name = ue->name;
	ue->cls.system = d->group;
	ue->cls.fields = fields_of;
	ue->cls.struct_size = d->size;
	ue->cls.probe = (utrace_probe_fn)record;
	ue->ev.name = d->event;
	ue->ev.cls = &ue->cls;
	ue->ev.tp = &ue->tp;
	ue->ev.output = output;
	ue->ev.print = ue->print;
	ue->ev.unit = ue;
	ue->mod[0] = &ue->ev;
	*out = ue;
	return 0;
}

static void register_event(struct uevent *ue)
{
	pending = ue;
	utrace__registry_add_module(ue->mod, ue->mod + 1, NULL, NULL);
	pending = NULL;
	ue->registered = ue->ev.priv != NULL;
	if (ue->registered) {
		/* the registry reads plain char as unsigned (-funsigned-char);
		 * a probe's string is signed:1 in the kernel's formats */
		struct utrace__event_state *st = ue->ev.priv;

		for (unsigned int i = 0; i < st->nr_fields; i++)
			if (st->fields[i].kind == UTRACE_FIELD_STRING)
				st->fields[i].is_signed = 1;
	}
}

static struct uevent *find_event(const char *group, const char *event)
{
	for (struct uevent *ue = uevents; ue; ue = ue->next)
		if ((!group[0] || !strcmp(ue->cls.system, group)) && !strcmp(ue->ev.name, event))
			return ue;
	return NULL;
}

/* A probe at the same place of the same file with another reference
 * counter (the kernel refuses it, as the counter is the place's). */
static bool refctr_mismatch(const struct utrace__probe_def *d)
{
	for (const struct uevent *ue = uevents; ue; ue = ue->next)
		for (const struct uprobe *q = ue->probes; q; q = q->next)
			if (q->def->offset == d->offset && q->def->refctr != d->refctr &&
			    !strcmp(q->def->path, d->path))
				return true;
	return false;
}

static int add_locked(struct utrace__probe_def *d, struct utrace__probe_error *err)
{
	struct uevent *ue = find_event(d->group, d->event);
	struct uprobe *p;
	int r;

	if (ue) {
		if (!utrace__probe_same_args(ue->probes->def, d)) {
			const char *sp = strchr(err->command, ' ');

			sp = sp ? strchr(sp + 1, ' ') : NULL;
			err->err = -EEXIST;
			err->logged = true;
			err->pos = sp ? (int)(sp - err->command) + 1 : (int)strlen(err->command) + 1;
			snprintf(err->msg, sizeof(err->msg),
				 "Argument type or name is different from existing probe");
			utrace__probe_def_free(d);
			return -EEXIST;
		}
	} else if (utrace_event_find(d->group, d->event)) {
		utrace__probe_def_free(d);
		return place_error(err, EEXIST, "An event of this name exists");
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		utrace__probe_def_free(d);
		return -ENOMEM;
	}
	p->def = d;
	r = prepare(p, err);
	if (!r && refctr_mismatch(d)) {
		/* validate_ref_ctr_offset(): EINVAL, only a pr_warn() */
		err->err = -EINVAL;
		err->logged = false;
		snprintf(err->msg, sizeof(err->msg), "Reference counter offset mismatch");
		r = -EINVAL;
	}
	if (r) {
		free_probe(p);
		return r;
	}
	p->canon = utrace__probe_canonical(d);
	if (!p->canon) {
		free_probe(p);
		return -ENOMEM;
	}
	if (ue) {
		struct uprobe **pp = &ue->probes;

		p->ue = ue;
		pthread_mutex_lock(&site_lock);
		/* an event that is on: the new probe is placed now */
		r = __atomic_load_n(&ue->tp.funcs, __ATOMIC_ACQUIRE) ? attach_sites(p) : 0;
		if (!r) {
			while (*pp)
				pp = &(*pp)->next;
			*pp = p;
		}
		pthread_mutex_unlock(&site_lock);
		if (r) {
			free_probe(p);
			return place_error(err, -r, "Cannot place the probe");
		}
		nr_defs++;
		return 0;
	}
	r = new_event(p, &ue);
	if (r) {
		free_probe(p);
		return r;
	}
	nr_defs++;
	pthread_mutex_lock(&site_lock);
	for (ue->slot = 0; ue->slot < NR_SLOTS && slots[ue->slot]; ue->slot++)
		;
	if (ue->slot < NR_SLOTS)
		slots[ue->slot] = ue;
	pthread_mutex_unlock(&site_lock);
	if (ue->slot == NR_SLOTS) {
		free_uevent(ue);
		return place_error(err, ENOSPC, "Too many probe events (%d)", NR_SLOTS);
	}
	ue->tp.regfunc = slot_on_fn[ue->slot];
	ue->tp.unregfunc = slot_off_fn[ue->slot];
	register_event(ue);
	if (!ue->registered) {
		pthread_mutex_lock(&site_lock);
		slots[ue->slot] = NULL;
		pthread_mutex_unlock(&site_lock);
		free_uevent(ue);
		return place_error(err, ENOMEM, "The event could not be registered");
	}
	ue->next = uevents;
	__atomic_store_n(&uevents, ue, __ATOMIC_RELEASE);
	return 0;
}

/* Unlink and free an idle event. */
static void remove_locked(struct uevent *ue)
{
	struct uevent **pp;

	for (pp = &uevents; *pp; pp = &(*pp)->next) {
		if (*pp == ue) {
			*pp = ue->next;
			break;
		}
	}
	pthread_mutex_lock(&site_lock);
	slots[ue->slot] = NULL;
	for (struct uprobe *p = ue->probes; p; p = p->next)
		detach_all(p);
	pthread_mutex_unlock(&site_lock);
	if (ue->registered)
		utrace_tp_unregister_module(ue->mod, ue->mod + 1);
	free_uevent(ue);
}

/* -:[GROUP/]EVENT; "GROUP/" removes the group's idle events. */
static int delete_locked(const struct utrace__probe_def *d)
{
	struct uevent *ue, *next;
	bool found = false, busy = false;

	for (ue = uevents; ue; ue = next) {
		next = ue->next;
		if (d->group[0] && strcmp(ue->cls.system, d->group))
			continue;
		if (d->event[0] && strcmp(ue->ev.name, d->event))
			continue;
		found = true;
		if (event_busy(ue)) {
			busy = true;
			continue;
		}
		remove_locked(ue);
	}
	if (!found)
		return -ENOENT;
	return busy ? -EBUSY : 0;
}

int utrace__uprobes_write(const char *line, struct utrace__probe_error *err)
{
	struct utrace__probe_def *d;
	enum utrace__probe_cmd cmd;
	int r;

	r = utrace__probe_parse(line, &resolver, &cmd, &d, err);
	if (r)
		return r;
	pthread_mutex_lock(&lock);
	if (cmd == UTRACE__PROBE_ADD) {
		r = add_locked(d, err);
	} else if (cmd == UTRACE__PROBE_DEL) {
		r = delete_locked(d);
		if (r)
			snprintf(err->msg, sizeof(err->msg), "%s",
				 r == -EBUSY ? "the event is enabled" : "no such event");
		err->err = r;
		utrace__probe_def_free(d);
	}
	pthread_mutex_unlock(&lock);
	return r;
}

int utrace__uprobes_clear(void)
{
	int r = 0;

	pthread_mutex_lock(&lock);
	for (struct uevent *ue = uevents; ue; ue = ue->next)
		if (event_busy(ue))
			r = -EBUSY;
	while (!r && uevents)
		remove_locked(uevents);
	pthread_mutex_unlock(&lock);
	return r;
}

/* Hits (or misses) of the sites placed now, under site_lock. */
static uint64_t site_counts(const struct uprobe *p, bool misses)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->nr_sites; i++)
		n += misses ? utrace__probe_misses(p->sites[i]) : utrace__probe_hits(p->sites[i]);
	return n;
}

/* The events oldest first, as the kernel lists them. */
static size_t collect(struct uevent ***out)
{
	size_t n = 0, i = 0;
	struct uevent *ue, **v;

	for (ue = uevents; ue; ue = ue->next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return 0;
	for (ue = uevents; ue; ue = ue->next)
		v[n - ++i] = ue;
	*out = v;
	return n;
}

char *utrace__uprobes_text(bool profile)
{
	struct uevent **v = NULL;
	char *text = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	pthread_mutex_lock(&lock);
	pthread_mutex_lock(&site_lock);
	n = collect(&v);
	for (size_t i = 0; i < n; i++) {
		for (struct uprobe *p = v[i]->probes; p; p = p->next) {
			if (!profile)
				fprintf(f, "%s\n", p->canon);
			else   /* the kernel's columns, then the misses: reads
				* that failed, and hits the engine did not pass on
				* (a thread already in a handler) */
				fprintf(f, "  %s %-44s %15" PRIu64 " %15" PRIu64 "\n",
					p->shown_path, p->def->event,
					__atomic_load_n(&p->hits, __ATOMIC_RELAXED) +
					site_counts(p, false),
					__atomic_load_n(&p->misses, __ATOMIC_RELAXED) +
					site_counts(p, true));
		}
	}
	pthread_mutex_unlock(&site_lock);
	pthread_mutex_unlock(&lock);
	free(v);
	if (ferror(f) | fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

void utrace__uprobes_from_env(void)
{
	const char *v = getenv("UTRACE_PROBES");
	char *copy, *line, *save = NULL;

	if (!v || !*v)
		return;
	copy = strdup(v);
	if (!copy)
		return;
	/* definitions are separated by newlines or ';' */
	for (line = strtok_r(copy, "\n;", &save); line; line = strtok_r(NULL, "\n;", &save)) {
		struct utrace__probe_error err;
		int r = utrace__uprobes_write(line, &err);

		if (r)
			utrace__warn("probe '%s': %s", line, err.msg[0] ? err.msg : strerror(-r));
	}
	free(copy);
}
