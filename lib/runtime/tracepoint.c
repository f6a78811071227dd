/* SPDX-License-Identifier: MIT */
/*
 * Probe lists of tracepoints, read under RCU.
 *
 * A tracepoint's probes are a NULL-terminated array.  Writers (register,
 * unregister) build a new array under tp_mutex and publish it with one
 * pointer store; readers (the __traceiter_<ev> functions generated in the
 * user's code) walk whichever array they loaded inside an urcu-bp read-side
 * section.  urcu-bp ("bulletproof") needs no thread registration, which
 * suits a library whose callers never tell it about their threads.
 *
 * An old array is freed only after a grace period.  The wait happens after
 * tp_mutex is dropped, so a probe that registers or unregisters probes does
 * not deadlock; when the caller is itself inside a read-side section (a
 * probe changing probes) the array stays on the pending list until a later
 * call outside any section, or tracepoint_synchronize_unregister().
 *
 * Return codes, as the kernel's tracepoint_probe_register():
 *   0        done
 *   -EEXIST  this (fn, data) pair is already registered
 *   -ENOENT  unregister of a pair that is not registered
 *   -ENOMEM  no memory for the new array
 *   -EINVAL  NULL tracepoint or function
 *   <0       the error returned by a TRACE_EVENT_FN reg function
 */

/*
 * _LGPL_SOURCE: the read-side lock and unlock are inlined from liburcu's
 * headers.  Built with TLS descriptors (-mtls-dialect=gnu2), the access to
 * urcu's per-thread reader is a short call, not __tls_get_addr().
 *
 * Not in a build with UBSan (UTRACE_URCU_CALLS, lib/meson.build): liburcu
 * 0.13 keeps its per-thread readers in an arena whose entries are not at
 * the 128-byte alignment their struct declares, so its inlined read side
 * would make every sanitized program report a misaligned access (harmless
 * on x86-64).  The calls into the uninstrumented liburcu-bp do not.
 */
#ifndef UTRACE_URCU_CALLS
#define _LGPL_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <urcu-bp.h>

#include "filter.h"
#include "internal.h"
#include "jump.h"
#include "tp.h"

/* A probe array with a link in front of it, for the list of arrays that
 * wait for a grace period; readers never see the link. */
struct pending {
	struct pending *next;
	struct utrace_tracepoint_func funcs[];
};

static pthread_mutex_t tp_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct pending *pending_free;

/*
 * ThreadSanitizer cannot see urcu's grace periods (they happen inside the
 * uninstrumented liburcu, through membarrier), so it would take every free
 * after synchronize_rcu() for a race with the readers.  Tell it what RCU
 * guarantees: everything a reader did before read_unlock() happens before
 * whatever follows the grace period that waited for it.
 */
#ifdef UTRACE_TSAN
static char grace_period_token;
#define rcu_reader_done() __tsan_release(&grace_period_token)
#define rcu_grace_period_done() __tsan_acquire(&grace_period_token)
#else
#define rcu_reader_done() do { } while (0)
#define rcu_grace_period_done() do { } while (0)
#endif

/*
 * The read side of a thread that liburcu-bp has unregistered already: its
 * thread-exit destructor ran, and the thread goes on to other destructors
 * (which may fire events) or takes a signal whose handler does.  Taking
 * urcu's read side there registers the thread again, which takes urcu's
 * init_lock; liburcu-bp 0.13 holds that lock with signals unblocked in its
 * own exit path (urcu_bp_exit(), after the unregistration), so an event
 * fired by a signal handler in that window deadlocked the thread, and
 * every thread that started after it (found with `utrace top` reading an
 * instance of t0011's churn: a filter on every event).  Such a thread
 * counts itself in exiting_readers instead, and synchronize() waits for
 * that count to drop to zero as well as for urcu's grace period.
 */
#ifdef _LGPL_SOURCE
#define urcu_registered() (URCU_TLS(urcu_bp_reader) != NULL)
#else
extern __thread void *urcu_bp_reader;
#define urcu_registered() (urcu_bp_reader != NULL)
#endif

static __thread unsigned int urcu_seen, exiting_depth;
static unsigned long exiting_readers;

