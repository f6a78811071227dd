/* SPDX-License-Identifier: MIT */
/*
 * The writer: recording an event into the calling thread's page.
 *
 * Each thread owns one page of the pool at a time and appends events to it
 * with plain stores; the only atomic operations are taking a page from the
 * free queue and queueing it when full, once per page.  Committing an event
 * is one release store of the page's commit word, so a reader (the
 * recorder, even after this process died) sees whole events only.
 *
 *   thread A:  [page 7: ev ev ev ev .....]  -> full queue -> recorder
 *   thread B:  [page 3: ev ev ...........]
 *
 * Nesting.  An event can start while another is being written on the same
 * thread: a signal handler fires one, or a probe of the outer event does.
 * The nested event must not touch the page (the outer one may be half-way
 * through claiming its bytes), so it goes to a small per-thread stash, and
 * the outer event copies the stash into the page when it commits (or the
 * next event does, before claiming).  Stashed events keep their own time
 * stamps; one that would go back in time gets a zero delta, as the kernel
 * does for interrupted events.  A third level is dropped and counted.
 *
 * A thread that changes CPU starts a new page, so every page (and event)
 * has one CPU.
 *
 * utrace_tp_reserve() returns NULL, and the event is counted lost, when:
 *   - there is no free page (discard mode, or overwrite mode with nothing
 *     to take back), or the stash is full, or the nesting is too deep;
 *   - the thread found no free thread slot (more than 1024 threads).
 */
#define UTRACE__WRITER_INTERNAL 1
#include <cpuid.h>
#include <errno.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "filter.h"
#include "internal.h"
#include "event.h"
#include "tp.h"
#include "clock.h"
#include "instance.h"
#include "writer.h"

#define STASH_SIZE 2048
/* A stashed event's header: u64 time, u32 record size, u32 "to the
 * top-level buffer", u32 mask of the instances it goes to, u32 unused. */
#define STASH_HDR 24

/*
 * Where a reserved event is being written (struct utrace_tp_reserve's
 * rb_state), as the kernel's RB_CTX_* say at which level: set by the
 * reserve, read by the commit and the filter.
 */
enum rb_state {
	RB_STATE_SCRATCH = 0,    /* no page: the caller's scratch buffer */
	RB_STATE_PAGE = 1,       /* in the thread's page, at its tail */
	RB_STATE_STASH = 2,      /* nested: in the thread's stash */
	/* An instance exists (reserve_inst()): the record is built apart and
	 * copied where it goes at the commit. */
	RB_STATE_SCRATCH_INST = 3,   /* in the probe's frame */
	RB_STATE_STASH_INST = 4,     /* nested: in the stash */
};

/*
 * A page goes from one thread to another through the recorder, a process
 * ThreadSanitizer cannot see: tell it that publishing a page happens
 * before the next thread that takes the page writes into it.
 */
#ifdef UTRACE_TSAN
#define page_handed_over(d) __tsan_release(d)
#define page_taken(d) __tsan_acquire(d)
#else
#define page_handed_over(d) do { } while (0)
#define page_taken(d) do { } while (0)
#endif

/*
 * The thread's state.  A signal handler may fire an event at any
 * instruction of any path here, so every path that changes the state
 * first sets nest (the handler's event then goes to the stash and touches
 * nothing else), and the fields before 'gen' are never cleared while a
 * handler may be using them: attaching to a pool resets only the rest.
 */
struct tbuf {
	uint32_t nest;               /* events being written on this thread */
	uint32_t stash_used;         /* bytes in the stash */
	uint32_t exit_rounds;        /* calls of thread_exit() so far */
	int32_t tid;                 /* (a stashed event's common_pid) */
	/* From here, the thread's state in one pool (tbuf_reset()): */
	unsigned int gen;            /* pool generation of this state */
	uint32_t tail;               /* bytes used in page->data */
	struct utrace_page *page;
	uint64_t last_ts;
	uint32_t cpu;
	uint32_t missed;             /* UTRACE_RB_MISSED_EVENTS when the page has
				      * lost_before > 0, else 0: the commit bits */
	uint64_t nr_events;          /* events in the current page */
	/* The fields above are struct utrace_tp_thread_v1 (tracepoint.h),
	 * which the inlined writer of every program uses: their offsets are
	 * ABI.  Below, the library's own. */
	int slot;                    /* thread slot, or -1 */
	struct utrace_pool_geom *geom;   /* the pool's layout, private copy */
	struct utrace_page_desc *desc;
	uint32_t page_idx;
	uint64_t seq;                /* next page number of this thread */
	uint64_t lost_pending;       /* lost since the current page began */
	uint64_t retry_ts;           /* no free page: until this time, events
				      * are lost without looking for one */
	uint32_t undo_tail;          /* before the event being written, */
	uint64_t undo_ts;            /* to take it back if its filter says no */
	const char *comm;            /* the thread's name in its slot (filters) */
	uint64_t inst_ts;            /* time of the event of reserve_inst() */
};

/* The tail while the thread has no page: no record fits, so the inlined
 * writer need not test the page pointer. */
#define TAIL_NO_PAGE 0xffff0000u

/* The inlined writer's view (struct utrace_tp_thread_v1, struct
 * utrace_tp_page_v1 and the constants it spells out) is this file's. */
#define SAME_OFFSET(f)							\
	_Static_assert(offsetof(struct tbuf, f) ==			\
		       offsetof(struct utrace_tp_thread_v1, f), "tbuf: " #f)
SAME_OFFSET(nest);
SAME_OFFSET(stash_used);
SAME_OFFSET(tid);
SAME_OFFSET(gen);
SAME_OFFSET(tail);
SAME_OFFSET(page);
SAME_OFFSET(last_ts);
SAME_OFFSET(cpu);
SAME_OFFSET(missed);
SAME_OFFSET(nr_events);
_Static_assert(offsetof(struct utrace_page, commit) ==
	       offsetof(struct utrace_tp_page_v1, commit), "page: commit");
_Static_assert(offsetof(struct utrace_page, data) ==
	       offsetof(struct utrace_tp_page_v1, data), "page: data");
_Static_assert(UTRACE_PAGE_DATA == 4080 && UTRACE_RB_MAX_SMALL == 112 &&
	       UTRACE_RB_DELTA_BITS == 27 && UTRACE_RB_TYPE_BITS == 5,
	       "the inlined writer's constants (tracepoint.h)");

/* libutrace is built with TLS descriptors (-mtls-dialect=gnu2): when the
 * library was loaded at start-up this is a short call returning a fixed
 * offset, and it still works when the library is dlopen()ed later, which
 * initial-exec TLS does not.  Exported, as struct utrace_tp_thread_v1, for
 * the inlined writer of the programs: a program's own code reaches it
 * with initial-exec TLS (one instruction), a shared library's with its
 * TLS dialect (a descriptor call with -mtls-dialect=gnu2, else
 * __tls_get_addr). */
__thread struct tbuf utrace_tp_thread_v1 __attribute__((visibility("default")));
#define tb utrace_tp_thread_v1

/*
 * The thread's state, its address computed once per call: with TLS
 * descriptors each &tb is a call, and the compiler would compute it again
 * after every __atomic_signal_fence().  The empty asm hides where the
 * pointer comes from, so it stays in a register.
 */
static inline __attribute__((always_inline)) struct tbuf *my_tbuf(void)
{
	struct tbuf *t = &tb;

	__asm__("" : "+r"(t));
	return t;
}

/* Stashed events: STASH_HDR bytes, then the record, 8-aligned. */
static __thread unsigned char stash[STASH_SIZE] __attribute__((aligned(8)));

/* The thread's state in each instance's pool (only used, with the
 * thread's own tb.nest set, by the copies of reserve_inst's events). */
static __thread struct tbuf itb[UTRACE_INSTANCES_MAX];

struct utrace__inst_target utrace__inst[UTRACE_INSTANCES_MAX];

struct utrace_pool *utrace__pool;
int utrace__tracing_off;

/* The pool generation (utrace__pool_gen), with UTRACE_TP_SLOW while the
 * inlined writer must leave every event to the library. */
struct utrace_tp_fast_v1 utrace_tp_fast_v2
	__attribute__((visibility("default"))) = { 1 | UTRACE_TP_SLOW, 0, 0 };
/* What the inlined writer of version 1 reads (programs built before
 * utrace_tp_filter_v2()): it did not run filters, so it always goes to the
 * library's path (thread generations never have UTRACE_TP_SLOW). */
const struct utrace_tp_fast_v1 utrace_tp_fast_v1
	__attribute__((visibility("default"))) = { UTRACE_TP_SLOW, 0, 0 };
/* rdtscp's TSC_AUX holds the CPU number (where there is no rseq). */
static int rdtscp_cpu;

/* The pool and its generation change under running threads (the agent
 * makes or replaces the pool): loads that the compiler and TSan see as
 * atomic, a plain mov on x86. */
static inline __attribute__((always_inline)) struct utrace_pool *cur_pool(void)
{
	return __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);
}

