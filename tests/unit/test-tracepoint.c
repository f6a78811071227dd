/* SPDX-License-Identifier: MIT */
/*
 * Tracepoints and probes: return codes, call order, enabled state,
 * TRACE_EVENT_FN reg/unreg, lazy evaluation of TP_CONDITION and
 * TP_fast_assign, records as the built-in probe writes them, the
 * set_event rules, and nesting from a signal handler.
 */
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

#define CREATE_TRACE_POINTS
#include "utest-events.h"

#include <utrace/utrace.h>

#include "internal.h"
#include "event.h"
#include "test.h"

int utest_cond_evals, utest_assign_evals, utest_reg_ret, utest_regs, utest_unregs;

int utest_reg(void)
{
	if (utest_reg_ret)
		return utest_reg_ret;
	utest_regs++;
	return 0;
}

void utest_unreg(void)
{
	utest_unregs++;
}

struct calls {
	int n;
	unsigned long long a[8];
	unsigned int b[8];
	int order[8];
};

static int order_counter;

static void probe1(void *data, unsigned long long a, unsigned int b)
{
	struct calls *c = data;

	if (c->n < 8) {
		c->a[c->n] = a;
		c->b[c->n] = b;
		c->order[c->n] = ++order_counter;
	}
	c->n++;
}

static void probe2(void *data, unsigned long long a, unsigned int b)
{
	probe1(data, a, b);
}

TEST(register_calls_probe_with_args_and_data)
{
	struct calls c = { 0 };

	CHECK(!trace_utest_simple_enabled());
	trace_utest_simple(1, 2);
	CHECK_INT(register_trace_utest_simple(probe1, &c), ==, 0);
	CHECK(trace_utest_simple_enabled());
	trace_utest_simple(42, 7);
	CHECK_INT(c.n, ==, 1);
	CHECK_INT(c.a[0], ==, 42);
	CHECK_INT(c.b[0], ==, 7);
	CHECK_INT(unregister_trace_utest_simple(probe1, &c), ==, 0);
	CHECK(!trace_utest_simple_enabled());
	trace_utest_simple(1, 2);
	CHECK_INT(c.n, ==, 1);
}

TEST(register_return_codes)
{
	struct calls c = { 0 }, d = { 0 };

	CHECK_INT(register_trace_utest_simple(probe1, &c), ==, 0);
	CHECK_INT(register_trace_utest_simple(probe1, &c), ==, -EEXIST);
	/* the same function with other data is another probe */
	CHECK_INT(register_trace_utest_simple(probe1, &d), ==, 0);
	CHECK_INT(unregister_trace_utest_simple(probe2, &c), ==, -ENOENT);
	CHECK_INT(unregister_trace_utest_simple(probe1, &c), ==, 0);
	CHECK_INT(unregister_trace_utest_simple(probe1, &c), ==, -ENOENT);
	CHECK_INT(unregister_trace_utest_simple(probe1, &d), ==, 0);
	CHECK_INT(utrace_tracepoint_probe_register(NULL, (utrace_probe_fn)probe1, NULL),
		  ==, -EINVAL);
	CHECK_INT(utrace_tracepoint_probe_register(&__tracepoint_utest_simple, NULL, NULL),
		  ==, -EINVAL);
}

TEST(probes_run_in_registration_order)
{
	struct calls c = { 0 };

	CHECK_INT(register_trace_utest_simple(probe2, &c), ==, 0);
	CHECK_INT(register_trace_utest_simple(probe1, &c), ==, 0);
	trace_utest_simple(5, 6);
	CHECK_INT(c.n, ==, 2);
	CHECK_INT(c.order[0], <, c.order[1]);
	CHECK_INT(unregister_trace_utest_simple(probe2, &c), ==, 0);
	trace_utest_simple(5, 6);
	CHECK_INT(c.n, ==, 3);
	CHECK(trace_utest_simple_enabled());
}

static void fn_probe(void *data, const char *s, int mode)
{
	(*(int *)data)++;
}

TEST(trace_event_fn_reg_unreg)
{
	int hits = 0, other = 0;

	CHECK_INT(register_trace_utest_fn(fn_probe, &hits), ==, 0);
	CHECK_INT(utest_regs, ==, 1);
	CHECK_INT(register_trace_utest_fn(fn_probe, &other), ==, 0);
	CHECK_INT(utest_regs, ==, 1);
	CHECK_INT(unregister_trace_utest_fn(fn_probe, &hits), ==, 0);
	CHECK_INT(utest_unregs, ==, 0);
	CHECK_INT(unregister_trace_utest_fn(fn_probe, &other), ==, 0);
	CHECK_INT(utest_unregs, ==, 1);

	/* a failing reg function refuses the probe; the event stays off */
	utest_reg_ret = -EPERM;
	CHECK_INT(register_trace_utest_fn(fn_probe, &hits), ==, -EPERM);
	CHECK(!trace_utest_fn_enabled());
	CHECK_INT(utrace_event_enable(utrace_event_find("utest", "utest_fn"), 1),
		  ==, -EPERM);
	CHECK(!utrace_event_is_enabled(utrace_event_find("utest", "utest_fn")));
	utest_reg_ret = 0;
	CHECK_INT(utrace_event_enable(utrace_event_find("utest", "utest_fn"), 1), ==, 0);
	CHECK_INT(utest_regs, ==, 2);
	CHECK_INT(utrace_event_enable(utrace_event_find("utest", "utest_fn"), 0), ==, 0);
	CHECK_INT(utest_unregs, ==, 2);
}

