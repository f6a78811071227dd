/* SPDX-License-Identifier: MIT */
/*
 * `utrace hist` (histfile.c): hist triggers run on a recording, printed
 * as the kernel's events/<sys>/<event>/hist file.  The language, the
 * table and the printer are lib/common/hist.c's.  Internal to the reader
 * library.
 */
#ifndef UTRACE_READER_HISTFILE_H
#define UTRACE_READER_HISTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler.h"
#include "file-reader.h"

struct utrace__histfile_opts {
	const char *const *events;       /* of each trigger: "system:name" or "name" */
	char *const *triggers;           /* "hist:keys=...", in the order written */
	size_t nr_triggers;
	char *const *synth;              /* synthetic_events lines */
	size_t nr_synth;
	const char *(*syscall)(uint64_t nr);   /* .syscall's names, or NULL */
};

/* The worker of `utrace hist`: the hist file of the event on out, the
 * problems on stderr; returns the exit status (0 or 1). */
int utrace__hist_file(const struct utrace__histfile_opts *o, struct utrace__tf *tf, FILE *out)
	UTRACE_HIDDEN;

#endif /* UTRACE_READER_HISTFILE_H */
