/* SPDX-License-Identifier: MIT */
/*
 * utrace record: run a command and record its events, and those of the
 * processes it forks or execs that use libutrace, into a trace file.
 *
 * The recorder listens on a unix socket (UTRACE_RECORD in the command's
 * environment).  Each traced process connects, hands over the memfd of its
 * event pool and sends its event formats; the recorder maps the pool and,
 * every millisecond, moves full pages from it to the file, whole pages at a
 * time, with no work per event.  When a process goes away (exit, exec,
 * crash, SIGKILL) its socket closes and the recorder takes everything it
 * had committed from the pool, which it still holds.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "setevent.h"
#include "proto.h"
#include "clock.h"
#include "pfmt.h"
#include "pool.h"
#include "file-writer.h"
#include "ctl-client.h"
#include "ctlproto.h"
#include "rundir.h"
#include "cmds.h"
#include "inject.h"
#include "live.h"
#include "live-pool.h"
#include "kevents.h"
#include "record-kprobe.h"
#include "kuprobe.h"
#include "probe-dwarf.h"

#define MAX_PROCS 256
/* A pool grows up to this many times its size (-m), in discard mode, and
 * to at most GROW_LIMIT bytes. */
#define GROW_MAX 8
#define GROW_LIMIT (512ULL << 20)

struct tid_seen {
	uint32_t tid;
};

struct proc {
	int sock;
	uint32_t pid, ppid;
	char comm[17];
	struct utrace_pool *pool;
	uint64_t written;            /* events in pages written to the file */
	uint64_t lost_in_pages;      /* sum of lost_before of those pages */
	uint64_t unsaved;            /* events the file had no room for */
	uint32_t *tids;              /* tids announced with a THREAD record */
	size_t nr_tids;
	int used;
	int lock_fd;                 /* the consumers' turn (live-pool.h), or -1 */
	uint32_t dealt, dealt0;      /* its pool's pages dealt now and at first
				      * (utrace__pool_grow()) */
	uint64_t lost_seen;          /* its writers' lost events when it last grew */
	uint32_t nr_calib;           /* its pool's calibration points written */
	uint64_t next_calib;         /* when to look for more (CLOCK_MONOTONIC) */
	/* The objects it loaded (OBJECT messages): their symbols go into the
	 * file once one of its formats prints a function (%ps, %pS, ...);
	 * until then they wait here. */
	bool want_syms;
	struct pending_obj { size_t file; uint64_t bias; } *objs;
	size_t nr_objs;
};

/*
 * The files of the objects the processes loaded.  An OBJECT message
 * carries the file, opened by the process itself: the recorder (root's,
 * perhaps) reads only what the process could, and never opens a name a
 * process wrote.  One descriptor is kept per file, whoever sent it, so
 * that many processes of the same libraries hold a few dozen.
 */
struct objfile {
	dev_t dev;
	ino_t ino;
	int fd;
};
static struct objfile *objfiles;
static size_t nr_objfiles;

struct record_opts {
	char **events;
	size_t nr_events;
	const char *output;
	unsigned long long buffer_size;
	int overwrite;
	int idle;
	double duration;
	char **filters;          /* --filter EVENT:EXPRESSION entries */
	size_t nr_filters;
	pid_t *pids;             /* -p: attach to these running processes */
	size_t nr_pids;
	int all;                 /* -a: to every traceable process of ours */
	int all_users;           /* --all-users: -a takes every user's (root) */
	char **kevents;          /* the -e entries of kernel events */
	size_t nr_kevents;
	char **kfilters;         /* the --filter entries of kernel events */
	size_t nr_kfilters;
	bool user_none;          /* -e had kernel entries only */
	char **probes;           /* --probe definitions (uprobe_events lines) */
	size_t nr_probes;
	char **probes_made;      /* those made from perf probe's form (ours) */
	size_t nr_probes_made;
	char **kprobes;          /* --kernel-probe definitions */
	size_t nr_kprobes;
	char stacks[64];         /* -g: UTRACE_STACKS (MODE,SIZE,FRAMES), or "" */
	const char *call_graph;  /* -g / --call-graph's MODE[,SIZE] */
	unsigned long max_stack; /* --max-stack */
	/* --tracer and its lists (',' apart), as the kernel's files take them */
	const char *tracer;
	char *ft_lists[3];       /* --ftrace-filter, --ftrace-notrace, --graph-function */
	const char *max_depth;
};

static struct proc procs[MAX_PROCS];
static struct utrace__tfw out;
static bool out_failed;          /* the file could not be written: discard */
static bool out_private;         /* the file is mode 0600 (several users' data) */
static int tsc_used;
static unsigned long long total_written, total_lost;
/* Of the lost: for want of a thread slot, and in pools that stopped
 * recording (their process found them written from outside). */
static unsigned long long total_no_slot, total_broken;
static int nr_processes;
/* The -e entries of a recorded command, to say which matched no event of
 * the processes that connected (they send the formats of all their
 * events), and the first process, to name it. */
static struct utrace__set_event_match *rec_ev;
static const char **rec_ev_text;
static bool *rec_ev_matched;
static size_t nr_rec_ev;
static unsigned long long nr_formats;
/* The EVENT of each --filter entry, to say which matched no event. */
static struct utrace__set_event_match *rec_flt;
static bool *rec_flt_matched;
static char **rec_flt_text;
static size_t nr_rec_flt;
static uint32_t first_pid;
static char first_comm[17];
/* The kernel entries without a kernel: prefix, to say when a program has
 * events of the same name (the kernel's were taken): the first pid. */
static struct utrace__set_event_match *rec_kev;
static const char **rec_kev_text;
static uint32_t *rec_kev_also;
static size_t nr_rec_kev;

/*
 * `utrace stat` (lib/reader/stat.c) runs `utrace record` with
 * UTRACE__STAT="SYNC GO ERR", three descriptors: the command's process
 * writes its pid to SYNC and waits for a byte on GO before it execs (stat
 * opens its counters on it meanwhile), with ERR as its stderr (the
 * recorder's own lines go where stat wants them); at the end the recorder
 * writes the command's struct rusage to SYNC and exits with the command's
 * status.
 */
static int stat_sync = -1, stat_go = -1, stat_err = -1;
static struct rusage stat_ru;

static void stat_hook_parse(void)
{
	const char *e = getenv("UTRACE__STAT");

	if (!e || sscanf(e, "%d %d %d", &stat_sync, &stat_go, &stat_err) != 3)
		stat_sync = stat_go = stat_err = -1;
	unsetenv("UTRACE__STAT");
}

/* In the command's process, before its exec. */
static void stat_hook_child(void)
{
	pid_t me = getpid();
	char c;

	if (stat_sync < 0)
		return;
	dup2(stat_err, STDERR_FILENO);
	if (write(stat_sync, &me, sizeof(me)) != sizeof(me) || read(stat_go, &c, 1) != 1)
		_exit(127);
	close(stat_sync);
	close(stat_go);
	close(stat_err);
}

