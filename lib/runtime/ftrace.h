/* SPDX-License-Identifier: MIT */
/*
 * The function and function_graph tracers (ftrace.c): the entry NOPs of
 * programs and libraries built with -fpatchable-function-entry=5 or
 * -pg -mfentry -mnop-mcount -mrecord-mcount, patched into calls to a
 * trampoline that records ftrace:function, or ftrace:funcgraph_entry and
 * ftrace:funcgraph_exit through a per-thread return stack.
 */
#ifndef UTRACE_RUNTIME_FTRACE_H
#define UTRACE_RUNTIME_FTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

enum utrace__tracer {
	UTRACE_TRACER_NOP,
	UTRACE_TRACER_FUNCTION,
	UTRACE_TRACER_GRAPH,
};

/**
 * utrace__ftrace_from_env - the tracer UTRACE_TRACER names, from the start
 *
 * UTRACE_TRACER (nop, function, function_graph), UTRACE_FTRACE_FILTER and
 * UTRACE_FTRACE_NOTRACE (globs, ',' or ' ' apart, '!' removes),
 * UTRACE_GRAPH_FUNCTION (the same), UTRACE_MAX_GRAPH_DEPTH (0: no limit);
 * UTRACE_FUNCTION_PROFILE=1: function_profile_enabled from the start.
 * A bad value is said once; the program runs on.
 */
void utrace__ftrace_from_env(void) UTRACE_HIDDEN;

/**
 * utrace__ftrace_set_tracer - switch the current tracer
 * @name: "nop", "function" or "function_graph" (spaces around allowed)
 *
 * Return: 0, -EINVAL for another name, -EPERM when the code cannot be
 * written (said through utrace__warn()).
 */
int utrace__ftrace_set_tracer(const char *name) UTRACE_HIDDEN;

/* The current tracer's name. */
const char *utrace__ftrace_tracer_name(void) UTRACE_HIDDEN;

/**
 * utrace__ftrace_set_list - set_ftrace_filter, set_ftrace_notrace or
 * set_graph_function
 * @which: 0 filter, 1 notrace, 2 graph function
 * @text: the globs, one a line or ',' / ' ' apart; "!glob" removes
 * @append: keep the globs already there (the kernel's ">>")
 *
 * Return: 0, or -EINVAL when a glob matches no function (the list is as
 * before).  The sites follow at once when a tracer is on.
 */
int utrace__ftrace_set_list(int which, const char *text, int append) UTRACE_HIDDEN;

/**
 * utrace__ftrace_available - available_filter_functions' text
 * @len: its length, filled in
 *
 * Return: malloc'd "name\n" or "name [module]\n" lines, NULL on no memory.
 */
char *utrace__ftrace_available(size_t *len) UTRACE_HIDDEN;

/**
 * utrace__ftrace_control - a function tracer file (UTRACE_CTL_FTRACE)
 * @file: enum utrace_ctl_ftrace_file
 * @action: enum utrace_ctl_ftrace_action
 * @pl, @plen: what a write wrote
 * @text: set to the malloc'd text of a read
 *
 * Return: 0, or -errno as the kernel's file answers (-EINVAL: a tracer
 * or glob that is not there, a bad depth).
 */
int utrace__ftrace_control(uint32_t file, int action, const char *pl, size_t plen,
			   char **text) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_FTRACE_H */
