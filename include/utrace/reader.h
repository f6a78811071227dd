/* SPDX-License-Identifier: MIT */
/*
 * utrace/reader.h - libutrace-reader, the consumer side of utrace: trace
 * files, live processes, printing, control (libutrace-reader(3)).
 *
 * A program that reads traces links this library only; it never needs
 * libutrace, which is what traced programs load.  Functions return 0 or a
 * positive count on success and a negative code on failure: -errno, or one
 * of the UTRACE_E* codes of utrace/utrace.h; utrace_reader_strerror()
 * names either.
 */
#ifndef UTRACE_READER_H
#define UTRACE_READER_H

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0", the version of the library (and of the utrace tool). */
const char *utrace_reader_version(void);

/* The message for a negative code from any utrace_reader function. */
const char *utrace_reader_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* UTRACE_READER_H */
