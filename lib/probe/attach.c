// SPDX-License-Identifier: MIT
/*
 * The in-process half of the probe engine: placing a probe (a jump to a
 * trampoline, or an int3), calling the handlers on each hit, removing it.
 * docs/design-notes.md, "Dynamic probes: the engine", has the layout of a
 * trampoline and the reasons; in short:
 *
 * - one record per probed address (struct probe_addr), never freed: a
 *   thread may still run its trampoline, its out-of-line copy or its
 *   SIGTRAP hook long after the probe went.  Attaching the same address
 *   again reuses the record's code when the bytes are the same, so the
 *   memory kept is bounded by the number of addresses ever probed;
 * - the probes of an address are a list read without locks by the hits;
 *   detach unlinks, then waits for the hits that may still see the probe
 *   (per-thread slots and membarrier, below), so that when it returns the
 *   handler is not running and its data may be freed;
 * - a hit on a thread already inside a handler is a miss; one on a thread
 *   doing utrace's own work (placing probes, the agent's thread) is
 *   skipped (utrace__probe_quiet_enter()).
 */
#include <cpuid.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* engine.h declares the engine's functions: internal to libutrace */
#pragma GCC visibility push(hidden)
#include "engine.h"
#pragma GCC visibility pop
#include "insn.h"
#include "probe-internal.h"
#include "targets.h"
#include "textpatch.h"

#define TRAMP_MAX 448
#define DISP_MAX 16

struct probe_addr {
	uintptr_t addr;			/* the probed instruction */
	uintptr_t patch_at;		/* where the jump or int3 is: addr,
					 * or before it (a ret's block) */
	uint8_t jump;			/* a jump (1) or an int3 (0) */
	uint8_t flags_dead;		/* the status flags are dead at addr:
					 * the trampoline restores DF only */
	uint8_t patch_len;		/* 5 or 1 */
	uint8_t disp_len;		/* bytes the out-of-line code stands for
					 * (from patch_at) */
	uint8_t pre_len;		/* of which before addr: relocated before
					 * the handler's call */
	uint8_t active;			/* the bytes are patched */
	uint8_t first_len;		/* the probed instruction's */
	_Atomic uint8_t pending;	/* a jump whose int3 is placed, the rest
					 * not yet (a thread was inside) */
	uint8_t orig[DISP_MAX];		/* the original disp_len bytes at patch_at */
	uintptr_t code;			/* trampoline (jump) or copy (int3) */
	uintptr_t resume;		/* where an int3 hit goes on */
	_Atomic uint8_t save_simd;	/* a probe wants the SIMD state saved */
	struct utrace__int3_hook hook;
	_Atomic(struct utrace__probe_site *) head;
	_Atomic uint64_t misses;		/* hits inside a handler */
	struct probe_addr *next;	/* every record, under the text lock */
	struct probe_addr *bnext;	/* in its bucket of by_at[] */
	uint64_t seq;			/* the newest record of an address wins */
	uint8_t batch;			/* placed by utrace__probe_attach_many()'s
					 * round under way (not patched yet) */
	_Atomic uint8_t detaching;	/* utrace__probe_detach_many() waits */
};

/*
 * Hits are counted per thread, with no locked instruction (a locked add
 * was a third of a hit's cost): the first HIT_SLOTS threads (by slot)
 * each own a counter on a cache line of its own; any other thread adds to
 * the shared one.  A slot changes owner only when its thread has died.
 */
#define HIT_SLOTS 64

struct utrace__probe_site {
	struct probe_addr *rec;
	_Atomic(struct utrace__probe_site *) next;
	utrace_probe_handler_fn fn;
	void *data;
	unsigned int flags;		/* UTRACE_PROBE_* */
	_Atomic uint64_t hits;		/* of the threads past HIT_SLOTS */
	uint64_t misses_before;		/* the record's misses at attach */
	struct {
		_Atomic uint64_t n;
		char pad[64 - sizeof(uint64_t)];
	} per_thread[HIT_SLOTS] __attribute__((aligned(64)));
};

static struct probe_addr *records;

/*
 * The records by where their patch is, for the lookups of a placement
 * (find_rec(), overlap(), original_bytes()), which walked every record:
 * 10,000 probes made placing quadratic.  A bucket holds the records of
 * some 16-byte granules of patch_at (a patch spans at most DISP_MAX = 16
 * bytes: the records whose bytes meet [lo, hi) are in the granules of
 * [lo - 16, hi)).  Under the text lock.
 */
#define BY_AT_BITS 14
static struct probe_addr *by_at[1u << BY_AT_BITS];
static uint64_t rec_seq;

static size_t at_bucket(uintptr_t granule)
{
	return (size_t)((granule * 0x9e3779b97f4a7c15ull) >> (64 - BY_AT_BITS));
}

static void index_rec(struct probe_addr *r)
{
	size_t b = at_bucket(r->patch_at >> 4);

	r->seq = ++rec_seq;
	r->bnext = by_at[b];
	by_at[b] = r;
}

/* Call fn for each record whose patch_at is in [lo, hi); stop at non-zero. */
#define FOR_RECS_AT(r, lo, hi)							\
	for (uintptr_t g_ = (lo) >> 4; g_ <= ((hi) - 1) >> 4; g_++)		\
		for (struct probe_addr *r = by_at[at_bucket(g_)]; r; r = r->bnext)	\
			if ((r->patch_at >> 4) == g_ && r->patch_at >= (lo) &&	\
			    r->patch_at < (hi))

/*
 * Which probe each thread is running, for detach: a slot per thread,
 * claimed on its first hit (an atomic exchange over a fixed array, safe
 * in a signal handler and with no SIMD), written with plain stores.  A
 * detach unlinks its probe, runs membarrier(PRIVATE_EXPEDITED) (a full
 * barrier on every thread of the process, so that a hit either published
 * its slot before it, or loads the list after it and misses the probe),
 * then waits while a live thread's slot names the record.  The hit path
 * has no locked instruction but the hit count.  The slot also tells that
 * the thread is inside a handler: a hit then is a miss.
 */
#define SLOTS 4096

struct hslot {
	_Atomic(struct probe_addr *) in;
	_Atomic pid_t tid;		/* 0: free */
	/* where the owner's hits are counted in a site: its per_thread
	 * counter, or 0 (past HIT_SLOTS: the shared one) */
	uint32_t hit_off;
	/* the owner's errno, saved around the handlers: its address is
	 * the thread's for its life (no __errno_location() call a hit) */
	int *err;
} __attribute__((aligned(32)));		/* (never across two cache lines) */

static struct hslot slots[SLOTS];

/* A slot's 'in' while its thread does utrace's own work
 * (utrace__probe_quiet_enter()): hits are skipped, not missed. */
#define QUIET ((struct probe_addr *)1)
static __thread struct hslot *my_slot;

