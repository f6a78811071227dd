/* SPDX-License-Identifier: MIT */
/*
 * What every part of utrace's libraries shares about the compiler: the one
 * spelling of "not exported from the shared library" and the sanitizer
 * hooks.  Internal: never installed.
 */
#ifndef UTRACE_COMMON_COMPILER_H
#define UTRACE_COMMON_COMPILER_H

/* Internal to a library: callable from any of its files (and, in the static
 * archives, from the tools and tests), never exported from a shared one. */
#define UTRACE_HIDDEN __attribute__((visibility("hidden")))

/* Built with ThreadSanitizer: synchronisation it cannot see (urcu's grace
 * periods, pages handed over through the recorder) is described to it with
 * these (see runtime/tracepoint.c and runtime/writer.c). */
#if defined(__SANITIZE_THREAD__)
#define UTRACE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UTRACE_TSAN 1
#endif
#endif
#ifdef UTRACE_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#endif

#endif /* UTRACE_COMMON_COMPILER_H */
