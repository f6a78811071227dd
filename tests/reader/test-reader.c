/* SPDX-License-Identifier: MIT */
/*
 * The reader library on the files of tests/reader/mkfile.c: what it finds
 * in them, its TSC conversion, and its pages read event for event as
 * libtraceevent's kbuffer reads them (the format doc's promise that a page
 * can be handed to kbuffer as it is).
 *
 * READER_BASIC and READER_SAMPLE name the files (meson makes them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <kbuffer.h>

#include "file-reader.h"
#include "pool.h"
#include "tsc-time.h"
#include "test.h"
#include "traceline.h"

static const char *path_of(const char *var)
{
	const char *p = getenv(var);

	if (!p)
		TEST_FAIL("%s is not set (run through meson test)", var);
	return p;
}

static struct utrace__tf *open_ok(const char *var)
{
	struct utrace__tf *tf;
	int r = utrace__tf_open(path_of(var), &tf);

	CHECK(tf != NULL);
	if (r)
		TEST_FAIL("%s: %s", path_of(var), utrace__tf_error(tf));
	CHECK(utrace__tf_warning(tf) == NULL);
	return tf;
}

TEST(tsc_conversion)
{
	/* the doc's formula: ns0 + (tsc - tsc0) * (ns1 - ns0) / (tsc1 - tsc0) */
	CHECK_INT(utrace__tf_tsc_to_ns(1000, 1000, 5000, 4000, 6000), ==, 5000);
	CHECK_INT(utrace__tf_tsc_to_ns(4000, 1000, 5000, 4000, 6000), ==, 6000);
	CHECK_INT(utrace__tf_tsc_to_ns(1002, 1000, 5000, 4000, 6000), ==, 5000);
	CHECK_INT(utrace__tf_tsc_to_ns(1003, 1000, 5000, 4000, 6000), ==, 5001);
	/* before the first point: truncated toward zero, as 128-bit C does */
	CHECK_INT(utrace__tf_tsc_to_ns(998, 1000, 5000, 4000, 6000), ==, 5000);
	CHECK_INT(utrace__tf_tsc_to_ns(997, 1000, 5000, 4000, 6000), ==, 4999);
	CHECK_INT(utrace__tf_tsc_to_ns(0, 1000000, 5, 4000000, 6000005), ==, 0);
	/* big values: no 64-bit overflow in the product */
	CHECK(utrace__tf_tsc_to_ns(1ULL << 62, 0, 0, 3000000000ULL, 1000000000ULL) ==
	      (uint64_t)(((unsigned __int128)1 << 62) / 3));
	CHECK(utrace__tf_tsc_to_ns(UINT64_MAX, 0, 0, 1, 2) == UINT64_MAX);
	/* points given the other way round */
	CHECK_INT(utrace__tf_tsc_to_ns(2500, 4000, 6000, 1000, 5000), ==, 5500);
	{
		uint64_t tsc0 = 123456789012345ULL, ns0 = 987654321098ULL;
		uint64_t tsc1 = tsc0 + 29876543210ULL, ns1 = ns0 + 10000000000ULL;
		uint64_t t;

		for (t = tsc0 - 1000000; t < tsc1 + 1000000000; t += 77777777) {
			__int128 want = (__int128)ns0 + ((__int128)t - (__int128)tsc0) *
				((__int128)ns1 - (__int128)ns0) /
				((__int128)tsc1 - (__int128)tsc0);

			CHECK(utrace__tf_tsc_to_ns(t, tsc0, ns0, tsc1, ns1) == (uint64_t)want);
		}
	}
}

/* Points of a clock whose TSC runs at 3 GHz with a rate error that
 * changes (an NTP slew), read with up to 60 ns of jitter. */