__attribute__((noinline)) static struct hslot *claim_slot(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < SLOTS; i++) {
			pid_t t = atomic_load_explicit(&slots[i].tid,
						       memory_order_relaxed);

			/* the second pass takes the slots of dead threads */
			if (t && (pass == 0 ||
				  syscall(SYS_tgkill, getpid(), t, 0) == 0 ||
				  errno != ESRCH))
				continue;
			if (atomic_compare_exchange_strong(&slots[i].tid, &t, tid)) {
				atomic_store_explicit(&slots[i].in, NULL,
						      memory_order_relaxed);
				slots[i].err = &errno;
				slots[i].hit_off = i < HIT_SLOTS ?
					(uint32_t)(offsetof(struct utrace__probe_site, per_thread) +
						   (size_t)i * sizeof(((struct utrace__probe_site *)0)->per_thread[0])) :
					0;
				return &slots[i];
			}
		}
	}
	return NULL;
}

/* The thread's first hit: its slot (errno kept: claim_slot() makes
 * system calls). */
__attribute__((noinline)) static struct hslot *first_hit(void)
{
	int saved = errno;
	struct hslot *me = my_slot = claim_slot();

	errno = saved;
	return me;
}

static inline void count_hit(struct utrace__probe_site *s, struct hslot *me)
{
	uint32_t off = me->hit_off;

	if (off) {
		/* (per_thread[i].n: the offset is precomputed at the claim) */
		_Atomic uint64_t *n = (_Atomic uint64_t *)(void *)((char *)s + off);

		atomic_store_explicit(n, atomic_load_explicit(n, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	} else
		atomic_fetch_add_explicit(&s->hits, 1, memory_order_relaxed);
}

/* From the trampolines and the SIGTRAP hook; general registers only. */
void utrace__probe_dispatch(struct probe_addr *rec,
			    const struct utrace_probe_regs *regs,
			    int simd_saved) UTRACE_HIDDEN;

/* Every probe of the address, one after another (out of line: the usual
 * single probe keeps fewer registers across its call). */
__attribute__((noinline)) static void dispatch_all(struct probe_addr *rec,
						   const struct utrace_probe_regs *regs,
						   int simd_saved, struct hslot *me,
						   struct utrace__probe_site *s)
{
	for (; s; s = atomic_load_explicit(&s->next, memory_order_acquire)) {
		if (__builtin_expect((s->flags & UTRACE_PROBE_SAVE_SIMD) &&
				     !simd_saved, 0)) {
			/* attached while this hit was in the trampoline */
			atomic_fetch_add_explicit(&rec->misses, 1,
						  memory_order_relaxed);
			continue;
		}
		s->fn(s->data, regs);
		count_hit(s, me);
	}
}

/* @simd_saved: the SIMD state is saved (the trampoline did, or a signal
 * frame holds it): probes with UTRACE_PROBE_SAVE_SIMD may run */
void utrace__probe_dispatch(struct probe_addr *rec,
			    const struct utrace_probe_regs *regs,
			    int simd_saved)
{
	struct hslot *me = my_slot;
	struct utrace__probe_site *s;
	struct probe_addr *in;
	int saved_errno;

	if (__builtin_expect(!me, 0)) {
		me = first_hit();
		if (!me)
			goto miss;	/* 4096 threads in a handler */
	}
	in = atomic_load_explicit(&me->in, memory_order_relaxed);
	if (in) {
		if (in == QUIET)
			return;         /* utrace's own call, not the program's */
		goto miss;
	}
	atomic_store_explicit(&me->in, rec, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	/* the program may be between a system call and its errno */
	saved_errno = *me->err;
	s = atomic_load_explicit(&rec->head, memory_order_acquire);
	if (__builtin_expect(s && !atomic_load_explicit(&s->next, memory_order_acquire) &&
			     !(s->flags & UTRACE_PROBE_SAVE_SIMD), 1)) {
		/* the usual case, one probe: counted first (the slot holds
		 * it), so that only me and errno live across the call */
		count_hit(s, me);
		s->fn(s->data, regs);
	} else {
		dispatch_all(rec, regs, simd_saved, me, s);
	}
	*me->err = saved_errno;
	atomic_store_explicit(&me->in, NULL, memory_order_release);
	return;
miss:
	/* the list is read here without a slot: a detach may be under way,
	 * and its site may be freed; count on the record instead */
	atomic_fetch_add_explicit(&rec->misses, 1, memory_order_relaxed);
}

void *utrace__probe_quiet_enter(void)
{
	struct hslot *me = my_slot;
	struct probe_addr *old;

	if (!me) {
		me = first_hit();
		if (!me)
			return QUIET;   /* (no slot: nothing to give back) */
	}
	old = atomic_load_explicit(&me->in, memory_order_relaxed);
	atomic_store_explicit(&me->in, QUIET, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return old;
}

void utrace__probe_quiet_leave(void *old)
{
	struct hslot *me = my_slot;

	if (!me || old == QUIET)
		return;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&me->in, (struct probe_addr *)old, memory_order_release);
}

/* Wait until no hit can still see a probe unlinked before the call. */
static void wait_readers(struct probe_addr *rec)
{
	pid_t pid = getpid();

	syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	for (int i = 0; i < SLOTS; i++) {
		pid_t t = atomic_load(&slots[i].tid);

		if (!t)
			continue;
		while (atomic_load(&slots[i].in) == rec &&
		       atomic_load(&slots[i].tid) == t &&
		       (syscall(SYS_tgkill, pid, t, 0) == 0 || errno != ESRCH)) {
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
}

/* An int3 at the address (the probe itself, or a patch under way). */
static uintptr_t int3_hit(void *arg, ucontext_t *uc)
{
	struct probe_addr *rec = arg;
	const greg_t *g = uc->uc_mcontext.gregs;
	struct utrace_probe_regs r = {
		.r15 = g[REG_R15], .r14 = g[REG_R14], .r13 = g[REG_R13],
		.r12 = g[REG_R12], .bp = g[REG_RBP], .bx = g[REG_RBX],
		.r11 = g[REG_R11], .r10 = g[REG_R10], .r9 = g[REG_R9],
		.r8 = g[REG_R8], .ax = g[REG_RAX], .cx = g[REG_RCX],
		.dx = g[REG_RDX], .si = g[REG_RSI], .di = g[REG_RDI],
		.ip = rec->addr, .flags = g[REG_EFL], .sp = g[REG_RSP],
	};

	/* a jump over instructions before the probed one: its trampoline
	 * runs them, then the handlers, as if the jump were there */
	if (rec->pre_len)
		return rec->code;
	if (atomic_load_explicit(&rec->head, memory_order_relaxed))
		utrace__probe_dispatch(rec, &r, 1);
	return rec->resume;
}

/* ---- the trampoline ---- */

/*
 * Saves the red zone's room, the flags and the general registers as a
 * struct utrace_probe_regs on the stack, calls the dispatcher on an
 * aligned stack, restores, then runs the displaced instructions
 * (relocated) and jumps back after them.
 */
static const uint8_t tramp_head[] = {
	0x48, 0x8d, 0x64, 0x24, 0x80,	/* lea -0x80(%rsp),%rsp: red zone */
	0x50,				/* push %rax: room for sp */
	0x9c,				/* pushfq: flags */
	0x50,				/* push %rax: room for ip */
	0x57, 0x56, 0x52, 0x51, 0x50,	/* push di si dx cx ax */
	0x41, 0x50, 0x41, 0x51,		/* push r8 r9 */
	0x41, 0x52, 0x41, 0x53,		/* push r10 r11 */
	0x53, 0x55,			/* push bx bp */
	0x41, 0x54, 0x41, 0x55,		/* push r12 r13 */
	0x41, 0x56, 0x41, 0x57,		/* push r14 r15: the struct */
	0xfc,				/* cld (the ABI's) */
	0x48, 0x8d, 0x84, 0x24, 0x10, 0x01, 0, 0, /* lea 0x110(%rsp),%rax */
	0x48, 0x89, 0x84, 0x24, 0x88, 0, 0, 0,	  /* mov %rax,0x88(%rsp): sp */
};
/* then: lea ADDR(%rip),%rax; mov %rax,0x78(%rsp): ip */
static const uint8_t tramp_call[] = {
	0x48, 0x89, 0xe3,		/* mov %rsp,%rbx */
	0x48, 0x83, 0xe4, 0xf0,		/* and $-16,%rsp */
	0x48, 0x89, 0xde,		/* mov %rbx,%rsi: regs */
	0x31, 0xd2,			/* xor %edx,%edx: SIMD not saved */
	/* then: movabs $rec,%rdi; cmpb $0,save_simd(%rdi); je 1f;
	 * the SIMD save, call, restore (below); jmp 2f;
	 * 1: movabs $dispatch,%rax; call *%rax; 2: */
};

static size_t put(uint8_t *buf, size_t at, const void *b, size_t n)
{
	memcpy(buf + at, b, n);
	return at + n;
}

/* The SIMD state: XSAVE of every enabled component (cpuid 0xd), or
 * FXSAVE (SSE only) where the OS has not enabled XSAVE. */
static uint32_t simd_size;
static int simd_xsave;		/* 0 fxsave, 1 xsave, 2 xsavec */

static void simd_probe(void)
{
	unsigned int a, b, c, d;

	if (simd_size)
		return;
	simd_size = 512;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27)) &&
	    __get_cpuid_count(0xd, 0, &a, &b, &c, &d) && b >= 576) {
		simd_xsave = 1;
		simd_size = b;
		/* XSAVEC skips the components in their initial state (the
		 * upper halves after vzeroupper, AVX-512 unused): cheaper.
		 * Not XSAVEOPT: its "modified" tracking assumes the area is
		 * not written between XRSTOR and XSAVE, and ours is stack */
		if (__get_cpuid_count(0xd, 1, &a, &b, &c, &d) && (a & 2))
			simd_xsave = 2;
	}
}

/* sub $size+64,%rsp; and $-64,%rsp; the XSAVE header zeroed; save;
 * mov $1,%edx */
static size_t put_simd_save(uint8_t *buf, size_t at)
{
	uint32_t room = simd_size + 64;

	buf[at++] = 0x48, buf[at++] = 0x81, buf[at++] = 0xec;
	at = put(buf, at, &room, 4);
	at = put(buf, at, (const uint8_t[]){ 0x48, 0x83, 0xe4, 0xc0 }, 4);
	buf[at++] = 0x31, buf[at++] = 0xc0;	/* xor %eax,%eax */
	for (uint32_t off = 512; off < 576; off += 8) {
		/* mov %rax,off(%rsp) */
		at = put(buf, at, (const uint8_t[]){ 0x48, 0x89, 0x84, 0x24 }, 4);
		at = put(buf, at, &off, 4);
	}
	at = put(buf, at, (const uint8_t[]){ 0xb8, 0xff, 0xff, 0xff, 0xff,
					     0xba, 0xff, 0xff, 0xff, 0xff }, 10);
	/* xsavec64, xsave64 or fxsave64 (%rsp) */
	if (simd_xsave == 2)
		at = put(buf, at, (const uint8_t[]){ 0x48, 0x0f, 0xc7, 0x24, 0x24 }, 5);
	else
		at = put(buf, at, (const uint8_t[]){ 0x48, 0x0f, 0xae,
						     simd_xsave ? 0x24 : 0x04, 0x24 }, 5);
	at = put(buf, at, (const uint8_t[]){ 0xba, 1, 0, 0, 0 }, 5);
	return at;
}

static size_t put_simd_restore(uint8_t *buf, size_t at)
{
	at = put(buf, at, (const uint8_t[]){ 0xb8, 0xff, 0xff, 0xff, 0xff,
					     0xba, 0xff, 0xff, 0xff, 0xff }, 10);
	/* xrstor64 (%rsp) or fxrstor64 (%rsp) */
	return put(buf, at, (const uint8_t[]){ 0x48, 0x0f, 0xae,
					       simd_xsave ? 0x2c : 0x0c, 0x24 }, 5);
}
/* (r15..r12 and bp are as pushed: the dispatcher is a C function, which
 * keeps them; bx held the stack pointer) */
static const uint8_t tramp_tail[] = {
	0x48, 0x89, 0xdc,		/* mov %rbx,%rsp */
	0x48, 0x8b, 0x5c, 0x24, 0x28,	/* mov 0x28(%rsp),%rbx: bx */
	0x48, 0x8d, 0x64, 0x24, 0x30,	/* lea 0x30(%rsp),%rsp: r15..bx */
	0x41, 0x5b, 0x41, 0x5a,		/* pop r11 r10 */
	0x41, 0x59, 0x41, 0x58,		/* pop r9 r8 */
	0x58, 0x59, 0x5a, 0x5e, 0x5f,	/* pop ax cx dx si di */
	0x48, 0x8d, 0x64, 0x24, 0x08,	/* lea 8(%rsp),%rsp: ip */
};
/* then the flags, where the CPU has LAHF/SAHF in 64-bit mode without
 * popfq (microcoded: about 20 cycles, a third of an empty hit): DF set
 * again by std, the status flags by sahf (CF PF AF ZF SF) and by an add
 * that overflows exactly when OF was set; the system flags (TF, AC) are
 * not restored, the handler does not change them */
static const uint8_t tramp_flags_sahf[] = {
	0x48, 0x89, 0x44, 0x24, 0x08,	/* mov %rax,8(%rsp): the sp room */
	0xf6, 0x44, 0x24, 0x01, 0x04,	/* testb $4,1(%rsp): DF */
	0x74, 0x01,			/* je 1f */
	0xfd,				/* std */
	0x0f, 0xb6, 0x04, 0x24,		/* 1: movzbl (%rsp),%eax */
	0xc1, 0xe0, 0x08,		/* shl $8,%eax: ah */
	0xf6, 0x44, 0x24, 0x01, 0x08,	/* testb $8,1(%rsp): OF */
	0x0f, 0x95, 0xc0,		/* setne %al */
	0x04, 0x7f,			/* add $0x7f,%al: OF */
	0x9e,				/* sahf */
	0x48, 0x8b, 0x44, 0x24, 0x08,	/* mov 8(%rsp),%rax */
	0x48, 0x8d, 0xa4, 0x24, 0x90, 0, 0, 0, /* lea 0x90(%rsp),%rsp */
};
/* or all of them */
static const uint8_t tramp_flags_popf[] = {
	0x9d,				/* popfq */
	0x48, 0x8d, 0xa4, 0x24, 0x88, 0, 0, 0, /* lea 0x88(%rsp),%rsp */
};

/* or, where the code sets the status flags before it reads any
 * (utrace__probe_flags_dead(): most function entries), DF alone */
static const uint8_t tramp_flags_dead[] = {
	0xf6, 0x44, 0x24, 0x01, 0x04,	/* testb $4,1(%rsp): DF */
	0x74, 0x01,			/* je 1f */
	0xfd,				/* std */
	0x48, 0x8d, 0xa4, 0x24, 0x90, 0, 0, 0, /* 1: lea 0x90(%rsp),%rsp */
};

/* LAHF/SAHF in 64-bit mode (cpuid 0x80000001, ecx bit 0) */
static bool has_sahf(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & 1);
}

_Static_assert(sizeof(struct utrace_probe_regs) == 18 * 8,
	       "the trampoline pushes 18 registers");
_Static_assert(offsetof(struct utrace_probe_regs, ip) == 0x78, "ip");
_Static_assert(offsetof(struct utrace_probe_regs, bx) == 0x28, "bx");
_Static_assert(offsetof(struct utrace_probe_regs, sp) == 0x88, "sp");

/*
 * Relocate the instructions of @orig (@len bytes at @addr) into @buf
 * (running at @to), then jump back to @addr + @len.
 */
static int relocate_run(const uint8_t *orig, size_t len, uintptr_t addr,
			uint8_t *buf, size_t room, uintptr_t to, int back,
			char *why)
{
	size_t at = 0, off = 0;

	while (off < len) {
		struct probe_insn in;
		int n;

		if (utrace__probe_decode_one(orig + off, len - off, addr + off,
					     &in)) {
			snprintf(why, UTRACE_PROBE_WHY_MAX, "cannot decode at 0x%" PRIxPTR,
				 addr + off);
			return -1;
		}
		n = utrace__probe_relocate(&in, orig + off, addr + off,
					   buf + at, room - at, to + at,
					   addr + off + in.len, why,
					   UTRACE_PROBE_WHY_MAX);
		if (n < 0)
			return -1;
		at += n;
		off += in.len;
	}
	if (!back)
		return (int)at;
	if (room - at < 5 || utrace__probe_emit_jmp(buf + at, to + at, addr + len) < 0) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "the copy is too far from 0x%" PRIxPTR,
			 addr);
		return -1;
	}
	return (int)(at + 5);
}

