/* SPDX-License-Identifier: MIT */
/* agent.c's entry points: the control agent thread and its socket. */
#ifndef UTRACE_RUNTIME_AGENT_H
#define UTRACE_RUNTIME_AGENT_H

#include <stdbool.h>

#include "compiler.h"

/**
 * utrace__agent_start - start the agent thread, once
 *
 * Called when events have registered; nothing with UTRACE_CONTROL=0.
 *
 * Return: whether the agent runs.
 */
bool utrace__agent_start(void) UTRACE_HIDDEN;

/*
 * utrace__agent_snapshot_request - the snapshot trigger: ask the agent to
 * copy a buffer's pool (-1: the top level's, else instance inst's) now,
 * out of the caller's path (on the agent thread itself: at once)
 *
 * Async-signal-safe; one write() of a byte when no request is pending.
 */
void utrace__agent_snapshot_request(int inst) UTRACE_HIDDEN;

/* Drop the copy of a buffer (agent thread: echo 0 > snapshot, rmdir). */
void utrace__agent_snapshot_forget(int inst) UTRACE_HIDDEN;

/**
 * utrace__agent_before_fork - wait for the request being served, hold the next
 */
void utrace__agent_before_fork(void) UTRACE_HIDDEN;

/**
 * utrace__agent_after_fork_parent - let the agent serve again after fork()
 */
void utrace__agent_after_fork_parent(void) UTRACE_HIDDEN;

/**
 * utrace__agent_after_fork_child - start the child's own agent
 *
 * The parent's agent thread is not in the child; its connections are
 * closed and, if the parent had an agent, the child starts one.
 */
void utrace__agent_after_fork_child(void) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_AGENT_H */
