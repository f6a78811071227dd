/* SPDX-License-Identifier: MIT */
/*
 * utrace's format files, byte for byte against a real kernel's, for the
 * same events declared with the same macros (tests/data/kernel-events.h);
 * only the ID line may differ.  Also: two events headers in one file.
 */
#define CREATE_TRACE_POINTS
#include "kernel-events.h"
/* A second events header in the same file, as the kernel allows. */
#include "kernel-irq.h"

#include <utrace/utrace.h>

#include "test.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (!f)
		TEST_FAIL("cannot open '%s'", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		TEST_FAIL("cannot read '%s'", path);
	fclose(f);
	return s;
}

/* Blank the number of the "ID: n" line. */
static void drop_id(char *s)
{
	char *p = strstr(s, "\nID: ");

	if (!p)
		TEST_FAIL("no ID line in:\n%s", s);
	p += 5;
	char *e = strchr(p, '\n');
	memmove(p, e, strlen(e) + 1);
}

static void check_format(const char *sys, const char *name)
{
	char path[512];
	struct utrace_event *ev = utrace_event_find(sys, name);
	char *mine, *kernel;

	CHECK(ev != NULL);
	snprintf(path, sizeof(path), "%s/kernel-format/%s_%s.format",
		 TEST_DATA_DIR, sys, name);
	kernel = slurp(path);
	mine = utrace_event_format(ev);
	CHECK(mine != NULL);
	drop_id(kernel);
	drop_id(mine);
	CHECK_STR(mine, kernel);
	free(mine);
	free(kernel);
}

TEST(format_sched_switch)
{
	check_format("sched", "sched_switch");
}

TEST(format_sched_wakeup)
{
	check_format("sched", "sched_wakeup");
}

TEST(format_sched_process_fork)
{
	check_format("sched", "sched_process_fork");
}

TEST(format_sched_process_exec)
{
	check_format("sched", "sched_process_exec");
}

TEST(format_irq_handler_entry)
{
	check_format("irq", "irq_handler_entry");
}

TEST(format_id_line_is_the_event_id)
{
	struct utrace_event *ev = utrace_event_find("irq", "irq_handler_entry");
	char want[64], *mine = utrace_event_format(ev);

	snprintf(want, sizeof(want), "name: irq_handler_entry\nID: %d\n",
		 utrace_event_id(ev));
	CHECK(strncmp(mine, want, strlen(want)) == 0);
	free(mine);
}

TEST(ids_are_distinct)
{
	const char *names[] = { "sched_switch", "sched_wakeup",
				"sched_process_fork", "sched_process_exec" };
	int ids[4], i, j;

	for (i = 0; i < 4; i++) {
		ids[i] = utrace_event_id(utrace_event_find("sched", names[i]));
		CHECK_INT(ids[i], >, 0);
		for (j = 0; j < i; j++)
			CHECK_INT(ids[i], !=, ids[j]);
	}
}

TEST_MAIN()