static int build_code(struct probe_addr *rec, char *why)
{
	uint8_t buf[TRAMP_MAX];
	uintptr_t to = (uintptr_t)utrace__text_alloc_near(rec->addr, TRAMP_MAX);
	uintptr_t disp = (uintptr_t)utrace__probe_dispatch;
	size_t at = 0;
	int32_t rel;
	int n;

	if (!to) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "no room for code within 1 GiB of 0x%" PRIxPTR,
			 rec->addr);
		return -ENOMEM;
	}
	if (rec->jump && rec->pre_len) {
		/* the instructions before the probed one, first */
		n = relocate_run(rec->orig, rec->pre_len, rec->patch_at, buf,
				 sizeof(buf), to, 0, why);
		if (n < 0)
			return -EINVAL;
		at = (size_t)n;
	}
	if (rec->jump) {
		at = put(buf, at, tramp_head, sizeof(tramp_head));
		/* lea ADDR(%rip),%rax; mov %rax,0x78(%rsp) */
		rel = (int32_t)((int64_t)rec->addr - (int64_t)(to + at + 7));
		buf[at++] = 0x48, buf[at++] = 0x8d, buf[at++] = 0x05;
		at = put(buf, at, &rel, 4);
		at = put(buf, at, (const uint8_t[]){ 0x48, 0x89, 0x44, 0x24, 0x78 }, 5);
		uint32_t flag_off = offsetof(struct probe_addr, save_simd);
		size_t je, jmp;

		simd_probe();
		at = put(buf, at, tramp_call, sizeof(tramp_call));
		buf[at++] = 0x48, buf[at++] = 0xbf;	/* movabs $rec,%rdi */
		at = put(buf, at, &rec, 8);
		buf[at++] = 0x80, buf[at++] = 0xbf;	/* cmpb $0,off(%rdi) */
		at = put(buf, at, &flag_off, 4);
		buf[at++] = 0;
		buf[at++] = 0x74;			/* je 1f */
		je = at++;
		at = put_simd_save(buf, at);
		buf[at++] = 0x48, buf[at++] = 0xb8;	/* movabs $disp,%rax */
		at = put(buf, at, &disp, 8);
		buf[at++] = 0xff, buf[at++] = 0xd0;	/* call *%rax */
		at = put_simd_restore(buf, at);
		buf[at++] = 0xeb;			/* jmp 2f */
		jmp = at++;
		buf[je] = (uint8_t)(at - (je + 1));	/* 1: */
		buf[at++] = 0x48, buf[at++] = 0xb8;	/* movabs $disp,%rax */
		at = put(buf, at, &disp, 8);
		buf[at++] = 0xff, buf[at++] = 0xd0;	/* call *%rax */
		buf[jmp] = (uint8_t)(at - (jmp + 1));	/* 2: */
		at = put(buf, at, tramp_tail, sizeof(tramp_tail));
		if (rec->flags_dead)
			at = put(buf, at, tramp_flags_dead, sizeof(tramp_flags_dead));
		else if (has_sahf())
			at = put(buf, at, tramp_flags_sahf, sizeof(tramp_flags_sahf));
		else
			at = put(buf, at, tramp_flags_popf, sizeof(tramp_flags_popf));
	}
	n = relocate_run(rec->orig + rec->pre_len, rec->disp_len - rec->pre_len,
			 rec->addr, buf + at, sizeof(buf) - at, to + at, 1, why);
	if (n < 0)
		return -EINVAL;
	rec->code = to;
	rec->resume = to + at;
	if (utrace__text_write(to, buf, at + n)) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "cannot write the trampoline");
		return -EPERM;
	}
	return 0;
}

