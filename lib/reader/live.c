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
#include <stddef.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "ctl-client.h"
#include "clock.h"
#include "pfmt.h"
#include "pool.h"
#include "file-writer.h"
#include "live.h"
#include "live-pool.h"
#include "print.h"
#include "rbpack.h"
#include "page.h"
#include "tsc-time.h"

struct lfmt {
	uint32_t id;
	char *system, *text;
};

/*
 * What the readers of one pool in this program share beyond the pool
 * (per_cpu/cpuN files of the mount).  A pool's pages are per thread, not
 * per CPU: a reader that consumes the events of one CPU takes every page
 * the pool gives up and keeps those of the other CPUs here, for their
 * readers (trace-cmd extract opens one CPU after the other): while a
 * reader of the pool is open and HELD_IDLE_S seconds after the last one
 * closed (at most as many pages as the pool has: beyond that the oldest
 * go, as in an overrun).
 */
#define HELD_IDLE_S 60
struct shared {
	struct shared *next;
	dev_t dev;
	ino_t ino;                   /* the pool's memfd */
	unsigned int refs;
	struct utrace__live_pages held;  /* taken for other CPUs, not read */
	uint64_t *read;              /* events consumed, per CPU */
	uint32_t nr_read;
	uint64_t held_dropped;       /* events of held pages let go */
	struct timespec idle_since;  /* refs fell to 0 (CLOCK_MONOTONIC) */
};

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared *shared_list;

static void shared_free(struct shared *sh)
{
	free(sh->held.v);
	free(sh->read);
	free(sh);
}

static struct shared *shared_get(int fd)
{
	struct shared *sh, **pp;
	struct timespec now;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&shared_lock);
	for (pp = &shared_list; (sh = *pp);) {
		if (!sh->refs && now.tv_sec - sh->idle_since.tv_sec > HELD_IDLE_S) {
			*pp = sh->next;
			shared_free(sh);
		} else {
			pp = &sh->next;
		}
	}
	for (sh = shared_list; sh; sh = sh->next)
		if (sh->dev == st.st_dev && sh->ino == st.st_ino)
			break;
	if (!sh && (sh = calloc(1, sizeof(*sh)))) {
		sh->dev = st.st_dev;
		sh->ino = st.st_ino;
		sh->next = shared_list;
		shared_list = sh;
	}
	if (sh)
		sh->refs++;
	pthread_mutex_unlock(&shared_lock);
	return sh;
}

static void shared_put(struct shared *sh)
{
	if (!sh)
		return;
	pthread_mutex_lock(&shared_lock);
	if (--sh->refs == 0)
		clock_gettime(CLOCK_MONOTONIC, &sh->idle_since);
	pthread_mutex_unlock(&shared_lock);
}

struct lsrc {
	struct utrace__ctl *c;
	struct shared *sh;           /* NULL: out of memory, no per-CPU reading */
	struct utrace_pool *pool;
	int lock_fd;                 /* the pool's memfd opened again, or -1 */
	struct utrace_calib_point *pts;  /* its calibration points, read */
	size_t nr_pts;
	struct utrace_calib_ext *xs;     /* what was read with them */
	size_t nr_xs;
	struct utrace__ctl_info info;
	struct lfmt *fmts;
	size_t nr_fmts;
	bool want_syms;              /* a format prints %ps / %pS / %pB */
	bool gone;                   /* its agent stopped answering: read out once */
	/* live_take(): the pool's count of events lost (discarded or
	 * overwritten) at the last take, and since then */
	uint64_t lost_base, lost_now;
	bool lost_base_set;
	struct utrace__symcache syms;    /* its ELF files' symbol tables */
	uint64_t until;              /* a snapshot's: its events up to this time */
};

struct live {
	struct lsrc *src;
	size_t n;
	int cpu;                     /* the one CPU read, or -1 */
	struct utrace__rbpack pk;    /* live_raw()'s stream */
	unsigned char page[UTRACE_PAGE_SIZE];
	bool drain;                  /* live_take(): read a pool once after its process */
	unsigned char *out;          /* live_raw()'s pages */
	size_t out_len, out_cap;
	bool out_failed;
	char tracer[32];             /* the header's "# tracer:" ("": nop) */
};

/* Map a process's pool (or pool_fd, a copy of it) for reading: 0, or
 * -errno (*s then holds nothing). */
