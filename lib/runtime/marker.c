/* SPDX-License-Identifier: MIT */
/*
 * ftrace's own events, which trace_marker and trace_marker_raw record:
 * "ftrace:print" and "ftrace:raw_data", with the kernel's formats
 * (kernel/trace/trace_entries.h: struct print_entry, struct
 * raw_data_entry).  They are in the registry, so that every reader gets
 * their formats, but can never be switched on: the kernel keeps them out
 * of available_events and set_event (TRACE_EVENT_FL_IGNORE_ENABLE), and
 * records them only when its marker files are written.
 *
 *   print:     ip (unsigned long), buf[] (the text, NUL-terminated)
 *   raw_data:  id (unsigned int), buf[] (the bytes)
 *   user_stack: tgid (unsigned int), caller[8] (unsigned long): what the
 *              stacktrace trigger records (struct userstack_entry),
 *              registered when the first such trigger is set
 *
 * The agent thread writes the record (control.c), for whichever task
 * wrote the file.  print has triggers of its own (its trigger file, in
 * each instance), which run here on the record, as the kernel's
 * tracing_mark_write() runs them: only when the record is made, on the
 * text without the newline the marker adds; after the record is
 * committed, so that a traceoff keeps it, as the kernel's does.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifdef UTRACE_HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#include "clock.h"
#include "filter.h"
#include "internal.h"
#include "marker.h"
#include "symbols.h"
#include "writer.h"

static const struct utrace_event_field print_fields[] = {
	{ "unsigned long", "ip", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "buf", 16, 0, 0, UTRACE_FIELD_FLEX, 0 },
};

static const struct utrace_event_field raw_fields[] = {
	{ "unsigned int", "id", 8, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "buf", 12, 0, 0, UTRACE_FIELD_FLEX, 0 },
};

static const struct utrace_event_field *print_fields_fn(unsigned int *nr)
{
	*nr = sizeof(print_fields) / sizeof(print_fields[0]);
	return print_fields;
}

static const struct utrace_event_field *raw_fields_fn(unsigned int *nr)
{
	*nr = sizeof(raw_fields) / sizeof(raw_fields[0]);
	return raw_fields;
}

/* UTRACE_PRINT's line: the kernel's trace_print_print() without the
 * text's own last newline (the printer adds one). */
static void print_output(struct utrace_seq *s, const void *rec)
{
	const char *buf = (const char *)rec + UTRACE_MARKER_PRINT_HDR;
	size_t n = strlen(buf);

	if (n && buf[n - 1] == '\n')
		n--;
	utrace_seq_printf(s, "tracing_mark_write: %.*s", (int)n, buf);
}

/* trace_raw_data() needs the record's length, which an output function
 * does not get: the id only. */
static void raw_output(struct utrace_seq *s, const void *rec)
{
	unsigned int id;

	memcpy(&id, (const char *)rec + 8, sizeof(id));
	utrace_seq_printf(s, "# %x buf:", id);
}

static const struct utrace_event_class print_class = {
	"ftrace", print_fields_fn, UTRACE_MARKER_PRINT_HDR, NULL,
};
static const struct utrace_event_class raw_class = {
	"ftrace", raw_fields_fn, UTRACE_MARKER_RAW_HDR, NULL,
};

static struct utrace_tracepoint print_tp = { .name = "print" };
static struct utrace_tracepoint raw_tp = { .name = "raw_data" };

static const char *const print_fmt[2] = { "\"%ps: %s\"", "(void *)REC->ip, REC->buf" };
static const char *const raw_fmt[2] = { "\"id:%04x %08x\"", "REC->id, (int)REC->buf[0]" };

static struct utrace_event print_event = {
	.name = "print", .cls = &print_class, .tp = &print_tp, .output = print_output,
	.print = print_fmt,
};
static struct utrace_event raw_event = {
	.name = "raw_data", .cls = &raw_class, .tp = &raw_tp, .output = raw_output,
	.print = raw_fmt,
};

static const struct utrace_event_field stack_fields[] = {
	{ "unsigned int", "tgid", 8, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long", "caller", 16, 8 * UTRACE_USER_STACK_ENTRIES, 0, UTRACE_FIELD_ARRAY,
	  UTRACE_USER_STACK_ENTRIES },
};

