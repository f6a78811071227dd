/* SPDX-License-Identifier: MIT */
/*
 * A test-only trace file writer (docs/trace-file-format.md), so that the
 * reader is tested apart from the recorder.  Records are the project's own
 * events, fired for real and taken with utrace__record_hook, then packed
 * into kernel-layout pages with chosen timestamps.
 *
 *   mkfile basic FILE             two processes and a third (one with TSC
 *                                 time), four threads; see basic.golden
 *   mkfile sample FILE EXPECTED   every event of samples/sample-trace.h and
 *                                 tests/data/kernel-*.h; EXPECTED gets the
 *                                 lines 'utrace script' must print, made
 *                                 with libutrace's own printer
 *   mkfile big FILE N             N events, 4 threads of 2 processes
 *   mkfile req FILE               req_begin/req_end pairs (tests/cli/req-trace.h)
 *                                 for `utrace report --latency`: ids reused
 *                                 across threads and processes, pairs begun
 *                                 and ended on different threads, equal
 *                                 times, a thread whose clock runs back at
 *                                 a page, lost events, one process on TSC
 *   mkfile odd FILE               names and values the exports must carry
 *                                 through: quotes and SQL in a system name,
 *                                 keywords as field names, integer extremes,
 *                                 bytes that are not UTF-8 (utrace convert)
 *   mkfile corrupt DIR            the corrupt-file corpus: DIR/<what is
 *                                 wrong>.dat and DIR/MANIFEST, one line each:
 *                                 "name status words of the message"
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CREATE_TRACE_POINTS
#include "sample-trace.h"
#include "kernel-events.h"
#include "kernel-irq.h"
#include "utest-events.h"
#include "req-trace.h"

#include <utrace/utrace.h>

#include "internal.h"
#include "event.h"
#include "tep-quirks.h"

int utest_cond_evals, utest_assign_evals, utest_reg_ret, utest_regs, utest_unregs;

int utest_reg(void)
{
	return 0;
}

void utest_unreg(void)
{
}

int sample_trace_reg(void)
{
	return 0;
}

void sample_trace_unreg(void)
{
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("mkfile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* --- grabbing records --- */

struct cap {
	const struct utrace_event *ev;
	unsigned char rec[8192];
	uint32_t len;
};

static struct cap last;
static int have_last;

static void hook(const struct utrace_event *ev, const void *rec, unsigned int size)
{
	if (size > sizeof(last.rec))
		die("record too big");
	last.ev = ev;
	memcpy(last.rec, rec, size);
	last.len = size;
	have_last = 1;
}

/* Fire an event and take its record. */
#define GRAB(call)							\
	(have_last = 0, (call), have_last ? &last : (die("%s recorded nothing", #call), &last))

static void setup_events(void)
{
	utrace__set_record_hook(hook);
	if (utrace_set_event("utest:*") < 0 || utrace_set_event("sample-trace:*") < 0 ||
	    utrace_set_event("sched:*") < 0 || utrace_set_event("irq:*") < 0 ||
	    utrace_set_event("reqdemo:*") < 0)
		die("cannot enable the events");
}

/* --- the file, in memory --- */

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		size_t c = b->cap ? b->cap : 1 << 16;

		while (c < b->len + n)
			c *= 2;
		b->p = realloc(b->p, c);
		if (!b->p)
			die("out of memory");
		b->cap = c;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void set32(struct buf *b, size_t off, uint32_t v)
{
	memcpy(b->p + off, &v, 4);
}

static void set64(struct buf *b, size_t off, uint64_t v)
{
	memcpy(b->p + off, &v, 8);
}

static uint32_t get32(const struct buf *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b->p + off, 4);
	return v;
}

static uint64_t get64(const struct buf *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b->p + off, 8);
	return v;
}

#define PAGE_SIZE 4096
#define PAGE_DATA (PAGE_SIZE - 16)

static void header(struct buf *b, uint32_t page_size)
{
	put(b, "UTRACE\n", 8);
	put32(b, 1);                     /* version */
	put32(b, 64);                    /* header size */
	put32(b, page_size);
	put32(b, 0x01020304);
	put32(b, 8);                     /* long size */
	put32(b, 0);                     /* flags */
	put64(b, 1700000000000000000ULL);
	put64(b, 5000000000ULL);
	put64(b, 0);
	put64(b, 0);
}

/* A record: returns its offset. */
static size_t record(struct buf *b, uint32_t type, const void *a, size_t alen,
		     const void *c, size_t clen)
{
	static const unsigned char zeros[8];
	size_t off = b->len;
	uint64_t size = alen + clen;

	put32(b, type);
	put32(b, 0);
	put64(b, size);
	put(b, a, alen);
	put(b, c, clen);
	put(b, zeros, (8 - size % 8) % 8);
	return off;
}

static size_t rec_clock(struct buf *b, uint64_t tsc, uint64_t ns)
{
	uint64_t p[2] = { tsc, ns };

	return record(b, 1, p, sizeof(p), NULL, 0);
}

static size_t rec_process(struct buf *b, uint32_t pid, uint32_t ppid, uint32_t clock,
			  const char *comm, const char *exe)
{
	uint32_t h[4] = { pid, ppid, clock, 0 };
	struct buf s = { 0 };
	size_t off;

	put(&s, comm, strlen(comm) + 1);
	put(&s, exe, strlen(exe) + 1);
	off = record(b, 2, h, sizeof(h), s.p, s.len);
	free(s.p);
	return off;
}

static size_t rec_format_text(struct buf *b, uint32_t pid, uint32_t id,
			      const char *system, const char *text)
{
	uint32_t h[2] = { pid, id };
	struct buf s = { 0 };
	size_t off;

	put(&s, system, strlen(system) + 1);
	put(&s, text, strlen(text) + 1);
	off = record(b, 3, h, sizeof(h), s.p, s.len);
	free(s.p);
	return off;
}

/* The event's format text with its ID line set to 'id'. */
static char *format_with_id(const struct utrace_event *ev, uint32_t id)
{
	char *fmt = utrace_event_format(ev), *idl, *nl, *out;

	if (!fmt || !(idl = strstr(fmt, "\nID: ")) || !(nl = strchr(idl + 1, '\n')))
		die("no format for %s", utrace_event_name(ev));
	idl[1] = 0;
	if (asprintf(&out, "%sID: %u%s", fmt, id, nl) < 0)
		die("out of memory");
	free(fmt);
	return out;
}

static size_t rec_format(struct buf *b, uint32_t pid, uint32_t id,
			 const struct utrace_event *ev)
{
	char *text = format_with_id(ev, id);
	size_t off = rec_format_text(b, pid, id, utrace_event_system(ev), text);

	free(text);
	return off;
}

static size_t rec_thread(struct buf *b, uint32_t pid, uint32_t tid, const char *comm)
{
	uint32_t h[2] = { pid, tid };

	return record(b, 4, h, sizeof(h), comm, strlen(comm) + 1);
}

static size_t rec_lost(struct buf *b, uint32_t pid, uint32_t tid, uint64_t count)
{
	struct { uint32_t pid, tid; uint64_t count; } l = { pid, tid, count };

	return record(b, 6, &l, sizeof(l), NULL, 0);
}

static size_t rec_stats(struct buf *b, uint32_t pid, uint64_t written, uint64_t lost)
{
	struct { uint32_t pid, reserved; uint64_t written, lost; } s = { pid, 0, written, lost };

	return record(b, 7, &s, sizeof(s), NULL, 0);
}

/* --- pages --- */

struct page {
	uint32_t pid, tid, cpu;
	uint64_t seq, lost_before;
	int missed;
	unsigned char data[PAGE_SIZE];
	uint32_t tail;
	uint64_t first, last;
	int started;
	uint32_t nr;
};

static void page_start(struct page *pg, uint32_t pid, uint32_t tid, uint32_t cpu,
		       uint64_t seq, uint64_t lost_before)
{
	memset(pg, 0, sizeof(*pg));
	pg->pid = pid;
	pg->tid = tid;
	pg->cpu = cpu;
	pg->seq = seq;
	pg->lost_before = lost_before;
}

static void pw32(struct page *pg, uint32_t v)
{
	memcpy(pg->data + 16 + pg->tail, &v, 4);
	pg->tail += 4;
}

/*
 * Add a record at time 'ts' (clock units): a time extend when the delta
 * does not fit 27 bits, type_len 0 for records over 112 bytes (or when
 * 'long_form'), whose length word is the exact length + 4.  0 if full.
 */
static int page_add(struct page *pg, uint64_t ts, const void *rec, uint32_t len,
		    int long_form)
{
	uint32_t r = (len + 3) & ~3u, need, delta;
	uint64_t d;

	if (!pg->started) {
		pg->started = 1;
		pg->first = pg->last = ts;
	}
	d = ts - pg->last;
	need = (d >> 27 ? 8 : 0) + (r > 112 || long_form ? 8 : 4) + r;
	if (pg->tail + need > PAGE_DATA)
		return 0;
	if (d >> 27) {
		pw32(pg, 30 | (uint32_t)(d & ((1u << 27) - 1)) << 5);
		pw32(pg, (uint32_t)(d >> 27));
		d = 0;
	}
	delta = (uint32_t)d;
	if (r > 112 || long_form) {
		pw32(pg, delta << 5);
		pw32(pg, len + 4);
	} else {
		pw32(pg, r / 4 | delta << 5);
	}
	memcpy(pg->data + 16 + pg->tail, rec, len);
	pg->tail += r;
	pg->last = ts;
	pg->nr++;
	return 1;
}

/* Write the page; 'pad': end it with padding to the page's end, inside
 * the commit (time_delta 0, and a length word as the kernel writes). */
static size_t page_write(struct buf *b, struct page *pg, int pad)
{
	struct {
		uint32_t pid, tid, cpu, reserved;
		uint64_t seq, lost_before;
	} h = { pg->pid, pg->tid, pg->cpu, 0, pg->seq, pg->lost_before };
	uint64_t commit;

	if (pad && pg->tail + 8 <= PAGE_DATA) {
		uint32_t rest = PAGE_DATA - pg->tail;

		pw32(pg, 29);
		pw32(pg, rest - 4);
		pg->tail = PAGE_DATA;
	}
	commit = pg->tail | (pg->missed ? 1ULL << 31 : 0);
	memcpy(pg->data, &pg->first, 8);
	memcpy(pg->data + 8, &commit, 8);
	return record(b, 5, &h, sizeof(h), pg->data, PAGE_SIZE);
}

static void write_file(const char *path, const struct buf *b)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0)
		die("cannot write '%s': %s", path, strerror(errno));
}

