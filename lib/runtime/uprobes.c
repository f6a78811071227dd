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
 *
 * A definition on a file not loaded yet is pending: bound and placed when
 * the dynamic linker maps it, taken off before it unmaps it (on_rtld(),
 * on the linker's r_brk).  An IFUNC symbol resolves to the implementation
 * the process runs (res_symbol()).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utrace/tracepoint.h>

#include "elfsyms.h"
#include "instance.h"
#include "internal.h"
#include "log.h"
#include "engine.h"
#include "probe.h"
#include "proto.h"
#include "record.h"
#include "rundir.h"
#include "tp.h"
#include "uprobes.h"

#define MAX_EXITS 64
#define MAX_FAST_ARGS 8  /* %REG arguments stored without the fetch program */
#define STR_REC_MAX 112  /* the inline writer's largest record (hit_str()) */
#define FAST_OFF0 16   /* the first argument: after the header and __probe_ip */
#define SHAPE(n, w) ((n) + ((w) == 8 ? 4 : 0))   /* 1..8: writers[] */

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
	/* bound: the addresses are resolved in a loaded object (else the
	 * definition is pending: its file is not mapped yet, or was
	 * unloaded); unloadable: that object was not there at start, so a
	 * dlclose() may unmap it (its sites go at each RT_DELETE) */
	bool bound, unloadable;
	char ifunc[128];               /* "" or the IFUNC symbol's name */
	struct utrace__probe_site **sites;   /* placed while the event is on */
	size_t nr_sites;
	uint64_t hits, misses;
	/* (REFCTR): the SDT semaphore, counted up while the sites are
	 * placed, as the kernel's uprobe_register() does; NULL: none */
	uint16_t *sema;
	bool sema_held;
	/* the record's size for the inlined writer, or more than it takes
	 * (strings, over 112 bytes): its own size check sends that to
	 * record() */
	unsigned int fast_size;
	/* the record written by the inlined writer (on_hit()): the
	 * arguments when all are plain %REG[:TYPE] (nr_fast >= 0), each a
	 * register's index in utrace_probe_regs, its width and place */
	int nr_fast;                   /* -1: run the fetch program */
	struct { uint8_t reg, bytes; uint16_t off; } fast[MAX_FAST_ARGS];
	/* the writer made for the definition: SHAPE(n, width) when its n
	 * arguments are all %REG of one width (4 or 8), packed after
	 * __probe_ip; 0: the loop over fast[] */
	uint8_t shape;
	/* definitions with strings (hit_str()): each argument a %REG or a
	 * string at BASE+OFFS, BASE a register (base >= 0) or the object's
	 * load bias (-1: @SYM, an offset); nr_str 0: record().  The %REG
	 * ones are stored 8 bytes wide, in order, before the strings (the
	 * fixed part is at most 104 bytes: the 112 reserved hold them) */
	int nr_str, nr_sreg, nr_sstr;
	unsigned int str_size;         /* the fixed part (def->size) */
	struct { uint8_t reg; uint16_t off; } sreg[MAX_FAST_ARGS];
	struct {
		int8_t base;       /* register index, -1: the load bias */
		bool counted;
		uint8_t len_reg;
		uint16_t off;      /* of its __data_loc in the record */
		int64_t add;
	} sstr[MAX_FAST_ARGS];
	/* the first placement's breakpoints, for the recorder to say
	 * (slot_on() sends it): the engine's result, once */
	bool placed_once;
	char *bp_note;
	char *bp_shown;                /* the same, kept for probe -l -v */
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
	struct uprobe *last;           /* of probes: a glob appends thousands */
	struct uevent *hnext;          /* in by_name[], under lock */
	struct uevent *slot_next;      /* in 'placeable', under site_lock */
	bool listed;                   /* in 'placeable' */
	bool registered;
	bool on;                       /* between slot_on() and slot_off() */
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

struct at_query {
	uintptr_t addr;
	struct obj_query *q;
};

static int at_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct at_query *a = arg;

	(void)size;
	for (unsigned int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + p->p_vaddr;

		if (p->p_type != PT_LOAD || a->addr < start || a->addr >= start + p->p_memsz)
			continue;
		if (info->dlpi_name && info->dlpi_name[0])
			snprintf(a->q->path, sizeof(a->q->path), "%s", info->dlpi_name);
		else
			exe_path(a->q->path, sizeof(a->q->path));
		a->q->bias = info->dlpi_addr;
		a->q->phdr = info->dlpi_phdr;
		a->q->phnum = info->dlpi_phnum;
		a->q->found = true;
		return 1;
	}
	return 0;
}