static size_t make_points(struct utrace_calib_point *pt, size_t n)
{
	static const uint64_t age_ms[] = { 0, 20, 100, 300, 1000, 2000, 3000, 4000,
					   5000, 6000, 7000, 8000, 9000 };
	uint64_t seed = 12345;
	size_t i;

	for (i = 0; i < n && i < sizeof(age_ms) / sizeof(age_ms[0]); i++) {
		uint64_t ns = 1000000000000ULL + age_ms[i] * 1000000;
		/* 3 ticks a ns, 20 ppm fast after 4 s */
		uint64_t tsc = 5000000000ULL + (ns - 1000000000000ULL) * 3 +
			(age_ms[i] > 4000 ? (age_ms[i] - 4000) * 60 : 0);

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		pt[i].tsc = tsc;
		pt[i].ns = ns + (seed >> 33) % 60;
	}
	return i;
}

/* The multiplication of utrace__tsc_time() gives the division's integer:
 * random segments (rates of 0.05 to 1 ns a tick) and times, near and far. */
TEST(tsc_time_exact)
{
	struct utrace_calib_point pt[2];
	struct utrace__tsc_seg seg[2];
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t i, bad = 0;

	for (i = 0; i < 200000; i++) {
		uint64_t tsc0, dd, dn, dt, want, got;
		uint32_t h = 0;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		tsc0 = seed >> 8;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		dd = 1 + (seed >> (20 + (seed & 31)));
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		dn = dd - 1 - (seed % dd) * (seed >> 63) / 20 - (seed & 7) % dd;
		if (dn >= dd || !dn)
			dn = dd > 1 ? dd - 1 : 1;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		dt = i % 3 == 0 ? seed >> (seed & 63) : (seed % (dd * 4 + 1));
		pt[0] = (struct utrace_calib_point){ .tsc = tsc0, .ns = 1000 };
		pt[1] = (struct utrace_calib_point){ .tsc = tsc0 + dd, .ns = 1000 + dn };
		if (pt[1].tsc <= pt[0].tsc || utrace__tsc_chain(pt, 2, seg) != 2)
			continue;
		if (tsc0 + dt < tsc0)
			dt = UINT64_MAX - tsc0;
		want = utrace__tf_tsc_to_ns(tsc0 + dt, seg[0].tsc0, seg[0].ns0, seg[0].tsc1,
					    seg[0].ns1);
		got = utrace__tsc_time(seg, 1, tsc0 + dt, &h);
		/* and the inline one the reader uses, hint set and not */
		if (got == want && utrace__tsc_time_hint(seg, 1, tsc0 + dt, &h) != want)
			got = ~want;
		h = 5;
		if (got == want && utrace__tsc_time_hint(seg, 1, tsc0 + dt, &h) != want)
			got = ~want;
		if (got != want && bad++ < 5)
			fprintf(stderr, "# tsc0 %llu dd %llu dn %llu dt %llu: %llu, not %llu\n",
				(unsigned long long)tsc0, (unsigned long long)dd,
				(unsigned long long)dn, (unsigned long long)dt,
				(unsigned long long)got, (unsigned long long)want);
	}
	CHECK_INT(bad, ==, 0);
}

TEST(tsc_chain)
{
	struct utrace_calib_point pt[13];
	struct utrace__tsc_seg all[13], part[13];
	size_t n = make_points(pt, 13), k, m;
	uint32_t h1 = 0, h2 = 0;
	uint64_t t, prev = 0;

	CHECK_INT(utrace__tsc_chain(pt, 1, all), ==, 0);
	CHECK_INT(utrace__tsc_chain(pt, n, all), ==, n);
	/* exact at the first two points, continuous at every point */
	CHECK(utrace__tsc_time(all, n, pt[0].tsc, &h1) == pt[0].ns);
	CHECK(utrace__tsc_time(all, n, pt[1].tsc, &h1) == pt[1].ns);
	for (k = 1; k < n; k++)
		CHECK(utrace__tsc_time(all, n, pt[k].tsc - 1, &h1) <= all[k].ns0);
	/* Never back, and a point added later never moves an earlier time:
	 * with only the points up to the time (and the second), the same. */
	for (t = pt[0].tsc; t < pt[n - 1].tsc + 3000000000ULL; t += 999983) {
		uint64_t v = utrace__tsc_time(all, n, t, &h1);
		uint32_t h3 = (uint32_t)((t / 999983) % (n + 1));   /* right or not */

		CHECK(utrace__tsc_time_hint(all, n, t, &h3) == v);
		CHECK(v >= prev);
		prev = v;
		for (m = 2; m < n && pt[m - 1].tsc <= t; m++)
			;
		CHECK_INT(utrace__tsc_chain(pt, m, part), ==, m);
		CHECK(utrace__tsc_time(part, m, t, &h2) == v);
	}
	/* close to the clock: within 1 us of it at every point from 300 ms;
	 * the step in rate at 4 s (20 ppm: 20 us in the next second) made
	 * up at the next point */
	for (k = 3; k < n; k++) {
		uint64_t v = utrace__tsc_time(all, n, pt[k].tsc, &h1);
		uint64_t err = v > pt[k].ns ? v - pt[k].ns : pt[k].ns - v;

		fprintf(stderr, "# point %zu: %llu ns off\n", k, (unsigned long long)err);
		if (k != 8)
			CHECK(err <= 1000);
	}
	/* out of order: nothing */
	pt[5].tsc = pt[4].tsc;
	CHECK_INT(utrace__tsc_chain(pt, n, all), ==, 0);
}