static void set_type(struct cap *c, uint32_t id)
{
	uint16_t t = (uint16_t)id;

	memcpy(c->rec, &t, 2);
}

static void set_pid(struct cap *c, uint32_t tid)
{
	int32_t p = (int32_t)tid;

	memcpy(c->rec + 4, &p, 4);
}

static int id_of(const char *system, const char *name)
{
	struct utrace_event *ev = utrace_event_find(system, name);

	if (!ev)
		die("no event %s:%s", system, name);
	return utrace_event_id(ev);
}

/* --- mkfile basic --- */

#define T0 5000000000ULL
#define TSC0 1000000000ULL

/* Process B's ids: utest's three events in the opposite order. */
static uint32_t b_id(uint32_t id)
{
	uint32_t s = (uint32_t)id_of("utest", "utest_simple"),
		 c = (uint32_t)id_of("utest", "utest_cond"),
		 f = (uint32_t)id_of("utest", "utest_fn");

	return id == s ? f : id == f ? s : id == c ? c + 100 : id;
}

static uint64_t tsc_of(uint64_t ns)
{
	return TSC0 + (ns - T0) * 3 + 1;  /* 3 ticks per ns */
}

static void add(struct page *pg, uint64_t ts, struct cap *c, uint32_t id)
{
	set_type(c, id);
	set_pid(c, pg->tid);
	if (!page_add(pg, ts, c->rec, c->len, 0))
		die("page full");
}

static void mk_basic(const char *path)
{
	struct buf b = { 0 };
	struct page pg;
	uint32_t s = (uint32_t)id_of("utest", "utest_simple"),
		 c = (uint32_t)id_of("utest", "utest_cond"),
		 f = (uint32_t)id_of("utest", "utest_fn");
	char longs[150];

	/* Strings of odd length + NUL keep utest_fn's array of shorts after
	 * them aligned (its TP_fast_assign stores through a short pointer). */
	memset(longs, 'x', 149);
	longs[149] = 0;
	setup_events();
	header(&b, PAGE_SIZE);
	rec_clock(&b, TSC0, T0);
	rec_process(&b, 1000, 1, 0, "app", "/usr/bin/app");
	rec_format(&b, 1000, s, utrace_event_find("utest", "utest_simple"));
	rec_format(&b, 1000, c, utrace_event_find("utest", "utest_cond"));
	rec_format(&b, 1000, f, utrace_event_find("utest", "utest_fn"));
	rec_thread(&b, 1000, 1000, "app");
	rec_thread(&b, 1000, 1001, "app-worker");
	rec_process(&b, 2000, 1000, 1, "tscapp", "/opt/tscapp");
	rec_format(&b, 2000, b_id(s), utrace_event_find("utest", "utest_simple"));
	rec_format(&b, 2000, b_id(c), utrace_event_find("utest", "utest_cond"));
	rec_format(&b, 2000, b_id(f), utrace_event_find("utest", "utest_fn"));
	rec_thread(&b, 2000, 2000, "tscapp");
	{
		static const char junk[] = "a record of a type this reader does not know";

		record(&b, 42, junk, sizeof(junk), NULL, 0);
	}

	/* thread 1000, page 1, written before page 0 */
	page_start(&pg, 1000, 1000, 1, 1, 0);
	add(&pg, T0 + 2000000000, GRAB(trace_utest_cond(3)), c);
	page_write(&b, &pg, 0);

	/* thread 1000, page 0: a time extend, a long record, padding */
	page_start(&pg, 1000, 1000, 1, 0, 0);
	add(&pg, T0 + 100000, GRAB(trace_utest_simple(1, 2)), s);
	add(&pg, T0 + 100500, GRAB(trace_utest_cond(1)), c);
	add(&pg, T0 + 200000, GRAB(trace_utest_fn("hello", UTEST_MODE_A)), f);
	add(&pg, T0 + 1500000000, GRAB(trace_utest_simple(2, 3)), s);
	add(&pg, T0 + 1500000001, GRAB(trace_utest_fn(longs, UTEST_MODE_B)), f);
	page_write(&b, &pg, 1);

	/* thread 1001: page 0, then page 1 after 5 lost events */
	page_start(&pg, 1000, 1001, 2, 0, 0);
	add(&pg, T0 + 150000, GRAB(trace_utest_simple(3, 4)), s);
	add(&pg, T0 + 300000, GRAB(trace_utest_cond(7)), c);
	page_write(&b, &pg, 0);
	page_start(&pg, 1000, 1001, 3, 1, 5);
	add(&pg, T0 + 1000000000, GRAB(trace_utest_simple(5, 6)), s);
	page_write(&b, &pg, 0);

	/* process 2000: TSC time, its own ids */
	page_start(&pg, 2000, 2000, 0, 0, 0);
	add(&pg, tsc_of(T0 + 120000), GRAB(trace_utest_fn("tsc", UTEST_MODE_B)), b_id(f));
	add(&pg, tsc_of(T0 + 250000), GRAB(trace_utest_simple(7, 8)), b_id(s));
	page_write(&b, &pg, 0);
	page_start(&pg, 2000, 2002, 5, 0, 0);
	add(&pg, tsc_of(T0 + 250000), GRAB(trace_utest_cond(9)), b_id(c));
	page_write(&b, &pg, 0);

	/* process 3000: no comm; its page lost events, count unknown */
	rec_process(&b, 3000, 1, 0, "", "/bin/noname");
	rec_format(&b, 3000, s, utrace_event_find("utest", "utest_simple"));
	page_start(&pg, 3000, 3000, 4, 0, 0);
	pg.missed = 1;
	add(&pg, T0 + 400000, GRAB(trace_utest_simple(9, 9)), s);
	page_write(&b, &pg, 0);

	rec_lost(&b, 1000, 1001, 7);
	rec_stats(&b, 1000, 9, 12);
	rec_stats(&b, 2000, 3, 0);
	rec_clock(&b, TSC0 + 15000000000ULL, T0 + 5000000000ULL);
	write_file(path, &b);
	free(b.p);
}

