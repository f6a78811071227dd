/* SPDX-License-Identifier: MIT */
/*
 * Export to trace.dat (utrace convert --format trace.dat): a utrace trace file as trace-cmd's
 * trace.dat, version 7 without compression, so that `trace-cmd report`
 * and KernelShark read it (docs/trace-dat-export.md says why v7 and what
 * is lost on the way).
 *
 * utrace keeps one stream of pages per thread, each page on one CPU;
 * trace.dat keeps one stream per CPU, each a run of kernel ring-buffer
 * pages in time order.  So every event is taken from the reader's merged
 * iterator (time order, CLOCK_MONOTONIC ns) and written again into the
 * page of its CPU:
 *
 *     page: u64 time_stamp | u64 commit (+ flags) | events ... | [u64 lost]
 *     event: u32 type_len:5 time_delta:27, [u32 length], record
 *
 * The first event of a page has delta 0 (the page's time stamp is its
 * time), a delta of 2^27 ns or more goes into a time extend before the
 * event, a delta of 2^59 ns or more starts a new page.  Event ids are
 * per process in utrace and per file in trace.dat: each distinct format
 * (system, name, text after the ID line) gets an id of its own, written
 * in its format's ID line and in the common_type of each copied record.
 * Lost events are marked the kernel's way: the next page of the CPU gets
 * RB_MISSED_EVENTS in its commit word, and, when the count is known and
 * fits, RB_MISSED_STORED with the count as a long after the data.
 *
 * The CPU streams must each be contiguous in the file, and their sizes
 * are only known once every event has been placed.  So the stream is
 * read twice with the same placing code: the first pass counts the pages
 * of each CPU (and collects the formats), the second writes each page at
 * its place with pwrite().  Memory stays at one page per CPU whatever
 * the size of the trace.
 *
 * File layout (all little-endian):
 *
 *     header: "\x17\x08\x44" "tracing" "7\0" endian long_size page_size
 *             "none\0" "\0" u64 options_offset
 *     sections (u16 id, u16 flags, u32 description, u64 size, data):
 *       strings, header_page/header_event, ftrace formats (none),
 *       event formats, kallsyms (the processes' symbols), printk formats (empty), cmdlines,
 *       buffer flyrecord (padding to a page boundary, then the CPU pages)
 *     options section: offsets of the sections above, trace_clock,
 *       CPU count, version, the BUFFER option with each CPU's pages, DONE
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utrace/reader.h>
#include <utrace/utrace.h>

#include "clock.h"
#include "export.h"
#include "formats.h"
#include "obuf.h"
#include "page.h"
#include "problems.h"
#include "rbpack.h"
#include "stacktab.h"

#define MAX_CPUS 8192                   /* the kernel's NR_CPUS limit */
#define MAX_ID 0xffff                   /* common_type is an unsigned short */

/* trace.dat v7 section and option ids */
enum {
	OPT_DONE = 0,
	OPT_BUFFER = 3,
	OPT_TRACECLOCK = 4,
	OPT_CPUCOUNT = 8,
	OPT_VERSION = 9,
	SEC_STRINGS = 15,
	SEC_HEADER_INFO = 16,
	SEC_FTRACE_EVENTS = 17,
	SEC_EVENT_FORMATS = 18,
	SEC_KALLSYMS = 19,
	SEC_PRINTK = 20,
	SEC_CMDLINES = 21,
};

/* The strings section: section descriptions, as trace-cmd names them. */
static const char strings[] =
	"options\0strings\0headers\0ftrace events\0events format\0kallsyms\0"
	"printk\0command lines\0buffer flyrecord \0";

/* The kernel's trace_clock file, with the export's clock selected. */
static const char *const trace_clock_names[] = {
	"local", "global", "counter", "uptime", "perf", "mono", "mono_raw", "boot", "tai",
	"x86-tsc",
};


/*
 * Events lost after the last event of their CPU have no next page to be
 * marked on: they go on a page of their own, its one event this one,
 * made up by the exporter (count 0: not known).
 */
static const char lost_body[] =
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned long long count;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"count=%llu\", REC->count\n";

/* What every utrace (and kernel) format says of common_type. */
static const char common_type_line[] =
	"field:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;";

/* One distinct format. */
struct dfmt {
	const char *system, *name, *body;
	uint16_t id;                     /* in trace.dat; 0: left out */
	char *own;                       /* body, when the export made it */
};