/* The one trace-line prefix: the kernel's layout and its ns2usecs()
 * rounding, the carry into the seconds included. */
static void prefix_is(const char *comm, uint32_t tid, uint32_t cpu, uint64_t ns,
		      const char *want)
{
	char buf[128];
	size_t n = utrace__trace_prefix(buf, comm, strlen(comm), tid, cpu, ns, true);

	buf[n] = 0;
	CHECK_STR(buf, want);
}

TEST(trace_line_prefix)
{
	prefix_is("app", 1000, 1, 5000100499ULL, "             app-1000    [001] .....     5.000100: ");
	prefix_is("app", 1000, 1, 5000100500ULL, "             app-1000    [001] .....     5.000101: ");
	prefix_is("app", 1000, 1, 5999999500ULL, "             app-1000    [001] .....     6.000000: ");
	prefix_is("0123456789abcdef", 4194304, 127, 123456789012345678ULL,
		  "0123456789abcdef-4194304 [127] ..... 123456789.012346: ");
	prefix_is("x", 0, 0, 0, "               x-0       [000] .....     0.000000: ");
}

TEST(basic_file_contents)
{
	struct utrace__tf *tf = open_ok("READER_BASIC");
	const struct utrace__tf_process *p;
	const struct utrace__tf_thread *t;
	struct utrace__tf_format *f, *f2;
	size_t i;

	CHECK_INT(utrace__tf_page_size(tf), ==, 4096);
	CHECK_INT(utrace__tf_nr_events(tf), ==, 13);
	p = utrace__tf_process(tf, 0);
	CHECK(p && p->pid == 1000 && p->ppid == 1 && p->clock == 0);
	CHECK_STR(p->comm, "app");
	CHECK_STR(p->exe, "/usr/bin/app");
	CHECK(p->has_stats && p->written == 9 && p->lost == 12);
	p = utrace__tf_process(tf, 1);
	CHECK(p && p->pid == 2000 && p->clock == 1);
	p = utrace__tf_process(tf, 2);
	CHECK(p && p->pid == 3000 && !p->has_stats);
	CHECK_STR(p->comm, "");
	CHECK(utrace__tf_process(tf, 3) == NULL);
	for (i = 0; (t = utrace__tf_thread(tf, i)); i++)
		if (t->tid == 1001) {
			CHECK_STR(t->comm, "app-worker");
			CHECK_INT(t->nr_pages, ==, 2);
			CHECK_INT(t->nr_events, ==, 3);
			CHECK_INT(t->lost, ==, 5 + 7);
		}
	CHECK_INT(i, ==, 5);
	for (i = 0; utrace__tf_format(tf, i); i++)
		;
	CHECK_INT(i, ==, 7);
	/* ids are per process: the same id is another event in pid 2000 */
	f = utrace__tf_format(tf, 0);
	CHECK_STR(f->system, "utest");
	CHECK(!strncmp(f->text, "name: ", 6));
	CHECK(f->body > f->text && f->body[-1] == '\n' && !strncmp(f->body, "format:", 7));
	p = utrace__tf_process(tf, 1);
	f2 = utrace__tf_find_format(tf, p, f->id);
	CHECK(f2 != NULL);
	CHECK(strcmp(f->name, f2->name) != 0);
	CHECK(utrace__tf_find_format(tf, p, 60000) == NULL);
	utrace__tf_close(tf);
}

