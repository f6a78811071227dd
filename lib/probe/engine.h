/* SPDX-License-Identifier: MIT */
/*
 * The dynamic probe engine (issue 12), x86-64: decodes the code around an
 * address, decides whether it can be probed, places a probe (a jump to a
 * trampoline, or a breakpoint where a jump cannot go), calls a handler
 * with the registers on every hit, and removes the probe again, safely
 * while other threads run through the code.
 *
 * Two halves:
 * - pure decoding on bytes (utrace__probe_decode_*): usable anywhere, in
 *   libutrace, in the utrace CLI (the kernel-uprobe fallback checks a site
 *   before writing uprobe_events) and in tests (against objdump -d);
 * - the in-process half (attach/detach/read): libutrace only.
 *
 * The engine knows nothing of events, definitions or fetchargs: the layer
 * above (the uprobe_events front end) parses definitions, resolves
 * symbols, fetches arguments with utrace__probe_read*() and writes events.
 *
 * This header is shared by two branches developed at the same time
 * (probe-engine implements it, probe-front calls it).  Change it only
 * by adding; write any change down in /work/notes/probe-api-changes.md.
 */
#ifndef UTRACE_PROBE_ENGINE_H
#define UTRACE_PROBE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe-regs.h"

/* Room for a reason given to the user ("why it was refused"). */
#define UTRACE_PROBE_WHY_MAX 192

/*
 * A probe's handler: called on each hit, on the thread that hit, possibly
 * inside a signal handler of the program.  It must be async-signal-safe,
 * must not touch SIMD registers (libutrace is built so that it does not),
 * and must read program memory only through utrace__probe_read*().  A hit
 * on a thread already inside a handler (the handler's own code probed) does
 * not call it: it counts as a miss.
 */
typedef void (*utrace_probe_handler_fn)(void *data,
					const struct utrace_probe_regs *regs);

struct utrace__probe_site;

/* ---- decoding, on bytes (no process needed) ---- */

/**
 * utrace__probe_decode_check - can this site of this function be probed?
 * @code: the function's bytes
 * @len: their number (the function's size, from its symbol)
 * @func: the function's address (@code[0] is there)
 * @site: the address to probe, func <= site < func + len
 * @why: filled with a one-line reason when refused
 *
 * Decodes the whole function (Zydis) and checks @site is an instruction
 * boundary, and what can be placed there: a 5-byte jump needs the
 * instructions it covers to be displaceable (no branch into them, no
 * call/syscall/int/indirect jump among them, not leaving the function, RIP-
 * relative operands relocatable); otherwise a breakpoint.
 *
 * Return: 1 when a jump can go there, 0 when only a breakpoint can,
 * -EINVAL (not a boundary, undecodable, ...) or -ENOMEM, @why filled.
 */
int utrace__probe_decode_check(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t site, char why[UTRACE_PROBE_WHY_MAX]);

/**
 * utrace__probe_site_rules - the one check of a definition's site
 * (sitecheck.c), wherever it is taken
 * @kind: 'p' or 'r'
 * @symbol: SYMBOL of SYMBOL+OFFS, or NULL (an offset in the file)
 * @symoff: OFFS
 * @fname: the function's name, for the message
 * @code, @len, @func: the function holding the site (from its symbol;
 *        with SYMBOL, SYMBOL's): its bytes, size and address; @code NULL
 *        when the site is in no function
 * @site: the address
 * @msg, @msg_len: filled with the refusal, as an error_log message
 *
 * Return: for 'p' utrace__probe_decode_check()'s 1 (a jump fits) or 0 (a
 * breakpoint only), for 'r' 0; -EINVAL (refused, @msg filled): in no
 * function, past SYMBOL's end, a return probe not at an entry, a site
 * that is not an instruction boundary or cannot run out of line.
 */
int utrace__probe_site_rules(char kind, const char *symbol, uint64_t symoff, const char *fname,
			     const uint8_t *code, uint64_t func, size_t len, uint64_t site,
			     char *msg, size_t msg_len);

