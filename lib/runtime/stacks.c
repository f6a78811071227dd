/* SPDX-License-Identifier: MIT */
/*
 * Call stacks of every event (stacks.h says what and why).
 *
 * The walk.  fp: from this function's frame pointer, each frame's saved
 * frame pointer and return address, read only when the frame lies inside
 * the thread's stack (between the walk's own stack pointer and the top of
 * the thread's stack, 8-byte aligned, each frame above the one before), so
 * a corrupt chain or code without frame pointers ends the walk early
 * instead of faulting; no call, no lock, no allocation: safe in a signal
 * handler.  libutrace is built with frame pointers so that its own frames
 * keep the chain.  The top of the stack is the main thread's
 * __libc_stack_end (rounded up to its page) or, for other threads, what
 * pthread_getattr_np() says, asked once per thread (outside the walk,
 * when the thread's first stack is taken).  A handler running on an
 * alternate signal stack (sigaltstack()) walks that stack only: between it
 * and the thread's stack may lie unmapped memory.  dwarf: libunwind's local
 * unwinder (unw_step(), which reads .eh_frame; documented safe in a signal
 * handler for local cursors), the same bounds on the frames it yields.
 *
 * What is left out: the innermost frames (up to 24) that are in libutrace
 * or in an object's generated code (the functions
 * utrace_event_* and __traceiter_* of each object with events, found when
 * the object registers them), so the first frame is the traced call site.
 *
 * The table of distinct stacks: open addressing over a static array of
 * UTRACE__STACK_SLOTS 64-bit hashes; a stack's id is its slot + 1.  The
 * first thread to claim a slot (compare-and-swap, the hash with PENDING
 * set) writes the ftrace:stack record, then clears PENDING; a thread that
 * finds the slot pending writes the record too (a duplicate readers
 * take), so no stack_ref can come before its stack's record in time.
 * When the table is full, every new stack is written whole.
 *
 * The cost (bench/stacks.sh): the writer calls the capture at the
 * event's commit, the event still entered and whole at its page's tail
 * (writer.c: stack_in_page()); a stack already in the table only gives
 * its id back, and the writer puts the 16-byte stack_ref right after the
 * event in the same page: no second reserve, no stash, no copy.  The fp
 * walk hashes as it goes (one pass, walk_fp_kept() with every value in a
 * register), and libutrace's own leading frames are told by one range
 * compare before the per-thread cache.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef UTRACE_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#include "event.h"
#include "instance.h"
#include "internal.h"
#include "rundir.h"
#include "stacks.h"
#include "symbols.h"
#include "writer.h"

#define UTRACE__STACK_SLOTS 8192
#define PENDING (1ull << 63)
#define SKIP_FRAMES 24

extern void *__libc_stack_end;

static struct {
	bool on;
	bool dwarf;
	uintptr_t size;
	unsigned int frames;
} conf;

/* the table: 0 empty, else hash | PENDING while its record is written */
static uint64_t slots[UTRACE__STACK_SLOTS];

/* the frames left out: libutrace's, then each object's generated code;
 * published by nr_skip (release), only ever appended to */
#define SKIP_MAX 256
static uintptr_t skip_lo[SKIP_MAX], skip_hi[SKIP_MAX];
static unsigned int nr_skip;
static pthread_mutex_t skip_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread uintptr_t stack_top, stack_lo;

static const struct utrace_event_field def_fields[] = {
	{ "unsigned int", "id", 8, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned int", "nr", 12, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long", "caller", 16, 0, 0, UTRACE_FIELD_FLEX, 0 },
};
static const struct utrace_event_field ref_fields[] = {
	{ "unsigned int", "id", 8, 4, 0, UTRACE_FIELD_PLAIN, 0 },
};

static const struct utrace_event_field *def_fields_fn(unsigned int *nr)
{
	*nr = sizeof(def_fields) / sizeof(def_fields[0]);
	return def_fields;
}

static const struct utrace_event_field *ref_fields_fn(unsigned int *nr)
{
	*nr = sizeof(ref_fields) / sizeof(ref_fields[0]);
	return ref_fields;
}

static void def_output(struct utrace_seq *s, const void *rec)
{
	uint32_t id, nr;

	memcpy(&id, (const char *)rec + 8, 4);
	memcpy(&nr, (const char *)rec + 12, 4);
	utrace_seq_printf(s, "id=%u nr=%u", id, nr);
}

static void ref_output(struct utrace_seq *s, const void *rec)
{
	uint32_t id;

	memcpy(&id, (const char *)rec + 8, 4);
	utrace_seq_printf(s, "id=%u", id);
}

