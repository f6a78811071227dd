/* SPDX-License-Identifier: MIT */
/*
 * The kernel's set_event token rules (setevent.c), shared by UTRACE_EVENTS
 * in the runtime, the CLI's -e and the control tree's set_event.
 */
#ifndef UTRACE_COMMON_SETEVENT_H
#define UTRACE_COMMON_SETEVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler.h"

struct utrace__set_event_match {
	const char *match, *sub, *event; /* NULL: any */
	size_t match_len, sub_len, event_len;
	bool set;                        /* false for a "!" token */
};

/*
 * utrace__parse_set_event - parse one set_event token
 * @tok, @len: the token (not NUL-terminated), with an optional leading '!'
 * @m:         receives the match; it points into @tok
 *
 * Returns 0, or UTRACE_EBADSPEC for a token the kernel refuses.
 */
int utrace__parse_set_event(const char *tok, size_t len,
			    struct utrace__set_event_match *m) UTRACE_HIDDEN;

/*
 * utrace__set_event_matches - does event @system:@name fall in @m's set?
 */
bool utrace__set_event_matches(const struct utrace__set_event_match *m,
			       const char *system, const char *name) UTRACE_HIDDEN;

/*
 * utrace__split_event_filter - split "EVENT:EXPRESSION" (record --filter,
 * script --filter, UTRACE_FILTER)
 * @s, @len:   the entry, not NUL-terminated, white space around it allowed
 * @ev:        receives where EVENT starts (sys:event, sys:*, *:event, event)
 * @ev_len:    its length
 * @expr:      receives where EXPRESSION starts, after white space
 *
 * "a:b:EXPR" is sys:event a:b when b is a name followed by ':' (no
 * expression starts with "name:"), else event (or system) a.
 *
 * Returns 0, or UTRACE_EBADSPEC when there is no EVENT, no ':' after it,
 * or no expression.
 */
int utrace__split_event_filter(const char *s, size_t len, size_t *ev, size_t *ev_len,
			       size_t *expr) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_SETEVENT_H */
