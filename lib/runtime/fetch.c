// SPDX-License-Identifier: MIT
/*
 * Running a probe's fetch programs on a hit, and printing the record as
 * the kernel prints uprobe events (probe.h).
 *
 * The fetch side runs in the traced thread, perhaps inside a signal
 * handler: no allocation, no locks, memory only through
 * utrace__probe_read*().  A read that fails gives 0 (numbers) or a string
 * of length 0 ("(fault)") and counts a fault, as the kernel's probes do.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "engine.h"
#include "probe.h"

/* SysV x86-64: the integer arguments' registers, then the stack. */
static uint64_t sysv_arg(const struct utrace_probe_regs *regs, int64_t n, bool *fault)
{
	uint64_t v = 0;

	switch (n) {
	case 0: return regs->di;
	case 1: return regs->si;
	case 2: return regs->dx;
	case 3: return regs->cx;
	case 4: return regs->r8;
	case 5: return regs->r9;
	default:
		/* at the entry, sp holds the return address */
		if (utrace__probe_read(&v, (uintptr_t)(regs->sp + 8 * (uint64_t)(n - 5)), 8) != 8)
			*fault = true;
		return v;
	}
}

/* Leaves in *addr what the last step would load from (string or array
 * arguments), or in *val the value.  Returns true when the value is an
 * address to load from. */
static bool run(const struct utrace__probe_arg *a, const struct utrace_probe_regs *regs,
		const struct utrace__probe_env *env, uint64_t *val, bool *fault)
{
	const uint64_t *r = (const uint64_t *)regs;
	uint64_t v = 0;

	for (unsigned int i = 0; i < a->nr_insns; i++) {
		const struct utrace__probe_insn *in = &a->insns[i];

		switch (in->op) {
		case UTRACE__POP_REG: v = r[in->imm]; break;
		case UTRACE__POP_CONST: v = (uint64_t)in->imm; break;
		case UTRACE__POP_STACKP: v = regs->sp; break;
		case UTRACE__POP_RETVAL: v = regs->ax; break;
		case UTRACE__POP_ARG: v = sysv_arg(regs, in->imm, fault); break;
		case UTRACE__POP_IMM: v = (uint64_t)in->imm; break;
		case UTRACE__POP_FOFFS:
		case UTRACE__POP_SYM: v = env->bias + (uint64_t)in->imm; break;
		case UTRACE__POP_STACK:
			if (utrace__probe_read(&v, (uintptr_t)(regs->sp + 8 * (uint64_t)in->imm),
					       8) != 8) {
				*fault = true;
				v = 0;
			}
			break;
		case UTRACE__POP_DEREF:
			v += (uint64_t)in->imm;
			if (i + 1 == a->nr_insns) {
				*val = v;
				return true;
			}
			if (utrace__probe_read(&v, (uintptr_t)v, 8) != 8) {
				*fault = true;
				*val = 0;
				return false;
			}
			break;
		default:   /* COMM, DATA: strings, handled by the caller */
			break;
		}
	}
	*val = v;
	return false;
}

static size_t put_string(const struct utrace__probe_arg *a, const struct utrace_probe_regs *regs,
			 const struct utrace__probe_env *env, uint8_t *rec, size_t at,
			 size_t cap, unsigned int *faults)
{
	uint8_t last = a->insns[a->nr_insns - 1].op;
	size_t room = cap > at ? cap - at : 0;
	long n = -EFAULT;
	bool fault = false;
	uint64_t addr;

	if (room > UTRACE_PROBE_STRING_MAX)
		room = UTRACE_PROBE_STRING_MAX;
	if (last == UTRACE__POP_COMM) {
		char comm[17] = "";

		prctl(PR_GET_NAME, comm);
		n = (long)strnlen(comm, 16) + 1;
		if ((size_t)n > room)
			n = -EFAULT;
		else
			memcpy(rec + at, comm, (size_t)n);
	} else if (last == UTRACE__POP_DATA) {
		/* as the kernel's uprobes: they read their own copy of the
		 * string as user memory, which faults, and print (fault)
		 * (checked on this machine's kernel, t2816); not a miss of
		 * the program's memory, so not counted as one */
		uint32_t empty = (uint32_t)at;

		memcpy(rec + a->offset, &empty, 4);
		return 0;
	} else {
		run(a, regs, env, &addr, &fault);
		if (!fault && room && a->counted) {
			/* exactly len bytes (NUL or not), cut to the room
			 * left for the NUL the record's string ends with */
			uint64_t len = ((const uint64_t *)regs)[a->len_reg];

			if (len > room - 1)
				len = room - 1;
			if (utrace__probe_read(rec + at, (uintptr_t)addr, len) == len) {
				rec[at + len] = 0;
				n = (long)len + 1;
			}
		} else if (!fault && room) {
			n = utrace__probe_read_str((char *)rec + at, (uintptr_t)addr, room);
		}
	}
	uint32_t loc;

	if (n <= 0) {
		(*faults)++;
		loc = (uint32_t)at;
		n = 0;
	} else {
		loc = (uint32_t)n << 16 | (uint32_t)at;
	}
	memcpy(rec + a->offset, &loc, 4);
	return (size_t)n;
}

