// SPDX-License-Identifier: MIT
/*
 * The function and function_graph tracers, for programs and libraries
 * built the kernel's way (issue 31; design-notes "Issue 31: function
 * tracers").
 *
 * Sites.  -fpatchable-function-entry=5 leaves five NOPs at each function's
 * entry (gcc: five 1-byte NOPs; clang: one 5-byte NOP) and lists them in
 * __patchable_function_entries; -pg -mfentry -mnop-mcount -mrecord-mcount
 * leaves one 5-byte NOP listed in __mcount_loc.  Both sections are
 * allocated: after relocation they hold the sites' run-time addresses.
 * Each loaded object's sites are read once (dl_iterate_phdr, the file's
 * section headers with libelf), named by the symbol holding them.
 *
 * Patching.  A site being traced holds 'call stub', the stub (mapped near
 * the object) 'jmp *utrace__ftrace_caller'; a site not traced holds the
 * 5-byte NOP.  The writes are the jump labels' (lib/probe/textpatch.c):
 * int3s, membarrier(SYNC_CORE), tails, membarrier, first bytes.  NOP and
 * call are one instruction each, so no thread can be inside them; gcc's
 * five 1-byte NOPs are not, so their first rewrite waits until no thread
 * is past a sled's first byte (utrace__text_poke_sleds()).  A thread at a
 * transient int3 goes on after the site, untraced.
 *
 * The caller (the trampoline below) saves the argument registers, rax
 * (varargs' vector count), r10 (the static chain) and xmm0-7, and calls
 * on_entry(site, parent_ip, &return_address).
 *
 *   function:        one ftrace:function record { ip, parent_ip }.
 *   function_graph:  a per-thread return stack (mmap'd, 32768 entries,
 *                    grown into as used): { original return address,
 *                    function, calltime, where the return address is };
 *                    funcgraph_entry { func, depth } is recorded and the
 *                    return address replaced by utrace__ftrace_return,
 *                    which saves rax, rdx, xmm0, xmm1, calls on_return()
 *                    and jumps to the original address.
 *
 *   return stack      slot: where the function's return address lives
 *   +---------+
 *   | e[top-1]|  <- innermost (the lowest slot, normally)
 *   |  ...    |
 *   | e[0]    |  <- outermost
 *   +---------+
 *
 * longjmp, exceptions.  A frame left without returning leaves its entry
 * behind.  on_return() looks for its slot from the top down and drops
 * the entries above it (frames abandoned by a longjmp), recording their
 * exit then; on_entry() drops entries whose slot is below the new one's,
 * or at it unless that holds utrace__ftrace_return (they cannot be live
 * on the same stack), unless the thread runs on its signal stack.  A tail call (jmp to a traced function) pushes a second
 * entry for the same slot, whose return address is utrace__ftrace_return
 * itself: the return goes through both, innermost first.  The same slot reused after a longjmp is always
 * the top-most one with that address, so the right return address is
 * found.  Signal handlers nest on the same stack (lower slots) or on the
 * alternate stack (kept apart as said).  A thread exiting inside traced
 * functions (pthread_exit) leaves entries that are freed with the stack
 * at the thread's end; its unwinder stops at utrace__ftrace_return (no
 * unwind info: the end of the stack), where glibc's cancellation
 * continues anyway.  A C++ throw first puts the thread's return addresses
 * back (restore_for_unwind()).
 *
 * Recursion: a per-thread flag; a function entered while the thread is
 * inside the tracer (a signal handler) is not traced.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#include <utrace/tracepoint.h>

#include "clock.h"
#include "control.h"
#include "ctlproto.h"
#include "elfsyms.h"
#include "event.h"
#include "ftrace.h"
#include "internal.h"
#include "log.h"
#include "record.h"
#include "rundir.h"
#include "symbols.h"
#include "textpatch.h"

#define FG_ENTRIES 32768         /* return stack entries per thread */
#define FUNC_SIZE 24             /* struct ftrace_entry (args[] empty) */
#define GENT_SIZE 24             /* struct ftrace_graph_ent_entry */
#define GRET_SIZE 40             /* struct ftrace_graph_ret_entry */

/* ---- the events, with this kernel's formats (events/ftrace/) ---- */

static const struct utrace_event_field func_fields[] = {
	{ "unsigned long", "ip", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long", "parent_ip", 16, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long", "args", 24, 0, 0, UTRACE_FIELD_FLEX, 0 },
};
static const struct utrace_event_field gent_fields[] = {
	{ "unsigned long", "func", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned int", "depth", 16, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long", "args", 24, 0, 0, UTRACE_FIELD_FLEX, 0 },
};
static const struct utrace_event_field gret_fields[] = {
	{ "unsigned long", "func", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned int", "depth", 16, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned int", "overrun", 20, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long long", "calltime", 24, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long long", "rettime", 32, 8, 0, UTRACE_FIELD_PLAIN, 0 },
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

static const struct utrace_event_field *func_fields_fn(unsigned int *nr)
{
	*nr = NR(func_fields);
	return func_fields;
}

static const struct utrace_event_field *gent_fields_fn(unsigned int *nr)
{
	*nr = NR(gent_fields);
	return gent_fields;
}

static const struct utrace_event_field *gret_fields_fn(unsigned int *nr)
{
	*nr = NR(gret_fields);
	return gret_fields;
}

static const char *sym_name(uint64_t addr)
{
	const char *name;
	uint64_t start, size;

	return utrace__sym_lookup((uintptr_t)addr, &name, &start, &size) ? "?" : name;
}

static uint64_t rec_u64(const void *rec, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)rec + off, 8);
	return v;
}

static uint32_t rec_u32(const void *rec, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)rec + off, 4);
	return v;
}

/* UTRACE_PRINT's lines: the print fmt's */
static void func_output(struct utrace_seq *s, const void *rec)
{
	utrace_seq_printf(s, " %s <-- %s", sym_name(rec_u64(rec, 8)),
			  sym_name(rec_u64(rec, 16)));
}

static void gent_output(struct utrace_seq *s, const void *rec)
{
	utrace_seq_printf(s, "--> %s (%u)", sym_name(rec_u64(rec, 8)),
			  rec_u32(rec, 16));
}

static void gret_output(struct utrace_seq *s, const void *rec)
{
	utrace_seq_printf(s, "<-- %s (%u) (start: %llx  end: %llx) over: %u",
			  sym_name(rec_u64(rec, 8)), rec_u32(rec, 16),
			  (unsigned long long)rec_u64(rec, 24), (unsigned long long)rec_u64(rec, 32),
			  rec_u32(rec, 16));
}

static const struct utrace_event_class func_class = { "ftrace", func_fields_fn, FUNC_SIZE, NULL };
static const struct utrace_event_class gent_class = { "ftrace", gent_fields_fn, GENT_SIZE, NULL };
static const struct utrace_event_class gret_class = { "ftrace", gret_fields_fn, GRET_SIZE, NULL };

static struct utrace_tracepoint func_tp = { .name = "function" };
static struct utrace_tracepoint gent_tp = { .name = "funcgraph_entry" };
static struct utrace_tracepoint gret_tp = { .name = "funcgraph_exit" };

static const char *const func_fmt[2] = {
	"\" %ps <-- %ps\"", "(void *)REC->ip, (void *)REC->parent_ip" };
static const char *const gent_fmt[2] = { "\"--> %ps (%u)\"", "(void *)REC->func, REC->depth" };
static const char *const gret_fmt[2] = {
	"\"<-- %ps (%u) (start: %llx  end: %llx) over: %u\"",
	"(void *)REC->func, REC->depth, REC->calltime, REC->rettime, REC->depth" };

static struct utrace_event func_event = {
	.name = "function", .cls = &func_class, .tp = &func_tp, .output = func_output,
	.print = func_fmt,
};
static struct utrace_event gent_event = {
	.name = "funcgraph_entry", .cls = &gent_class, .tp = &gent_tp, .output = gent_output,
	.print = gent_fmt,
};
static struct utrace_event gret_event = {
	.name = "funcgraph_exit", .cls = &gret_class, .tp = &gret_tp, .output = gret_output,
	.print = gret_fmt,
};

static struct utrace_event *const ftrace_events[] = { &func_event, &gent_event, &gret_event };

/* ---- the trampolines ---- */

void utrace__ftrace_caller(void) UTRACE_HIDDEN;
void utrace__ftrace_return(void) UTRACE_HIDDEN;
void utrace__ftrace_on_entry(uintptr_t ip, uintptr_t parent, uintptr_t *slot) UTRACE_HIDDEN;
uintptr_t utrace__ftrace_on_return(uintptr_t *slot) UTRACE_HIDDEN;

