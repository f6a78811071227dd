// SPDX-License-Identifier: MIT
/*
 * The decoding half of the probe engine: instruction boundaries, the
 * rules deciding what can be placed at a site, a function's exits, and
 * the relocation of one instruction to another address.  Pure functions
 * on bytes (Zydis does the decoding); nothing here touches the process.
 *
 * The rules follow the kernel's kprobes (arch/x86/kernel/kprobes/core.c
 * can_probe(), opt.c can_optimize()):
 *   1. the site must be an instruction boundary of the function decoded
 *      from its start (a probe inside an instruction corrupts it);
 *   2. the instruction at the site must be able to run out of line
 *      (int3, int n, ud2, hlt, far transfers, iret, xbegin cannot): else
 *      nothing can go there;
 *   3. a 5-byte jump displaces every instruction it overlaps; each of them
 *      must be relocatable and none a call, syscall, interrupt or indirect
 *      jump; a ret or direct jmp ends the run and must be its last;
 *   4. the displaced bytes must stay in the function;
 *   5. no branch of the function may land inside the displaced bytes
 *      (their first byte excepted), and the function must have no jump
 *      table (an indirect jump whose targets are unknown);
 *   6. the whole function must decode (else rule 5 cannot be checked).
 * Rules 3 to 6 failing leave a breakpoint; 1 and 2 refuse the site.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

/* engine.h declares the engine's functions: internal to libutrace */
#pragma GCC visibility push(hidden)
#include "engine.h"
#pragma GCC visibility pop
#include "insn.h"

#define JMP_LEN 5
/* the most bytes a jump may displace (attach.c keeps them) */
#define DISP_MAX 16

static void init_decoder(ZydisDecoder *dec)
{
	ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

static uint8_t kind_of(const ZydisDecodedInstruction *zi,
		       const ZydisDecodedOperand *ops)
{
	int relbranch = zi->raw.imm[0].is_relative;
	int far = zi->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR;

	switch (zi->mnemonic) {
	case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE:
	case ZYDIS_MNEMONIC_LOOPNE:
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JCXZ:
		return PI_LOOP;
	case ZYDIS_MNEMONIC_INT:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
		return PI_INT;
	case ZYDIS_MNEMONIC_IRET:
	case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ:
	case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_XBEGIN:
		return PI_BAD;
	case ZYDIS_MNEMONIC_SYSCALL:
	case ZYDIS_MNEMONIC_SYSENTER:
		return PI_SYSCALL;
	default:
		break;
	}
	switch (zi->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		return relbranch ? PI_JCC : PI_BAD;
	case ZYDIS_CATEGORY_UNCOND_BR:
		if (far)
			return PI_BAD;
		return relbranch ? PI_JMP : PI_JMP_IND;
	case ZYDIS_CATEGORY_CALL:
		if (far)
			return PI_BAD;
		return relbranch ? PI_CALL : PI_CALL_IND;
	case ZYDIS_CATEGORY_RET:
		return far ? PI_BAD : PI_RET;
	default:
		break;
	}
	/* any other relative immediate: nothing we know how to move */
	if (relbranch || zi->raw.imm[1].is_relative)
		return PI_BAD;
	(void)ops;
	return PI_PLAIN;
}

static void fill_insn(const ZydisDecodedInstruction *zi,
		      const ZydisDecodedOperand *ops, uint64_t addr,
		      uint32_t off, struct probe_insn *in)
{
	memset(in, 0, sizeof(*in));
	in->off = off;
	in->len = zi->length;
	in->kind = kind_of(zi, ops);
	in->notrack = !!(zi->attributes & ZYDIS_ATTRIB_HAS_NOTRACK);
	for (unsigned int i = 0; i < zi->operand_count_visible; i++) {
		const ZydisDecodedOperand *op = &ops[i];

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		if (op->mem.base == ZYDIS_REGISTER_RIP) {
			ZyanU64 t;

			in->riprel = 1;
			in->rel_off = zi->raw.disp.offset;
			in->rel_size = zi->raw.disp.size / 8;
			if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, op, addr, &t)))
				in->target = t;
		}
		if (op->mem.base == ZYDIS_REGISTER_RSP ||
		    op->mem.base == ZYDIS_REGISTER_ESP)
			in->mem_rsp = 1;
		if (op->mem.index != ZYDIS_REGISTER_NONE)
			in->mem_indexed = 1;
	}
	if (zi->cpu_flags) {
		const ZydisAccessedFlagsMask st = ZYDIS_CPUFLAG_CF | ZYDIS_CPUFLAG_PF |
			ZYDIS_CPUFLAG_AF | ZYDIS_CPUFLAG_ZF | ZYDIS_CPUFLAG_SF | ZYDIS_CPUFLAG_OF;
		const ZydisAccessedFlags *f = zi->cpu_flags;
		ZydisAccessedFlagsMask w = f->modified | f->set_0 | f->set_1 | f->undefined;

		in->flags_read = !!(f->tested & st);
		in->flags_set = !in->flags_read && (w & st) == st;
	}
	if (zi->raw.imm[0].is_relative) {
		in->rel_off = zi->raw.imm[0].offset;
		in->rel_size = zi->raw.imm[0].size / 8;
		in->target = addr + zi->length + (uint64_t)zi->raw.imm[0].value.s;
	}
}

