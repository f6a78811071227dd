/* SPDX-License-Identifier: MIT */
/*
 * Reading the buffers of running processes (live.h).
 *
 * A process's pool is shared memory: its pages are read in place and
 * copied out (lib/reader/live-pool.c: what show and pipe take, and the
 * consumers' turn, utrace__live_consumer_lock(), so that every event goes
 * to one consuming reader only).
 *
 * The pages go into a trace file image in a memfd, with the process's
 * formats and its pool's TSC calibration points (read after the pages, so
 * that every event read is timed as a recording of the process times it:
 * lib/reader/tsc-time.c), and the printer of `utrace script` prints it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl-client.h"
#include "clock.h"
#include "pool.h"
#include "file-writer.h"
#include "live.h"
#include "live-pool.h"
#include "print.h"

struct lfmt {
	uint32_t id;
	char *system, *text;
};

struct lsrc {
	struct utrace__ctl *c;
	struct utrace_pool *pool;
	int lock_fd;                 /* the pool's memfd opened again, or -1 */
	struct utrace_calib_point *pts;  /* its calibration points, read */
	size_t nr_pts;
	struct utrace__ctl_info info;
	struct lfmt *fmts;
	size_t nr_fmts;
	bool want_syms;              /* a format prints %ps / %pS / %pB */
	struct utrace__symcache syms;    /* its ELF files' symbol tables */
};

struct live {
	struct lsrc *src;
	size_t n;
};