static int src_open(struct lsrc *s, struct utrace__ctl *c, int pool_fd)
{
	int fd, r;

	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
	s->c = c;
	r = utrace__ctl_info(c, &s->info);
	if (r < 0)
		return r;
	if (pool_fd >= 0)
		fd = dup(pool_fd);
	else
		r = utrace__ctl_pool(c, &fd);
	if (r < 0)
		return r;
	if (fd < 0)
		return -errno;
	r = utrace__pool_map(fd, &s->pool);
	if (r == 0) {
		s->lock_fd = utrace__live_lock_open(fd);
		s->sh = shared_get(fd);
	}
	close(fd);
	return r;
}

static void src_close(struct lsrc *s)
{
	size_t j;

	if (s->pool)
		utrace__pool_unmap(s->pool);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	shared_put(s->sh);
	for (j = 0; j < s->nr_fmts; j++) {
		free(s->fmts[j].system);
		free(s->fmts[j].text);
	}
	free(s->fmts);
	free(s->pts);
	free(s->xs);
	utrace__symcache_free(&s->syms);
}

/* The processes' pools, or pool_fd (a copy of the one process's). */
static int open_srcs(struct utrace__ctl *const *ctls, size_t n, int pool_fd, struct live **out)
{
	struct live *lv = calloc(1, sizeof(*lv));
	size_t i;
	int r = 0;

	*out = NULL;
	if (!lv || !(lv->src = calloc(n ? n : 1, sizeof(*lv->src)))) {
		free(lv);
		return -ENOMEM;
	}
	lv->cpu = -1;
	for (i = 0; i < n; i++) {
		r = src_open(&lv->src[i], ctls[i], pool_fd);
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

int live_open(struct utrace__ctl *const *ctls, size_t n, struct live **out)
{
	return open_srcs(ctls, n, -1, out);
}

int live_open_copy(struct utrace__ctl *c, int pool_fd, uint64_t until, struct live **out)
{
	int r = open_srcs(&c, 1, pool_fd, out);

	if (r == 0 && *out && (*out)->n)
		(*out)->src[0].until = until;
	return r;
}

int live_add(struct live *lv, struct utrace__ctl *c)
{
	struct lsrc *v = realloc(lv->src, (lv->n + 1) * sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	lv->src = v;
	r = src_open(&lv->src[lv->n], c, -1);
	if (r == 0)
		lv->n++;
	return r;
}

size_t live_drop_gone(struct live *lv)
{
	return live_drop_gone_each(lv, NULL, NULL);
}

size_t live_drop_gone_each(struct live *lv, void (*fn)(void *arg, struct utrace__ctl *c),
			   void *arg)
{
	size_t i, k = 0;

	for (i = 0; i < lv->n; i++) {
		if (lv->src[i].gone) {
			struct utrace__ctl *c = lv->src[i].c;

			src_close(&lv->src[i]);
			if (fn)
				fn(arg, c);
		} else
			lv->src[k++] = lv->src[i];
	}
	i = lv->n - k;
	lv->n = k;
	return i;
}

void live_close(struct live *lv)
{
	size_t i;

	if (!lv)
		return;
	free(lv->out);
	for (i = 0; i < lv->n; i++)
		src_close(&lv->src[i]);
	free(lv->src);
	free(lv);
}

/* Fetch the formats of events registered (or removed: their records
 * may still be in the pool) since the last time. */
static int refresh_formats(struct lsrc *s)
{
	struct utrace__ctl_event *evs, *gone = NULL;
	size_t nr, nr_gone = 0, i, j;
	int r = utrace__ctl_events(s->c, &evs, &nr);

	if (r < 0)
		return r;
	/* (an agent before the removed ones were kept has none to say) */
	if (utrace__ctl_events_removed(s->c, &gone, &nr_gone) == 0 && nr_gone) {
		struct utrace__ctl_event *v = realloc(evs, (nr + nr_gone) * sizeof(*v));

		if (!v) {
			utrace__ctl_events_free(evs, nr);
			utrace__ctl_events_free(gone, nr_gone);
			return -ENOMEM;
		}
		evs = v;
		memcpy(evs + nr, gone, nr_gone * sizeof(*gone));
		nr += nr_gone;
		free(gone);     /* (its strings are evs' now) */
	} else {
		utrace__ctl_events_free(gone, nr_gone);
	}
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
		/* (ftrace:print's %ps is never shown: tracing_mark_write;
		 * ftrace:user_stack's frames are; the function tracers' are) */
		if (strcmp(evs[i].system, "ftrace") ? utrace__pfmt_uses_symbols(text)
						     : (!strncmp(text, "name: user_stack\n", 17) ||
							!strncmp(text, "name: stack\n", 12) ||
							(!strncmp(evs[i].name, "func", 4) &&
							 utrace__pfmt_uses_symbols(text))))
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
	uint64_t part = 0;
	size_t i, j;

	utrace__tfw_process(w, s->info.pid, s->info.ppid, p->clock,
			    __atomic_load_n(&p->trace_clock, __ATOMIC_ACQUIRE), s->info.comm,
			    s->info.exe);
	for (i = 0; i < s->nr_pts; i++)
		utrace__tfw_calib(w, s->info.pid, (uint32_t)i, s->pts[i].tsc, s->pts[i].ns);
	for (i = 0; i < s->nr_xs; i++)
		if (s->xs[i].point)
			utrace__tfw_calibx(w, s->info.pid, (uint32_t)i, &s->xs[i]);
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
		/* A page read in two parts (a per-CPU reader held the first
		 * for this one) comes twice: the file's page numbers keep
		 * them apart, in their order (a file has each once). */
		if (i && cl->v[i - 1].tid == lp->tid && cl->v[i - 1].seq == lp->seq)
			part++;
		else
			part = 0;
		struct utrace__tf_page_rec hdr = { s->info.pid, lp->tid, lp->cpu, 0,
						   lp->seq << 8 | (part < 255 ? part : 255), 0 };

		utrace__tfw_page_now(w, &hdr, &lp->page, sizeof(lp->page));
	}
	/* what the pool lost since the last take, said after its events */
	if (s->lost_now > s->lost_base)
		utrace__tfw_lost(w, s->info.pid, 0, s->lost_now - s->lost_base);
	s->lost_base = s->lost_now;
}

/* CONFIG_<name>=y in the running kernel's /proc/config.gz. */
static bool kconfig_y(const char *name)
{
	char line[256], want[128];
	bool found = false;
	gzFile f = gzopen("/proc/config.gz", "rb");

	if (!f)
		return false;
	snprintf(want, sizeof(want), "CONFIG_%s=y\n", name);
	while (!found && gzgets(f, line, sizeof(line)))
		found = !strcmp(line, want);
	gzclose(f);
	return found;
}

/*
 * The kernel's preempt_model_str(), for the latency-format header, as far
 * as user space can tell: the mode debugfs's sched/preempt shows in
 * brackets, else a preempt= of the command line, else the build's own
 * default (/proc/config.gz); the build from uname's version string.
 */
static const char *preempt_model(void)
{
	static char model[64];
	static const char *const modes[] = { "none", "voluntary", "full", "lazy" };
	static const char *const configs[] = { "PREEMPT_NONE", "PREEMPT_VOLUNTARY", "PREEMPT",
					       "PREEMPT_LAZY" };
	char buf[512] = "", *p, *e;
	struct utsname u;
	const char *mode = NULL;
	unsigned int i;
	FILE *f;

	if (model[0])
		return model;
	if (uname(&u) < 0)
		return "unknown";
	if (!strstr(u.version, "PREEMPT")) {
		snprintf(model, sizeof(model), "%s", kconfig_y("PREEMPT_VOLUNTARY_BUILD") ?
			 "VOLUNTARY" : "NONE");
		return model;
	}
	if (!strstr(u.version, "PREEMPT_DYNAMIC")) {
		snprintf(model, sizeof(model), "%s", strstr(u.version, "PREEMPT_RT") ?
			 "PREEMPT_RT" : strstr(u.version, "PREEMPT_LAZY") ? "PREEMPTLAZY" :
			 "PREEMPT");
		return model;
	}
	f = fopen("/sys/kernel/debug/sched/preempt", "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && (p = strchr(buf, '(')) && (e = strchr(p, ')'))) {
			*e = 0;
			mode = p + 1;
		}
		fclose(f);
	}
	f = mode ? NULL : fopen("/proc/cmdline", "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && (p = strstr(buf, "preempt="))) {
			p += 8;
			p[strcspn(p, " \n")] = 0;
			mode = p;
		}
		fclose(f);
	}
	for (i = 0; !mode && i < sizeof(configs) / sizeof(configs[0]); i++)
		if (kconfig_y(configs[i]))
			mode = modes[i];
	snprintf(model, sizeof(model), "PREEMPT%s(%s)", strstr(u.version, "PREEMPT_RT") ?
		 "_RT" : "", mode ? mode : "undef");
	return model;
}