int utrace__probe_decode_one(const uint8_t *code, size_t len, uint64_t addr,
			     struct probe_insn *insn)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	init_decoder(&dec);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &zi, ops)))
		return -EINVAL;
	fill_insn(&zi, ops, addr, 0, insn);
	return 0;
}

size_t utrace__probe_decode_all(const uint8_t *code, size_t len,
				uint64_t addr, struct probe_insn *out,
				size_t max, size_t *bad)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	size_t off = 0, n = 0;

	init_decoder(&dec);
	while (off < len && n < max) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code + off,
							 len - off, &zi, ops)))
			break;
		fill_insn(&zi, ops, addr + off, off, &out[n++]);
		off += zi.length;
	}
	*bad = off;
	return n;
}

int utrace__probe_decode_boundaries(const uint8_t *code, size_t len,
				    uint64_t addr, uint32_t *offs, size_t max,
				    size_t *n)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	size_t off = 0, cnt = 0;

	init_decoder(&dec);
	while (off < len) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL,
				code + off, len - off, &zi))) {
			*n = cnt;
			return -EINVAL;
		}
		if (cnt < max)
			offs[cnt] = off;
		cnt++;
		off += zi.length;
	}
	*n = cnt;
	(void)addr;
	return 0;
}

static void say(char *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(char *why, const char *fmt, ...)
{
	va_list ap;

	if (!why)
		return;
	va_start(ap, fmt);
	vsnprintf(why, UTRACE_PROBE_WHY_MAX, fmt, ap);
	va_end(ap);
}

static const char *kind_name(const struct probe_insn *in)
{
	switch (in->kind) {
	case PI_CALL:
	case PI_CALL_IND:
		return "a call";
	case PI_SYSCALL:
		return "a syscall";
	case PI_INT:
		return "an interrupt (int3, int, ud2, hlt)";
	case PI_JMP_IND:
		return "an indirect jump";
	case PI_BAD:
		return "an instruction that cannot run out of line";
	default:
		return "an instruction";
	}
}

/* Decode a function; an array the caller frees, *@n entries, *@bad. */
static struct probe_insn *decode_func(const uint8_t *code, size_t len,
				      uint64_t func, size_t *n, size_t *bad)
{
	/* an instruction is at least one byte */
	struct probe_insn *in = calloc(len ? len : 1, sizeof(*in));

	if (!in)
		return NULL;
	*n = utrace__probe_decode_all(code, len, func, in, len, bad);
	return in;
}

static size_t find_insn(const struct probe_insn *in, size_t n, uint32_t off)
{
	size_t lo = 0, hi = n;

	/* the last instruction starting at or before @off */
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (in[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Can the site's own instruction run out of line (rule 2)? */
static int check_site_insn(const struct probe_insn *in, uint32_t off,
			   char *why)
{
	if (in->kind == PI_INT || in->kind == PI_BAD) {
		say(why, "+0x%" PRIx32 " is %s and cannot be probed", off,
		    kind_name(in));
		return -EINVAL;
	}
	if (in->kind == PI_CALL_IND && in->mem_rsp) {
		say(why, "+0x%" PRIx32 " is a call through the stack and cannot be probed",
		    off);
		return -EINVAL;
	}
	return 0;
}

/* Is a run [start, end) still too short: under 5 bytes, or not yet past
 * @need (the end of the probed instruction)? */
static int run_short(uint32_t start, uint32_t end, uint32_t need)
{
	return end - start < JMP_LEN || end < need;
}

/* Rules 3 to 6 for a jump at instruction @first whose run goes at least
 * to @need; 1 when it can go, else 0 with @why filled. */
static int check_jump(const struct probe_insn *in, size_t n, size_t bad,
		      size_t len, size_t first, uint32_t need, char *why)
{
	uint32_t start = in[first].off, end = start;
	size_t i;

	if (bad < len) {
		say(why, "a breakpoint only: the function does not decode at +0x%zx",
		    bad);
		return 0;
	}
	for (i = first; i < n && run_short(start, end, need); i++) {
		const struct probe_insn *d = &in[i];

		/* a call may end the run: it returns to the code after the
		 * jump's bytes (the copy pushes that address) */
		int last_call = (d->kind == PI_CALL ||
				 (d->kind == PI_CALL_IND && !d->mem_rsp)) &&
				!run_short(start, d->off + d->len, need);

		if (((d->kind == PI_CALL || d->kind == PI_CALL_IND) && !last_call) ||
		    d->kind == PI_SYSCALL || d->kind == PI_INT ||
		    d->kind == PI_BAD || d->kind == PI_JMP_IND) {
			say(why, "a breakpoint only: the jump would displace %s at +0x%" PRIx32 "%s",
			    kind_name(d), d->off,
			    d->kind == PI_CALL || d->kind == PI_CALL_IND ?
			    " (its return would land inside the jump)" : "");
			return 0;
		}
		end = d->off + d->len;
		if (probe_insn_ends_flow(d) && run_short(start, end, need)) {
			say(why, "a breakpoint only: the jump would displace the code after the %s at +0x%" PRIx32,
			    d->kind == PI_RET ? "ret" : "jmp", d->off);
			return 0;
		}
	}
	if (run_short(start, end, need)) {
		say(why, "a breakpoint only: the jump at +0x%" PRIx32 " would leave the function",
		    start);
		return 0;
	}
	for (i = 0; i < n; i++) {
		const struct probe_insn *b = &in[i];

		if (b->kind == PI_JMP_IND && !b->riprel) {
			say(why, "a breakpoint only: the function has an indirect jump at +0x%" PRIx32 " (a jump table may land in the displaced bytes)",
			    b->off);
			return 0;
		}
	}
	return 1;
}

/* Is @off an instruction start?  0, or -EINVAL with @why filled. */
static int boundary_before(const uint8_t *code, size_t len, uint32_t off,
			   char *why)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction zi;
	size_t at = 0;

	init_decoder(&dec);
	while (at < off) {
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL,
				code + at, len - at, &zi))) {
			say(why, "+0x%" PRIx32 " cannot be checked: the function does not decode at +0x%zx",
			    off, at);
			return -EINVAL;
		}
		if (at + zi.length > off) {
			say(why, "+0x%" PRIx32 " is not an instruction boundary (the instruction at +0x%zx is %u bytes)",
			    off, at, zi.length);
			return -EINVAL;
		}
		at += zi.length;
	}
	return 0;
}

