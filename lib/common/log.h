/* SPDX-License-Identifier: MIT */
/* One-line messages on stderr for every part of utrace's libraries. */
#ifndef UTRACE_COMMON_LOG_H
#define UTRACE_COMMON_LOG_H

#include "compiler.h"

/**
 * utrace__warn - say something on stderr, as one line "utrace: ...\n"
 * @fmt: printf format, without the final newline
 *
 * One write(2), no stdio: safe where stdio's locks may be held (a traced
 * program's fork child, a signal handler's path).
 */
void utrace__warn(const char *fmt, ...) UTRACE_HIDDEN
	__attribute__((format(printf, 1, 2)));

#endif /* UTRACE_COMMON_LOG_H */