/**
 * utrace__probe_decode_exits - a function's exits, for return probes
 * @code, @len, @func: as above
 * @exits: filled with the address of each ret and tail-call jump
 *         (a jmp leaving the function)
 * @max: room in @exits
 * @n: how many there are (may exceed @max: then call again with more room)
 * @why: filled when it fails
 *
 * Return: 0, or -EINVAL with @why filled.
 */
int utrace__probe_decode_exits(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t *exits, size_t max, size_t *n,
			       char why[UTRACE_PROBE_WHY_MAX]);

/**
 * utrace__probe_decode_boundaries - every instruction start of a range
 * @code, @len, @addr: bytes at address @addr
 * @offs: filled with the offsets of the instruction starts
 * @max: room in @offs
 * @n: how many there are
 *
 * Return: 0, or -EINVAL at the first undecodable byte (@n says how far).
 */
int utrace__probe_decode_boundaries(const uint8_t *code, size_t len,
				    uint64_t addr, uint32_t *offs, size_t max,
				    size_t *n);

/* ---- in the process (libutrace) ---- */

/**
 * utrace__probe_attach - place a probe at an address of this process
 * @addr: the instruction
 * @func: the start of the function holding it, @func_len its size (from
 *        the symbol table; the caller resolved it)
 * @fn, @data: the handler and its argument
 * @site: filled with the probe
 * @why: filled with a one-line reason when refused
 *
 * Several probes may share an address (each handler is called).  Safe
 * while other threads run the code: breakpoint first, membarrier
 * SYNC_CORE between steps, and the bytes replaced only when no thread's
 * instruction pointer is inside them.
 *
 * Return: 0, or -EINVAL/-EBUSY/-ENOMEM/-EPERM (text not writable) with
 * @why filled.
 */
int utrace__probe_attach(uintptr_t addr, uintptr_t func, size_t func_len,
			 utrace_probe_handler_fn fn, void *data,
			 struct utrace__probe_site **site,
			 char why[UTRACE_PROBE_WHY_MAX]);

/**
 * utrace__probe_detach - remove a probe
 * @site: from utrace__probe_attach()
 *
 * When it returns, the handler is not running and will not be called
 * again (its data may be freed); the last probe at an address restores
 * the original bytes.  Trampolines are freed only when no thread can be
 * in one.
 *
 * Return: 0 or a negative errno.
 */
int utrace__probe_detach(struct utrace__probe_site *site);

/**
 * utrace__probe_read - copy program memory, never faulting
 * @dst: where to
 * @src: program address
 * @n: bytes
 *
 * Return: bytes copied; less than @n when a page could not be read.
 */
size_t utrace__probe_read(void *dst, uintptr_t src, size_t n);

/**
 * utrace__probe_read_str - copy a NUL-terminated string, never faulting
 * @dst: where to (always NUL-terminated when @max > 0)
 * @src: program address
 * @max: room in @dst
 *
 * Return: bytes copied including the NUL (truncated at @max), or -EFAULT.
 */
long utrace__probe_read_str(char *dst, uintptr_t src, size_t max);

/**
 * utrace__probe_read_prepare - install the reads' fault handlers now
 *
 * utrace__probe_read*() do it at their first call; the _inline forms
 * below do not: call this once before (when a probe is planned).
 */
void utrace__probe_read_prepare(void);

/*
 * utrace__probe_read() and utrace__probe_read_str() for a hit's fast
 * path: the copy loops called from inline assembly, so that the caller
 * keeps its values in registers (the loops clobber only rax, rcx and
 * r8-r10; 128 bytes skipped over the caller's red zone).  Same results.
 */
static inline __attribute__((always_inline)) size_t
utrace__probe_read_inline(void *dst, uintptr_t src, size_t n)
{
	size_t got;

	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
			 "call utrace__probe_copy\n\t"
			 "lea 128(%%rsp), %%rsp"
			 : "=a"(got), "+D"(dst), "+S"(src), "+d"(n)
			 : : "rcx", "r8", "r9", "r10", "r11", "memory", "cc");
	return got;
}

static inline __attribute__((always_inline)) long
utrace__probe_read_str_inline(char *dst, uintptr_t src, size_t max)
{
	long got;

	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
			 "call utrace__probe_copy_str\n\t"
			 "lea 128(%%rsp), %%rsp"
			 : "=a"(got), "+D"(dst), "+S"(src), "+d"(max)
			 : : "rcx", "r8", "r9", "r10", "r11", "memory", "cc");
	return got;
}

