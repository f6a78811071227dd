/* SPDX-License-Identifier: MIT */
/*
 * utrace probe: a minimal dispatch for the forms of probe-dwarf.c (-x,
 * -k).  The front end's cmd-probe.c (agent probes: utrace probe -p PID
 * DEF, -l, -d) replaces this file and calls probe_dwarf_wants() /
 * utrace_probe_dwarf_main() first.
 */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "probe-dwarf.h"

int cmd_probe(int argc, char **argv)
{
	if (probe_dwarf_wants(argc, argv) || argc < 2)
		return utrace_probe_dwarf_main(argc, argv);
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return utrace_probe_dwarf_main(argc, argv);
	fprintf(stderr, "utrace probe: this build has the -x and -k forms only; see "
		"'utrace probe --help'\n");
	return 129;
}