/* ---- attach, detach ---- */

static struct probe_addr *find_rec(uintptr_t addr)
{
	struct probe_addr *best = NULL;

	/* (a record's addr is at most DISP_MAX past its patch_at) */
	FOR_RECS_AT(r, addr >= DISP_MAX ? addr - DISP_MAX : 0, addr + 1)
		if (r->addr == addr && (!best || r->seq > best->seq))
			best = r;	/* the newest */
	return best;
}

/* The function's bytes as they were before any probe of ours. */
static uint8_t *original_bytes(uintptr_t func, size_t len)
{
	uint8_t *c = malloc(len ? len : 1);

	if (!c)
		return NULL;
	utrace__probe_read(c, func, len);	/* checked mapped first */
	FOR_RECS_AT(r, func >= DISP_MAX ? func - DISP_MAX : 0, func + len) {
		if (!r->active || r->patch_at + r->patch_len <= func ||
		    r->patch_at >= func + len)
			continue;
		for (size_t i = 0; i < r->patch_len; i++)
			if (r->patch_at + i >= func && r->patch_at + i < func + len)
				c[r->patch_at - func + i] = r->orig[i];
	}
	return c;
}

/*
 * Is [lo, hi) in executable mappings of the process?  The caller's
 * function size comes from a symbol table: a wrong one must not make us
 * read past the code or patch data.
 */
/* utrace__probe_attach_many(): the executable mappings, read once */
static struct xmap {
	uintptr_t lo, hi;
} *xmaps;
static size_t nr_xmaps;
static bool xmaps_kept;

