/* SPDX-License-Identifier: MIT */
/*
 * Every address of an object that control can reach other than by
 * falling through (internal to lib/probe; issue 27 item 2): before a jump
 * covers more than the probed instruction's first byte, no such address
 * may lie inside the covered bytes, or a thread arriving there runs the
 * middle of our jump (glibc's mempcpy jumps to memcpy+3).
 *
 * The set of an ELF file, built once (targets.c) from:
 *   - the direct branch and call targets of all its executable sections
 *     (decoded from every symbol and FDE start, so that data in the code
 *     cannot hide what follows), and the code addresses RIP-relative
 *     operands take (a function pointer made by lea);
 *   - every symbol's address (.symtab, .dynsym, and the detached debug
 *     file's .symtab, /usr/lib/debug/.build-id/);
 *   - every .eh_frame FDE's start and every landing pad of the
 *     .gcc_except_table call-site tables the FDEs name.
 * It is cached per file (device, inode, size, mtime): a second probe in
 * the same object costs a binary search.
 */
#ifndef UTRACE_PROBE_TARGETS_H
#define UTRACE_PROBE_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct utrace__probe_targets;

/* What made an address a target */
enum {
	UTRACE_TARGET_BRANCH,		/* a direct jmp/jcc/loop */
	UTRACE_TARGET_CALL,		/* a direct call */
	UTRACE_TARGET_ADDR,		/* a RIP-relative operand (lea) */
	UTRACE_TARGET_SYMBOL,		/* a symbol's address */
	UTRACE_TARGET_FDE,		/* an .eh_frame FDE's start */
	UTRACE_TARGET_LANDING,		/* an exception landing pad */
	UTRACE_TARGET_KINDS
};

/*
 * utrace__probe_targets_load - the set of the ELF file open on @fd
 * @out: filled (free with utrace__probe_targets_free())
 * @why: a reason when it fails
 * Return: 0, -EINVAL (not an ELF file of ours), -ENOMEM.
 */
int utrace__probe_targets_load(int fd, struct utrace__probe_targets **out,
			       char *why, size_t why_len) UTRACE_HIDDEN;
void utrace__probe_targets_free(struct utrace__probe_targets *t) UTRACE_HIDDEN;

/* How many distinct targets (tests, measurements) */
size_t utrace__probe_targets_count(const struct utrace__probe_targets *t) UTRACE_HIDDEN;
/* How many addresses of a kind were found (before merging duplicates) */
size_t utrace__probe_targets_kind(const struct utrace__probe_targets *t,
				  unsigned int kind) UTRACE_HIDDEN;

/*
 * utrace__probe_targets_inside - a target in (@lo, @hi)? (file
 * addresses: the first byte @lo itself is allowed)
 * @why: when one is, filled with what it is, e.g. "+0x3 is the target
 *       of the jmp at mempcpy+0x1a", offsets from @lo
 * Return: 1 (one is, @why filled), 0 (none).
 */
int utrace__probe_targets_inside(const struct utrace__probe_targets *t,
				 uint64_t lo, uint64_t hi, char *why,
				 size_t why_len) UTRACE_HIDDEN;

/*
 * In this process: the set of the object mapped at @addr (a run-time
 * address), cached; *@bias gets what to add to the set's file addresses.
 * NULL with @why filled when the object's file cannot be read (the vDSO,
 * anonymous code, a file replaced on disk since it was mapped).
 * Callers serialise (utrace__text_lock()).
 */
const struct utrace__probe_targets *utrace__probe_targets_at(uintptr_t addr, uint64_t *bias,
							     char *why,
							     size_t why_len) UTRACE_HIDDEN;

#endif /* UTRACE_PROBE_TARGETS_H */