static inline __attribute__((always_inline)) unsigned int cur_gen(void)
{
	return __atomic_load_n(&utrace__pool_gen, __ATOMIC_ACQUIRE) &
	       ~(UTRACE_TP_SLOW | UTRACE_TP_FILTER);
}

/* record -g's capture (stacks.c), called through this so that the writer
 * does not call up into what calls it */
static uint32_t (*stack_capture)(const struct utrace_event *ev, const struct utrace_event **ref);

/* Must every event take the library's path? */
static bool fast_off(void)
{
	return !cur_pool() || __atomic_load_n(&utrace__tracing_off, __ATOMIC_ACQUIRE) ||
	       !utrace__clock_tsc ||
	       (!__atomic_load_n(&utrace_tp_fast_v2.cpu_off, __ATOMIC_RELAXED) && !rdtscp_cpu) ||
	       __atomic_load_n(&utrace__record_hook, __ATOMIC_ACQUIRE) != NULL ||
	       __atomic_load_n(&utrace__print_fd, __ATOMIC_ACQUIRE) >= 0 ||
	       __atomic_load_n(&stack_capture, __ATOMIC_ACQUIRE) != NULL;
}

/*
 * Recompute UTRACE_TP_SLOW after a change of what fast_off() reads.  Each
 * writer of those calls this after its store, so the last call sees every
 * store; one that computed from older values and stored later finds so on
 * its second look and stores again.  The bit shares its word with the pool
 * generation, so a thread never sees a new pool with an old bit.
 */
static int nr_filtered;      /* events with a filter (ev->filter) */

static bool any_filter(void)
{
	return __atomic_load_n(&nr_filtered, __ATOMIC_ACQUIRE) > 0;
}