/* --- mkfile sample --- */

/* libtraceevent 1.7.1's difference from the kernel that utrace script keeps
 * (negative small fields): tep-quirks.h.  Its __print_array() form it does
 * not keep (formats.c). */

static struct cap *caps;
static size_t nr_caps, cap_caps;

static void keep(void)
{
	if (nr_caps == cap_caps) {
		cap_caps = cap_caps ? cap_caps * 2 : 64;
		caps = realloc(caps, cap_caps * sizeof(*caps));
		if (!caps)
			die("out of memory");
	}
	caps[nr_caps++] = last;
}

static void keep_hook(const struct utrace_event *ev, const void *rec, unsigned int size)
{
	hook(ev, rec, size);
	if (!tep_quirk_negative_field(ev, rec))
		keep();
}

static void fire_foo_bar(const char *foo, int bar, const int *lst, const char *string,
			 const unsigned long *mask, int nr_bits, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	trace_foo_bar(foo, bar, lst, string, mask, nr_bits, fmt, &va);
	va_end(va);
}

static void fire_all(void)
{
	static const int list[] = { 1, 2, 3, 0 }, empty[] = { 0 };
	unsigned long mask[3] = { 0x5UL, 0xfffffffffUL, 0 };
	unsigned char bytes[4] = { 0xde, 0xad, 0xbe, 0xef };
	int vals[] = { 0, 1, 2, 3, 4, 5, 7, -1, 8, 1000, -2147483647 };
	long states[] = { 0, 1, 2, 3, 0x40, 0x80, 0x100, 0x7f, 0x81 };
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		int v = vals[i];
		struct sample_point pt = { v, (int)(0u - (unsigned int)v) };

		fire_foo_bar("hello", v, list, "a string", mask, 1 + (int)i * 13,
			     "vstring %d %s", v, "x");
		fire_foo_bar("0123456789abc", v, empty, NULL, mask, 0, "%s", "");
		trace_foo_bar_with_cond(i ? "cond" : NULL, v);
		trace_foo_bar_with_fn(i % 2 ? "function" : "", v);
		trace_foo_with_template_simple("simple", v, pt, bytes);
		trace_foo_with_template_cond("cond", v, pt, bytes);
		trace_foo_with_template_fn("fn", v, pt, bytes);
		trace_foo_with_template_print("print", v, pt, bytes);
	}
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		trace_sched_switch("bash", 100 + (int)i, 120, states[i], "swapper/1", 0, 120);
		trace_sched_wakeup("a-very-long-task-name", (int)i, 100, (int)i);
		trace_sched_process_fork("parent", 1, "child", 2 + (int)i);
		trace_sched_process_exec("/usr/bin/true", 5, 5);
		trace_irq_handler_entry((int)i, "eth0");
	}
	for (i = 0; i < 4; i++) {
		trace_utest_simple(i * 1000000007ULL, (unsigned int)i);
		trace_utest_fn(i % 2 ? "odd" : "evens", i % 2 ? UTEST_MODE_A : UTEST_MODE_B);
	}
}

static void write_formats(struct buf *b, uint32_t pid)
{
	size_t i;

	for (i = 0; i < nr_caps; i++) {
		size_t j;

		for (j = 0; j < i; j++)
			if (caps[j].ev == caps[i].ev)
				break;
		if (j == i)
			rec_format(b, pid, (uint32_t)utrace_event_id(caps[i].ev), caps[i].ev);
	}
}

static void mk_sample(const char *path, const char *expected)
{
	struct buf b = { 0 };
	struct page pg;
	uint64_t ts = T0 + 123456789;
	uint64_t seq = 0;
	size_t i;
	FILE *ex;

	setup_events();
	utrace__set_record_hook(keep_hook);
	fire_all();
	utrace__set_record_hook(hook);
	header(&b, PAGE_SIZE);
	rec_process(&b, 4242, 1, 0, "sample", "/usr/bin/sample");
	write_formats(&b, 4242);
	rec_thread(&b, 4242, 4242, "sample");
	ex = fopen(expected, "w");
	if (!ex)
		die("cannot write '%s'", expected);
	page_start(&pg, 4242, 4242, 2, seq++, 0);
	for (i = 0; i < nr_caps; i++) {
		char text[8192];
		struct cap *c = &caps[i];

		ts += 1000 + i * 7;
		set_pid(c, 4242);
		if (!page_add(&pg, ts, c->rec, c->len, (int)(i % 5 == 0))) {
			page_write(&b, &pg, (int)(seq % 2));
			page_start(&pg, 4242, 4242, 2, seq++, 0);
			if (!page_add(&pg, ts, c->rec, c->len, 0))
				die("record too big for a page");
		}
		utrace_event_print(c->ev, c->rec, text, sizeof(text));
		/* microseconds rounded, as the kernel's ns2usecs() */
		fprintf(ex, "%16s-%-7d [%03d] ..... %5lu.%06lu: %s: %s\n", "sample", 4242, 2,
			(unsigned long)((ts + 500) / 1000 / 1000000),
			(unsigned long)((ts + 500) / 1000 % 1000000),
			utrace_event_name(c->ev), text);
	}
	page_write(&b, &pg, 0);
	if (fclose(ex) != 0)
		die("cannot write '%s'", expected);
	write_file(path, &b);
	free(b.p);
}

/* --- mkfile big --- */

