// SPDX-License-Identifier: MIT
/*
 * The jump targets of an object (lib/probe/targets.h; issue 27 item 2):
 * what a jump placed at a probe must not cover.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "targets.h"
#include "test.h"

/* into() jumps to covered+4, from outside covered (t3000's program) */
int covered(int x);
int into(int x);
__asm__(".text\n"
	".globl covered\n"
	".type covered, @function\n"
	"covered:\n"
	"	mov %edi, %eax\n"
	"	inc %eax\n"
	".Linto:\n"
	"	add $2, %eax\n"
	"	ret\n"
	".size covered, .-covered\n"
	".globl into\n"
	".type into, @function\n"
	"into:\n"
	"	lea 100(%rdi), %eax\n"
	"	jmp .Linto\n"
	".size into, .-into\n"
	".globl plain\n"
	".type plain, @function\n"
	"plain:\n"
	"	mov %edi, %eax\n"
	"	inc %eax\n"
	"	add $2, %eax\n"
	"	ret\n"
	".size plain, .-plain\n");
int plain(int x);

static int (*volatile covered_p)(int) = covered;
static int (*volatile plain_p)(int) = plain;

TEST(a_jump_from_another_function_is_a_target)
{
	const struct utrace__probe_targets *t, *again;
	char why[256] = "";
	uint64_t bias;
	uintptr_t c = (uintptr_t)covered_p, p = (uintptr_t)plain_p;

	t = utrace__probe_targets_at(c, &bias, why, sizeof(why));
	if (!t)
		TEST_FAIL("no targets for this program: %s", why);
	CHECK_INT(utrace__probe_targets_inside(t, c - bias, c - bias + 7, why, sizeof(why)), ==, 1);
	CHECK_STR(why, "+0x4 is the target of the jump at into+0x3");
	/* the first byte is no reason, nor what is past the range */
	CHECK_INT(utrace__probe_targets_inside(t, c - bias, c - bias + 4, why, sizeof(why)), ==, 0);
	CHECK_INT(utrace__probe_targets_inside(t, p - bias, p - bias + 7, why, sizeof(why)), ==, 0);
	/* the next function's symbol is one */
	CHECK_INT(utrace__probe_targets_inside(t, c - bias, c - bias + 9, why, sizeof(why)), ==, 1);
	/* cached: the same set */
	again = utrace__probe_targets_at(p, &bias, why, sizeof(why));
	CHECK(again == t);
	CHECK_INT(covered_p(1) + plain_p(1), ==, 8);
}

static const char *find_lib(const char *name, char *path, size_t len)
{
	FILE *m = fopen("/proc/self/maps", "re");
	char line[4096];

	*path = 0;
	while (m && fgets(line, sizeof(line), m)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, name)) {
			p[strcspn(p, "\n")] = 0;
			snprintf(path, len, "%s", p);
			break;
		}
	}
	if (m)
		fclose(m);
	return *path ? path : NULL;
}

/* glibc's mempcpy (and the other entries of the memcpy family) jump
 * into memcpy's body; with the detached debug symbols the message names
 * the functions */
TEST(libc_has_targets_of_every_kind)
{
	struct utrace__probe_targets *t;
	char path[4096], why[256];
	int fd;

	CHECK(find_lib("/libc.so", path, sizeof(path)));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_INT(utrace__probe_targets_load(fd, &t, why, sizeof(why)), ==, 0);
	close(fd);
	fprintf(stderr, "# %s: %zu targets: %zu branches, %zu calls, %zu addresses, "
		"%zu symbols, %zu FDEs, %zu landing pads\n", path, utrace__probe_targets_count(t),
		utrace__probe_targets_kind(t, UTRACE_TARGET_BRANCH),
		utrace__probe_targets_kind(t, UTRACE_TARGET_CALL),
		utrace__probe_targets_kind(t, UTRACE_TARGET_ADDR),
		utrace__probe_targets_kind(t, UTRACE_TARGET_SYMBOL),
		utrace__probe_targets_kind(t, UTRACE_TARGET_FDE),
		utrace__probe_targets_kind(t, UTRACE_TARGET_LANDING));
	CHECK_INT(utrace__probe_targets_kind(t, UTRACE_TARGET_BRANCH), >, 10000);
	CHECK_INT(utrace__probe_targets_kind(t, UTRACE_TARGET_CALL), >, 1000);
	CHECK_INT(utrace__probe_targets_kind(t, UTRACE_TARGET_SYMBOL), >, 1000);
	CHECK_INT(utrace__probe_targets_kind(t, UTRACE_TARGET_FDE), >, 1000);
	/* (libc's C code built with -fexceptions: cleanups of pthread_cancel) */
	CHECK_INT(utrace__probe_targets_kind(t, UTRACE_TARGET_LANDING), >, 0);
	utrace__probe_targets_free(t);
}

TEST(a_cxx_library_has_landing_pads)
{
	static const char *const paths[] = { "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
					     "/lib/x86_64-linux-gnu/libstdc++.so.6" };
	struct utrace__probe_targets *t;
	char why[256];
	int fd = -1;

	for (size_t i = 0; i < 2 && fd < 0; i++)
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "# skipped: no libstdc++.so.6 here\n");
		return;
	}
	CHECK_INT(utrace__probe_targets_load(fd, &t, why, sizeof(why)), ==, 0);
	close(fd);
	fprintf(stderr, "# libstdc++: %zu targets, %zu landing pads\n",
		utrace__probe_targets_count(t), utrace__probe_targets_kind(t, UTRACE_TARGET_LANDING));
	CHECK_INT(utrace__probe_targets_kind(t, UTRACE_TARGET_LANDING), >, 1000);
	utrace__probe_targets_free(t);
}

TEST(not_an_elf_file_is_refused)
{
	struct utrace__probe_targets *t;
	char why[256] = "";
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_INT(utrace__probe_targets_load(fd, &t, why, sizeof(why)), ==, -EINVAL);
	CHECK(t == NULL);
	CHECK_STR(why, "not an x86-64 ELF file");
	close(fd);
}

TEST_MAIN()
