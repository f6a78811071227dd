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

/* The registry lock around one trigger call, as the agent holds it. */
static int trig(struct utrace_event *ev, const char *cmd)
{
	char *log = NULL;
	int r;

	utrace__registry_lock();
	r = utrace__trigger_write(ev, -1, cmd, strlen(cmd), &log);
	utrace__registry_unlock();
	if (log)
		TEST_FAIL("%s: %s", cmd, log);
	return r;
}

/* dlib loaded: its event, and its dlib_fire in *fire. */
static struct utrace_event *open_hello(void **h, int (**fire)(int))
{
	struct utrace_event *ev;

	*h = open_lib();
	ev = utrace_event_find("dlib", "dlib_hello");
	if (!ev)
		TEST_FAIL("dlib_hello is not registered");
	*(void **)fire = dlsym(*h, "dlib_fire");
	return ev;
}

static char *trig_text(struct utrace_event *ev, bool hist)
{
	char *text;

	utrace__registry_lock();
	text = hist ? utrace__trigger_hist_text(ev, -1) : utrace__trigger_text(ev, -1);
	utrace__registry_unlock();
	return text;
}

/* An unloaded event's triggers go with it, and so do those that point
 * at it (enable_event): nothing is left that points into the library. */
TEST(dlclose_with_triggers)
{
	int (*fire)(int);
	char *text;
	void *h;
	struct utrace_event *ev = open_hello(&h, &fire);

	CHECK_INT(trig(ev, "hist:keys=n"), ==, 0);
	CHECK_INT(trig(ev, "enable_event:dlib:dlib_hello:2"), ==, 0);
	CHECK(utrace__tracing_off & UTRACE_TRACING_TRIGGERS);
	fire(3);
	text = trig_text(ev, true);
	CHECK(text && strstr(text, "    Hits: 3\n"));
	free(text);
	text = trig_text(ev, false);
	CHECK(text && strstr(text, "enable_event:dlib:dlib_hello:count=1\n"));
	free(text);
	CHECK_INT(dlclose(h), ==, 0);
	CHECK(!(utrace__tracing_off & UTRACE_TRACING_TRIGGERS));

	ev = open_hello(&h, &fire);
	text = trig_text(ev, false);
	CHECK(text && !strncmp(text, "# Available triggers:", 21));
	free(text);
	CHECK_INT(dlclose(h), ==, 0);
}

/* enable_hist/disable_hist on the event itself: a paused hist counts
 * nothing; the count is taken at each firing (the kernel's
 * hist_enable_count_trigger()); they go with the library. */
TEST(dlclose_with_hist_switch)
{
	int (*fire)(int);
	char *text;
	void *h;
	struct utrace_event *ev = open_hello(&h, &fire);

	CHECK_INT(trig(ev, "hist:keys=n"), ==, 0);
	CHECK_INT(trig(ev, "disable_hist:dlib:dlib_hello:2"), ==, 0);
	CHECK_INT(trig(ev, "enable_hist:dlib:dlib_hello"), ==, -EEXIST);
	CHECK_INT(trig(ev, "enable_hist:dlib:nosuch"), ==, -EINVAL);
	CHECK_INT(trig(ev, "enable_hist:dlib_hello"), ==, -EINVAL);
	/* unfiltered, it runs before the hist: the first event is not counted */
	fire(3);
	text = trig_text(ev, false);
	CHECK(text && !strcmp(text, "disable_hist:dlib:dlib_hello:count=0\n"
				    "hist:keys=n:vals=hitcount:sort=hitcount:size=2048 [paused]\n"));
	free(text);
	text = trig_text(ev, true);
	CHECK(text && strstr(text, "    Hits: 0\n"));
	free(text);
	CHECK_INT(trig(ev, "!enable_hist:dlib:dlib_hello"), ==, 0);
	/* filtered, after the record: n = 1 runs it, n = 2 is counted */
	CHECK_INT(trig(ev, "enable_hist:dlib:dlib_hello:5 if n == 1"), ==, 0);
	fire(3);
	text = trig_text(ev, true);
	CHECK(text && strstr(text, "{ n:          2 } hitcount:          1\n") &&
	      strstr(text, "    Hits: 1\n"));
	free(text);
	text = trig_text(ev, false);
	CHECK(text && !strncmp(text, "enable_hist:dlib:dlib_hello:count=4 if n == 1\n", 46));
	free(text);
	CHECK_INT(dlclose(h), ==, 0);
	CHECK(!(utrace__tracing_off & UTRACE_TRACING_TRIGGERS));
}

TEST_MAIN()
