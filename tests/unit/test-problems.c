/* SPDX-License-Identifier: MIT */
/*
 * What the libraries say (lib/common/problems.c): nothing on stderr; the
 * program's printer gets each text whole, in order; without a printer the
 * texts are kept for the caller; "the first problem, then a count".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "problems.h"
#include "test.h"

static char printed[4096];

static void printer(const char *text)
{
	strncat(printed, text, sizeof(printed) - strlen(printed) - 1);
}

/* stderr into a temporary file, to see that nothing was written there */
static int stderr_to_file(char *path, size_t len)
{
	int fd, saved = dup(2);

	snprintf(path, len, "/tmp/utrace-test-problems-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0 && saved >= 0);
	dup2(fd, 2);
	close(fd);
	return saved;
}

static long stderr_back(int saved, const char *path)
{
	FILE *f;
	long n;

	dup2(saved, 2);
	close(saved);
	f = fopen(path, "r");
	CHECK(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	unlink(path);
	return n;
}

TEST(kept_without_printer)
{
	struct utrace__problems p = { .max = 2 };
	char path[64];
	int saved = stderr_to_file(path, sizeof(path));
	char *k;

	utrace__say("utrace stat: %s\n", "one");
	utrace__problem(&p, "bad record at %d", 1);
	utrace__problem(&p, "bad record at %d", 2);
	utrace__problem(&p, "bad record at %d", 3);
	utrace__problems_count(&p, 4);
	utrace__problems_end(&p, "x.dat", "left out");
	CHECK_INT(stderr_back(saved, path), ==, 0);
	CHECK_INT(p.count, ==, 7);
	k = utrace__said_take();
	CHECK_STR(k, "utrace stat: one\n"
		  "utrace: bad record at 1\n"
		  "utrace: bad record at 2\n"
		  "utrace: 'x.dat': 5 more problems: left out\n");
	free(k);
	CHECK(utrace__said_take() == NULL);
}

TEST(printer_in_order)
{
	struct utrace__problems p = { 0 }, quiet = { .quiet = true };

	utrace__set_printer(printer);
	utrace__say("utrace: first\n  second line\n");
	utrace__problem(&p, "%s", "a problem");
	utrace__problem(&p, "%s", "counted only");
	utrace__problem(&quiet, "%s", "never said");
	utrace__problems_end(&p, "f", "gone");
	utrace__problems_end(&quiet, "f", "gone");
	utrace__set_printer(NULL);
	CHECK_STR(printed, "utrace: first\n  second line\n"
		  "utrace: a problem\n"
		  "utrace: 'f': 1 more problems: gone\n");
	CHECK(utrace__said_take() == NULL);
}

TEST(kept_is_bounded)
{
	char line[1000];
	char *k;
	int i;

	memset(line, 'x', sizeof(line) - 2);
	line[sizeof(line) - 2] = '\n';
	line[sizeof(line) - 1] = 0;
	for (i = 0; i < 100; i++)
		utrace__say("%s", line);
	k = utrace__said_take();
	CHECK(k != NULL);
	CHECK_INT(strlen(k), <=, 65536);
	CHECK_INT(strlen(k), >=, 60000);
	free(k);
}

TEST_MAIN()
