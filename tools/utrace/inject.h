/* SPDX-License-Identifier: MIT */
/*
 * Attaching to a running process that never linked libutrace (issue 30
 * item 1): load libutrace.so into it with ptrace and start its agent, then
 * let it go (inject.c).  The tool's side only: it prints and it ptraces.
 */
#ifndef UTRACE_TOOL_INJECT_H
#define UTRACE_TOOL_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct utrace__ctl;

/* libutrace.so.0 for LD_PRELOAD or for loading into a process: next to a
 * build tree's utrace, next to an installed one moved elsewhere (DESTDIR),
 * where it was installed, or else the bare soname (then *found is false:
 * no file was found). */
void utrace_find_libutrace(char *buf, size_t len, bool *found);

/*
 * utrace_inject - make process 'pid' traceable: load libutrace into it
 * (unless it is loaded already) and start its agent, listening in our
 * runtime directory.  The process is stopped for the time of two calls
 * made on one of its threads, whose registers, FPU/SIMD state, signal mask
 * and interrupted system call are given back; signals that came meanwhile
 * are delivered after.  0, or -1 with one line on stderr starting with
 * 'who' ("utrace probe") naming what was wrong.  A process that runs
 * execve() meanwhile is attached to in its new program (us->execs).  'us', when not NULL,
 * receives how long the thread was borrowed, in microseconds.
 */
struct utrace_inject_times {
	double stopped;            /* from the stop used to PTRACE_DETACH */
	double dlopen;             /* of which the call of dlopen() */
	double start;              /* and the call of utrace__attach_start() */
	int retries;               /* stopped in the C library: let go, stopped again */
	bool to_caller;            /* run to its return into the program */
	int execs;                 /* it ran execve() meanwhile: made again */
};
int utrace_inject(pid_t pid, const char *who, struct utrace_inject_times *us);

/*
 * utrace_ctl_open_attach - utrace__ctl_open(), and when the process is not
 * traceable (no agent), utrace_inject() then open again (and attach again
 * when the process ran a new program in between, its agent gone with the
 * old one).  0, or -1 said.
 */
int utrace_ctl_open_attach(pid_t pid, struct utrace__ctl **out, const char *who);

/* utrace attach PID...: make processes traceable (cmds.h). */
int cmd_attach(int argc, char **argv);

#endif /* UTRACE_TOOL_INJECT_H */