/* Rule 5 for a jump over [@start, @end): no branch of the function lands
 * inside (at @start is fine); 1, or 0 with @why filled. */
static int no_branch_into(const struct probe_insn *in, size_t n, uint64_t func,
			  uint32_t start, uint32_t end, char *why)
{
	for (size_t j = 0; j < n; j++) {
		const struct probe_insn *b = &in[j];

		if (b->kind != PI_JCC && b->kind != PI_JMP &&
		    b->kind != PI_CALL && b->kind != PI_LOOP)
			continue;
		if (b->target > func + start && b->target < func + end) {
			say(why, "a breakpoint only: the branch at +0x%" PRIx32 " lands at +0x%" PRIx64 ", inside the jump's bytes (+0x%" PRIx32 "..+0x%" PRIx32 ")",
			    b->off, b->target - func, start, end);
			return 0;
		}
	}
	return 1;
}

/* The end of a 5-byte jump's run from instruction @first, past @need. */
static uint32_t run_end(const struct probe_insn *in, size_t n, size_t first,
			uint32_t need)
{
	uint32_t start = in[first].off, end = start;

	for (size_t j = first; j < n && run_short(start, end, need); j++)
		end = in[j].off + in[j].len;
	return end;
}

/* The longest run of instructions before the site a jump may cover: the
 * straight-line code of its block (no branch, call, syscall...) */