/* The recorder's exit status: the command's, for stat. */
static int stat_hook_end(int status, int child_done, int rec_status)
{
	if (stat_sync < 0)
		return rec_status;
	if (write(stat_sync, &stat_ru, sizeof(stat_ru)) != sizeof(stat_ru))
		return 1;
	if (!child_done)
		return rec_status;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static const char record_usage[] =
	"usage: utrace record [-e EVENTS]... [--filter EVENT:EXPR]... [-o FILE]\n"
	"                     [-m SIZE] [--overwrite] [--idle] [--duration SECONDS]\n"
	"                     -- COMMAND [ARGS]\n"
	"       utrace record [-e EVENTS]... [--filter EVENT:EXPR]... [-o FILE]\n"
	"                     [--overwrite] [--idle] [--duration SECONDS] -p PID... | -a\n"
	"\n"
	"Run COMMAND and record the events of it and of the processes it forks or\n"
	"execs that use libutrace into FILE (default utrace.dat).  With -p or -a,\n"
	"record running processes instead: their events are switched on now and\n"
	"back to how they were when the recording stops; what their buffers held\n"
	"already (overwrite mode) is recorded too.\n"
	"\n"
	"  -p, --pid PID        record this running process (may repeat)\n"
	"  -a, --all            record every traceable process of the runtime\n"
	"                       directory running now ($UTRACE_RUNTIME_DIR, else\n"
	"                       $XDG_RUNTIME_DIR/utrace, else /tmp/utrace-UID), your\n"
	"                       own only (root's own only, for root)\n"
	"      --all-users      -a for root: every user's traceable processes, in\n"
	"                       every user's runtime directory (the file is made\n"
	"                       mode 0600)\n"
	"  -e, --event EVENTS   events to switch on, in the kernel's set_event syntax\n"
	"                       (sys:event, sys:*, *:event, !...); may repeat;\n"
	"                       default: all (*:*).  An entry whose system is one of\n"
	"                       the kernel's (sched:sched_switch, sched:*) records\n"
	"                       kernel events of the traced processes and their\n"
	"                       children (root); kernel:SYS:EVENT and user:SYS:EVENT\n"
	"                       say which is meant\n"
	"  -f, --filter EVENT:EXPR  record only the events of EVENT (sys:event, sys:*,\n"
	"                       event) for which EXPR, in the kernel's filter\n"
	"                       language, holds, from the first one on; may repeat\n"
	"                       (the last entry for an event wins)\n"
	"  -o, --output FILE    the trace file (default utrace.dat)\n"
	"  -m, --buffer-size SIZE  event memory per process, e.g. 8M (default), 512K,\n"
	"                       1G; pages that the recorder has not saved yet live here;\n"
	"                       without --overwrite it grows up to 8 times this size\n"
	"                       (at most 512M)\n"
	"                       while the recorder falls behind\n"
	"      --overwrite      when the memory is full, reuse the oldest pages\n"
	"                       (flight recorder) instead of dropping new events\n"
	"      --idle           run the recorder at idle priority (SCHED_IDLE): it\n"
	"                       never takes CPU time from the traced programs; when\n"
	"                       they keep every CPU busy, events are lost (and\n"
	"                       counted) instead\n"
	"      --duration SECONDS  stop after this long (the command gets SIGTERM)\n"
	"      --probe DEFINITION  a dynamic probe in the command, in the kernel's\n"
	"                       uprobe_events syntax (see utrace-probe(1)) or perf\n"
	"                       probe's, FUNC[:LINE|+OFFS|%return] [VAR[:TYPE]]...\n"
	"                       (C names from the command's DWARF, as utrace probe\n"
	"                       -x); may repeat; the command needs no utrace events\n"
	"                       of its own (libutrace is preloaded); a probe placed\n"
	"                       as a breakpoint is said, with its cost.  With -p\n"
	"                       (uprobe_events syntax): placed in the process, which\n"
	"                       gets libutrace by ptrace if it has none (utrace\n"
	"                       attach), and removed at the end\n"
	"      --kernel-probe DEF  a kernel uprobe, as kernel events of the recording\n"
	"                       (root; for programs without libutrace): DEF is\n"
	"                       p[:EVENT] [OBJ:]SYMBOL[+OFFS] [FETCHARGS] or r[:EVENT]\n"
	"                       [OBJ:]SYMBOL [FETCHARGS], OBJ a path or a library\n"
	"                       of the -p process, by default the command or the\n"
	"                       process's program; the site must be an instruction\n"
	"                       boundary; removed at the end; may repeat.  A -p\n"
	"                       process without libutrace is recorded until it ends\n"
	"  -g                   record the call stack of every event: --call-graph fp\n"
	"      --call-graph MODE[,SIZE]  the stack of every event (a command's, or\n"
	"                       the -p/-a processes' while recorded), from the\n"
	"                       traced call site out: MODE fp walks\n"
	"                       frame pointers (fast; code without them gives short\n"
	"                       stacks), dwarf unwinds from .eh_frame (libunwind);\n"
	"                       SIZE: the stack bytes walked (default 8192); each\n"
	"                       distinct stack is stored once; utrace script prints\n"
	"                       them\n"
	"      --max-stack N    at most N frames a stack (default 64, at most 128)\n"
	"      --tracer function|function_graph  the kernel's function tracer in the\n"
	"                       command (or the -p processes): every function of the\n"
	"                       objects built with -fpatchable-function-entry=5 or\n"
	"                       -pg -mfentry -mnop-mcount -mrecord-mcount, recorded as\n"
	"                       ftrace:function (ip <- parent), or ftrace:funcgraph_entry\n"
	"                       and funcgraph_exit (depth, calltime, rettime)\n"
	"      --ftrace-filter GLOB  only these functions (set_ftrace_filter; may\n"
	"                       repeat; '!GLOB' removes, GLOB:mod:LIB a library's)\n"
	"      --ftrace-notrace GLOB  never these (set_ftrace_notrace; may repeat)\n"
	"      --graph-function FUNC  function_graph: only FUNC and what it calls\n"
	"                       (set_graph_function; may repeat)\n"
	"      --max-depth N    function_graph: N levels of calls at most\n"
	"                       (max_graph_depth; 0: no limit)\n"
	"  -h, --help           this text\n"
	"\n"
	"Ctrl-C (SIGINT) or SIGTERM stops the recording cleanly.\n";

/*
 * Calibration (docs/trace-file-format.md, Time).  A reader converts TSC
 * ticks with the rate between the file's first and last CLOCK points, so
 * the file must have two before its first PAGE, whatever cuts it later:
 * the first is written when the file is made, the second 20 ms after it,
 * before anything else (overlapping the start of the command), then
 * others 100 ms later and every second.  A file cut at time t then
 * converts with the rate measured over at least a tenth of t (a point's
 * error is some 20 ns: 1.5 us a second at the start, soon far less), and
 * exactly as an uncut one where the points are.
 */
#define CLOCK_SECOND_NS 20000000ull
#define CLOCK_THIRD_NS 100000000ull
#define CLOCK_EVERY_NS 1000000000ull

/* One TSC/CLOCK_MONOTONIC calibration point (lib/common/calib.c); returns
 * its ns. */
static uint64_t write_clock_point(void)
{
	struct utrace_calib_point pt;

	utrace__calib_measure(&pt, NULL, NULL);
	utrace__tfw_clock(&out, pt.tsc, pt.ns);
	return pt.ns;
}

/* The second point, CLOCK_SECOND_NS after the first ('first' ns). */
static uint64_t write_second_clock_point(uint64_t first)
{
	struct timespec at = {
		(time_t)((first + CLOCK_SECOND_NS) / 1000000000u),
		(long)((first + CLOCK_SECOND_NS) % 1000000000u),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
	return write_clock_point();
}

/* The file could not be written (a full disk): say so once; from now on
 * pages are freed unwritten and their events counted lost. */
static void check_output(const char *path)
{
	if (out_failed || !out.error)
		return;
	out_failed = true;
	fprintf(stderr, "utrace record: cannot write '%s': %s; recording stopped at byte "
		"%llu (the file up to there is readable); the command goes on, its events "
		"from now on are counted lost\n", path, strerror(out.error),
		(unsigned long long)out.bytes);
}

static int parse_size(const char *s, unsigned long long *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	default: break;
	}
	if ((*end == 'b' || *end == 'B') && end[1] == 0)
		end++;
	if (*end)
		return -1;
	*v = n;
	return 0;
}

/* The runtime directory, made if needed; NULL (said why) when refused. */
static const char *runtime_dir(char *buf, size_t len)
{
	char err[512];

	if (utrace__rundir(buf, len, true, err, sizeof(err)) < 0) {
		fprintf(stderr, "utrace: %s\n", err);
		return NULL;
	}
	return buf;
}

static void announce_thread(struct proc *p, uint32_t tid, uint32_t slot)
{
	char path[64], comm[32] = "";
	size_t i;
	FILE *f;

	for (i = 0; i < p->nr_tids; i++)
		if (p->tids[i] == tid)
			return;
	uint32_t *n = realloc(p->tids, (p->nr_tids + 1) * sizeof(*n));
	if (!n)
		return;
	p->tids = n;
	p->tids[p->nr_tids++] = tid;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", p->pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		fclose(f);
		comm[strcspn(comm, "\n")] = 0;
	}
	if (!comm[0] && slot < utrace_pool_nr_slots(p->pool)) {
		struct utrace_thread_slot *s = utrace_pool_slot(p->pool, slot);

		if (s->tid == tid)
			memcpy(comm, s->comm, 15);
	}
	utrace__tfw_thread(&out, p->pid, tid, comm);
}

/*
 * Write one page: a copy of what is committed in it (utrace__pool_peek()),
 * less the events a consuming reader (utrace pipe) already took from it
 * while it was being written (its descriptor's read offset).
 */
static void write_page(struct proc *p, uint32_t idx)
{
	struct utrace_page_desc *d = utrace_pool_desc(p->pool, idx);
	struct utrace_page *pg = utrace_pool_page(p->pool, idx);
	union {
		unsigned char b[UTRACE_PAGE_SIZE];
		struct utrace_page pg;
	} page;
	struct utrace_pool_peek pk;
	uint64_t commit, bytes, read, clear = utrace__pool_clear_ts(p->pool);
	struct utrace__tf_page_rec h = { p->pid, d->tid, d->cpu, 0, d->seq, d->lost_before };
	long n;

	utrace__pool_peek(p->pool, idx, &pk);
	commit = pk.commit;
	bytes = commit & UTRACE_RB_COMMIT_MASK;
	read = pk.read;
	if (bytes > UTRACE_PAGE_DATA)
		return; /* not a page we can trust */
	memset(&page, 0, sizeof(page));
	if (read > bytes)
		read = 0;
	/* a pipe took its start, or a clear (utrace clear) came after its
	 * first events: the rest */
	if (read > 0 || pg->time_stamp < clear) {
		n = utrace__rb_page_cut(pg, (uint32_t)bytes, (uint32_t)read, clear, 0, &page.pg);
		page.pg.commit |= commit & UTRACE_RB_MISSED_EVENTS;
		bytes = page.pg.commit & UTRACE_RB_COMMIT_MASK;
	} else {
		memcpy(page.b, &pg->time_stamp, 8);
		memcpy(page.b + 8, &commit, 8);
		memcpy(page.b + UTRACE_PAGE_HDR, pg->data, bytes);
		n = utrace__rb_count_events(&page.pg, UTRACE_PAGE_DATA);
	}
	if (bytes == 0 && d->lost_before == 0)
		return;
	announce_thread(p, d->tid, d->slot);
	if (out_failed ||
	    utrace__tfw_page_now(&out, &h, page.b, sizeof(page.b)) < 0) {
		p->unsaved += n > 0 ? (uint64_t)n : 0;
		return;
	}
	if (n > 0)
		p->written += (uint64_t)n;
	p->lost_in_pages += d->lost_before;
}

/*
 * Move the full pages of a live process to the file; 1 if there were any.
 * Full pages belong to the recorder until it gives them back, so they are
 * written straight from the pool (writev, a batch at a time) and then
 * freed; the writer's event count of the page is used, nothing is parsed.
 * Once the file cannot be written (a full disk), pages are still taken
 * and freed, so the program goes on as before, and their events are
 * counted lost.
 */
struct drain_batch {
	struct proc *p;
	struct utrace__tf_page_rec hdr[UTRACE_POOL_DRAIN_BATCH];
	uint64_t events[UTRACE_POOL_DRAIN_BATCH], base;
	int nq;
};

_Static_assert(UTRACE_POOL_DRAIN_BATCH <= UTRACE_TF_BATCH,
	       "a drained batch fits in the file writer's batch");

static void drain_page(void *arg, struct utrace_pool *pool, uint32_t idx)
{
	struct drain_batch *b = arg;
	struct proc *p = b->p;
	struct utrace_page_desc *d = utrace_pool_desc(pool, idx);
	struct utrace_pool_peek pk;
	int nq = b->nq;

	utrace__pool_peek(pool, idx, &pk);
	if (pk.read || utrace_pool_page(pool, idx)->time_stamp < utrace__pool_clear_ts(pool)) {
		/* A pipe took the start of it, or a clear came after its
		 * first events: the rest, copied. */
		write_page(p, idx);
		return;
	}
	if (out_failed) {
		p->unsaved += d->nr_events;
		return;
	}
	announce_thread(p, d->tid, d->slot);
	b->hdr[nq].pid = p->pid;
	b->hdr[nq].tid = d->tid;
	b->hdr[nq].cpu = d->cpu;
	b->hdr[nq].reserved = 0;
	b->hdr[nq].seq = d->seq;
	b->hdr[nq].lost_before = d->lost_before;
	b->events[nq] = d->nr_events;
	utrace__tfw_page(&out, &b->hdr[nq], utrace_pool_page(pool, idx), UTRACE_PAGE_SIZE);
	b->nq++;
}

static void drain_batch_end(void *arg, struct utrace_pool *pool)
{
	struct drain_batch *b = arg;
	struct proc *p = b->p;
	int i;

	(void)pool;
	utrace__tfw_flush_pages(&out);
	/* The first ones are in the file, all of them unless a write
	 * failed (a full disk): the others' events are lost. */
	for (i = 0; i < b->nq; i++) {
		if ((uint64_t)i < out.pages_done - b->base) {
			p->written += b->events[i];
			p->lost_in_pages += b->hdr[i].lost_before;
		} else {
			p->unsaved += b->events[i];
		}
	}
	b->nq = 0;
	b->base = out.pages_done;
}

/*
 * Move the full pages of a live process to the file; 1 if there were any.
 *
 * When one look finds a quarter of the pool's dealt pages full, the writers
 * are ahead of the recorder (it was not scheduled for a while: the
 * machine is busy): the pool grows, twice its pages dealt (four times
 * when events were lost since the last growth: it was full), up to what
 * the process made room for (UTRACE_BUFFER_MAX, GROW_MAX times -m).  A pool
 * that keeps up never grows, so it costs no more memory than -m.
 */
static int drain(struct proc *p)
{
	static const struct utrace_pool_drain_ops ops = {
		.page = drain_page, .batch_end = drain_batch_end,
	};
	struct drain_batch b = { .p = p, .base = out.pages_done };
	size_t n;

	utrace__live_consumer_lock(&p->lock_fd, true);
	n = utrace__pool_drain(p->pool, &ops, &b);
	if (n >= p->dealt / 4 && p->dealt < utrace_pool_nr_pages(p->pool) && !out_failed) {
		/* events lost already: the pool was full; grow faster */
		uint64_t lost = utrace__pool_lost_in_slots(p->pool);

		p->dealt = utrace__pool_grow(p->pool, p->dealt,
					     lost > p->lost_seen ? 3 * p->dealt : p->dealt);
		p->lost_seen = lost;
	}
	utrace__live_consumer_lock(&p->lock_fd, false);
	return n > 0;
}

/*
 * The pool's TSC calibration points not yet in the file (the one that is
 * due added first), at most every 10 ms unless 'now' (the file reader
 * takes every point wherever it is in the file; a reader times each event
 * with the points up to it, lib/reader/tsc-time.c, as `utrace show` does).
 */
