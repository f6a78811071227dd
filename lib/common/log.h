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

/**
 * utrace__strerror - the message of a negative code of any utrace function
 * @err: -errno, or one of the UTRACE_E* codes of utrace/utrace.h
 *
 * What utrace_strerror() and utrace_reader_strerror() return.
 */
const char *utrace__strerror(int err) UTRACE_HIDDEN;

/* "0.1.0": what utrace_version() and utrace_reader_version() return. */
#define UTRACE__VERSION_STRING						\
	utrace__stringify(UTRACE_VERSION_MAJOR) "."			\
	utrace__stringify(UTRACE_VERSION_MINOR) "."			\
	utrace__stringify(UTRACE_VERSION_PATCH)

#endif /* UTRACE_COMMON_LOG_H */