static void mk_big(const char *path, unsigned long n)
{
	struct buf b = { 0 };
	struct page pg[4];
	struct cap pool[8];
	uint64_t seq[4] = { 0 }, ts = T0;
	uint32_t pid[4] = { 100, 100, 200, 200 }, tid[4] = { 100, 101, 200, 201 };
	unsigned long i;
	int k;

	setup_events();
	pool[0] = *GRAB(trace_sched_switch("bash", 100, 120, 1, "swapper/1", 0, 120));
	pool[1] = *GRAB(trace_sched_wakeup("kworker/0:1", 17, 120, 3));
	pool[2] = *GRAB(trace_utest_simple(123456789, 42));
	pool[3] = *GRAB(trace_utest_fn("request /index.html", UTEST_MODE_A));
	pool[4] = *GRAB(trace_irq_handler_entry(24, "eth0"));
	pool[5] = *GRAB(trace_utest_cond(5));
	pool[6] = *GRAB(trace_foo_bar_with_cond("cond", 4));
	pool[7] = *GRAB(trace_sched_process_exec("/usr/bin/true", 5, 5));
	header(&b, PAGE_SIZE);
	rec_clock(&b, TSC0, T0);
	for (k = 0; k < 2; k++) {
		uint32_t p = k ? 200 : 100;
		int j;

		rec_process(&b, p, 1, (uint32_t)k, k ? "server" : "client",
			    k ? "/usr/bin/server" : "/usr/bin/client");
		for (j = 0; j < 8; j++) {
			int m;

			for (m = 0; m < j; m++)
				if (pool[m].ev == pool[j].ev)
					break;
			if (m == j)
				rec_format(&b, p, (uint32_t)utrace_event_id(pool[j].ev), pool[j].ev);
		}
	}
	for (k = 0; k < 4; k++) {
		rec_thread(&b, pid[k], tid[k], k % 2 ? "worker" : "main");
		page_start(&pg[k], pid[k], tid[k], (uint32_t)k, seq[k]++, 0);
	}
	for (i = 0; i < n; i++) {
		struct cap *c = &pool[i % 8];

		k = (int)((i * 7 + i / 3) % 4);
		ts += 50 + i % 300;
		set_pid(c, tid[k]);
		if (!page_add(&pg[k], k >= 2 ? tsc_of(ts) : ts, c->rec, c->len, 0)) {
			page_write(&b, &pg[k], 0);
			page_start(&pg[k], pid[k], tid[k], (uint32_t)k, seq[k]++, 0);
			page_add(&pg[k], k >= 2 ? tsc_of(ts) : ts, c->rec, c->len, 0);
		}
	}
	for (k = 0; k < 4; k++)
		page_write(&b, &pg[k], 0);
	rec_clock(&b, TSC0 + 3 * (ts + 1000 - T0), ts + 1000);
	write_file(path, &b);
	free(b.p);
}

/* --- mkfile req --- */

/*
 * Five threads of two processes with the same ids (0..11): a begin or an
 * end on a thread chosen at random, so a pair often begins on one thread
 * and ends on another, an id is begun twice, or an end has no begin; the
 * times advance by 0 to 3 ns (ties across threads).  Thread 102's clock
 * runs back 700 ns at each of its pages (its events out of order against
 * the others); thread 201 loses 5 events before its third page.  Process
 * 200 is timed in TSC ticks.
 */
static void mk_req(const char *path)
{
	static const char *const paths[] = { "/a", "/bb", "/ccc/long/path/name", "" };
	struct buf b = { 0 };
	struct page pg[5];
	struct cap beg[4], end[4];
	uint32_t pid[5] = { 100, 100, 100, 200, 200 }, tid[5] = { 100, 101, 102, 200, 201 };
	uint64_t seq[5] = { 0 }, ts = T0, rnd = 12345;
	int64_t skew[5] = { 0 };
	int i, k, j;

	setup_events();
	for (j = 0; j < 4; j++) {
		beg[j] = *GRAB(trace_req_begin(0, paths[j]));
		end[j] = *GRAB(trace_req_end(0, paths[j], j % 2 ? 404 : 200));
	}
	header(&b, PAGE_SIZE);
	rec_clock(&b, TSC0, T0);
	for (k = 0; k < 2; k++) {
		uint32_t p = k ? 200 : 100;

		rec_process(&b, p, 1, (uint32_t)k, k ? "client" : "server",
			    k ? "/usr/bin/client" : "/usr/bin/server");
		rec_format(&b, p, (uint32_t)utrace_event_id(beg[0].ev), beg[0].ev);
		rec_format(&b, p, (uint32_t)utrace_event_id(end[0].ev), end[0].ev);
	}
	for (k = 0; k < 5; k++) {
		rec_thread(&b, pid[k], tid[k], k == 2 ? "skewed" : k % 2 ? "worker" : "main");
		page_start(&pg[k], pid[k], tid[k], (uint32_t)k % 2, seq[k]++, 0);
	}
	for (i = 0; i < 6000; i++) {
		struct cap *c;
		uint64_t t;
		int32_t id;

		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		k = (int)((rnd >> 33) % 5);
		j = (int)((rnd >> 40) % 4);
		id = (int32_t)((rnd >> 45) % 12);
		c = (rnd >> 50) % 2 ? &beg[j] : &end[j];
		ts += (rnd >> 52) % 4;
		memcpy(c->rec + 8, &id, 4);
		set_pid(c, tid[k]);
		t = (uint64_t)((int64_t)ts + skew[k]);
		if (!page_add(&pg[k], k >= 3 ? tsc_of(t) : t, c->rec, c->len, 0)) {
			page_write(&b, &pg[k], 0);
			if (k == 2)
				skew[k] -= 700;
			page_start(&pg[k], pid[k], tid[k], (uint32_t)(k + (int)seq[k]) % 2, seq[k],
				    k == 4 && seq[k] == 2 ? 5 : 0);
			seq[k]++;
			t = (uint64_t)((int64_t)ts + skew[k]);
			page_add(&pg[k], k >= 3 ? tsc_of(t) : t, c->rec, c->len, 0);
		}
	}
	for (k = 0; k < 5; k++)
		page_write(&b, &pg[k], 0);
	rec_clock(&b, TSC0 + 3 * (ts + 1000 - T0), ts + 1000);
	write_file(path, &b);
	free(b.p);
}

/* --- mkfile corrupt --- */

/*
 * The base of most corrupt files: one process, utest's formats, one page.
 * Offsets of the parts the cases change are kept here.
 */
struct base {
	struct buf b;
	size_t process, format_fn, thread, page, clock;
	size_t ev_simple, ev_fn, ev_cond;      /* event headers, file offsets */
	uint32_t s, c, f;
};

#define PAGE_EVENTS(off) ((off) + 16 + 32 + 16)  /* event data of a PAGE record */

static void base_head(struct base *x, uint32_t clock)
{
	x->s = (uint32_t)id_of("utest", "utest_simple");
	x->c = (uint32_t)id_of("utest", "utest_cond");
	x->f = (uint32_t)id_of("utest", "utest_fn");
	header(&x->b, PAGE_SIZE);
	x->clock = rec_clock(&x->b, TSC0, T0);
	x->process = rec_process(&x->b, 100, 1, clock, "victim", "/usr/bin/victim");
	rec_format(&x->b, 100, x->s, utrace_event_find("utest", "utest_simple"));
	rec_format(&x->b, 100, x->c, utrace_event_find("utest", "utest_cond"));
	x->format_fn = rec_format(&x->b, 100, x->f, utrace_event_find("utest", "utest_fn"));
	x->thread = rec_thread(&x->b, 100, 100, "victim");
}

static void base_page(struct base *x)
{
	struct page pg;
	uint32_t at;

	page_start(&pg, 100, 100, 0, 0, 0);
	at = pg.tail;
	add(&pg, T0 + 1000, GRAB(trace_utest_simple(1, 2)), x->s);
	x->ev_simple = at;
	at = pg.tail;
	add(&pg, T0 + 2000, GRAB(trace_utest_fn("strings", UTEST_MODE_A)), x->f);
	x->ev_fn = at;
	at = pg.tail;
	add(&pg, T0 + 3000, GRAB(trace_utest_cond(3)), x->c);
	x->ev_cond = at;
	x->page = page_write(&x->b, &pg, 0);
	x->ev_simple += PAGE_EVENTS(x->page);
	x->ev_fn += PAGE_EVENTS(x->page);
	x->ev_cond += PAGE_EVENTS(x->page);
}