static void copy_calib(struct proc *p, bool now)
{
	static struct utrace_calib_point pt[64];
	static struct utrace_calib_ext x[64];
	uint64_t t = utrace__mono_ns();
	uint32_t n, nx, i;

	if (p->pool->clock != UTRACE_CLOCK_TSC || (!now && t < p->next_calib))
		return;
	p->next_calib = t + 10000000;
	utrace__pool_calib_tick(p->pool);
	while ((n = utrace__pool_calib_points(p->pool, p->nr_calib, pt, 64)) > 0) {
		nx = utrace__pool_calib_exts(p->pool, p->nr_calib, pt, n, x);
		for (i = 0; i < n; i++, p->nr_calib++) {
			utrace__tfw_calib(&out, p->pid, p->nr_calib, pt[i].tsc, pt[i].ns);
			if (i < nx && x[i].point)
				utrace__tfw_calibx(&out, p->pid, p->nr_calib, &x[i]);
		}
	}
}

static int cmp_desc(const void *a, const void *b, void *arg)
{
	struct utrace_pool *pool = arg;
	const struct utrace_page_desc *x = utrace_pool_desc(pool, *(const uint32_t *)a);
	const struct utrace_page_desc *y = utrace_pool_desc(pool, *(const uint32_t *)b);

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The last look at a pool: the full queue first, then every page that
 * still holds data (full pages the queue could not give, the pages threads
 * were writing), in each thread's order.
 */
static void drain_final(struct proc *p)
{
	uint32_t *left, n = 0, i;
	/* A process still running (attached with -p, or a --duration stop)
	 * goes on writing: copy its current pages, leave their state alone. */
	bool alive = p->pid && kill((pid_t)p->pid, 0) == 0;

	drain(p);
	left = malloc(utrace_pool_nr_pages(p->pool) * sizeof(*left));
	if (!left)
		return;
	utrace__live_consumer_lock(&p->lock_fd, true);
	n = utrace__pool_scan(p->pool, !alive, left);
	qsort_r(left, n, sizeof(*left), cmp_desc, p->pool);
	for (i = 0; i < n; i++) {
		write_page(p, left[i]);
		if (!alive)
			utrace__pool_drop(p->pool, left[i]);
	}
	utrace__live_consumer_lock(&p->lock_fd, false);
	free(left);
}

static void finish(struct proc *p)
{
	uint64_t lost = p->pool ? utrace__pool_lost_no_slot(p->pool) : 0, rest;
	uint32_t missed;

	if (p->pool) {
		drain_final(p);
		/* The events before the pool's second point need it. */
		if (p->pool->clock == UTRACE_CLOCK_TSC)
			utrace__pool_calib_second(p->pool);
		copy_calib(p, true);
		lost += utrace__pool_lost_in_slots(p->pool);
		lost += p->unsaved;
		rest = lost > p->lost_in_pages ? lost - p->lost_in_pages : 0;
		if (rest) {
			utrace__tfw_lost(&out, p->pid, 0, rest);
		}
		missed = utrace__pool_msgs_missed(p->pool);
		utrace__tfw_stats(&out, p->pid, p->written, lost, missed);
		if (missed)
			fprintf(stderr, "utrace record: pid %u (%s) dropped this recorder, which "
				"had stopped reading: %u event formats or objects missed (events "
				"of those formats cannot be printed, later ones were not "
				"recorded)\n", p->pid, p->comm, missed);
		if (lost || p->written)
			fprintf(stderr, "utrace record: pid %u (%s): %llu events, %llu lost\n",
				p->pid, p->comm, (unsigned long long)p->written,
				(unsigned long long)lost);
		if (p->dealt > p->dealt0)
			fprintf(stderr, "utrace record: pid %u (%s): its buffer grew from %.1f "
				"to %.1f MiB while the recorder was behind\n", p->pid, p->comm,
				p->dealt0 * (double)UTRACE_PAGE_SIZE / (1 << 20),
				p->dealt * (double)UTRACE_PAGE_SIZE / (1 << 20));
		total_written += p->written;
		total_lost += lost;
		total_no_slot += utrace__pool_lost_no_slot(p->pool);
		if (utrace__pool_dead(p->pool) == UTRACE_POOL_BROKEN) {
			fprintf(stderr, "utrace record: pid %u (%s) stopped recording: its event "
				"pool was changed from outside; its events from then on are "
				"counted lost\n", p->pid, p->comm);
			total_broken += lost;
		}
		utrace__pool_unmap(p->pool);
	}
	if (p->sock >= 0)
		close(p->sock);
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	free(p->tids);
	free(p->objs);
	memset(p, 0, sizeof(*p));
	p->sock = -1;
	p->lock_fd = -1;
}

static void hello(struct proc *p, const struct utrace_msg_hello *h, int fd)
{
	struct utrace_pool hdr;
	struct stat st;
	void *m;
	size_t i;

	/* A second HELLO from a pid: the old image exec'd; close it first. */
	for (i = 0; i < MAX_PROCS; i++)
		if (procs[i].used && &procs[i] != p && procs[i].pid == h->pid &&
		    procs[i].pool)
			finish(&procs[i]);
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(hdr) ||
	    pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
	    !utrace__pool_header_ok(&hdr, (uint64_t)st.st_size)) {
		fprintf(stderr, "utrace record: pid %u sent a pool this recorder cannot read\n",
			h->pid);
		close(fd);
		return;
	}
	/* populated (no fault per page while copying at full speed): the
	 * pages dealt so far; those a pool that can grow deals later
	 * (utrace__pool_grow()) fault in once, on their first lap */
	p->dealt = hdr.nr_dealt ? hdr.nr_dealt : hdr.nr_pages;
	p->dealt0 = p->dealt;
	m = mmap(NULL, hdr.size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | (p->dealt == hdr.nr_pages ? MAP_POPULATE : 0), fd, 0);
	if (m != MAP_FAILED) {
#ifdef MADV_POPULATE_READ
		if (p->dealt < hdr.nr_pages)
			/* a hint: without it, a fault per page on the first lap */
			(void)madvise(m, hdr.pages_off + (uint64_t)p->dealt * UTRACE_PAGE_SIZE,
				      MADV_POPULATE_READ);
#endif
		if (p->lock_fd >= 0)
			close(p->lock_fd);
		p->lock_fd = utrace__live_lock_open(fd);
	}
	close(fd);
	if (m == MAP_FAILED) {
		fprintf(stderr, "utrace record: cannot map the pool of pid %u: %s\n",
			h->pid, strerror(errno));
		return;
	}
	/* From here the pool's layout is our checked copy, whatever the
	 * process writes into its header. */
	if (utrace__pool_adopt(m, &hdr) < 0) {
		fprintf(stderr, "utrace record: pid %u sent a pool this recorder cannot read\n",
			h->pid);
		munmap(m, hdr.size);
		return;
	}
	p->pool = m;
	p->pid = h->pid;
	p->ppid = h->ppid;
	memcpy(p->comm, h->comm, 16);
	p->comm[16] = 0;
	if (p->pool->clock == UTRACE_CLOCK_TSC)
		tsc_used = 1;
	char exe[257];
	memcpy(exe, h->exe, 256);
	exe[256] = 0;
	utrace__tfw_process(&out, p->pid, p->ppid, p->pool->clock,
			    __atomic_load_n(&p->pool->trace_clock, __ATOMIC_ACQUIRE), p->comm, exe);
	/* the symbols for %ps / %pS come with the process's OBJECT messages */
	if (!nr_processes++) {
		first_pid = p->pid;
		memcpy(first_comm, p->comm, sizeof(first_comm));
	}
}