void utrace__fast_update(void)
{
	bool off, filt;

	do {
		unsigned int old = __atomic_load_n(&utrace__pool_gen, __ATOMIC_RELAXED), nw;

		off = fast_off();
		filt = any_filter();
		do {
			nw = (old & ~(UTRACE_TP_SLOW | UTRACE_TP_FILTER)) |
			     (off ? UTRACE_TP_SLOW : 0) | (filt ? UTRACE_TP_FILTER : 0);
		} while (!__atomic_compare_exchange_n(&utrace__pool_gen, &old, nw, 0,
						      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	} while (fast_off() != off || any_filter() != filt);
}

/*
 * An event's filter is set (+1: before the store of ev->filter) or
 * removed (-1: after it).  While any event has one, UTRACE_TP_FILTER in
 * the generation word sends the inlined writer to its copy that looks at
 * ev->filter (tracepoint.h: utrace__reserve_inline()).
 */
void utrace__filter_count(int delta)
{
	__atomic_fetch_add(&nr_filtered, delta, __ATOMIC_SEQ_CST);
	utrace__fast_update();
}

static const struct utrace__trigger_ops *trigger_ops;


void utrace__writer_set_stack_capture(uint32_t (*fn)(const struct utrace_event *ev,
						     const struct utrace_event **ref))
{
	__atomic_store_n(&stack_capture, fn, __ATOMIC_RELEASE);
}

void utrace__writer_set_trigger_ops(const struct utrace__trigger_ops *ops)
{
	__atomic_store_n(&trigger_ops, ops, __ATOMIC_RELEASE);
}

const struct utrace__trigger_ops *utrace__writer_trigger_ops(void)
{
	return __atomic_load_n(&trigger_ops, __ATOMIC_ACQUIRE);
}

void utrace__set_record_hook(void (*hook)(const struct utrace_event *ev,
					  const void *rec, unsigned int size))
{
	__atomic_store_n(&utrace__record_hook, hook, __ATOMIC_RELEASE);
	utrace__fast_update();
}

/* Where the inlined writer reads the CPU (after utrace__clock_init()). */
void utrace__fast_init(void)
{
	unsigned int a, b, c, d;

	__atomic_store_n(&utrace_tp_fast_v2.cpu_off, utrace__rseq_cpu_off, __ATOMIC_RELAXED);
	/* No rseq (valgrind, an old glibc): rdtscp's TSC_AUX, which Linux
	 * sets to the CPU number (node << 12 | cpu) where the CPU has it.
	 * Believed only if it agrees with sched_getcpu(). */
	if (!utrace__rseq_cpu_off && __get_cpuid(0x80000001, &a, &b, &c, &d) &&
	    (d & (1u << 27))) {
		for (int i = 0; i < 3 && !rdtscp_cpu; i++) {
			unsigned int aux;

			(void)__builtin_ia32_rdtscp(&aux);
			rdtscp_cpu = (int)(aux & 0xfff) == sched_getcpu();
		}
	}
	utrace__fast_update();
}
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/*
 * Filter programs without a read-side lock.  A thread runs its event's
 * filter inside the event (t->nest != 0), with the page path's thread
 * state registered here by slot.  The agent, after replacing a program,
 * calls utrace__filter_sync(): one membarrier() makes every thread's
 * "nest = 1" store visible to it or the new program visible to that
 * thread; then it waits until each thread it saw inside an event has
 * been seen outside one.  Events that take no page (no pool, or TSan
 * builds, which cannot see membarrier) use the RCU read side instead.
 */
static struct tbuf *thread_tbufs[UTRACE_POOL_THREADS];
/* Slots taken so far by this process's threads: the high 32 bits of a
 * thread's page numbers (a PAGE record's seq).  The kernel gives a tid
 * again once it wrapped (pid_max is 32768 on many machines), and a
 * process that makes threads all day has two threads of one tid in one
 * recording: their pages must not share numbers, or readers take the
 * later thread's page 0 for the earlier one's, and drop it. */
static uint32_t thread_starts;
static pthread_mutex_t tbufs_mutex = PTHREAD_MUTEX_INITIALIZER;
static int filter_rcu = 1;           /* until membarrier is known to work */

static inline __attribute__((always_inline)) uint32_t rec_bytes(uint32_t size)
{
	size = (size + 3) & ~3u;
	return size ? size : 4;
}

/* Bytes of page an event of 'size' record bytes takes. */
/* Bytes an event takes at the tail, with the time extend it may need. */
static inline __attribute__((always_inline)) uint32_t need_len(const struct tbuf *t,
								uint64_t ts, uint32_t size);

static inline __attribute__((always_inline)) uint32_t event_len(uint32_t size)
{
	return utrace_rb_event_size(rec_bytes(size));
}

static inline __attribute__((always_inline)) uint32_t need_len(const struct tbuf *t,
								uint64_t ts, uint32_t size)
{
	uint64_t delta = ts > t->last_ts ? ts - t->last_ts : 0;

	return event_len(size) + ((delta >> UTRACE_RB_DELTA_BITS) ? 8 : 0);
}

/*
 * Add to a counter of the thread's own slot.  Only this thread writes it
 * (readers only load it), so no locked instruction is needed; on x86 one
 * add to memory cannot be split by a signal handler that counts too.
 */
static inline void slot_add(uint64_t *c, uint64_t n)
{
#if (defined(__x86_64__) || defined(__i386__)) && !defined(UTRACE_TSAN)
	__asm__ volatile("add %1, %0" : "+m"(*c) : "r"(n) : "cc");
#else
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
#endif
}

/* Forget the thread's state in its pool, keeping nest, the stash and
 * exit_rounds: the next event attaches again if 'gen' is not the
 * current generation; with it, events are lost (no slot), counted. */
static void tbuf_reset(struct tbuf *t, unsigned int gen)
{
	memset((char *)t + offsetof(struct tbuf, gen), 0,
	       sizeof(*t) - offsetof(struct tbuf, gen));
	t->tail = TAIL_NO_PAGE;
	t->slot = -1;
	t->gen = gen;
}

static void count_lost(struct tbuf *t)
{
	struct utrace_pool_geom *g = t->geom;
	struct utrace_pool *p;

	t->lost_pending++;
	if (t->slot >= 0 && g && (uint32_t)t->slot < g->nr_slots)
		slot_add(&g->slots[t->slot].lost, 1);
	else if ((p = cur_pool()) != NULL)
		__atomic_fetch_add(&p->lost_no_slot, 1, __ATOMIC_RELAXED);
}

/*
 * Something in the shared pool is nonsense (a page number out of range, a
 * queue that never has room): someone else wrote into it.  Stop taking
 * pages from it, say so once, and mark it dead for the readers; the
 * program goes on, its events lost and counted.
 */
static void pool_broken(struct utrace_pool_geom *g, const char *what, uint64_t v)
{
	int e = errno;

	if (__atomic_exchange_n(&g->broken, 1, __ATOMIC_RELAXED) == 0) {
		utrace__warn("the event pool of process %d was changed from outside "
			     "(%s: %llu); recording stopped", (int)getpid(), what,
			     (unsigned long long)v);
		__atomic_store_n(&g->pool->dead, UTRACE_POOL_BROKEN, __ATOMIC_RELEASE);
	}
	errno = e;
}

/* Queue the current page for the recorder. */
static void publish(struct tbuf *t)
{
	struct utrace_pool_geom *g = t->geom;
	uint32_t q = t->cpu % g->nr_queues;
	uint64_t give_up = 0;

	t->desc->nr_events = t->nr_events;
	slot_add(&g->slots[t->slot].written, t->nr_events);
	page_handed_over(t->desc);
	__atomic_store_n(&t->desc->state, UTRACE_PAGE_FULL, __ATOMIC_RELEASE);
	/* Cannot be full (see pool_create); a pop stalled a whole lap can
	 * hold a cell for a moment.  A second is not a moment: the page
	 * stays FULL outside the queue, where the recorder's last scan
	 * finds it. */
	for (int i = 0; !utrace_queue_push_cells(&g->pool->fullq[q], g->full_cells[q],
						 g->mask, t->page_idx); i++) {
		if (i < 100)
			continue;
		if (!give_up) {
			give_up = utrace__mono_ns() + 1000000000u;
		} else if (utrace__mono_ns() > give_up) {
			pool_broken(g, "a full queue with no room for a second", q);
			break;
		}
		sched_yield();
	}
	t->page = NULL;
	t->tail = TAIL_NO_PAGE;
	t->desc = NULL;
}

/* A page number from the queues 'qs' of the pool, CPU 'cpu's first. */
static int pop_any(struct utrace_pool_geom *g, struct utrace_queue *qs,
		   struct utrace_qcell *const *cells, uint32_t cpu, uint64_t *idx)
{
	uint32_t n = g->nr_queues, q = cpu % n, i;

	for (i = 0; i < n; i++) {
		uint32_t k = (q + i) % n;

		if (utrace_queue_pop_cells(&qs[k], cells[k], g->mask, idx))
			return 1;
	}
	return 0;
}

/* Move to a new page; 0 if there is none.  Like everything here it may
 * run in a signal handler, so it leaves errno as it found it. */
static int switch_page_(struct tbuf *t, uint64_t ts, uint32_t cpu);

static int switch_page(struct tbuf *t, uint64_t ts, uint32_t cpu)
{
	int e = errno, ret = switch_page_(t, ts, cpu);

	errno = e;
	return ret;
}

static int switch_page_(struct tbuf *t, uint64_t ts, uint32_t cpu)
{
	struct utrace_pool_geom *g = t->geom;
	struct utrace_pool *p = g->pool;
	struct utrace_page_desc *d;
	struct utrace_page *pg;
	uint64_t idx;

	if (t->page)
		publish(t);
	if (__atomic_load_n(&g->broken, __ATOMIC_RELAXED))
		return 0;
	if (!pop_any(g, p->freeq, g->free_cells, cpu, &idx)) {
		uint32_t owner;

		if (__atomic_load_n(&p->mode, __ATOMIC_RELAXED) != UTRACE_MODE_OVERWRITE ||
		    !pop_any(g, p->fullq, g->full_cells, cpu, &idx))
			return 0;
		if (idx >= g->nr_pages) {
			pool_broken(g, "page number out of range in a full queue", idx);
			return 0;
		}
		/* Flight recorder: take back the oldest full page, of this
		 * CPU if it has one, as the kernel's per-CPU ring does. */
		d = &g->descs[idx];
		owner = __atomic_load_n(&d->slot, __ATOMIC_RELAXED);
		if (owner >= g->nr_slots) {
			pool_broken(g, "thread slot out of range in a page", owner);
			return 0;
		}
		__atomic_fetch_add(&g->slots[owner].overwritten,
				   __atomic_load_n(&d->nr_events, __ATOMIC_RELAXED),
				   __ATOMIC_RELAXED);
	} else if (idx >= g->nr_pages) {
		pool_broken(g, "page number out of range in a free queue", idx);
		return 0;
	}
	d = &g->descs[idx];
	pg = (struct utrace_page *)(g->pages + idx * UTRACE_PAGE_SIZE);
	page_taken(d);
	d->slot = (uint32_t)t->slot;
	d->tid = (uint32_t)t->tid;
	d->cpu = cpu;
	d->seq = t->seq++;
	d->lost_before = t->lost_pending;
	d->nr_events = 0;
	__atomic_store_n(&d->read, 0, __ATOMIC_RELAXED);
	t->missed = t->lost_pending != 0 ? (uint32_t)UTRACE_RB_MISSED_EVENTS : 0;
	t->lost_pending = 0;
	pg->time_stamp = ts;
	__atomic_store_n(&pg->commit, t->missed,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&d->state, UTRACE_PAGE_WRITING, __ATOMIC_RELEASE);
	t->page = pg;
	t->desc = d;
	t->page_idx = (uint32_t)idx;
	t->tail = 0;
	t->last_ts = ts;
	t->nr_events = 0;
	t->cpu = cpu;
	return 1;
}

/* Write the event header(s) at the tail; return where the record goes. */
static inline __attribute__((always_inline)) void *emit(struct tbuf *t, uint64_t ts,
						     uint32_t size)
{
	unsigned char *d = t->page->data + t->tail;
	uint64_t delta = ts > t->last_ts ? ts - t->last_ts : 0;
	uint32_t r = rec_bytes(size), h;

	if (delta >> UTRACE_RB_DELTA_BITS) {
		utrace_rb_put_time_extend(d, delta);
		d += 8;
		t->tail += 8;
		delta = 0;
	}
	h = utrace_rb_put_data_hdr(d, r, (uint32_t)delta);
	t->tail += h + r;
	d += h;
	if (ts > t->last_ts)
		t->last_ts = ts;
	return d;
}

static void flush_stash(struct tbuf *t);
static inline __attribute__((always_inline)) void leave(struct tbuf *t);
static void inst_exit(void);

/* Take the thread's registration for the filter grace periods back. */
static void unregister(struct tbuf *t)
{
	struct tbuf *self = t;

	if (t->gen && t->slot >= 0 && t->slot < UTRACE_POOL_THREADS)
		__atomic_compare_exchange_n(&thread_tbufs[t->slot], &self, NULL, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/*
 * The thread exits (the destructor of exit_key).  Other keys' destructors
 * may still fire events after ours, so ours asks to be called again, and
 * only at its EXIT_ROUNDS-th call queues the page and frees the slot.  An
 * event fired after that (by a later destructor, or a signal handler) is
 * lost and counted: it never takes a slot that nobody would free.  Not at
 * glibc's last round (PTHREAD_DESTRUCTOR_ITERATIONS): the sanitizers'
 * runtimes use the same trick to be last, and tear the thread down in
 * that round, before our call (ThreadSanitizer then faults in the mutex).
 */
#define EXIT_ROUNDS (PTHREAD_DESTRUCTOR_ITERATIONS - 1)

static void thread_exit(void *arg)
{
	struct tbuf *t = my_tbuf();
	struct utrace_pool_geom *g = t->geom;
	bool current;

	(void)arg;
	if (t->nest)
		return;         /* (a destructor does not run inside an event) */
	t->nest = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (++t->exit_rounds < EXIT_ROUNDS) {
		pthread_setspecific(exit_key, (void *)1);
		goto out;
	}
	current = t->gen == cur_gen() && g && t->slot >= 0;
	if (t->slot >= 0) {
		/* Under the mutex: utrace__threads_quiesce() must not look at
		 * this thread's state once it is freed. */
		pthread_mutex_lock(&tbufs_mutex);
		unregister(t);
		pthread_mutex_unlock(&tbufs_mutex);
	}
	if (current) {
		/* Stashed events no commit copied (see reserve_lost()). */
		if (t->stash_used)
			flush_stash(t);
		if (t->page)
			publish(t);
		__atomic_store_n(&g->slots[t->slot].state, UTRACE_SLOT_FREE, __ATOMIC_RELEASE);
	} else {
		/* A pool that was replaced (its pages are dropped): what the
		 * stash holds is lost, counted. */
		t->slot = -1;
		if (t->stash_used)
			flush_stash(t);
	}
	inst_exit();
	tbuf_reset(t, cur_gen());
out:
	leave(t);
}

static void make_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

/* The key early, so that a thread's first event, which may come from a
 * signal handler, does not make it (pthread_once is not reentrant). */
__attribute__((constructor)) static void writer_init(void)
{
	pthread_once(&key_once, make_key);
}

/*
 * First event of this thread with pool 'p' of generation 'gen': find a
 * thread slot.  Called with nest set, so a signal handler's event
 * meanwhile goes to the stash.  'top': t is the thread's own state (tb),
 * registered for the filter grace periods; else an instance's (itb[]).
 */
static int attach_to(struct tbuf *t, unsigned int gen, struct utrace_pool *p, bool top)
{
	struct utrace_pool_geom *g;
	uint32_t i, free_slot;
	int e = errno;

	/* A registration from an earlier pool must not outlive the thread. */
	if (top)
		unregister(t);
	tbuf_reset(t, gen);
	if (!t->tid)
		t->tid = top ? utrace__gettid() : my_tbuf()->tid;
	if (!p || my_tbuf()->exit_rounds >= EXIT_ROUNDS)
		goto out;       /* no pool, or the thread is gone: lost, counted */
	g = utrace__pool_geom(p);
	if (!g || __atomic_load_n(&g->broken, __ATOMIC_RELAXED))
		goto out;
	t->geom = g;
	for (i = 0; i < g->nr_slots; i++) {
		struct utrace_thread_slot *s = &g->slots[i];

		free_slot = UTRACE_SLOT_FREE;
		if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) == UTRACE_SLOT_FREE &&
		    __atomic_compare_exchange_n(&s->state, &free_slot, UTRACE_SLOT_USED, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			/* The counters are not reset: a slot used by a thread
			 * that has exited keeps what that thread lost, and the
			 * recorder adds up all slots. */
			s->tid = (uint32_t)t->tid;
			t->seq = (uint64_t)__atomic_fetch_add(&thread_starts, 1,
							      __ATOMIC_RELAXED) << 32;
			memset(s->comm, 0, sizeof(s->comm));
			prctl(PR_GET_NAME, s->comm);
			t->comm = s->comm;
			t->slot = (int)i;
			if (top)
				__atomic_store_n(&thread_tbufs[i], t, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_once(&key_once, make_key);
	pthread_setspecific(exit_key, (void *)1);
out:
	errno = e;
	return t->slot >= 0;
}

static int attach(struct tbuf *t)
{
	/* The generation first: the pool is stored before the generation
	 * is bumped, so a new generation comes with its pool.  (Read the
	 * other way round, a thread could take the new generation with no
	 * pool and never look again.) */
	unsigned int gen = cur_gen();

	return attach_to(t, gen, cur_pool(), true);
}

/*
 * The thread's state in instance i, attached to its current pool; NULL
 * when the instance is gone or has no slot for the thread (the event is
 * then counted in the pool's lost_no_slot).  Called with tb.nest set.
 */
static struct tbuf *inst_tbuf(uint32_t i)
{
	struct tbuf *t = &itb[i];
	unsigned int gen = __atomic_load_n(&utrace__inst[i].gen, __ATOMIC_ACQUIRE);
	struct utrace_pool *p = __atomic_load_n(&utrace__inst[i].pool, __ATOMIC_ACQUIRE);

	if (!p)
		return NULL;
	if (t->gen != gen)
		attach_to(t, gen, p, false);
	if (t->slot < 0) {
		__atomic_fetch_add(&p->lost_no_slot, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return t;
}

/* The thread exits: queue its pages of the instances, free its slots. */
static void inst_exit(void)
{
	uint32_t i;

	for (i = 0; i < UTRACE_INSTANCES_MAX; i++) {
		struct tbuf *t = &itb[i];

		if (t->gen && t->slot >= 0 && t->geom &&
		    t->gen == __atomic_load_n(&utrace__inst[i].gen, __ATOMIC_ACQUIRE)) {
			if (t->page)
				publish(t);
			__atomic_store_n(&t->geom->slots[t->slot].state, UTRACE_SLOT_FREE,
					 __ATOMIC_RELEASE);
		}
		if (t->gen)
			tbuf_reset(t, 0);
	}
}

/* Room in the stash for a nested event of 'size' bytes? */
static inline bool stash_room(const struct tbuf *t, uint32_t size)
{
	uint32_t need = STASH_HDR + ((rec_bytes(size) + 7) & ~7u);

	return t->nest <= 1 && t->stash_used + need <= STASH_SIZE;
}

/* A nested event: record it in the stash, for the top-level buffer
 * (reserve_inst() says where else it goes at its commit). */
static void *stash_reserve(struct tbuf *t, struct utrace_tp_reserve *r,
			   uint32_t size)
{
	uint32_t need = STASH_HDR + ((rec_bytes(size) + 7) & ~7u), top = 1, mask = 0;
	unsigned char *e;
	uint64_t ts;

	if (!stash_room(t, size)) {
		count_lost(t);
		return NULL;
	}
	t->nest++;
	ts = utrace__clock_now();
	e = stash + t->stash_used;
	memcpy(e, &ts, 8);
	memcpy(e + 8, &size, 4);
	memcpy(e + 12, &top, 4);
	memcpy(e + 16, &mask, 4);
	r->rb_state = RB_STATE_STASH;
	r->rb_len = need;
	return e + STASH_HDR;
}

/*
 * Write a whole record into t's page (a new page if it does not fit) and
 * commit it; count it lost when there is no page.  At nesting level 1.
 */
static void put_record(struct tbuf *t, uint64_t ts, const void *rec, uint32_t size)
{
	uint32_t cpu = utrace__cpu();

	if (!t->page || cpu != t->cpu ||
	    t->tail + need_len(t, ts, size) > UTRACE_PAGE_DATA) {
		if (t->page)
			__atomic_store_n(&t->page->commit, t->tail | t->missed,
					 __ATOMIC_RELEASE);
		if (!switch_page(t, ts > t->last_ts ? ts : t->last_ts, cpu)) {
			count_lost(t);
			return;
		}
	}
	memcpy(emit(t, ts, size), rec, size);
	t->nr_events++;
	__atomic_store_n(&t->page->commit, t->tail | t->missed, __ATOMIC_RELEASE);
}

/* Copy a record into each instance of 'mask'. */
static void put_instances(uint32_t mask, uint64_t ts, const void *rec, uint32_t size)
{
	while (mask) {
		uint32_t i = (uint32_t)__builtin_ctz(mask);
		struct tbuf *it = inst_tbuf(i);

		mask &= mask - 1;
		if (it)
			put_record(it, ts, rec, size);
	}
}

/* Copy stashed events into the page (called at nesting level 1). */
static void flush_stash(struct tbuf *t)
{
	uint32_t done = 0;

	for (;;) {
		uint32_t used = __atomic_load_n(&t->stash_used, __ATOMIC_RELAXED);

		if (done >= used) {
			/* A nested event may add to the stash while we look:
			 * empty it only if nothing came in. */
			if (__atomic_compare_exchange_n(&t->stash_used, &used, 0, 0,
							__ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				break;
			continue;
		}
		unsigned char *e = stash + done;
		uint64_t ts;
		uint32_t size, cpu = utrace__cpu(), top, mask;

		memcpy(&ts, e, 8);
		memcpy(&size, e + 8, 4);
		memcpy(&top, e + 12, 4);
		memcpy(&mask, e + 16, 4);
		done += STASH_HDR + ((rec_bytes(size) + 7) & ~7u);
		if (mask)
			put_instances(mask, ts, e + STASH_HDR, size);
		if (!top)
			continue;
		if (t->slot < 0 || t->gen != cur_gen()) {
			/* No slot, or a pool that was replaced and may be
			 * unmapped already: nowhere to copy it. */
			count_lost(t);
			continue;
		}
		if (!t->page || cpu != t->cpu ||
		    t->tail + need_len(t, ts, size) > UTRACE_PAGE_DATA) {
			if (t->page)
				__atomic_store_n(&t->page->commit,
						 t->tail | t->missed,
						 __ATOMIC_RELEASE);
			if (!switch_page(t, ts > t->last_ts ? ts : t->last_ts, cpu)) {
				count_lost(t);
				continue;
			}
		}
		memcpy(emit(t, ts, size), e + STASH_HDR, size);
		t->nr_events++;
	}
	/* The copied events are whole: commit them now, before anything can
	 * move this thread to another page. */
	if (t->page)
		__atomic_store_n(&t->page->commit,
				 t->tail | t->missed,
				 __ATOMIC_RELEASE);
}

/* (see leave()) */
static __attribute__((noinline)) void leave_stash(struct tbuf *t)
{
	while (__atomic_load_n(&t->stash_used, __ATOMIC_RELAXED)) {
		t->nest = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		flush_stash(t);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->nest = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
}

/*
 * The thread leaves its event (nest 0).  A signal handler that stashed an
 * event after the last flush and before the store of nest has finished by
 * now: copy its event in (or count it lost) at once, rather than leave it
 * for the thread's next event, which may never come.  A handler that
 * comes after the store takes the page itself.
 */
static inline __attribute__((always_inline)) void leave(struct tbuf *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nest = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__builtin_expect(t->stash_used != 0, 0))
		leave_stash(t);
}

#define GO_ON ((void *)1)

static void reserve_lost(struct tbuf *t);

/* The unusual cases of reserve: first event of the thread, nesting, a
 * stash to empty first.  Returns a stashed record, NULL (lost, counted),
 * or GO_ON: the page is ours (nest is 1), go on as usual. */
static void *reserve_rare(struct tbuf *t, struct utrace_tp_reserve *r,
			  uint32_t size)
{
	/* Nesting first, whatever else is unusual: the interrupted event
	 * may be half-way through attaching or switching pages. */
	if (t->nest)
		return stash_reserve(t, r, size);
	t->nest = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t->gen != cur_gen())
		attach(t);
	if (t->slot < 0) {
		reserve_lost(t);
		return NULL;
	}
	if (t->stash_used)
		flush_stash(t);
	return GO_ON;
}

/*
 * The event being reserved is lost: count it, and deal with what a signal
 * handler stashed meanwhile (into the page, or counted lost too), since
 * no commit of this event will.  Left in the stash, such an event was
 * neither recorded nor counted when it was the thread's last.
 */
static void reserve_lost(struct tbuf *t)
{
	count_lost(t);
	if (t->stash_used)
		flush_stash(t);
	leave(t);
}

/*
 * reserve, after the checks of the entry: the thread's page is ours
 * (nest is 1).  Takes a new page if needed, writes a time extend if the
 * delta needs one, and the event header.
 */
static __attribute__((noinline)) void *reserve_page(struct utrace_tp_reserve *r,
						    struct utrace_event *ev, struct tbuf *t,
						    unsigned int size, uint64_t ts)
{
	struct utrace_entry *ent;
	uint32_t cpu;

	if (__builtin_expect(!t->page && ts < t->retry_ts, 0)) {
		/* The buffer was full a moment ago: lost, without touching
		 * the queues, so that a full buffer costs the program less
		 * than a recorded event. */
		reserve_lost(t);
		return NULL;
	}
	cpu = utrace__cpu();
	if (__builtin_expect(t->slot < 0, 0)) {
		/* No thread slot (more threads than the pool has slots, or
		 * attached before the pool existed): lost, counted. */
		reserve_lost(t);
		return NULL;
	}
	if (!t->page || cpu != t->cpu ||
	    t->tail + need_len(t, ts, size) > UTRACE_PAGE_DATA) {
		if (!switch_page(t, ts, cpu)) {
			/* Look again after about a microsecond (4096 TSC
			 * ticks, or ns): the recorder frees pages in batches. */
			t->retry_ts = ts + 4096;
			reserve_lost(t);
			return NULL;
		}
	}
	r->rb_state = RB_STATE_PAGE;
	t->undo_tail = t->tail;
	t->undo_ts = t->last_ts;
	ent = emit(t, ts, size);
	r->rec = ent;
	/* common_type, and common_flags = common_preempt_count = 0 */
	uint32_t w = (uint16_t)ev->id;
	memcpy(ent, &w, 4);
	ent->pid = t->tid;
	return ent;
}

/* The common fields of a record. */
static inline void put_common(struct utrace_entry *ent, const struct utrace_event *ev,
			      int32_t tid)
{
	/* common_type, and common_flags = common_preempt_count = 0 */
	uint32_t w = (uint16_t)ev->id;

	memcpy(ent, &w, 4);
	ent->pid = tid ? tid : utrace__gettid();
}

/* The buffer the trace_marker writes of this thread go to: -1 the top
 * level, else an instance (the agent thread writes them, control.c). */
__thread int utrace__marker_inst = -1;

/* Where an event may go: the top level (if on there) and the instances
 * it is on in.  ftrace's own events (trace_marker) go where the marker
 * write was made. */
static inline uint32_t inst_targets(const struct utrace__event_state *st, bool *top)
{
	if (__builtin_expect(st->ignore_enable, 0)) {
		int i = utrace__marker_inst;

		*top = i < 0;
		return i < 0 ? 0 : 1u << i;
	}
	*top = __atomic_load_n(&st->enabled, __ATOMIC_RELAXED);
	return __atomic_load_n(&st->inst_on, __ATOMIC_RELAXED);
}

/*
 * reserve while an instance exists (UTRACE_TRACING_INSTANCES): the
 * record is built in the probe's frame (nested: in the stash), and the
 * commit copies it into each buffer that takes it (commit_inst()).
 * Whether it goes to the top-level buffer is decided then too.
 */
static __attribute__((noinline)) void *reserve_inst(struct utrace_tp_reserve *r,
						    struct utrace_event *ev, void *scratch,
						    unsigned int size)
{
	const struct utrace__event_state *st = ev->priv;
	int off = __atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED);
	bool top;
	uint32_t inst = inst_targets(st, &top);
	bool trig = __atomic_load_n(&st->soft, __ATOMIC_RELAXED) != 0;
	struct tbuf *t;
	void *ent;

	top = top && !(off & UTRACE_TRACING_OFF) && cur_pool();
	if (!top && !inst && !trig)
		return NULL;
	if (size > UTRACE_EVENT_MAX)
		return top ? utrace__reserve_scratch(r, ev, scratch, size) : NULL;
	t = my_tbuf();
	if (t->nest) {
		if (!stash_room(t, size)) {
			/* lost, counted where it would have gone */
			if (top)
				count_lost(t);
			while (inst) {
				uint32_t i = (uint32_t)__builtin_ctz(inst);
				struct utrace_pool *p =
					__atomic_load_n(&utrace__inst[i].pool, __ATOMIC_ACQUIRE);

				inst &= inst - 1;
				if (p)
					__atomic_fetch_add(&p->lost_no_slot, 1, __ATOMIC_RELAXED);
			}
			return NULL;
		}
		ent = stash_reserve(t, r, size);
		r->rb_state = RB_STATE_STASH_INST;
		r->rec = ent;
		put_common(ent, ev, t->tid);
		return ent;
	}
	t->nest = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (t->gen != cur_gen())
		attach(t);
	if (t->stash_used)
		flush_stash(t);
	t->inst_ts = utrace__clock_now();
	r->rb_state = RB_STATE_SCRATCH_INST;
	r->rec = scratch;
	put_common(scratch, ev, t->tid);
	return scratch;
}

/* reserve's unusual entries: no pool, tracing off, a record too large,
 * the thread's first event, nesting, a stash to empty, an instance. */
static __attribute__((noinline)) void *reserve_entry(struct utrace_tp_reserve *r,
						     struct utrace_event *ev, void *scratch,
						     unsigned int size)
{
	struct tbuf *t;
	struct utrace_entry *ent;
	int off = __atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED);

	if ((off & UTRACE_TRACING_INSTANCES) ||
	    ((off & UTRACE_TRACING_TRIGGERS) &&
	     __atomic_load_n(&((const struct utrace__event_state *)ev->priv)->soft,
			     __ATOMIC_RELAXED)))
		return reserve_inst(r, ev, scratch, size);
	if (off & ~UTRACE_TRACING_TRIGGERS)
		return NULL;    /* tracing_on is 0: not recorded, not lost */
	if (!cur_pool() || size > UTRACE_EVENT_MAX)
		return utrace__reserve_scratch(r, ev, scratch, size);
	t = my_tbuf();
	ent = reserve_rare(t, r, size);
	if (ent != GO_ON) {
		if (!ent)
			return NULL;    /* lost */
		/* stashed (perhaps in the middle of the thread's first
		 * event, before it knows its tid) */
		r->rec = ent;
		uint32_t w = (uint16_t)ev->id;
		memcpy(ent, &w, 4);
		ent->pid = t->tid ? t->tid : utrace__gettid();
		return ent;
	}
	return reserve_page(r, ev, t, size, utrace__clock_now());
}

/*
 * The fast path of every recorded event (called by the generated probe):
 * one thread-local access, a TSC read, a CPU read from rseq, a few
 * compares and the event header; the caller fills the record and commits.
 * Whatever is not the usual case (a new page, a time extend, a large
 * record, nesting, no pool) goes to the functions above, so that this one
 * needs no stack frame.
 */
void *utrace_tp_reserve(struct utrace_tp_reserve *r, struct utrace_event *ev,
			void *scratch, unsigned int size)
{
	struct tbuf *t;
	struct utrace_entry *ent;
	unsigned char *d;
	uint64_t ts, delta;
	uint32_t cpu, rb, w;

	r->event = ev;
	r->size = size;
	r->rb_state = RB_STATE_SCRATCH;
	if (__builtin_expect(!cur_pool() || __atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED) ||
			     size > UTRACE_RB_MAX_SMALL, 0))
		return reserve_entry(r, ev, scratch, size);
	t = my_tbuf();
	if (__builtin_expect(t->gen != cur_gen() || t->nest || t->stash_used, 0))
		return reserve_entry(r, ev, scratch, size);
	t->nest = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* From here the page is ours: a signal handler's event goes to the
	 * stash.  Read the tail only now. */
	if (__builtin_expect(!utrace__clock_tsc, 0))
		return reserve_page(r, ev, t, size, utrace__clock_now());
	ts = __builtin_ia32_rdtsc();
	cpu = utrace__cpu();
	rb = (size + 3) & ~3u;
	delta = ts - t->last_ts;
	if (__builtin_expect(!t->page || cpu != t->cpu || ts < t->last_ts ||
			     (delta >> UTRACE_RB_DELTA_BITS) != 0 ||
			     t->tail + 4 + rb > UTRACE_PAGE_DATA || rb == 0, 0))
		return reserve_page(r, ev, t, size, ts);
	r->rb_state = RB_STATE_PAGE;
	t->undo_tail = t->tail;
	t->undo_ts = t->last_ts;
	d = t->page->data + t->tail;
	w = utrace_rb_word(rb / 4, (uint32_t)delta);
	memcpy(d, &w, 4);
	t->tail += 4 + rb;
	t->last_ts = ts;
	ent = (struct utrace_entry *)(d + 4);
	r->rec = ent;
	/* common_type, and common_flags = common_preempt_count = 0 */
	w = (uint16_t)ev->id;
	memcpy(ent, &w, 4);
	ent->pid = t->tid;
	return ent;
}

/* The inlined writer left its event with a stash to copy in. */
void utrace_tp_leave_v1(void)
{
	leave_stash(my_tbuf());
}

/* The unusual cases: an event without a page, or no membarrier. */
static __attribute__((noinline)) bool filter_rejects_slow(struct utrace_tp_reserve *r)
{
	struct tbuf *t = my_tbuf();
	struct utrace__filter_ctx ctx;
	char comm[17];
	int e = errno;
	bool pass;

	ctx.cpu = r->rb_state == RB_STATE_PAGE ? t->cpu : utrace__cpu();
	if (r->rb_state != RB_STATE_SCRATCH && t->comm) {
		ctx.comm = t->comm;
	} else {
		memset(comm, 0, sizeof(comm));
		prctl(PR_GET_NAME, comm);
		ctx.comm = comm;
	}
	pass = utrace__filter_run(r->event, r->rec, r->size, &ctx);
	errno = e;
	return !pass;
}

/* Does filter 'f' of the event reject the record? */
static inline __attribute__((always_inline)) bool filter_rejects(struct utrace_tp_reserve *r,
								 const struct utrace__filter *f)
{
	struct tbuf *t = my_tbuf();
	struct utrace__filter_ctx ctx;

	if (__builtin_expect(r->rb_state != RB_STATE_PAGE || !t->comm ||
			     __atomic_load_n(&filter_rcu, __ATOMIC_RELAXED), 0))
		return filter_rejects_slow(r);
	ctx.cpu = t->cpu;
	ctx.comm = t->comm;
	return !utrace__filter_match(f, r->rec, r->size, &ctx);
}

/*
 * Called by the agent once (it may sleep): use membarrier() if the kernel
 * has it.  Returns whether the lock-free filter path is on.
 */
bool utrace__filter_sync_init(void)
{
#ifndef UTRACE_TSAN
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		__atomic_store_n(&filter_rcu, 0, __ATOMIC_RELEASE);
#endif
	return !__atomic_load_n(&filter_rcu, __ATOMIC_RELAXED);
}

/*
 * Wait until no thread can still be running a filter program that was
 * replaced before the call.  Returns false if a thread stayed inside one
 * event for more than about a second (stopped in a debugger, say): the
 * caller must then not free the old program.
 */
bool utrace__filter_sync(void)
{
	tracepoint_synchronize_unregister();    /* the RCU read side users */
	if (__atomic_load_n(&filter_rcu, __ATOMIC_RELAXED))
		return true;
	return utrace__threads_quiesce();
}

/*
 * Is the thread state t still inside an event?  Only while t is registered
 * (in any slot: a thread that attaches to a new pool at the start of an
 * event moves), and under the mutex, so that its state is not freed under
 * the look: an exiting thread unregisters under it (thread_exit()).
 */
static bool still_inside(const struct tbuf *t, uint32_t i)
{
	bool inside = false;
	uint32_t j;

	pthread_mutex_lock(&tbufs_mutex);
	/* (slot i first: where it was seen, and almost always still is) */
	for (j = 0; j <= UTRACE_POOL_THREADS; j++) {
		uint32_t k = j ? j - 1 : i;

		if ((j == 0 || k != i) &&
		    __atomic_load_n(&thread_tbufs[k], __ATOMIC_ACQUIRE) == t) {
			inside = __atomic_load_n(&t->nest, __ATOMIC_RELAXED) != 0;
			break;
		}
	}
	pthread_mutex_unlock(&tbufs_mutex);
	return inside;
}

/*
 * Wait until every thread with a page that was inside an event at the call
 * has left it.  False when it cannot tell (no membarrier, TSan) or a thread
 * stayed inside one event too long.  The mutex is held for each look only,
 * not across the wait: an exiting thread takes it with its nest set
 * (thread_exit()), so a wait holding it would wait for that thread until
 * it gave up (and the caller then kept what it would have freed).
 */
bool utrace__threads_quiesce(void)
{
	uint64_t give_up;
	uint32_t i;

	if (__atomic_load_n(&filter_rcu, __ATOMIC_RELAXED) ||
	    syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		return false;
	/* A second of the clock for all of them, not a count of sleeps: on
	 * a loaded machine each 50 us sleep can last milliseconds, and
	 * 20,000 of them held the agent (and every client waiting for it,
	 * `utrace ps` after a top session's rmdir) far longer. */
	give_up = utrace__mono_ns() + 1000000000u;
	for (i = 0; i < UTRACE_POOL_THREADS; i++) {
		const struct tbuf *t = __atomic_load_n(&thread_tbufs[i], __ATOMIC_ACQUIRE);

		/* (t is only compared until still_inside() finds it) */
		while (t && still_inside(t, i)) {
			struct timespec d = { 0, 50 * 1000 };

			if (utrace__mono_ns() > give_up)
				return false;
			nanosleep(&d, NULL);
		}
	}
	return true;
}

static void discard(struct utrace_tp_reserve *r);

/*
 * The inline path's commit of an event with a filter (tracepoint.h:
 * utrace__commit_event_inline()): the record is whole at the page's tail,
 * the event entered (nest 1), as in commit_slow().  A rejected record is
 * taken back as discard() does; where it began and the time before it
 * are read from its event header (the inline path set neither undo
 * field).  An accepted one is committed as utrace__commit_inline() does.
 */
static __attribute__((noinline)) bool filter_pass_slow(const struct utrace_event *ev,
							struct tbuf *t, void *rec,
							unsigned int size)
{
	struct utrace_tp_reserve r;

	if (!t->comm || __atomic_load_n(&filter_rcu, __ATOMIC_RELAXED)) {
		r.event = (struct utrace_event *)(uintptr_t)ev;
		r.rec = rec;
		r.size = size;
		r.rb_state = RB_STATE_PAGE;
		return !filter_rejects_slow(&r);
	}
	return true;    /* (no filter any more) */
}

/* discard() of the inline path's record, a time extend left in its place. */
static __attribute__((noinline)) void discard_extend(struct tbuf *t, unsigned char *hdr,
						     uint32_t delta)
{
	struct utrace_tp_reserve r;

	t->undo_tail = (uint32_t)(hdr - t->page->data);
	t->undo_ts = t->last_ts - delta;
	r.rb_state = RB_STATE_PAGE;
	discard(&r);
}

void utrace_tp_filter_commit_v2(const struct utrace_event *ev, struct utrace_tp_thread_v1 *tt,
				void *rec, unsigned int size)
{
	struct tbuf *t = (struct tbuf *)(void *)tt;
	const struct utrace__filter *f = __atomic_load_n(&ev->filter, __ATOMIC_RELAXED);
	unsigned char *hdr = (unsigned char *)rec - 4;
	uint32_t w;
	int pass = -1;

	/* The usual filter, one comparison, inline. */
	if (__builtin_expect(t->comm && f && !__atomic_load_n(&filter_rcu, __ATOMIC_RELAXED), 1)) {
		pass = utrace__filter_match_one(f, rec, size);
		if (__builtin_expect(pass < 0, 0)) {
			struct utrace__filter_ctx ctx = { t->cpu, t->comm };

			pass = utrace__filter_match(f, rec, size, &ctx);
		}
	} else {
		pass = filter_pass_slow(ev, t, rec, size);
	}
	if (__builtin_expect(pass, 1)) {
		t->nr_events++;
		__atomic_store_n(&t->page->commit, t->tail | t->missed, __ATOMIC_RELEASE);
		leave(t);
		return;
	}
	memcpy(&w, hdr, 4);
	w >>= UTRACE_RB_TYPE_BITS;
	if (__builtin_expect(w >= (1u << (UTRACE_RB_DELTA_BITS - 1)), 0)) {
		discard_extend(t, hdr, w);
		return;
	}
	/* discard()'s usual case */
	t->tail = (uint32_t)(hdr - t->page->data);
	t->last_ts -= w;
	leave(t);
}

/* Take back a reserved event that its filter rejected. */
static void discard(struct utrace_tp_reserve *r)
{
	struct tbuf *t = my_tbuf();

	if (r->rb_state == RB_STATE_STASH) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->nest--;
		return;
	}
	if (r->rb_state != RB_STATE_PAGE)
		return;
	t->tail = t->undo_tail;
	if (t->last_ts - t->undo_ts < (1ULL << (UTRACE_RB_DELTA_BITS - 1))) {
		t->last_ts = t->undo_ts;
	} else {
		/* A long time since the last event kept: leave a time
		 * extend where the event was (it took at least 12 bytes), so
		 * that a run of rejected events does not make every next
		 * event need one. */
		utrace_rb_put_time_extend(t->page->data + t->tail, t->last_ts - t->undo_ts);
		t->tail += 8;
		__atomic_store_n(&t->page->commit, t->tail | t->missed, __ATOMIC_RELEASE);
	}
	if (t->stash_used != 0)
		flush_stash(t);
	leave(t);
}

/*
 * The commit of reserve_inst()'s record: run the filter of each buffer
 * that has the event on, and copy the record into those that take it.
 */
static __attribute__((noinline)) void commit_inst(struct utrace_tp_reserve *r)
{
	struct tbuf *t = my_tbuf();
	const struct utrace_event *ev = r->event;
	const struct utrace__event_state *st = ev->priv;
	int off = __atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED);
	/* (ftrace's print: the marker runs its triggers) */
	const struct utrace__trigger_ops *trig =
		!st->ignore_enable && (__atomic_load_n(&st->triggers, __ATOMIC_RELAXED) != NULL ||
				       __atomic_load_n(&st->itrig, __ATOMIC_RELAXED) != NULL) ?
		utrace__writer_trigger_ops() : NULL;
	bool top_on;
	uint32_t on, mask = 0, top;
	struct utrace__inst_filter *ifilt = __atomic_load_n(&st->ifilt, __ATOMIC_ACQUIRE);
	struct utrace__filter_ctx ctx;
	char comm[17];
	int e = errno;

	ctx.cpu = utrace__cpu();
	if (t->comm) {
		ctx.comm = t->comm;
	} else {
		memset(comm, 0, sizeof(comm));
		prctl(PR_GET_NAME, comm);
		ctx.comm = comm;
	}
	if (trig) {
		/* the event's triggers, before its own filter and whether it
		 * is on (they may switch it, or tracing, on or off) */
		trig->run(r->event, r->rec, r->size, &ctx, false);
		off = __atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED);
	}
	on = inst_targets(st, &top_on);
	top = top_on && !(off & UTRACE_TRACING_OFF) && cur_pool() &&
	      utrace__filter_run(ev, r->rec, r->size, &ctx);
	while (on) {
		uint32_t i = (uint32_t)__builtin_ctz(on);

		on &= on - 1;
		if (__atomic_load_n(&utrace__inst[i].tracing_off, __ATOMIC_RELAXED) ||
		    !__atomic_load_n(&utrace__inst[i].pool, __ATOMIC_RELAXED))
			continue;
		if (ifilt && !utrace__filter_run_at((void *const *)&ifilt[i].filter,
						    r->rec, r->size, &ctx))
			continue;
		mask |= 1u << i;
	}
	if (trig)
		trig->run(r->event, r->rec, r->size, &ctx, true);
	/* record -g: the event's stack, nested in it (it follows the event) */
	if (top && !st->ignore_enable) {
		uint32_t (*capture)(const struct utrace_event *, const struct utrace_event **) =
			__atomic_load_n(&stack_capture, __ATOMIC_ACQUIRE);

		if (capture)
			capture(ev, NULL);
	}
	errno = e;
	if (top && (utrace__record_hook != NULL || utrace__print_fd >= 0))
		utrace__commit_observe(r);
	if (r->rb_state == RB_STATE_STASH_INST) {
		unsigned char *h = (unsigned char *)r->rec - STASH_HDR;

		memcpy(h + 12, &top, 4);
		memcpy(h + 16, &mask, 4);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (top || mask)
			t->stash_used += r->rb_len;
		t->nest--;
		return;
	}
	if (top) {
		if (t->slot >= 0 && t->gen == cur_gen())
			put_record(t, t->inst_ts, r->rec, r->size);
		else
			count_lost(t);
	}
	if (mask)
		put_instances(mask, t->inst_ts, r->rec, r->size);
	if (t->stash_used != 0)
		flush_stash(t);
	leave(t);
}

/* The usual commit, with stashed events to copy in after the event. */
static __attribute__((noinline)) void commit_stash(struct tbuf *t)
{
	flush_stash(t);       /* may leave no page, when none was free */
	if (t->page)
		__atomic_store_n(&t->page->commit, t->tail | t->missed, __ATOMIC_RELEASE);
	leave(t);
}

/*
 * record -g: the stack of the event just written at the page's tail (the
 * event still entered).  A stack seen before costs the walk, the table's
 * lookup and its stack_ref record (12 bytes) written here, after the
 * event, with time delta 0: no second reserve, no stash.  A new stack's
 * definition (or a stack_ref that does not fit the page) is written by the
 * capture nested in the event, i.e. stashed, and copied in after it by
 * the commit's flush_stash().
 */
static void stack_in_page(struct tbuf *t, const struct utrace_event *ev,
			  uint32_t (*capture)(const struct utrace_event *,
					      const struct utrace_event **))
{
	const struct utrace_event *ref = NULL;
	unsigned char *d;
	uint32_t id, w;

	if (((const struct utrace__event_state *)ev->priv)->ignore_enable)
		return;
	if (t->tail + 4 + 12 > UTRACE_PAGE_DATA) {
		capture(ev, NULL);
		return;
	}
	id = capture(ev, &ref);
	if (!id || !ref)
		return;
	d = t->page->data + t->tail;
	w = utrace_rb_word(3, 0);
	memcpy(d, &w, 4);
	w = (uint16_t)ref->id;
	memcpy(d + 4, &w, 4);
	memcpy(d + 8, &t->tid, 4);
	memcpy(d + 12, &id, 4);
	t->tail += 16;
	t->nr_events++;
}

/* A commit with something to do besides: a filter, a hook or printer,
 * a stack, a stashed or unpaged event.  Apart, so the usual one has no
 * frame. */
static __attribute__((noinline)) void commit_slow(struct utrace_tp_reserve *r)
{
	struct tbuf *t;
	uint32_t (*capture)(const struct utrace_event *, const struct utrace_event **) =
		__atomic_load_n(&stack_capture, __ATOMIC_ACQUIRE);

	/* (A relaxed load: a plain mov, which the agent may race with.) */
	const struct utrace__filter *f = __atomic_load_n(&r->event->filter, __ATOMIC_RELAXED);

	if (r->rb_state >= RB_STATE_SCRATCH_INST) {
		commit_inst(r);
		return;
	}
	if (f != NULL && filter_rejects(r, f)) {
		discard(r);
		return;
	}
	if (utrace__record_hook != NULL || utrace__print_fd >= 0)
		utrace__commit_observe(r);
	if (r->rb_state != RB_STATE_PAGE) {
		if (r->rb_state == RB_STATE_STASH) {
			/* A stashed event: make it visible to the flush. */
			t = my_tbuf();
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			t->stash_used += r->rb_len;
			t->nest--;
			/* its stack: stashed after it (still nested in the
			 * event the signal interrupted) */
			if (capture &&
			    !((const struct utrace__event_state *)r->event->priv)->ignore_enable)
				capture(r->event, NULL);
		}
		return;
	}
	t = my_tbuf();
	t->nr_events++;
	if (capture)
		stack_in_page(t, r->event, capture);
	if (t->stash_used != 0)
		flush_stash(t);       /* may leave no page, when none was free */
	if (t->page)
		__atomic_store_n(&t->page->commit, t->tail | t->missed, __ATOMIC_RELEASE);
	leave(t);
}

void utrace_tp_commit(struct utrace_tp_reserve *r)
{
	struct tbuf *t;

	if (__builtin_expect(__atomic_load_n(&r->event->filter, __ATOMIC_RELAXED) != NULL ||
			     utrace__record_hook != NULL || utrace__print_fd >= 0 ||
			     r->rb_state != RB_STATE_PAGE ||
			     __atomic_load_n(&stack_capture, __ATOMIC_RELAXED) != NULL, 0)) {
		commit_slow(r);
		return;
	}
	/* The event is whole in the page (RB_STATE_PAGE): publish it. */
	t = my_tbuf();
	t->nr_events++;
	if (__builtin_expect(t->stash_used != 0, 0)) {
		commit_stash(t);
		return;
	}
	__atomic_store_n(&t->page->commit, t->tail | t->missed, __ATOMIC_RELEASE);
	leave(t);
}

/*
 * In a fork child: the pages belong to the parent; forget them (the next
 * event attaches to the child's pool).  Returns whether the forking
 * thread was inside an event (fork() from a signal handler): that event
 * goes on writing where it had reserved, in the parent's pool, so the
 * caller must not unmap the pool but replace it with private memory.
 * The event's commit then lands on a page of this process's own.
 */
bool utrace__rb_after_fork(void)
{
	static struct utrace_page orphan_page;
	struct tbuf *t = my_tbuf();
	uint32_t nest = t->nest;

	t->nest = nest + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->stash_used = 0;      /* the parent records what it stashed */
	t->exit_rounds = 0;
	t->tid = utrace__gettid();
	tbuf_reset(t, 0);
	if (nest) {
		t->page = &orphan_page;
		t->tail = 0;
	}
	memset(thread_tbufs, 0, sizeof(thread_tbufs));
	pthread_mutex_init(&tbufs_mutex, NULL);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nest = nest;
	return nest != 0;
}
