/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the engine's utrace__probe_decode_check() (engine.h), so
 * that the kernel-uprobe fallback of the utrace CLI checks instruction
 * boundaries while the engine's decoder is not in this build.  It is a
 * weak symbol: the engine's own definition replaces it when both are
 * linked.  It decodes the function from its start with Zydis, as the
 * engine does, and answers only "a boundary or not" (1 is never
 * returned: the kernel places a breakpoint whatever the site).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <Zydis/Zydis.h>

#include "engine.h"

__attribute__((weak))
int utrace__probe_decode_check(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t site, char why[UTRACE_PROBE_WHY_MAX])
{
	ZydisDecoder dec;
	ZydisDecodedInstruction insn;
	size_t at = 0;

	if (site < func || site - func >= len) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "0x%" PRIx64 " is outside the function "
			 "(0x%" PRIx64 ", %zu bytes)", site, func, len);
		return -EINVAL;
	}
	if (ZYAN_FAILED(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					 ZYDIS_STACK_WIDTH_64))) {
		snprintf(why, UTRACE_PROBE_WHY_MAX, "cannot set up the x86-64 decoder");
		return -EINVAL;
	}
	while (at < len) {
		if (func + at == site)
			return 0;
		if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&dec, NULL, code + at, len - at,
							      &insn))) {
			snprintf(why, UTRACE_PROBE_WHY_MAX, "cannot decode the instruction at "
				 "0x%" PRIx64 " (offset 0x%zx of the function)", func + at, at);
			return -EINVAL;
		}
		if (site > func + at && site < func + at + insn.length) {
			snprintf(why, UTRACE_PROBE_WHY_MAX, "0x%" PRIx64 " is not an instruction "
				 "boundary: it is byte %" PRIu64 " of the %u-byte instruction at "
				 "0x%" PRIx64 " (offset 0x%zx)", site, site - func - at,
				 insn.length, func + at, at);
			return -EINVAL;
		}
		at += insn.length;
	}
	snprintf(why, UTRACE_PROBE_WHY_MAX, "0x%" PRIx64 " is past the function's last "
		 "instruction", site);
	return -EINVAL;
}