static const struct utrace_event_class def_class = { "ftrace", def_fields_fn, 16, NULL };
static const struct utrace_event_class ref_class = { "ftrace", ref_fields_fn, 12, NULL };
static struct utrace_tracepoint def_tp = { .name = "stack" };
static struct utrace_tracepoint ref_tp = { .name = "stack_ref" };
static const char *const def_fmt[2] = { "\"id=%u nr=%u\"", "REC->id, REC->nr" };
static const char *const ref_fmt[2] = { "\"id=%u\"", "REC->id" };
static struct utrace_event def_event = {
	.name = "stack", .cls = &def_class, .tp = &def_tp, .output = def_output,
	.print = def_fmt,
};
static struct utrace_event ref_event = {
	.name = "stack_ref", .cls = &ref_class, .tp = &ref_tp, .output = ref_output,
	.print = ref_fmt,
};
static struct utrace_event *const stack_events[] = { &def_event, &ref_event };

static void add_skip(uintptr_t lo, uintptr_t hi)
{
	unsigned int n = __atomic_load_n(&nr_skip, __ATOMIC_RELAXED), i;

	for (i = 0; i < n; i++)
		if (skip_lo[i] == lo && skip_hi[i] == hi)
			return;
	if (n == SKIP_MAX)
		return;
	skip_lo[n] = lo;
	skip_hi[n] = hi;
	__atomic_store_n(&nr_skip, n + 1, __ATOMIC_RELEASE);
}

/* The generated code of the object holding addr (an event's probe). */
static void add_object(uintptr_t addr)
{
	static const char *const generated[] = { "utrace_event_", "__traceiter_", NULL };
	uintptr_t lo[32], hi[32];
	unsigned int n, i;

	n = utrace__sym_ranges(addr, generated, lo, hi, 32);
	pthread_mutex_lock(&skip_lock);
	for (i = 0; i < n; i++)
		add_skip(lo[i], hi[i]);
	pthread_mutex_unlock(&skip_lock);
}

static int add_event_object(struct utrace_event *ev, void *arg)
{
	(void)arg;
	if (ev->cls && ev->cls->probe)
		add_object((uintptr_t)ev->cls->probe);
	return 0;
}

static void skip_libutrace_once(void)
{
	uintptr_t lo, hi;

	if (utrace__sym_object_extent((uintptr_t)&skip_libutrace_once, &lo, &hi) == 0) {
		pthread_mutex_lock(&skip_lock);
		add_skip(lo, hi);
		pthread_mutex_unlock(&skip_lock);
	}
}

void utrace__stacks_skip_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, skip_libutrace_once);
	/* the objects registered so far (a dlopen()ed one comes again) */
	utrace__registry_foreach(add_event_object, NULL);
}

static void register_once(void)
{
	utrace__registry_add_builtin(stack_events, stack_events + 2);
}

void utrace__stacks_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (!__atomic_load_n(&conf.on, __ATOMIC_ACQUIRE))
		return;
	pthread_once(&once, register_once);
	utrace__stacks_skip_init();
}

/* MODE[,SIZE[,FRAMES]] read: 0, or -EINVAL (dwarf without libunwind
 * too). */
static int parse_spec(const char *v, bool *dwarf, uintptr_t *sz, unsigned int *fr)
{
	unsigned long size = 8192, frames = 64;
	char *end;

	if (!strncmp(v, "fp", 2)) {
		*dwarf = false;
		v += 2;
	} else if (!strncmp(v, "dwarf", 5)) {
		*dwarf = true;
		v += 5;
	} else {
		return -EINVAL;
	}
	if (*v == ',') {
		size = strtoul(v + 1, &end, 0);
		v = end;
		if (*v == ',') {
			frames = strtoul(v + 1, &end, 0);
			v = end;
		}
	}
	if (*v || !size || !frames || frames > UTRACE__STACK_FRAMES_MAX)
		return -EINVAL;
#ifndef UTRACE_HAVE_LIBUNWIND
	if (*dwarf)
		return -EINVAL;
#endif
	*sz = size;
	*fr = (unsigned int)frames;
	return 0;
}

int utrace__stacks_init(void)
{
	const char *v = utrace__getenv("UTRACE_STACKS");

	if (!v || !*v)
		return 0;
	if (parse_spec(v, &conf.dwarf, &conf.size, &conf.frames) < 0)
		return -EINVAL;
	conf.on = true;
	return 1;
}