/* Keep fd (taken over) among objfiles: its index, or -1. */
static ssize_t objfile_keep(int fd)
{
	struct objfile *n;
	struct stat st;
	size_t i;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	for (i = 0; i < nr_objfiles; i++)
		if (objfiles[i].dev == st.st_dev && objfiles[i].ino == st.st_ino) {
			close(fd);
			return (ssize_t)i;
		}
	n = realloc(objfiles, (nr_objfiles + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return -1;
	}
	objfiles = n;
	objfiles[nr_objfiles] = (struct objfile){ st.st_dev, st.st_ino, fd };
	return (ssize_t)nr_objfiles++;
}

/* The symbols of an object the process loaded (fd: the file it opened,
 * ours now): written now if one of its formats prints functions, else
 * kept for when one does (a recording of events without %ps carries no
 * symbol table: libc's alone is 0.2 MB). */
static void note_object(struct proc *p, int fd, uint64_t bias)
{
	struct pending_obj *v;
	ssize_t f = objfile_keep(fd);

	if (f < 0)
		return;
	if (p->want_syms) {
		utrace__tfw_symbols_fd(&out, p->pid, objfiles[f].fd, bias);
		return;
	}
	v = realloc(p->objs, (p->nr_objs + 1) * sizeof(*v));
	if (!v)
		return;
	p->objs = v;
	v[p->nr_objs++] = (struct pending_obj){ (size_t)f, bias };
}

static void want_symbols(struct proc *p)
{
	size_t i;

	p->want_syms = true;
	for (i = 0; i < p->nr_objs; i++)
		utrace__tfw_symbols_fd(&out, p->pid, objfiles[p->objs[i].file].fd,
				       p->objs[i].bias);
	free(p->objs);
	p->objs = NULL;
	p->nr_objs = 0;
}

/* A process has this event (its format text, "name: NAME\n..."): mark
 * the -e entries that match it. */
static void note_format(uint32_t pid, const char *system, const char *text, size_t len)
{
	char name[256];
	const char *end;
	size_t i, n;

	nr_formats++;
	if (len < 6 || memcmp(text, "name: ", 6))
		return;
	end = memchr(text + 6, '\n', len - 6);
	n = end ? (size_t)(end - text - 6) : 0;
	if (!n || n >= sizeof(name))
		return;
	memcpy(name, text + 6, n);
	name[n] = 0;
	for (i = 0; i < nr_rec_ev; i++)
		if (!rec_ev_matched[i] && utrace__set_event_matches(&rec_ev[i], system, name))
			rec_ev_matched[i] = true;
	for (i = 0; i < nr_rec_flt; i++)
		if (!rec_flt_matched[i] && utrace__set_event_matches(&rec_flt[i], system, name))
			rec_flt_matched[i] = true;
	for (i = 0; i < nr_rec_kev; i++)
		if (!rec_kev_also[i] && rec_kev[i].set &&
		    utrace__set_event_matches(&rec_kev[i], system, name))
			rec_kev_also[i] = pid;
}

/* A kernel entry that a program's events match too: said once. */
static void explain_kernel_names(void)
{
	size_t i;

	for (i = 0; i < nr_rec_kev; i++)
		if (rec_kev_also[i])
			fprintf(stderr, "utrace record: '%s' names kernel events and events "
				"of pid %u too: the kernel's were recorded (user:%s records "
				"the program's)\n", rec_kev_text[i], rec_kev_also[i],
				rec_kev_text[i]);
}

/* The -e entries of a command, to check them against its events. */
static void parse_rec_events(char *copy)
{
	char *save = NULL, *tok;
	size_t cap = 0;

	for (tok = copy ? strtok_r(copy, ", \t", &save) : NULL; tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		if (nr_rec_ev == cap) {
			size_t c = cap ? 2 * cap : 8;
			void *a = realloc(rec_ev, c * sizeof(*rec_ev));

			if (!a)
				return;
			rec_ev = a;
			a = realloc(rec_ev_text, c * sizeof(*rec_ev_text));
			if (!a)
				return;
			rec_ev_text = a;
			a = realloc(rec_ev_matched, c * sizeof(*rec_ev_matched));
			if (!a)
				return;
			rec_ev_matched = a;
			cap = c;
		}
		/* a malformed entry: the program says so itself */
		if (utrace__parse_set_event(tok, strlen(tok), &rec_ev[nr_rec_ev]) < 0)
			continue;
		rec_ev_text[nr_rec_ev] = tok;
		rec_ev_matched[nr_rec_ev] = false;
		nr_rec_ev++;
	}
}

/*
 * After the summary of a recorded command: what could explain an empty or
 * thin recording, where the program's own warnings have scrolled away.
 * With -e entries of the programs' (given: how many), whether none of
 * them matched an event: nothing asked for could be recorded.
 */
static bool explain_events(const char *cmd, const char *path, size_t given)
{
	const char *base = strrchr(cmd, '/');
	size_t i, bad = 0, set = 0;

	base = base ? base + 1 : cmd;
	if (!nr_processes || !nr_formats) {
		fprintf(stderr, "utrace record: '%s' has no utrace events%s\n", base,
			nr_processes ? "" : " (it does not use libutrace)");
		/* what -e asked for: none of it was there to record */
		for (i = 0; given && i < nr_rec_ev; i++)
			if (rec_ev[i].set)
				fprintf(stderr, "utrace record: nothing recorded for '%s'\n",
					rec_ev_text[i]);
		if (given && kev_cannot_tell())
			fprintf(stderr, "utrace record: if an entry names kernel events "
				"(kernel:SYS:EVENT): %s\n", kev_cannot_tell());
		return given > 0;
	}
	for (i = 0; i < nr_rec_ev; i++) {
		if (rec_ev[i].set && rec_ev_matched[i])
			set++;
		if (rec_ev_matched[i])
			continue;
		bad++;
		if (nr_processes == 1)
			fprintf(stderr, "utrace record: no event of pid %u (%s) matches '%s'\n",
				first_pid, first_comm, rec_ev_text[i]);
		else
			fprintf(stderr, "utrace record: no event of the %d processes matches "
				"'%s'\n", nr_processes, rec_ev_text[i]);
	}
	for (i = 0; i < nr_rec_flt; i++) {
		if (rec_flt_matched[i])
			continue;
		bad++;
		fprintf(stderr, "utrace record: no event matches the filter '%s'\n",
			rec_flt_text[i]);
	}
	if (bad)
		fprintf(stderr, "utrace record: the events %s: utrace script --list -i '%s'\n",
			nr_processes == 1 ? "it has" : "they have", path);
	if (bad && kev_cannot_tell())
		fprintf(stderr, "utrace record: if an entry names kernel events "
			"(kernel:SYS:EVENT): %s\n", kev_cannot_tell());
	return given > 0 && !set;
}

/*
 * On a terminal, a status line once a second while recording, rewritten
 * in place (as perf record's): time, events, MB written, lost.
 */
static bool status_shown;

static void show_status(uint64_t start_ns)
{
	unsigned long long ev = total_written, lost = total_lost;
	double secs = (double)(utrace__mono_ns() - start_ns) / 1e9;
	size_t i;

	for (i = 0; i < MAX_PROCS; i++)
		if (procs[i].used && procs[i].pool) {
			ev += procs[i].written;
			lost += procs[i].lost_in_pages + procs[i].unsaved;
		}
	fprintf(stderr, "\r\033[Kutrace record: %.0f s, %llu events, %.1f MB, %llu lost",
		secs, ev, out.bytes / 1e6, lost);
	fflush(stderr);
	status_shown = true;
}

static void end_status(void)
{
	if (status_shown)
		fputs("\r\033[K", stderr);
	status_shown = false;
}

/*
 * A dynamic probe's fate in a process (--probe): a definition it refused
 * (the recording fails: what was asked is not all there), or where the
 * engine placed breakpoints, and what a hit costs there.  Each said once,
 * whichever process says it first (children get the same probes).
 */
static bool probe_refused;
static char **probe_notes;
static size_t nr_probe_notes;

static void probe_note(struct proc *p, uint32_t what, const char *line, const char *text)
{
	char *s = NULL;
	char **a;

	if (what == UTRACE_PROBE_REFUSED) {
		probe_refused = true;
		if (asprintf(&s, "utrace record: pid %u (%s): --probe '%s' refused: %s", p->pid,
			     p->comm, line, text) < 0)
			return;
	} else if (what == UTRACE_PROBE_BREAKPOINT) {
		/* the costs: bench/RESULTS-probe.md, a hit with an empty
		 * handler (about 1 us as a breakpoint, 5 ns as a jump) */
		if (asprintf(&s, "utrace record: pid %u (%s): probe '%s' is a breakpoint at %s: "
			     "a hit takes a trap, about 1 us, where a jump takes about 5 ns",
			     p->pid, p->comm, line, text) < 0)
			return;
	} else if (what == UTRACE_PROBE_MATCHED) {
		if (asprintf(&s, "utrace record: pid %u (%s): --probe '%s': %s matching functions "
			     "probed", p->pid, p->comm, line, text) < 0)
			return;
	} else {
		return;
	}
	for (size_t i = 0; i < nr_probe_notes; i++)
		if (!strcmp(strchr(probe_notes[i], ')'), strchr(s, ')'))) {
			free(s);
			return;
		}
	fprintf(stderr, "%s\n", s);
	a = realloc(probe_notes, (nr_probe_notes + 1) * sizeof(*a));
	if (!a) {
		free(s);
		return;
	}
	probe_notes = a;
	probe_notes[nr_probe_notes++] = s;
}

/* Read what a process sent; 0 when its socket closed. */
static int receive(struct proc *p)
{
	union {
		struct utrace_msg_hello h;
		struct utrace_msg_format f;
		struct utrace_msg_object o;
		struct utrace_msg_probe pr;
		unsigned char raw[1 << 16];
	} *buf = malloc(sizeof(*buf));
	char cbuf[CMSG_SPACE(sizeof(int))];
	int alive = 1;

	if (!buf)
		return 1;
	for (;;) {
		struct iovec iov = { buf, sizeof(*buf) };
		struct msghdr mh = { 0 };
		struct cmsghdr *cm;
		int fd = -1;
		ssize_t n;

		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		n = recvmsg(p->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			alive = 0;
			break;
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				memcpy(&fd, CMSG_DATA(cm), sizeof(int));
		if (n >= (ssize_t)sizeof(buf->h) && buf->h.type == UTRACE_MSG_HELLO &&
		    fd >= 0 && !p->pool) {
			hello(p, &buf->h, fd);
			continue;
		}
		/* an object the process has loaded: its file's symbols,
		 * read from the file it passed (none without: we read only
		 * what it could) whether or not the process still runs */
		if (n > (ssize_t)sizeof(buf->o) && buf->o.type == UTRACE_MSG_OBJECT && p->pool &&
		    buf->raw[n - 1] == 0 && buf->raw[sizeof(buf->o)] == '/') {
			if (fd >= 0)
				note_object(p, fd, buf->o.bias);
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (n > (ssize_t)sizeof(buf->pr) && buf->pr.type == UTRACE_MSG_PROBE &&
		    buf->raw[n - 1] == 0) {
			const char *line = (const char *)buf->raw + sizeof(buf->pr);
			size_t ll = strnlen(line, (size_t)n - sizeof(buf->pr));

			if (sizeof(buf->pr) + ll + 1 < (size_t)n)
				probe_note(p, buf->pr.what, line, line + ll + 1);
			continue;
		}
		if (n > (ssize_t)sizeof(buf->f) && buf->f.type == UTRACE_MSG_FORMAT &&
		    p->pool) {
			const char *sys = (const char *)buf->raw + sizeof(buf->f);
			size_t rest = (size_t)n - sizeof(buf->f);
			size_t sl = strnlen(sys, rest);

			if (sl + 1 < rest && memchr(sys + sl + 1, 0, rest - sl - 1)) {
				utrace__tfw_format(&out, p->pid, buf->f.id, sys, sys + sl + 1);
				note_format(p->pid, sys, sys + sl + 1, rest - sl - 1);
				/* (not for the runtime's ftrace:print, whose
				 * %ps the printer never shows: the kernel's
				 * tracing_mark_write line; ftrace:user_stack's
				 * frames are shown, and the function tracers') */
				if (!p->want_syms &&
				    (strcmp(sys, "ftrace") ? utrace__pfmt_uses_symbols(sys + sl + 1)
				     : (!strncmp(sys + sl + 1, "name: user_stack\n", 17) ||
					!strncmp(sys + sl + 1, "name: stack\n", 12) ||
					(!strncmp(sys + sl + 1, "name: func", 10) &&
					 utrace__pfmt_uses_symbols(sys + sl + 1)))))
					want_symbols(p);
			}
		}
	}
	free(buf);
	return alive;
}

/*
 * Take the kernel's entries out of -e (kevents.h says how they are told
 * apart); with only kernel entries, the programs record none of theirs.
 */
static int split_kernel_events(struct record_opts *o)
{
	size_t i, n = 0;

	if (!o->nr_events)
		return 0;
	o->kevents = calloc(o->nr_events, sizeof(*o->kevents));
	if (!o->kevents)
		return -1;
	rec_kev = calloc(o->nr_events, sizeof(*rec_kev));
	rec_kev_text = calloc(o->nr_events, sizeof(*rec_kev_text));
	rec_kev_also = calloc(o->nr_events, sizeof(*rec_kev_also));
	if (!rec_kev || !rec_kev_text || !rec_kev_also)
		return -1;
	for (i = 0; i < o->nr_events; i++) {
		const char *e = o->events[i];
		bool prefixed = !strncmp(e, "kernel:", 7);

		if (!kev_is_kernel(&e)) {
			o->events[n++] = (char *)e;
			continue;
		}
		o->kevents[o->nr_kevents++] = (char *)e;
		if (!prefixed && !utrace__parse_set_event(e, strlen(e), &rec_kev[nr_rec_kev]))
			rec_kev_text[nr_rec_kev++] = e;
	}
	o->nr_events = n;
	o->user_none = o->nr_kevents && !n;
	return 0;
}

/*
 * Take the kernel's entries out of --filter, told apart as -e's by the
 * EVENT part: the kernel filters them itself, in the recorder's tracing
 * instance (kev_start()).
 */
static int split_kernel_filters(struct record_opts *o)
{
	size_t i, n = 0, a, b, c;

	if (!o->nr_filters)
		return 0;
	o->kfilters = calloc(o->nr_filters, sizeof(*o->kfilters));
	if (!o->kfilters)
		return -1;
	for (i = 0; i < o->nr_filters; i++) {
		char *f = o->filters[i], ev[512];
		const char *e = ev;
		bool kernel;

		if (!strncmp(f, "user:", 5) || !strncmp(f, "kernel:", 7)) {
			kernel = f[0] == 'k';
			f = strchr(f, ':') + 1;
		} else {
			if (utrace__split_event_filter(f, strlen(f), &a, &b, &c) < 0 ||
			    b >= sizeof(ev)) {
				o->filters[n++] = f;
				continue;
			}
			memcpy(ev, f + a, b);
			ev[b] = 0;
			kernel = kev_is_kernel(&e);
		}
		if (kernel)
			o->kfilters[o->nr_kfilters++] = f;
		else
			o->filters[n++] = f;
	}
	o->nr_filters = n;
	if (o->nr_kfilters && !o->nr_kevents) {
		fprintf(stderr, "utrace record: the filter '%s' is for kernel events, and none "
			"is recorded (give them with -e)\n", o->kfilters[0]);
		return -1;
	}
	return 0;
}

static char *join_events(const struct record_opts *o)
{
	size_t len = 1, i;
	char *s;

	if (o->user_none)
		return strdup("!*:*");
	/* (--tracer alone: the tracer's events, none of the programs') */
	if (o->tracer && !o->nr_events)
		return strdup("");
	if (!o->nr_events)
		return strdup("*:*");
	for (i = 0; i < o->nr_events; i++)
		len += strlen(o->events[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < o->nr_events; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, o->events[i]);
	}
	return s;
}

static int parse_opts(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "filter", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-size", required_argument, NULL, 'm' },
		{ "overwrite", no_argument, NULL, 'O' },
		{ "duration", required_argument, NULL, 'd' },
		{ "idle", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "all-users", no_argument, NULL, 'U' },
		{ "probe", required_argument, NULL, 'P' },
		{ "kernel-probe", required_argument, NULL, 'K' },
		{ "call-graph", required_argument, NULL, 'G' },
		{ "max-stack", required_argument, NULL, 'S' },
		{ "tracer", required_argument, NULL, 0x100 },
		{ "ftrace-filter", required_argument, NULL, 0x101 },
		{ "ftrace-notrace", required_argument, NULL, 0x102 },
		{ "graph-function", required_argument, NULL, 0x103 },
		{ "max-depth", required_argument, NULL, 0x104 },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->output = "utrace.dat";
	o->buffer_size = 8ULL << 20;
	optind = 1;
	o->max_stack = 64;
	while ((c = getopt_long(argc, argv, "+e:f:o:m:hp:ag", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			o->call_graph = "fp";
			break;
		case 'G':
			o->call_graph = optarg;
			break;
		case 'S': {
			char *end;

			errno = 0;
			o->max_stack = strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || o->max_stack < 1 || o->max_stack > 128) {
				fprintf(stderr, "utrace record: --max-stack '%s': a number of frames "
					"from 1 to 128\n", optarg);
				return -1;
			}
			break;
		}
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			pid_t *n;

			if (end == optarg || *end || v <= 0 || v > 0x7fffffff) {
				fprintf(stderr, "utrace record: '%s' is not a process id\n",
					optarg);
				return -1;
			}
			n = realloc(o->pids, (o->nr_pids + 1) * sizeof(*n));
			if (!n)
				return -1;
			o->pids = n;
			o->pids[o->nr_pids++] = (pid_t)v;
			break;
		}
		case 'a':
			o->all = 1;
			break;
		case 'U':
			o->all = o->all_users = 1;
			break;
		case 'K': {
			char **n = realloc(o->kprobes, (o->nr_kprobes + 1) * sizeof(*n));

			if (!n)
				return -1;
			o->kprobes = n;
			o->kprobes[o->nr_kprobes++] = optarg;
			break;
		}
		case 'e': {
			char **n = realloc(o->events, (o->nr_events + 1) * sizeof(*n));

			if (!n)
				return -1;
			o->events = n;
			o->events[o->nr_events++] = optarg;
			break;
		}
		case 'f': {
			char **n;
			size_t a, b, e;

			if (utrace__split_event_filter(optarg, strlen(optarg), &a, &b, &e) < 0) {
				fprintf(stderr, "utrace record: bad filter '%s': give EVENT:EXPRESSION, "
					"as demo:demo_request:'id > 5'\n", optarg);
				return -1;
			}
			n = realloc(o->filters, (o->nr_filters + 1) * sizeof(*n));
			if (!n)
				return -1;
			o->filters = n;
			o->filters[o->nr_filters++] = optarg;
			break;
		}
		case 'o':
			o->output = optarg;
			break;
		case 'P': {
			char **n = realloc(o->probes, (o->nr_probes + 1) * sizeof(*n));

			if (!n)
				return -1;
			o->probes = n;
			o->probes[o->nr_probes++] = optarg;
			break;
		}
		case 'm':
			if (parse_size(optarg, &o->buffer_size) < 0 ||
			    o->buffer_size < 16384 || o->buffer_size > (1ULL << 36)) {
				fprintf(stderr, "utrace record: bad buffer size '%s': give bytes "
					"with an optional K, M or G, from 16K to 64G\n", optarg);
				return -1;
			}
			break;
		case 'O':
			o->overwrite = 1;
			break;
		case 'I':
			o->idle = 1;
			break;
		case 'd': {
			char *end;

			o->duration = strtod(optarg, &end);
			if (*end || !(o->duration > 0)) {
				fprintf(stderr, "utrace record: bad duration '%s': give seconds, "
					"more than 0\n", optarg);
				return -1;
			}
			break;
		}
		case 0x100:
			if (strcmp(optarg, "function") && strcmp(optarg, "function_graph") &&
			    strcmp(optarg, "nop")) {
				fprintf(stderr, "utrace record: '%s' is not a tracer: give "
					"function or function_graph\n", optarg);
				return -1;
			}
			o->tracer = optarg;
			break;
		case 0x101:
		case 0x102:
		case 0x103: {
			char **l = &o->ft_lists[c - 0x101], *n;

			if (!*optarg || strpbrk(optarg, ", \t\n")) {
				fprintf(stderr, "utrace record: bad function glob '%s'\n", optarg);
				return -1;
			}
			if (asprintf(&n, "%s%s%s", *l ? *l : "", *l ? "," : "", optarg) < 0)
				return -1;
			free(*l);
			*l = n;
			break;
		}
		case 0x104: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!*optarg || *end || v > 0xffffffffUL || optarg[0] == '-') {
				fprintf(stderr, "utrace record: bad --max-depth '%s': give a number "
					"of levels, 0 for no limit\n", optarg);
				return -1;
			}
			o->max_depth = optarg;
			break;
		}
		case 'h':
			fputs(record_usage, stdout);
			exit(0);
		default:
			fputs(record_usage, stderr);
			return -1;
		}
	}
	if ((o->ft_lists[0] || o->ft_lists[1] || o->ft_lists[2] || o->max_depth) && !o->tracer) {
		fprintf(stderr, "utrace record: --ftrace-filter, --ftrace-notrace, "
			"--graph-function and --max-depth go with --tracer\n");
		return -1;
	}
	if ((o->ft_lists[2] || o->max_depth) && o->tracer && strcmp(o->tracer, "function_graph")) {
		fprintf(stderr, "utrace record: --graph-function and --max-depth are for "
			"--tracer function_graph\n");
		return -1;
	}
	if (o->all && o->nr_pids) {
		fprintf(stderr, "utrace record: %s and -p do not go together\n",
			o->all_users ? "--all-users" : "-a");
		return -1;
	}
	if (o->all && o->nr_probes) {
		fprintf(stderr, "utrace record: --probe goes with -p or a command, not -a\n");
		return -1;
	}
	if (o->call_graph) {
		const char *m = o->call_graph, *comma = strchr(m, ',');
		size_t ml = comma ? (size_t)(comma - m) : strlen(m);
		unsigned long size = 8192;

		if (comma) {
			char *end;

			errno = 0;
			size = strtoul(comma + 1, &end, 0);
			if (errno || *end || !comma[1] || size < 8 || size > 65528 || size % 8) {
				fprintf(stderr, "utrace record: --call-graph '%s': SIZE is the stack "
					"bytes to walk, a multiple of 8 from 8 to 65528\n", m);
				return -1;
			}
		}
		if (!((ml == 2 && !strncmp(m, "fp", 2)) || (ml == 5 && !strncmp(m, "dwarf", 5)))) {
			fprintf(stderr, "utrace record: --call-graph '%s': the mode is fp or dwarf\n",
				m);
			return -1;
		}
		snprintf(o->stacks, sizeof(o->stacks), "%.*s,%lu,%lu", (int)ml, m, size,
			 o->max_stack);
	}
	if ((o->all || o->nr_pids) && optind < argc) {
		fprintf(stderr, "utrace record: give a command or -p/-a, not both\n");
		return -1;
	}
	if (!o->all && !o->nr_pids && optind >= argc) {
		fprintf(stderr, "utrace record: no command to run; see 'utrace record --help'\n");
		return -1;
	}
	return optind;
}