static inline void read_lock(void)
{
	if (__builtin_expect(exiting_depth != 0 || (urcu_seen && !urcu_registered()), 0)) {
		/* counted before the pointer is loaded (a full barrier) */
		__atomic_fetch_add(&exiting_readers, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&exiting_depth, 1, __ATOMIC_RELAXED);
		return;
	}
	urcu_bp_read_lock();
	urcu_seen = 1;
}

static inline void read_unlock(void)
{
	rcu_reader_done();
	if (__builtin_expect(exiting_depth != 0, 0)) {
		__atomic_fetch_sub(&exiting_depth, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&exiting_readers, 1, __ATOMIC_SEQ_CST);
		return;
	}
	urcu_bp_read_unlock();
}

/* Is this thread inside a read-side section (of either kind)? */
static bool read_ongoing(void)
{
	return exiting_depth != 0 || urcu_bp_read_ongoing();
}

void utrace_tp_read_lock(void)
{
	read_lock();
}

void utrace_tp_read_unlock(void)
{
	read_unlock();
}

static void synchronize(void)
{
	urcu_bp_synchronize_rcu();
	while (__atomic_load_n(&exiting_readers, __ATOMIC_SEQ_CST) != 0)
		poll(NULL, 0, 1);
	rcu_grace_period_done();
}

/*
 * The iterator's shortcut: only while the recording probe is alone.  The
 * iterator's direct call is the inlined writer, which runs the event's
 * filter itself (stage 6 of define_trace.h: utrace__filter_inline(), or
 * utrace_tp_commit() when it goes out of line).  The probes built before
 * it did not look at filters: they read utrace_tp_fast_v1, whose
 * UTRACE_TP_SLOW is set for good, and record through utrace_tp_commit().
 */
static void set_fast(struct utrace_tracepoint *tp,
		     const struct utrace_tracepoint_func *f, size_t n)
{
	void *d = NULL;

	if (n == 1 && tp->builtin && f[0].func == tp->builtin)
		d = f[0].data;
	__atomic_store_n(&tp->fast_data, d, __ATOMIC_RELEASE);
}


static size_t nr_funcs(const struct utrace_tracepoint_func *f)
{
	size_t n = 0;

	if (f)
		while (f[n].func)
			n++;
	return n;
}

static struct utrace_tracepoint_func *alloc_funcs(size_t n)
{
	struct pending *p = calloc(1, sizeof(*p) + n * sizeof(p->funcs[0]));

	return p ? p->funcs : NULL;
}

static struct pending *block_of(struct utrace_tracepoint_func *funcs)
{
	return (struct pending *)((char *)funcs - offsetof(struct pending, funcs));
}

/* Queue an old array; called with tp_mutex held. */
static void defer_free(struct utrace_tracepoint_func *old)
{
	struct pending *p;

	if (!old)
		return;
	p = block_of(old);
	p->next = pending_free;
	pending_free = p;
}

/* The call sites to what the tracepoints' words say now (jump.c); then
 * wait for a grace period and free what was queued before it began. */
void utrace__tp_reap(void)
{
	struct pending *list, *next;

	utrace__jump_sync();
	if (read_ongoing())
		return;
	pthread_mutex_lock(&tp_mutex);
	list = pending_free;
	pending_free = NULL;
	pthread_mutex_unlock(&tp_mutex);
	if (!list)
		return;
	synchronize();
	for (; list; list = next) {
		next = list->next;
		free(list);
	}
}

/* (tp_mutex held) */
static struct utrace_tracepoint *tp_calling;

struct utrace_tracepoint *utrace__tp_calling(void)
{
	return tp_calling;
}