/* Switched on by utrace__stacks_set() (not by UTRACE_STACKS at the start). */
static bool set_at_run;

int utrace__stacks_set(const char *spec)
{
	bool dwarf;
	uintptr_t size;
	unsigned int frames;

	if (parse_spec(spec, &dwarf, &size, &frames) < 0)
		return -EINVAL;
	if (__atomic_load_n(&conf.on, __ATOMIC_ACQUIRE))
		return dwarf == conf.dwarf && size == conf.size && frames == conf.frames ?
		       0 : -EBUSY;
	/* off: no writer reads conf (a late one finds conf.on false first) */
	conf.dwarf = dwarf;
	conf.size = size;
	conf.frames = frames;
	__atomic_store_n(&conf.on, true, __ATOMIC_RELEASE);
	set_at_run = true;
	/* ftrace:stack and stack_ref (their formats go to the recorder),
	 * the frames to leave out; then every event takes the capture */
	utrace__stacks_register();
	utrace__writer_set_stack_capture(utrace__stacks_capture);
	utrace__fast_update();
	return 1;
}

void utrace__stacks_unset(void)
{
	if (!set_at_run)
		return;
	set_at_run = false;
	utrace__writer_set_stack_capture(NULL);
	utrace__fast_update();
	__atomic_store_n(&conf.on, false, __ATOMIC_RELEASE);
}

void utrace__stacks_after_fork(void)
{
	memset(slots, 0, sizeof(slots));
}

void utrace__stacks_forget(void)
{
	/* (threads may be claiming slots meanwhile: one whose claim is
	 * wiped has written its stack's record all the same) */
	for (size_t i = 0; i < UTRACE__STACK_SLOTS; i++)
		__atomic_store_n(&slots[i], 0, __ATOMIC_RELAXED);
}

/* The thread's answers for the return addresses it met last (the leading
 * frames are the same few from event to event): direct-mapped, cleared
 * when a range is added.  A signal handler that lands in an update finds
 * the slot empty (ip 0 is stored first), never a wrong answer. */
#define SKIP_CACHE 64
static __thread struct {
	uintptr_t ip[SKIP_CACHE];
	uint64_t yes;
	unsigned int gen;
} skip_cache;

static bool skipped(uintptr_t ip)
{
	unsigned int n = __atomic_load_n(&nr_skip, __ATOMIC_ACQUIRE), i;
	unsigned int h = (unsigned int)((ip ^ (ip >> 6)) & (SKIP_CACHE - 1));
	bool r = false;

	/* (libutrace's extent, the first range: most leading frames) */
	if (n && ip - 1 - skip_lo[0] < skip_hi[0] - skip_lo[0])
		return true;
	if (__builtin_expect(skip_cache.gen != n, 0)) {
		memset(skip_cache.ip, 0, sizeof(skip_cache.ip));
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		skip_cache.gen = n;
	}
	if (skip_cache.ip[h] == ip)
		return (skip_cache.yes >> h) & 1;
	/* a return address: the call is the byte before */
	for (i = 0; i < n && !r; i++)
		r = ip - 1 - skip_lo[i] < skip_hi[i] - skip_lo[i];
	skip_cache.ip[h] = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (r)
		skip_cache.yes |= 1ull << h;
	else
		skip_cache.yes &= ~(1ull << h);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	skip_cache.ip[h] = ip;
	return r;
}

/* The top of the calling thread's stack (0: unknown), and its bottom in
 * stack_lo (0: unknown, the main thread's unlimited stack). */
static uintptr_t thread_stack_top(void)
{
	pthread_attr_t a;
	struct rlimit rl;
	void *addr;
	size_t size;

	if (stack_top)
		return stack_top;
	if (getpid() == utrace__gettid()) {
		stack_top = ((uintptr_t)__libc_stack_end + 4095) & ~(uintptr_t)4095;
		if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur < stack_top)
			stack_lo = stack_top - (uintptr_t)rl.rlim_cur;
	} else if (pthread_getattr_np(pthread_self(), &a) == 0) {
		if (pthread_attr_getstack(&a, &addr, &size) == 0) {
			stack_top = (uintptr_t)addr + size;
			stack_lo = (uintptr_t)addr;
		}
		pthread_attr_destroy(&a);
	}
	return stack_top;
}

/* Keep ip unless it is in the leading frames left out (the first frame
 * kept ends them: a libutrace frame further out is code a signal handler
 * interrupted, which stays); false: full. */