/*
 * record -g's stacks (ftrace:stack defines one, ftrace:stack_ref refers to
 * it) become the kernel's ftrace:user_stack records (struct
 * userstack_entry: tgid, caller[]), which trace-cmd prints by their print
 * fmt, a " => function+0xoff" line per frame.  The kernel's caller[] has 8
 * entries, padded with 0 (printed "=> 0x0"); here each depth has a
 * user_stack format of its own, caller[N] and N %pS, so that a stack of
 * any depth prints whole and without padding (the kernel's layout; its
 * print fmt has %ps, the name alone: the offset tells call sites apart,
 * as utrace script's func+0xoff/0xsize does).
 */
#define MAX_UFRAMES 256

struct cpu_out {
	struct utrace__rbpack pk;        /* its pages (pk.page: pass 2) */
	struct conv *cv;
	uint64_t nr_pages;               /* pass 1: counted; pass 2: written */
	uint64_t expect;                 /* pass 1's count, in pass 2 */
	uint64_t file_off;               /* of its first page (pass 2) */
	uint64_t lost_time;              /* of the last marker */
	uint32_t lost_pid;               /* its thread (or process) */
};

struct conv {
	struct utrace__tf *tf;
	const char *name, *out;
	int fd;
	bool writing;                    /* pass 2 */
	uint32_t page_size, data_size;
	struct cpu_out *cpu;
	uint32_t nr_cpus, cap_cpus;
	struct dfmt **all;
	size_t cap_fmt, nr_fmt;
	struct utrace__problems pr;      /* the first described, the others counted */
	uint64_t nr_events;
	struct dfmt *lost_fmt;           /* utrace:lost_events, when needed */
	int werr;                        /* errno of the first write error */
	struct utrace__vet *vet;          /* what utrace script would refuse */
	struct utrace__stacktab stacks;  /* record -g's definitions passed */
	struct dfmt *ustack[MAX_UFRAMES + 1];  /* user_stack of N frames */
	unsigned char urec[16 + 8 * MAX_UFRAMES];
};

/* --- little-endian output --- */