static void xmaps_load(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	size_t cap = 0;

	nr_xmaps = 0;
	xmaps_kept = false;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3 || perms[2] != 'x')
			continue;
		if (nr_xmaps == cap) {
			struct xmap *m = realloc(xmaps, (cap ? 2 * cap : 64) * sizeof(*m));

			if (!m) {
				fclose(f);
				return;
			}
			xmaps = m;
			cap = cap ? 2 * cap : 64;
		}
		xmaps[nr_xmaps++] = (struct xmap){ a, b };
	}
	fclose(f);
	xmaps_kept = true;
}

static int executable(uintptr_t lo, uintptr_t hi, char *why)
{
	FILE *f;
	char line[512];
	uintptr_t at = lo;

	if (xmaps_kept) {
		/* (sorted by address, as the kernel lists them) */
		for (size_t i = 0; i < nr_xmaps && at < hi; i++)
			if (at >= xmaps[i].lo && at < xmaps[i].hi)
				at = xmaps[i].hi;
		if (at >= hi)
			return 0;
		snprintf(why, UTRACE_PROBE_WHY_MAX, "0x%" PRIxPTR " is not in executable code (the function at 0x%" PRIxPTR ", %zu bytes)",
			 at, lo, (size_t)(hi - lo));
		return -EINVAL;
	}
	f = fopen("/proc/self/maps", "re");
	if (!f) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "cannot read /proc/self/maps");
		return -EINVAL;
	}
	while (at < hi && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3)
			continue;
		if (at >= a && at < b) {
			if (perms[2] != 'x')
				break;
			at = b;
		}
	}
	fclose(f);
	if (at < hi) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "0x%" PRIxPTR " is not in executable code (the function at 0x%" PRIxPTR ", %zu bytes)",
			 at, lo, (size_t)(hi - lo));
		return -EINVAL;
	}
	return 0;
}

/* Another active probe whose patched bytes overlap [at, at+len)? */
static struct probe_addr *overlap(uintptr_t addr, uintptr_t at, size_t len)
{
	FOR_RECS_AT(r, at >= DISP_MAX ? at - DISP_MAX : 0, at + len)
		if (r->active && r->addr != addr && r->patch_at < at + len &&
		    at < r->patch_at + (r->jump ? r->disp_len : r->patch_len))
			return r;
	return NULL;
}

/*
 * Placing a jump must not fail because the machine is busy (issue 27
 * item 10): when a thread is inside the bytes the jump covers, or,
 * preempted, does not say where it is within PLACE_WAIT_NS, the int3 on
 * the first byte stays: the probe works from then on as a breakpoint
 * (the hook sends a hit through the trampoline's relocated copy of all
 * the covered bytes), and a finisher thread writes the rest of the jump
 * when no thread is inside, retrying as long as it takes.
 */
#define PLACE_WAIT_NS (50 * 1000000LL)
#define FINISH_WAIT_NS (20 * 1000000LL)

static pid_t finisher_pid;		/* the process whose finisher runs */
static size_t nr_pending;		/* records pending, under the text lock */
static _Atomic int finisher_holds;	/* the finisher holds the text lock */

static void set_pending(struct probe_addr *r, uint8_t on)
{
	if (atomic_load(&r->pending) != on)
		on ? nr_pending++ : nr_pending--;
	atomic_store(&r->pending, on);
}

/*
 * A fork while the finisher held the text lock: the child has no
 * finisher to release it.  Whatever step the finisher was at, the
 * child's code is consistent (an int3 whose hook resumes past the
 * covered bytes, with the old or the new tail behind it), and the record
 * still says pending: the child finishes it again when it next places a
 * probe.
 */
static void finisher_forked(void)
{
	if (atomic_load(&finisher_holds)) {
		atomic_store(&finisher_holds, 0);
		utrace__text_lock_reset();
	}
}

/* Finish the pending jumps; how many are left.  Under the text lock. */
static size_t finish_pending(int64_t wait_ns)
{
	char why[UTRACE_PROBE_WHY_MAX];
	uint8_t jmp[5];
	size_t left = 0;

	for (struct probe_addr *r = records; r; r = r->next) {
		if (!atomic_load(&r->pending))
			continue;
		if (utrace__probe_emit_jmp(jmp, r->patch_at, r->code) < 0 ||
		    utrace__text_poke_finish(r->patch_at, jmp, 5, wait_ns, why, sizeof(why)) == -EINPROGRESS) {
			left++;
			continue;
		}
		set_pending(r, 0);	/* (-EPERM: a breakpoint it stays) */
	}
	return left;
}

static void *finisher(void *arg)
{
	void *q = utrace__probe_quiet_enter();
	long ns = 1000000;

	(void)arg;
	for (;;) {
		struct timespec ts = { 0, ns };
		size_t left;

		nanosleep(&ts, NULL);
		utrace__text_lock();
		atomic_store(&finisher_holds, 1);
		left = finish_pending(FINISH_WAIT_NS);
		if (!left)
			finisher_pid = 0;
		atomic_store(&finisher_holds, 0);
		utrace__text_unlock();
		if (!left)
			break;
		if (ns < 100000000)
			ns *= 2;
	}
	utrace__probe_quiet_leave(q);
	return NULL;
}

/* A finisher thread for this process, if none runs; under the text lock.
 * It takes none of the program's asynchronous signals (blocked). */
static void start_finisher(void)
{
	static int forked_set;
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t t;

	if (finisher_pid == getpid())
		return;
	if (!forked_set && !pthread_atfork(NULL, NULL, finisher_forked))
		forked_set = 1;
	/* not the synchronous ones: an int3 of a probe in the libc code it
	 * calls (memcpy as a breakpoint) with SIGTRAP blocked would make the
	 * kernel reset the handler and kill the process; nor the engine's
	 * "where are you" (SIGRTMAX - 2, textpatch.c) */
	sigfillset(&all);
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGRTMAX - 2);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!pthread_create(&t, &a, finisher, NULL))
		finisher_pid = getpid();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
}

static int place(struct probe_addr *rec, char *why)
{
	uint8_t jmp[5];
	int r;

	if (rec->jump) {
		if (utrace__probe_emit_jmp(jmp, rec->patch_at, rec->code) < 0)
			return -ENOMEM;
		/* one instruction covered: no thread can be inside it */
		r = utrace__text_poke_start(rec->patch_at, jmp, 5, &rec->hook,
					    rec->disp_len > rec->first_len ? PLACE_WAIT_NS : -1,
					    why, UTRACE_PROBE_WHY_MAX);
		if (r == -EINPROGRESS) {
			set_pending(rec, 1);
			snprintf(why, UTRACE_PROBE_WHY_MAX, "a breakpoint for now: a thread is "
				 "inside the jump's bytes; the jump is finished when it leaves");
			start_finisher();
			return 0;
		}
		return r;
	}
	return utrace__text_poke(rec->addr, (const uint8_t[]){ 0xcc }, 1,
				 &rec->hook, 0, why, UTRACE_PROBE_WHY_MAX);
}

/*
 * Can a jump cover [addr, addr + disp): does no address of the object
 * that control may reach (targets.h: a branch anywhere in it, a symbol,
 * an FDE, a landing pad) lie inside, past the first byte?  When the
 * object's set cannot be had, only a jump over one whole instruction,
 * where nothing can land but in the middle of that instruction.
 */