int live_open(struct utrace__ctl *const *ctls, size_t n, struct live **out)
{
	struct live *lv = calloc(1, sizeof(*lv));
	size_t i;
	int r = 0;

	*out = NULL;
	if (!lv || !(lv->src = calloc(n ? n : 1, sizeof(*lv->src)))) {
		free(lv);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		lv->src[i].lock_fd = -1;
	for (i = 0; i < n; i++) {
		struct lsrc *s = &lv->src[i];
		int fd;

		s->c = ctls[i];
		r = utrace__ctl_info(s->c, &s->info);
		if (r < 0)
			break;
		r = utrace__ctl_pool(s->c, &fd);
		if (r < 0)
			break;
		r = utrace__pool_map(fd, &s->pool);
		s->lock_fd = utrace__live_lock_open(fd);
		close(fd);
		if (r < 0)
			break;
		lv->n++;
	}
	if (r < 0) {
		live_close(lv);
		return r;
	}
	*out = lv;
	return 0;
}

void live_close(struct live *lv)
{
	size_t i, j;

	if (!lv)
		return;
	for (i = 0; i < lv->n; i++) {
		struct lsrc *s = &lv->src[i];

		if (s->pool)
			utrace__pool_unmap(s->pool);
		if (s->lock_fd >= 0)
			close(s->lock_fd);
		for (j = 0; j < s->nr_fmts; j++) {
			free(s->fmts[j].system);
			free(s->fmts[j].text);
		}
		free(s->fmts);
		free(s->pts);
		utrace__symcache_free(&s->syms);
	}
	free(lv->src);
	free(lv);
}

/* Fetch the formats of events registered since the last time. */
static int refresh_formats(struct lsrc *s)
{
	struct utrace__ctl_event *evs;
	size_t nr, i, j;
	int r = utrace__ctl_events(s->c, &evs, &nr);

	if (r < 0)
		return r;
	for (i = 0; i < nr && r >= 0; i++) {
		char *text;

		for (j = 0; j < s->nr_fmts; j++)
			if (s->fmts[j].id == evs[i].id)
				break;
		if (j < s->nr_fmts)
			continue;
		if (utrace__ctl_format(s->c, evs[i].id, &text) < 0)
			continue;       /* unloaded meanwhile */
		void *v = realloc(s->fmts, (s->nr_fmts + 1) * sizeof(*s->fmts));

		if (!v) {
			free(text);
			r = -ENOMEM;
			break;
		}
		s->fmts = v;
		s->fmts[s->nr_fmts].id = evs[i].id;
		s->fmts[s->nr_fmts].text = text;
		if (strstr(text, "%ps") || strstr(text, "%pS") || strstr(text, "%pB"))
			s->want_syms = true;
		s->fmts[s->nr_fmts].system = strdup(evs[i].system);
		if (!s->fmts[s->nr_fmts].system) {
			free(text);
			r = -ENOMEM;
			break;
		}
		s->nr_fmts++;
	}
	utrace__ctl_events_free(evs, nr);
	return r < 0 ? r : 0;
}

/* Write one process into the image. */
static void put_source(struct utrace__tfw *w, struct lsrc *s, struct utrace__live_pages *cl)
{
	struct utrace_pool *p = s->pool;
	size_t i, j;

	utrace__tfw_process(w, s->info.pid, s->info.ppid, p->clock, s->info.comm, s->info.exe);
	for (i = 0; i < s->nr_pts; i++)
		utrace__tfw_calib(w, s->info.pid, (uint32_t)i, s->pts[i].tsc, s->pts[i].ns);
	for (i = 0; i < s->nr_fmts; i++)
		utrace__tfw_format(w, s->info.pid, s->fmts[i].id, s->fmts[i].system,
				   s->fmts[i].text);
	/* The process lives while it is read: its /proc/<pid>/maps names its
	 * addresses as the recorder's SYMBOL records do. */
	if (s->want_syms)
		utrace__tfw_symbols_cached(w, s->info.pid, &s->syms);
	utrace__live_sort(cl);
	for (i = 0; i < cl->n; i++) {
		struct utrace__live_page *lp = &cl->v[i];

		if (i == 0 || cl->v[i - 1].tid != lp->tid) {
			/* The thread's name, from its slot if it still has one. */
			const char *comm = "";

			for (j = 0; j < utrace_pool_nr_slots(p); j++) {
				struct utrace_thread_slot *sl = utrace_pool_slot(p, (uint32_t)j);

				if (sl->tid == lp->tid) {
					comm = sl->comm;
					break;
				}
			}
			char name[17];

			memcpy(name, comm, 16);
			name[16] = 0;
			utrace__tfw_thread(w, s->info.pid, lp->tid, name);
		}
		struct utrace__tf_page_rec hdr = { s->info.pid, lp->tid, lp->cpu, 0, lp->seq, 0 };

		utrace__tfw_page_now(w, &hdr, &lp->page, sizeof(lp->page));
	}
}

static void header(FILE *out, uint64_t in_buffer, uint64_t written, bool irq_info)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!irq_info) {
		/* print_func_help_header() */
		fprintf(out,
			"# tracer: nop\n"
			"#\n"
			"# entries-in-buffer/entries-written: %llu/%llu   #P:%ld\n"
			"#\n"
			"#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
			"#              | |         |         |         |\n",
			(unsigned long long)in_buffer, (unsigned long long)written,
			cpus > 0 ? cpus : 1);
		return;
	}
	fprintf(out,
		"# tracer: nop\n"
		"#\n"
		"# entries-in-buffer/entries-written: %llu/%llu   #P:%ld\n"
		"#\n"
		"#                                _-----=> irqs-off/BH-disabled\n"
		"#                               / _----=> need-resched\n"
		"#                              | / _---=> hardirq/softirq\n"
		"#                              || / _--=> preempt-depth\n"
		"#                              ||| / _-=> migrate-disable\n"
		"#                              |||| /     delay\n"
		"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
		"#              | |         |   |||||     |         |\n",
		(unsigned long long)in_buffer, (unsigned long long)written,
		cpus > 0 ? cpus : 1);
}