static void base_make(struct base *x)
{
	memset(x, 0, sizeof(*x));
	base_head(x, 0);
	base_page(x);
	rec_clock(&x->b, TSC0 + 3000000000ULL, T0 + 1000000000ULL);
}

static FILE *manifest;
static const unsigned char zeros[4096];
static const char *corrupt_dir;

static void emit(const char *name, const struct buf *b, size_t len, int status,
		 const char *words)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.dat", corrupt_dir, name);
	{
		struct buf t = { b->p, len, len };

		write_file(path, &t);
	}
	fprintf(manifest, "%s.dat %d %s\n", name, status, words);
}

/* A page holding one event of 'rec'/'len' as a record of format 'fmt'
 * given as text (for the print fmt cases). */
static const char common_fields[] =
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

static void custom_case(const char *name, const char *common, const char *fields,
			const char *print, const void *rec, uint32_t len, int status,
			const char *words)
{
	struct base x;
	struct page pg;
	char *text;
	unsigned char r[512];

	memset(&x, 0, sizeof(x));
	base_head(&x, 0);
	if (asprintf(&text, "name: custom\nID: 900\nformat:\n%s\n%s\nprint fmt: %s\n",
		     common ? common : common_fields, fields, print) < 0)
		die("out of memory");
	rec_format_text(&x.b, 100, 900, "custom", text);
	free(text);
	memcpy(r, rec, len);
	r[0] = 900 & 0xff;
	r[1] = 900 >> 8;
	page_start(&pg, 100, 100, 0, 0, 0);
	page_add(&pg, T0 + 1000, r, len, 0);
	page_write(&x.b, &pg, 0);
	emit(name, &x.b, x.b.len, status, words);
	free(x.b.p);
}

/*
 * Kernel events (KFORMAT, KPAGE, KTASK): the base, then the format of a
 * kernel event "sched:kev_switch" (kernel id 372), a page of CPU 1 with
 * two of its events between the base's three (common_pid 4242, a task
 * named "kworker/1:2" of thread group 4240), and the task.  Offsets of
 * the parts the cases change are kept.
 */
#define KID 372

struct kbase {
	struct base x;
	size_t kformat, kpage, ktask;
	uint32_t plen;                   /* the KPAGE's page bytes */
};

static const char kformat_text[] =
	"name: kev_switch\nID: 372\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:int next_pid;\toffset:8;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"next_pid=%d\", REC->next_pid\n";

static size_t rec_kformat(struct buf *b, uint32_t id, const char *sys, const char *text)
{
	struct { uint32_t id, reserved; } h = { id, 0 };
	struct buf t = { 0 };
	size_t off;

	put(&t, sys, strlen(sys) + 1);
	put(&t, text, strlen(text) + 1);
	off = record(b, 11, &h, sizeof(h), t.p, t.len);
	free(t.p);
	return off;
}

static size_t rec_ktask(struct buf *b, uint32_t pid, uint32_t tgid, const char *comm)
{
	struct { uint32_t pid, tgid; } h = { pid, tgid };

	return record(b, 13, &h, sizeof(h), comm, strlen(comm) + 1);
}

/* The page cut after its data (as the recorder writes it), with the
 * kernel's stored count of missed events after the data if 'stored'. */
static size_t kpage_write(struct buf *b, struct page *pg, uint32_t cpu, uint64_t seq,
			  uint64_t stored, uint32_t *plen)
{
	struct { uint32_t cpu, reserved; uint64_t seq; } h = { cpu, 0, seq };
	uint64_t commit = pg->tail | (stored ? 3ULL << 30 : 0);

	memcpy(pg->data, &pg->first, 8);
	memcpy(pg->data + 8, &commit, 8);
	*plen = 16 + pg->tail;
	if (stored) {
		memcpy(pg->data + 16 + pg->tail, &stored, 8);
		*plen += 8;
	}
	return record(b, 12, &h, sizeof(h), pg->data, *plen);
}

static void kbase_make(struct kbase *k, uint64_t stored)
{
	unsigned char r[12] = { KID & 0xff, KID >> 8, 0, 0 };
	uint32_t v;
	struct page pg;

	memset(k, 0, sizeof(*k));
	base_head(&k->x, 0);
	k->kformat = rec_kformat(&k->x.b, KID, "sched", kformat_text);
	base_page(&k->x);
	page_start(&pg, 0, 0, 1, 0, 0);
	v = 4242;
	memcpy(r + 4, &v, 4);
	v = 7;
	memcpy(r + 8, &v, 4);
	page_add(&pg, T0 + 1500, r, sizeof(r), 0);
	v = 8;
	memcpy(r + 8, &v, 4);
	page_add(&pg, T0 + 2500, r, sizeof(r), 0);
	k->kpage = kpage_write(&k->x.b, &pg, 1, 0, stored, &k->plen);
	k->ktask = rec_ktask(&k->x.b, 4242, 4240, "kworker/1:2");
	rec_clock(&k->x.b, TSC0 + 3000000000ULL, T0 + 1000000000ULL);
}

#define KPAGE_DATA(k) ((k).kpage + 16 + 16)  /* the KPAGE's page bytes */

static void mk_corrupt_kernel(void)
{
	struct kbase k;

#define KCASE(name, status, words, ...)					\
	do {								\
		kbase_make(&k, 0);					\
		__VA_ARGS__;						\
		emit(name, &k.x.b, k.x.b.len, status, words);		\
		free(k.x.b.p);						\
	} while (0)

	KCASE("kernel-valid", 0, "-");
	KCASE("kernel-missed-stored", 0, "-", free(k.x.b.p); kbase_make(&k, 5));
	KCASE("kpage-record-too-short", 1, "KPAGE record of 8 bytes is shorter than 16",
	      record(&k.x.b, 12, zeros, 8, NULL, 0));
	KCASE("kpage-page-too-short", 1, "KPAGE record: a page of 8 bytes",
	      record(&k.x.b, 12, "\1\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0", 16, zeros, 8));
	KCASE("kpage-cpu-too-big", 1, "CPU 9000 is not below 8192",
	      set32(&k.x.b, k.kpage + 16, 9000));
	KCASE("kpage-commit-past-page", 1, "page commit",
	      set64(&k.x.b, KPAGE_DATA(k) + 8, k.plen));
	KCASE("kpage-event-past-commit", 1, "runs past the page commit",
	      set64(&k.x.b, KPAGE_DATA(k) + 8, get64(&k.x.b, KPAGE_DATA(k) + 8) - 4));
	KCASE("kpage-event-shorter-than-common-fields", 1, "shorter than the common fields",
	      set32(&k.x.b, KPAGE_DATA(k) + 16, 1 | get32(&k.x.b, KPAGE_DATA(k) + 16) >> 5 << 5));
	KCASE("kpage-stored-count-past-page", 0, "-",
	      set64(&k.x.b, KPAGE_DATA(k) + 8, get64(&k.x.b, KPAGE_DATA(k) + 8) | 3ULL << 30));
	KCASE("kpage-seq-twice", 1, "KPAGE record: page 0 of CPU 1 appears twice",
	      record(&k.x.b, 12, k.x.b.p + k.kpage + 16, 16 + k.plen, NULL, 0));
	KCASE("kformat-record-too-short", 1, "KFORMAT record of 4 bytes is shorter than 8",
	      record(&k.x.b, 11, zeros, 4, NULL, 0));
	KCASE("kformat-text-without-nul", 1, "KFORMAT record: format text has no NUL",
	      record(&k.x.b, 11, "\x2a\0\0\0\0\0\0\0", 8, "sched\0name: x", 13));
	KCASE("kformat-id-mismatch", 1, "differs from the format text's ID",
	      set32(&k.x.b, k.kformat + 16, KID + 1));
	KCASE("kformat-second-different", 1, "second, different format for kernel event id 372",
	      char *t2 = format_with_id(utrace_event_find("utest", "utest_cond"), KID);
	      rec_kformat(&k.x.b, KID, "sched", t2); free(t2));
	KCASE("kernel-event-unknown-id", 1, "kernel event of pid 4242 has no KFORMAT for event id 999",
	      memcpy(k.x.b.p + KPAGE_DATA(k) + 16 + 4, "\xe7\x03", 2));
	KCASE("ktask-record-too-short", 1, "KTASK record of 4 bytes is shorter than 8",
	      record(&k.x.b, 13, zeros, 4, NULL, 0));
	KCASE("ktask-comm-without-nul", 1, "KTASK record: comm has no NUL",
	      record(&k.x.b, 13, "\1\0\0\0\1\0\0\0", 8, "abc", 3));
#undef KCASE
}

