/* SPDX-License-Identifier: MIT */
/*
 * `utrace report` on the function tracers' events (fprofile.c): per
 * function, its calls and, from function_graph's entries and exits, its
 * total and self time, as uftrace report prints them.  Internal to the
 * tool.
 */
#ifndef UTRACE_ANALYZE_FPROFILE_H
#define UTRACE_ANALYZE_FPROFILE_H

#include <stdio.h>

#include "compiler.h"
#include "file-reader.h"

/**
 * utrace__fprofile_file - the function table of a trace file
 * @tf: the open file
 * @out: where the table goes
 *
 * Return: 1 when the file has function tracer events (the table was
 * printed), 0 when it has none (nothing printed), -ENOMEM.
 */
int utrace__fprofile_file(struct utrace__tf *tf, FILE *out) UTRACE_HIDDEN;

#endif /* UTRACE_ANALYZE_FPROFILE_H */