static void cond_probe(void *data, int v)
{
	(*(int *)data)++;
}

TEST(condition_only_evaluated_when_on)
{
	int hits = 0;

	trace_utest_cond(1);
	CHECK_INT(utest_cond_evals, ==, 0);
	CHECK_INT(register_trace_utest_cond(cond_probe, &hits), ==, 0);
	trace_utest_cond(1);
	trace_utest_cond(-1);
	CHECK_INT(utest_cond_evals, ==, 2);
	CHECK_INT(hits, ==, 1);
}

/* Records seen by the built-in probe. */
static unsigned char last_rec[UTRACE_EVENT_MAX];
static unsigned int last_size;
static int records;

static void hook(const struct utrace_event *ev, const void *rec, unsigned int size)
{
	memcpy(last_rec, rec, size);
	last_size = size;
	records++;
}

TEST(assign_only_evaluated_when_on)
{
	trace_utest_fn("x", UTEST_MODE_A);
	CHECK_INT(utest_assign_evals, ==, 0);
	utrace__set_record_hook(hook);
	CHECK_INT(utrace_set_event("utest:utest_fn"), ==, 1);
	trace_utest_fn("x", UTEST_MODE_A);
	CHECK_INT(utest_assign_evals, ==, 1);
	CHECK_INT(records, ==, 1);
}

TEST(record_layout)
{
	struct utrace_event *ev = utrace_event_find("utest", "utest_fn");
	const struct utrace_entry *ent = (const void *)last_rec;
	struct trace_event_raw_utest_fn *r = (void *)last_rec;
	char text[256];

	utrace__set_record_hook(hook);
	CHECK_INT(utrace_event_enable(ev, 1), ==, 0);
	trace_utest_fn("hello", UTEST_MODE_B);
	CHECK_INT(ent->type, ==, utrace_event_id(ev));
	CHECK_INT(ent->pid, ==, syscall(SYS_gettid));
	CHECK_INT(ent->flags, ==, 0);
	CHECK_INT(last_size, ==, sizeof(*r) + 6 + 6);
	/* __data_loc: length << 16 | offset from the record's start */
	CHECK_INT(r->__data_loc_s & 0xffff, ==, sizeof(*r));
	CHECK_INT(r->__data_loc_s >> 16, ==, 6);
	CHECK_STR((char *)last_rec + sizeof(*r), "hello");
	CHECK_INT(r->__data_loc_arr & 0xffff, ==, sizeof(*r) + 6);
	CHECK_INT(r->__data_loc_arr >> 16, ==, 6);
	CHECK_INT(utrace_event_print(ev, last_rec, text, sizeof(text)), ==, 14);
	CHECK_STR(text, "s=hello mode=B");
	/* NULL strings record as "(null)", as in the kernel */
	trace_utest_fn(NULL, 3);
	utrace_event_print(ev, last_rec, text, sizeof(text));
	CHECK_STR(text, "s=(null) mode=0x3");
}

TEST(oversized_record_is_dropped)
{
	static char big[UTRACE_EVENT_MAX + 10];

	memset(big, 'x', sizeof(big) - 1);
	utrace__set_record_hook(hook);
	CHECK_INT(utrace_set_event("utest_fn"), ==, 1);
	trace_utest_fn(big, 1);
	CHECK_INT(records, ==, 0);
	big[UTRACE_EVENT_MAX - 100] = 0;
	trace_utest_fn(big, 1);
	CHECK_INT(records, ==, 1);
}

TEST(enum_values_in_print_fmt)
{
	char *f = utrace_event_format(utrace_event_find("utest", "utest_fn"));

	CHECK(strstr(f, "__print_symbolic(REC->mode, { 10, \"A\" }, { 20, \"B\" })") != NULL);
	CHECK(strstr(f, "\tfield:__data_loc unsigned short[] arr;\toffset:16;\tsize:4;\tsigned:0;\n") != NULL);
	CHECK(strstr(f, "\tfield:__data_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;\n") != NULL);
	CHECK(strstr(f, "\tfield:int mode;\toffset:12;\tsize:4;\tsigned:1;\n") != NULL);
	free(f);
}

static int count_enabled(struct utrace_event *ev, void *arg)
{
	if (utrace_event_is_enabled(ev))
		(*(int *)arg)++;
	return 0;
}

static int nr_enabled(void)
{
	int n = 0;

	utrace_event_foreach(count_enabled, &n);
	return n;
}