/*
 * The trace file's header: "# tracer: nop", then as the kernel's
 * trace_default_header(): none without context-info; latency-format's
 * print_trace_header() (nothing for an empty buffer) and, unless verbose,
 * its column help; else, unless verbose, the entries line and the column
 * help (print_func_help_header[_irq](), with a TGID column for
 * record-tgid).
 */
static void header(FILE *out, uint64_t in_buffer, uint64_t written, unsigned int flags,
		   const char *tracer)
{
	static const char space[] = "            ";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	bool tgid = flags & LIVE_TGID;
	int prec = tgid ? 12 : 2;
	struct utsname u;

	if (cpus < 1)
		cpus = 1;
	fprintf(out, "# tracer: %s\n#\n", tracer && *tracer ? tracer : "nop");
	if (tracer && !strcmp(tracer, "function_graph") && !(flags & LIVE_NO_CONTEXT)) {
		/* print_graph_headers_flags() */
		fprintf(out, "#%s%s%s%s               FUNCTION CALLS\n",
			flags & LIVE_FG_ABSTIME ? "     TIME       " : "",
			flags & LIVE_FG_NO_CPU ? "" : " CPU",
			flags & LIVE_FG_PROC ? "  TASK/PID       " : "",
			flags & LIVE_FG_NO_DURATION ? "" : "  DURATION   ");
		fprintf(out, "#%s%s%s%s               |   |   |   |\n",
			flags & LIVE_FG_ABSTIME ? "      |         " : "",
			flags & LIVE_FG_NO_CPU ? "" : " |  ",
			flags & LIVE_FG_PROC ? "   |    |        " : "",
			flags & LIVE_FG_NO_DURATION ? "" : "   |   |      ");
		return;
	}
	if (flags & LIVE_NO_CONTEXT)
		return;
	if (flags & LIVE_LATENCY) {
		if (!in_buffer)
			return;
		if (uname(&u) < 0)
			snprintf(u.release, sizeof(u.release), "unknown");
		fprintf(out, "# nop latency trace v1.1.5 on %s\n"
			"# --------------------------------------------------------------------\n"
			"# latency: 0 us, #%llu/%llu, CPU#0 | (M:%s VP:0, KP:0, SP:0 HP:0 #P:%ld)\n"
			"#    -----------------\n"
			"#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n"
			"#    -----------------\n"
			"#\n", u.release, (unsigned long long)in_buffer, (unsigned long long)written,
			preempt_model(), cpus);
		if (!(flags & LIVE_VERBOSE))
			fputs("#                    _------=> CPU#            \n"
			      "#                   / _-----=> irqs-off/BH-disabled\n"
			      "#                  | / _----=> need-resched    \n"
			      "#                  || / _---=> hardirq/softirq \n"
			      "#                  ||| / _--=> preempt-depth   \n"
			      "#                  |||| / _-=> migrate-disable \n"
			      "#                  ||||| /     delay           \n"
			      "#  cmd     pid     |||||| time  |   caller     \n"
			      "#     \\   /        ||||||  \\    |    /       \n", out);
		return;
	}
	if (flags & LIVE_VERBOSE)
		return;
	fprintf(out, "# entries-in-buffer/entries-written: %llu/%llu   #P:%ld\n#\n",
		(unsigned long long)in_buffer, (unsigned long long)written, cpus);
	if (flags & LIVE_NO_IRQ_INFO) {
		fprintf(out, "#           TASK-PID    %s CPU#     TIMESTAMP  FUNCTION\n",
			tgid ? "   TGID   " : "");
		fprintf(out, "#              | |      %s   |         |         |\n",
			tgid ? "     |    " : "");
		return;
	}
	fprintf(out, "#                            %.*s  _-----=> irqs-off/BH-disabled\n", prec, space);
	fprintf(out, "#                            %.*s / _----=> need-resched\n", prec, space);
	fprintf(out, "#                            %.*s| / _---=> hardirq/softirq\n", prec, space);
	fprintf(out, "#                            %.*s|| / _--=> preempt-depth\n", prec, space);
	fprintf(out, "#                            %.*s||| / _-=> migrate-disable\n", prec, space);
	fprintf(out, "#                            %.*s|||| /     delay\n", prec, space);
	fprintf(out, "#           TASK-PID  %.*s CPU#  |||||  TIMESTAMP  FUNCTION\n", prec,
		"     TGID   ");
	fprintf(out, "#              | |    %.*s   |   |||||     |         |\n", prec,
		"       |    ");
}

