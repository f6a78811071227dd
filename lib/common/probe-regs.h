/* SPDX-License-Identifier: MIT */
/*
 * The registers a probe's handler gets (lib/probe, the engine) and a
 * fetch program reads (probe.h, the uprobe_events language): here, below
 * both, so that lib/common includes nothing of the folders above it.
 */
#ifndef UTRACE_COMMON_PROBE_REGS_H
#define UTRACE_COMMON_PROBE_REGS_H

#include <stdint.h>

/*
 * The registers at the probed instruction, before it runs.  Names as the
 * kernel's x86-64 pt_regs (%REG fetchargs use them: ax bx cx dx si di bp
 * sp r8..r15 ip flags).
 */
struct utrace_probe_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	uint64_t ax, cx, dx, si, di;
	uint64_t ip;     /* the probed address */
	uint64_t flags;
	uint64_t sp;     /* rsp as it was at the probed instruction */
};

#endif /* UTRACE_COMMON_PROBE_REGS_H */