#define COVER_BACK 4

int utrace__probe_decode_cover(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t site, uint32_t *startp, uint32_t *endp,
			       char why[UTRACE_PROBE_WHY_MAX])
{
	char why2[UTRACE_PROBE_WHY_MAX];
	struct probe_insn *in;
	size_t n, bad, i;
	uint32_t off;
	int ret, tried = 0;

	if (site < func || site >= func + len) {
		say(why, "0x%" PRIx64 " is outside the function (0x%" PRIx64 ", %zu bytes)",
		    site, func, len);
		return -EINVAL;
	}
	off = site - func;
	/* rule 1 first, with the decoder's light mode: most refusals */
	ret = boundary_before(code, len, off, why);
	if (ret)
		return ret;
	in = decode_func(code, len, func, &n, &bad);
	if (!in) {
		say(why, "out of memory decoding %zu bytes", len);
		return -ENOMEM;
	}
	if (off >= bad) {
		say(why, "+0x%" PRIx32 " cannot be checked: the function does not decode at +0x%zx",
		    off, bad);
		ret = -EINVAL;
		goto out;
	}
	i = find_insn(in, n, off);
	if (in[i].off != off) {
		say(why, "+0x%" PRIx32 " is not an instruction boundary (the instruction at +0x%" PRIx32 " is %u bytes)",
		    off, in[i].off, in[i].len);
		ret = -EINVAL;
		goto out;
	}
	ret = check_site_insn(&in[i], off, why);
	if (ret)
		goto out;
	*startp = off;
	*endp = off + in[i].len;
	/* the jump at the site, over the instructions that follow */
	ret = check_jump(in, n, bad, len, i, 0, why);
	if (ret == 1) {
		*endp = run_end(in, n, i, 0);
		ret = no_branch_into(in, n, func, off, *endp, why);
		if (ret == 1)
			goto out;
	}
	if (bad < len)
		goto out;
	/*
	 * Or earlier, over the straight-line instructions before the site
	 * too (a ret's block: pop %rbx; pop %rbp; ret): they are relocated
	 * before the handler's call, the site and what follows after it;
	 * no branch may land on the site then.
	 */
	for (size_t j = 0; j < n && i; j++) {
		const struct probe_insn *t = &in[j];

		if ((t->kind == PI_JCC || t->kind == PI_JMP || t->kind == PI_LOOP) &&
		    t->target == site) {
			/* a jump starting before the site would hold it */
			say(why2, "a breakpoint only: the branch at +0x%" PRIx32 " lands at +0x%" PRIx32 " itself (a jump could start there only)",
			    t->off, off);
			tried = 1;
			i = 0;
		}
	}
	for (size_t k = 1; k <= COVER_BACK && k <= i; k++) {
		size_t s = i - k;
		uint32_t need = off + in[i].len, end;

		/* straight-line code, or a jcc (its copy jumps to its target,
		 * outside; not taken, on to the site) */
		if ((in[s].kind != PI_PLAIN && in[s].kind != PI_JCC) ||
		    need - in[s].off > DISP_MAX)
			break;
		if (check_jump(in, n, bad, len, s, need, why2) != 1)
			continue;
		end = run_end(in, n, s, need);
		if (end - in[s].off > DISP_MAX)
			continue;
		tried = 1;
		if (!no_branch_into(in, n, func, in[s].off, end, why2))
			continue;
		*startp = in[s].off;
		*endp = end;
		ret = 1;
		goto out;
	}
	/* a ret's reason is the block before it */
	if (tried && in[find_insn(in, n, off)].kind == PI_RET)
		memcpy(why, why2, UTRACE_PROBE_WHY_MAX);
	ret = 0;
out:
	free(in);
	return ret;
}