/*
 * The stack is not always 16-byte aligned at a function's entry (gcc
 * leaves calls to functions it knows need less unaligned): both
 * trampolines align it themselves, %rbp keeping the frame.
 *   8(%rbp):  the return address into the function (the site + 5)
 *   16(%rbp): the function's own return address (parent_ip), the slot
 * On return (utrace__ftrace_return): %rsp is the slot + 8.
 */
__asm__(
	".text\n"
	".p2align 4\n"
	".globl utrace__ftrace_caller\n"
	".hidden utrace__ftrace_caller\n"
	".type utrace__ftrace_caller, @function\n"
	"utrace__ftrace_caller:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	pushq %rdx\n"
	"	pushq %rcx\n"
	"	pushq %r8\n"
	"	pushq %r9\n"
	"	pushq %rax\n"
	"	pushq %r10\n"
	"	andq $-16, %rsp\n"
	"	subq $128, %rsp\n"
	"	movdqu %xmm0, 0(%rsp)\n"
	"	movdqu %xmm1, 16(%rsp)\n"
	"	movdqu %xmm2, 32(%rsp)\n"
	"	movdqu %xmm3, 48(%rsp)\n"
	"	movdqu %xmm4, 64(%rsp)\n"
	"	movdqu %xmm5, 80(%rsp)\n"
	"	movdqu %xmm6, 96(%rsp)\n"
	"	movdqu %xmm7, 112(%rsp)\n"
	"	movq 8(%rbp), %rdi\n"
	"	subq $5, %rdi\n"
	"	movq 16(%rbp), %rsi\n"
	"	leaq 16(%rbp), %rdx\n"
	"	call utrace__ftrace_on_entry\n"
	"	movdqu 0(%rsp), %xmm0\n"
	"	movdqu 16(%rsp), %xmm1\n"
	"	movdqu 32(%rsp), %xmm2\n"
	"	movdqu 48(%rsp), %xmm3\n"
	"	movdqu 64(%rsp), %xmm4\n"
	"	movdqu 80(%rsp), %xmm5\n"
	"	movdqu 96(%rsp), %xmm6\n"
	"	movdqu 112(%rsp), %xmm7\n"
	"	leaq -64(%rbp), %rsp\n"
	"	popq %r10\n"
	"	popq %rax\n"
	"	popq %r9\n"
	"	popq %r8\n"
	"	popq %rcx\n"
	"	popq %rdx\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	popq %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size utrace__ftrace_caller, .-utrace__ftrace_caller\n"
	"\n"
	".p2align 4\n"
	".globl utrace__ftrace_return\n"
	".hidden utrace__ftrace_return\n"
	".type utrace__ftrace_return, @function\n"
	"utrace__ftrace_return:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	pushq %rax\n"
	"	pushq %rdx\n"
	"	andq $-16, %rsp\n"
	"	subq $32, %rsp\n"
	"	movdqu %xmm0, 0(%rsp)\n"
	"	movdqu %xmm1, 16(%rsp)\n"
	"	leaq 8(%rbp), %rdi\n"
	"	call utrace__ftrace_on_return\n"
	"	movq %rax, %r11\n"
	"	movdqu 0(%rsp), %xmm0\n"
	"	movdqu 16(%rsp), %xmm1\n"
	"	leaq -16(%rbp), %rsp\n"
	"	popq %rdx\n"
	"	popq %rax\n"
	"	popq %rbp\n"
	"	jmp *%r11\n"
	".size utrace__ftrace_return, .-utrace__ftrace_return\n"
	".previous\n");

/* ---- the per-thread state ---- */

struct prof_rec;

/* fg_ent.ext: an entry the profiler made too (or alone) */
enum { FG_EXT_REC = 1, FG_EXT_PROF = 2 };

struct fg_ent {
	uintptr_t ret;
	uintptr_t func;
	uintptr_t *slot;
	uint64_t calltime;
	struct prof_rec *prof;  /* the profiler's record of the call, or NULL */
	uint64_t subtime;       /* the profiler: its children's time (graph-time 0) */
	uint32_t root;          /* a set_graph_function function */
	uint32_t ext;           /* 0: the tracer's entry alone; else FG_EXT_* */
};

struct fg_stack {
	uint32_t top;
	uint32_t overrun;
	uint32_t roots;         /* entries with root set */
	struct fg_ent e[];
};

#define FG_DEAD ((struct fg_stack *)1)

static __thread struct fg_stack *fg_stk;
static __thread volatile int ft_busy;

static int tracer = UTRACE_TRACER_NOP;
static int graph_filtered;      /* set_graph_function is not empty */
static uint32_t max_depth;      /* 0: none */
static pthread_key_t fg_key;
static pthread_once_t fg_key_once = PTHREAD_ONCE_INIT;

/* set_graph_function's sites, sorted (replaced whole, never freed while
 * the tracer may read them: the old arrays are kept) */
static const uintptr_t *graph_sites;
static size_t nr_graph_sites;

static void fg_free(void *p)
{
	if (p && p != FG_DEAD)
		munmap(p, sizeof(struct fg_stack) + FG_ENTRIES * sizeof(struct fg_ent));
	/* functions still called after this (other keys' destructors) are
	 * not graph-traced */
	fg_stk = FG_DEAD;
}

static void fg_make_key(void)
{
	if (pthread_key_create(&fg_key, fg_free))
		fg_key = (pthread_key_t)-1;
}

static struct fg_stack *fg_get(void)
{
	struct fg_stack *s = fg_stk;

	if (__builtin_expect(s != NULL, 1))
		return s == FG_DEAD ? NULL : s;
	pthread_once(&fg_key_once, fg_make_key);
	if (fg_key == (pthread_key_t)-1)
		return NULL;
	s = mmap(NULL, sizeof(struct fg_stack) + FG_ENTRIES * sizeof(struct fg_ent),
		 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s == MAP_FAILED) {
		fg_stk = FG_DEAD;
		return NULL;
	}
	if (pthread_setspecific(fg_key, s)) {
		munmap(s, sizeof(struct fg_stack) + FG_ENTRIES * sizeof(struct fg_ent));
		fg_stk = FG_DEAD;
		return NULL;
	}
	fg_stk = s;
	return s;
}

static bool is_graph_site(uintptr_t ip)
{
	const uintptr_t *a = __atomic_load_n(&graph_sites, __ATOMIC_ACQUIRE);
	size_t lo = 0, hi = __atomic_load_n(&nr_graph_sites, __ATOMIC_ACQUIRE);

	while (a && lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] == ip)
			return true;
		if (a[mid] < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* ---- the function profiler (function_profile_enabled, trace_stat/) ----
 *
 * As the kernel's (kernel/trace/ftrace.c, "function profiler"): a table
 * per CPU of { function, hits, time, time squared }, a hit counted at the
 * entry on the CPU the thread runs on, the call's time (ns) at its return
 * added to the same record (the kernel adds it on the CPU of the return
 * when the function has a record there).  The tables are open-addressed
 * hashes of the sites' addresses (a slot taken with one compare-and-swap,
 * counts with atomic adds: threads on one CPU preempt each other), sized
 * for twice the sites known when the profiler starts; a full table drops
 * the hit, as the kernel's when its pages run out.  Starting the profiler
 * (0 to 1) empties them; stopping keeps them readable.  The entry and
 * return go through the function_graph return stack whatever the current
 * tracer, as the kernel's profiler is an fgraph_ops of its own.
 */
struct prof_rec {
	uintptr_t ip;
	uint64_t hits, time, time_sq;
};

static int profiling;                   /* function_profile_enabled */
/* What an entry does, in one word: the tracer | FT_MODE_PROF (the
 * profiler is on) | FT_MODE_PIDS (a pid list is not empty); kept by
 * mode_update() after each change of the three. */
enum { FT_MODE_PROF = 4, FT_MODE_PIDS = 8 };
static int ft_mode;
static int graph_time = 1;              /* options/graph-time */
/* The tables, with their size in the same mapping: a thread holding an
 * old one reads its own size (a new one replaces it whole). */
struct prof_tables {
	size_t mask;                    /* each CPU's table: mask + 1 records */
	unsigned int ncpu;
	struct prof_rec r[];
};
static struct prof_tables *prof_tab;
static uint64_t prof_mult;              /* clock ticks to ns: (t * mult) >> 32 */

static struct prof_rec *prof_hit(uintptr_t ip)
{
	struct prof_tables *pt = __atomic_load_n(&prof_tab, __ATOMIC_ACQUIRE);
	struct prof_rec *tab;
	size_t mask, h;
	uint32_t cpu = utrace__cpu();