/*
 * --probe in perf probe's form, FUNC[:LINE|+OFFS|%return] [VAR[:TYPE]]...
 * (a C name, the program's variables), as 'utrace probe -x COMMAND' makes
 * raw definitions of it from the command's DWARF: the lines replace the
 * perf ones, and are said.  0, or -1 said why.
 */
static int perf_probes(struct record_opts *o, const char *cmd)
{
	char path[PATH_MAX], why[256], **perf, **raw = NULL;
	size_t *at, n = 0, i;
	int r = -1;

	for (i = 0; i < o->nr_probes; i++)
		n += !utrace__kup_is_raw(o->probes[i]);
	if (!n)
		return 0;
	perf = calloc(n, sizeof(*perf));
	at = calloc(n, sizeof(*at));
	o->probes_made = calloc(n, sizeof(*o->probes_made));
	if (!perf || !at || !o->probes_made) {
		fprintf(stderr, "utrace record: out of memory\n");
		goto out;
	}
	for (i = 0, n = 0; i < o->nr_probes; i++)
		if (!utrace__kup_is_raw(o->probes[i])) {
			at[n] = i;
			perf[n++] = o->probes[i];
		}
	/* (the command was found before, rec_cmd_runnable()) */
	if (rec_cmd_runnable(cmd, path, sizeof(path), why, sizeof(why)) < 0 ||
	    probe_dwarf_defs("utrace record: --probe", path, perf, n, &raw))
		goto out;
	for (i = 0; i < n; i++) {
		fprintf(stderr, "utrace record: --probe '%s': %s\n", perf[i], raw[i]);
		o->probes[at[i]] = raw[i];
		o->probes_made[o->nr_probes_made++] = raw[i];
	}
	r = 0;
out:
	free(raw);
	free(perf);
	free(at);
	return r;
}

/* In the command's process: UTRACE_PROBES and libutrace preloaded. */
static int preload_probes(const struct record_opts *o)
{
	const char *old = getenv("LD_PRELOAD");
	char lib[PATH_MAX], *defs = NULL, *pre = NULL;
	size_t len = 0;
	FILE *f;

	utrace_find_libutrace(lib, sizeof(lib), NULL);
	f = open_memstream(&defs, &len);
	if (!f)
		return -1;
	for (size_t i = 0; i < o->nr_probes; i++)
		fprintf(f, "%s%s", i ? "\n" : "", o->probes[i]);
	if (fclose(f) || asprintf(&pre, "%s%s%s", lib, old && *old ? " " : "",
				  old ? old : "") < 0) {
		free(defs);
		return -1;
	}
	setenv("UTRACE_PROBES", defs, 1);
	setenv("LD_PRELOAD", pre, 1);
	free(defs);
	free(pre);
	return 0;
}

/* In the command's process: UTRACE_TRACER and its lists, libutrace
 * preloaded (once). */