static bool jump_targets_clear(uintptr_t addr, size_t disp, size_t first_len, char *why)
{
	char what[128];
	const struct utrace__probe_targets *t;
	uint64_t bias;

	t = utrace__probe_targets_at(addr, &bias, what, sizeof(what));
	if (!t) {
		if (first_len >= disp)
			return true;
		snprintf(why, UTRACE_PROBE_WHY_MAX,
			 "a breakpoint only: the jump targets of the code are unknown (%.100s)", what);
		return false;
	}
	if (!utrace__probe_targets_inside(t, addr - bias, addr - bias + disp, what, sizeof(what)))
		return true;
	snprintf(why, UTRACE_PROBE_WHY_MAX, "a breakpoint only: %.120s, inside the jump's %zu bytes",
		 what, disp);
	return false;
}

/*
 * Turn the jump of @rec into an int3 (another probe is wanted inside the
 * bytes it covers): an out-of-line copy of its first instruction alone,
 * the jump replaced by the int3 and the old tail (the jump is one
 * instruction: no thread is inside it; a thread meanwhile at the int3
 * goes through the trampoline's copy of all the covered bytes, as it
 * would have), then the int3's resume moved to the new copy.
 */
static int to_breakpoint(struct probe_addr *rec, char *why)
{
	uint8_t buf[64], bytes[DISP_MAX];
	uintptr_t to = (uintptr_t)utrace__text_alloc_near(rec->addr, sizeof(buf));
	int n, r;

	if (rec->pre_len) {
		/* (its jump starts before its probe: not undone here) */
		snprintf(why, UTRACE_PROBE_WHY_MAX, "inside the jump of the probe at 0x%" PRIxPTR
			 ", which covers the instructions before it", rec->addr);
		return -EBUSY;
	}
	if (!to) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "no room for code within 1 GiB of 0x%" PRIxPTR,
			 rec->addr);
		return -ENOMEM;
	}
	n = relocate_run(rec->orig, rec->first_len, rec->addr, buf, sizeof(buf), to, 1, why);
	if (n < 0)
		return -EINVAL;
	if (utrace__text_write(to, buf, (size_t)n)) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "cannot write the trampoline");
		return -EPERM;
	}
	memcpy(bytes, rec->orig, rec->patch_len);
	bytes[0] = 0xcc;
	if (!atomic_load(&rec->pending)) {
		r = utrace__text_poke(rec->addr, bytes, rec->patch_len, &rec->hook, 0, why,
				      UTRACE_PROBE_WHY_MAX);
		if (r)
			return r;
	}
	set_pending(rec, 0);	/* (its int3 and the old tail already) */
	rec->jump = 0;
	rec->patch_len = 1;
	rec->disp_len = rec->first_len;
	rec->code = to;
	__atomic_store_n(&rec->resume, to, __ATOMIC_RELEASE);
	return 0;
}

static int new_record(uintptr_t addr, uintptr_t func, size_t func_len,
		      struct probe_addr **out, char *why)
{
	uint8_t *orig = original_bytes(func, func_len);
	struct probe_addr *old, *rec, *o;
	struct probe_insn in;
	uint32_t start, end;
	int jump, ret, dead;
	uintptr_t at;
	size_t disp;

	if (!orig) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "out of memory");
		return -ENOMEM;
	}
	jump = utrace__probe_decode_cover(orig, func_len, func, addr, &start,
					  &end, why);
	if (jump < 0) {
		free(orig);
		return jump;
	}
	if (utrace__probe_decode_one(orig + (addr - func), func + func_len - addr,
				     addr, &in)) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "+0x%" PRIxPTR " cannot be displaced",
			 addr - func);
		free(orig);
		return -EINVAL;
	}
	o = overlap(addr, addr, 1);
	if (o && o->batch) {
		/* inside a jump of the round under way: after it, alone */
		free(orig);
		return -EAGAIN;
	}
	if (o && o->jump) {
		/* inside another probe's jump: that one becomes a breakpoint,
		 * this one fits then (issue 27 item 9) */
		ret = to_breakpoint(o, why);
		if (ret) {
			free(orig);
			return ret;
		}
	}
	/* the bytes displaced: the jump's run, or the instruction for an int3 */
	if (jump && overlap(addr, func + start, end - start))
		jump = 0;
	/* (the object's jump targets: when unknown, only a jump over the
	 * probed instruction alone) */
	if (jump && !jump_targets_clear(func + start, end - start,
					start == addr - func ? in.len : 0, why))
		jump = 0;
	if (!jump)
		start = addr - func, end = start + in.len;
	at = func + start;
	disp = end - start;
	o = overlap(addr, addr, 1);
	if (o) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "+0x%" PRIxPTR " is inside the jump of the probe at +0x%" PRIxPTR,
			 addr - func, o->addr - func);
		free(orig);
		return -EBUSY;
	}
	if (disp > DISP_MAX) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "+0x%" PRIxPTR " cannot be displaced",
			 addr - func);
		free(orig);
		return -EINVAL;
	}
	dead = jump && utrace__probe_flags_dead(orig, func_len, func, addr);
	/* the same code as last time: its trampoline again */
	old = find_rec(addr);
	if (old && old->jump == jump && old->patch_at == at && old->disp_len == disp &&
	    old->flags_dead == dead && !memcmp(old->orig, orig + start, disp)) {
		free(orig);
		*out = old;
		return 0;
	}
	rec = calloc(1, sizeof(*rec));
	if (!rec) {
		free(orig);
		snprintf(why, UTRACE_PROBE_WHY_MAX, "out of memory");
		return -ENOMEM;
	}
	rec->addr = addr;
	rec->patch_at = at;
	rec->jump = jump;
	rec->flags_dead = (uint8_t)dead;
	rec->patch_len = jump ? 5 : 1;
	rec->disp_len = disp;
	rec->pre_len = addr - at;
	rec->first_len = in.len;
	memcpy(rec->orig, orig + start, disp);
	free(orig);
	rec->hook.fn = int3_hit;
	rec->hook.arg = rec;
	ret = build_code(rec, why);
	if (ret < 0 && jump) {
		/* too far for the relocated operands: an int3 then */
		rec->jump = 0;
		rec->patch_at = addr;
		rec->patch_len = 1;
		rec->disp_len = in.len;
		memmove(rec->orig, rec->orig + rec->pre_len, in.len);
		rec->pre_len = 0;
		ret = build_code(rec, why);
	}
	if (ret < 0) {
		free(rec);
		return ret;
	}
	rec->next = records;
	records = rec;
	index_rec(rec);
	*out = rec;
	return 0;
}

int utrace__probe_attach(uintptr_t addr, uintptr_t func, size_t func_len,
			 utrace_probe_handler_fn fn, void *data,
			 struct utrace__probe_site **site,
			 char why[UTRACE_PROBE_WHY_MAX])
{
	return utrace__probe_attach_flags(addr, func, func_len, 0, fn, data,
					  site, why);
}

static struct utrace__probe_site *new_site(utrace_probe_handler_fn fn, void *data,
					   unsigned int flags)
{
	struct utrace__probe_site *s = aligned_alloc(64, sizeof(*s));

	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	s->fn = fn;
	s->data = data;
	s->flags = flags;
	return s;
}

