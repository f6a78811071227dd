/* SPDX-License-Identifier: MIT */
/*
 * Rewriting the program's own code while its threads run (internal):
 * the dynamic probes use it, and the tracepoints' jump-label sites
 * (lib/runtime/jump.c).  docs/design-notes.md, "Dynamic probes: the engine".
 *
 * The protocol (the kernel's text_poke_bp(), for user space):
 *   1. an int3 on the first byte; membarrier(SYNC_CORE) so that every
 *      thread sees it;
 *   2. wait until no thread's instruction pointer is inside the range
 *      (each thread is asked for its RIP with a real-time signal, or its
 *      /proc/self/task/TID/syscall is read when it sleeps in the kernel);
 *   3. the tail bytes; membarrier;
 *   4. the first byte; membarrier.
 * A thread reaching the int3 meanwhile is sent on by the SIGTRAP handler
 * through the hook registered for the address: its resume address is code
 * that does what the old (or the new) bytes do and does not come back
 * into the range.
 */
#ifndef UTRACE_PROBE_TEXTPATCH_H
#define UTRACE_PROBE_TEXTPATCH_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "compiler.h"

/*
 * What a thread that hits an int3 at an address does: @fn (run in the
 * SIGTRAP handler) may look at and change the registers; it returns the
 * address to continue at.  A hook lives as long as the process (hooks
 * are looked up without locks from signal handlers): allocate it once
 * per address and change only what @arg points to.
 */
struct utrace__int3_hook {
	uintptr_t (*fn)(void *arg, ucontext_t *uc);
	void *arg;
};

/* Once per process (and again in a forked child); 0 or -errno. */
int utrace__text_init(char *why, size_t why_len) UTRACE_HIDDEN;

/*
 * Replace @len bytes at @addr by @bytes, by the protocol above.  @hook
 * handles a thread that reaches the transient int3 (kept registered
 * afterwards).  @maybe_inside 0 skips step 2 when the caller knows no
 * thread can be inside (the bytes being replaced are one instruction, as
 * a jump of ours is).  Callers serialise their pokes (utrace__text_lock()).
 * Return: 0, -EBUSY (a thread stayed inside the range for 2 s), -EPERM
 * (the code could not be written) with @why filled.
 */
int utrace__text_poke(uintptr_t addr, const void *bytes, size_t len,
		      const struct utrace__int3_hook *hook, int maybe_inside,
		      char *why,
		      size_t why_len) UTRACE_HIDDEN;

/*
 * utrace__text_poke() in two halves, for a caller that does not wait for
 * a busy machine (issue 27 item 10): step 1, then step 2 for up to
 * @wait_ns (-1: no thread can be inside, no wait).  When a thread is
 * still inside (or, preempted, did not say where it is), the int3 stays
 * at @addr, the rest unwritten, and -EINPROGRESS is returned: @hook
 * handles every thread reaching the int3 meanwhile (its resume code must
 * do what all @len old bytes do), and utrace__text_poke_finish() writes
 * the rest once no thread is inside (-EINPROGRESS again while one is).
 * Callers hold utrace__text_lock().  0, -EINPROGRESS, -ENOSPC, -EPERM.
 */
int utrace__text_poke_start(uintptr_t addr, const void *bytes, size_t len,
			    const struct utrace__int3_hook *hook, int64_t wait_ns,
			    char *why, size_t why_len) UTRACE_HIDDEN;
int utrace__text_poke_finish(uintptr_t addr, const void *bytes, size_t len, int64_t wait_ns,
			     char *why, size_t why_len) UTRACE_HIDDEN;

/*
 * One replacement of a batch: @len bytes at @addr, where the old bytes
 * and the new ones are each one instruction (a 5-byte NOP, a jmp rel32),
 * so that no thread can be inside them: only their first byte is an
 * instruction boundary.
 */
struct utrace__poke {
	uintptr_t addr;
	uint8_t bytes[15];
	uint8_t len;
	uint8_t old;            /* utrace__text_poke_many()'s: the old first byte */
};

/*
 * The protocol for all of @n pokes at once, in three rounds of writes
 * with one membarrier(SYNC_CORE) after each (the int3s, the tails, the
 * first bytes), and no wait for threads (see struct utrace__poke).
 * @hook handles a thread reaching one of the transient int3s.  Callers
 * hold utrace__text_lock().  Return: 0, or -EPERM / -ENOSPC with @why
 * filled and the code as it was (when the int3s could not be written).
 */
int utrace__text_poke_many(struct utrace__poke *p, size_t n,
			   const struct utrace__int3_hook *hook,
			   char *why, size_t why_len) UTRACE_HIDDEN;

/*
 * utrace__text_poke_many() for sites whose old bytes are several
 * instructions (the five 1-byte NOPs of gcc's -fpatchable-function-entry=5):
 * after the int3 round, wait (2 s at most) until no thread is past the
 * first byte of any site.  @p sorted by address.  Return: as
 * utrace__text_poke_many(), and -EBUSY (the code as it was) when a thread
 * stayed inside.
 */
int utrace__text_poke_sleds(struct utrace__poke *p, size_t n,
			    const struct utrace__int3_hook *hook,
			    char *why, size_t why_len) UTRACE_HIDDEN;

/* Write code (trampolines) where no thread runs yet; no protocol. */
int utrace__text_write(uintptr_t addr, const void *bytes, size_t len) UTRACE_HIDDEN;

/* Register a hook for an int3 at @addr (replacing the address's old one). */
int utrace__int3_register(uintptr_t addr, const struct utrace__int3_hook *hook) UTRACE_HIDDEN;

void utrace__text_lock(void) UTRACE_HIDDEN;
void utrace__text_unlock(void) UTRACE_HIDDEN;
/* In a forked child only: the lock free again (its holder did not fork) */
void utrace__text_lock_reset(void) UTRACE_HIDDEN;

/*
 * Executable memory within +-2 GiB of @near (trampolines, out-of-line
 * copies): @len bytes, read-only and executable (utrace__text_write() to
 * fill it); never freed.  NULL when there is no room near.
 */
void *utrace__text_alloc_near(uintptr_t near, size_t len) UTRACE_HIDDEN;

#endif /* UTRACE_PROBE_TEXTPATCH_H */