static int preload_tracer(const struct record_opts *o)
{
	static const char *const names[3] = {
		"UTRACE_FTRACE_FILTER", "UTRACE_FTRACE_NOTRACE", "UTRACE_GRAPH_FUNCTION" };
	const char *old = getenv("LD_PRELOAD");
	char lib[PATH_MAX], *pre = NULL;

	setenv("UTRACE_TRACER", o->tracer, 1);
	for (int k = 0; k < 3; k++) {
		if (o->ft_lists[k])
			setenv(names[k], o->ft_lists[k], 1);
		else
			unsetenv(names[k]);
	}
	if (o->max_depth)
		setenv("UTRACE_MAX_GRAPH_DEPTH", o->max_depth, 1);
	else
		unsetenv("UTRACE_MAX_GRAPH_DEPTH");
	utrace_find_libutrace(lib, sizeof(lib), NULL);
	if (old && strstr(old, "libutrace.so"))
		return 0;
	if (asprintf(&pre, "%s%s%s", lib, old && *old ? " " : "", old ? old : "") < 0)
		return -1;
	setenv("LD_PRELOAD", pre, 1);
	free(pre);
	return 0;
}

/*
 * -p: the tracer in a running process, through its files (the lists
 * first, as one writes them before current_tracer); 0, or -1 said why.
 * With @off, nop and empty lists again (the end of the recording).
 */
static int tracer_in(struct utrace__ctl *c, const struct record_opts *o, pid_t pid, bool off)
{
	static const uint32_t files[3] = {
		UTRACE_CTL_FT_FILTER, UTRACE_CTL_FT_NOTRACE, UTRACE_CTL_FT_GRAPH_FUNCTION };
	int r = 0;

	if (off) {
		utrace__ctl_ftrace_write(c, UTRACE_CTL_FT_CURRENT_TRACER, "nop", 3);
		for (int k = 0; k < 3; k++)
			utrace__ctl_ftrace_clear(c, files[k]);
		utrace__ctl_ftrace_write(c, UTRACE_CTL_FT_MAX_GRAPH_DEPTH, "0", 1);
		return 0;
	}
	for (int k = 0; k < 3 && !r; k++) {
		r = utrace__ctl_ftrace_clear(c, files[k]);
		if (!r && o->ft_lists[k])
			r = utrace__ctl_ftrace_write(c, files[k], o->ft_lists[k],
						     strlen(o->ft_lists[k]));
		if (r == -EINVAL)
			fprintf(stderr, "utrace record: process %d: '%s' matches no function it "
				"can trace\n", (int)pid, o->ft_lists[k]);
	}
	if (!r)
		r = utrace__ctl_ftrace_write(c, UTRACE_CTL_FT_MAX_GRAPH_DEPTH,
					     o->max_depth ? o->max_depth : "0",
					     strlen(o->max_depth ? o->max_depth : "0"));
	if (!r)
		r = utrace__ctl_ftrace_write(c, UTRACE_CTL_FT_CURRENT_TRACER, o->tracer,
					     strlen(o->tracer));
	if (r == -EOPNOTSUPP)
		fprintf(stderr, "utrace record: process %d: its libutrace has no function "
			"tracers\n", (int)pid);
	else if (r < 0 && r != -EINVAL)
		fprintf(stderr, "utrace record: process %d: --tracer %s: %s\n", (int)pid,
			o->tracer, strerror(-r));
	return r < 0 ? -1 : 0;
}

/* The end of a -p recording: the processes' tracer off again. */
static void tracer_off_all(const struct record_opts *o)
{
	for (size_t i = 0; o->tracer && i < o->nr_pids; i++) {
		struct utrace__ctl *c;
		char err[512];

		if (utrace__ctl_open(o->pids[i], &c, err, sizeof(err)) < 0)
			continue;
		tracer_in(c, o, o->pids[i], true);
		utrace__ctl_close(c);
	}
}

static int add_proc(int sock)
{
	static bool told;
	pid_t pid = 0;
	uid_t uid = 0;
	int i;

	/* Only our own processes (or root's) may hand us their events. */
	if (utrace__peer_check(sock, &pid, &uid) < 0) {
		if (!told)
			fprintf(stderr, "utrace record: refused a connection from pid %d, "
				"uid %u: only uid %u or root may connect\n", (int)pid,
				(unsigned int)uid, (unsigned int)geteuid());
		told = true;
		close(sock);
		return -1;
	}
	/* root's process, in our file: another user's data in it */
	if (uid != geteuid() && !out_private) {
		if (fchmod(out.fd, 0600) == 0)
			out_private = true;
	}
	for (i = 0; i < MAX_PROCS; i++) {
		if (!procs[i].used) {
			memset(&procs[i], 0, sizeof(procs[i]));
			procs[i].used = 1;
			procs[i].sock = sock;
			procs[i].lock_fd = -1;
			return 0;
		}
	}
	fprintf(stderr, "utrace record: more than %d processes at once; "
		"a new one is not recorded\n", MAX_PROCS);
	close(sock);
	return -1;
}

/*
 * -a: is this process one of ours?  Recording takes over a process's
 * buffer and switches its events, so -a takes only the invoking user's
 * processes, for root too unless --all-users says otherwise (a process of
 * another user could not reach our socket nor pass our peer check
 * anyway).  The socket's owner and the process's must agree.
 */
static bool all_wants(pid_t pid, uid_t sock_uid, bool all_users)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 && st.st_uid == sock_uid &&
	       (all_users || st.st_uid == geteuid());
}

/* The --filter entries as UTRACE_FILTER holds them: a line each. */
static char *join_filters(const struct record_opts *o)
{
	size_t len = 1, i;
	char *s;

	for (i = 0; i < o->nr_filters; i++)
		len += strlen(o->filters[i]) + 1;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (i = 0; i < o->nr_filters; i++) {
		if (i)
			strcat(s, "\n");
		strcat(s, o->filters[i]);
	}
	return s;
}


static void parse_rec_filters(const struct record_opts *o)
{
	size_t i, a, b, c;

	rec_flt = calloc(o->nr_filters + 1, sizeof(*rec_flt));
	rec_flt_matched = calloc(o->nr_filters + 1, sizeof(*rec_flt_matched));
	if (!rec_flt || !rec_flt_matched)
		return;
	for (i = 0; i < o->nr_filters; i++) {
		const char *f = o->filters[i];

		if (utrace__split_event_filter(f, strlen(f), &a, &b, &c) < 0 ||
		    utrace__parse_set_event(f + a, b, &rec_flt[i]) < 0)
			rec_flt[i] = (struct utrace__set_event_match){ 0 };
	}
	rec_flt_text = o->filters;
	nr_rec_flt = o->nr_filters;
}

/*
 * -p/-a: set the --filter entries on a process's events through its
 * control socket, before its events are switched on; as `utrace filter`,
 * they stay when the recording ends.  A bad expression is said in one
 * line and leaves the event unfiltered, as in the program itself.
 */
static void filter_attached(struct utrace__ctl *c, const struct record_opts *o)
{
	struct utrace__ctl_event *evs;
	size_t nr, i, j;

	if (!o->nr_filters || utrace__ctl_events(c, &evs, &nr) < 0)
		return;
	for (j = 0; j < nr; j++) {
		const char *expr = NULL;

		for (i = 0; i < o->nr_filters; i++) {
			const char *f = o->filters[i];
			struct utrace__set_event_match m;
			size_t a, b, e;

			if (utrace__split_event_filter(f, strlen(f), &a, &b, &e) < 0 ||
			    utrace__parse_set_event(f + a, b, &m) < 0 ||
			    !utrace__set_event_matches(&m, evs[j].system, evs[j].name))
				continue;
			expr = f + e;
			if (i < nr_rec_flt)
				rec_flt_matched[i] = true;
		}
		if (expr) {
			struct utrace__ctl_filter_error fe = { 0 };

			if (utrace__ctl_filter(c, evs[j].id, expr, &fe) < 0)
				fprintf(stderr, "utrace record: process %d: bad filter for "
					"'%s:%s': %s at position %d of '%s'; the event is not "
					"filtered\n", (int)utrace__ctl_pid(c), evs[j].system,
					evs[j].name, fe.msg[0] ? fe.msg : "Error: (0)",
					fe.msg[0] ? fe.pos : 0, expr);
		}
	}
	utrace__ctl_events_free(evs, nr);
}

/*
 * --probe with -p: the definitions written into each process (loading
 * libutrace into one that never linked it: inject.c), and the events they
 * made, to remove at the end ("GROUP/EVENT", one string per probe, per
 * process).
 */
struct pid_probes {
	pid_t pid;
	char **names;
	size_t nr;
};
static struct pid_probes *pid_probes;
static size_t nr_pid_probes;

/* The "GROUP/EVENT" of each line of 'after' that 'before' has not. */
static void new_probe_names(struct pid_probes *pp, const char *before, const char *after)
{
	const char *l = after;

	while (l && *l) {
		const char *nl = strchr(l, '\n'), *sp, *name;
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		bool old = false;

		for (const char *b = before; b && *b;) {
			const char *bn = strchr(b, '\n');
			size_t bl = bn ? (size_t)(bn - b) : strlen(b);

			if (bl == len && !memcmp(b, l, len)) {
				old = true;
				break;
			}
			b = bn ? bn + 1 : NULL;
		}
		name = len > 2 && l[1] == ':' ? l + 2 : NULL;
		sp = name ? memchr(name, ' ', len - 2) : NULL;
		if (!old && sp) {
			char **n = realloc(pp->names, (pp->nr + 1) * sizeof(*n));

			if (n) {
				pp->names = n;
				pp->names[pp->nr] = strndup(name, (size_t)(sp - name));
				if (pp->names[pp->nr])
					pp->nr++;
			}
		}
		l = nl ? nl + 1 : NULL;
	}
}

/* Process pid has libutrace mapped: false once it ran execve() after it
 * was attached to (the library, never unloaded, went with its program). */
static bool maps_libutrace(pid_t pid)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libutrace.so") != NULL;
	fclose(f);
	return found;
}

/* Place the --probe definitions in process pid; 0 or -1 said. */
static int probes_place(const struct record_opts *o, pid_t pid)
{
	struct utrace__ctl *c;
	struct pid_probes *pp;
	char *before = NULL, *after = NULL;
	int status = 0, rounds = 0;

again:
	if (utrace_ctl_open_attach(pid, &c, "utrace record") < 0)
		return -1;
	pp = realloc(pid_probes, (nr_pid_probes + 1) * sizeof(*pp));
	if (!pp) {
		utrace__ctl_close(c);
		return -1;
	}
	pid_probes = pp;
	pp = &pid_probes[nr_pid_probes++];
	memset(pp, 0, sizeof(*pp));
	pp->pid = pid;
	if (utrace__ctl_uprobe_text(c, 0, &before) < 0)
		before = NULL;
	for (size_t i = 0; i < o->nr_probes; i++) {
		int r = utrace__ctl_uprobe_write(c, o->probes[i], strlen(o->probes[i]));

		if ((r == -EPIPE || r == -ECONNRESET) && ++rounds < 8 && kill(pid, 0) == 0) {
			/* the process ran a new program (execve) as the
			 * probes were placed: its agent went with the old
			 * one; attach to the new one and place them again */
			free(before);
			before = NULL;
			utrace__ctl_close(c);
			nr_pid_probes--;
			goto again;
		}
		if (r < 0) {
			fprintf(stderr, "utrace record: process %d: --probe '%s' refused: %s\n",
				(int)pid, o->probes[i], r == -EEXIST ? "an event of that name "
				"exists" : strerror(-r));
			status = -1;
			break;
		}
	}
	if (utrace__ctl_uprobe_text(c, 0, &after) == 0)
		new_probe_names(pp, before, after);
	free(before);
	free(after);
	utrace__ctl_close(c);
	return status;
}

/* A zombie, or gone. */
static bool proc_ended(pid_t pid)
{
	char path[64], st[512], *p;
	bool ended = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fgets(st, sizeof(st), f) && (p = strrchr(st, ')')) && p[1] && p[2])
		ended = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return ended;
}