static const struct utrace_event_field *stack_fields_fn(unsigned int *nr)
{
	*nr = sizeof(stack_fields) / sizeof(stack_fields[0]);
	return stack_fields;
}

/* trace_user_stack_print(), each frame named as %pS names it (as the
 * readers print it), "<%016lx>" where no symbol holds it */
static void stack_output(struct utrace_seq *s, const void *rec)
{
	unsigned long ip;
	int i;

	utrace_seq_printf(s, "<user stack trace>");
	for (i = 0; i < UTRACE_USER_STACK_ENTRIES; i++) {
		const char *name;
		uint64_t start, size;

		memcpy(&ip, (const char *)rec + 16 + 8 * i, sizeof(ip));
		if (!ip || ip == ~0UL)
			break;
		if (utrace__sym_lookup(ip, &name, &start, &size) == 0)
			utrace_seq_printf(s, "\n => %s+0x%lx/0x%lx", name,
					  (unsigned long)(ip - start), (unsigned long)size);
		else
			utrace_seq_printf(s, "\n => <%016lx>", ip);
	}
}

static const struct utrace_event_class stack_class = {
	"ftrace", stack_fields_fn, UTRACE_USER_STACK_SIZE, NULL,
};
static struct utrace_tracepoint stack_tp = { .name = "user_stack" };
static const char *const stack_fmt[2] = {
	"\"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n"
	"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\"",
	"(void *)REC->caller[0], (void *)REC->caller[1], (void *)REC->caller[2], "
	"(void *)REC->caller[3], (void *)REC->caller[4], (void *)REC->caller[5], "
	"(void *)REC->caller[6], (void *)REC->caller[7]",
};
static struct utrace_event stack_event = {
	.name = "user_stack", .cls = &stack_class, .tp = &stack_tp, .output = stack_output,
	.print = stack_fmt,
};

static struct utrace_event *const marker_events[] = { &print_event, &raw_event };
static struct utrace_event *const stack_events[] = { &stack_event };

static void register_once(void)
{
	utrace__registry_add_builtin(marker_events, marker_events + 2);
}

void utrace__marker_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_once);
}

static void register_stack_once(void)
{
	utrace__registry_add_builtin(stack_events, stack_events + 1);
}

bool utrace__user_stack_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

#ifdef UTRACE_HAVE_LIBUNWIND
	pthread_once(&once, register_stack_once);
	return true;
#else
	(void)once;
	(void)register_stack_once;
	return false;
#endif
}

void utrace__stack_skip_of(uintptr_t probe, struct utrace__stack_skip *s)
{
	static const char *const generated[] = { "utrace_event_", "__traceiter_", NULL };

	s->nr = 0;
	if (utrace__sym_object_extent((uintptr_t)&utrace__stack_skip_of, &s->lo[0],
				      &s->hi[0]) == 0)
		s->nr = 1;
	if (probe)
		s->nr += utrace__sym_ranges(probe, generated, s->lo + s->nr, s->hi + s->nr,
					    UTRACE__STACK_SKIP_MAX - s->nr);
}

static bool skipped(const struct utrace__stack_skip *s, uintptr_t ip)
{
	unsigned int i;

	/* a return address: the call is the byte before it */
	ip--;
	for (i = 0; i < s->nr; i++)
		if (ip - s->lo[i] < s->hi[i] - s->lo[i])
			return true;
	return false;
}

#ifdef UTRACE_HAVE_LIBUNWIND
/*
 * The stack of the code that fired the event: the innermost frames in
 * skip (up to 24: libutrace's, the event's probe and iterator) are passed
 * by.
 */
static void user_stack(const struct utrace__stack_skip *skip, unsigned long *out)
{
	unsigned long ips[UTRACE_USER_STACK_ENTRIES + 24];
	unw_context_t uc;
	unw_cursor_t cur;
	int n = 0, from = 0, i;

	if (unw_getcontext(&uc) < 0 || unw_init_local(&cur, &uc) < 0)
		return;
	while (n < (int)(sizeof(ips) / sizeof(ips[0])) && unw_step(&cur) > 0) {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		ips[n++] = ip;
		/* the leading frames only: a libutrace frame further out is
		 * code a signal handler interrupted */
		if (n == from + 1 && n <= 24 && skipped(skip, ip))
			from = n;
		else if (n - from >= UTRACE_USER_STACK_ENTRIES)
			break;
	}
	for (i = 0; i < UTRACE_USER_STACK_ENTRIES && from + i < n; i++)
		out[i] = ips[from + i];
}
#endif

