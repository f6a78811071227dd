/* SPDX-License-Identifier: MIT */
/*
 * utrace report -g: the call stacks a recording holds (utrace record -g's
 * ftrace:stack / ftrace:stack_ref, the stacktrace trigger's
 * ftrace:user_stack), per event, as perf report --stdio --no-children
 * prints its call graphs: for each event, each innermost function with
 * the share of the event's stacks that end there, then the tree of its
 * callers (callee first), common callers merged, each branch with its
 * share.  Frames are named by function (the process's symbols), an
 * address no symbol holds as its hex.  Internal.
 */
#ifndef UTRACE_ANALYZE_CALLGRAPH_H
#define UTRACE_ANALYZE_CALLGRAPH_H

#include <stdio.h>

#include "compiler.h"

struct utrace__tf;
struct utrace__print_opts;

/* 0, or 1 after saying why (nothing to show, a bad file, no memory). */
int utrace__callgraph_file(struct utrace__tf *tf, const struct utrace__print_opts *select,
			   FILE *out) UTRACE_HIDDEN;

#endif /* UTRACE_ANALYZE_CALLGRAPH_H */
