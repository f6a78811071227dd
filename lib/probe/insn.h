/* SPDX-License-Identifier: MIT */
/*
 * The engine's view of an x86-64 instruction (internal to lib/probe):
 * what kind of control transfer it is and what must change when it runs
 * from another address.  decode.c fills it with Zydis; the in-process
 * half (attach.c) relocates with it.
 */
#ifndef UTRACE_PROBE_INSN_H
#define UTRACE_PROBE_INSN_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

enum probe_insn_kind {
	PI_PLAIN,	/* runs anywhere (RIP-relative memory operands aside) */
	PI_JCC,		/* jcc rel8/rel32 */
	PI_JMP,		/* jmp rel8/rel32 */
	PI_CALL,	/* call rel32 */
	PI_LOOP,	/* loop, loope, loopne, jrcxz, jecxz: rel8 only */
	PI_RET,		/* ret, ret imm16 */
	PI_JMP_IND,	/* jmp through a register or memory */
	PI_CALL_IND,	/* call through a register or memory */
	PI_SYSCALL,	/* syscall, sysenter */
	PI_INT,		/* int3, int n, into, int1, ud0/1/2, hlt */
	PI_BAD,		/* cannot run out of line: far transfers, iret,
			 * sysret, xbegin (relative), anything privileged
			 * to the program's address */
};

struct probe_insn {
	uint32_t off;		/* from the start of what was decoded */
	uint8_t len;
	uint8_t kind;		/* enum probe_insn_kind */
	uint8_t rel_off;	/* offset in the bytes of the rel8/rel32 or of
				 * the RIP-relative disp32; 0: none */
	uint8_t rel_size;	/* 1 or 4; 0: none */
	uint8_t riprel;		/* a RIP-relative memory operand */
	uint8_t notrack;	/* jmp with the notrack prefix (CET jump table) */
	uint8_t mem_rsp;	/* a memory operand based on rsp */
	uint8_t mem_indexed;	/* a memory operand with an index register */
	uint8_t flags_read;	/* tests a status flag (CF PF AF ZF SF OF) */
	uint8_t flags_set;	/* writes all six (or leaves them undefined)
				 * without reading any */
	uint64_t target;	/* absolute target of a relative branch, or the
				 * address a RIP-relative operand reaches */
};

/*
 * Decode @len bytes at @addr, one instruction after another.  @out gets
 * up to @max instructions; returns how many were decoded and sets *@bad
 * to the offset of the first undecodable byte (or @len when all were).
 */
size_t utrace__probe_decode_all(const uint8_t *code, size_t len,
				uint64_t addr, struct probe_insn *out,
				size_t max, size_t *bad) UTRACE_HIDDEN;

/* Decode the one instruction at @code; 0 on success. */
int utrace__probe_decode_one(const uint8_t *code, size_t len, uint64_t addr,
			     struct probe_insn *insn) UTRACE_HIDDEN;

/*
 * Write into @buf (which will run at @to) code doing what the instruction
 * @insn (bytes @code, at @from) does, then continuing at @next (for a
 * branch not taken, a call's return address: normally @from + its
 * length).  Relative branches become rel32 ones, RIP-relative operands are
 * rewritten, a call pushes @next as its return address (not an address of
 * the copy).  Does not add the final jump to @next for instructions that
 * fall through: the caller does.
 *
 * Return: bytes written, or -1 with @why filled (cannot be relocated, or
 * @to too far from what it reaches).
 */
int utrace__probe_relocate(const struct probe_insn *insn, const uint8_t *code,
			   uint64_t from, uint8_t *buf, size_t room,
			   uint64_t to, uint64_t next, char *why,
			   size_t why_len) UTRACE_HIDDEN;

/* Bytes of a jmp rel32 from @at to @target into @buf (5); -1 if too far. */
int utrace__probe_emit_jmp(uint8_t *buf, uint64_t at, uint64_t target) UTRACE_HIDDEN;

/*
 * Are the status flags dead at @site of the function (@code, @len at
 * @func): does the code from there set all six before any is read, or
 * reach a call or a ret first (after which the ABI keeps none)?  Only the
 * straight line from @site is followed (any other branch: live).  Then a
 * trampoline there need not restore them.
 */
int utrace__probe_flags_dead(const uint8_t *code, size_t len, uint64_t func,
			     uint64_t site) UTRACE_HIDDEN;

/*
 * Where a probe at @site can go (utrace__probe_decode_check()'s rules):
 * 1, a 5-byte jump over the instructions [@start, @end) (offsets from
 * @func), which hold the site and may begin before it (the straight-line
 * instructions of its block: a ret's); 0, a breakpoint on the site's
 * instruction alone (@start, @end around it), @why saying why; -EINVAL,
 * -ENOMEM: nothing, @why filled.
 */
int utrace__probe_decode_cover(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t site, uint32_t *start, uint32_t *end,
			       char why[192 /* UTRACE_PROBE_WHY_MAX */]) UTRACE_HIDDEN;

/* Is the instruction a transfer that ends a straight-line run? */
static inline int probe_insn_ends_flow(const struct probe_insn *in)
{
	return in->kind == PI_JMP || in->kind == PI_RET ||
	       in->kind == PI_JMP_IND;
}

#endif /* UTRACE_PROBE_INSN_H */
