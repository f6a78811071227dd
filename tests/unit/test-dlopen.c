/* SPDX-License-Identifier: MIT */
/*
 * Events of a library opened with dlopen(): registered by its constructor,
 * switched on and recorded, gone after dlclose(), back with the same id
 * after a second dlopen().  DLIB_PATH is a build of dlib.c that takes its
 * utrace symbols from this executable.
 */
#include <dlfcn.h>

#include <utrace/utrace.h>

#include "internal.h"
#include "event.h"
#include "instance.h"
#include "trigger.h"
#include "writer.h"
#include "test.h"

static int records, last_n;
static char last_who[32];

static void hook(const struct utrace_event *ev, const void *rec, unsigned int size)
{
	const int *n = (const int *)((const char *)rec + 8);
	const unsigned int *loc = (const unsigned int *)((const char *)rec + 12);

	records++;
	last_n = *n;
	snprintf(last_who, sizeof(last_who), "%s", (const char *)rec + (*loc & 0xffff));
}

static void *open_lib(void)
{
	void *h = dlopen(DLIB_PATH, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		TEST_FAIL("dlopen: %s", dlerror());
	return h;
}

TEST(dlopen_fire_dlclose_dlopen)
{
	int (*fire)(int);
	struct utrace_event *ev;
	void *h;
	int id;

	utrace__set_record_hook(hook);
	CHECK(utrace_event_find("dlib", "dlib_hello") == NULL);
	h = open_lib();
	ev = utrace_event_find("dlib", "dlib_hello");
	CHECK(ev != NULL);
	id = utrace_event_id(ev);
	CHECK_INT(utrace_set_event("dlib:*"), ==, 1);
	*(void **)&fire = dlsym(h, "dlib_fire");
	CHECK(fire != NULL);
	fire(3);
	CHECK_INT(records, ==, 3);
	CHECK_INT(last_n, ==, 2);
	CHECK_STR(last_who, "dlib");
	CHECK_INT(dlclose(h), ==, 0);

	/* unloaded: not listed, and nothing points into it */
	CHECK(utrace_event_find("dlib", "dlib_hello") == NULL);
	CHECK_INT(utrace_set_event("dlib:*"), ==, -EINVAL);

	h = open_lib();
	ev = utrace_event_find("dlib", "dlib_hello");
	CHECK(ev != NULL);
	CHECK_INT(utrace_event_id(ev), ==, id);
	/* a new load starts switched off, as a new kernel module does */
	CHECK(!utrace_event_is_enabled(ev));
	*(void **)&fire = dlsym(h, "dlib_fire");
	fire(1);
	CHECK_INT(records, ==, 3);
	CHECK_INT(utrace_event_enable(ev, 1), ==, 0);
	fire(2);
	CHECK_INT(records, ==, 5);
	/* dlclose with the event still on */
	CHECK_INT(dlclose(h), ==, 0);
	CHECK(utrace_event_find("dlib", "dlib_hello") == NULL);
}

TEST(many_cycles)
{
	int i;

	utrace__set_record_hook(hook);
	for (i = 0; i < 50; i++) {
		void *h = open_lib();
		int (*fire)(int);

		CHECK_INT(utrace_set_event("dlib_hello"), ==, 1);
		*(void **)&fire = dlsym(h, "dlib_fire");
		fire(1);
		CHECK_INT(dlclose(h), ==, 0);
	}
	CHECK_INT(records, ==, 50);
}

/* An unloaded event's triggers go with it, and so do those that point
 * at it (enable_event): nothing is left that points into the library. */
TEST(dlclose_with_triggers)
{
	int (*fire)(int);
	struct utrace_event *ev;
	char *log = NULL, *text;
	void *h = open_lib();

	ev = utrace_event_find("dlib", "dlib_hello");
	CHECK(ev != NULL);
	utrace__registry_lock();
	CHECK_INT(utrace__trigger_write(ev, "hist:keys=n", 11, &log), ==, 0);
	CHECK_INT(utrace__trigger_write(ev, "enable_event:dlib:dlib_hello:2", 30, &log), ==, 0);
	utrace__registry_unlock();
	CHECK(log == NULL);
	CHECK(utrace__tracing_off & UTRACE_TRACING_TRIGGERS);
	*(void **)&fire = dlsym(h, "dlib_fire");
	fire(3);
	utrace__registry_lock();
	text = utrace__trigger_hist_text(ev);
	utrace__registry_unlock();
	CHECK(text && strstr(text, "    Hits: 3\n"));
	free(text);
	utrace__registry_lock();
	text = utrace__trigger_text(ev);
	utrace__registry_unlock();
	CHECK(text && strstr(text, "enable_event:dlib:dlib_hello:count=1\n"));
	free(text);
	CHECK_INT(dlclose(h), ==, 0);
	CHECK(!(utrace__tracing_off & UTRACE_TRACING_TRIGGERS));

	h = open_lib();
	ev = utrace_event_find("dlib", "dlib_hello");
	CHECK(ev != NULL);
	utrace__registry_lock();
	text = utrace__trigger_text(ev);
	utrace__registry_unlock();
	CHECK(text && !strncmp(text, "# Available triggers:", 21));
	free(text);
	CHECK_INT(dlclose(h), ==, 0);
}

TEST_MAIN()
