/* SPDX-License-Identifier: MIT */
/*
 * utrace/utrace.h - the runtime API of libutrace.
 *
 * Events are declared with the macros of utrace/tracepoint.h; this header
 * is for looking them up, switching them on and off, and reading their
 * formats from inside the program.  Functions return 0 or a positive count
 * on success and a negative code on failure: -errno, or one of the
 * UTRACE_E* codes below; utrace_strerror() names either.
 */
#ifndef UTRACE_UTRACE_H
#define UTRACE_UTRACE_H

#include "tracepoint.h"

#ifdef __cplusplus
extern "C" {
#endif

/* utrace-specific error codes, apart from errno's range. */
#define UTRACE_ERRNO_MAP(X)						\
	X(NOEVENT, -10001, "no such event")				\
	X(TOOBIG, -10002, "event record too large")			\
	X(BADSPEC, -10003, "malformed event specification")

enum {
#define UTRACE__ERR_ENUM(name, code, msg) UTRACE_E##name = code,
	UTRACE_ERRNO_MAP(UTRACE__ERR_ENUM)
#undef UTRACE__ERR_ENUM
};

/* The message for a negative code from any utrace function. */
const char *utrace_strerror(int err);

/* "0.1.0" */
const char *utrace_version(void);

/*
 * Visit every registered event in registration order (the order of the
 * kernel's available_events).  The registry lock is held during the
 * callback: do not load or unload libraries from it.  A non-zero return
 * stops the walk and is returned.
 */
int utrace_event_foreach(int (*fn)(struct utrace_event *ev, void *arg),
			 void *arg);

/* Look an event up by system and name; NULL if it is not registered. */
struct utrace_event *utrace_event_find(const char *system, const char *name);

const char *utrace_event_name(const struct utrace_event *ev);
const char *utrace_event_system(const struct utrace_event *ev);
int utrace_event_id(const struct utrace_event *ev);

/* The event's fields after the four common ones, as in its format file. */
const struct utrace_event_field *utrace_event_fields(const struct utrace_event *ev,
						     unsigned int *nr);

/*
 * The text of events/<sys>/<ev>/format for this event, byte for byte in
 * the kernel's layout.  Returns a malloc()ed string, or NULL.
 */
char *utrace_event_format(const struct utrace_event *ev);

/* Switch the event's built-in recording probe on (1) or off (0). */
int utrace_event_enable(struct utrace_event *ev, int on);
int utrace_event_is_enabled(const struct utrace_event *ev);

/*
 * Apply one token with the kernel's set_event rules: "sys:ev", "sys:*",
 * "sys:", "*:ev", ":ev", a bare system or event name, "*:*", and a "!"
 * prefix to disable.  Returns the number of events matched, or -EINVAL
 * when none matched (the kernel's answer).
 */
int utrace_set_event(const char *token);

/*
 * Format a record of 'ev' with its TP_printk, without the line prefix.
 * Returns the length of the text (which is NUL-terminated and truncated
 * to len - 1), or a negative code.
 */
int utrace_event_print(const struct utrace_event *ev, const void *rec,
		       char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* UTRACE_UTRACE_H */