/* The utrace__print_opts of the live flags. */
static unsigned int print_flags(unsigned int flags)
{
	return (flags & LIVE_RAW ? UTRACE__PF_RAW : 0) | (flags & LIVE_HEX ? UTRACE__PF_HEX : 0) |
	       (flags & LIVE_NO_CONTEXT ? UTRACE__PF_NO_CONTEXT : 0) |
	       (flags & LIVE_LATENCY ? UTRACE__PF_LATENCY : 0) |
	       (flags & LIVE_TGID ? UTRACE__PF_TGID : 0) |
	       (flags & LIVE_VERBOSE ? UTRACE__PF_VERBOSE : 0) |
	       (flags & LIVE_FG_OVERRUN ? UTRACE__PF_FG_OVERRUN : 0) |
	       (flags & LIVE_FG_NO_CPU ? UTRACE__PF_FG_NO_CPU : 0) |
	       (flags & LIVE_FG_NO_OVERHEAD ? UTRACE__PF_FG_NO_OVERHEAD : 0) |
	       (flags & LIVE_FG_PROC ? UTRACE__PF_FG_PROC : 0) |
	       (flags & LIVE_FG_NO_DURATION ? UTRACE__PF_FG_NO_DURATION : 0) |
	       (flags & LIVE_FG_ABSTIME ? UTRACE__PF_FG_ABSTIME : 0) |
	       (flags & LIVE_FG_TAIL ? UTRACE__PF_FG_TAIL : 0);
}