struct seen {
	uint32_t pid, tid;
	const unsigned char *rec;
	uint32_t len;
	uint64_t time;
	uint64_t offset;                 /* of the event header */
};

/* Every event of the merged stream; checks the time order. */
static struct seen *merged(struct utrace__tf *tf, size_t *n)
{
	struct utrace__tf_iter *it;
	struct utrace__tf_item item;
	struct seen *s = calloc(utrace__tf_nr_events(tf) + 1, sizeof(*s));
	uint64_t last = 0;
	int r;

	CHECK(s != NULL);
	CHECK_INT(utrace__tf_iter_new(tf, &it), ==, 0);
	*n = 0;
	while ((r = utrace__tf_iter_next(it, &item)) > 0) {
		CHECK_INT(item.time, >=, last);
		last = item.time;
		if (item.kind != UTRACE__TF_EVENT)
			continue;
		CHECK((uint64_t)*n < utrace__tf_nr_events(tf));
		CHECK(item.format != NULL);
		CHECK_INT(item.len, >=, 8);
		s[*n] = (struct seen){ item.proc->pid, item.thread->tid, item.rec,
				       item.len, item.time, item.offset };
		(*n)++;
	}
	CHECK_INT(r, ==, 0);
	CHECK_INT(*n, ==, utrace__tf_nr_events(tf));
	utrace__tf_iter_free(it);
	return s;
}

struct pg {
	uint32_t pid, tid;
	uint64_t seq;
	unsigned char *page;
};

static int cmp_pg(const void *a, const void *b)
{
	const struct pg *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The file's pages through kbuffer, thread by thread in seq order, against
 * the reader's events of the same thread in merged order.
 */
static void against_kbuffer(const char *var)
{
	struct utrace__tf *tf = open_ok(var);
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	size_t n, nr_pages = 0, i, j, matched = 0;
	struct seen *s = merged(tf, &n);
	struct pg pages[256];
	uint64_t clock[4] = { 0 }, off;
	int nr_clock = 0, fd = open(path_of(var), O_RDONLY);
	struct stat st;
	unsigned char *m;
	uint32_t tsc_pids[8], nr_tsc = 0;

	CHECK(kb != NULL && fd >= 0 && fstat(fd, &st) == 0);
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(m != MAP_FAILED);
	for (off = 64; off + 16 <= (uint64_t)st.st_size;) {
		uint32_t type, a[2];
		uint64_t size;

		memcpy(&type, m + off, 4);
		memcpy(&size, m + off + 8, 8);
		memcpy(a, m + off + 16, 8);
		if (type == 1 && nr_clock < 2) {
			memcpy(&clock[2 * nr_clock], m + off + 16, 16);
			nr_clock++;
		} else if (type == 1) {
			memcpy(&clock[2], m + off + 16, 16);
		}
		if (type == 2) {
			uint32_t c;

			memcpy(&c, m + off + 16 + 8, 4);
			if (c == 1)
				tsc_pids[nr_tsc++] = a[0];
		}
		if (type == 5) {
			CHECK(nr_pages < 256);
			pages[nr_pages].pid = a[0];
			pages[nr_pages].tid = a[1];
			memcpy(&pages[nr_pages].seq, m + off + 16 + 16, 8);
			pages[nr_pages].page = m + off + 16 + 32;
			nr_pages++;
		}
		off = (off + 16 + size + 7) & ~7ULL;
	}
	qsort(pages, nr_pages, sizeof(*pages), cmp_pg);
	for (i = 0, j = 0; i < nr_pages; i++) {
		unsigned long long ts;
		void *d;
		bool tsc = false;
		uint32_t k;

		for (k = 0; k < nr_tsc; k++)
			tsc |= tsc_pids[k] == pages[i].pid;
		if (i && (pages[i].pid != pages[i - 1].pid || pages[i].tid != pages[i - 1].tid))
			j = 0;           /* another thread: from the start again */
		CHECK_INT(kbuffer_load_subbuffer(kb, pages[i].page), ==, 0);
		for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
			uint64_t ns = tsc ? utrace__tf_tsc_to_ns(ts, clock[0], clock[1],
								 clock[2], clock[3]) : ts;
			int size = kbuffer_event_size(kb);

			/* the reader's next event of this thread */
			while (j < n && (s[j].pid != pages[i].pid || s[j].tid != pages[i].tid))
				j++;
			CHECK(j < n);
			/* the same bytes: after a 4-byte header, or 8 for type_len 0 */
			CHECK((uint64_t)((unsigned char *)d - m) == s[j].offset + 4 ||
			      (uint64_t)((unsigned char *)d - m) == s[j].offset + 8);
			CHECK(!memcmp(s[j].rec, d, s[j].len));
			CHECK_INT(s[j].time, ==, ns);
			CHECK_INT((s[j].len + 3) & ~3u, ==, size);
			j++;
			matched++;
		}
	}
	CHECK_INT(matched, ==, n);
	munmap(m, (size_t)st.st_size);
	close(fd);
	kbuffer_free(kb);
	free(s);
	utrace__tf_close(tf);
}

