// SPDX-License-Identifier: MIT
/*
 * The one check of a dynamic probe's site (engine.h): the same rules and
 * the same words wherever a definition is taken -- utrace probe without
 * -p and utrace record --probe before the command starts, on the file
 * (tools/utrace/probe/kuprobe.c), and the process's uprobe_events
 * (utrace probe -p, the mount, the command's UTRACE_PROBES), which binds
 * it in its own mappings (lib/runtime/uprobes.c).  The kernel checks none of it: it takes a site inside an
 * instruction, past its function or a return probe anywhere, and the
 * program crashes or returns to nowhere.
 *
 *   1. the site is inside a function (a symbol with a size);
 *   2. SYMBOL+OFFS stays inside SYMBOL (else the site is in the next
 *      function, or in none);
 *   3. a return probe is at a function's entry;
 *   4. an entry probe is on an instruction the engine can run out of
 *      line (utrace__probe_decode_check()'s rules 1 and 2).
 *
 * Where the probe can go as a jump or only as a breakpoint is the
 * engine's to decide when it places it (attach.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#pragma GCC visibility push(hidden)
#include "engine.h"
#pragma GCC visibility pop

int utrace__probe_site_rules(char kind, const char *symbol, uint64_t symoff, const char *fname,
			     const uint8_t *code, uint64_t func, size_t len, uint64_t site,
			     char *msg, size_t msg_len)
{
	char why[UTRACE_PROBE_WHY_MAX] = "";
	int r;

	if (!code || !len) {
		snprintf(msg, msg_len, "Offset is not inside a function");
		return -EINVAL;
	}
	if (symbol && symoff >= len) {
		snprintf(msg, msg_len, "%s+0x%" PRIx64 " is past the end of %s (%zu bytes)",
			 symbol, symoff, symbol, len);
		return -EINVAL;
	}
	if (kind == 'r') {
		if (site == func)
			return 0;
		snprintf(msg, msg_len, "Return probe must be at a function's entry "
			 "(%s+0x%" PRIx64 " is not)", fname, site - func);
		return -EINVAL;
	}
	r = utrace__probe_decode_check(code, len, func, site, why);
	if (r < 0)
		snprintf(msg, msg_len, "Cannot probe: %s%s", fname, why);
	return r;
}