static int page_push(struct utrace__live_pages *to, const struct utrace__live_page *lp)
{
	if (to->n == to->cap) {
		size_t cap = to->cap ? to->cap * 2 : 64;
		void *v = realloc(to->v, cap * sizeof(*to->v));

		if (!v)
			return -ENOMEM;
		to->v = v;
		to->cap = cap;
	}
	to->v[to->n++] = *lp;
	return 0;
}

static uint64_t page_events(const struct utrace__live_page *lp)
{
	long n = utrace__rb_count_events(&lp->page, UTRACE_PAGE_DATA);

	return n > 0 ? (uint64_t)n : 0;
}

/*
 * Keep in 'cl' the pages of the CPU read (all when cpu < 0): the pages of
 * other CPUs a consuming reader took go to the shared list, and the pages
 * held there for this one are taken (consume) or copied.  The events of
 * the pages a consuming reader takes are counted as read on their CPU.
 */
static int select_pages(struct lsrc *s, int cpu, bool consume, struct utrace__live_pages *cl)
{
	struct utrace__live_pages out = { 0 };
	struct shared *sh = s->sh;
	size_t i, k = 0, max = utrace_pool_nr_pages(s->pool);
	int err = 0;

	pthread_mutex_lock(&shared_lock);
	for (i = 0; sh && i < sh->held.n; i++) {
		struct utrace__live_page *lp = &sh->held.v[i];

		if ((cpu < 0 || (int)lp->cpu == cpu) && !err) {
			err = page_push(&out, lp);
			if (consume && !err)
				continue;
		}
		sh->held.v[k++] = *lp;
	}
	if (sh && consume)
		sh->held.n = k;
	for (i = 0; i < cl->n && !err; i++) {
		struct utrace__live_page *lp = &cl->v[i];

		if (cpu < 0 || (int)lp->cpu == cpu)
			err = page_push(&out, lp);
		else if (consume && sh && page_push(&sh->held, lp) < 0)
			sh->held_dropped += page_events(lp);
	}
	if (sh && sh->held.n > max) {
		/* the oldest held pages go: an overrun */
		size_t drop = sh->held.n - max;

		for (i = 0; i < drop; i++)
			sh->held_dropped += page_events(&sh->held.v[i]);
		memmove(sh->held.v, sh->held.v + drop, max * sizeof(*sh->held.v));
		sh->held.n = max;
	}
	cl->events = 0;
	for (i = 0; i < out.n; i++) {
		uint64_t n = page_events(&out.v[i]);
		uint32_t c = out.v[i].cpu;

		cl->events += n;
		if (!consume || !sh || c > 65535)
			continue;
		if (c >= sh->nr_read) {
			uint64_t *v = realloc(sh->read, (c + 1) * sizeof(*v));

			if (!v)
				continue;
			memset(v + sh->nr_read, 0, (c + 1 - sh->nr_read) * sizeof(*v));
			sh->read = v;
			sh->nr_read = c + 1;
		}
		sh->read[c] += n;
	}
	pthread_mutex_unlock(&shared_lock);
	free(cl->v);
	cl->v = out.v;
	cl->n = out.n;
	cl->cap = out.cap;
	return err;
}

/* What the buffers hold, as a trace file image opened for reading. */
struct image {
	struct utrace__tf *tf;       /* NULL: no events */
	void *map;
	size_t size;
	uint64_t events, written, bytes;
	uint64_t clear_ns;           /* the first buffer's last clear (0: none) */
};