/* The site in its record's list (seen by the hits from now on). */
static void link_site(struct utrace__probe_site *s, struct probe_addr *rec)
{
	s->rec = rec;
	s->misses_before = atomic_load(&rec->misses);
	/* sticky while the address is probed: before the probe is seen */
	if (s->flags & UTRACE_PROBE_SAVE_SIMD)
		atomic_store(&rec->save_simd, 1);
	atomic_store(&s->next, atomic_load(&rec->head));
	atomic_store(&rec->head, s);
}

/* The text lock held, the engine initialised: one probe, placed alone. */
static int attach_locked(uintptr_t addr, uintptr_t func, size_t func_len,
			 struct utrace__probe_site *s, char *why)
{
	struct probe_addr *rec = find_rec(addr);
	int ret;

	if (!rec || !rec->active) {
		ret = executable(func, func + func_len, why);
		if (!ret)
			ret = new_record(addr, func, func_len, &rec, why);
		if (ret)
			return ret;
	}
	link_site(s, rec);
	if (!rec->active) {
		ret = utrace__int3_register(rec->patch_at, &rec->hook);
		if (!ret)
			ret = place(rec, why);
		if (ret) {
			atomic_store(&rec->head, NULL);
			return ret;
		}
		rec->active = 1;
	}
	return 0;
}

static bool bad_request(uintptr_t addr, uintptr_t func, size_t func_len,
			utrace_probe_handler_fn fn, char *why)
{
	if (fn && addr >= func && addr < func + func_len)
		return false;
	snprintf(why, UTRACE_PROBE_WHY_MAX, "0x%" PRIxPTR " is not in the function at 0x%" PRIxPTR " (%zu bytes)",
		 addr, func, func_len);
	return true;
}

/* Under the text lock: the engine ready for this process. */
static int engine_ready(char *why)
{
	int ret = utrace__text_init(why, UTRACE_PROBE_WHY_MAX);

	if (ret)
		return ret;
	utrace__probe_read_init();
	/* a forked child's pending jumps: its own finisher */
	if (nr_pending && finisher_pid != getpid())
		start_finisher();
	return 0;
}

int utrace__probe_attach_flags(uintptr_t addr, uintptr_t func,
			       size_t func_len, unsigned int flags,
			       utrace_probe_handler_fn fn, void *data,
			       struct utrace__probe_site **site,
			       char why[UTRACE_PROBE_WHY_MAX])
{
	struct utrace__probe_site *s;
	int ret;

	if (bad_request(addr, func, func_len, fn, why))
		return -EINVAL;
	s = new_site(fn, data, flags);
	if (!s) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "out of memory");
		return -ENOMEM;
	}
	utrace__text_lock();
	ret = engine_ready(why);
	if (!ret)
		ret = attach_locked(addr, func, func_len, s, why);
	utrace__text_unlock();
	if (ret) {
		free(s);
		return ret;
	}
	*site = s;
	return 0;
}

static int poke_cmp(const void *a, const void *b)
{
	const struct utrace__poke *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The patch that places @rec: its jump, or an int3. */
static int rec_poke(const struct probe_addr *rec, struct utrace__poke *p)
{
	memset(p, 0, sizeof(*p));
	p->addr = rec->patch_at;
	if (!rec->jump) {
		p->bytes[0] = 0xcc;
		p->len = 1;
		return 0;
	}
	p->len = 5;
	return utrace__probe_emit_jmp(p->bytes, rec->patch_at, rec->code) < 0 ? -ENOMEM : 0;
}

/*
 * Patch the new records @todo[0..n) in one round.  0; or, when a thread
 * stayed inside a covered run for 2 s, each placed alone (pending when a
 * thread is still inside); or -EPERM / -ENOSPC / -ENOMEM (nothing
 * written) with @why filled.
 */
static int place_all(struct probe_addr **todo, size_t n, char *why)
{
	struct utrace__poke *p = calloc(n ? n : 1, sizeof(*p));
	bool wait = false;
	int ret = 0;

	if (!p) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		ret = rec_poke(todo[i], &p[i]);
		/* a jump over several instructions: a thread may be inside */
		wait |= todo[i]->jump && todo[i]->disp_len > todo[i]->first_len;
	}
	if (ret) {
		free(p);
		snprintf(why, UTRACE_PROBE_WHY_MAX, "out of memory");
		return ret;
	}
	qsort(p, n, sizeof(*p), poke_cmp);
	/* (the hooks are registered: NULL) */
	ret = wait ? utrace__text_poke_sleds(p, n, NULL, why, UTRACE_PROBE_WHY_MAX) :
	      utrace__text_poke_many(p, n, NULL, why, UTRACE_PROBE_WHY_MAX);
	free(p);
	if (ret != -EBUSY)
		return ret;
	/* a busy thread: each alone, pending where it must wait (one that
	 * cannot be written is left inactive, without its probes) */
	for (size_t i = 0; i < n; i++) {
		if (place(todo[i], why)) {
			todo[i]->active = 0;
			atomic_store(&todo[i]->head, NULL);
		}
	}
	return 0;
}

int utrace__probe_attach_many(struct utrace__probe_req *req, size_t n)
{
	struct probe_addr **todo = calloc(n ? n : 1, sizeof(*todo));
	char why[UTRACE_PROBE_WHY_MAX];
	size_t nr_todo = 0, i;
	int ret, first = 0;

	for (i = 0; i < n; i++) {
		req[i].site = NULL;
		req[i].why[0] = '\0';
		req[i].ret = bad_request(req[i].addr, req[i].func, req[i].func_len, req[i].fn,
					 req[i].why) ? -EINVAL : 0;
		if (!req[i].ret && !(req[i].site = new_site(req[i].fn, req[i].data, req[i].flags))) {
			snprintf(req[i].why, UTRACE_PROBE_WHY_MAX, "out of memory");
			req[i].ret = -ENOMEM;
		}
	}
	if (!todo) {
		for (i = 0; i < n; i++) {
			free(req[i].site);
			req[i].site = NULL;
			req[i].ret = -ENOMEM;
		}
		return -ENOMEM;
	}
	utrace__text_lock();
	ret = engine_ready(why);
	if (ret) {
		for (i = 0; i < n; i++) {
			free(req[i].site);
			req[i].site = NULL;
			req[i].ret = ret;
			snprintf(req[i].why, UTRACE_PROBE_WHY_MAX, "%s", why);
		}
		goto out;
	}
	xmaps_load();
	/* the records, the sites linked, nothing patched yet */
	for (i = 0; i < n; i++) {
		struct utrace__probe_req *q = &req[i];
		struct probe_addr *rec;

		if (q->ret)
			continue;
		rec = find_rec(q->addr);
		if (!rec || !rec->active) {
			q->ret = executable(q->func, q->func + q->func_len, q->why);
			if (!q->ret)
				q->ret = new_record(q->addr, q->func, q->func_len, &rec, q->why);
			if (q->ret)
				continue;	/* (-EAGAIN: alone, below) */
		}
		link_site(q->site, rec);
		if (rec->active)
			continue;
		q->ret = utrace__int3_register(rec->patch_at, &rec->hook);
		if (q->ret) {
			atomic_store(&rec->head, NULL);
			snprintf(q->why, UTRACE_PROBE_WHY_MAX, "too many patched addresses");
			continue;
		}
		/* active: the next requests see its bytes as taken */
		rec->active = 1;
		rec->batch = 1;
		todo[nr_todo++] = rec;
	}
	ret = place_all(todo, nr_todo, why);
	for (size_t k = 0; k < nr_todo; k++) {
		todo[k]->batch = 0;
		if (ret) {
			todo[k]->active = 0;
			atomic_store(&todo[k]->head, NULL);
		}
	}
	for (i = 0; i < n; i++) {
		struct utrace__probe_req *q = &req[i];

		if (!q->ret && !q->site->rec->active) {
			q->ret = ret ? ret : -EPERM;
			snprintf(q->why, UTRACE_PROBE_WHY_MAX, "%s", why);
		}
	}
	/* those inside a jump of the round: now, alone */
	for (i = 0; i < n; i++)
		if (req[i].ret == -EAGAIN)
			req[i].ret = attach_locked(req[i].addr, req[i].func, req[i].func_len,
						   req[i].site, req[i].why);
	xmaps_kept = false;
out:
	utrace__text_unlock();
	free(todo);
	for (i = 0; i < n; i++) {
		if (!req[i].ret)
			continue;
		free(req[i].site);
		req[i].site = NULL;
		if (!first)
			first = req[i].ret;
	}
	return first;
}