static bool keep(uintptr_t *ips, unsigned int max, unsigned int *n, unsigned int *seen,
		 uintptr_t ip)
{
	if (!*n && *seen < SKIP_FRAMES && skipped(ip)) {
		(*seen)++;
		return true;
	}
	(*seen)++;
	ips[(*n)++] = ip;
	return *n < max;
}

/* The top of the stack sp is on (the thread's, or the alternate signal
 * stack a handler runs on); 0: none known. */
static inline __attribute__((always_inline)) uintptr_t top_of(uintptr_t sp)
{
	uintptr_t top = thread_stack_top();

	if (top && (sp < stack_lo || sp >= top)) {
		/* a handler on an alternate signal stack: only its frames
		 * (what lies between it and the thread's stack may be unmapped) */
		stack_t ss;

		if (sigaltstack(NULL, &ss) < 0 || !(ss.ss_flags & SS_ONSTACK) ||
		    sp < (uintptr_t)ss.ss_sp || sp >= (uintptr_t)ss.ss_sp + ss.ss_size)
			return 0;
		top = (uintptr_t)ss.ss_sp + ss.ss_size;
	}
	return top;
}

#define HASH_SEED 0xcbf29ce484222325ull
#define HASH_MUL 0x100000001b3ull

/* The end of the hash of a stack: the low bits (the slot) depend on every
 * bit of every frame; never 0 or with PENDING set. */
static inline uint64_t hash_end(uint64_t h)
{
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	h &= ~PENDING;
	return h ? h : 1;
}

/*
 * The fp walk of the capture, from the frame at sp (the caller's own),
 * hashing the frames kept as it goes (*hp): the leading frames left out
 * first, then, from the call site's, each frame read only when it is
 * 8-byte aligned, above the one before, below the top of the stack and
 * at most size bytes above the call site's, its return address not 0 and
 * not on the stack.  (utrace__stack_walk()'s fp walk, in one pass.)
 */
/* walk_fp()'s frames kept, into ips up to *endp (set to after the last
 * kept): the first (fp, its ip) checked already.  The hash of the ips
 * (not ended).  Apart, so that the loop has every value in a register. */
static __attribute__((noinline)) uint64_t walk_fp_kept(uintptr_t *ips, uintptr_t **endp,
						       uintptr_t fp, uintptr_t ip, uintptr_t sp,
						       uintptr_t hi, uintptr_t span)
{
	uintptr_t *end = *endp, next;
	uint64_t h = HASH_SEED;

	for (;;) {
		next = ((const uintptr_t *)fp)[0];
		*ips++ = ip;
		h = (h ^ (uint64_t)ip) * HASH_MUL;
		if (ips == end || next <= fp || next > hi || (next & 7))
			break;
		fp = next;
		ip = ((const uintptr_t *)fp)[1];
		if (!ip || ip - sp < span)
			break;
	}
	*endp = ips;
	return h;
}

static inline __attribute__((always_inline)) unsigned int
walk_fp(uintptr_t *ips, unsigned int max, uintptr_t size, uintptr_t sp, uintptr_t top,
	uint64_t *hp)
{
	uintptr_t fp = sp, hi = top - 16, next, ip;
	uintptr_t lo0 = skip_lo[0], len0 = skip_hi[0] - skip_lo[0];
	uintptr_t *end = ips + max;
	unsigned int seen = 0;

	/* (top > sp >= 16: hi does not wrap; fp only grows) */
	if (!__atomic_load_n(&nr_skip, __ATOMIC_ACQUIRE))
		len0 = 0;
	for (;;) {
		if (fp > hi || (fp & 7))
			goto none;
		next = ((const uintptr_t *)fp)[0];
		ip = ((const uintptr_t *)fp)[1];
		if (!ip || ip - sp < top - sp)
			goto none;
		/* (libutrace's own frames: the first range, no call) */
		if (seen++ >= SKIP_FRAMES || (ip - 1 - lo0 >= len0 && !skipped(ip)))
			break;
		if (next <= fp)
			goto none;
		fp = next;
	}
	if (size < hi - fp)
		hi = fp + size;
	*hp = hash_end(walk_fp_kept(ips, &end, fp, ip, sp, hi, top - sp));
	return (unsigned int)(end - ips);
none:
	*hp = hash_end(HASH_SEED);
	return 0;
}