TEST(basic_pages_as_kbuffer_reads_them)
{
	against_kbuffer("READER_BASIC");
}

TEST(sample_pages_as_kbuffer_reads_them)
{
	against_kbuffer("READER_SAMPLE");
}

TEST(open_mem_and_twice)
{
	struct utrace__tf *tf = open_ok("READER_BASIC"), *tf2;
	int fd = open(path_of("READER_BASIC"), O_RDONLY);
	struct stat st;
	unsigned char *buf;
	size_t n1, n2, i;
	struct seen *a, *b;

	CHECK(fd >= 0 && fstat(fd, &st) == 0);
	buf = malloc((size_t)st.st_size);
	CHECK(buf && read(fd, buf, (size_t)st.st_size) == st.st_size);
	close(fd);
	CHECK_INT(utrace__tf_open_mem(buf, (size_t)st.st_size, "mem", &tf2), ==, 0);
	CHECK_STR(utrace__tf_name(tf2), "mem");
	a = merged(tf, &n1);
	b = merged(tf2, &n2);
	CHECK_INT(n1, ==, n2);
	for (i = 0; i < n1; i++) {
		CHECK_INT(a[i].time, ==, b[i].time);
		CHECK_INT(a[i].tid, ==, b[i].tid);
		CHECK(!memcmp(a[i].rec, b[i].rec, a[i].len));
	}
	free(a);
	a = merged(tf, &n1);             /* a second iterator sees the same */
	for (i = 0; i < n1; i++)
		CHECK_INT(a[i].time, ==, b[i].time);
	free(a);
	free(b);
	utrace__tf_close(tf);
	utrace__tf_close(tf2);
	free(buf);
}

TEST(errors_name_the_file)
{
	struct utrace__tf *tf;

	CHECK_INT(utrace__tf_open("/nonexistent/x.dat", &tf), ==, -ENOENT);
	CHECK_STR(utrace__tf_error(tf), "cannot read '/nonexistent/x.dat': "
		  "No such file or directory");
	utrace__tf_close(tf);
	CHECK_INT(utrace__tf_open("/", &tf), ==, -EISDIR);
	utrace__tf_close(tf);
	CHECK_INT(utrace__tf_open_mem("UTRACE\n", 8, "short.dat", &tf), ==, -EBADMSG);
	CHECK_STR(utrace__tf_error(tf), "'short.dat': file cut short in its header "
		  "(8 of 64 bytes)");
	utrace__tf_close(tf);
	CHECK_INT(utrace__tf_open_mem(NULL, 0, "empty.dat", &tf), ==, -EBADMSG);
	utrace__tf_close(tf);
}

TEST_MAIN()
