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

/* control/record.c: the connection to `utrace record` */
void utrace__record_init(void) UTRACE_HIDDEN;
void utrace__record_send_format(const struct utrace_event *ev) UTRACE_HIDDEN;
void utrace__record_after_fork_child(void) UTRACE_HIDDEN;

/* control/record.c: the event pool of this process */
extern int utrace__pool_fd UTRACE_HIDDEN;
int utrace__pool_ensure(void) UTRACE_HIDDEN;
uint64_t utrace__pool_next_size(void) UTRACE_HIDDEN;
void utrace__pool_set_next_size(uint64_t bytes) UTRACE_HIDDEN;
int utrace__pool_resize(uint64_t bytes) UTRACE_HIDDEN;
int utrace__record_attach(const char *path, uint32_t mode) UTRACE_HIDDEN;
ssize_t utrace__send_with_fd(int s, const void *buf, size_t len, int pass) UTRACE_HIDDEN;
void utrace__record_detach(int sock, uint32_t mode) UTRACE_HIDDEN;

/* control/agent.c */
bool utrace__agent_start(void) UTRACE_HIDDEN;
void utrace__agent_before_fork(void) UTRACE_HIDDEN;
void utrace__agent_after_fork_parent(void) UTRACE_HIDDEN;
void utrace__agent_after_fork_child(void) UTRACE_HIDDEN;

/* tracepoint.c: add/remove without waiting; reap() waits and frees. */
int utrace__tp_add(struct utrace_tracepoint *tp, utrace_probe_fn fn,
		   void *data) UTRACE_HIDDEN;
int utrace__tp_remove(struct utrace_tracepoint *tp, utrace_probe_fn fn,
		      void *data) UTRACE_HIDDEN;
void utrace__tp_reap(void) UTRACE_HIDDEN;
void utrace__tp_before_fork(void) UTRACE_HIDDEN;
void utrace__tp_after_fork(int child) UTRACE_HIDDEN;

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

/* event.c */
pid_t utrace__gettid(void) UTRACE_HIDDEN;
void utrace__thread_after_fork(void) UTRACE_HIDDEN;
/* Sees every committed record (tests; and the writer). */
extern void (*utrace__record_hook)(const struct utrace_event *ev,
				   const void *rec, unsigned int size) UTRACE_HIDDEN;

#endif /* UTRACE_INTERNAL_H */