TEST(set_event_rules)
{
	/* the kernel's forms */
	CHECK_INT(utrace_set_event("utest:utest_simple"), ==, 1);
	CHECK_INT(nr_enabled(), ==, 1);
	CHECK_INT(utrace_set_event("!utest:utest_simple"), ==, 1);
	CHECK_INT(nr_enabled(), ==, 0);
	CHECK_INT(utrace_set_event("utest:*"), ==, 3);
	CHECK_INT(utrace_set_event("!utest:"), ==, 3);
	CHECK_INT(nr_enabled(), ==, 0);
	CHECK_INT(utrace_set_event("*:utest_cond"), ==, 1);
	CHECK_INT(utrace_set_event(":utest_simple"), ==, 1);
	CHECK_INT(nr_enabled(), ==, 2);
	CHECK_INT(utrace_set_event("!*:*"), ==, 3);
	CHECK_INT(utrace_set_event("utest"), ==, 3);
	CHECK_INT(utrace_set_event("!utest_fn"), ==, 1);
	CHECK_INT(nr_enabled(), ==, 2);
	/* disabling what is off succeeds */
	CHECK_INT(utrace_set_event("!utest_fn"), ==, 1);
	/* no globbing, case-sensitive, unknown names */
	CHECK_INT(utrace_set_event("*"), ==, -EINVAL);
	CHECK_INT(utrace_set_event("utest*"), ==, -EINVAL);
	CHECK_INT(utrace_set_event("utest:utest_*"), ==, -EINVAL);
	CHECK_INT(utrace_set_event("UTEST"), ==, -EINVAL);
	CHECK_INT(utrace_set_event("nosuch:utest_fn"), ==, -EINVAL);
	CHECK_INT(utrace_set_event(""), ==, -EINVAL);
	CHECK_INT(utrace_set_event("!"), ==, -EINVAL);
	CHECK_INT(nr_enabled(), ==, 2);
}

/* A probe that removes itself must not deadlock. */
static void self_removing(void *data, unsigned long long a, unsigned int b)
{
	(*(int *)data)++;
	CHECK_INT(unregister_trace_utest_simple(self_removing, data), ==, 0);
}

TEST(probe_unregisters_itself)
{
	int hits = 0;

	CHECK_INT(register_trace_utest_simple(self_removing, &hits), ==, 0);
	trace_utest_simple(1, 1);
	trace_utest_simple(1, 1);
	CHECK_INT(hits, ==, 1);
	tracepoint_synchronize_unregister();
}

/* An event fired from a signal handler in the middle of another event on
 * the same thread leaves both records intact. */
static volatile int in_signal;
static unsigned char outer_rec[256], inner_rec[256];
static int nested_records;

static void nest_hook(const struct utrace_event *ev, const void *rec,
		      unsigned int size)
{
	memcpy(nested_records++ == 0 ? inner_rec : outer_rec, rec, size);
}

static void on_signal(int sig)
{
	in_signal = 1;
	trace_utest_simple(0xdead, 0xbeef);
}

static void raise_probe(void *data, const char *s, int mode)
{
	raise(SIGUSR1);
}

TEST(signal_handler_nesting)
{
	struct trace_event_raw_utest_simple *in = (void *)inner_rec;
	struct trace_event_raw_utest_fn *out = (void *)outer_rec;
	int dummy = 0;

	signal(SIGUSR1, on_signal);
	utrace__set_record_hook(nest_hook);
	CHECK_INT(utrace_set_event("utest_simple"), ==, 1);
	/* raise_probe runs before the built-in probe of utest_fn */
	CHECK_INT(register_trace_utest_fn(raise_probe, &dummy), ==, 0);
	CHECK_INT(utrace_set_event("utest_fn"), ==, 1);
	trace_utest_fn("outer", UTEST_MODE_A);
	CHECK(in_signal);
	CHECK_INT(nested_records, ==, 2);
	CHECK_INT(in->a, ==, 0xdead);
	CHECK_INT(in->b, ==, 0xbeef);
	CHECK_STR((char *)outer_rec + (out->__data_loc_s & 0xffff), "outer");
	CHECK_INT(out->mode, ==, UTEST_MODE_A);
}

TEST(strerror_names_codes)
{
	CHECK_STR(utrace_strerror(-ENOENT), "No such file or directory");
	CHECK_STR(utrace_strerror(UTRACE_ENOEVENT), "no such event");
	CHECK_STR(utrace_version(), "0.1.0");
}

/* __get_buf() never hands out NULL for a sane size, and never bytes past
 * the line: code written for the kernel writes into it unchecked. */
TEST(get_buf_never_past_the_line)
{
	char line[32];
	struct utrace_seq s;
	char *a, *b;

	utrace_seq_init(&s, line, sizeof(line));
	a = utrace_tp_seq_acquire(&s, 20);
	CHECK(a == line);
	CHECK(!s.full);
	b = utrace_tp_seq_acquire(&s, 20);           /* 12 left: spilled */
	CHECK(b != NULL);
	CHECK(b < line || b >= line + sizeof(line));
	CHECK(s.full);
	memset(b, 'x', 20);
	CHECK(utrace_tp_seq_acquire(&s, 5000) == NULL);
}

TEST_MAIN()