int utrace__probe_decode_check(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t site, char why[UTRACE_PROBE_WHY_MAX])
{
	uint32_t start, end;

	return utrace__probe_decode_cover(code, len, func, site, &start, &end, why);
}

int utrace__probe_decode_exits(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t *exits, size_t max, size_t *n,
			       char why[UTRACE_PROBE_WHY_MAX])
{
	struct probe_insn *in;
	size_t cnt, bad, i, k = 0;

	in = decode_func(code, len, func, &cnt, &bad);
	if (!in) {
		say(why, "out of memory decoding %zu bytes", len);
		return -ENOMEM;
	}
	if (bad < len) {
		say(why, "the function does not decode at +0x%zx", bad);
		free(in);
		return -EINVAL;
	}
	for (i = 0; i < cnt; i++) {
		const struct probe_insn *e = &in[i];
		int exit = 0;

		if (e->kind == PI_RET)
			exit = 1;
		else if (e->kind == PI_JMP)
			exit = e->target < func || e->target >= func + len;
		else if (e->kind == PI_JMP_IND)
			/* through the GOT or a pointer in memory: a tail
			 * call; through a register: maybe a jump table */
			exit = e->riprel;
		if (!exit)
			continue;
		if (k < max)
			exits[k] = func + e->off;
		k++;
	}
	*n = k;
	free(in);
	return 0;
}

/* ---- relocation ---- */

int utrace__probe_flags_dead(const uint8_t *code, size_t len, uint64_t func,
			     uint64_t site)
{
	struct probe_insn in;
	uint64_t off = site - func;

	/* a few instructions: a function's prologue sets them soon or not */
	for (int i = 0; i < 32 && off < len; i++) {
		if (utrace__probe_decode_one(code + off, len - off, func + off, &in))
			return 0;
		if (in.flags_read)
			return 0;
		if (in.flags_set || in.kind == PI_CALL || in.kind == PI_CALL_IND ||
		    in.kind == PI_RET)
			return 1;
		if (in.kind != PI_PLAIN)
			return 0;   /* a branch, syscall (it keeps them), ... */
		off += in.len;
	}
	return 0;
}

int utrace__probe_emit_jmp(uint8_t *buf, uint64_t at, uint64_t target)
{
	int64_t rel = (int64_t)(target - (at + JMP_LEN));
	int32_t r32 = (int32_t)rel;

	if (rel != r32)
		return -1;
	buf[0] = 0xe9;
	memcpy(buf + 1, &r32, 4);
	return JMP_LEN;
}

static int fits32(int64_t v)
{
	return v == (int32_t)v;
}

/* Copy an instruction to @to, rewriting its RIP-relative disp32. */
static int copy_riprel(const struct probe_insn *in, const uint8_t *code,
		       uint8_t *buf, uint64_t to, char *why, size_t why_len)
{
	memcpy(buf, code, in->len);
	if (in->riprel) {
		int64_t d = (int64_t)(in->target - (to + in->len));
		int32_t d32 = (int32_t)d;

		if (!fits32(d) || in->rel_size != 4) {
			snprintf(why, why_len, "the copy at 0x%" PRIx64 " is too far from 0x%" PRIx64 " for a RIP-relative operand",
				 to, in->target);
			return -1;
		}
		memcpy(buf + in->rel_off, &d32, 4);
	}
	return in->len;
}