/* The loaded object holding an address. */
static int find_object_at(uintptr_t addr, struct obj_query *q)
{
	struct at_query a = { addr, q };

	memset(q, 0, sizeof(*q));
	dl_iterate_phdr(at_cb, &a);
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

/*
 * The symbol tables loaded last, kept (a thousand definitions in libc
 * loaded libc's table and its debug file twice each: 49 s, issue 30).
 * load_symtab() gives a shallow copy of a kept table and a reference on
 * it, symtab_done() drops it; no lock is held in between (the dynamic
 * linker's hook resolves under the loader's lock, and the callers walk
 * the loader's list: never hold ours across that).  A table is known by
 * its file's device, inode, size and mtime (not its debug file's).
 */
#define SYMCACHE_MAX 8

struct symcache {
	struct symcache *next;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct utrace__symtab t;
	unsigned int refs;         /* the callers', and 1 while kept */
	bool kept;
};

static pthread_mutex_t symcache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct symcache *symcaches;

static void symcache_unref(struct symcache *c, struct symcache **link)
{
	if (--c->refs)
		return;
	*link = c->next;
	utrace__symtab_free(&c->t);
	free(c);
}

static int load_symtab(const char *path, struct utrace__symtab *t)
{
	char exe[PATH_MAX];
	struct symcache *c, **pp;
	struct stat st;
	unsigned int kept = 0;
	int fd, r;

	if (!path[0]) {
		exe_path(exe, sizeof(exe));
		path = exe;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		r = -errno;
		close(fd);
		return r;
	}
	pthread_mutex_lock(&symcache_lock);
	for (c = symcaches; c; c = c->next) {
		if (c->kept && c->dev == st.st_dev && c->ino == st.st_ino &&
		    c->size == st.st_size && c->mtime.tv_sec == st.st_mtim.tv_sec &&
		    c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			c->refs++;
			*t = c->t;
			pthread_mutex_unlock(&symcache_lock);
			close(fd);
			return 0;
		}
	}
	pthread_mutex_unlock(&symcache_lock);
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	r = utrace__symtab_load_debug(fd, &c->t);
	close(fd);
	if (r < 0) {
		free(c);
		return r;
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtime = st.st_mtim;
	c->refs = 2;
	c->kept = true;
	*t = c->t;
	pthread_mutex_lock(&symcache_lock);
	c->next = symcaches;
	symcaches = c;
	/* the oldest kept ones go past SYMCACHE_MAX (freed when unused) */
	for (pp = &symcaches; *pp;) {
		struct symcache *o = *pp;

		if (o->kept && ++kept > SYMCACHE_MAX) {
			o->kept = false;
			if (o->refs == 1) {
				symcache_unref(o, pp);
				continue;
			}
			o->refs--;
		}
		pp = &o->next;
	}
	pthread_mutex_unlock(&symcache_lock);
	return 0;
}

/* Done with a table from load_symtab(). */
static void symtab_done(struct utrace__symtab *t)
{
	pthread_mutex_lock(&symcache_lock);
	for (struct symcache **pp = &symcaches; *pp; pp = &(*pp)->next) {
		if ((*pp)->t.syms == t->syms && (*pp)->t.strings == t->strings) {
			symcache_unref(*pp, pp);
			break;
		}
	}
	pthread_mutex_unlock(&symcache_lock);
	memset(t, 0, sizeof(*t));
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

/*
 * An IFUNC symbol's address in the file is its resolver's, which runs
 * once; what the process calls is what the resolver chose.  Ask the
 * dynamic linker, as a call through the PLT would: dlsym() on the
 * object's handle resolves IFUNCs.  Only outside our locks (it takes the
 * loader's lock, which a thread in dlopen() holds while it waits for
 * ours in on_rtld()): the parser calls this before utrace__uprobes_write()
 * takes them.  0 when it cannot say.
 */
static uint64_t ifunc_target(const char *path, bool program, const char *sym)
{
	void *h = dlopen(program ? NULL : path, RTLD_LAZY | RTLD_NOLOAD);
	void *a;

	if (!h)
		return 0;
	a = dlsym(h, sym);
	dlclose(h);
	return (uint64_t)(uintptr_t)a;
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
	if (find_object(path, false, &q) < 0)
		/* not mapped (yet): from the file, as the kernel resolves
		 * it; placed when the file is loaded (on_rtld()) */
		return strchr(path, '/') ?
		       utrace__probe_files.symbol(NULL, path, sym, vaddr, off, size) : -ENOENT;
	if (load_symtab(q.path, &t) < 0)
		return -ENOENT;
	s = utrace__symtab_by_name(&t, sym);
	if (s && s->ifunc) {
		struct obj_query m;
		bool program = find_object("", false, &m) == 0 && m.bias == q.bias;
		uint64_t a = ifunc_target(q.path, program, sym);
		const struct utrace__sym *impl = a > q.bias ?
			utrace__symtab_find(&t, a - q.bias) : NULL;

		/* the implementation, a function of this object; without
		 * its symbol (a stripped libc without its -dbg symbols): its
		 * address, and bind() makes do */
		if (impl && impl->size && a - q.bias == impl->addr) {
			s = impl;
		} else if (a > q.bias && !impl) {
			*vaddr = a - q.bias;
			*size = 0;
			*off = vaddr_to_off(&q, *vaddr, &ok);
			symtab_done(&t);
			return ok ? 0 : -ENOENT;
		}
	}
	if (s) {
		*vaddr = s->addr;
		*size = s->size;
		*off = vaddr_to_off(&q, *vaddr, &ok);
		r = ok ? 0 : -ENOENT;
	}
	symtab_done(&t);
	return r;
}

static int res_functions(void *data, const char *path,
			 int (*fn)(void *arg, const char *name, uint64_t vaddr), void *arg)
{
	struct utrace__symtab t;
	struct obj_query q;
	int r;

	(void)data;
	if (find_object(path, false, &q) < 0)
		/* not mapped (yet): the file's */
		return strchr(path, '/') ? utrace__probe_files.functions(NULL, path, fn, arg) :
		       -ENOENT;
	r = load_symtab(q.path, &t);
	if (r < 0)
		return r;
	r = utrace__probe_symtab_functions(&t, fn, arg);
	symtab_done(&t);
	return r;
}

static const struct utrace__probe_resolver resolver = {
	.object = res_object,
	.symbol = res_symbol,
	.functions = res_functions,
};

/* ---- hits ---- */

/* (not inlined into on_hit(): its frame stays out of the usual case) */
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

/* Plan hit_str() for a definition with strings: every argument a
 * %REG[:TYPE] or a string at +OFFS(%REG), +OFFS($argN), @SYM[+OFFS]. */
static void plan_str(struct uprobe *p)
{
	static const uint8_t sysv[6] = {
		offsetof(struct utrace_probe_regs, di) / 8, offsetof(struct utrace_probe_regs, si) / 8,
		offsetof(struct utrace_probe_regs, dx) / 8, offsetof(struct utrace_probe_regs, cx) / 8,
		offsetof(struct utrace_probe_regs, r8) / 8, offsetof(struct utrace_probe_regs, r9) / 8,
	};
	const struct utrace__probe_def *d = p->def;

	p->nr_str = p->nr_sreg = p->nr_sstr = 0;
	if (d->kind != 'p' || !d->nr_strings || d->nr_args > MAX_FAST_ARGS ||
	    d->size + 8 > STR_REC_MAX)
		return;
	for (unsigned int i = 0; i < d->nr_args; i++) {
		const struct utrace__probe_arg *a = &d->args[i];
		const struct utrace__probe_insn *in = a->insns;
		int8_t base;

		if (a->type != UTRACE__PT_STRING && a->type != UTRACE__PT_USTRING) {
			if (a->nr_insns != 1 || in[0].op != UTRACE__POP_REG || a->bf_width ||
			    a->count || in[0].imm < 0 ||
			    in[0].imm >= (int64_t)(sizeof(struct utrace_probe_regs) / 8) ||
			    (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8))
				return;
			/* (8 bytes stored, in order: the next field comes after) */
			p->sreg[p->nr_sreg].reg = (uint8_t)in[0].imm;
			p->sreg[p->nr_sreg++].off = a->offset;
			continue;
		}
		if (a->nr_insns != 2 || in[1].op != UTRACE__POP_DEREF)
			return;
		if (in[0].op == UTRACE__POP_REG && in[0].imm >= 0 &&
		    in[0].imm < (int64_t)(sizeof(struct utrace_probe_regs) / 8))
			base = (int8_t)in[0].imm;
		else if (in[0].op == UTRACE__POP_ARG && in[0].imm >= 0 && in[0].imm < 6)
			base = (int8_t)sysv[in[0].imm];
		else if (in[0].op == UTRACE__POP_SYM || in[0].op == UTRACE__POP_FOFFS)
			base = -1;
		else
			return;
		p->sstr[p->nr_sstr].base = base;
		p->sstr[p->nr_sstr].counted = a->counted;
		p->sstr[p->nr_sstr].len_reg = a->len_reg;
		p->sstr[p->nr_sstr].off = a->offset;
		p->sstr[p->nr_sstr++].add = (base < 0 ? in[0].imm : 0) + in[1].imm;
	}
	/* (hit_str()'s reads do not install the fault handlers) */
	utrace__probe_read_prepare();
	p->str_size = d->size;
	p->nr_str = (int)d->nr_args;
}

/* Plan on_hit() for p's definition. */
static void plan_fast(struct uprobe *p)
{
	const struct utrace__probe_def *d = p->def;

	plan_str(p);

	/* the size limit of utrace__reserve_inline() */
	p->fast_size = !d->nr_strings && d->size <= 112 ? (unsigned int)d->size : UINT_MAX;
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
	p->shape = 0;
	if (p->nr_fast < 1 || p->nr_fast > 4 || (p->fast[0].bytes != 4 && p->fast[0].bytes != 8))
		return;
	for (int i = 0; i < p->nr_fast; i++)
		if (p->fast[i].bytes != p->fast[0].bytes ||
		    p->fast[i].off != FAST_OFF0 + i * p->fast[0].bytes)
			return;
	p->shape = SHAPE(p->nr_fast, p->fast[0].bytes);
}

#ifdef UTRACE__INLINE_WRITER
/* on_hit()'s other cases, through the library, as the generated
 * probe's utrace_event_rec_<call>: the stash of a signal handler copied in
 * first (utrace__slow_enter()). */
static __attribute__((noinline)) void record_slow(void *data, struct uprobe *p,
						  const struct utrace_probe_regs *regs)
{
	utrace__slow_enter();
	record(data, p, regs);
}

/* on_hit() for a definition that needs its fetch program (out of
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

/* Make the record just reserved by utrace__reserve_inline(f, ev, from)
 * @to bytes long (its header's word count, the thread's tail and the
 * commit word: the record is the page's last, not committed). */
static inline __attribute__((always_inline)) void
shrink_inline(struct utrace__fast *f, uint8_t *rec, unsigned int from, unsigned int to)
{
	uint32_t w, rb = (to + 3) & ~3u, cut = ((from + 3) & ~3u) - rb;

	memcpy(&w, rec - 4, 4);
	w = (w & ~31u) | rb / 4;
	memcpy(rec - 4, &w, 4);
	f->t->tail -= cut;
	f->commit -= cut;
}

/* Take back the record just reserved by utrace__reserve_inline(), as
 * the writer's discard() does (its tail, the time of its header), and
 * leave the event (record_slow() then copies in what a signal handler
 * stashed meanwhile). */
static inline __attribute__((always_inline)) void
unreserve_inline(struct utrace__fast *f, uint8_t *rec)
{
	struct utrace_tp_thread_v1 *t = f->t;
	uint32_t w;

	memcpy(&w, rec - 4, 4);
	t->tail = (uint32_t)(rec - 4 - f->page->data);
	t->last_ts -= w >> 5;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nest = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * on_hit() for a definition with strings (plan_str()): the inline
 * writer's largest record reserved, the arguments and the strings
 * written into it in place, then the record cut to its size and
 * committed.  A record the inline writer cannot take (the usual case's
 * conditions; a fixed part or a string that does not fit in its 112
 * bytes) goes to record() as before.
 */
static void hit_str(void *data, struct uprobe *p,
					      const struct utrace_probe_regs *regs)
{
	const uint64_t *r = (const uint64_t *)regs;
	struct utrace__fast f;
	unsigned int faults = 0, end = p->str_size;
	uint8_t *rec;

	rec = utrace__reserve_inline(&f, data, STR_REC_MAX);
	if (__builtin_expect(!rec, 0))
		goto slow;
	memcpy(rec + 8, &regs->ip, 8);
	for (int i = 0; i < p->nr_sreg; i++)
		memcpy(rec + p->sreg[i].off, &r[p->sreg[i].reg], 8);   /* little-endian */
	for (int i = 0; i < p->nr_sstr; i++) {
		uint64_t v;
		long n = -EFAULT;
		unsigned int room = STR_REC_MAX - end;

		v = (p->sstr[i].base < 0 ? p->env.bias : r[p->sstr[i].base]) +
		    (uint64_t)p->sstr[i].add;
		if (p->sstr[i].counted) {
			uint64_t len = r[p->sstr[i].len_reg];

			if (len > UTRACE_PROBE_STRING_MAX - 1)
				len = UTRACE_PROBE_STRING_MAX - 1;
			if (len + 1 > room)
				goto undo;
			if (utrace__probe_read_inline(rec + end, (uintptr_t)v, len) == len) {
				rec[end + len] = 0;
				n = (long)len + 1;
			}
		} else if (room) {
			n = utrace__probe_read_str_inline((char *)rec + end, (uintptr_t)v, room);
			if (n == (long)room)
				goto undo;   /* perhaps cut by this room */
		}
		uint32_t loc = end;

		if (n <= 0)
			faults++;
		else
			loc |= (uint32_t)n << 16;
		memcpy(rec + p->sstr[i].off, &loc, 4);
		if (n > 0)
			end += (unsigned int)n;
	}
	shrink_inline(&f, rec, STR_REC_MAX, end);
	utrace__commit_event_inline(&f, data, rec, end);
	if (faults)
		__atomic_fetch_add(&p->misses, faults, __ATOMIC_RELAXED);
	return;
undo:
	unreserve_inline(&f, rec);
slow:
	record_slow(data, p, regs);
}
#endif

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

/*
 * As the generated __traceiter_<name>() (stages/stage0), with the
 * recording probe's usual case in it (one function: the computed goto
 * below keeps a function from being inlined), as the generated probe of
 * a static event (stage 6: utrace_event_raw_event_<call>): the record
 * reserved and committed by the inlined writer (tracepoint.h), the %REG arguments
 * stored as they are.  Called only while record() is the event's only
 * probe (tracepoint.c: set_fast()); anything else (tracing_on, instances,
 * triggers, nesting and signals, a new page, a print or record hook:
 * UTRACE_TP_SLOW) goes to record() through the library, as the generated
 * probe does; the event's filter runs on the record in place
 * (utrace__commit_event_inline()).
 */
static void on_hit(void *arg, const struct utrace_probe_regs *regs)
{
	struct uprobe *p = arg;
	/* (the builtin is record(), set at registration) */
	void *data = __atomic_load_n(&p->ue->tp.fast_data, __ATOMIC_ACQUIRE);

	/* hits are the engine's (its handler calls), no locked add here */
	if (!data) {
		on_hit_all(p, regs);
		return;
	}
#ifdef UTRACE__INLINE_WRITER
	const uint64_t *r = (const uint64_t *)regs;
	struct utrace__fast f;
	uint8_t *rec;
	int n;

	rec = utrace__reserve_inline(&f, data, p->fast_size);
	if (__builtin_expect(!rec, 0))
		goto slow;
	/* (__probe_ip: fetch_inline() stores it again) */
	memcpy(rec + 8, &regs->ip, 8);
/* argument i of a shape, stored */
#define ST(i, T) do {								\
		T x_ = (T)r[p->fast[i].reg];					\
										\
		memcpy(rec + FAST_OFF0 + (i) * sizeof(T), &x_, sizeof(T));	\
	} while (0)
	/* straight stores for the usual shapes: no widths nor offsets
	 * read at the hit (a computed goto on the shape: three
	 * instructions, where a switch's jump table takes nine) */
	static const void *const writers[] = {
		&&loop, &&w1_4, &&w2_4, &&w3_4, &&w4_4, &&w1_8, &&w2_8, &&w3_8, &&w4_8,
	};
	_Static_assert(SHAPE(4, 8) == 8 && SHAPE(1, 8) == 5, "writers[]");
	goto *writers[p->shape];
w1_4:	ST(0, uint32_t); goto done;
w2_4:	ST(0, uint32_t); ST(1, uint32_t); goto done;
w3_4:	ST(0, uint32_t); ST(1, uint32_t); ST(2, uint32_t); goto done;
w4_4:	ST(0, uint32_t); ST(1, uint32_t); ST(2, uint32_t); ST(3, uint32_t); goto done;
w1_8:	ST(0, uint64_t); goto done;
w2_8:	ST(0, uint64_t); ST(1, uint64_t); goto done;
w3_8:	ST(0, uint64_t); ST(1, uint64_t); ST(2, uint64_t); goto done;
w4_8:	ST(0, uint64_t); ST(1, uint64_t); ST(2, uint64_t); ST(3, uint64_t); goto done;
loop:
	n = p->nr_fast;     /* (in a register: the stores may alias p) */
	if (__builtin_expect(n < 0, 0)) {
		fetch_inline(data, p, regs, rec, f.t, f.page, f.commit);
		return;
	}
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
done:
#undef ST
	utrace__commit_event_inline(&f, data, rec, p->fast_size);
	return;
slow:
	/* (a tail call: nothing kept across it) */
	if (p->nr_str) {
		hit_str(data, p, regs);
		return;
	}
	record_slow(data, p, regs);
	return;
#endif
	record(data, p, regs);
}

/* The engine's handler for a definition with strings (plan_str()): as
 * on_hit(), without its reserve of the usual size. */
static void on_hit_str(void *arg, const struct utrace_probe_regs *regs)
{
	struct uprobe *p = arg;
	void *data = __atomic_load_n(&p->ue->tp.fast_data, __ATOMIC_ACQUIRE);

	if (!data) {
		on_hit_all(p, regs);
		return;
	}
#ifdef UTRACE__INLINE_WRITER
	hit_str(data, p, regs);
#else
	record(data, p, regs);
#endif
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
	free(p->bp_note);
	free(p->bp_shown);
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
static int bind(struct uprobe *p, struct obj_query *q, struct utrace__probe_error *err);

static int prepare(struct uprobe *p, struct utrace__probe_error *err)
{
	struct utrace__probe_def *d = p->def;
	struct obj_query q;

	plan_fast(p);
	if (find_object(d->path, false, &q) < 0) {
		if (!strchr(d->path, '/') || !d->resolved)
			return place_error(err, ENOENT, "File is not loaded in this process");
		/* pending, as the kernel's uprobes on a file nobody maps yet:
		 * bound and placed when it is loaded (on_rtld()) */
		free(p->shown_path);
		p->shown_path = strdup(d->path);
		return p->shown_path ? 0 : place_error(err, ENOMEM, "Out of memory");
	}
	return bind(p, &q, err);
}

/* Loaded at start (before libutrace's constructor): never unmapped. */
static uint64_t start_objs[256];
static int nr_start_objs = -1;

static int snap_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (nr_start_objs < (int)(sizeof(start_objs) / sizeof(start_objs[0])))
		start_objs[nr_start_objs++] = info->dlpi_addr;
	return 0;
}

void utrace__uprobes_snapshot(void)
{
	nr_start_objs = 0;
	dl_iterate_phdr(snap_cb, NULL);
}

static bool at_start(const struct obj_query *q)
{
	for (int i = 0; i < nr_start_objs; i++)
		if (start_objs[i] == q->bias)
			return true;
	return false;
}

/* Bound to q: the end of bind(). */
static int bound(struct uprobe *p, struct obj_query *q, size_t n,
		 struct utrace__probe_error *err)
{
	free(p->sites);
	p->sites = calloc(n, sizeof(*p->sites));
	if (!p->sites)
		return place_error(err, ENOMEM, "Out of memory");
	p->nr_addrs = n;
	p->unloadable = !at_start(q);
	p->bound = true;
	return 0;
}

/*
 * An IFUNC's implementation that has no symbol (libc stripped, its -dbg
 * symbols not installed): its size and so its branches are unknown, so
 * only its entry, as a breakpoint (the function is taken as its first
 * instruction: a jump would not fit).
 */
static int bind_nameless(struct uprobe *p, struct obj_query *q, uint64_t vaddr,
			 struct utrace__probe_error *err)
{
	struct utrace__probe_def *d = p->def;
	uint32_t offs[2];
	uint64_t foff;
	uint8_t *code;
	size_t n = 0;
	bool ok;

	if (d->kind == 'r' || d->symoff)
		return place_error(err, EINVAL, "%s is an IFUNC whose implementation has no symbol: "
				   "only its entry can be probed (install the library's debug "
				   "symbols)", d->symbol);
	foff = vaddr_to_off(q, vaddr, &ok);
	code = ok ? file_bytes(q->path, foff, 16) : NULL;
	if (!code)
		return place_error(err, EINVAL, "Cannot read the function from its file");
	utrace__probe_decode_boundaries(code, 16, q->bias + vaddr, offs, 2, &n);
	free(code);
	if (n < 2)
		return place_error(err, EINVAL, "Cannot decode %s's implementation", d->symbol);
	snprintf(p->fname, sizeof(p->fname), "%s's implementation (no symbol)", d->symbol);
	p->func_len = offs[1];
	p->env.func = q->bias + vaddr;
	p->addrs[0] = q->bias + vaddr;
	p->sema = NULL;
	return bound(p, q, 1, err);
}

/* The rest of prepare(), in the loaded object q: addresses, function,
 * the decoder's check.  Again at each load of a pending one. */
static int bind(struct uprobe *p, struct obj_query *q, struct utrace__probe_error *err)
{
	struct utrace__probe_def *d = p->def;
	char why[UTRACE_PROBE_WHY_MAX] = "", msg[sizeof(err->msg)];
	const struct utrace__sym *fs, *s;
	struct utrace__symtab t;
	uint64_t vaddr, func, addr, foff;
	uint8_t *code;
	size_t n = 0;
	bool ok, named;
	int r;

	free(p->shown_path);
	p->shown_path = strdup(d->path[0] ? d->path : q->path);
	if (!d->path[0]) {
		/* the program itself: uprobe_events names its file */
		char *path = strdup(q->path);

		if (!path)
			return place_error(err, ENOMEM, "Out of memory");
		free(d->path);
		d->path = path;
	}
	p->env.bias = q->bias;
	if (!d->resolved) {
		uint64_t va, off, size;

		if (res_symbol(NULL, d->path, d->symbol, &va, &off, &size) < 0)
			return place_error(err, ENOENT, "Failed to find the given symbol");
		d->offset = off + (uint64_t)d->symoff;
		d->resolved = true;
	}
	vaddr = off_to_vaddr(q, d->offset, &ok);
	if (!ok)
		return place_error(err, EINVAL, "Offset is not in a loaded segment");
	if (d->refctr) {
		uint64_t sv = off_to_vaddr(q, d->refctr, &ok);

		/* as the kernel's valid_ref_ctr_vma(): in a writable mapping
		 * of the file; 16 bits, aligned */
		if (!ok || (sv & 1) || !writable(q, sv))
			return place_error(err, EINVAL, "Reference counter offset is not in a "
					   "writable segment");
		p->sema = (uint16_t *)(uintptr_t)(q->bias + sv);
	}
	if (load_symtab(q->path, &t) < 0)
		return place_error(err, EINVAL, "No symbol table to find the function");
	fs = utrace__symtab_find(&t, vaddr);
	s = d->symbol ? utrace__symtab_by_name(&t, d->symbol) : NULL;
	p->ifunc[0] = '\0';
	if (s && s->ifunc)
		snprintf(p->ifunc, sizeof(p->ifunc), "%s", d->symbol);
	if ((!fs || !fs->size) && p->ifunc[0]) {
		symtab_done(&t);
		return bind_nameless(p, q, vaddr, err);
	}
	/* SYMBOL+OFFS is bounded by SYMBOL: past its end the site is in
	 * the next function, or in none (utrace__probe_site_rules()) */
	if (s && s->size && !p->ifunc[0])
		fs = s;
	if (!fs || !fs->size) {
		symtab_done(&t);
		utrace__probe_site_rules(d->kind, NULL, 0, "", NULL, 0, 0, 0, msg, sizeof(msg));
		return place_error(err, EINVAL, "%s", msg);
	}
	named = s && fs == s;
	func = q->bias + fs->addr;
	addr = q->bias + vaddr;
	foff = vaddr_to_off(q, fs->addr, &ok);
	/* the engine's reasons start "+0xOFF ...": the function's name first */
	snprintf(p->fname, sizeof(p->fname), "%s",
		 fs->name < t.strings_len ? t.strings + fs->name : "?");
	p->func_len = fs->size;
	symtab_done(&t);
	p->env.func = func;
	/* decoded from the file: in memory, another probe's int3 or jump
	 * may be there already */
	code = ok ? file_bytes(q->path, foff, p->func_len) : NULL;
	if (!code)
		return place_error(err, EINVAL, "Cannot read the function from its file");
	/* the one check, as utrace probe and record --probe make it on files */
	r = utrace__probe_site_rules(d->kind, named ? d->symbol : NULL, (uint64_t)d->symoff,
				     p->fname, code, func, p->func_len, addr, msg, sizeof(msg));
	if (r < 0) {
		free(code);
		return place_error(err, -r, "%s", msg);
	}
	if (d->kind == 'r') {
		r = utrace__probe_decode_exits(code, p->func_len, func, p->addrs, MAX_EXITS, &n, why);
		free(code);
		if (r < 0)
			return place_error(err, -r, "Cannot probe: %s%s", p->fname, why);
		if (n > MAX_EXITS)
			return place_error(err, E2BIG, "Too many exits (%zu)", n);
		if (!n)
			return place_error(err, EINVAL, "The function has no exit to probe");
	} else {
		free(code);
		p->addrs[0] = addr;
		n = 1;
	}
	return bound(p, q, n, err);
}

/* Place a probe's sites (the event is being switched on); site_lock held. */
static void attached(struct uprobe *p, const char *why);

static int attach_sites(struct uprobe *p)
{
	char why[UTRACE_PROBE_WHY_MAX] = "";
	int r;

	if (!p->bound)
		return 0;   /* pending: its file is not loaded */
	for (size_t i = p->nr_sites; i < p->nr_addrs; i++) {
		r = utrace__probe_attach((uintptr_t)p->addrs[i], (uintptr_t)p->env.func, p->func_len,
					 p->nr_str ? on_hit_str : on_hit, p, &p->sites[i], why);
		if (r < 0) {
			utrace__warn("cannot probe %s: %s%s", p->def->event, p->fname, why);
			detach_all(p);
			return r;
		}
		p->nr_sites = i + 1;
	}
	attached(p, why);
	return 0;
}

/* After the sites of p are placed: what the recorder is told, the
 * semaphore.  @why: the engine's last word on them. */
static void attached(struct uprobe *p, const char *why)
{
	if (!p->placed_once) {
		/* where the engine could not put a jump: a trap a hit, what
		 * the recorder tells the user (the engine's own result; its
		 * reason when the site allows nothing else) */
		bool why_bp = p->nr_sites == 1 && !strncmp(why, "a breakpoint", 12);
		size_t bps = 0, first = 0;
		char *n = NULL;

		for (size_t i = 0; i < p->nr_sites; i++)
			if (!utrace__probe_is_jump(p->sites[i]) && !bps++)
				first = i;
		p->placed_once = true;
		if (bps) {
			char at[UTRACE_PROBE_WHY_MAX + 160];
			int k;

			snprintf(at, sizeof(at), "%s+0x%" PRIx64 "%s%s%s", p->fname,
				 p->addrs[first] - p->env.func, why_bp ? " (" : "",
				 !why_bp ? "" : strstr(why, ": ") ? strstr(why, ": ") + 2 : why,
				 why_bp ? ")" : "");
			k = p->nr_sites > 1 ? asprintf(&n, "%zu of %zu exits, the first at %s", bps,
						       p->nr_sites, at) : asprintf(&n, "%s", at);
			p->bp_note = k >= 0 ? n : NULL;
			p->bp_shown = k >= 0 ? strdup(n) : NULL;
		}
	}
	if (p->sema && !p->sema_held) {
		__atomic_fetch_add(p->sema, 1, __ATOMIC_RELAXED);
		p->sema_held = true;
	}
}

/*
 * Every site of the event's definitions in one round of patching (the
 * engine's utrace__probe_attach_many(): a glob's thousands of functions
 * are placed as fast as the jump labels).  On a refusal, what was placed
 * stays for the caller to take off.
 */
static int attach_event(struct uevent *ue)
{
	struct utrace__probe_req *req;
	size_t n = 0, k = 0;
	bool warned = false;
	int r;

	for (struct uprobe *p = ue->probes; p; p = p->next)
		if (p->bound)
			n += p->nr_addrs - p->nr_sites;
	if (n < 2 || !(req = calloc(n, sizeof(*req)))) {
		r = 0;
		for (struct uprobe *p = ue->probes; p && !r; p = p->next)
			r = attach_sites(p);
		return r;
	}
	for (struct uprobe *p = ue->probes; p; p = p->next) {
		if (!p->bound)
			continue;
		for (size_t i = p->nr_sites; i < p->nr_addrs; i++)
			req[k++] = (struct utrace__probe_req){
				.addr = (uintptr_t)p->addrs[i], .func = (uintptr_t)p->env.func,
				.func_len = p->func_len, .fn = p->nr_str ? on_hit_str : on_hit,
				.data = p };
	}
	r = utrace__probe_attach_many(req, n);
	k = 0;
	for (struct uprobe *p = ue->probes; p; p = p->next) {
		const char *why = "";

		if (!p->bound)
			continue;
		for (size_t i = p->nr_sites; i < p->nr_addrs; i++, k++) {
			p->sites[i] = req[k].site;
			why = req[k].why;
			if (req[k].ret && !warned) {
				utrace__warn("cannot probe %s: %s%s", p->def->event, p->fname, why);
				warned = true;
			}
		}
		p->nr_sites = p->nr_addrs;
		if (!r)
			attached(p, why);
	}
	free(req);
	return r;
}

/* Every site of the event's definitions off, in one round. */
static void detach_event(struct uevent *ue)
{
	struct utrace__probe_site **all;
	size_t n = 0, k = 0;

	for (struct uprobe *p = ue->probes; p; p = p->next)
		n += p->nr_sites;
	if (n < 2 || !(all = calloc(n, sizeof(*all)))) {
		for (struct uprobe *p = ue->probes; p; p = p->next)
			detach_all(p);
		return;
	}
	for (struct uprobe *p = ue->probes; p; p = p->next) {
		for (size_t i = 0; i < p->nr_sites; i++) {
			if (!p->sites[i])
				continue;
			/* counted before, as detach_all() */
			__atomic_fetch_add(&p->hits, utrace__probe_hits(p->sites[i]),
					   __ATOMIC_RELAXED);
			__atomic_fetch_add(&p->misses, utrace__probe_misses(p->sites[i]),
					   __ATOMIC_RELAXED);
			all[k++] = p->sites[i];
			p->sites[i] = NULL;
		}
		p->nr_sites = 0;
		detach_all(p);		/* (the semaphore) */
	}
	utrace__probe_detach_many(all, k);
	free(all);
}

/*
 * The tracepoint's regfunc/unregfunc run when its first probe comes and
 * its last goes (the event switched on or off anywhere), under the
 * registry's locks: they take only site_lock.  They have no argument: the
 * registry tells which tracepoint they run for (utrace__tp_calling()), so
 * one pair serves every event (there were 256 pairs, 256 events at most).
 */
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;
/* the events whose probes may be placed (the dynamic linker's hook walks
 * them under site_lock alone) */
static struct uevent *placeable;
static __thread bool in_site_lock;

static void site_lock_take(void)
{
	pthread_mutex_lock(&site_lock);
	in_site_lock = true;
}

static void site_lock_drop(void)
{
	in_site_lock = false;
	pthread_mutex_unlock(&site_lock);
}

static void unlist(struct uevent *ue);

/* The event of the tracepoint whose regfunc/unregfunc runs (site_lock
 * held): NULL once it is no longer placeable. */
static struct uevent *calling_event(void)
{
	struct utrace_tracepoint *tp = utrace__tp_calling();
	struct uevent *ue;

	if (!tp)
		return NULL;
	ue = (struct uevent *)(void *)((char *)tp - offsetof(struct uevent, tp));
	return ue->listed ? ue : NULL;
}

static int slot_on(void)
{
	void *q = utrace__probe_quiet_enter();
	char *note[8], *line[8];
	size_t nr_notes = 0;
	struct uevent *ue;
	int r = 0;

	site_lock_take();
	ue = calling_event();
	if (ue)
		r = attach_event(ue);
	if (r)
		detach_event(ue);
	if (ue) {
		ue->on = !r;
		/* the breakpoints placed, sent once site_lock is dropped */
		for (struct uprobe *p = ue->probes; p && nr_notes < 8; p = p->next)
			if (p->bp_note && p->canon && (line[nr_notes] = strdup(p->canon))) {
				note[nr_notes++] = p->bp_note;
				p->bp_note = NULL;
			}
	}
	site_lock_drop();
	/* (the registry's lock is held: the tracepoint's regfunc) */
	for (size_t i = 0; i < nr_notes; i++) {
		utrace__record_probe_note(UTRACE_PROBE_BREAKPOINT, line[i], note[i]);
		free(line[i]);
		free(note[i]);
	}
	utrace__probe_quiet_leave(q);
	return r;
}

static void slot_off(void)
{
	void *q = utrace__probe_quiet_enter();
	struct uevent *ue;

	site_lock_take();
	ue = calling_event();
	if (ue) {
		ue->on = false;
		detach_event(ue);
	}
	site_lock_drop();
	utrace__probe_quiet_leave(q);
}

/* ---- libraries loaded and unloaded: the dynamic linker's r_brk ---- */

/*
 * Debuggers learn of dlopen() and dlclose() from the dynamic linker's
 * breakpoint function (_r_debug.r_brk, _dl_debug_state()), which it calls
 * with r_state RT_ADD before it maps objects, RT_DELETE before it unmaps
 * any (their destructors have run), RT_CONSISTENT after either.  The
 * engine probes it like any function (SIMD saved: this handler mallocs
 * and reads files), so every way of loading is seen (dlopen, dlmopen,
 * a failed dlopen undoing its maps), not only calls through our symbols.
 *
 * RT_CONSISTENT: the new objects are mapped, not yet relocated, and none
 * of their code has run: pending definitions are bound and placed, so the
 * first call is counted.  RT_DELETE: the objects that will go cannot be
 * told from the others, so every probe in an object loaded after start
 * is taken off (the original bytes written back while the text is still
 * mapped; the engine never frees a trampoline) and placed again at the
 * next RT_CONSISTENT if its object is still there.  Hits in the other
 * libraries between the two are lost; the unloaded one's are kept.
 *
 * The thread runs inside the dynamic linker, holding its lock: this takes
 * only site_lock, under which nothing takes the loader's lock.
 */
static struct utrace__probe_site *rtld_site;
static bool rtld_tried;

/* RT_DELETE if a namespace is unloading, RT_ADD if one is loading. */
static int rtld_state(void)
{
	const struct r_debug_extended *r = (const struct r_debug_extended *)&_r_debug;
	int st = RT_CONSISTENT;

	for (; r; r = r->base.r_version >= 2 ? r->r_next : NULL) {
		int s = __atomic_load_n(&r->base.r_state, __ATOMIC_RELAXED);

		if (s == RT_DELETE)
			return RT_DELETE;
		if (s == RT_ADD)
			st = RT_ADD;
	}
	return st;
}

/* Take a bound probe off: its object may be unmapped next. */
static void unbind(struct uprobe *p)
{
	detach_all(p);
	p->bound = false;
	p->nr_addrs = 0;
	p->sema = NULL;
}

/* Bind a pending probe whose file is now loaded (on_rtld() places it). */
static void rebind(struct uprobe *p)
{
	struct utrace__probe_error err = { 0 };
	struct obj_query q;

	if (find_object(p->def->path, false, &q) < 0)
		return;
	snprintf(err.command, sizeof(err.command), "%s", p->canon ? p->canon : "");
	if (bind(p, &q, &err) < 0) {
		utrace__warn("probe %s in %s: %s", p->def->event, p->def->path, err.msg);
		p->bound = false;
		p->nr_addrs = 0;
		return;
	}
	if (p->ifunc[0] && !strcmp(p->ifunc, p->fname))
		utrace__warn("probe %s: %s is an IFUNC: its resolver is probed (the library "
			     "was not loaded when the probe was defined)", p->def->event, p->ifunc);
}

static void on_rtld(void *data, const struct utrace_probe_regs *regs)
{
	int st = rtld_state();
	void *q;

	(void)data;
	(void)regs;
	/* (a load from our own code, under site_lock: seen at the next) */
	if (st == RT_ADD || in_site_lock)
		return;
	/* (the hook is never taken off: no detach waits for this hit) */
	q = utrace__probe_quiet_enter();
	site_lock_take();
	for (struct uevent *ue = placeable; ue; ue = ue->slot_next) {
		bool rebound = false;

		for (struct uprobe *p = ue->probes; p; p = p->next) {
			if (st == RT_DELETE && p->bound && p->unloadable) {
				unbind(p);
			} else if (st == RT_CONSISTENT && !p->bound) {
				rebind(p);
				rebound |= p->bound;
			}
		}
		/* the event's new sites in one round (a glob's thousands) */
		if (rebound && ue->on)
			attach_event(ue);
	}
	site_lock_drop();
	utrace__probe_quiet_leave(q);
}

/* Probe r_brk, once (lock held). */
static void rtld_hook(void)
{
	char why[UTRACE_PROBE_WHY_MAX] = "";
	uintptr_t brk = (uintptr_t)_r_debug.r_brk;
	struct utrace__symtab t;
	size_t len = 1;
	int r;

	if (rtld_tried)
		return;
	rtld_tried = true;
	if (!brk) {
		utrace__warn("no r_brk: probes in libraries loaded later are not placed");
		return;
	}
	{
		struct obj_query q;

		/* (not dladdr(): it takes the loader's lock) */
		if (find_object_at(brk, &q) == 0 && load_symtab(q.path, &t) == 0) {
			const struct utrace__sym *s = utrace__symtab_find(&t, brk - q.bias);

			if (s && s->size && s->addr == brk - q.bias)
				len = s->size;
			symtab_done(&t);
		}
	}
	r = utrace__probe_attach_flags(brk, brk, len, UTRACE_PROBE_SAVE_SIMD, on_rtld, NULL,
				       &rtld_site, why);
	if (r < 0)
		utrace__warn("cannot probe r_brk (%s): probes in libraries loaded later are "
			     "not placed", why);
}


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
	ue->last = p;
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

/* The events by name (a glob adds thousands: find_event() walked them
 * all for each), newest first in a chain; under lock. */
#define BY_NAME 4096
static struct uevent *by_name[BY_NAME];

static size_t name_slot(const char *event)
{
	uint32_t h = 2166136261u;

	for (; *event; event++)
		h = (h ^ (uint8_t)*event) * 16777619u;
	return h & (BY_NAME - 1);
}

static struct uevent *find_event(const char *group, const char *event)
{
	for (struct uevent *ue = by_name[name_slot(event)]; ue; ue = ue->hnext)
		if ((!group[0] || !strcmp(ue->cls.system, group)) && !strcmp(ue->ev.name, event))
			return ue;
	return NULL;
}

/* A probe at the same place of the same file with another reference
 * counter (the kernel refuses it, as the counter is the place's). */
static unsigned int nr_refctr_defs;   /* ever added with a (REFCTR) */

static bool refctr_mismatch(const struct utrace__probe_def *d)
{
	/* (none has one: no walk over every definition, a glob adds
	 * thousands) */
	if (d->refctr)
		nr_refctr_defs++;
	else if (!nr_refctr_defs)
		return false;
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
	/* a file loaded later, or one a dlclose() may unmap: follow the
	 * dynamic linker from now on */
	if (!r && (!p->bound || p->unloadable))
		rtld_hook();
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
		p->ue = ue;
		site_lock_take();
		/* an event that is on: the new probe is placed now */
		r = __atomic_load_n(&ue->tp.funcs, __ATOMIC_ACQUIRE) ? attach_sites(p) : 0;
		if (!r) {
			ue->last->next = p;
			ue->last = p;
		}
		site_lock_drop();
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
	site_lock_take();
	ue->slot_next = placeable;
	placeable = ue;
	ue->listed = true;
	site_lock_drop();
	ue->tp.regfunc = slot_on;
	ue->tp.unregfunc = slot_off;
	register_event(ue);
	if (!ue->registered) {
		unlist(ue);
		free_uevent(ue);
		return place_error(err, ENOMEM, "The event could not be registered");
	}
	ue->next = uevents;
	__atomic_store_n(&uevents, ue, __ATOMIC_RELEASE);
	ue->hnext = by_name[name_slot(ue->ev.name)];
	by_name[name_slot(ue->ev.name)] = ue;
	return 0;
}

/* Out of 'placeable' (no more placed by the hooks). */
static void unlist(struct uevent *ue)
{
	site_lock_take();
	for (struct uevent **pp = &placeable; *pp; pp = &(*pp)->slot_next)
		if (*pp == ue) {
			*pp = ue->slot_next;
			break;
		}
	ue->listed = false;
	site_lock_drop();
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
	for (pp = &by_name[name_slot(ue->ev.name)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == ue) {
			*pp = ue->hnext;
			break;
		}
	}
	unlist(ue);
	site_lock_take();
	for (struct uprobe *p = ue->probes; p; p = p->next)
		detach_all(p);
	site_lock_drop();
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

static int write_one(const char *line, struct utrace__probe_error *err);

/*
 * A definition whose SYMBOL is a glob: one definition for each matching
 * function (utrace__probe_expand()), all in the named event, or each in
 * its own event named after its function.  A function that cannot be
 * probed is passed over (said once, with the first reason); the write
 * fails only when none could be added, with the first refusal.
 */
static int write_glob(const char *line, struct utrace__probe_error *err, size_t *nadded,
		      size_t *nmatched)
{
	struct utrace__probe_error e1;
	char **lines, first[160] = "";
	size_t n, added = 0, refused = 0;
	int r, r1 = 0;

	*nadded = *nmatched = 0;
	r = utrace__probe_expand(line, &resolver, &lines, &n, err);
	if (r)
		return r;
	*nmatched = n;
	for (size_t i = 0; i < n; i++) {
		r = write_one(lines[i], refused ? &e1 : err);
		if (!r) {
			added++;
			continue;
		}
		if (!refused++) {
			r1 = r;
			snprintf(first, sizeof(first), "%.60s: %.90s", lines[i] + strcspn(lines[i], " \t"),
				 err->msg[0] ? err->msg : strerror(-r));
		}
	}
	utrace__probe_lines_free(lines, n);
	*nadded = added;
	if (!added)
		return r1;
	memset(err, 0, sizeof(*err));
	if (refused)
		utrace__warn("probe '%s': %zu of %zu matching functions added, %zu refused (the first,%s)",
			     line, added, n, refused, first);
	return 0;
}

int utrace__uprobes_write(const char *line, struct utrace__probe_error *err)
{
	if (utrace__probe_is_glob(line)) {
		void *q = utrace__probe_quiet_enter();
		size_t added, matched;
		int r = write_glob(line, err, &added, &matched);

		utrace__probe_quiet_leave(q);
		return r;
	}
	return write_one(line, err);
}

static int write_one(const char *line, struct utrace__probe_error *err)
{
	struct utrace__probe_def *d;
	enum utrace__probe_cmd cmd;
	int r;

	void *q = utrace__probe_quiet_enter();

	r = utrace__probe_parse(line, &resolver, &cmd, &d, err);
	if (r) {
		utrace__probe_quiet_leave(q);
		return r;
	}
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
	utrace__probe_quiet_leave(q);
	return r;
}

int utrace__uprobes_clear(void)
{
	void *q = utrace__probe_quiet_enter();
	int r = 0;

	pthread_mutex_lock(&lock);
	for (struct uevent *ue = uevents; ue; ue = ue->next)
		if (event_busy(ue))
			r = -EBUSY;
	while (!r && uevents)
		remove_locked(uevents);
	pthread_mutex_unlock(&lock);
	utrace__probe_quiet_leave(q);
	return r;
}

void utrace__uprobes_quiet_thread(void)
{
	(void)utrace__probe_quiet_enter();
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

/* utrace probe -l -v: where a definition is, under its line. */
static void detail(FILE *f, const struct uprobe *p)
{
	size_t jumps = 0;

	if (!p->bound) {
		fprintf(f, "    # pending: %s is not loaded; placed when it is\n", p->def->path);
		return;
	}
	for (size_t i = 0; i < p->nr_sites; i++)
		jumps += utrace__probe_is_jump(p->sites[i]);
	fprintf(f, "    # at %s (0x%" PRIx64 ")", p->fname, p->addrs[0]);
	if (p->ifunc[0] && strcmp(p->ifunc, p->fname))
		fprintf(f, ", the implementation of the IFUNC %s this process uses", p->ifunc);
	else if (p->ifunc[0])
		fprintf(f, ", the IFUNC's resolver (not what runs)");
	if (p->nr_addrs > 1)
		fprintf(f, ", %zu exits", p->nr_addrs);
	if (p->nr_sites) {
		fprintf(f, "; placed: %zu jump%s, %zu breakpoint%s\n", jumps, jumps == 1 ? "" : "s",
			p->nr_sites - jumps, p->nr_sites - jumps == 1 ? "" : "s");
		if (jumps < p->nr_sites && p->bp_shown)
			fprintf(f, "    # breakpoint: %s\n", p->bp_shown);
	} else
		fprintf(f, "; not placed (the event is off)\n");
}

char *utrace__uprobes_text(enum utrace__uprobes_text_kind kind)
{
	bool profile = kind == UTRACE__UPROBES_PROFILE;

	struct uevent **v = NULL;
	char *text = NULL;
	size_t len = 0, n, jumps = 0, sites = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	pthread_mutex_lock(&lock);
	site_lock_take();
	n = collect(&v);
	for (size_t i = 0; i < n; i++) {
		for (struct uprobe *p = v[i]->probes; p; p = p->next) {
			for (size_t k = 0; k < p->nr_sites; k++)
				jumps += utrace__probe_is_jump(p->sites[k]);
			sites += p->nr_sites;
			if (!profile)
				fprintf(f, "%s\n", p->canon);
			if (kind == UTRACE__UPROBES_VERBOSE)
				detail(f, p);
			else if (profile)   /* the kernel's columns, then the misses: reads
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
	/* the placement rate (issue 30): the sites placed now */
	if (kind == UTRACE__UPROBES_VERBOSE && sites)
		fprintf(f, "# sites: %zu of %zu placed as jumps (%.1f %%)\n", jumps, sites,
			100.0 * (double)jumps / (double)sites);
	site_lock_drop();
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
	const char *v = utrace__getenv("UTRACE_PROBES");
	char *copy, *line, *save = NULL;

	if (!v || !*v)
		return;
	copy = strdup(v);
	if (!copy)
		return;
	/* definitions are separated by newlines or ';' */
	for (line = strtok_r(copy, "\n;", &save); line; line = strtok_r(NULL, "\n;", &save)) {
		struct utrace__probe_error err;
		size_t added = 0, matched = 0;
		bool glob = utrace__probe_is_glob(line);
		void *q = glob ? utrace__probe_quiet_enter() : NULL;
		int r = glob ? write_glob(line, &err, &added, &matched) :
			utrace__uprobes_write(line, &err);
		const char *m = err.msg[0] ? err.msg : strerror(-r);

		if (glob)
			utrace__probe_quiet_leave(q);
		if (!r && glob) {
			char t[96];

			snprintf(t, sizeof(t), "%zu of %zu", added, matched);
			utrace__record_probe_note(UTRACE_PROBE_MATCHED, line, t);
		}

		/* utrace record --probe says it, and fails */
		if (r && !utrace__record_probe_note(UTRACE_PROBE_REFUSED, line, m))
			utrace__warn("probe '%s': %s", line, m);
	}
	free(copy);
}