/* At the end: the events of the probes placed off and removed, so that
 * the process is left as it was (its library idle). */
static void probes_remove(void)
{
	for (size_t i = 0; i < nr_pid_probes; i++) {
		struct pid_probes *pp = &pid_probes[i];
		struct utrace__ctl *c = NULL;
		char err[512], *line;

		/* (a process that has ended, or is ending, has no probes
		 * left, nor one that ran a new program since) */
		if (pp->nr && kill(pp->pid, 0) == 0 &&
		    utrace__ctl_open(pp->pid, &c, err, sizeof(err)) < 0 && kill(pp->pid, 0) == 0 &&
		    !proc_ended(pp->pid) && maps_libutrace(pp->pid))
			fprintf(stderr, "utrace record: process %d: its probes stay: %s\n",
				(int)pp->pid, err);
		for (size_t j = 0; j < pp->nr; j++) {
			if (c) {
				char *slash = strchr(pp->names[j], '/');

				if (slash && asprintf(&line, "!%.*s:%s", (int)(slash - pp->names[j]),
						      pp->names[j], slash + 1) >= 0) {
					utrace__ctl_set_event(c, line, strlen(line));
					free(line);
				}
				if (asprintf(&line, "-:%s", pp->names[j]) >= 0) {
					int r = utrace__ctl_uprobe_write(c, line, strlen(line));

					if (r < 0 && !((r == -EPIPE || r == -ECONNRESET) &&
						       !maps_libutrace(pp->pid)))
						fprintf(stderr, "utrace record: process %d: cannot "
							"remove probe %s: %s\n", (int)pp->pid,
							pp->names[j], strerror(-r));
					free(line);
				}
			}
			free(pp->names[j]);
		}
		free(pp->names);
		utrace__ctl_close(c);
	}
	free(pid_probes);
	pid_probes = NULL;
	nr_pid_probes = 0;
}

/* -p/-a: ask each process's agent to connect here, then switch on. */
static int attach_all(struct record_opts *o, const char *sock_path, const char *events)
{
	struct utrace__ctl_proc *ps = NULL;
	size_t nr = 0, i;
	int status = 0, attached = 0;

	if (o->all) {
		if (utrace__ctl_list(&ps, &nr, o->all_users ? UTRACE__CTL_ALL_USERS : 0) < 0) {
			fprintf(stderr, "utrace record: --all-users: only root may record other "
				"users' processes\n");
			return 1;
		}
		for (i = 0; i < nr; i++) {
			pid_t *n;

			if (!all_wants(ps[i].pid, ps[i].uid, o->all_users))
				continue;
			n = realloc(o->pids, (o->nr_pids + 1) * sizeof(*n));
			if (!n)
				break;
			o->pids = n;
			o->pids[o->nr_pids++] = ps[i].pid;
		}
		free(ps);
		if (!o->nr_pids) {
			fprintf(stderr, "utrace record: no traceable process of yours is running\n");
			return 1;
		}
	}
	for (i = 0; i < o->nr_pids; i++) {
		struct utrace__ctl *c;
		char err[512], *copy, *save = NULL, *tok;
		int r;

		if (o->nr_probes && probes_place(o, o->pids[i]) < 0)
			return 1;
		if (utrace__ctl_open(o->pids[i], &c, err, sizeof(err)) < 0) {
			if (o->all)
				continue;
			if (o->nr_kevents) {
				/* a program without libutrace: its kernel events only */
				fprintf(stderr, "utrace record: process %d: kernel events only (%s)\n",
					(int)o->pids[i], err);
				continue;
			}
			fprintf(stderr, "utrace record: %s\n", err);
			return 1;
		}
		r = utrace__ctl_attach(c, sock_path, o->overwrite ? UTRACE_MODE_OVERWRITE :
				       UTRACE_MODE_DISCARD);
		if (r < 0) {
			fprintf(stderr, "utrace record: cannot attach to process %d: %s\n",
				(int)o->pids[i], r == -EBUSY ? "another recorder is attached" :
				utrace__ctl_errmsg(c)[0] ? utrace__ctl_errmsg(c) : strerror(-r));
			utrace__ctl_close(c);
			if (o->all)
				continue;
			return 1;
		}
		attached++;
		/* -g: stacks from the first event recorded (before the events
		 * are switched on), off again when this recorder goes */
		if (o->stacks[0] && (r = utrace__ctl_stacks(c, o->stacks)) < 0) {
			fprintf(stderr, "utrace record: process %d: cannot record call stacks: %s\n",
				(int)o->pids[i], r == -EOPNOTSUPP ? "its libutrace is older than "
				"this utrace (restart it with this one's)" : r == -EBUSY ? "it "
				"records them already with another --call-graph (UTRACE_STACKS)" :
				r == -EINVAL ? "its libutrace has no libunwind (use --call-graph fp)" :
				strerror(-r));
			utrace__ctl_close(c);
			if (o->all)
				continue;
			return 1;
		}
		filter_attached(c, o);
		copy = strdup(events);
		for (tok = copy ? strtok_r(copy, ", \t", &save) : NULL; tok;
		     tok = strtok_r(NULL, ", \t", &save)) {
			r = utrace__ctl_set_event(c, tok, strlen(tok));
			if (r == -EINVAL && !o->all)
				fprintf(stderr, "utrace record: process %d: no event matches "
					"'%s'\n", (int)o->pids[i], tok);
		}
		free(copy);
		if (o->tracer && tracer_in(c, o, o->pids[i], false) < 0 && !o->all) {
			utrace__ctl_close(c);
			return 1;
		}
		utrace__ctl_close(c);
	}
	if (!attached && !(o->nr_kevents && !o->all)) {
		fprintf(stderr, "utrace record: could not attach to any process\n");
		status = 1;
	}
	return status;
}