/* ---- additions (probe-engine; /work/notes/probe-api-changes.md) ---- */

/* Hits of a probe (its handler called), and misses (a hit on a thread
 * already inside a probe handler: not called). */
uint64_t utrace__probe_hits(const struct utrace__probe_site *site);
uint64_t utrace__probe_misses(const struct utrace__probe_site *site);

/* Was the probe placed as a jump (true) or as a breakpoint? */
bool utrace__probe_is_jump(const struct utrace__probe_site *site);

/* A jump placed as a breakpoint for now (a thread was inside its bytes
 * when it was placed): finished by a thread of the engine when no thread
 * is inside; utrace__probe_is_jump() is false until then. */
bool utrace__probe_is_pending(const struct utrace__probe_site *site);

/*
 * utrace__probe_read_code - the process's code as it is without our probes
 * @addr, @len: a range of executable code (a function, to decode)
 * @buf: filled with its bytes, the probes' patches undone
 *
 * What to give utrace__probe_decode_*() for a function that may already
 * hold probes (they show as jumps and int3s in memory).
 * Return: 0, or -EINVAL (not all executable code), -ENOMEM.
 */
int utrace__probe_read_code(uintptr_t addr, void *buf, size_t len);

/* The handler may use SIMD registers: the trampoline saves and restores
 * the whole extended state (XSAVE) around the hits of that address. */
#define UTRACE_PROBE_SAVE_SIMD 0x1u

/* utrace__probe_attach() with UTRACE_PROBE_* @flags. */
int utrace__probe_attach_flags(uintptr_t addr, uintptr_t func,
			       size_t func_len, unsigned int flags,
			       utrace_probe_handler_fn fn, void *data,
			       struct utrace__probe_site **site,
			       char why[UTRACE_PROBE_WHY_MAX]);

/* One probe of utrace__probe_attach_many(). */
struct utrace__probe_req {
	uintptr_t addr, func;		/* as utrace__probe_attach_flags() */
	size_t func_len;
	unsigned int flags;
	utrace_probe_handler_fn fn;
	void *data;
	struct utrace__probe_site *site;	/* out: the probe, or NULL */
	int ret;				/* out: 0 or -errno */
	char why[UTRACE_PROBE_WHY_MAX];		/* out: as @why of attach */
};

/**
 * utrace__probe_attach_many - place @n probes in one round of patching
 *
 * What @n utrace__probe_attach_flags() calls do, but the code is patched
 * for all the new addresses at once, as the jump labels are: one round
 * of int3s, one membarrier(SYNC_CORE), at most one wait for the threads
 * (when a jump covers more than one instruction), the tails, a
 * membarrier, the first bytes, a membarrier; /proc/self/maps read once.
 * A probe that lands inside the jump of another of the batch is placed
 * afterwards, alone.  When a thread stays inside the bytes for 2 s, each
 * is placed alone as attach does (a jump pending meanwhile).
 *
 * Return: 0 when all are placed, else the first refusal's -errno (each
 * request's @ret and @why say; those placed stay placed).
 */
int utrace__probe_attach_many(struct utrace__probe_req *req, size_t n);

/**
 * utrace__probe_detach_many - remove @n probes (NULL ones skipped)
 *
 * utrace__probe_detach() for each, with one wait for the handlers
 * (membarrier) and one round of patching for all the addresses left
 * without a probe.  Return: 0, or the first error.
 */
int utrace__probe_detach_many(struct utrace__probe_site **sites, size_t n);

/*
 * utrace__probe_quiet_enter - utrace's own work on this thread begins
 *
 * Until utrace__probe_quiet_leave(), the probes this thread hits are
 * neither run nor counted (not as misses either): placing probes, reading
 * symbol files, the agent's thread call malloc, open, read..., which the
 * user may have probed, and those calls are utrace's, not the program's.
 * Nests; async-signal-safe.
 * Return: what to give utrace__probe_quiet_leave().
 */
void *utrace__probe_quiet_enter(void);
void utrace__probe_quiet_leave(void *old);

#endif /* UTRACE_PROBE_ENGINE_H */