/*
 * A call run out of line must leave the original return address: the copy
 * pushes @next from a constant stored after it, then jumps.
 *	ff 35 <disp32>	push next(%rip)
 *	<the jump>
 *	<next, 8 bytes>
 */
static int emit_push_next(uint8_t *buf, size_t jump_len)
{
	int32_t d = (int32_t)jump_len;

	buf[0] = 0xff;
	buf[1] = 0x35;
	memcpy(buf + 2, &d, 4);
	return 6;
}

int utrace__probe_relocate(const struct probe_insn *in, const uint8_t *code,
			   uint64_t from, uint8_t *buf, size_t room,
			   uint64_t to, uint64_t next, char *why,
			   size_t why_len)
{
	int64_t d;
	int32_t d32;
	size_t k;

	if (room < 32) {
		snprintf(why, why_len, "no room for a copy");
		return -1;
	}
	(void)from;
	switch (in->kind) {
	case PI_PLAIN:
	case PI_RET:
	case PI_SYSCALL:
	case PI_JMP_IND:
		return copy_riprel(in, code, buf, to, why, why_len);
	case PI_JCC:
		/* 0f 8x rel32; cc from the opcode (7x or 0f 8x) */
		buf[0] = 0x0f;
		buf[1] = 0x80 | (code[in->rel_off - 1] & 0x0f);
		d = (int64_t)(in->target - (to + 6));
		if (!fits32(d))
			goto far;
		d32 = (int32_t)d;
		memcpy(buf + 2, &d32, 4);
		return 6;
	case PI_JMP:
		if (utrace__probe_emit_jmp(buf, to, in->target) < 0)
			goto far;
		return JMP_LEN;
	case PI_LOOP:
		/* loop +2; jmp +5 (not taken: on to next); jmp target */
		memcpy(buf, code, in->len);
		buf[in->len - 1] = 2;
		k = in->len;
		buf[k++] = 0xeb;
		buf[k++] = JMP_LEN;
		if (utrace__probe_emit_jmp(buf + k, to + k, in->target) < 0)
			goto far;
		return k + JMP_LEN;
	case PI_CALL:
		emit_push_next(buf, JMP_LEN);
		if (utrace__probe_emit_jmp(buf + 6, to + 6, in->target) < 0)
			goto far;
		memcpy(buf + 6 + JMP_LEN, &next, 8);
		return 6 + JMP_LEN + 8;
	case PI_CALL_IND: {
		/* ff /2 becomes ff /4: the same operand, as a jmp */
		size_t modrm = 0;
		struct probe_insn j = *in;

		if (in->mem_rsp) {
			snprintf(why, why_len, "a call through the stack cannot run out of line");
			return -1;
		}
		for (k = 0; k < in->len; k++)
			if (code[k] == 0xff) {
				modrm = k + 1;
				break;
			}
		if (!modrm || modrm >= in->len || ((code[modrm] >> 3) & 7) != 2) {
			snprintf(why, why_len, "an indirect call of an unknown form");
			return -1;
		}
		emit_push_next(buf, in->len);
		if (copy_riprel(&j, code, buf + 6, to + 6, why, why_len) < 0)
			return -1;
		buf[6 + modrm] = (uint8_t)((code[modrm] & ~0x38) | (4 << 3));
		memcpy(buf + 6 + in->len, &next, 8);
		return 6 + in->len + 8;
	}
	default:
		snprintf(why, why_len, "%s cannot run out of line", kind_name(in));
		return -1;
	}
far:
	snprintf(why, why_len, "the copy at 0x%" PRIx64 " is too far from the branch target 0x%" PRIx64,
		 to, in->target);
	return -1;
}