	if (!pt)
		return NULL;
	mask = pt->mask;
	if (cpu >= pt->ncpu)
		cpu %= pt->ncpu;
	tab = pt->r + (size_t)cpu * (mask + 1);
	h = (size_t)(((uint64_t)ip * 0x9e3779b97f4a7c15ull) >> 20) & mask;
	for (size_t n = 0; n <= mask; n++, h = (h + 1) & mask) {
		struct prof_rec *r = &tab[h];
		uintptr_t cur = __atomic_load_n(&r->ip, __ATOMIC_RELAXED);

		if (!cur && !__atomic_compare_exchange_n(&r->ip, &cur, ip, false,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
		    cur != ip)
			continue;
		if (cur && cur != ip)
			continue;
		__atomic_fetch_add(&r->hits, 1, __ATOMIC_RELAXED);
		return r;
	}
	return NULL;
}

static void prof_time(struct prof_rec *r, uint64_t ticks)
{
	uint64_t ns = (uint64_t)(((unsigned __int128)ticks * prof_mult) >> 32);

	__atomic_fetch_add(&r->time, ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->time_sq, ns * ns, __ATOMIC_RELAXED);
}

/* ---- set_ftrace_pid, set_ftrace_notrace_pid ----
 *
 * Sorted thread ids, replaced whole (the old arrays kept: a thread may be
 * reading one), and a generation: each thread decides once per
 * generation whether its functions are traced (the kernel decides at each
 * sched_switch, ftrace_filter_pid_sched_switch_probe()).
 */
struct pid_set {
	const uint32_t *v;
	size_t n;
};
static struct pid_set *pid_sets[2];     /* set_ftrace_pid, set_ftrace_notrace_pid */
static unsigned int pid_gen;            /* 0: both empty */

static void mode_update(void)
{
	int m = __atomic_load_n(&tracer, __ATOMIC_RELAXED);

	if (__atomic_load_n(&profiling, __ATOMIC_RELAXED))
		m |= FT_MODE_PROF;
	if (__atomic_load_n(&pid_gen, __ATOMIC_RELAXED))
		m |= FT_MODE_PIDS;
	__atomic_store_n(&ft_mode, m, __ATOMIC_RELEASE);
}
static __thread unsigned int pid_seen_gen;
static __thread uint32_t pid_seen_tid;
static __thread bool pid_ignored;

static bool pid_in(const struct pid_set *p, uint32_t tid)
{
	size_t lo = 0, hi = p ? p->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->v[mid] == tid)
			return true;
		if (p->v[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The kernel's ftrace_ignore_pid: not in set_ftrace_pid (when it lists
 * any) or in set_ftrace_notrace_pid. */
static bool pid_ignore(void)
{
	unsigned int g = __atomic_load_n(&pid_gen, __ATOMIC_ACQUIRE);
	uint32_t tid;

	if (__builtin_expect(!g, 1))
		return false;
	/* (the thread id too: a child of fork() has its parent's cache) */
	tid = (uint32_t)utrace__gettid();
	if (g != pid_seen_gen || tid != pid_seen_tid) {
		const struct pid_set *in = __atomic_load_n(&pid_sets[0], __ATOMIC_ACQUIRE);
		const struct pid_set *out = __atomic_load_n(&pid_sets[1], __ATOMIC_ACQUIRE);

		pid_seen_tid = tid;
		pid_ignored = (in && in->n && !pid_in(in, tid)) || pid_in(out, tid);
		pid_seen_gen = g;
	}
	return pid_ignored;
}

/* ---- recording ----
 *
 * The usual record through the probes' inlined writer (tracepoint.h: the
 * thread's page, no call); anything else (no pool, tracing_on 0, a new
 * page, nesting, a print or record hook: NULL) through the library's
 * utrace_tp_reserve()/utrace_tp_commit().
 */
#ifdef UTRACE__INLINE_WRITER
#define RECORD_INLINE(ev, size, fill)						\
	do {									\
		struct utrace__fast f_;						\
		unsigned char *rec = utrace__reserve_inline(&f_, &(ev), (size));	\
										\
		if (__builtin_expect(rec != NULL, 1)) {				\
			fill;							\
			utrace__commit_event_inline(&f_, &(ev), rec, (size));	\
			return;							\
		}								\
		utrace__slow_enter();						\
	} while (0)
#else
#define RECORD_INLINE(ev, size, fill) do { } while (0)
#endif

static inline __attribute__((always_inline)) void record_function(uintptr_t ip,
								   uintptr_t parent)
{
	RECORD_INLINE(func_event, FUNC_SIZE, ({
		uint64_t a_ = ip, b_ = parent;

		memcpy(rec + 8, &a_, 8);
		memcpy(rec + 16, &b_, 8);
	}));
	unsigned char scratch[64];
	struct utrace_tp_reserve r;
	unsigned char *rec = utrace_tp_reserve(&r, &func_event, scratch, FUNC_SIZE);
	uint64_t a = ip, b = parent;

	if (!rec)
		return;
	memcpy(rec + 8, &a, 8);
	memcpy(rec + 16, &b, 8);
	utrace_tp_commit(&r);
}

static inline __attribute__((always_inline)) void record_gent(uintptr_t func, uint32_t depth)
{
	RECORD_INLINE(gent_event, GENT_SIZE, ({
		uint64_t f2_ = func;
		uint32_t z_ = 0;

		memcpy(rec + 8, &f2_, 8);
		memcpy(rec + 16, &depth, 4);
		memcpy(rec + 20, &z_, 4);
	}));
	unsigned char scratch[64];
	struct utrace_tp_reserve r;
	unsigned char *rec = utrace_tp_reserve(&r, &gent_event, scratch, GENT_SIZE);
	uint64_t f = func;
	uint32_t zero = 0;

	if (!rec)
		return;
	memcpy(rec + 8, &f, 8);
	memcpy(rec + 16, &depth, 4);
	memcpy(rec + 20, &zero, 4);
	utrace_tp_commit(&r);
}

static void record_gret(const struct fg_ent *e, uint32_t depth, uint32_t overrun, uint64_t now)
{
	RECORD_INLINE(gret_event, GRET_SIZE, ({
		uint64_t f2_ = e->func;

		memcpy(rec + 8, &f2_, 8);
		memcpy(rec + 16, &depth, 4);
		memcpy(rec + 20, &overrun, 4);
		memcpy(rec + 24, &e->calltime, 8);
		memcpy(rec + 32, &now, 8);
	}));
	unsigned char scratch[64];
	struct utrace_tp_reserve r;
	unsigned char *rec = utrace_tp_reserve(&r, &gret_event, scratch, GRET_SIZE);
	uint64_t f = e->func;

	if (!rec)
		return;
	memcpy(rec + 8, &f, 8);
	memcpy(rec + 16, &depth, 4);
	memcpy(rec + 20, &overrun, 4);
	memcpy(rec + 24, &e->calltime, 8);
	memcpy(rec + 32, &now, 8);
	utrace_tp_commit(&r);
}

static bool on_altstack(void)
{
	stack_t ss;

	return !sigaltstack(NULL, &ss) && (ss.ss_flags & SS_ONSTACK);
}

/* The exit of an entry the profiler made: its record if the tracer
 * recorded the entry too, its time to the profiler. */
static __attribute__((noinline)) void fg_exit_ext(struct fg_stack *s, struct fg_ent *e,
						  uint32_t depth, uint64_t now)
{
	if (e->ext & FG_EXT_REC)
		record_gret(e, depth, s->overrun, now);
	if (e->prof) {
		uint64_t t = now - e->calltime;

		/* graph-time 0: the function's own time, its children's
		 * taken out (profile_graph_return()) */
		if (!__atomic_load_n(&graph_time, __ATOMIC_RELAXED)) {
			if (depth)
				s->e[depth - 1].subtime += t;
			t = e->subtime < t ? t - e->subtime : 0;
		}
		prof_time(e->prof, t);
	}
}

/* The exit of entry @e at @depth. */
static inline __attribute__((always_inline)) void
fg_exit(struct fg_stack *s, struct fg_ent *e, uint32_t depth, uint64_t now)
{
	if (__builtin_expect(!e->ext, 1))
		record_gret(e, depth, s->overrun, now);
	else
		fg_exit_ext(s, e, depth, now);
}

/* Entries from @from up are of frames that are gone: their exits, now. */
static void fg_drop(struct fg_stack *s, uint32_t from)
{
	uint64_t now = utrace__clock_now();

	while (s->top > from) {
		struct fg_ent *e = &s->e[s->top - 1];

		fg_exit(s, e, s->top - 1, now);
		if (e->root)
			s->roots--;
		s->top--;
	}
}

/* Frames left by a longjmp: an older entry below this slot, or at it
 * when the slot holds a real return address (at it with
 * utrace__ftrace_return there is the tail call's caller: live). */
static inline __attribute__((always_inline)) void fg_unwound(struct fg_stack *s,
							     uintptr_t *slot)
{
	uintptr_t lim = (uintptr_t)slot + (*slot != (uintptr_t)utrace__ftrace_return);

	if (s->top && (uintptr_t)s->e[s->top - 1].slot < lim && !on_altstack()) {
		uint32_t k = s->top;

		while (k && (uintptr_t)s->e[k - 1].slot < lim)
			k--;
		fg_drop(s, k);
	}
}

/* function_graph alone. */
static void graph_entry(uintptr_t ip, uintptr_t *slot)
{
	struct fg_stack *s = fg_get();
	uint32_t root = 0, depth, md;
	struct fg_ent *e;

	if (!s)
		return;
	fg_unwound(s, slot);
	if (__atomic_load_n(&graph_filtered, __ATOMIC_RELAXED) && !s->roots) {
		if (!is_graph_site(ip))
			return;
		root = 1;
	}
	depth = s->top;
	md = __atomic_load_n(&max_depth, __ATOMIC_RELAXED);
	if (md && depth >= md)
		return;
	if (depth >= FG_ENTRIES) {
		s->overrun++;
		return;
	}
	e = &s->e[depth];
	e->ret = *slot;
	e->func = ip;
	e->slot = slot;
	e->root = root;
	e->ext = 0;
	record_gent(ip, depth);
	e->calltime = utrace__clock_now();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->roots += root;
	s->top = depth + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = (uintptr_t)utrace__ftrace_return;
}

/* The profiler, with function_graph (@graph) or without. */
static __attribute__((noinline)) void graph_entry_ext(uintptr_t ip, uintptr_t *slot, bool graph)
{
	struct fg_stack *s = fg_get();
	uint32_t root = 0, depth, md;
	struct fg_ent *e;

	if (!s)
		return;
	fg_unwound(s, slot);
	depth = s->top;
	if (graph) {
		if (__atomic_load_n(&graph_filtered, __ATOMIC_RELAXED) && !s->roots) {
			if (!is_graph_site(ip))
				graph = false;
			else
				root = 1;
		}
		md = __atomic_load_n(&max_depth, __ATOMIC_RELAXED);
		if (md && depth >= md)
			graph = false, root = 0;
	}
	if (depth >= FG_ENTRIES) {
		s->overrun++;
		return;
	}
	e = &s->e[depth];
	e->ret = *slot;
	e->func = ip;
	e->slot = slot;
	e->root = root;
	e->ext = FG_EXT_PROF | (graph ? FG_EXT_REC : 0);
	e->subtime = 0;
	e->prof = prof_hit(ip);
	if (graph)
		record_gent(ip, depth);
	e->calltime = utrace__clock_now();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->roots += root;
	s->top = depth + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	*slot = (uintptr_t)utrace__ftrace_return;
}

void utrace__ftrace_on_entry(uintptr_t ip, uintptr_t parent, uintptr_t *slot)
{
	int m;

	if (ft_busy)
		return;
	ft_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	m = __atomic_load_n(&ft_mode, __ATOMIC_RELAXED);
	if (__builtin_expect(m & FT_MODE_PIDS, 0)) {
		if (pid_ignore())
			goto out;
		m &= ~FT_MODE_PIDS;
	}
	if (m == UTRACE_TRACER_FUNCTION) {
		record_function(ip, parent);
	} else if (m == UTRACE_TRACER_GRAPH) {
		graph_entry(ip, slot);
	} else if (m & FT_MODE_PROF) {
		if ((m & 3) == UTRACE_TRACER_FUNCTION)
			record_function(ip, parent);
		graph_entry_ext(ip, slot, (m & 3) == UTRACE_TRACER_GRAPH);
	}
out:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ft_busy = 0;
}

/* No entry for a hooked frame: a bug, and no address to go on at. */
static __attribute__((noreturn)) void lost_return(uintptr_t *slot)
{
	utrace__warn("function_graph: no return address for the frame at %p", (void *)slot);
	abort();
}

uintptr_t utrace__ftrace_on_return(uintptr_t *sp)
{
	uintptr_t *slot = sp - 1;
	struct fg_stack *s = fg_stk;
	int busy = ft_busy;
	uint32_t k;
	uintptr_t ret;

	if (!s || s == FG_DEAD)
		lost_return(slot);
	ft_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (k = s->top; k && s->e[k - 1].slot != slot; k--)
		;
	if (!k)
		lost_return(slot);
	if (!busy && k < s->top)
		fg_drop(s, k);
	s->top = k;
	ret = s->e[k - 1].ret;
	if (!busy)
		fg_exit(s, &s->e[k - 1], k - 1, utrace__clock_now());
	if (s->e[k - 1].root)
		s->roots--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	s->top = k - 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ft_busy = busy;
	return ret;
}

/* ---- C++ exceptions ----
 *
 * The unwinder reads return addresses off the stack: at a hooked frame it
 * finds utrace__ftrace_return, which has no unwind info, and ends the
 * search (std::terminate()).  So before it starts, the thread's hooked
 * frames get their return addresses back and their entries are popped,
 * their exits recorded now (uftrace's mcount_rstack_restore(); the frames
 * the catch keeps are not traced to their end).  libutrace interposes
 * libgcc's two entry points that start a search from a throw: weak, so
 * that a program linking a static libgcc_eh keeps its own.
 */
static void restore_for_unwind(void)
{
	struct fg_stack *s = fg_stk;
	int busy = ft_busy;
	uint64_t now;

	if (!s || s == FG_DEAD || !s->top)
		return;
	ft_busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	now = utrace__clock_now();
	while (s->top) {
		struct fg_ent *e = &s->e[s->top - 1];

		if (*e->slot == (uintptr_t)utrace__ftrace_return)
			*e->slot = e->ret;
		if (!busy)
			fg_exit(s, e, s->top - 1, now);
		s->top--;
	}
	s->roots = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ft_busy = busy;
}

typedef _Unwind_Reason_Code (*unwind_fn)(struct _Unwind_Exception *);

static unwind_fn real_unwind(const char *name, unwind_fn *cache)
{
	unwind_fn f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!f) {
		f = (unwind_fn)dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

__attribute__((weak, visibility("default"))) _Unwind_Reason_Code
_Unwind_RaiseException(struct _Unwind_Exception *exc)
{
	static unwind_fn real;
	unwind_fn f = real_unwind("_Unwind_RaiseException", &real);

	restore_for_unwind();
	return f ? f(exc) : _URC_FATAL_PHASE1_ERROR;
}

__attribute__((weak, visibility("default"))) _Unwind_Reason_Code
_Unwind_Resume_or_Rethrow(struct _Unwind_Exception *exc)
{
	static unwind_fn real;
	unwind_fn f = real_unwind("_Unwind_Resume_or_Rethrow", &real);

	restore_for_unwind();
	return f ? f(exc) : _URC_FATAL_PHASE1_ERROR;
}

/* Whose _Unwind_RaiseException the program calls: a libgcc_s ahead of
 * libutrace (a program linked with both, libgcc_s first) keeps its own,
 * and a throw through a hooked frame would end the program: said once. */
static void check_unwind(void)
{
	static bool told;
	void *f = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
	Dl_info di;

	if (told || !f || !dladdr(f, &di) || !di.dli_fname || strstr(di.dli_fname, "libutrace"))
		return;
	told = true;
	utrace__warn("function_graph: C++ exceptions go through %s, ahead of libutrace: a "
		     "throw through a traced function would end the program (preload "
		     "libutrace, or trace C++ with function)", di.dli_fname);
}

/* ---- the sites ---- */

enum { ST_SLED, ST_NOP, ST_CALL, ST_FOREIGN };

struct site {
	uintptr_t addr;
	const char *name;       /* in the object's symbol strings */
	uint8_t state;
	bool want;
};

struct object {
	struct object *next;
	char *path;             /* "" for the program */
	const char *module;     /* its base name, for [module] */
	uintptr_t bias;
	uintptr_t stub;
	struct site *sites;
	size_t n;               /* 0: an object without sites, kept not to read it again */
	struct utrace__symtab syms;
	bool seen;              /* in the last dl_iterate_phdr() */
};

static pthread_mutex_t ft_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct object *objects;

/* the lists, as written */
struct glob_list {
	char **g;
	size_t n;
};
static struct glob_list lists[3];       /* filter, notrace, graph */

static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static uint8_t site_state(uintptr_t a)
{
	const uint8_t *b = (const uint8_t *)a;

	if (!memcmp(b, "\x90\x90\x90\x90\x90", 5))
		return ST_SLED;
	if (b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0x00)
		return ST_NOP;
	return ST_FOREIGN;
}

/* Add the addresses an allocated section holds (as relocated). */
static int add_section(struct object *o, uintptr_t at, size_t bytes, size_t *cap)
{
	size_t k = bytes / 8;

	for (size_t i = 0; i < k; i++) {
		uintptr_t a;

		memcpy(&a, (const void *)(at + i * 8), 8);
		if (!a)
			continue;
		if (o->n == *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			struct site *ns = realloc(o->sites, nc * sizeof(*ns));

			if (!ns)
				return -ENOMEM;
			o->sites = ns;
			*cap = nc;
		}
		o->sites[o->n].addr = a;
		o->sites[o->n].name = NULL;
		o->sites[o->n].want = false;
		o->sites[o->n++].state = ST_FOREIGN;
	}
	return 0;
}

static int read_object(struct object *o, const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	size_t cap = 0, shstr;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return -errno;
	if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ, NULL)) ||
	    elf_getshdrstrndx(e, &shstr)) {
		close(fd);
		return -EINVAL;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e, shstr, sh.sh_name);
		if (!name || (strcmp(name, "__patchable_function_entries") &&
			      strcmp(name, "__mcount_loc")))
			continue;
		if (add_section(o, o->bias + sh.sh_addr, sh.sh_size, &cap)) {
			elf_end(e);
			close(fd);
			return -ENOMEM;
		}
	}
	elf_end(e);
	if (o->n && utrace__symtab_load(fd, &o->syms))
		memset(&o->syms, 0, sizeof(o->syms));
	close(fd);
	if (o->n)
		qsort(o->sites, o->n, sizeof(*o->sites), site_cmp);
	for (size_t i = 0; i < o->n; i++) {
		const struct utrace__sym *sym = utrace__symtab_find(&o->syms,
								   o->sites[i].addr - o->bias);

		o->sites[i].name = sym ? o->syms.strings + sym->name : NULL;
		/* gcc's constructors and destructors of its instrumentation
		 * (ASan's, coverage's): not the program's functions */
		if (o->sites[i].name && (!strncmp(o->sites[i].name, "_sub_I_", 7) ||
					 !strncmp(o->sites[i].name, "_sub_D_", 7)))
			o->sites[i].name = NULL;
		o->sites[i].state = site_state(o->sites[i].addr);
	}
	return 0;
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "";
	struct object *o;

	(void)size;
	(void)data;
	if (strstr(name, "linux-vdso") || strstr(name, "libutrace.so"))
		return 0;
	for (o = objects; o; o = o->next)
		if (o->bias == info->dlpi_addr && !strcmp(o->path, name)) {
			o->seen = true;
			return 0;
		}
	o = calloc(1, sizeof(*o));
	if (!o)
		return 0;
	o->path = strdup(name);
	o->bias = info->dlpi_addr;
	if (!o->path) {
		free(o);
		return 0;
	}
	if (read_object(o, name[0] ? name : "/proc/self/exe") || !o->n) {
		free(o->sites);
		o->sites = NULL;
		o->n = 0;
		utrace__symtab_free(&o->syms);
	}
	o->module = strrchr(o->path, '/') ? strrchr(o->path, '/') + 1 : o->path;
	o->seen = true;
	/* (at the end: the program first, the libraries in load order) */
	{
		struct object **pp = &objects;

		while (*pp)
			pp = &(*pp)->next;
		*pp = o;
	}
	return 0;
}

