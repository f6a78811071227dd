/* SPDX-License-Identifier: MIT */
/* The exporters of `utrace convert`, one convert-<format>.c each. */
#ifndef UTRACE_TOOL_CONVERT_H
#define UTRACE_TOOL_CONVERT_H

#include "file-reader.h"

/*
 * Write what can be read of the open trace file 'tf' to 'out' as a
 * trace-cmd trace.dat (version 7, not compressed; docs/trace-dat-export.md).
 * Says what is wrong on stderr; returns the exit status (0 or 1).
 */
int convert_tracedat(struct utrace__tf *tf, const char *out);

#endif /* UTRACE_TOOL_CONVERT_H */
