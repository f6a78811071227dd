/* SPDX-License-Identifier: MIT */
/*
 * utrace probe's DWARF and kernel-fallback forms (probe-dwarf.c):
 *   utrace probe -x BINARY --funcs [FILTER] | --vars FUNC[:LINE|+OFFS]
 *                | --line FUNC | [--dry-run] PERF-STYLE-DEFINITION...
 *   utrace probe -k [-p PID] [-x BINARY] [--dry-run] DEFINITION...
 *   utrace probe -k -d [GRP/]EVENT...
 * cmd-probe.c hands argv over when probe_dwarf_wants() says so (and sends
 * what -x -p translates: this file does not call back into it).
 */
#ifndef UTRACE_TOOL_PROBE_DWARF_H
#define UTRACE_TOOL_PROBE_DWARF_H

#include <stdbool.h>
#include <stddef.h>

/* Whether argv (after "probe") asks for one of these forms: -x, -k,
 * --funcs, --vars, --line (and their short forms -F -V -L). */
bool probe_dwarf_wants(int argc, char **argv);

/* -x BINARY -p PID DEFINITION...: the raw definitions for the process's
 * agent, which cmd-probe.c sends as 'utrace probe -p PID RAW...' would. */
struct probe_dwarf_raw {
	long pid;
	char **raw;     /* nr malloc()ed strings (free each and the array) */
	int nr;
};

/* Run one of these forms: argv[0] is "probe"; the exit status.  The -x -p
 * form leaves its raw definitions in *agent (agent->raw set, status 0). */
int utrace_probe_dwarf_main(int argc, char **argv, struct probe_dwarf_raw *agent);

/*
 * perf-style definitions on binary to raw ones in utrace's syntax
 * ("p:probe_prog/add /path/prog:add+0x4 a=%di:s32"), for utrace probe -p
 * PID -x BINARY DEF and utrace record --probe: *raw gets nr malloc'ed
 * strings (free each and the array).  0, or 1 after saying why on stderr
 * ("WHO: ...").
 */
int probe_dwarf_defs(const char *who, const char *binary, char *const *defs, size_t nr,
		     char ***raw);

/* The help text of these forms (for utrace probe --help). */
extern const char probe_dwarf_help[];

#endif /* UTRACE_TOOL_PROBE_DWARF_H */