int utrace__tp_add(struct utrace_tracepoint *tp, utrace_probe_fn fn,
		   void *data)
{
	struct utrace_tracepoint_func *old, *neu;
	size_t i, n;
	int ret = 0;

	if (!tp || !fn)
		return -EINVAL;
	pthread_mutex_lock(&tp_mutex);
	old = tp->funcs;
	n = nr_funcs(old);
	for (i = 0; i < n; i++) {
		if (old[i].func == fn && old[i].data == data) {
			ret = -EEXIST;
			goto out;
		}
	}
	neu = alloc_funcs(n + 2);
	if (!neu) {
		ret = -ENOMEM;
		goto out;
	}
	if (n == 0 && tp->regfunc) {
		tp_calling = tp;
		ret = tp->regfunc();
		tp_calling = NULL;
		if (ret < 0) {
			free(block_of(neu));
			goto out;
		}
		ret = 0;
	}
	for (i = 0; i < n; i++)
		neu[i] = old[i];
	neu[n].func = fn;
	neu[n].data = data;
	set_fast(tp, neu, n + 1);
	__atomic_store_n(&tp->funcs, neu, __ATOMIC_RELEASE);
	if (n == 0) {
		__atomic_store_n(&tp->enabled, 1, __ATOMIC_RELEASE);
		utrace__jump_changed();
	}
	defer_free(old);
out:
	pthread_mutex_unlock(&tp_mutex);
	return ret;
}

int utrace__tp_remove(struct utrace_tracepoint *tp, utrace_probe_fn fn,
		      void *data)
{
	struct utrace_tracepoint_func *old, *neu = NULL;
	size_t i, j, n;
	int ret = 0;

	if (!tp || !fn)
		return -EINVAL;
	pthread_mutex_lock(&tp_mutex);
	old = tp->funcs;
	n = nr_funcs(old);
	for (i = 0; i < n; i++)
		if (old[i].func == fn && old[i].data == data)
			break;
	if (i == n) {
		ret = -ENOENT;
		goto out;
	}
	if (n > 1) {
		neu = alloc_funcs(n);
		if (!neu) {
			ret = -ENOMEM;
			goto out;
		}
		for (i = 0, j = 0; i < n; i++)
			if (!(old[i].func == fn && old[i].data == data))
				neu[j++] = old[i];
		set_fast(tp, neu, n - 1);
	} else {
		set_fast(tp, NULL, 0);
		__atomic_store_n(&tp->enabled, 0, __ATOMIC_RELEASE);
		utrace__jump_changed();
	}
	__atomic_store_n(&tp->funcs, neu, __ATOMIC_RELEASE);
	if (n == 1 && tp->unregfunc) {
		tp_calling = tp;
		tp->unregfunc();
		tp_calling = NULL;
	}
	defer_free(old);
out:
	pthread_mutex_unlock(&tp_mutex);
	return ret;
}

void tracepoint_synchronize_unregister(void)
{
	utrace__jump_sync();
	if (read_ongoing())
		return; /* would wait for itself; see the comment at the top */
	synchronize();
	utrace__tp_reap();
}

int utrace_tracepoint_probe_register(struct utrace_tracepoint *tp,
				     utrace_probe_fn fn, void *data)
{
	int ret = utrace__tp_add(tp, fn, data);

	utrace__tp_reap();
	return ret;
}

int utrace_tracepoint_probe_unregister(struct utrace_tracepoint *tp,
				       utrace_probe_fn fn, void *data)
{
	int ret = utrace__tp_remove(tp, fn, data);

	utrace__tp_reap();
	return ret;
}

/* fork(): no writer may hold tp_mutex or urcu's locks across it. */
void utrace__tp_before_fork(void)
{
	pthread_mutex_lock(&tp_mutex);
	urcu_bp_before_fork();
}

void utrace__tp_after_fork(int child)
{
	if (child)
		urcu_bp_after_fork_child();
	else
		urcu_bp_after_fork_parent();
	pthread_mutex_unlock(&tp_mutex);
}

/*
 * An event's filter, run on its record before the commit.  The agent
 * replaces ev->filter and frees the old program after a grace period, so
 * the program is used only inside a read-side section.
 */
bool utrace__filter_run(const struct utrace_event *ev, const void *rec,
			unsigned int size, const struct utrace__filter_ctx *ctx)
{
	return utrace__filter_run_at(&ev->filter, rec, size, ctx);
}

/* The same, with the program at '*fp' (an instance's filter). */
bool utrace__filter_run_at(void *const *fp, const void *rec, unsigned int size,
			   const struct utrace__filter_ctx *ctx)
{
	const struct utrace__filter *f;
	bool pass = true;

	read_lock();
	f = rcu_dereference(*fp);
	if (f)
		pass = utrace__filter_match(f, rec, size, ctx);
	read_unlock();
	return pass;
}
