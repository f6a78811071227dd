/* SPDX-License-Identifier: MIT */
/*
 * Shared by the compile tests' programs (built as C and as C++).
 */
#ifndef UTC_CHECK_H
#define UTC_CHECK_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif
/* reg() calls minus unreg() calls of the sample's TRACE_EVENT_FN and
 * DEFINE_EVENT_FN events; defined by ctp.c. */
extern int utc_reg_balance;
#ifdef __cplusplus
}
#endif

static int utc_failures __attribute__((unused));

#define UTC_CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #c);		\
			utc_failures++;					\
		}							\
	} while (0)

#define UTC_CHECK_INT(a, b)						\
	do {								\
		long long a_ = (long long)(a), b_ = (long long)(b);	\
		if (a_ != b_) {						\
			fprintf(stderr, "%s:%d: check failed: %s == %s "	\
				"(%lld vs %lld)\n", __FILE__, __LINE__,	\
				#a, #b, a_, b_);			\
			utc_failures++;					\
		}							\
	} while (0)

#ifdef __cplusplus
#define UTC_LANG "C++"
#else
#define UTC_LANG "C"
#endif

#endif /* UTC_CHECK_H */