/*
 * The loaded objects, again: a library dlopen()ed since is read (its
 * sites NOPs until the next write of a tracer's file), one dlclose()d is
 * forgotten, so that nothing is written where it was.  Under ft_mutex.
 * (A dlclose() racing with a write of the files is not covered.)
 */
static void scan(void)
{
	struct object **pp, *o;

	for (o = objects; o; o = o->next)
		o->seen = false;
	dl_iterate_phdr(scan_one, NULL);
	for (pp = &objects; (o = *pp);) {
		if (o->seen) {
			pp = &o->next;
			continue;
		}
		*pp = o->next;
		free(o->sites);
		utrace__symtab_free(&o->syms);
		free(o->path);
		free(o);
	}
}

/* ---- the lists ---- */

static bool match_list(const struct glob_list *l, const char *name, const char *module)
{
	bool in = false;

	for (size_t i = 0; i < l->n; i++) {
		const char *g = l->g[i];
		bool neg = g[0] == '!';
		const char *mod = strstr(g, ":mod:");
		char pat[256];

		if (neg)
			g++;
		snprintf(pat, sizeof(pat), "%.*s", mod ? (int)(mod - g) : (int)strlen(g), g);
		if (mod && (!module || fnmatch(mod + 5, module, 0)))
			continue;
		if (!fnmatch(pat, name, 0))
			in = !neg;
	}
	return in;
}

