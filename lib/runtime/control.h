/* SPDX-License-Identifier: MIT */
/*
 * control.c: what the control requests do to the process (the rules),
 * apart from how they arrive and are answered (agent.c, the transport).
 * As the kernel's tracefs file operations call into the event and filter
 * code, the agent decodes a request and calls one function here.
 *
 * Every function runs on the agent thread, one request at a time, with no
 * lock held by the caller.  Texts returned are malloc()ed and the caller's.
 */
#ifndef UTRACE_RUNTIME_CONTROL_H
#define UTRACE_RUNTIME_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "ctlproto.h"

struct utrace__filter_error;
struct utrace_event;

void utrace__control_filter_spec_set(const char *value) UTRACE_HIDDEN;
void utrace__control_filter_spec_apply(struct utrace_event *ev) UTRACE_HIDDEN;

int utrace__control_info(struct utrace_ctl_info_msg *m) UTRACE_HIDDEN;
int utrace__control_event_list(bool removed, char **buf, size_t *len, uint32_t *nr)
	UTRACE_HIDDEN;
int utrace__control_format(uint32_t id, char **text) UTRACE_HIDDEN;
int utrace__control_set_event(const char *line, size_t len) UTRACE_HIDDEN;
int utrace__control_clear_events(void) UTRACE_HIDDEN;
int utrace__control_enable(uint32_t id, bool on) UTRACE_HIDDEN;
int utrace__control_enable_system(const char *system, size_t len, bool on) UTRACE_HIDDEN;
int utrace__control_filter(uint32_t id, const char *expr, size_t len,
			   struct utrace__filter_error *fe) UTRACE_HIDDEN;
int utrace__control_filter_system(const char *payload, size_t len) UTRACE_HIDDEN;
int utrace__control_filter_text(uint32_t id, char **text) UTRACE_HIDDEN;
int utrace__control_filter_system_text(const char *system, size_t len,
				       char **text) UTRACE_HIDDEN;
int utrace__control_error_log(char **text) UTRACE_HIDDEN;
int utrace__control_uprobe(int32_t what, const char *data, size_t len, char **text)
	UTRACE_HIDDEN;
/* The kernel's trace_pid_write() parse (control.c, utrace__pid_list_add()). */
int utrace__pid_list_add(const uint32_t *old, size_t nold, const char *buf, size_t len,
			 uint32_t **out, size_t *nr_out, size_t *taken_out) UTRACE_HIDDEN;
int utrace__control_event_pid(uint32_t which, int32_t action, const char *buf, size_t len,
			      char **text) UTRACE_HIDDEN;
void utrace__control_error_log_clear(void) UTRACE_HIDDEN;
int utrace__control_tracing_on(int32_t on) UTRACE_HIDDEN;
int utrace__control_trace_marker(const char *data, size_t len, bool raw) UTRACE_HIDDEN;
int utrace__control_buffer_size(uint64_t bytes, uint64_t *size) UTRACE_HIDDEN;
void utrace__control_clear_buffer(void) UTRACE_HIDDEN;
int utrace__control_pool_fd(void) UTRACE_HIDDEN;
/* The pool of a buffer (-1: the top level), or -1: the snapshot's source. */
int utrace__control_pool_fd_of(int inst) UTRACE_HIDDEN;
/* The buffer the request being served is for (-1: the top level). */
int utrace__control_instance(void) UTRACE_HIDDEN;
int utrace__control_pool_mode(int32_t mode) UTRACE_HIDDEN;
int utrace__control_trace_clock(int32_t id) UTRACE_HIDDEN;
int utrace__control_attach(const char *path, size_t len, uint32_t mode) UTRACE_HIDDEN;
int utrace__control_stacks(const char *spec, size_t len) UTRACE_HIDDEN;
int utrace__control_recorder_fd(void) UTRACE_HIDDEN;
void utrace__control_recorder_gone(void) UTRACE_HIDDEN;
void utrace__control_after_fork_child(void) UTRACE_HIDDEN;
void utrace__control_fork_cleanup(void) UTRACE_HIDDEN;
int utrace__control_select(uint32_t handle) UTRACE_HIDDEN;
int utrace__control_calib_timer(void) UTRACE_HIDDEN;
int utrace__control_instance_list(char **text) UTRACE_HIDDEN;
int utrace__control_instance_mkdir(const char *name, size_t len) UTRACE_HIDDEN;
int utrace__control_instance_rmdir(const char *name, size_t len) UTRACE_HIDDEN;

/* Triggers: see control.c. */
int utrace__control_trigger(uint32_t id, const char *text, size_t len, bool truncate,
			    char **log) UTRACE_HIDDEN;
int utrace__control_trigger_text(uint32_t id, bool hist, char **text) UTRACE_HIDDEN;
int utrace__control_synth(int32_t what, const char *data, size_t len, char **text) UTRACE_HIDDEN;

#endif /* UTRACE_RUNTIME_CONTROL_H */