void utrace__user_stack_record(const struct utrace__stack_skip *skip)
{
#ifdef UTRACE_HAVE_LIBUNWIND
	unsigned char scratch[UTRACE_EVENT_MAX];
	unsigned long callers[UTRACE_USER_STACK_ENTRIES] = { 0 };
	struct utrace_tp_reserve r;
	unsigned char *rec;
	uint32_t tgid = (uint32_t)getpid();

	user_stack(skip, callers);
	rec = utrace_tp_reserve(&r, &stack_event, scratch, UTRACE_USER_STACK_SIZE);
	if (!rec)
		return;
	memcpy(rec + 8, &tgid, 4);
	memset(rec + 12, 0, 4);
	memcpy(rec + 16, callers, sizeof(callers));
	utrace_tp_commit(&r);
#else
	(void)skip;
#endif
}

bool utrace__marker_is_print(const struct utrace_event *ev)
{
	return ev == &print_event;
}

/* print's triggers in the marker's buffer, on its record (rec, size
 * bytes, NUL-terminated without the marker's newline). */
static void print_triggers(const unsigned char *rec, uint32_t size)
{
	struct utrace__filter_ctx fc;
	char comm[17] = { 0 };

	fc.cpu = utrace__cpu();
	prctl(PR_GET_NAME, comm);
	fc.comm = comm;
	utrace__writer_trigger_ops()->run_in(&print_event, utrace__marker_inst, rec, size, &fc);
}

int utrace__marker_record(bool raw, const void *data, size_t len)
{
	struct utrace_event *ev = raw ? &raw_event : &print_event;
	unsigned char scratch[UTRACE_EVENT_MAX];
	size_t taken;
	unsigned int size;
	unsigned char *rec, *trig = NULL;
	struct utrace_tp_reserve r;
	uint32_t tsize = 0;

	if (raw) {
		/* the id, then the bytes */
		if (len < 4 || len - 4 > UTRACE_MARKER_RAW_MAX)
			return -EINVAL;
		size = (unsigned int)(UTRACE_MARKER_RAW_HDR + len - 4);
		taken = len;
	} else {
		if (len > UTRACE_MARKER_PRINT_MAX)
			len = UTRACE_MARKER_PRINT_MAX;
		taken = len;
		/* a newline if it has none, and the NUL */
		size = (unsigned int)(UTRACE_MARKER_PRINT_HDR + len + 2);
		if (len && ((const char *)data)[len - 1] == '\n')
			size--;
	}
	rec = utrace_tp_reserve(&r, ev, scratch, size);
	if (!rec)
		return -EBADF;  /* tracing_on is 0, or no room: as the kernel's */
	/* the padding to 4 bytes too: trace_marker_raw's reader prints it */
	memset(rec + 8, 0, ((size + 3) & ~3u) - 8);
	/* the kernel writes its markers with preemption off */
	rec[3] = 1;
	if (raw) {
		memcpy(rec + 8, data, len);
	} else {
		unsigned long ip = (unsigned long)(uintptr_t)&utrace__marker_record;

		memcpy(rec + 8, &ip, sizeof(ip));
		memcpy(rec + UTRACE_MARKER_PRINT_HDR, data, len);
		if (utrace__writer_trigger_ops() &&
		    utrace__writer_trigger_ops()->any_in(ev, utrace__marker_inst)) {
			/* (no memory: the record without its triggers) */
			tsize = (uint32_t)(UTRACE_MARKER_PRINT_HDR + len + 1);
			trig = malloc(tsize);
			if (trig) {
				memcpy(trig, rec, tsize - 1);
				trig[tsize - 1] = '\0';
			}
		}
		if (!len || ((const char *)data)[len - 1] != '\n')
			rec[UTRACE_MARKER_PRINT_HDR + len++] = '\n';
		rec[UTRACE_MARKER_PRINT_HDR + len] = '\0';
	}
	utrace_tp_commit(&r);
	if (trig) {
		print_triggers(trig, tsize);
		free(trig);
	}
	return (int)taken;
}