/* Whether a list has any entry that is not a '!' one. */
static bool list_selects(const struct glob_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->g[i][0] != '!')
			return true;
	return false;
}

static const char *site_module(const struct object *o)
{
	return o->path[0] ? o->module : NULL;
}

/* A tracer or the profiler is on. */
static bool sites_on(void)
{
	return __atomic_load_n(&tracer, __ATOMIC_RELAXED) != UTRACE_TRACER_NOP ||
	       __atomic_load_n(&profiling, __ATOMIC_RELAXED);
}

/* Under ft_mutex: which sites the tracer wants. */
static void decide(void)
{
	bool on = __atomic_load_n(&tracer, __ATOMIC_RELAXED) != UTRACE_TRACER_NOP ||
		  __atomic_load_n(&profiling, __ATOMIC_RELAXED);
	bool sel = list_selects(&lists[0]);

	for (struct object *o = objects; o; o = o->next)
		for (size_t i = 0; i < o->n; i++) {
			struct site *s = &o->sites[i];
			const char *n = s->name;

			s->want = on && n && (!sel || match_list(&lists[0], n, site_module(o))) &&
				  !match_list(&lists[1], n, site_module(o));
		}
}

/* Under ft_mutex: the graph functions' sites. */
static void graph_update(void)
{
	/* each array's first word is the one before it: the old ones stay
	 * (a thread may be reading one), reachable from here */
	static uintptr_t *arrays;
	size_t n = 0, k = 0;
	uintptr_t *a, *base;

	if (!list_selects(&lists[2])) {
		__atomic_store_n(&graph_filtered, 0, __ATOMIC_RELEASE);
		return;
	}
	for (struct object *o = objects; o; o = o->next)
		for (size_t i = 0; i < o->n; i++)
			n += o->sites[i].name &&
			     match_list(&lists[2], o->sites[i].name, site_module(o));
	base = malloc((n + 1) * sizeof(*base));
	if (!base)
		return;
	base[0] = (uintptr_t)arrays;
	arrays = base;
	a = base + 1;
	for (struct object *o = objects; o; o = o->next)
		for (size_t i = 0; i < o->n; i++)
			if (o->sites[i].name &&
			    match_list(&lists[2], o->sites[i].name, site_module(o)))
				a[k++] = o->sites[i].addr;
	for (size_t i = 1; i < k; i++)         /* objects are apart: merge sort */
		for (size_t j = i; j && a[j - 1] > a[j]; j--) {
			uintptr_t t = a[j];

			a[j] = a[j - 1];
			a[j - 1] = t;
		}
	/* the old array stays: a thread may be reading it (a few per run) */
	__atomic_store_n(&nr_graph_sites, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&graph_sites, a, __ATOMIC_RELEASE);
	__atomic_store_n(&nr_graph_sites, k, __ATOMIC_RELEASE);
	__atomic_store_n(&graph_filtered, 1, __ATOMIC_RELEASE);
}

/* ---- patching ---- */

static uintptr_t skip_site(void *arg, ucontext_t *uc)
{
	(void)arg;
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1 + 5;
}

static const struct utrace__int3_hook skip_hook = { skip_site, NULL };

static int patch_mode = -1;     /* -1 not decided, 0 cannot, 1 can */

static bool can_patch(void)
{
	char why[160];
	const char *e = utrace__getenv("UTRACE_NO_JUMP_LABEL");
	const char *pre = getenv("LD_PRELOAD");

	if (patch_mode < 0) {
		patch_mode = 1;
		if ((e && *e && strcmp(e, "0")) ||
		    (!(e && !strcmp(e, "0")) && pre && strstr(pre, "vgpreload"))) {
			utrace__warn("function tracer: the code cannot be rewritten here "
				     "(UTRACE_NO_JUMP_LABEL, or valgrind without "
				     "UTRACE_NO_JUMP_LABEL=0 and --smc-check=all)");
			patch_mode = 0;
		}
	}
	if (patch_mode == 1) {
		utrace__text_lock();
		if (utrace__text_init(why, sizeof(why))) {
			utrace__warn("function tracer: %s", why);
			patch_mode = 0;
		}
		utrace__text_unlock();
	}
	return patch_mode == 1;
}

