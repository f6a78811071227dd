/* SPDX-License-Identifier: MIT */
/*
 * A small unit-test runner (after libuv's task.h): each TEST runs in a
 * child process of its own, so a crash fails one test, not the run; the
 * output is TAP, one line per test, read by meson.  Checks print both
 * values on failure.
 */
#ifndef UTRACE_TEST_H
#define UTRACE_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*test_fn)(void);
struct test_case {
	const char *name;
	test_fn fn;
};

#define TEST_MAX 256
static struct test_case test_cases[TEST_MAX];
static int test_count;

static inline void test_add(const char *name, test_fn fn)
{
	if (test_count < TEST_MAX)
		test_cases[test_count++] = (struct test_case){ name, fn };
}

#define TEST(name)							\
	static void name(void);						\
	__attribute__((constructor)) static void test_reg_##name(void)	\
	{								\
		test_add(#name, name);					\
	}								\
	static void name(void)

#define TEST_FAIL(...)							\
	do {								\
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);		\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(1);						\
	} while (0)

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			TEST_FAIL("CHECK(%s) failed", #cond);		\
	} while (0)

#define CHECK_INT(a, op, b)						\
	do {								\
		long long a_ = (long long)(a), b_ = (long long)(b);	\
		if (!(a_ op b_))					\
			TEST_FAIL("CHECK_INT(%s %s %s) failed: %lld vs %lld", \
				  #a, #op, #b, a_, b_);			\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *a_ = (a), *b_ = (b);			\
		if (!a_ || !b_ || strcmp(a_, b_) != 0)			\
			TEST_FAIL("CHECK_STR(%s, %s) failed:\n"		\
				  "--- got:\n%s\n--- expected:\n%s\n---", \
				  #a, #b, a_ ? a_ : "(null)",		\
				  b_ ? b_ : "(null)");			\
	} while (0)

/* TEST_ONLY=name runs one test in-process, for a debugger. */
static inline int test_main(void)
{
	const char *only = getenv("TEST_ONLY");
	int i, failed = 0;

	if (only) {
		for (i = 0; i < test_count; i++)
			if (!strcmp(test_cases[i].name, only))
				test_cases[i].fn();
		return 0;
	}
	printf("1..%d\n", test_count);
	fflush(stdout);
	for (i = 0; i < test_count; i++) {
		int status = 0;
		pid_t pid = fork();

		if (pid == 0) {
			test_cases[i].fn();
			fflush(NULL);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %d - %s\n", i + 1, test_cases[i].name);
		} else {
			failed++;
			if (WIFSIGNALED(status))
				printf("not ok %d - %s (signal %d)\n", i + 1,
				       test_cases[i].name, WTERMSIG(status));
			else
				printf("not ok %d - %s (exit %d)\n", i + 1,
				       test_cases[i].name, WEXITSTATUS(status));
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

#define TEST_MAIN()							\
	int main(void)							\
	{								\
		return test_main();					\
	}

#endif /* UTRACE_TEST_H */