__attribute__((noinline)) unsigned int utrace__stack_walk(uintptr_t *ips, unsigned int max,
							  bool dwarf, uintptr_t size)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t top = top_of(sp), base = 0;
	unsigned int n = 0, seen = 0;

	if (!top)
		return 0;
	if (!dwarf) {
		uintptr_t fp = sp;

		while (fp >= sp && fp + 16 <= top && !(fp & 7)) {
			const uintptr_t *f = (const uintptr_t *)fp;
			uintptr_t next = f[0], ip = f[1];

			/* (size: from the first frame kept, the call site's) */
			if (n && fp - base > size)
				break;
			/* (a return address on the stack itself: garbage, as
			 * rbp of code without frame pointers gives) */
			if (!ip || (ip >= sp && ip < top) || !keep(ips, max, &n, &seen, ip))
				break;
			if (n == 1)
				base = fp;
			if (next <= fp)
				break;
			fp = next;
		}
		return n;
	}
#ifdef UTRACE_HAVE_LIBUNWIND
	{
		unw_context_t uc;
		unw_cursor_t cur;

		if (unw_getcontext(&uc) < 0 || unw_init_local(&cur, &uc) < 0)
			return 0;
		while (unw_step(&cur) > 0) {
			unw_word_t ip, csp;

			if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip ||
			    unw_get_reg(&cur, UNW_REG_SP, &csp) < 0 || csp < sp || csp >= top ||
			    (n && csp - base > size))
				break;
			if (!keep(ips, max, &n, &seen, (uintptr_t)ip))
				break;
			if (n == 1)
				base = csp;
		}
	}
#endif
	return n;
}

/* FNV-1a over the addresses (64-bit words), as walk_fp() hashes. */
static uint64_t hash_of(const uintptr_t *ips, unsigned int n)
{
	uint64_t h = HASH_SEED;
	unsigned int i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint64_t)ips[i]) * HASH_MUL;
	return hash_end(h);
}

static void put_def(uint32_t id, const uintptr_t *ips, unsigned int n)
{
	unsigned char scratch[UTRACE_EVENT_MAX];
	struct utrace_tp_reserve r;
	unsigned char *rec;
	uint32_t nr = n;

	rec = utrace_tp_reserve(&r, &def_event, scratch, 16 + 8 * n);
	if (!rec)
		return;
	memcpy(rec + 8, &id, 4);
	memcpy(rec + 12, &nr, 4);
	memcpy(rec + 16, ips, 8 * n);
	utrace_tp_commit(&r);
}

static void put_ref(uint32_t id)
{
	unsigned char scratch[64];
	struct utrace_tp_reserve r;
	unsigned char *rec;

	rec = utrace_tp_reserve(&r, &ref_event, scratch, 12);
	if (!rec)
		return;
	memcpy(rec + 8, &id, 4);
	utrace_tp_commit(&r);
}

uint32_t utrace__stacks_capture(const struct utrace_event *ev, const struct utrace_event **ref)
{
	uintptr_t ips[UTRACE__STACK_FRAMES_MAX];
	unsigned int n, i;
	uint64_t h;

	if (!__atomic_load_n(&conf.on, __ATOMIC_ACQUIRE) || ev == &def_event ||
	    ev == &ref_event)
		return 0;
	if (!conf.dwarf) {
		uintptr_t sp = (uintptr_t)__builtin_frame_address(0), top = top_of(sp);

		if (!top)
			h = hash_end(HASH_SEED), n = 0;
		else
			n = walk_fp(ips, conf.frames, conf.size, sp, top, &h);
	} else {
		n = utrace__stack_walk(ips, conf.frames, true, conf.size);
		h = hash_of(ips, n);
	}
	for (i = 0; i < 64; i++) {
		uint32_t slot = (uint32_t)((h + i) & (UTRACE__STACK_SLOTS - 1));
		uint64_t cur = __atomic_load_n(&slots[slot], __ATOMIC_ACQUIRE), want = 0;

		if (cur == h) {
			if (ref) {
				*ref = &ref_event;
				return slot + 1;
			}
			put_ref(slot + 1);
			return 0;
		}
		if (cur == (h | PENDING)) {
			put_def(slot + 1, ips, n);
			return 0;
		}
		if (cur)
			continue;
		if (__atomic_compare_exchange_n(&slots[slot], &want, h | PENDING, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			put_def(slot + 1, ips, n);
			__atomic_store_n(&slots[slot], h, __ATOMIC_RELEASE);
			return 0;
		}
		if (want == h || want == (h | PENDING)) {
			put_def(slot + 1, ips, n);
			return 0;
		}
	}
	/* full around here: the stack whole, under an id no slot has */
	put_def(0, ips, n);
	return 0;
}