static void le(void *to, uint64_t v, int n)
{
	unsigned char *p = to;
	int i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void b_num(struct utrace__obuf *b, uint64_t v, int n)
{
	unsigned char t[8];

	le(t, v, n);
	utrace__ob_put(b, t, (size_t)n);
}

static void b_str(struct utrace__obuf *b, const char *s)
{
	utrace__ob_put(b, s, strlen(s) + 1);
}

static uint32_t desc(const char *s)
{
	const char *p;

	for (p = strings; *p; p += strlen(p) + 1)
		if (!strcmp(p, s))
			return (uint32_t)(p - strings);
	return 0;
}

/* A section header with its size still 0; returns where the size goes. */
static size_t sec_begin(struct utrace__obuf *b, uint16_t id, const char *description)
{
	size_t at;

	b_num(b, id, 2);
	b_num(b, 0, 2);                  /* flags: not compressed */
	b_num(b, desc(description), 4);
	at = b->len;
	b_num(b, 0, 8);
	return at;
}

static void sec_end(struct utrace__obuf *b, size_t at)
{
	if (!b->nomem)
		le(b->p + at, b->len - at - 8, 8);
}

/* --- messages --- */

static void problem(struct conv *cv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void problem(struct conv *cv, const char *fmt, ...)
{
	va_list ap;

	if (cv->writing)
		return;                  /* said in pass 1 */
	va_start(ap, fmt);
	utrace__vproblem(&cv->pr, fmt, ap);
	va_end(ap);
}

/* --- formats --- */

/* Room for one more format in cv->all. */
static bool dfmt_room(struct conv *cv)
{
	size_t cap = cv->cap_fmt ? cv->cap_fmt * 2 : 64;
	struct dfmt **na;

	if (cv->nr_fmt < cv->cap_fmt)
		return true;
	na = realloc(cv->all, cap * sizeof(*na));
	if (!na)
		return false;
	cv->all = na;
	cv->cap_fmt = cap;
	return true;
}

/*
 * trace-cmd takes the id after the first ftrace:user_stack for a blktrace
 * event of its own (trace-blk-hack.c, from the kernel's TRACE_BLK): the
 * event of that id would print as "blktrace".  So the id after each
 * user_stack is left unused (an entry without an id).  false: no memory.
 */
static bool after_user_stack(struct conv *cv, const struct dfmt *d)
{
	struct dfmt *gap;

	if (!d->id || strcmp(d->system, "ftrace") || strcmp(d->name, "user_stack"))
		return true;
	if (!dfmt_room(cv) || !(gap = calloc(1, sizeof(*gap))))
		return false;
	gap->system = gap->name = gap->body = "";
	cv->all[cv->nr_fmt++] = gap;
	return true;
}

/* The distinct format of 'f', made on first sight; NULL: out of memory. */
static struct dfmt *dfmt_get(struct conv *cv, struct utrace__tf_format *f)
{
	/* The vetter tells formats apart already (system, name and text,
	 * across processes): its slot for the format holds ours. */
	void **slot = utrace__vet_user(cv->vet, f);
	struct dfmt *d;

	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	if (!dfmt_room(cv))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->system = f->system;
	d->name = f->name;
	d->body = f->body;
	/* trace-cmd finds every event's type through common_type at offset
	 * 0, 2 bytes: a format that says otherwise would mislead it */
	if (!strstr(f->body, common_type_line))
		problem(cv, "'%s': record at offset %llu: format of '%s:%s' has no "
			"'common_type' of 2 bytes at offset 0: its events are left out",
			cv->name, (unsigned long long)f->offset, f->system, f->name);
	else if (cv->nr_fmt >= MAX_ID)
		problem(cv, "'%s': record at offset %llu: more than %u distinct "
			"formats: the events of '%s:%s' are left out", cv->name,
			(unsigned long long)f->offset, MAX_ID, f->system, f->name);
	else
		d->id = (uint16_t)(cv->nr_fmt + 1);
	if (d->id) {
		/* A format libtraceevent cannot use (that utrace script
		 * refuses) would make trace-cmd fail or crash: left out. */
		char why[512];
		int ok = utrace__vet_format(cv->vet, f, why, sizeof(why));

		if (ok < 0) {
			free(d);
			return NULL;
		}
		if (!ok) {
			problem(cv, "%s", why);
			d->id = 0;
		}
	}
	cv->all[cv->nr_fmt++] = d;
	*slot = d;
	return after_user_stack(cv, d) ? d : NULL;
}

/* The user_stack format of n frames (1..MAX_UFRAMES); NULL: no memory. */
static struct dfmt *ustack_fmt(struct conv *cv, uint32_t n)
{
	struct utrace__obuf b = { 0 };
	struct dfmt *d;
	uint32_t i;

	if (cv->ustack[n])
		return cv->ustack[n];
	if (!dfmt_room(cv))
		return NULL;
	utrace__ob_printf(&b, "format:\n"
			  "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
			  "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
			  "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
			  "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
			  "\n"
			  "\tfield:unsigned int tgid;\toffset:8;\tsize:4;\tsigned:0;\n"
			  "\tfield:unsigned long caller[%u];\toffset:16;\tsize:%u;\tsigned:0;\n"
			  "\n"
			  "print fmt: \"", n, 8 * n);
	for (i = 0; i < n; i++)
		utrace__ob_puts(&b, "\\t=> %pS\\n");
	utrace__ob_puts(&b, "\"");
	for (i = 0; i < n; i++)
		utrace__ob_printf(&b, ", (void *)REC->caller[%u]", i);
	utrace__ob_puts(&b, "\n");
	utrace__ob_putc(&b, '\0');
	d = calloc(1, sizeof(*d));
	if (b.nomem || !d || cv->nr_fmt >= MAX_ID) {
		if (d && !b.nomem && cv->nr_fmt >= MAX_ID)
			problem(cv, "'%s': more than %u distinct formats: the stacks of "
				"%u frames are left out", cv->name, MAX_ID, n);
		free(b.p);
		free(d);
		return NULL;
	}
	d->system = "ftrace";
	d->name = "user_stack";
	d->own = b.p;
	d->body = b.p;
	d->id = (uint16_t)(cv->nr_fmt + 1);
	cv->all[cv->nr_fmt++] = d;
	cv->ustack[n] = d;
	return after_user_stack(cv, d) ? d : NULL;
}

/*
 * A stack record of record -g (kind: a definition or a reference) as a
 * user_stack record in cv->urec: its length, 0 when there is nothing to
 * write (a reference to a stack not in the file, no frames), or -ENOMEM.
 */
static int ustack_rec(struct conv *cv, const struct utrace__tf_item *item,
		      enum utrace__stack_kind kind, struct dfmt **d)
{
	const uint64_t *ips;
	uint32_t nr, pid = item->proc->pid;
	int r = utrace__stacktab_item(&cv->stacks, item->proc, kind, item->rec, item->len,
				      &ips, &nr);

	if (r == -ENOMEM)
		return r;
	if (r < 0 || !ips || !nr || item->len < 8)
		return 0;
	if (nr > MAX_UFRAMES)
		nr = MAX_UFRAMES;        /* the innermost frames */
	*d = ustack_fmt(cv, nr);
	if (!*d)
		return cv->nr_fmt >= MAX_ID ? 0 : -ENOMEM;
	memcpy(cv->urec, item->rec, 8);  /* the common fields */
	memcpy(cv->urec + 8, &pid, 4);
	memset(cv->urec + 12, 0, 4);
	memcpy(cv->urec + 16, ips, 8 * nr);
	return (int)(16 + 8 * nr);
}

/* --- pages --- */

static int write_at(struct conv *cv, const void *p, size_t n, uint64_t off)
{
	const unsigned char *s = p;

	while (n) {
		ssize_t w = pwrite(cv->fd, s, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			cv->werr = w < 0 ? errno : EIO;
			return -1;
		}
		s += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* The packer completed a page of CPU stream 'pk'. */
static int emit_page(struct utrace__rbpack *pk)
{
	struct cpu_out *c = (struct cpu_out *)(void *)((char *)pk - offsetof(struct cpu_out, pk));
	struct conv *cv = c->cv;
	int r = 0;

	if (cv->writing)
		r = write_at(cv, pk->page, cv->page_size,
			     c->file_off + c->nr_pages * cv->page_size);
	c->nr_pages++;
	return r;
}

static struct cpu_out *cpu_get(struct conv *cv, uint32_t cpu)
{
	if (cpu >= MAX_CPUS)
		return NULL;
	if (cpu >= cv->cap_cpus) {
		uint32_t cap = cv->cap_cpus ? cv->cap_cpus : 8;
		struct cpu_out *n;

		while (cap <= cpu)
			cap *= 2;
		n = realloc(cv->cpu, cap * sizeof(*n));
		if (!n)
			return NULL;
		memset(n + cv->cap_cpus, 0, (cap - cv->cap_cpus) * sizeof(*n));
		cv->cpu = n;
		cv->cap_cpus = cap;
	}
	if (cpu >= cv->nr_cpus)
		cv->nr_cpus = cpu + 1;
	cv->cpu[cpu].cv = cv;
	cv->cpu[cpu].pk.data_size = cv->data_size;
	cv->cpu[cpu].pk.emit = emit_page;
	return &cv->cpu[cpu];
}

/* The lost events at the end of CPU 'c' (see lost_body). */
static int put_lost_marker(struct conv *cv, struct cpu_out *c)
{
	unsigned char rec[16];

	if (!cv->lost_fmt && cv->nr_fmt >= MAX_ID)
		return 0;                /* no id left: not shown */
	if (!cv->lost_fmt) {
		struct dfmt *d = calloc(1, sizeof(*d));

		if (!d || !dfmt_room(cv)) {
			free(d);
			return -1;
		}
		d->system = "utrace";
		d->name = "lost_events";
		d->body = lost_body;
		d->id = (uint16_t)(cv->nr_fmt + 1);
		cv->all[cv->nr_fmt++] = d;
		cv->lost_fmt = d;
	}
	memset(rec, 0, sizeof(rec));
	le(rec + 4, c->lost_pid, 4);
	le(rec + 8, c->pk.lost, 8);
	return utrace__rbpack_event(&c->pk, c->lost_time, rec, sizeof(rec), cv->lost_fmt->id);
}

/*
 * One pass over the merged stream: place every event (and, in pass 2,
 * write its page).  Returns 0, -ENOMEM, or -EIO (cv->werr says why).
 */
static int pass(struct conv *cv)
{
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	enum utrace__stack_kind kind;
	struct cpu_out *c;
	struct dfmt *d;
	uint32_t i;
	int r;

	r = utrace__tf_iter_new(cv->tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		if (item.cpu >= MAX_CPUS) {
			problem(cv, "'%s': record at offset %llu: CPU %u: trace.dat takes "
				"CPUs below %u; its events are left out", cv->name,
				(unsigned long long)item.page_offset, item.cpu, MAX_CPUS);
			continue;
		}
		c = cpu_get(cv, item.cpu);
		if (!c) {
			r = -ENOMEM;
			break;
		}
		if (item.kind == UTRACE__TF_LOST) {
			utrace__rbpack_lost(&c->pk, item.lost);
			c->lost_time = item.time;
			c->lost_pid = item.thread->tid ? item.thread->tid : item.proc->pid;
			continue;
		}
		if (!item.format) {
			if (!item.format_rejected)
				problem(cv, "'%s': record at offset %llu: event at offset %llu: "
					"%s %u has no %s for event id %u", cv->name,
					(unsigned long long)item.page_offset,
					(unsigned long long)item.offset,
					UTRACE__TF_NO_FORMAT_ARGS(&item));
			continue;
		}
		kind = utrace__stack_kind(item.format->system, item.format->name);
		if (kind != UTRACE__STACK_NONE && !item.kernel) {
			int n = ustack_rec(cv, &item, kind, &d);

			if (n < 0) {
				r = n;
				break;
			}
			if (n && utrace__rbpack_event(&c->pk, item.time, cv->urec,
						      (uint32_t)n, d->id) < 0) {
				r = -EIO;
				break;
			}
			if (n && !cv->writing)
				cv->nr_events++;
			continue;
		}
		d = dfmt_get(cv, item.format);
		if (!d) {
			r = -ENOMEM;
			break;
		}
		if (!d->id)
			continue;        /* said when it was made */
		{
			/* As utrace script: a record libtraceevent would read
			 * outside of, or divide by zero on, is left out. */
			char why[512];
			int ok = utrace__vet_event(cv->vet, &item, why, sizeof(why));

			if (ok < 0) {
				r = -ENOMEM;
				break;
			}
			if (!ok) {
				problem(cv, "'%s': record at offset %llu: event at offset %llu: "
					"'%s:%s': %s", cv->name,
					(unsigned long long)item.page_offset,
					(unsigned long long)item.offset, d->system, d->name, why);
				continue;
			}
		}
		if (utrace_rb_event_size(item.len) > cv->data_size) {
			problem(cv, "'%s': record at offset %llu: event at offset %llu: "
				"record of %u bytes does not fit a trace.dat page", cv->name,
				(unsigned long long)item.page_offset,
				(unsigned long long)item.offset, item.len);
			continue;
		}
		if (item.len >= 40 && !strcmp(d->system, "ftrace") &&
		    !strcmp(d->name, "funcgraph_exit")) {
			/* calltime and rettime in the trace clock, as the
			 * kernel's (the runtime writes its own ticks) */
			unsigned char g[40];
			uint64_t t;

			memcpy(g, item.rec, 40);
			for (int k = 24; k <= 32; k += 8) {
				memcpy(&t, g + k, 8);
				t = utrace__tf_proc_time(cv->tf, item.proc, t);
				memcpy(g + k, &t, 8);
			}
			if (utrace__rbpack_event(&c->pk, item.time, g, 40, d->id) < 0) {
				r = -EIO;
				break;
			}
			if (!cv->writing)
				cv->nr_events++;
			continue;
		}
		if (utrace__rbpack_event(&c->pk, item.time, item.rec, item.len, d->id) < 0) {
			r = -EIO;
			break;
		}
		if (!cv->writing)
			cv->nr_events++;
	}
	utrace__tf_iter_free(it);
	for (i = 0; r >= 0 && i < cv->nr_cpus; i++) {
		c = &cv->cpu[i];
		if (c->pk.lost_pending && put_lost_marker(cv, c) < 0)
			r = cv->lost_fmt ? -EIO : -ENOMEM;
		if (r >= 0 && utrace__rbpack_flush(&c->pk) < 0)
			r = -EIO;
	}
	return r < 0 ? r : 0;
}

/* --- metadata --- */

static void put_header_page(struct utrace__obuf *b, uint32_t data_size)
{
	char t[512];
	int n = utrace__rb_header_page(t, sizeof(t), data_size);

	b_str(b, "header_page");
	b_num(b, (uint64_t)n, 8);
	utrace__ob_put(b, t, (size_t)n);
	b_str(b, "header_event");
	b_num(b, strlen(utrace__rb_header_event), 8);
	utrace__ob_put(b, utrace__rb_header_event, strlen(utrace__rb_header_event));
}

static void put_formats(struct conv *cv, struct utrace__obuf *b)
{
	size_t i, j, nsys = 0, at = b->len;
	char idline[64];

	b_num(b, 0, 4);                  /* number of systems, set below */
	for (i = 0; i < cv->nr_fmt; i++) {
		const char *sys = cv->all[i]->system;
		size_t count_at;
		uint32_t count = 0;

		if (!cv->all[i]->id)
			continue;
		for (j = 0; j < i; j++)
			if (cv->all[j]->id && !strcmp(cv->all[j]->system, sys))
				break;
		if (j < i)
			continue;        /* system already written */
		nsys++;
		b_str(b, sys);
		count_at = b->len;
		b_num(b, 0, 4);
		for (j = i; j < cv->nr_fmt; j++) {
			struct dfmt *d = cv->all[j];
			size_t nl, nb;
			int n;

			if (!d->id || strcmp(d->system, sys))
				continue;
			n = snprintf(idline, sizeof(idline), "\nID: %u\n", d->id);
			nl = strlen(d->name);
			nb = strlen(d->body);
			b_num(b, 6 + nl + (size_t)n + nb, 8);
			utrace__ob_put(b, "name: ", 6);
			utrace__ob_put(b, d->name, nl);
			utrace__ob_put(b, idline, (size_t)n);
			utrace__ob_put(b, d->body, nb);
			count++;
		}
		if (!b->nomem)
			le(b->p + count_at, count, 4);
	}
	if (!b->nomem)
		le(b->p + at, nsys, 4);
}

static void put_cmdline(struct utrace__obuf *b, uint32_t pid, const char *comm)
{
	char num[16];
	size_t k, start;

	snprintf(num, sizeof(num), "%d ", (int)pid);
	utrace__ob_put(b, num, strlen(num));
	start = b->len;
	utrace__ob_put(b, comm, strlen(comm));
	/* one line each, whatever the name holds */
	for (k = start; !b->nomem && k < b->len; k++)
		if ((unsigned char)b->p[k] < 0x20 || b->p[k] == 0x7f)
			b->p[k] = '?';
	utrace__ob_put(b, "\n", 1);
}

/* A symbol of some process, for the kallsyms section. */
struct ksym {
	uint64_t addr;
	size_t order;                    /* process index, then record index */
	const char *name;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * The processes' symbols (their SYMBOL records) as /proc/kallsyms lines,
 * "addr T name", so that libtraceevent names %ps / %pS addresses.  One
 * address space for all processes: at an address several processes name,
 * the first process's (in file order) symbol is kept.  Size-prefixed (u32)
 * as trace-cmd writes it; a name with a space or a control character is
 * left out (it would not parse as one line).
 */
static void put_kallsyms(struct conv *cv, struct utrace__obuf *b)
{
	const struct utrace__tf_process *p;
	struct ksym *v = NULL, *n;
	size_t nr = 0, cap = 0, i, j, at = b->len;
	const char *name;
	uint64_t addr, size;

	b_num(b, 0, 4);
	for (i = 0; (p = utrace__tf_process(cv->tf, i)); i++) {
		for (j = 0; !utrace__tf_sym_at(p, j, &name, &addr, &size); j++) {
			if (!*name || strpbrk(name, " \t\n\r"))
				continue;
			if (nr == cap) {
				cap = cap ? 2 * cap : 1024;
				n = realloc(v, cap * sizeof(*v));
				if (!n) {
					b->nomem = true;
					free(v);
					return;
				}
				v = n;
			}
			v[nr] = (struct ksym){ addr, nr, name };
			nr++;
		}
	}
	if (nr)
		qsort(v, nr, sizeof(*v), ksym_cmp);
	for (i = 0; i < nr && !b->nomem; i++) {
		if (i && v[i].addr == v[i - 1].addr)
			continue;
		utrace__ob_printf(b, "%016llx T %s\n", (unsigned long long)v[i].addr, v[i].name);
	}
	free(v);
	if (!b->nomem && b->len - at - 4 > UINT32_MAX)
		b->nomem = true;
	if (!b->nomem)
		le(b->p + at, b->len - at - 4, 4);
}

/*
 * "tid comm" lines, as the kernel's saved_cmdlines (libtraceevent keeps
 * the first name of a number).
 */
static void put_cmdlines(struct conv *cv, struct utrace__obuf *b)
{
	const struct utrace__tf_process *p;
	const struct utrace__tf_thread *t;
	size_t i, at = b->len;

	b_num(b, 0, 8);
	for (i = 0; (t = utrace__tf_thread(cv->tf, i)); i++)
		put_cmdline(b, t->tid, t->comm && t->comm[0] ? t->comm :
			    t->proc->comm && t->proc->comm[0] ? t->proc->comm : "<...>");
	/* the processes too, for markers of a process's lost events */
	for (i = 0; (p = utrace__tf_process(cv->tf, i)); i++)
		if (p->comm && p->comm[0])
			put_cmdline(b, p->pid, p->comm);
	/* the tasks kernel events name */
	for (i = 0; (t = utrace__tf_ktask(cv->tf, i)); i++)
		if (t->comm && t->comm[0])
			put_cmdline(b, t->tid, t->comm);
	if (!b->nomem)
		le(b->p + at, b->len - at - 8, 8);
}

static void put_trace_clock(struct utrace__obuf *opt, const char *cur)
{
	char text[128];
	size_t k, n = 0;

	for (k = 0; k < sizeof(trace_clock_names) / sizeof(trace_clock_names[0]); k++) {
		bool on = !strcmp(trace_clock_names[k], cur);

		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s%s%s", k ? " " : "",
				      on ? "[" : "", trace_clock_names[k], on ? "]" : "");
	}
	n += (size_t)snprintf(text + n, sizeof(text) - n, "\n");
	b_num(opt, OPT_TRACECLOCK, 2);
	b_num(opt, n + 1, 4);
	utrace__ob_put(opt, text, n + 1);
}

/*
 * Everything before the CPU pages, then the options that end the file.
 * 'opt' gets the options section, to go at 'options_off'.
 */
static void build_meta(struct conv *cv, struct utrace__obuf *m, struct utrace__obuf *opt,
		       uint64_t *data_off, uint64_t *options_off)
{
	uint64_t off[SEC_CMDLINES + 1] = { 0 }, buffer_off, end;
	const struct utrace__tf_process *first;
	const char *clock;
	char version[64];
	size_t at;
	uint32_t i;
	int id;

	utrace__ob_put(m, "\x17\x08\x44tracing", 10);
	b_str(m, "7");
	b_num(m, 0, 1);                  /* little endian */
	b_num(m, 8, 1);                  /* long size */
	b_num(m, cv->page_size, 4);
	b_str(m, "none");                /* compression */
	b_str(m, "");
	b_num(m, 0, 8);                  /* options offset, set below */

	off[SEC_STRINGS] = m->len;
	at = sec_begin(m, SEC_STRINGS, "strings");
	utrace__ob_put(m, strings, sizeof(strings) - 1);
	sec_end(m, at);

	off[SEC_HEADER_INFO] = m->len;
	at = sec_begin(m, SEC_HEADER_INFO, "headers");
	put_header_page(m, cv->data_size);
	sec_end(m, at);

	off[SEC_FTRACE_EVENTS] = m->len;
	at = sec_begin(m, SEC_FTRACE_EVENTS, "ftrace events");
	b_num(m, 0, 4);
	sec_end(m, at);

	off[SEC_EVENT_FORMATS] = m->len;
	at = sec_begin(m, SEC_EVENT_FORMATS, "events format");
	put_formats(cv, m);
	sec_end(m, at);

	off[SEC_KALLSYMS] = m->len;
	at = sec_begin(m, SEC_KALLSYMS, "kallsyms");
	put_kallsyms(cv, m);
	sec_end(m, at);

	off[SEC_PRINTK] = m->len;
	at = sec_begin(m, SEC_PRINTK, "printk");
	b_num(m, 0, 4);
	sec_end(m, at);

	off[SEC_CMDLINES] = m->len;
	at = sec_begin(m, SEC_CMDLINES, "command lines");
	put_cmdlines(cv, m);
	sec_end(m, at);

	/* the buffer section: its pages start on a page boundary */
	buffer_off = m->len;
	at = sec_begin(m, OPT_BUFFER, "buffer flyrecord ");
	*data_off = (m->len + cv->page_size - 1) / cv->page_size * cv->page_size;
	end = *data_off;
	for (i = 0; i < cv->nr_cpus; i++) {
		cv->cpu[i].file_off = end;
		end += cv->cpu[i].nr_pages * cv->page_size;
	}
	if (!m->nomem)
		le(m->p + at, end - (at + 8), 8);
	*options_off = end;
	if (!m->nomem)
		le(m->p + 24, end, 8);   /* the header's options offset */

	at = sec_begin(opt, OPT_DONE, "options");
	for (id = SEC_HEADER_INFO; id <= SEC_CMDLINES; id++) {
		b_num(opt, (uint64_t)id, 2);
		b_num(opt, 8, 4);
		b_num(opt, off[id], 8);
	}
	first = utrace__tf_process(cv->tf, 0);
	clock = utrace__trace_clock_name(first ? first->trace_clock : UTRACE_TCLOCK_MONO);
	put_trace_clock(opt, clock);
	b_num(opt, OPT_CPUCOUNT, 2);
	b_num(opt, 4, 4);
	b_num(opt, cv->nr_cpus, 4);
	snprintf(version, sizeof(version), "utrace %s", utrace_reader_version());
	b_num(opt, OPT_VERSION, 2);
	b_num(opt, strlen(version) + 1, 4);
	b_str(opt, version);
	b_num(opt, OPT_BUFFER, 2);
	b_num(opt, 8 + 1 + 5 + 4 + 4 + (uint64_t)cv->nr_cpus * 20, 4);
	b_num(opt, buffer_off, 8);
	b_str(opt, "");                  /* the top instance */
	b_str(opt, clock);               /* its clock */
	b_num(opt, cv->page_size, 4);
	b_num(opt, cv->nr_cpus, 4);
	for (i = 0; i < cv->nr_cpus; i++) {
		b_num(opt, i, 4);
		b_num(opt, cv->cpu[i].file_off, 8);
		b_num(opt, cv->cpu[i].nr_pages * cv->page_size, 8);
	}
	b_num(opt, OPT_DONE, 2);
	b_num(opt, 8, 4);
	b_num(opt, 0, 8);                /* no next options section */
	sec_end(opt, at);
}

/* --- the worker --- */

static int write_file(struct conv *cv)
{
	struct utrace__obuf m = { 0 }, opt = { 0 };
	uint64_t data_off, options_off;
	uint32_t i;
	int r = 0;

	build_meta(cv, &m, &opt, &data_off, &options_off);
	if (m.nomem || opt.nomem) {
		r = -ENOMEM;
		goto out;
	}
	if (write_at(cv, m.p, m.len, 0) < 0 ||
	    write_at(cv, opt.p, opt.len, options_off) < 0) {
		r = -EIO;
		goto out;
	}
	for (i = 0; i < cv->nr_cpus; i++) {
		cv->cpu[i].pk.page = malloc(cv->page_size);
		if (!cv->cpu[i].pk.page) {
			r = -ENOMEM;
			goto out;
		}
	}
	/* pass 2: the same placing, now written */
	for (i = 0; i < cv->nr_cpus; i++) {
		cv->cpu[i].expect = cv->cpu[i].nr_pages;
		cv->cpu[i].nr_pages = 0;
	}
	cv->writing = true;
	r = pass(cv);
	for (i = 0; !r && i < cv->nr_cpus; i++)
		if (cv->cpu[i].nr_pages != cv->cpu[i].expect) {
			utrace__say("utrace: '%s': the second reading placed the "
				    "pages differently (a bug)\n", cv->name);
			r = -EINVAL;
		}
out:
	free(m.p);
	free(opt.p);
	return r;
}

int utrace__export_tracedat(struct utrace__tf *tf, const char *out)
{
	struct conv cv = { .tf = tf, .name = utrace__tf_name(tf), .out = out, .fd = -1 };
	struct utrace__tf_format *f;
	struct stat st;
	int r = 0, status = 0;
	size_t i;

	if (utrace__tf_warning(tf))
		utrace__say("utrace: %s\n", utrace__tf_warning(tf));
	if (utrace__tf_error(tf)) {
		utrace__problem(&cv.pr, "%s", utrace__tf_error(tf));
		if (utrace__tf_nr_bad(tf) > 1)
			utrace__problems_count(&cv.pr, utrace__tf_nr_bad(tf) - 1);
	}
	cv.page_size = utrace__tf_page_size(tf);
	if (!cv.page_size)
		return 1;                /* not even a header: said above */
	{
		/* In mono whatever the recording's clock: trace-cmd 3.1.6
		 * shows no event of a file whose trace_clock is mono_raw,
		 * tai, local or x86-tsc, and boot's as counts (tried on this
		 * export; docs/tracefs-differences.md). */
		uint32_t bad_pid;

		utrace__tf_set_clock(tf, UTRACE_TCLOCK_MONO, &bad_pid);
	}
	cv.data_size = cv.page_size - UTRACE_PAGE_HDR;
	cv.vet = utrace__vet_new(tf);
	if (!cv.vet) {
		utrace__say("utrace: cannot set up libtraceevent\n");
		return 1;
	}

	/* pass 1: the formats in file order, then where each event goes */
	for (i = 0; (f = utrace__tf_format(tf, i)); i++)
		if (utrace__stack_kind(f->system, f->name) == UTRACE__STACK_NONE &&
		    !dfmt_get(&cv, f)) {
			r = -ENOMEM;
			goto out;
		}
	r = pass(&cv);
	if (r < 0)
		goto out;
	if (!cv.nr_cpus && !cpu_get(&cv, 0)) {  /* trace-cmd wants a CPU */
		r = -ENOMEM;
		goto out;
	}

	cv.fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (cv.fd < 0) {
		utrace__say("utrace: cannot open '%s': %s\n", out, strerror(errno));
		status = 1;
		goto out;
	}
	r = write_file(&cv);
	if (close(cv.fd) < 0 && !r) {
		cv.werr = errno;
		r = -EIO;
	}
	if (r == -EIO)
		utrace__say("utrace: cannot write '%s': %s\n", out, strerror(cv.werr));
	if (r < 0 && r != -ENOMEM && stat(out, &st) == 0 && S_ISREG(st.st_mode))
		unlink(out);             /* no half-written file */
out:
	if (r == -ENOMEM) {
		utrace__say("utrace: '%s': out of memory\n", cv.name);
		if (cv.fd >= 0 && stat(out, &st) == 0 && S_ISREG(st.st_mode))
			unlink(out);
	}
	if (r < 0)
		status = 1;
	utrace__problems_end(&cv.pr, cv.name, "the records or events concerned were "
			     "left out");
	if (cv.pr.count)
		status = 1;
	for (i = 0; i < cv.nr_fmt; i++) {
		free(cv.all[i]->own);
		free(cv.all[i]);
	}
	utrace__stacktab_free(&cv.stacks);
	for (i = 0; i < cv.cap_cpus; i++)
		free(cv.cpu[i].pk.page);
	free(cv.cpu);
	free(cv.all);
	utrace__vet_free(cv.vet);
	return status;
}