static void mk_corrupt(const char *dir)
{
	char path[4096];
	struct base x;
	size_t n;

	corrupt_dir = dir;
	mkdir(dir, 0777);
	snprintf(path, sizeof(path), "%s/MANIFEST", dir);
	manifest = fopen(path, "w");
	if (!manifest)
		die("cannot write '%s'", path);
	setup_events();

#define CASE(name, status, words, ...)					\
	do {								\
		base_make(&x);						\
		__VA_ARGS__;						\
		emit(name, &x.b, x.b.len, status, words);		\
		free(x.b.p);						\
	} while (0)

	/* the base itself reads cleanly */
	CASE("valid", 0, "-");

	/* the header */
	CASE("empty", 1, "empty file", x.b.len = 0);
	CASE("truncated-header", 1, "cut short in its header", x.b.len = 40);
	CASE("bad-magic", 1, "not a utrace trace file", x.b.p[0] = 'X');
	CASE("bad-version", 1, "version 2", set32(&x.b, 8, 2));
	CASE("big-endian", 1, "big-endian", set32(&x.b, 20, 0x04030201));
	CASE("bad-byte-order-word", 1, "byte-order", set32(&x.b, 20, 0x12345678));
	CASE("header-size-too-small", 1, "header size 32", set32(&x.b, 12, 32));
	CASE("header-size-past-eof", 1, "header size", set32(&x.b, 12, 1u << 30));
	CASE("zero-page-size", 1, "page size 0", set32(&x.b, 16, 0));
	CASE("huge-page-size", 1, "page size 1073741824", set32(&x.b, 16, 1u << 30));
	CASE("page-size-not-power-of-two", 1, "page size 3000", set32(&x.b, 16, 3000));
	CASE("long-size-4", 1, "long size 4", set32(&x.b, 24, 4));

	/* record framing */
	CASE("record-size-past-eof", 1, "runs past the end of the file",
	     set64(&x.b, x.page + 8, 1ULL << 40));
	CASE("record-size-overflow", 1, "runs past the end of the file",
	     set64(&x.b, x.page + 8, UINT64_MAX - 7));
	CASE("cut-short-in-page", 0, "file cut short", x.b.len = x.page + 1000);
	CASE("cut-short-in-record-header", 0, "file cut short",
	     put(&x.b, "\x05\0\0\0\0\0", 6));
	CASE("unknown-record-type", 0, "-",
	     set32(&x.b, x.thread, 77));
	CASE("page-record-too-short", 1, "shorter than 32 + the page size",
	     record(&x.b, 5, "\x64\0\0\0\x64\0\0\0", 8, zeros, 132));
	CASE("clock-record-too-short", 1, "CLOCK record of 8 bytes",
	     record(&x.b, 1, zeros, 8, NULL, 0));
	CASE("extra-payload-bytes", 0, "-",
	     record(&x.b, 7, "\x64\0\0\0\0\0\0\0", 8, zeros, 32));

	/* strings */
	CASE("process-comm-without-nul", 1, "comm has no NUL",
	     record(&x.b, 2, "\x65\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0", 16, "abc", 3));
	CASE("process-without-exe", 1, "exe has no NUL",
	     record(&x.b, 2, "\x65\0\0\0\1\0\0\0\0\0\0\0\0\0\0\0", 16, "abc", 4));
	CASE("thread-comm-without-nul", 1, "comm has no NUL",
	     record(&x.b, 4, "\x64\0\0\0\x64\0\0\0", 8, "vic", 3));
	CASE("format-text-without-nul", 1, "format text has no NUL",
	     record(&x.b, 3, "\x64\0\0\0\x32\0\0\0", 8, "utest\0name: x", 13));

	/* process and format records */
	CASE("unknown-clock", 1, "unknown clock 7", set32(&x.b, x.process + 16 + 8, 7));
	CASE("page-before-process", 1, "comes before its PROCESS record",
	     set32(&x.b, x.page + 16, 555));
	CASE("format-id-too-big", 1, "does not fit common_type",
	     set32(&x.b, x.format_fn + 16 + 4, 70000));
	CASE("format-id-mismatch", 1, "differs from the format text's ID",
	     set32(&x.b, x.format_fn + 16 + 4, x.f + 50));
	CASE("format-without-name-line", 1, "does not begin with",
	     memcpy(x.b.p + x.format_fn + 16 + 8 + strlen("utest") + 1, "nome", 4));
	CASE("format-second-different", 1, "second, different format",
	     rec_format(&x.b, 100, x.s, utrace_event_find("utest", "utest_cond")));
	CASE("unknown-event-id", 1, "no FORMAT for event id 999",
	     memcpy(x.b.p + x.ev_cond + 4, "\xe7\x03", 2));

	/* clocks */
	CASE("tsc-without-clock-records", 1, "no CLOCK record",
	     set32(&x.b, x.process + 16 + 8, 1); set32(&x.b, x.clock, 99);
	     set32(&x.b, x.b.len - 32, 99));
	base_make(&x);
	set32(&x.b, x.process + 16 + 8, 1);
	n = x.b.len;
	set32(&x.b, n - 32, 99);  /* the last CLOCK record: now of an unknown type */
	emit("tsc-one-clock-record", &x.b, n, 1, "one CLOCK record");
	free(x.b.p);
	base_make(&x);
	set32(&x.b, x.process + 16 + 8, 1);
	set64(&x.b, x.b.len - 32 + 16, TSC0);
	emit("tsc-same-clock-values", &x.b, x.b.len, 1, "same TSC value");
	free(x.b.p);

	/* CALIBX (the trace clocks other than mono) */
	CASE("calibx-index-too-big", 1, "CALIBX record: point 5000 of pid 100 is past",
	     record(&x.b, 14, "\x64\0\0\0\x88\x13\0\0", 8, zeros, 32));
	CASE("calibx-record-too-short", 1, "CALIBX record of 8 bytes",
	     record(&x.b, 14, "\x64\0\0\0\0\0\0\0", 8, NULL, 0));
	CASE("calibx-without-calib", 0, "-",
	     record(&x.b, 14, "\x64\0\0\0\0\0\0\0", 8, zeros, 32));
	CASE("unknown-trace-clock", 0, "-", set32(&x.b, x.process + 16 + 12, 99));

	/* pages */
	CASE("page-commit-too-big", 1, "page commit 4096 exceeds",
	     set64(&x.b, x.page + 16 + 32 + 8, PAGE_SIZE));
	CASE("event-length-past-commit", 1, "runs past the page commit",
	     set64(&x.b, x.page + 16 + 32 + 8, get64(&x.b, x.page + 16 + 32 + 8) - 4));
	CASE("event-header-cut-by-commit", 1, "header cut by the page commit",
	     set64(&x.b, x.page + 16 + 32 + 8, get64(&x.b, x.page + 16 + 32 + 8) + 2));
	CASE("long-event-length-word-below-4", 1, "length word 2",
	     set32(&x.b, x.ev_fn, 0); set32(&x.b, x.ev_fn + 4, 2));
	CASE("padding-length-bad", 1, "padding at offset",
	     set32(&x.b, x.ev_simple, 29 | 1 << 5); set32(&x.b, x.ev_simple + 4, 6));
	CASE("event-shorter-than-common-fields", 1, "shorter than the common fields",
	     set32(&x.b, x.ev_cond, 1));
	CASE("page-seq-twice", 1, "appears twice", base_page(&x));
	CASE("missed-events-without-count", 0, "-",
	     set64(&x.b, x.page + 16 + 32 + 8,
		   get64(&x.b, x.page + 16 + 32 + 8) | 1ULL << 31));
	CASE("lost-record-of-thread-0", 0, "-", rec_lost(&x.b, 100, 0, 17));
	CASE("lost-before-first-page", 0, "-", set64(&x.b, x.page + 16 + 24, 3));

	/* records against their formats */
	/* utest_simple's 20 bytes (a at 8, b at 16) cut to 12, padding after */
	CASE("record-shorter-than-fields", 1, "ends before field",
	     n = 4 + (get32(&x.b, x.ev_simple) & 31) * 4;
	     set32(&x.b, x.ev_simple, 3 | get32(&x.b, x.ev_simple) >> 5 << 5);
	     set32(&x.b, x.ev_simple + 16, 29 | 1 << 5);
	     set32(&x.b, x.ev_simple + 20, (uint32_t)n - 16 - 4));
	{
		/* utest_fn: common (8), __data_loc s at 8, mode at 12, __data_loc arr at 16 */
		CASE("data-loc-out-of-record", 1, "runs past the record's end",
		     set32(&x.b, x.ev_fn + 4 + 8, 0x0007fff0));
		CASE("string-without-nul", 1, "has no NUL inside",
		     n = get32(&x.b, x.ev_fn + 4 + 8);
		     x.b.p[x.ev_fn + 4 + (n & 0xffff) + (n >> 16) - 1] = 'x');
	}

	/* formats libtraceevent cannot parse, or cannot print safely */
	CASE("format-unparsable", 1, "libtraceevent cannot use the format",
	     memcpy(x.b.p + x.format_fn + 16 + 8 + 6 + 40, "\x01\x02garbage{{{{", 12));
	{
		const char *f1 = "\tfield:int n;\toffset:8;\tsize:4;\tsigned:1;\n"
				 "\tfield:int arr[4];\toffset:12;\tsize:16;\tsigned:1;\n"
				 "\tfield:int b;\toffset:28;\tsize:4;\tsigned:1;\n"
				 "\tfield:__data_loc char[] s;\toffset:32;\tsize:4;\tsigned:1;\n"
				 "\tfield:__rel_loc char[] r;\toffset:36;\tsize:4;\tsigned:1;\n";
		unsigned char r[64] = { 0 };
		uint32_t v;

		v = 1000;		/* n */
		memcpy(r + 8, &v, 4);
		v = 0;			/* b */
		memcpy(r + 28, &v, 4);
		v = 3u << 16 | 44;	/* s: "ab\0" at 44 */
		memcpy(r + 32, &v, 4);
		memcpy(r + 44, "ab", 3);
		v = 2u << 16 | 8;	/* r: relative, at 40 + 8 = 48 */
		memcpy(r + 36, &v, 4);
		memcpy(r + 48, "c", 2);
		custom_case("custom-valid", NULL, f1, "\"n=%d s=%s\", REC->n, __get_str(s)",
			    r, 52, 0, "-");
		custom_case("print-hex-of-non-field", NULL, f1, "\"%s\", __print_hex(5, 4)",
			    r, 52, 1, "cannot be printed safely");
		custom_case("print-array-count-past-record", NULL, f1,
			    "\"%s\", __print_array(REC->arr, REC->n, 4)", r, 52, 1,
			    "__print_array() of 1000 elements");
		custom_case("print-hex-length-past-record", NULL, f1,
			    "\"%s\", __print_hex(REC->arr, REC->n)", r, 52, 1,
			    "__print_hex() of 1000 bytes");
		custom_case("print-fmt-division-by-zero", NULL, f1, "\"%d\", REC->n / REC->b",
			    r, 52, 1, "divides by zero");
		custom_case("print-fmt-modulo-by-zero", NULL, f1, "\"%d\", REC->n % REC->b",
			    r, 52, 1, "divides by zero");
		custom_case("print-fmt-index-past-record", NULL, f1, "\"%d\", REC->arr[REC->n]",
			    r, 52, 1, "reads past the record's end");
		/* 12 + 4 * 0xfffffffc is -4 in 32 bits: libtraceevent's own
		 * check sees -4 + 4 <= 52 and reads before the record */
		v = 0xfffffffc;
		memcpy(r + 8, &v, 4);
		custom_case("print-fmt-index-wraps", NULL, f1, "\"%d\", REC->arr[REC->n]",
			    r, 52, 1, "reads past the record's end");
		v = 0xfffffffd;		/* 12 + 4 * n is 0 in 32 bits: common_type */
		memcpy(r + 8, &v, 4);
		custom_case("print-fmt-index-wraps-into-record", NULL, f1,
			    "\"%d\", REC->arr[REC->n]", r, 52, 0, "-");
		v = 1000;
		memcpy(r + 8, &v, 4);
		custom_case("get-str-of-int-field-empty", NULL, f1, "\"%s\", __get_str(n)",
			    r, 52, 0, "-");
		v = 2u << 16 | 44;	/* n as a __data_loc: "ab", no NUL inside */
		memcpy(r + 8, &v, 4);
		custom_case("get-str-of-int-field", NULL, f1, "\"%s\", __get_str(n)",
			    r, 52, 1, "has no NUL");
		custom_case("get-cpumask-of-unknown-field", NULL, f1, "\"%s\", __get_cpumask(nope)",
			    r, 52, 1, "cannot");
		custom_case("rel-loc-dynamic-array-len", NULL, f1,
			    "\"%d\", __get_dynamic_array_len(r)", r, 52, 1,
			    "cannot be printed safely");
		custom_case("rel-loc-string", NULL, f1, "\"%s\", __get_rel_str(r)", r, 52, 0, "-");
		custom_case("common-type-not-at-offset-0",
			    "\tfield:unsigned short common_type;\toffset:6;\tsize:2;\tsigned:0;\n"
			    "\tfield:int common_pid;\toffset:0;\tsize:4;\tsigned:1;\n",
			    "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n",
			    "\"%d\", REC->x", r, 52, 1, "common_type");
		custom_case("negative-field-offset", NULL,
			    "\tfield:int x;\toffset:-4;\tsize:4;\tsigned:1;\n",
			    "\"%d\", REC->x", r, 52, 1, "cannot");
		custom_case("field-past-record", NULL,
			    "\tfield:int x;\toffset:600;\tsize:4;\tsigned:1;\n",
			    "\"%d\", REC->x", r, 52, 1, "ends before field");
		custom_case("print-fmt-too-long-format", NULL, f1,
			    "\"%000000000000000000000000000000000000000000000000d\", REC->n",
			    r, 52, 1, "cannot");
		/* widths: from the record, 0 .. 4096; written, no more */
		v = 7;
		memcpy(r + 8, &v, 4);
		custom_case("print-fmt-width-from-record", NULL, f1,
			    "\"[%*d]\", REC->n, REC->b", r, 52, 0, "-");
		v = (uint32_t)-5;
		memcpy(r + 28, &v, 4);
		custom_case("print-fmt-negative-width-from-record", NULL, f1,
			    "\"[%*s]\", REC->b, __get_str(s)", r, 52, 1,
			    "field width -5 is not from 0 to 4096");
		v = 100000000;
		memcpy(r + 28, &v, 4);
		custom_case("print-fmt-huge-width-from-record", NULL, f1,
			    "\"[%.*d]\", REC->b, REC->n", r, 52, 1,
			    "field width 100000000 is not from 0 to 4096");
		v = 0;
		memcpy(r + 28, &v, 4);
		custom_case("print-fmt-huge-written-width", NULL, f1,
			    "\"[%999999999d]\", REC->n", r, 52, 1, "over 4096");

		/* libtraceevent 1.7.1's parser dereferences NULL on these */
		custom_case("print-symbolic-of-unknown-field", NULL, f1,
			    "\"%s\", __print_symbolic(REC->nope, { 1, \"a\" })", r, 52, 1,
			    "libtraceevent crashes on it");
		custom_case("print-flags-of-unknown-field", NULL, f1,
			    "\"%s\", __print_flags(REC->nope, \"|\", { 1, \"a\" })", r, 52, 1,
			    "libtraceevent crashes on it");
		custom_case("print-fmt-function-call", NULL, f1, "\"%d\", nosuchfunc(REC->n)",
			    r, 52, 1, "libtraceevent cannot use");
	}
	mk_corrupt_kernel();
	fclose(manifest);
}

