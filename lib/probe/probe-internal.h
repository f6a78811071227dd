/* SPDX-License-Identifier: MIT */
/*
 * Shared inside lib/probe's in-process half (internal).
 */
#ifndef UTRACE_PROBE_INTERNAL_H
#define UTRACE_PROBE_INTERNAL_H

#include <signal.h>

#include "compiler.h"

/* Pass a signal we do not handle to the handler the program had (or the
 * default action). */
void utrace__probe_chain(const struct sigaction *old, int sig, siginfo_t *si,
			 void *uc) UTRACE_HIDDEN;

/* (Re)install the SIGSEGV/SIGBUS handlers of utrace__probe_read*(). */
void utrace__probe_read_init(void) UTRACE_HIDDEN;

#endif /* UTRACE_PROBE_INTERNAL_H */
