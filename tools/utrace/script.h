/* SPDX-License-Identifier: MIT */
/* The printer of `utrace script`, shared with show, pipe and mount. */
#ifndef UTRACE_TOOL_SCRIPT_H
#define UTRACE_TOOL_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../../lib/internal.h"
#include "../../lib/tracefile/reader.h"

enum out_mode { OUT_TEXT, OUT_FIELDS, OUT_JSON };

struct script_opts {
	const char *input;
	enum out_mode mode;
	struct utrace__set_event_match *ev;
	char **ev_text;
	bool *ev_matched;
	size_t nr_ev;
	bool quiet;          /* no summary lines on stderr (live buffers) */
};

/* Print the events of an open trace file; the exit status (0 or 1). */
int script_run(const struct script_opts *o, struct utrace__tf *tf, FILE *out);

#endif /* UTRACE_TOOL_SCRIPT_H */