/* --- mkfile odd --- */

/*
 * Names and values that exporters must carry through unharmed: a system
 * name with quotes and SQL in it, two systems whose names differ only in
 * a character a table name cannot hold, fields named as SQL and TSDL
 * keywords and as the exports' own columns, the extremes of each integer
 * size, strings with quotes, control bytes and bytes that are not UTF-8;
 * two threads on two CPUs, events lost between pages and after the last.
 */
static const char odd_fields[] =
	"\tfield:signed char neg8;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield:unsigned char u8;\toffset:9;\tsize:1;\tsigned:0;\n"
	"\tfield:short select;\toffset:10;\tsize:2;\tsigned:1;\n"
	"\tfield:int string;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:long long from;\toffset:16;\tsize:8;\tsigned:1;\n"
	"\tfield:unsigned long long u64max;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long long pid;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc char[] text;\toffset:40;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc short[] vals;\toffset:44;\tsize:4;\tsigned:1;\n"
	"\tfield:char name[8];\toffset:48;\tsize:8;\tsigned:0;\n"
	"\tfield:int time_ns;\toffset:56;\tsize:4;\tsigned:1;\n";

static const char odd_system[] = "it's\"; DROP TABLE events; --";

static uint32_t odd_record(unsigned char *r, int k)
{
	static const char *const texts[] = {
		"quote\" apostrophe' backslash\\ tab\t newline\n end",
		"\xff\xfe not UTF-8 \x01\x7f \xc3\xa9 is",
		"",
	};
	const char *text = texts[k % 3];
	int8_t n8 = k ? -128 : 127;
	uint8_t ub = 255;
	int16_t sel = (int16_t)(k ? -32768 : 32767), vals[3] = { -1, 32767, -32768 };
	int32_t str = k ? INT32_MIN : INT32_MAX, tn = 7 - k;
	int64_t from = k ? INT64_MIN : INT64_MAX;
	uint64_t um = UINT64_MAX - (uint64_t)k, pid = 0x123456789abcdef0ULL;
	uint32_t tl = (uint32_t)strlen(text) + 1, loc;

	memset(r, 0, 200);
	memcpy(r + 8, &n8, 1);
	memcpy(r + 9, &ub, 1);
	memcpy(r + 10, &sel, 2);
	memcpy(r + 12, &str, 4);
	memcpy(r + 16, &from, 8);
	memcpy(r + 24, &um, 8);
	memcpy(r + 32, &pid, 8);
	loc = 60 | tl << 16;
	memcpy(r + 40, &loc, 4);
	memcpy(r + 60, text, tl);
	loc = (60 + tl) | (uint32_t)sizeof(vals) << 16;
	memcpy(r + 44, &loc, 4);
	memcpy(r + 60 + tl, vals, sizeof(vals));
	memcpy(r + 48, k % 2 ? "ab\"c'd\\e" : "x", k % 2 ? 8 : 2);
	memcpy(r + 56, &tn, 4);
	return 60 + tl + (uint32_t)sizeof(vals);
}

