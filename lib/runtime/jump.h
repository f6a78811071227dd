/* SPDX-License-Identifier: MIT */
/*
 * Jump-label call sites (jump.c): every site of a tracepoint follows its
 * 'enabled' word, a 5-byte NOP or a jmp.
 */
#ifndef UTRACE_RUNTIME_JUMP_H
#define UTRACE_RUNTIME_JUMP_H

#include <stdint.h>

#include "compiler.h"

/* A tracepoint's 'enabled' changed: utrace__jump_sync() has work. */
void utrace__jump_changed(void) UTRACE_HIDDEN;

/* Bring every registered site to its tracepoint's word: on return,
 * every change made before the call is in the code. */
void utrace__jump_sync(void) UTRACE_HIDDEN;

/* Sites rewritten (NOP or jmp), and sites on the load and branch. */
void utrace__jump_stats(uint32_t *nop_sites, uint32_t *branch_sites) UTRACE_HIDDEN;

void utrace__jump_before_fork(void) UTRACE_HIDDEN;
void utrace__jump_after_fork(void) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_JUMP_H */