/* What parse_opts() and the splits allocated; 'ret' back (early exits). */
static int free_opts(struct record_opts *o, int ret)
{
	for (int k = 0; k < 3; k++)
		free(o->ft_lists[k]);
	free(o->events);
	free(o->kevents);
	free(o->kfilters);
	free(o->pids);
	free(o->filters);
	free(o->probes);
	for (size_t i = 0; i < o->nr_probes_made; i++)
		free(o->probes_made[i]);
	free(o->probes_made);
	free(o->kprobes);
	free(rec_kev);
	free(rec_kev_text);
	free(rec_kev_also);
	rec_kev = NULL;
	rec_kev_text = NULL;
	rec_kev_also = NULL;
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	char dir[4096], sock_path[4200], size_str[32], max_str[32];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int first, lsock, sfd, status = 0, child_done = 0, stopping = 0, busy = 0, i;
	sigset_t mask;
	pid_t child;
	char *events, *ev_copy = NULL, *filters;
	uint64_t deadline = 0, stop_deadline = 0, next_clock = 0, first_clock;
	uint64_t start_ns = utrace__mono_ns(), next_status = 0;
	bool tty = isatty(STDERR_FILENO);
	struct kev *kev = NULL;
	unsigned long long kernel_events = 0, kernel_lost = 0;
	bool kernel_lost_unknown = false;
	int gate[2] = { -1, -1 }, execp[2] = { -1, -1 };
	size_t given;
	bool nothing = false;

	stat_hook_parse();
	first = parse_opts(argc, argv, &o);
	if (first < 0)
		return free_opts(&o, 129);
	/* A command that cannot start: said before the file is made, and
	 * 255, as perf record's "Failed to collect ... workload" (under
	 * utrace stat the command's own status is the answer) */
	if (!o.all && !o.nr_pids && stat_sync < 0) {
		char path[PATH_MAX], why[256];

		if (rec_cmd_runnable(argv[first], path, sizeof(path), why, sizeof(why)) < 0) {
			fprintf(stderr, "utrace record: cannot run '%s': %s\n", argv[first], why);
			return free_opts(&o, 255);
		}
	}
	if (split_kernel_events(&o) < 0)
		return free_opts(&o, 1);
	given = o.nr_events;
	if (o.nr_probes && o.nr_pids) {
		for (size_t k = 0; k < o.nr_probes; k++)
			if (!utrace__kup_is_raw(o.probes[k])) {
				fprintf(stderr, "utrace record: --probe '%s': with -p, give "
					"uprobe_events definitions ('utrace probe -x /proc/PID/exe "
					"...' makes them from C names)\n", o.probes[k]);
				return free_opts(&o, 1);
			}
		if (rec_probes_check(o.probes, o.nr_probes) < 0)
			return free_opts(&o, 1);
	} else if (o.nr_probes && (perf_probes(&o, argv[first]) < 0 ||
			    rec_probes_check(o.probes, o.nr_probes) < 0))
		return free_opts(&o, 1);
	if (o.nr_kprobes) {
		if (o.all) {
			fprintf(stderr, "utrace record: --kernel-probe goes with -p or a command, "
				"not -a\n");
			return free_opts(&o, 1);
		}
		if (rec_kprobes_start(&o.kevents, &o.nr_kevents, o.kprobes, o.nr_kprobes,
				      o.pids, o.nr_pids, o.nr_pids ? NULL : argv[first]) < 0)
			return free_opts(&o, 1);
		if (!o.nr_events)
			o.user_none = true;
	}
	if (split_kernel_filters(&o) < 0)
		return free_opts(&o, 1);
	if (o.nr_kevents && kev_unavailable()) {
		/* the programs' events are recorded all the same */
		fprintf(stderr, "utrace record: %s%s\n", kev_unavailable(),
			o.nr_events ? "; recording the utrace events only" : "");
		if (!o.nr_events)
			return free_opts(&o, 1);
		o.nr_kevents = 0;
		o.nr_kfilters = 0;
	}
	if (!runtime_dir(dir, sizeof(dir)))
		return free_opts(&o, 1);
	snprintf(sock_path, sizeof(sock_path), "%s/record-%d.sock", dir, (int)getpid());
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "utrace record: socket path '%s' is too long\n", sock_path);
		return free_opts(&o, 1);
	}
	strcpy(sa.sun_path, sock_path);
	unlink(sock_path);
	lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lsock, 64) < 0) {
		fprintf(stderr, "utrace record: cannot listen on '%s': %s\n", sock_path,
			strerror(errno));
		return free_opts(&o, 1);
	}
	/* Root's recorder may take several users' data (--all-users, a
	 * child that changes its user): a private file, as perf's */
	out_private = geteuid() == 0;
	if (utrace__tfw_open(&out, o.output, UTRACE_PAGE_SIZE, out_private) < 0) {
		fprintf(stderr, "utrace record: cannot create '%s': %s\n", o.output,
			strerror(errno));
		unlink(sock_path);
		return free_opts(&o, 1);
	}
	first_clock = write_clock_point();

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	/* (after the signals are blocked: Ctrl-C now still removes the
	 * kernel's instance) */
	if (o.nr_kevents && !(kev = kev_start(&out, o.kevents, o.nr_kevents, o.kfilters, o.nr_kfilters))) {
		close(lsock);
		unlink(sock_path);
		utrace__tfw_close(&out);
		unlink(o.output);
		return free_opts(&o, 1);
	}

	events = join_events(&o);
	parse_rec_filters(&o);
	snprintf(size_str, sizeof(size_str), "%llu", o.buffer_size);
	{
		/* the room's queue cells (128 bytes a page on two CPUs) are
		 * made at once: a large -m needs no growth */
		unsigned long long max = o.buffer_size * GROW_MAX;

		if (max > GROW_LIMIT)
			max = o.buffer_size > GROW_LIMIT ? o.buffer_size : GROW_LIMIT;
		snprintf(max_str, sizeof(max_str), "%llu", max);
	}
	for (i = 0; i < MAX_PROCS; i++) {
		procs[i].sock = -1;
		procs[i].lock_fd = -1;
	}
	if (o.all || o.nr_pids) {
		int r = attach_all(&o, sock_path, events);

		free(events);
		if (!r && kev && kev_set_pids(kev, o.pids, o.nr_pids) < 0)
			r = 1;
		if (r) {
			probes_remove();
			kev_stop(kev, &kernel_lost, &kernel_lost_unknown);
			close(lsock);
			unlink(sock_path);
			utrace__tfw_close(&out);
			unlink(o.output);
			return free_opts(&o, r);
		}
		child = -1;
		child_done = 1;
		goto loop;
	}
	filters = o.nr_filters ? join_filters(&o) : NULL;
	/* With kernel events, the command waits for its pid to be in the
	 * kernel's set_event_pid before it runs. */
	if (kev && pipe2(gate, O_CLOEXEC) < 0) {
		fprintf(stderr, "utrace record: cannot make a pipe: %s\n", strerror(errno));
		gate[0] = gate[1] = -1;
	}
	/* the exec's errno comes back through this; it closes at the exec */
	if (stat_sync < 0 && pipe2(execp, O_CLOEXEC) < 0)
		execp[0] = execp[1] = -1;
	child = fork();
	if (child == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		if (gate[0] >= 0) {
			char c;

			close(gate[1]);
			while (read(gate[0], &c, 1) < 0 && errno == EINTR)
				;
			close(gate[0]);
		}
		setenv("UTRACE_RECORD", sock_path, 1);
		setenv("UTRACE_EVENTS", events, 1);
		setenv("UTRACE_BUFFER_SIZE", size_str, 1);
		/* Room to grow in discard mode (see drain()). */
		if (o.overwrite)
			unsetenv("UTRACE_BUFFER_MAX");
		else
			setenv("UTRACE_BUFFER_MAX", max_str, 1);
		setenv("UTRACE_MODE", o.overwrite ? "overwrite" : "discard", 1);
		if (o.stacks[0])
			setenv("UTRACE_STACKS", o.stacks, 1);
		else
			unsetenv("UTRACE_STACKS");
		if (filters)
			setenv("UTRACE_FILTER", filters, 1);
		else
			unsetenv("UTRACE_FILTER");
		if (o.nr_probes && preload_probes(&o) < 0)
			_exit(127);
		if (o.tracer && preload_tracer(&o) < 0)
			_exit(127);
		stat_hook_child();
		execvp(argv[first], argv + first);
		{
			int e = errno;

			if (execp[1] < 0 || write(execp[1], &e, sizeof(e)) != sizeof(e))
				fprintf(stderr, "utrace record: cannot run '%s': %s\n",
					argv[first], strerror(e));
		}
		_exit(127);
	}
	ev_copy = events;
	parse_rec_events(ev_copy);
	free(filters);
	if (child > 0 && kev) {
		pid_t cp = child;

		close(gate[0]);
		if (kev_set_pids(kev, &cp, 1) < 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			child = -1;
			errno = EPERM;
		}
		close(gate[1]);          /* the command runs now */
	}
	if (child < 0) {
		if (!kev)
			fprintf(stderr, "utrace record: cannot fork: %s\n", strerror(errno));
		kev_stop(kev, &kernel_lost, &kernel_lost_unknown);
		unlink(sock_path);
		return 1;
	}
	if (execp[0] >= 0) {
		int e = 0;
		ssize_t n;

		close(execp[1]);
		while ((n = read(execp[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		close(execp[0]);
		if (n == sizeof(e)) {
			/* it could not start: nothing to record, as perf's 255 */
			fprintf(stderr, "utrace record: cannot run '%s': %s\n", argv[first],
				strerror(e));
			waitpid(child, NULL, 0);
			kev_stop(kev, &kernel_lost, &kernel_lost_unknown);
			close(lsock);
			unlink(sock_path);
			utrace__tfw_close(&out);
			unlink(o.output);
			free(ev_copy);
			return free_opts(&o, 255);
		}
	}
	/* As trace-cmd: which process to look for (utrace ps, show -p). */
	fprintf(stderr, "utrace record: started pid %d (%s)\n", (int)child, argv[first]);
loop:
	if (o.idle) {
		/* Only this process: the command was forked before. */
		struct sched_param sp = { 0 };

		if (sched_setscheduler(0, SCHED_IDLE, &sp) < 0)
			fprintf(stderr, "utrace record: cannot switch to idle priority (%s); "
				"recording at normal priority\n", strerror(errno));
	}
	next_clock = write_second_clock_point(first_clock) + CLOCK_THIRD_NS;
	check_output(o.output);
	if (o.duration > 0)
		deadline = utrace__mono_ns() + (uint64_t)(o.duration * 1e9);

	for (;;) {
		struct pollfd pfd[MAX_PROCS + 2];
		int map[MAX_PROCS + 2], n = 0, live = 0;

		pfd[n].fd = lsock;
		pfd[n].events = POLLIN;
		map[n++] = -1;
		pfd[n].fd = sfd;
		pfd[n].events = POLLIN;
		map[n++] = -2;
		for (i = 0; i < MAX_PROCS; i++) {
			if (!procs[i].used)
				continue;
			live++;
			pfd[n].fd = procs[i].sock;
			pfd[n].events = POLLIN;
			map[n++] = i;
		}
		if (child_done && !live &&
		    !(o.nr_kevents && rec_pids_alive(o.pids, o.nr_pids))) {
			/* one last look for a process that connected just now */
			int s = accept4(lsock, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

			if (s < 0)
				break;
			add_proc(s);
			continue;
		}
		/* Sleep 1 ms between looks, or 200 us when the last look found
		 * pages: the writers are busy, but looking again at once would
		 * only take CPU from them to copy a page or two at a time.  At
		 * full speed (2 threads here, about 350,000 pages a second)
		 * 200 us fills 70 pages of the 2048 of the default buffer. */
		{
			struct timespec wait = { 0, busy ? 200000 : 1000000 };

			ppoll(pfd, (nfds_t)n, &wait, NULL);
		}
		busy = 0;
		for (i = 0; i < n; i++) {
			if (map[i] == -1 && (pfd[i].revents & POLLIN)) {
				int s;

				while ((s = accept4(lsock, NULL, NULL,
						    SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0)
					add_proc(s);
			} else if (map[i] == -2 && (pfd[i].revents & POLLIN)) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGCHLD) {
						pid_t w;
						int st;

						struct rusage ru;

						while ((w = wait4(-1, &st, WNOHANG, &ru)) > 0)
							if (w == child) {
								child_done = 1;
								status = st;
								stat_ru = ru;
							}
					} else if (!stopping) {
						stopping = 1;
						if (!child_done)
							kill(child, SIGTERM);
						stop_deadline = utrace__mono_ns() + 2000000000ull;
					}
				}
			} else if (map[i] >= 0 && pfd[i].revents) {
				struct proc *p = &procs[map[i]];

				if (!receive(p))
					finish(p);
			}
		}
		/* A process sends an event's FORMAT before it can write the
		 * event, so reading its messages first keeps every FORMAT ahead
		 * of the pages that use it. */
		for (i = 0; i < MAX_PROCS; i++) {
			if (!procs[i].used || !procs[i].pool)
				continue;
			if (!receive(&procs[i])) {
				finish(&procs[i]);
				continue;
			}
			busy |= drain(&procs[i]);
			copy_calib(&procs[i], false);
		}
		if (kev)
			kev_poll(kev);
		/* Calibration points along the way: a file cut short
		 * converts with the rate measured up to its last one. */
		if (utrace__mono_ns() >= next_clock)
			next_clock = write_clock_point() + CLOCK_EVERY_NS;
		if (tty && utrace__mono_ns() >= next_status) {
			if (next_status)
				show_status(start_ns);
			next_status = utrace__mono_ns() + 1000000000ull;
		}
		check_output(o.output);
		if (deadline && !stopping && utrace__mono_ns() >= deadline) {
			stopping = 1;
			if (!child_done)
				kill(child, SIGTERM);
			stop_deadline = utrace__mono_ns() + 2000000000ull;
		}
		if (stopping && (child_done || utrace__mono_ns() >= stop_deadline))
			break;
	}
	end_status();
	for (i = 0; i < MAX_PROCS; i++) {
		if (procs[i].used) {
			receive(&procs[i]);
			finish(&procs[i]);
		}
	}
	probes_remove();
	if (kev)
		kernel_events = kev_stop(kev, &kernel_lost, &kernel_lost_unknown);
	write_clock_point();
	close(lsock);
	unlink(sock_path);
	if (utrace__tfw_close(&out) < 0 && !out_failed)
		fprintf(stderr, "utrace record: cannot write '%s': %s; the file is cut at "
			"byte %llu (what comes before is readable)\n", o.output,
			strerror(out.error), (unsigned long long)out.bytes);
	explain_kernel_names();
	if (kev)
		fprintf(stderr, "utrace record: %llu kernel events, %llu%s lost%s\n",
			kernel_events, kernel_lost, kernel_lost_unknown ? " or more" : "",
			kernel_lost || kernel_lost_unknown ? " (the instance's buffer was "
			"full: fewer kernel events would keep them)" : "");
	fprintf(stderr, "utrace record: %llu events written, %llu lost, %d process%s, "
		"%.1f MB, '%s'%s\n", total_written, total_lost, nr_processes,
		nr_processes == 1 ? "" : "es", out.bytes / 1e6, o.output,
		out.error ? " (cut short)" : "");
	if (total_no_slot)
		fprintf(stderr, "utrace record: %llu events were lost because more than %d "
			"threads of a process had events at once (a thread keeps its slot "
			"until it exits)\n", total_no_slot, UTRACE_POOL_THREADS);
	/* What is left was lost for want of free pages. */
	unsigned long long slow = total_lost - (total_no_slot + total_broken < total_lost ?
						total_no_slot + total_broken : total_lost);
	if (slow && !o.overwrite && !out.error)
		/* What to do about it, as perf's "Check IO/CPU overload!" */
		fprintf(stderr, "utrace record: %.1f%% of the events were lost: they came faster "
			"than the recorder%s could save them; a larger buffer (-m) takes longer "
			"bursts, fewer events (-e, filters) lower the rate\n",
			100.0 * (double)slow / (double)(total_written + total_lost),
			o.idle ? " at idle priority" : "");
	if (child >= 0 && !(child_done && WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
			    !nr_processes))
		/* nothing -e asked for was there: as perf, not a success
		 * (kernel entries set up were there, fired or not) */
		nothing = explain_events(argv[first], o.output, given) && !kev;
	if (child < 0)
		;
	else if (child_done && WIFSIGNALED(status))
		fprintf(stderr, "utrace record: '%s' was killed by signal %d (%s)\n",
			argv[first], WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (child_done && WEXITSTATUS(status))
		fprintf(stderr, "utrace record: '%s' exited with status %d\n", argv[first],
			WEXITSTATUS(status));
	free(ev_copy);
	free(rec_ev);
	free(rec_ev_text);
	free(rec_ev_matched);
	free(rec_flt);
	free(rec_flt_matched);
	for (size_t k = 0; k < nr_probe_notes; k++)
		free(probe_notes[k]);
	free(probe_notes);
	tracer_off_all(&o);
	return free_opts(&o, stat_hook_end(status, child_done,
					   out.error || nothing || probe_refused ? 1 : 0));
}