static char *odd_format(const char *name, uint32_t id, const char *fields, const char *print)
{
	char *text;

	if (asprintf(&text, "name: %s\nID: %u\nformat:\n%s\n%s\nprint fmt: %s\n", name, id,
		     common_fields, fields, print) < 0)
		die("out of memory");
	return text;
}

static void mk_odd(const char *path)
{
	static const char small[] = "\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\n";
	struct buf b = { 0 };
	struct page pg;
	unsigned char r[256];
	char *t;
	uint32_t len;
	int k;

	header(&b, PAGE_SIZE);
	rec_process(&b, 500, 1, 0, "odd 'app\"", "/usr/bin/odd");
	t = odd_format("weird", 10, odd_fields, "\"n=%d s=%s\", REC->string, __get_str(text)");
	rec_format_text(&b, 500, 10, odd_system, t);
	free(t);
	t = odd_format("x", 11, small, "\"v=%d\", REC->v");
	rec_format_text(&b, 500, 11, "odd-sys", t);
	free(t);
	t = odd_format("x", 12, small, "\"v=%d\", REC->v");
	rec_format_text(&b, 500, 12, "odd_sys", t);
	free(t);
	rec_thread(&b, 500, 500, "odd-main");
	rec_thread(&b, 500, 501, "odd;worker");

	/* thread 500 on CPU 0: a page, then another after 4 lost events */
	page_start(&pg, 500, 500, 0, 0, 0);
	for (k = 0; k < 3; k++) {
		len = odd_record(r, k);
		r[0] = 10;
		page_add(&pg, T0 + 1000 + (uint64_t)k * 100, r, len, 0);
	}
	page_write(&b, &pg, 0);
	page_start(&pg, 500, 500, 0, 1, 4);
	memset(r, 0, 16);
	r[0] = 11;
	r[8] = 1;
	page_add(&pg, T0 + 5000, r, 12, 0);
	r[0] = 12;
	r[8] = 2;
	page_add(&pg, T0 + 5001, r, 12, 0);
	page_write(&b, &pg, 0);

	/* thread 501 on CPU 1, then 6 events lost after its last */
	page_start(&pg, 500, 501, 1, 0, 0);
	for (k = 0; k < 3; k++) {
		len = odd_record(r, 2 - k);
		r[0] = 10;
		page_add(&pg, T0 + 1050 + (uint64_t)k * 100, r, len, 0);
	}
	page_write(&b, &pg, 0);
	rec_lost(&b, 500, 501, 6);
	write_file(path, &b);
	free(b.p);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "basic"))
		mk_basic(argv[2]);
	else if (argc == 4 && !strcmp(argv[1], "sample"))
		mk_sample(argv[2], argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "big"))
		mk_big(argv[2], strtoul(argv[3], NULL, 0));
	else if (argc == 3 && !strcmp(argv[1], "req"))
		mk_req(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "odd"))
		mk_odd(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "corrupt"))
		mk_corrupt(argv[2]);
	else
		die("usage: mkfile basic FILE | sample FILE EXPECTED | big FILE N | "
		    "req FILE | odd FILE | corrupt DIR");
	return 0;
}
