/* SPDX-License-Identifier: MIT */
/*
 * The kernel's set_event token rules (kernel/trace/trace_events.c,
 * ftrace_set_clr_event), shared by UTRACE_EVENTS, the CLI and the control
 * tree:
 *
 *   sys:ev        that event
 *   sys:* sys:    every event of sys
 *   *:ev  :ev     every event named ev, in any system
 *   word          every event whose system OR name is word
 *   *:*           everything
 *   !<any>        the same set, switched off
 *
 * There is no globbing: "sched*" or a lone "*" match nothing.
 */
#include <ctype.h>
#include <string.h>

#include <utrace/utrace.h>

#include "setevent.h"

int utrace__parse_set_event(const char *tok, size_t len,
			    struct utrace__set_event_match *m)
{
	const char *colon;

	memset(m, 0, sizeof(*m));
	m->set = true;
	if (len && tok[0] == '!') {
		m->set = false;
		tok++;
		len--;
	}
	if (!len)
		return UTRACE_EBADSPEC;
	colon = memchr(tok, ':', len);
	if (!colon) {
		m->match = tok;
		m->match_len = len;
		return 0;
	}
	m->sub = tok;
	m->sub_len = (size_t)(colon - tok);
	m->event = colon + 1;
	m->event_len = len - m->sub_len - 1;
	if (m->sub_len == 0 || (m->sub_len == 1 && m->sub[0] == '*'))
		m->sub = NULL;
	if (m->event_len == 0 || (m->event_len == 1 && m->event[0] == '*'))
		m->event = NULL;
	return 0;
}

static bool eq(const char *s, size_t n, const char *z)
{
	return strncmp(s, z, n) == 0 && z[n] == 0;
}

bool utrace__set_event_matches(const struct utrace__set_event_match *m,
			       const char *system, const char *name)
{
	if (m->match && !eq(m->match, m->match_len, name) &&
	    !eq(m->match, m->match_len, system))
		return false;
	if (m->sub && !eq(m->sub, m->sub_len, system))
		return false;
	if (m->event && !eq(m->event, m->event_len, name))
		return false;
	return true;
}

/* The length of a set_event word: a system or event name, or '*'. */
static size_t event_word(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && (isalnum((unsigned char)s[n]) || (s[n] && strchr("_-.*", s[n]))))
		n++;
	return n;
}

int utrace__split_event_filter(const char *s, size_t len, size_t *ev, size_t *ev_len,
			       size_t *expr)
{
	size_t i = 0, a, b, e;

	while (i < len && isspace((unsigned char)s[i]))
		i++;
	while (len > i && isspace((unsigned char)s[len - 1]))
		len--;
	a = event_word(s + i, len - i);
	if (!a || i + a >= len || s[i + a] != ':')
		return UTRACE_EBADSPEC;
	e = a;
	b = event_word(s + i + a + 1, len - i - a - 1);
	if (b && i + a + 1 + b < len && s[i + a + 1 + b] == ':')
		e = a + 1 + b;
	*ev = i;
	*ev_len = e;
	e += i + 1;
	while (e < len && isspace((unsigned char)s[e]))
		e++;
	if (e >= len)
		return UTRACE_EBADSPEC;
	*expr = e;
	return 0;
}
