/* SPDX-License-Identifier: MIT */
/*
 * The compiled TP_printk against libtraceevent: for records of every
 * event of the tutorial header and of the kernel-copy headers, the text
 * utrace prints must equal what libtraceevent prints from the event's
 * format text and the same record bytes.  Every format must parse.
 */
#include <stdarg.h>

#define CREATE_TRACE_POINTS
#include "sample-trace.h"
#include "kernel-events.h"
#include "kernel-irq.h"

#include <event-parse.h>
#include <trace-seq.h>
#include <utrace/utrace.h>

#include "internal.h"
#include "event.h"
#include "tep-quirks.h"
#include "test.h"

int sample_trace_reg(void)
{
	return 0;
}

void sample_trace_unreg(void)
{
}

static struct tep_handle *tep;
static int compared, parsed;

static int parse_cb(struct utrace_event *ev, void *arg)
{
	char *fmt = utrace_event_format(ev);

	(void)arg;
	CHECK(fmt != NULL);
	if (tep_parse_event(tep, fmt, strlen(fmt), utrace_event_system(ev)) != 0)
		TEST_FAIL("libtraceevent cannot parse the format of %s:\n%s",
			  utrace_event_name(ev), fmt);
	free(fmt);
	parsed++;
	return 0;
}

static void setup(void)
{
	tep = tep_alloc();
	CHECK(tep != NULL);
	tep_set_long_size(tep, sizeof(long));
	tep_set_page_size(tep, 4096);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	utrace_event_foreach(parse_cb, NULL);
}

/* libtraceevent 1.7.1's differences from the kernel: tep-quirks.h.  Records
 * it prints differently are left out of the comparison, and counted. */
static int skipped;

static void hook(const struct utrace_event *ev, const void *rec,
		 unsigned int size)
{
	if (tep_quirk_negative_field(ev, rec)) {
		skipped++;
		return;
	}

	char mine[8192];
	struct tep_record r;
	struct tep_event *te;
	struct trace_seq s;

	memset(&r, 0, sizeof(r));
	r.data = (void *)(uintptr_t)rec;
	r.size = (int)size;
	te = tep_find_event(tep, utrace_event_id(ev));
	if (!te)
		TEST_FAIL("libtraceevent does not know event id %d (%s)",
			  utrace_event_id(ev), utrace_event_name(ev));
	trace_seq_init(&s);
	tep_print_event(tep, &s, &r, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&s);
	utrace_event_print(ev, rec, mine, sizeof(mine));
	if (TEP_VERSION < 10804)
		tep_quirk_old_array(mine);
	if (strcmp(mine, s.buffer) != 0)
		TEST_FAIL("%s prints differently:\n  utrace:         '%s'\n"
			  "  libtraceevent:  '%s'", utrace_event_name(ev),
			  mine, s.buffer);
	trace_seq_destroy(&s);
	compared++;
}

static void fire_foo_bar(const char *foo, int bar, const int *lst,
			 const char *string, const unsigned long *mask,
			 int nr_bits, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	trace_foo_bar(foo, bar, lst, string, mask, nr_bits, fmt, &va);
	va_end(va);
}

TEST(every_format_parses)
{
	setup();
	/* the sample's 7 and 5, and the runtime's ftrace:print and
	 * ftrace:raw_data (trace_marker) */
	CHECK_INT(parsed, ==, 7 + 5 + 2);
}

TEST(sample_events_print_as_libtraceevent)
{
	static const int list[] = { 1, 2, 3, 0 }, empty[] = { 0 };
	unsigned long mask[3] = { 0x5UL, 0xfffffffffUL, 0 };
	unsigned char bytes[4] = { 0xde, 0xad, 0xbe, 0xef };
	int vals[] = { 0, 1, 2, 3, 4, 5, 7, -1, 8, 1000, -2147483647 - 1 };
	size_t i;

	setup();
	utrace__set_record_hook(hook);
	CHECK_INT(utrace_set_event("sample-trace:*"), ==, 7);
	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		int v = vals[i];
		struct sample_point pt = { v, -(v % 1000) };

		fire_foo_bar("hello", v, list, "a string", mask, 1 + (int)i * 13,
			     "vstring %d %s", v, "x");
		fire_foo_bar("0123456789abc", v, empty, NULL, mask, 0, "%s", "");
		trace_foo_bar_with_cond(i ? "cond" : NULL, v);
		trace_foo_bar_with_fn(i % 2 ? "function" : "", v);
		trace_foo_with_template_simple("simple", v, pt, bytes);
		trace_foo_with_template_cond("cond", v, pt, bytes);
		trace_foo_with_template_fn("fn", v, pt, bytes);
		trace_foo_with_template_print("print", v, pt, bytes);
	}
	CHECK_INT(compared, >=, 40);
	CHECK_INT(skipped, <=, 40);
}

TEST(kernel_events_print_as_libtraceevent)
{
	long states[] = { 0, 1, 2, 3, 0x40, 0x80, 0x100, 0x7f, 0x81 };
	size_t i;

	setup();
	utrace__set_record_hook(hook);
	CHECK_INT(utrace_set_event("sched"), ==, 4);
	CHECK_INT(utrace_set_event("irq:irq_handler_entry"), ==, 1);
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		trace_sched_switch("bash", 100 + (int)i, 120, states[i],
				   "swapper/1", 0, 120);
		trace_sched_wakeup("a-very-long-task-name", (int)i, 100, (int)i);
		trace_sched_process_fork("parent", 1, "child", 2 + (int)i);
		trace_sched_process_exec("/usr/bin/true", 5, 5);
		trace_irq_handler_entry((int)i, "eth0");
	}
	CHECK_INT(compared, ==, 45);
}

TEST_MAIN()