long live_print(struct live *lv, unsigned int flags, FILE *out)
{
	struct utrace__live_pages *cls = calloc(lv->n ? lv->n : 1, sizeof(*cls));
	struct utrace__tfw w;
	struct utrace__tf *tf = NULL;
	uint64_t events = 0, written = 0, tsc0 = 0, ns0 = 0, tsc1 = 0, ns1 = 0;
	bool tsc = false;
	long ret = 0;
	size_t i;
	int fd = -1, fd2 = -1;
	FILE *f;

	if (!cls)
		return -ENOMEM;
	for (i = 0; i < lv->n; i++) {
		struct lsrc *s = &lv->src[i];

		if (refresh_formats(s) < 0) {
			ret = -EIO;
			goto out;
		}
		if (utrace__pool_dead(s->pool) == UTRACE_POOL_REPLACED) {
			/* buffer_size_kb was written: read the new pool. */
			struct utrace_pool *np;
			int pfd;

			if (utrace__ctl_pool(s->c, &pfd) < 0) {
				ret = -EIO;
				goto out;
			}
			if (utrace__pool_map(pfd, &np) == 0) {
				utrace__pool_unmap(s->pool);
				s->pool = np;
				if (s->lock_fd >= 0)
					close(s->lock_fd);
				s->lock_fd = utrace__live_lock_open(pfd);
			}
			close(pfd);
		}
		if (flags & LIVE_CONSUME)
			utrace__live_consumer_lock(&s->lock_fd, true);
		utrace__live_collect(s->pool, flags & LIVE_CONSUME, &cls[i]);
		if (flags & LIVE_CONSUME)
			utrace__live_consumer_lock(&s->lock_fd, false);
		events += cls[i].events;
		written += cls[i].written + cls[i].events;
		s->nr_pts = 0;
		if (s->pool->clock == UTRACE_CLOCK_TSC && !s->pts &&
		    !(s->pts = malloc(UTRACE_POOL_CALIB * sizeof(*s->pts)))) {
			ret = -ENOMEM;
			goto out;
		}
		if (s->pool->clock == UTRACE_CLOCK_TSC) {
			/* After the pages: every event read is before the
			 * points' end, or in the last segment for good. */
			tsc = true;
			utrace__pool_calib_second(s->pool);
			utrace__pool_calib_tick(s->pool);
			s->nr_pts = utrace__pool_calib_points(s->pool, 0, s->pts, UTRACE_POOL_CALIB);
			/* The CLOCK records, for a pool whose points were
			 * spoilt: the oldest pool's first and last. */
			if (s->nr_pts >= 2 && (!tsc0 || s->pts[0].ns < ns0)) {
				tsc0 = s->pts[0].tsc;
				ns0 = s->pts[0].ns;
				tsc1 = s->pts[s->nr_pts - 1].tsc;
				ns1 = s->pts[s->nr_pts - 1].ns;
			}
		}
	}
	if (flags & LIVE_HEADER)
		header(out, events, written, !(flags & LIVE_NO_IRQ_INFO));
	if (!events)
		goto out;

	fd = memfd_create("utrace-live", MFD_CLOEXEC);
	fd2 = fd >= 0 ? dup(fd) : -1;
	f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	if (!f) {
		ret = -errno;
		goto out;
	}
	fd = -1;
	utrace__tfw_open_stream(&w, f, "buffer", UTRACE_PAGE_SIZE);
	if (tsc) {
		struct utrace_calib_point pt[2];

		if (!tsc1) {
			/* No pool has two points: two taken here. */
			utrace__calib_measure(&pt[0]);
			usleep(20000);
			utrace__calib_measure(&pt[1]);
			tsc0 = pt[0].tsc;
			ns0 = pt[0].ns;
			tsc1 = pt[1].tsc;
			ns1 = pt[1].ns;
		}
		utrace__tfw_clock(&w, tsc0, ns0);
		utrace__tfw_clock(&w, tsc1, ns1);
	}
	for (i = 0; i < lv->n; i++)
		put_source(&w, &lv->src[i], &cls[i]);
	if (utrace__tfw_close(&w) < 0) {
		ret = -EIO;
		goto out;
	}
	{
		struct stat st;
		void *m;
		/* The kernel marks where each CPU's events start in its trace
		 * file when the buffer was overrun. */
		struct utrace__print_opts o = { .input = "buffer", .mode = UTRACE__OUT_TEXT,
						.quiet = true,
						.annotate_cpus = (flags & LIVE_HEADER) &&
								 written > events,
						.no_irq_info = (flags & LIVE_NO_IRQ_INFO) != 0 };

		if (fstat(fd2, &st) < 0 || !st.st_size) {
			ret = -EIO;
			goto out;
		}
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd2, 0);
		if (m == MAP_FAILED) {
			ret = -errno;
			goto out;
		}
		if (utrace__tf_open_mem(m, (size_t)st.st_size, "buffer", &tf) == -ENOMEM ||
		    !tf) {
			munmap(m, (size_t)st.st_size);
			ret = -ENOMEM;
			goto out;
		}
		utrace__print_file(&o, tf, out);
		utrace__tf_close(tf);
		munmap(m, (size_t)st.st_size);
	}
	ret = (long)events;
out:
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	for (i = 0; i < lv->n; i++)
		free(cls[i].v);
	free(cls);
	return ret;
}

int live_clear(struct live *lv)
{
	size_t i;
	int r = 0;

	for (i = 0; i < lv->n; i++) {
		int e = utrace__ctl_clear_buffer(lv->src[i].c);

		if (e < 0)
			r = e;
	}
	return r;
}
