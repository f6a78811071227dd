/* SPDX-License-Identifier: MIT */
/* libutrace internals: not installed, not exported. */
#ifndef UTRACE_INTERNAL_H
#define UTRACE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <utrace/utrace.h>

#include "compiler.h"
#include "setevent.h"

/* Registry state of one event, kept in utrace_event.priv. */
struct utrace__event_state {
	struct utrace_event *ev;
	struct utrace__module *mod;
	char *print_fmt;                 /* after TRACE_DEFINE_ENUM replacement */
	struct utrace_event_field *fields;
	unsigned int nr_fields;
	bool enabled;
	struct utrace__filter *filter;   /* also in ev->filter */
	char *filter_text;               /* what the filter file reads; NULL: "none\n" */
};

struct utrace__module {
	struct utrace_event **start, **stop;
	const struct utrace_eval_map *const *evals_start, *const *evals_stop;
	int refs;
	bool is_main;
	char *path;
	struct utrace__module *next;
};

/* init.c */
void utrace__init(void) UTRACE_HIDDEN;
void utrace__print_open(void) UTRACE_HIDDEN;
extern int utrace__print_fd UTRACE_HIDDEN;
extern const char *utrace__print_path UTRACE_HIDDEN;
void utrace__warn(const char *fmt, ...) UTRACE_HIDDEN
	__attribute__((format(printf, 1, 2)));

/* registry.c */
void utrace__registry_lock(void) UTRACE_HIDDEN;
void utrace__registry_unlock(void) UTRACE_HIDDEN;
void utrace__events_spec_set(const char *spec) UTRACE_HIDDEN;
void utrace__events_spec_report(void) UTRACE_HIDDEN;

/* format.c */
char *utrace__format_text(const struct utrace_event *ev) UTRACE_HIDDEN;
char *utrace__eval_replace(const char *fmt,
			   const struct utrace_eval_map *const *start,
			   const struct utrace_eval_map *const *stop,
			   const char *system) UTRACE_HIDDEN;

#endif /* UTRACE_INTERNAL_H */