/* The object's stub: jmp *utrace__ftrace_caller, within reach. */
static int make_stub(struct object *o)
{
	uint8_t code[14] = { 0xff, 0x25, 0, 0, 0, 0 };
	uintptr_t to = (uintptr_t)utrace__ftrace_caller;
	void *p;

	if (o->stub)
		return 0;
	p = utrace__text_alloc_near(o->sites[0].addr, sizeof(code));
	if (!p)
		return -ENOMEM;
	memcpy(code + 6, &to, 8);
	if (utrace__text_write((uintptr_t)p, code, sizeof(code)))
		return -EPERM;
	o->stub = (uintptr_t)p;
	return 0;
}

struct batch {
	struct utrace__poke *p;
	struct site **s;
	uint8_t *to;
	size_t n;
};

static void fill(struct batch *b, struct object *o, struct site *s, uint8_t to)
{
	struct utrace__poke *p = &b->p[b->n];

	memset(p, 0, sizeof(*p));
	p->addr = s->addr;
	p->len = 5;
	if (to == ST_CALL) {
		int32_t rel = (int32_t)((intptr_t)o->stub - (intptr_t)(s->addr + 5));

		p->bytes[0] = 0xe8;
		memcpy(p->bytes + 1, &rel, 4);
	} else {
		memcpy(p->bytes, nop5, 5);
	}
	b->s[b->n] = s;
	b->to[b->n++] = to;
}

/* Under ft_mutex: the sites to what decide() said.  0 or -errno. */
static int sync_sites(void)
{
	size_t total = 0;
	struct batch sled = { 0 }, one = { 0 };
	char why[160];
	int r = 0;

	for (struct object *o = objects; o; o = o->next)
		total += o->n;
	if (!total)
		return 0;
	if (!can_patch())
		return -EPERM;
	sled.p = calloc(total, sizeof(*sled.p));
	sled.s = calloc(total, sizeof(*sled.s));
	sled.to = calloc(total, 1);
	one.p = calloc(total, sizeof(*one.p));
	one.s = calloc(total, sizeof(*one.s));
	one.to = calloc(total, 1);
	if (!sled.p || !sled.s || !sled.to || !one.p || !one.s || !one.to) {
		r = -ENOMEM;
		goto out;
	}
	for (struct object *o = objects; o; o = o->next) {
		bool any = false;

		for (size_t i = 0; i < o->n; i++)
			any |= o->sites[i].want && o->sites[i].state != ST_CALL &&
			       o->sites[i].state != ST_FOREIGN;
		if (any && make_stub(o)) {
			utrace__warn("function tracer: no room for a trampoline near %s",
				     o->path[0] ? o->path : "the program");
			continue;
		}
		for (size_t i = 0; i < o->n; i++) {
			struct site *s = &o->sites[i];

			if (s->state == ST_FOREIGN)
				continue;
			if (s->want && s->state != ST_CALL)
				fill(s->state == ST_SLED ? &sled : &one, o, s, ST_CALL);
			else if (!s->want && s->state == ST_CALL)
				fill(&one, o, s, ST_NOP);
		}
	}
	utrace__text_lock();
	if (one.n)
		r = utrace__text_poke_many(one.p, one.n, &skip_hook, why, sizeof(why));
	if (!r)
		for (size_t k = 0; k < one.n; k++)
			one.s[k]->state = one.to[k];
	if (!r && sled.n) {
		/* objects in list order, each sorted: sort the whole batch */
		for (size_t i = 1; i < sled.n; i++)
			for (size_t j = i; j && sled.p[j - 1].addr > sled.p[j].addr; j--) {
				struct utrace__poke t = sled.p[j];
				struct site *ts = sled.s[j];

				sled.p[j] = sled.p[j - 1];
				sled.s[j] = sled.s[j - 1];
				sled.p[j - 1] = t;
				sled.s[j - 1] = ts;
			}
		r = utrace__text_poke_sleds(sled.p, sled.n, &skip_hook, why, sizeof(why));
		if (!r)
			for (size_t k = 0; k < sled.n; k++)
				sled.s[k]->state = ST_CALL;
	}
	utrace__text_unlock();
	if (r)
		utrace__warn("function tracer: %s", why);
out:
	free(sled.p);
	free(sled.s);
	free(sled.to);
	free(one.p);
	free(one.s);
	free(one.to);
	return r;
}

/* ---- the interface ---- */

static void register_events_once(void)
{
	utrace__registry_add_builtin(ftrace_events, ftrace_events + NR(ftrace_events));
}

static void register_events(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_events_once);
}

static const char *const tracer_names[] = { "nop", "function", "function_graph" };

const char *utrace__ftrace_tracer_name(void)
{
	return tracer_names[__atomic_load_n(&tracer, __ATOMIC_RELAXED)];
}

int utrace__ftrace_set_tracer(const char *name)
{
	size_t len;
	int t = -1, old, r;

	while (*name == ' ' || *name == '\t' || *name == '\n')
		name++;
	len = strlen(name);
	while (len && (name[len - 1] == ' ' || name[len - 1] == '\t' || name[len - 1] == '\n'))
		len--;
	for (int i = 0; i < (int)NR(tracer_names); i++)
		if (strlen(tracer_names[i]) == len && !strncmp(name, tracer_names[i], len))
			t = i;
	if (t < 0)
		return -EINVAL;
	register_events();
	/* as an event switched on: a buffer if no recorder gave one */
	if (t != UTRACE_TRACER_NOP)
		utrace__pool_ensure();
	pthread_mutex_lock(&ft_mutex);
	scan();
	old = __atomic_load_n(&tracer, __ATOMIC_RELAXED);
	if (old != UTRACE_TRACER_NOP && t != UTRACE_TRACER_NOP && old != t) {
		/* the kernel goes through nop: the sites off first, so that no
		 * hijacked return meets the function tracer's mode */
		__atomic_store_n(&tracer, UTRACE_TRACER_NOP, __ATOMIC_RELEASE);
		mode_update();
	}
	/* the graph's returns still come after it is off: entries are
	 * popped whatever the mode (on_return()) */
	if (t == UTRACE_TRACER_GRAPH)
		check_unwind();
	__atomic_store_n(&tracer, t, __ATOMIC_RELEASE);
	mode_update();
	graph_update();
	decide();
	r = sync_sites();
	pthread_mutex_unlock(&ft_mutex);
	return r;
}

static void list_free(struct glob_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->g[i]);
	free(l->g);
	l->g = NULL;
	l->n = 0;
}

/* Does the glob match any function?  (under ft_mutex) */
static bool glob_matches(const char *g)
{
	struct glob_list one = { (char **)&g, 1 };
	const char *neg = g[0] == '!' ? g + 1 : NULL;

	if (neg) {
		struct glob_list pos = { (char **)&neg, 1 };

		one = pos;
	}
	for (struct object *o = objects; o; o = o->next)
		for (size_t i = 0; i < o->n; i++)
			if (o->sites[i].name && match_list(&one, o->sites[i].name, site_module(o)))
				return true;
	return false;
}

int utrace__ftrace_set_list(int which, const char *text, int append)
{
	struct glob_list nl = { 0 };
	char *copy, *tok, *save;
	int r = 0;

	if (which < 0 || which > 2)
		return -EINVAL;
	copy = strdup(text);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&ft_mutex);
	scan();
	if (append) {
		for (size_t i = 0; i < lists[which].n; i++) {
			char **g = realloc(nl.g, (nl.n + 1) * sizeof(*g));

			if (!g || !(g[nl.n] = strdup(lists[which].g[i]))) {
				nl.g = g ? g : nl.g;
				r = -ENOMEM;
				goto out;
			}
			nl.g = g;
			nl.n++;
		}
	}
	for (tok = strtok_r(copy, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
		char **g;

		if (!glob_matches(tok)) {
			r = -EINVAL;
			goto out;
		}
		g = realloc(nl.g, (nl.n + 1) * sizeof(*g));
		if (!g || !(g[nl.n] = strdup(tok))) {
			nl.g = g ? g : nl.g;
			r = -ENOMEM;
			goto out;
		}
		nl.g = g;
		nl.n++;
	}
	list_free(&lists[which]);
	lists[which] = nl;
	nl.g = NULL;
	nl.n = 0;
	graph_update();
	decide();
	if (sites_on())
		r = sync_sites();
out:
	list_free(&nl);
	pthread_mutex_unlock(&ft_mutex);
	free(copy);
	return r;
}