/* The low @bytes of @v (little-endian), without a call to memcpy(). */
static inline void store(uint8_t *dst, uint64_t v, size_t bytes)
{
	switch (bytes) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); break; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
	default: memcpy(dst, &v, 8); break;
	}
}

size_t utrace__probe_record_max(const struct utrace__probe_def *d)
{
	return d->size + (size_t)d->nr_strings * UTRACE_PROBE_STRING_MAX;
}

size_t utrace__probe_fetch(const struct utrace__probe_def *d,
			   const struct utrace_probe_regs *regs,
			   const struct utrace__probe_env *env,
			   uint8_t *rec, size_t cap, unsigned int *faults)
{
	size_t end = d->size;
	struct utrace_probe_regs after;

	if (cap < d->size)
		return 0;
	if (d->kind == 'r') {
		uint64_t ret = 0;

		if (utrace__probe_read(&ret, (uintptr_t)regs->sp, 8) != 8)
			(*faults)++;
		memcpy(rec + 8, &env->func, 8);
		memcpy(rec + 16, &ret, 8);
		/* The probe runs at the ret; the kernel's uretprobe sees the
		 * registers after it: ip the return address, the address
		 * popped off the stack (%ip, %sp, $stackN as the kernel's) */
		after = *regs;
		after.ip = ret;
		after.sp = regs->sp + 8;
		regs = &after;
	} else {
		memcpy(rec + 8, &regs->ip, 8);
	}
	for (unsigned int i = 0; i < d->nr_args; i++) {
		const struct utrace__probe_arg *a = &d->args[i];
		unsigned int n = a->count ? a->count : 1;
		size_t bytes = (size_t)a->size * n;
		bool fault = false;
		uint64_t v;

		if (a->nr_insns == 1 && a->insns[0].op == UTRACE__POP_REG && !a->bf_width &&
		    !a->count) {
			/* the common case, %REG[:TYPE]: no program to run */
			store(rec + a->offset, ((const uint64_t *)regs)[a->insns[0].imm], bytes);
			continue;
		}
		if (a->type == UTRACE__PT_STRING || a->type == UTRACE__PT_USTRING) {
			end += put_string(a, regs, env, rec, end, cap, faults);
			continue;
		}
		if (run(a, regs, env, &v, &fault)) {
			/* v is the address of the value */
			if (utrace__probe_read(rec + a->offset, (uintptr_t)v, bytes) != bytes) {
				memset(rec + a->offset, 0, bytes);
				fault = true;
			}
			memcpy(&v, rec + a->offset, bytes < 8 ? bytes : 8);
			if (bytes < 8)
				v &= (UINT64_C(1) << (bytes * 8)) - 1;
		} else if (fault) {
			v = 0;
		}
		if (fault)
			(*faults)++;
		if (a->bf_width) {
			unsigned int bits = a->size * 8u;

			v <<= 64 - bits;   /* to the top of a u64, then as the kernel */
			v <<= bits - (a->bf_width + a->bf_offset);
			v >>= 64 - a->bf_width;
		}
		if (!a->count)
			store(rec + a->offset, v, bytes);
	}
	return end;
}