static void image_free(struct image *im)
{
	if (im->tf)
		utrace__tf_close(im->tf);
	if (im->map)
		munmap(im->map, im->size);
	memset(im, 0, sizeof(*im));
}

/* Collect the pages (consume: take them) of the CPU read and make the image. */
static int image_make(struct live *lv, bool consume, struct image *im)
{
	struct utrace__live_pages *cls = calloc(lv->n ? lv->n : 1, sizeof(*cls));
	struct utrace__tfw w;
	uint64_t tsc0 = 0, ns0 = 0, tsc1 = 0, ns1 = 0;
	bool tsc = false;
	int ret = 0;
	size_t i, j;
	int fd = -1, fd2 = -1;
	FILE *f;

	memset(im, 0, sizeof(*im));
	if (!cls)
		return -ENOMEM;
	for (i = 0; i < lv->n; i++) {
		struct lsrc *s = &lv->src[i];

		if (s->gone) {
			ret = -EIO;
			goto out;
		}
		if (refresh_formats(s) < 0) {
			if (!lv->drain) {
				ret = -EIO;
				goto out;
			}
			/* The process has exited (or its agent is stuck): its
			 * pool is still mapped, with the events of its last
			 * pages, and the formats known so far name them. */
			s->gone = true;
		} else if (utrace__pool_dead(s->pool) == UTRACE_POOL_REPLACED) {
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
				shared_put(s->sh);
				s->sh = shared_get(pfd);
			}
			close(pfd);
		}
		if (consume)
			utrace__live_consumer_lock(&s->lock_fd, true);
		cls[i].until = s->until;
		utrace__live_collect(s->pool, consume, &cls[i]);
		if (consume)
			utrace__live_consumer_lock(&s->lock_fd, false);
		im->written += cls[i].written;
		if (select_pages(s, lv->cpu, consume, &cls[i]) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		im->events += cls[i].events;
		im->written += cls[i].events;
		if (lv->drain) {
			/* after the pages: an event lost now is said next time */
			uint64_t lost = utrace__pool_lost_in_slots(s->pool) +
					utrace__pool_lost_no_slot(s->pool);

			if (!s->lost_base_set)
				s->lost_base = lost;
			s->lost_base_set = true;
			/* (a slot's count restarts when a new thread takes it) */
			if (lost < s->lost_base)
				s->lost_base = lost;
			s->lost_now = lost;
		}
		for (j = 0; j < cls[i].n; j++)
			im->bytes += cls[i].v[j].page.commit & UTRACE_RB_COMMIT_MASK;
		s->nr_pts = 0;
		s->nr_xs = 0;
		if (s->pool->clock == UTRACE_CLOCK_TSC &&
		    ((!s->pts && !(s->pts = malloc(UTRACE_POOL_CALIB * sizeof(*s->pts)))) ||
		     (!s->xs && !(s->xs = malloc(UTRACE_POOL_CALIB * sizeof(*s->xs)))))) {
			ret = -ENOMEM;
			goto out;
		}
		if (s->pool->clock != UTRACE_CLOCK_TSC && !im->clear_ns)
			im->clear_ns = utrace__pool_clear_ts(s->pool);
		if (s->pool->clock == UTRACE_CLOCK_TSC) {
			/* After the pages: every event read is before the
			 * points' end, or in the last segment for good. */
			tsc = true;
			utrace__pool_calib_second(s->pool);
			utrace__pool_calib_tick(s->pool);
			s->nr_pts = utrace__pool_calib_points(s->pool, 0, s->pts, UTRACE_POOL_CALIB);
			s->nr_xs = utrace__pool_calib_exts(s->pool, 0, s->pts, (uint32_t)s->nr_pts,
							   s->xs);
			/* its clear in ns (latency-format's time origin) */
			if (!im->clear_ns && utrace__pool_clear_ts(s->pool) && s->nr_pts >= 2) {
				struct utrace__tsc_seg *seg = malloc(s->nr_pts * sizeof(*seg));
				size_t nseg = seg ? utrace__tsc_chain(s->pts, s->nr_pts, seg) : 0;
				uint32_t hint = 0;

				if (nseg)
					im->clear_ns = utrace__tsc_time(seg, nseg,
									utrace__pool_clear_ts(s->pool),
									&hint);
				free(seg);
			}
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
	if (!im->events)
		goto out;

	fd = memfd_create("utrace-live", MFD_CLOEXEC);
	fd2 = fd >= 0 ? dup(fd) : -1;
	f = fd2 >= 0 ? fdopen(fd, "w+") : NULL;
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
			utrace__calib_measure(&pt[0], NULL, NULL);
			usleep(20000);
			utrace__calib_measure(&pt[1], NULL, NULL);
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

		if (fstat(fd2, &st) < 0 || !st.st_size) {
			ret = -EIO;
			goto out;
		}
		im->size = (size_t)st.st_size;
		im->map = mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, fd2, 0);
		if (im->map == MAP_FAILED) {
			im->map = NULL;
			ret = -errno;
			goto out;
		}
		if (utrace__tf_open_mem(im->map, im->size, "buffer", &im->tf) == -ENOMEM ||
		    !im->tf) {
			if (im->tf)
				utrace__tf_close(im->tf);
			im->tf = NULL;
			ret = -ENOMEM;
			goto out;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	for (i = 0; i < lv->n; i++)
		free(cls[i].v);
	free(cls);
	if (ret < 0)
		image_free(im);
	return ret;
}

long live_print(struct live *lv, unsigned int flags, FILE *out)
{
	struct image im;
	int r = image_make(lv, flags & LIVE_CONSUME, &im);

	if (r < 0)
		return r;
	if (flags & LIVE_HEADER) {
		uint64_t in = im.events, written = im.written;

		if (lv->cpu >= 0) {
			/* print_event_info(): a per_cpu trace's header counts
			 * the whole buffer, every CPU */
			struct image all;
			int cpu = lv->cpu;

			lv->cpu = -1;
			if (image_make(lv, false, &all) == 0) {
				in = all.events;
				written = all.written;
				image_free(&all);
			}
			lv->cpu = cpu;
		}
		header(out, in, written, flags, lv->tracer);
	}
	if (im.tf) {
		/* The kernel marks where each CPU's events start in its trace
		 * file when the buffer was overrun. */
		struct utrace__print_opts o = { .input = "buffer", .mode = UTRACE__OUT_TEXT,
						.quiet = true,
						.annotate_cpus = (flags & LIVE_HEADER) &&
								 im.written > im.events,
						.no_irq_info = (flags & LIVE_NO_IRQ_INFO) != 0,
						.pflags = print_flags(flags),
						.time_start = im.clear_ns };

		utrace__print_file(&o, im.tf, out);
	}
	r = (int)(im.events > 0x7fffffff ? 0x7fffffff : im.events);
	image_free(&im);
	return r;
}

struct live_snap {
	void *data;                      /* a trace file image of the pages */
	size_t size;
	uint64_t events, written;
};

int live_snapshot(struct live *lv, struct live_snap **out)
{
	struct live_snap *s;
	struct image im;
	int r;

	*out = NULL;
	r = image_make(lv, false, &im);
	if (r < 0 || !im.tf) {
		image_free(&im);
		return r;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->data = malloc(im.size);
	if (!s || !s->data) {
		free(s);
		image_free(&im);
		return -ENOMEM;
	}
	memcpy(s->data, im.map, im.size);
	s->size = im.size;
	s->events = im.events;
	s->written = im.written;
	image_free(&im);
	*out = s;
	return 0;
}

long live_snap_print(const struct live_snap *s, unsigned int flags, FILE *out)
{
	struct utrace__print_opts o = { .input = "snapshot", .mode = UTRACE__OUT_TEXT,
					.quiet = true,
					.no_irq_info = (flags & LIVE_NO_IRQ_INFO) != 0,
					.pflags = print_flags(flags) };
	struct utrace__tf *tf = NULL;

	if (!s || !s->events)
		return 0;
	/* a reader of its own each time: the image is not changed */
	if (utrace__tf_open_mem(s->data, s->size, "snapshot", &tf) == -ENOMEM || !tf) {
		if (tf)
			utrace__tf_close(tf);
		return -ENOMEM;
	}
	header(out, s->events, s->written, flags, NULL);
	o.annotate_cpus = s->written > s->events;
	utrace__print_file(&o, tf, out);
	utrace__tf_close(tf);
	return (long)(s->events > 0x7fffffff ? 0x7fffffff : s->events);
}

void live_snap_free(struct live_snap *s)
{
	if (!s)
		return;
	free(s->data);
	free(s);
}

long live_take(struct live *lv, int (*fn)(void *arg, struct utrace__tf *tf), void *arg)
{
	struct image im;
	int r;
	long n;

	lv->drain = true;
	r = image_make(lv, true, &im);
	if (r < 0)
		return r;
	n = im.tf ? (long)(im.events > 0x7fffffff ? 0x7fffffff : im.events) : 0;
	if (im.tf && (r = fn(arg, im.tf)) < 0)
		n = r;
	image_free(&im);
	return n;
}

void live_set_tracer(struct live *lv, const char *name)
{
	snprintf(lv->tracer, sizeof(lv->tracer), "%s", name ? name : "");
}

void live_set_cpu(struct live *lv, int cpu)
{
	lv->cpu = cpu;
}

/* A page of live_raw()'s stream is complete: append it. */
static int raw_emit(struct utrace__rbpack *pk)
{
	struct live *lv = (struct live *)(void *)((char *)pk - offsetof(struct live, pk));

	if (lv->out_len + UTRACE_PAGE_SIZE > lv->out_cap) {
		size_t cap = lv->out_cap ? lv->out_cap * 2 : 16 * UTRACE_PAGE_SIZE;
		unsigned char *v = realloc(lv->out, cap);

		if (!v) {
			lv->out_failed = true;
			return -1;
		}
		lv->out = v;
		lv->out_cap = cap;
	}
	memcpy(lv->out + lv->out_len, lv->page, UTRACE_PAGE_SIZE);
	lv->out_len += UTRACE_PAGE_SIZE;
	return 0;
}

long live_raw(struct live *lv, unsigned char **pages)
{
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	struct image im;
	int r = image_make(lv, true, &im);

	*pages = NULL;
	if (r < 0)
		return r;
	lv->pk.data_size = UTRACE_PAGE_DATA;
	lv->pk.page = lv->page;
	lv->pk.emit = raw_emit;
	lv->out_len = 0;
	lv->out_failed = false;
	if (im.tf)
		r = utrace__tf_iter_new(im.tf, &it);
	while (im.tf && r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0) {
		if (item.kind == UTRACE__TF_LOST) {
			utrace__rbpack_lost(&lv->pk, item.lost);
			continue;
		}
		/* the mount's format files give the process's ids: the
		 * records keep their common_type */
		if (!item.format || utrace_rb_event_size(item.len) > UTRACE_PAGE_DATA)
			continue;
		if (utrace__rbpack_event(&lv->pk, item.time, item.rec, item.len, -1) < 0)
			break;
	}
	if (it)
		utrace__tf_iter_free(it);
	/* what was taken goes now, as the kernel's reader page */
	utrace__rbpack_flush(&lv->pk);
	image_free(&im);
	if (lv->out_failed) {
		lv->out_len = 0;
		return -ENOMEM;
	}
	*pages = lv->out;
	return (long)lv->out_len;
}

int live_stats(struct live *lv, struct live_stats *st)
{
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	struct image im;
	size_t i;
	int r = image_make(lv, false, &im);

	memset(st, 0, sizeof(*st));
	if (r < 0)
		return r;
	st->entries = im.events;
	st->bytes = im.bytes;
	if (im.tf && utrace__tf_iter_new(im.tf, &it) >= 0) {
		while (utrace__tf_iter_next(it, &item) > 0)
			if (item.kind == UTRACE__TF_EVENT) {
				st->oldest_ns = item.time;
				break;
			}
		utrace__tf_iter_free(it);
	}
	image_free(&im);
	pthread_mutex_lock(&shared_lock);
	for (i = 0; i < lv->n; i++) {
		struct lsrc *s = &lv->src[i];
		struct utrace_thread_slot *sl;
		uint32_t j;

		st->overrun += utrace__pool_overwritten_since_clear(s->pool);
		st->dropped += utrace__pool_lost_no_slot(s->pool);
		for (j = 0; j < utrace_pool_nr_slots(s->pool); j++) {
			sl = utrace_pool_slot(s->pool, j);
			st->dropped += __atomic_load_n(&sl->lost, __ATOMIC_RELAXED);
		}
		if (s->sh) {
			st->overrun += s->sh->held_dropped;
			if (lv->cpu >= 0 && (uint32_t)lv->cpu < s->sh->nr_read)
				st->read += s->sh->read[lv->cpu];
		}
	}
	pthread_mutex_unlock(&shared_lock);
	return 0;
}

int live_clear(struct live *lv)
{
	size_t i;
	int r = 0;

	for (i = 0; i < lv->n; i++) {
		struct shared *sh = lv->src[i].sh;
		int e = utrace__ctl_clear_buffer(lv->src[i].c);

		if (e < 0) {
			r = e;
			continue;
		}
		/* ring_buffer_reset_cpu(): per_cpu stats' read events from 0 */
		if (sh) {
			pthread_mutex_lock(&shared_lock);
			if (sh->read)
				memset(sh->read, 0, sh->nr_read * sizeof(*sh->read));
			pthread_mutex_unlock(&shared_lock);
		}
	}
	return r;
}