int utrace__probe_detach(struct utrace__probe_site *site)
{
	struct probe_addr *rec;
	struct utrace__probe_site *p;
	_Atomic(struct utrace__probe_site *) *link;
	char why[UTRACE_PROBE_WHY_MAX];
	int ret = 0;

	if (!site)
		return -EINVAL;
	rec = site->rec;
	utrace__text_lock();
	/* a forked child writes its own code */
	utrace__text_init(why, sizeof(why));
	for (link = &rec->head; (p = atomic_load(link)); link = &p->next)
		if (p == site)
			break;
	if (!p) {
		utrace__text_unlock();
		return -ENOENT;
	}
	atomic_store(link, atomic_load(&site->next));
	wait_readers(rec);
	if (!atomic_load(&rec->head)) {
		/* our jump is one instruction: no thread is inside it (a
		 * pending one is an int3 and the old tail: as good) */
		set_pending(rec, 0);
		ret = utrace__text_poke(rec->patch_at, rec->orig, rec->patch_len,
					&rec->hook, 0, why, sizeof(why));
		if (!ret)
			rec->active = 0;
	}
	utrace__text_unlock();
	free(site);
	return ret;
}

/* Wait until no hit can still see a probe unlinked from a record
 * marked detaching. */
static void wait_readers_marked(void)
{
	pid_t pid = getpid();

	syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	for (int i = 0; i < SLOTS; i++) {
		pid_t t = atomic_load(&slots[i].tid);
		struct probe_addr *in;

		if (!t)
			continue;
		while ((in = atomic_load(&slots[i].in)) && in != QUIET &&
		       atomic_load(&in->detaching) && atomic_load(&slots[i].tid) == t &&
		       (syscall(SYS_tgkill, pid, t, 0) == 0 || errno != ESRCH)) {
			struct timespec ts = { 0, 50000 };

			nanosleep(&ts, NULL);
		}
	}
}

int utrace__probe_detach_many(struct utrace__probe_site **sites, size_t n)
{
	struct probe_addr **recs = calloc(n ? n : 1, sizeof(*recs));
	struct utrace__poke *p = calloc(n ? n : 1, sizeof(*p));
	char why[UTRACE_PROBE_WHY_MAX];
	size_t nr = 0, np = 0, i;
	int ret = 0;

	if (!recs || !p) {
		free(recs);
		free(p);
		/* one at a time, then */
		for (i = 0; i < n; i++) {
			int r = sites[i] ? utrace__probe_detach(sites[i]) : 0;

			if (r && !ret)
				ret = r;
		}
		return ret;
	}
	utrace__text_lock();
	/* a forked child writes its own code */
	utrace__text_init(why, sizeof(why));
	for (i = 0; i < n; i++) {
		struct utrace__probe_site *site = sites[i], *q;
		_Atomic(struct utrace__probe_site *) *link;

		if (!site)
			continue;
		for (link = &site->rec->head; (q = atomic_load(link)); link = &q->next)
			if (q == site)
				break;
		if (!q) {
			if (!ret)
				ret = -ENOENT;
			sites[i] = NULL;	/* (not ours: not freed) */
			continue;
		}
		atomic_store(link, atomic_load(&site->next));
		if (!atomic_load(&site->rec->detaching)) {
			atomic_store(&site->rec->detaching, 1);
			recs[nr++] = site->rec;
		}
	}
	wait_readers_marked();
	for (i = 0; i < nr; i++) {
		struct probe_addr *rec = recs[i];

		atomic_store(&rec->detaching, 0);
		if (atomic_load(&rec->head) || !rec->active)
			continue;
		/* our jump is one instruction: no thread is inside it (a
		 * pending one is an int3 and the old tail: as good) */
		set_pending(rec, 0);
		p[np].addr = rec->patch_at;
		p[np].len = rec->patch_len;
		memcpy(p[np].bytes, rec->orig, rec->patch_len);
		recs[np++] = rec;	/* (recs[np..i] are done with) */
		rec->active = 0;
	}
	/* (unsorted: p[k] is recs[k]'s) */
	if (utrace__text_poke_many(p, np, NULL, why, sizeof(why))) {
		/* (nothing written) each alone */
		for (i = 0; i < np; i++) {
			int r = utrace__text_poke(p[i].addr, p[i].bytes, p[i].len, &recs[i]->hook,
						  0, why, sizeof(why));

			if (r) {
				recs[i]->active = 1;
				if (!ret)
					ret = r;
			}
		}
	}
	utrace__text_unlock();
	for (i = 0; i < n; i++)
		free(sites[i]);
	free(recs);
	free(p);
	return ret;
}

int utrace__probe_read_code(uintptr_t addr, void *buf, size_t len)
{
	char why[UTRACE_PROBE_WHY_MAX];
	uint8_t *c;
	int ret;

	utrace__text_lock();
	ret = executable(addr, addr + len, why);
	if (!ret) {
		c = original_bytes(addr, len);
		if (c) {
			memcpy(buf, c, len);
			free(c);
		} else {
			ret = -ENOMEM;
		}
	}
	utrace__text_unlock();
	return ret;
}

uint64_t utrace__probe_hits(const struct utrace__probe_site *site)
{
	uint64_t n = atomic_load(&site->hits);

	for (int i = 0; i < HIT_SLOTS; i++)
		n += atomic_load_explicit(&site->per_thread[i].n,
					  memory_order_relaxed);
	return n;
}

/* The misses of the address since the probe was attached (a miss calls
 * no handler, so it is counted once per address). */
uint64_t utrace__probe_misses(const struct utrace__probe_site *site)
{
	return atomic_load(&site->rec->misses) - site->misses_before;
}

bool utrace__probe_is_jump(const struct utrace__probe_site *site)
{
	return site->rec->jump && !atomic_load(&site->rec->pending);
}

bool utrace__probe_is_pending(const struct utrace__probe_site *site)
{
	return atomic_load(&site->rec->pending);
}