char *utrace__ftrace_available(size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	pthread_mutex_lock(&ft_mutex);
	scan();
	/* the program first, then the libraries in load order */
	for (int pass = 0; pass < 2; pass++)
		for (struct object *o = objects; o; o = o->next) {
			if ((pass == 0) != !o->path[0])
				continue;
			for (size_t i = 0; i < o->n; i++) {
				if (!o->sites[i].name)
					continue;
				if (o->path[0])
					fprintf(f, "%s [%s]\n", o->sites[i].name, o->module);
				else
					fprintf(f, "%s\n", o->sites[i].name);
			}
		}
	pthread_mutex_unlock(&ft_mutex);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int profile_set(bool on);

void utrace__ftrace_from_env(void)
{
	static const char *const names[3] = {
		"UTRACE_FTRACE_FILTER", "UTRACE_FTRACE_NOTRACE", "UTRACE_GRAPH_FUNCTION" };
	const char *t = utrace__getenv("UTRACE_TRACER");
	const char *d = utrace__getenv("UTRACE_MAX_GRAPH_DEPTH");
	const char *pr = utrace__getenv("UTRACE_FUNCTION_PROFILE");
	int r;

	if (pr && !strcmp(pr, "1")) {
		/* function_profile_enabled from the start (bench/ftrace.sh) */
		pthread_mutex_lock(&ft_mutex);
		r = profile_set(true);
		pthread_mutex_unlock(&ft_mutex);
		if (r && r != -EPERM && r != -EBUSY && r != -ENOSPC)
			utrace__warn("UTRACE_FUNCTION_PROFILE: %s", strerror(-r));
	}
	if (!t || !*t)
		return;
	if (d && *d) {
		char *end;
		unsigned long v = strtoul(d, &end, 10);

		if (*end || v > 0xffffffffUL)
			utrace__warn("UTRACE_MAX_GRAPH_DEPTH: '%s' is not a depth", d);
		else
			__atomic_store_n(&max_depth, (uint32_t)v, __ATOMIC_RELAXED);
	}
	for (int i = 0; i < 3; i++) {
		const char *v = utrace__getenv(names[i]);

		if (v && *v && (r = utrace__ftrace_set_list(i, v, 0)))
			utrace__warn("%s: '%s': %s", names[i], v,
				     r == -EINVAL ? "a glob matches no traceable function" :
				     strerror(-r));
	}
	r = utrace__ftrace_set_tracer(t);
	if (r == -EINVAL) {
		utrace__warn("UTRACE_TRACER: '%s' is not a tracer (nop, function, function_graph)",
			     t);
		return;
	}
	if (strcmp(t, "nop")) {
		size_t n = 0;

		pthread_mutex_lock(&ft_mutex);
		for (struct object *o = objects; o; o = o->next)
			n += o->n;
		pthread_mutex_unlock(&ft_mutex);
		if (!n)
			utrace__warn("UTRACE_TRACER: no function to trace: build with "
				     "-fpatchable-function-entry=5 (or -pg -mfentry -mnop-mcount "
				     "-mrecord-mcount)");
	}
}

/* ---- the control tree's files ---- */

/* A list's file: the names it selects, as the kernel lists its hash;
 * the "all functions" line where an empty list means every one. */
static char *list_text(int which)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	bool any = false;

	if (!f)
		return NULL;
	pthread_mutex_lock(&ft_mutex);
	scan();
	if (list_selects(&lists[which]))
		for (struct object *o = objects; o; o = o->next)
			for (size_t i = 0; i < o->n; i++)
				if (o->sites[i].name &&
				    match_list(&lists[which], o->sites[i].name, site_module(o))) {
					fprintf(f, "%s\n", o->sites[i].name);
					any = true;
				}
	pthread_mutex_unlock(&ft_mutex);
	if (!any && which != 1)
		fputs("#### all functions enabled ####\n", f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* enabled_functions: the sites that are calls now */
static char *enabled_text(void)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	pthread_mutex_lock(&ft_mutex);
	for (struct object *o = objects; o; o = o->next)
		for (size_t i = 0; i < o->n; i++)
			if (o->sites[i].state == ST_CALL && o->sites[i].name)
				fprintf(f, "%s (1)\n", o->sites[i].name);
	pthread_mutex_unlock(&ft_mutex);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int clear_list(int which)
{
	pthread_mutex_lock(&ft_mutex);
	list_free(&lists[which]);
	graph_update();
	decide();
	if (sites_on())
		sync_sites();
	pthread_mutex_unlock(&ft_mutex);
	return 0;
}

/* ---- the profiler's files ---- */

/* Clock ticks to ns, measured over 10 ms (the agent's thread waits). */
static uint64_t measure_mult(void)
{
	uint64_t t0, n0, t1, n1;
	struct timespec d = { 0, 10 * 1000 * 1000 };

	if (!utrace__clock_tsc)
		return 1ull << 32;
	t0 = utrace__clock_now();
	n0 = utrace__mono_ns();
	nanosleep(&d, NULL);
	t1 = utrace__clock_now();
	n1 = utrace__mono_ns();
	if (t1 <= t0 || n1 <= n0)
		return 1ull << 32;
	return (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
}

static unsigned int nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (unsigned int)n : 1;
}

/*
 * ftrace_profile_write(): 0 or 1 (any other number is 1, as !!val); the
 * same value again changes nothing; 0 to 1 empties the tables
 * (ftrace_profile_init() resets them).  Under ft_mutex.
 */
static int profile_set(bool on)
{
	if (on == (bool)__atomic_load_n(&profiling, __ATOMIC_RELAXED))
		return 0;
	if (on) {
		size_t total = 0, want = 1024;
		struct prof_tables *pt = prof_tab;

		scan();
		for (struct object *o = objects; o; o = o->next)
			total += o->n;
		while (want < 2 * total)
			want *= 2;
		if (!prof_mult)
			prof_mult = measure_mult();
		if (!pt || want > pt->mask + 1) {
			/* (a smaller one is kept: a thread may still be in it) */
			unsigned int n = nr_cpus();

			pt = mmap(NULL, sizeof(*pt) + (size_t)n * want * sizeof(pt->r[0]),
				  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				  -1, 0);
			if (pt == MAP_FAILED)
				return -ENOMEM;
			pt->mask = want - 1;
			pt->ncpu = n;
			__atomic_store_n(&prof_tab, pt, __ATOMIC_RELEASE);
		} else {
			/* zero pages again, not touched: a big table of many
			 * CPUs costs no memory for the CPUs that count
			 * nothing (the header's page is kept) */
			uintptr_t from = ((uintptr_t)pt->r + 4095) & ~(uintptr_t)4095;
			uintptr_t end = (uintptr_t)(pt->r + (size_t)pt->ncpu * (pt->mask + 1));

			if (from > end)
				from = end;
			memset(pt->r, 0, from - (uintptr_t)pt->r);
			if (madvise((void *)from, end - from, MADV_DONTNEED))
				memset((void *)from, 0, end - from);
		}
		check_unwind();
	}
	__atomic_store_n(&profiling, on, __ATOMIC_RELEASE);
	mode_update();
	decide();
	return sync_sites();
}

static int prof_cmp(const void *a, const void *b)
{
	const struct prof_rec *x = *(const struct prof_rec *const *)a;
	const struct prof_rec *y = *(const struct prof_rec *const *)b;

	/* function_stat_cmp(): by time, the largest first */
	if (x->time != y->time)
		return x->time < y->time ? 1 : -1;
	if (x->hits != y->hits)
		return x->hits < y->hits ? 1 : -1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

/* trace_print_graph_duration(): µs with up to 7 digits, " us ", padded */
static void print_duration(FILE *f, uint64_t ns)
{
	char us[24];
	int len = snprintf(us, sizeof(us), "%" PRIu64, ns / 1000);

	fputs(us, f);
	if (len < 7) {
		char frac[8];

		snprintf(frac, sizeof(frac), "%03u", (unsigned int)(ns % 1000));
		frac[8 - len - 1 < 3 ? 8 - len - 1 : 3] = '\0';
		fprintf(f, ".%s", frac);
		len += (int)strlen(frac) + 1;
	}
	fputs(" us ", f);
	for (; len < 8; len++)
		fputc(' ', f);
}

/* trace_stat/function<cpu>: function_stat_headers(), function_stat_show() */
static char *stat_text(unsigned int cpu)
{
	struct prof_tables *pt = __atomic_load_n(&prof_tab, __ATOMIC_ACQUIRE);
	struct prof_rec *tab, **v = NULL;
	size_t n = 0, size = pt ? pt->mask + 1 : 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs("  Function                               Hit    Time            Avg"
	      "             s^2\n"
	      "  --------                               ---    ----            ---"
	      "             ---\n", f);
	if (pt && cpu < pt->ncpu && (v = malloc(size * sizeof(*v)))) {
		tab = pt->r + (size_t)cpu * size;
		for (size_t i = 0; i < size; i++)
			if (__atomic_load_n(&tab[i].ip, __ATOMIC_RELAXED) &&
			    __atomic_load_n(&tab[i].hits, __ATOMIC_RELAXED))
				v[n++] = &tab[i];
		qsort(v, n, sizeof(*v), prof_cmp);
	}
	for (size_t i = 0; i < n; i++) {
		struct prof_rec r = *v[i];
		const char *name = sym_name(r.ip);
		uint64_t avg = r.time / r.hits, var = 0;
		unsigned __int128 den = (unsigned __int128)r.hits * (r.hits - 1) * 1000;

		/* s^2 = (n * Σx² - (Σx)²) / (n (n-1)), in µs² (the /1000
		 * here, print_duration()'s the other) */
		if (den) {
			unsigned __int128 a = (unsigned __int128)r.hits * r.time_sq;
			unsigned __int128 b = (unsigned __int128)r.time * r.time;

			var = a > b ? (uint64_t)((a - b) / den) : 0;
		}
		if (name)
			fprintf(f, "  %-30.30s  %10" PRIu64 "    ", name, r.hits);
		else
			fprintf(f, "  %-30lx  %10" PRIu64 "    ", (unsigned long)r.ip, r.hits);
		print_duration(f, r.time);
		fputs("    ", f);
		print_duration(f, avg);
		fputs("    ", f);
		print_duration(f, var);
		fputc('\n', f);
	}
	free(v);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- set_ftrace_pid, set_ftrace_notrace_pid ---- */

static uint32_t *pid_lists[2];
static size_t pid_nrs[2];

/* The lists as the hot path reads them (under ft_mutex); the old sets
 * stay, chained, as a thread may be reading one. */
static int pid_publish(int which, uint32_t *v, size_t n)
{
	static struct pid_set_keep { struct pid_set set; struct pid_set_keep *next; } *kept;
	struct pid_set_keep *k = calloc(1, sizeof(*k));

	if (!k) {
		free(v);
		return -ENOMEM;
	}
	/* (the arrays of old sets stay too) */
	k->set.v = v;
	k->set.n = n;
	k->next = kept;
	kept = k;
	pid_lists[which] = v;
	pid_nrs[which] = n;
	__atomic_store_n(&pid_sets[which], &k->set, __ATOMIC_RELEASE);
	{
		static unsigned int gens;
		unsigned int g = 0;

		if (pid_nrs[0] || pid_nrs[1])
			g = ++gens ? gens : ++gens;
		__atomic_store_n(&pid_gen, g, __ATOMIC_RELEASE);
		mode_update();
	}
	return 0;
}

/* fpid_show(): the ids, one a line; "no pid" for an empty list. */
static char *pid_text(int which)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	pthread_mutex_lock(&ft_mutex);
	if (!pid_nrs[which])
		fputs("no pid\n", f);
	for (size_t i = 0; i < pid_nrs[which]; i++)
		fprintf(f, "%u\n", pid_lists[which][i]);
	pthread_mutex_unlock(&ft_mutex);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* ftrace_pid_write(): trace_pid_write()'s parse, all or nothing; O_TRUNC
 * empties the list first (ftrace_pid_open()). */
static int pid_write(int which, int action, const char *pl, size_t plen)
{
	uint32_t *v = NULL;
	size_t n = 0, taken;
	int r = 0;

	pthread_mutex_lock(&ft_mutex);
	if (action == UTRACE_CTL_FT_CLEAR) {
		if (pid_nrs[which])
			r = pid_publish(which, NULL, 0);
	} else {
		r = utrace__pid_list_add(pid_lists[which], pid_nrs[which], pl ? pl : "", plen,
					 &v, &n, &taken);
		if (!r && v)
			r = pid_publish(which, v, n);
	}
	pthread_mutex_unlock(&ft_mutex);
	return r;
}

int utrace__ftrace_control(uint32_t file, int action, const char *pl, size_t plen,
			   char **text)
{
	char *w = NULL;
	int r = 0;

	*text = NULL;
	if ((file & UTRACE_CTL_FT_STAT_FUNCTION) && action == UTRACE_CTL_FT_READ) {
		pthread_mutex_lock(&ft_mutex);
		*text = stat_text(file & ~UTRACE_CTL_FT_STAT_FUNCTION);
		pthread_mutex_unlock(&ft_mutex);
		return *text ? 0 : -ENOMEM;
	}
	if (file >= UTRACE_CTL_FT_NR)
		return -EINVAL;
	if (file == UTRACE_CTL_FT_SET_PID || file == UTRACE_CTL_FT_NOTRACE_PID) {
		int which = file == UTRACE_CTL_FT_NOTRACE_PID;

		if (action != UTRACE_CTL_FT_READ)
			return pid_write(which, action, pl, plen);
		*text = pid_text(which);
		return *text ? 0 : -ENOMEM;
	}
	if (action == UTRACE_CTL_FT_READ) {
		size_t len;

		switch (file) {
		case UTRACE_CTL_FT_CURRENT_TRACER:
			r = asprintf(text, "%s\n", utrace__ftrace_tracer_name());
			break;
		case UTRACE_CTL_FT_AVAILABLE_TRACERS:
			r = asprintf(text, "function_graph function nop\n");
			break;
		case UTRACE_CTL_FT_AVAILABLE_FUNCS:
			*text = utrace__ftrace_available(&len);
			break;
		case UTRACE_CTL_FT_FILTER:
		case UTRACE_CTL_FT_NOTRACE:
		case UTRACE_CTL_FT_GRAPH_FUNCTION:
			*text = list_text((int)(file - UTRACE_CTL_FT_FILTER));
			break;
		case UTRACE_CTL_FT_MAX_GRAPH_DEPTH:
			r = asprintf(text, "%u\n", __atomic_load_n(&max_depth, __ATOMIC_RELAXED));
			break;
		case UTRACE_CTL_FT_ENABLED_FUNCS:
			*text = enabled_text();
			break;
		case UTRACE_CTL_FT_PROFILE_ENABLED:
			r = asprintf(text, "%d\n", __atomic_load_n(&profiling, __ATOMIC_RELAXED));
			break;
		case UTRACE_CTL_FT_GRAPH_TIME:
			r = asprintf(text, "%d\n", __atomic_load_n(&graph_time, __ATOMIC_RELAXED));
			break;
		}
		if (r < 0)
			*text = NULL;
		return *text ? 0 : -ENOMEM;
	}
	if (file == UTRACE_CTL_FT_FILTER || file == UTRACE_CTL_FT_NOTRACE ||
	    file == UTRACE_CTL_FT_GRAPH_FUNCTION) {
		if (action == UTRACE_CTL_FT_CLEAR)
			return clear_list((int)(file - UTRACE_CTL_FT_FILTER));
	} else if (action != UTRACE_CTL_FT_WRITE ||
		   (file != UTRACE_CTL_FT_CURRENT_TRACER && file != UTRACE_CTL_FT_MAX_GRAPH_DEPTH &&
		    file != UTRACE_CTL_FT_PROFILE_ENABLED && file != UTRACE_CTL_FT_GRAPH_TIME)) {
		return -EINVAL;
	}
	if (action != UTRACE_CTL_FT_WRITE)
		return -EINVAL;
	w = strndup(pl ? pl : "", plen);
	if (!w)
		return -ENOMEM;
	switch (file) {
	case UTRACE_CTL_FT_CURRENT_TRACER:
		r = utrace__ftrace_set_tracer(w);
		/* the code could not be written: the tracer is on, its sites
		 * as they were (said once) */
		if (r == -EPERM || r == -EBUSY || r == -ENOSPC)
			r = 0;
		break;
	case UTRACE_CTL_FT_PROFILE_ENABLED:
	case UTRACE_CTL_FT_GRAPH_TIME: {
		/* ftrace_profile_write(), graph-time's option file: a number
		 * (kstrtoul_from_user(), base 10), any but 0 is 1 */
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(w, &end, 10);
		if (*end == '\n')
			end++;
		if (end == w || *end || errno || w[0] == '-' || w[0] == ' ') {
			r = -EINVAL;
		} else if (file == UTRACE_CTL_FT_GRAPH_TIME) {
			/* the option file takes 0 and 1 only */
			if (v > 1)
				r = -EINVAL;
			else
				__atomic_store_n(&graph_time, (int)v, __ATOMIC_RELAXED);
		} else {
			pthread_mutex_lock(&ft_mutex);
			r = profile_set(v != 0);
			pthread_mutex_unlock(&ft_mutex);
			if (r == -EPERM || r == -EBUSY || r == -ENOSPC)
				r = 0;
		}
		break;
	}
	case UTRACE_CTL_FT_MAX_GRAPH_DEPTH: {
		char *end;
		unsigned long v = strtoul(w, &end, 10);

		while (*end == ' ' || *end == '\n' || *end == '\t')
			end++;
		if (end == w || *end || v > 0xffffffffUL)
			r = -EINVAL;
		else
			__atomic_store_n(&max_depth, (uint32_t)v, __ATOMIC_RELAXED);
		break;
	}
	default:
		/* an empty write adds nothing (echo > set_ftrace_filter) */
		r = utrace__ftrace_set_list((int)(file - UTRACE_CTL_FT_FILTER), w, 1);
		break;
	}
	free(w);
	return r;
}
