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
 *
 * The agent thread writes the record (control.c), for whichever task
 * wrote the file.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"
#include "marker.h"
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

static struct utrace_event *const marker_events[] = { &print_event, &raw_event };

static void register_once(void)
{
	utrace__registry_add_builtin(marker_events, marker_events + 2);
}

void utrace__marker_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_once);
}

int utrace__marker_record(bool raw, const void *data, size_t len)
{
	struct utrace_event *ev = raw ? &raw_event : &print_event;
	unsigned char scratch[UTRACE_EVENT_MAX];
	size_t taken;
	unsigned int size;
	unsigned char *rec;
	struct utrace_tp_reserve r;

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
		if (!len || ((const char *)data)[len - 1] != '\n')
			rec[UTRACE_MARKER_PRINT_HDR + len++] = '\n';
		rec[UTRACE_MARKER_PRINT_HDR + len] = '\0';
	}
	utrace_tp_commit(&r);
	return (int)taken;
}
