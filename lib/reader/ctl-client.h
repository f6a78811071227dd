/* SPDX-License-Identifier: MIT */
/*
 * Controlling a running traced process from outside (the utrace CLI and
 * the FUSE mount).  Each process that links libutrace and has events runs
 * an agent thread listening on "<runtime dir>/<pid>.sock" (see agent.c
 * and ctlproto.h); these functions talk to it.
 *
 * The runtime directory is $UTRACE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/utrace,
 * else /tmp/utrace-<uid> (rundir.h: a directory that is not the user's own,
 * 0700 and no symbolic link is refused).  Only the process's user and root
 * may connect: the socket is mode 0600 in a 0700 directory and the agent
 * checks the peer's credentials.
 *
 * All functions return 0 (or a count) on success and a negative errno on
 * failure; the connection's last error message (one line, no "utrace: "
 * prefix) is in utrace__ctl_errmsg().
 */
#ifndef UTRACE_CONTROL_CLIENT_H
#define UTRACE_CONTROL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "compiler.h"


struct utrace__ctl_proc {
	pid_t pid;
	uid_t uid;
	char comm[16];
	char sock[108];          /* the control socket's path */
};

/* utrace__ctl_list()'s flags */
enum {
	/* root: every user's runtime directory too (/run/user/<uid>/utrace
	 * and /tmp/utrace-<uid>), the machine-wide view; -EPERM for others */
	UTRACE__CTL_ALL_USERS = 1u << 0,
};

/*
 * The traceable processes: the sockets of the caller's runtime directory
 * (the one in scope: $UTRACE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/utrace,
 * else /tmp/utrace-<uid>), and with UTRACE__CTL_ALL_USERS everybody's,
 * whose process is alive, in pid order.  Sockets of processes that are
 * gone are removed on the way.  *out is malloc()ed.  0, or -EPERM
 * (UTRACE__CTL_ALL_USERS and the caller is not root: nothing listed).
 */
int utrace__ctl_list(struct utrace__ctl_proc **out, size_t *nr, unsigned int flags)
	UTRACE_HIDDEN;

struct utrace__ctl;

/*
 * Connect to the agent of process 'pid' (named: for root, found in any
 * user's runtime directory, in the caller's first).  Errors: -ESRCH (no such process,
 * or it does not link libutrace / has no events), -EPERM (another user's
 * process and the caller is not root), -EBUSY (its agent took no
 * connection for 10 s); the message names the process.
 * On failure *out is NULL and 'err' (if not NULL) holds the message.
 */
int utrace__ctl_open(pid_t pid, struct utrace__ctl **out, char *err, size_t errlen)
	UTRACE_HIDDEN;
/* The same, waiting at most 'wait_ms' (utrace__ctl_open(): 10 s) while the
 * agent's queue of connections is full; then -EBUSY ("process N is busy"),
 * never -ESRCH: a busy process is not a gone one. */
int utrace__ctl_open_wait(pid_t pid, struct utrace__ctl **out, char *err, size_t errlen,
			  int wait_ms) UTRACE_HIDDEN;
void utrace__ctl_close(struct utrace__ctl *c) UTRACE_HIDDEN;
/* How long a request waits for its answer (default 10 s), in ms (> 0). */
void utrace__ctl_set_timeout(struct utrace__ctl *c, int ms) UTRACE_HIDDEN;
const char *utrace__ctl_errmsg(const struct utrace__ctl *c) UTRACE_HIDDEN;
pid_t utrace__ctl_pid(const struct utrace__ctl *c) UTRACE_HIDDEN;

struct utrace__ctl_info {
	uint32_t pid, ppid, uid;
	char comm[16];
	char exe[256];
	uint32_t nr_events, nr_enabled;
	uint32_t tracing_on;     /* the process's tracing_on switch */
	uint32_t has_pool;       /* 0 until something enabled an event or asked for it */
	uint32_t mode;           /* enum utrace_pool_mode */
	uint32_t recorder;       /* 1 while a `utrace record` is attached */
	uint64_t buffer_size;    /* bytes of pages (the pool's, or the next pool's) */
	uint64_t pages_used;     /* pages holding events not yet read */
	uint64_t nr_pages;
	uint64_t written, lost;  /* events committed and lost since the pool was made */
	uint32_t jump_sites;     /* tracepoint call sites that are a NOP or a jmp */
	uint32_t branch_sites;   /* ... that load and branch (no jump labels) */
};
int utrace__ctl_info(struct utrace__ctl *c, struct utrace__ctl_info *info) UTRACE_HIDDEN;

struct utrace__ctl_event {
	uint32_t id;
	bool enabled;
	bool filtered;           /* a filter is set */
	bool soft;               /* held by a trigger (enable reads "0*"/"1*") */
	char *system, *name;
};
/*
 * ftrace's own events ("ftrace:print", "ftrace:raw_data", which
 * trace_marker records) come in the list for their formats, but are not
 * in available_events, nor counted, nor ever on: as the kernel's.
 */
static inline bool utrace__ctl_event_is_ftrace(const struct utrace__ctl_event *e)
{
	return !strcmp(e->system, "ftrace");
}
/* The events in registration order (available_events order). */
int utrace__ctl_events(struct utrace__ctl *c, struct utrace__ctl_event **evs,
		       size_t *nr) UTRACE_HIDDEN;
/* The events removed (a probe deleted) whose records may still be in the
 * buffers: their ids, names and (utrace__ctl_format()) formats. */
int utrace__ctl_events_removed(struct utrace__ctl *c, struct utrace__ctl_event **evs,
			       size_t *nr) UTRACE_HIDDEN;
void utrace__ctl_events_free(struct utrace__ctl_event *evs, size_t nr) UTRACE_HIDDEN;

/* events/<sys>/<ev>/format; -ENOENT for an unknown id.  malloc()ed. */
int utrace__ctl_format(struct utrace__ctl *c, uint32_t id, char **text) UTRACE_HIDDEN;

/*
 * One set_event token (the kernel's rules, "!" to disable): the number of
 * events matched, or -EINVAL when none match or the token is malformed.
 * An empty token (only whitespace) is a no-op returning 0.
 */
int utrace__ctl_set_event(struct utrace__ctl *c, const char *tok, size_t len)
	UTRACE_HIDDEN;
/* Switch every event off (set_event opened with O_TRUNC). */
int utrace__ctl_clear_events(struct utrace__ctl *c) UTRACE_HIDDEN;
/* One event on (1) or off (0). */
int utrace__ctl_enable(struct utrace__ctl *c, uint32_t id, int on) UTRACE_HIDDEN;
/* Every event of a system ("" or NULL: every event) on or off; -ENOENT
 * when the system has no events. */
int utrace__ctl_enable_system(struct utrace__ctl *c, const char *system, int on)
	UTRACE_HIDDEN;

/* A filter error, as the kernel reports it (see lib/runtime/filter.h). */
struct utrace__ctl_filter_error {
	int32_t err;             /* negative errno returned by the write */
	int32_t pos;             /* caret column */
	char msg[128];           /* kernel message, "" for "Error: (0)" */
};
/*
 * Set an event's filter ("0" clears; the text is stripped of trailing
 * whitespace as the kernel does).  On a bad expression returns the
 * kernel's errno, fills *fe (if not NULL), drops the old filter and makes
 * the filter file read back the error, as the kernel does.
 */
int utrace__ctl_filter(struct utrace__ctl *c, uint32_t id, const char *expr,
		       struct utrace__ctl_filter_error *fe) UTRACE_HIDDEN;
/* A subsystem's filter: set on every event of the system; always 0 when the
 * system exists (events that cannot take it get the kernel's error),
 * -ENOENT when it does not. */
int utrace__ctl_filter_system(struct utrace__ctl *c, const char *system,
			      const char *expr) UTRACE_HIDDEN;
/* The bytes the filter file reads: "none\n", the expression + "\n", or the
 * error text.  For a system: with the "### global filter ###" banner. */
int utrace__ctl_filter_text(struct utrace__ctl *c, uint32_t id, char **text) UTRACE_HIDDEN;
int utrace__ctl_filter_system_text(struct utrace__ctl *c, const char *system,
				   char **text) UTRACE_HIDDEN;

/* error_log: the bytes it reads (up to 8 entries), and clearing it. */
/*
 * A write to events/<sys>/<ev>/trigger (truncate: opened with O_TRUNC,
 * which removes the hist triggers first; cmd may then be ""): 0 or the
 * kernel's -errno; *log (if not NULL) gets the error_log entry of a
 * refused write, malloc()ed, or NULL.
 */
int utrace__ctl_trigger(struct utrace__ctl *c, uint32_t id, const char *cmd, int truncate,
			char **log) UTRACE_HIDDEN;
/* The trigger file's text, or (hist) the hist file's.  malloc()ed. */
int utrace__ctl_trigger_text(struct utrace__ctl *c, uint32_t id, int hist, char **text)
	UTRACE_HIDDEN;
int utrace__ctl_error_log(struct utrace__ctl *c, char **text) UTRACE_HIDDEN;
int utrace__ctl_error_log_clear(struct utrace__ctl *c) UTRACE_HIDDEN;

/*
 * uprobe_events (lib/probe): what it reads (profile 0), what
 * uprobe_profile reads (1), or the listing with detail (2: utrace probe
 * -l -v); a write of definitions, a line each (the
 * kernel's -errno of the first that fails, whose error_log entry, when it
 * has one, is in the top-level error_log); an open with O_TRUNC.
 */
int utrace__ctl_uprobe_text(struct utrace__ctl *c, int profile, char **text) UTRACE_HIDDEN;
int utrace__ctl_uprobe_write(struct utrace__ctl *c, const char *lines, size_t len)
	UTRACE_HIDDEN;
int utrace__ctl_uprobe_clear(struct utrace__ctl *c) UTRACE_HIDDEN;

/*
 * The function tracers' files (file: enum utrace_ctl_ftrace_file): the
 * text of one; a write (the lists: added to); a list emptied (an open
 * with O_TRUNC).  An older runtime answers -EOPNOTSUPP.
 */
int utrace__ctl_ftrace_text(struct utrace__ctl *c, uint32_t file, char **text) UTRACE_HIDDEN;
int utrace__ctl_ftrace_write(struct utrace__ctl *c, uint32_t file, const char *buf,
			     size_t len) UTRACE_HIDDEN;
int utrace__ctl_ftrace_clear(struct utrace__ctl *c, uint32_t file) UTRACE_HIDDEN;

/* synthetic_events: its text; a write of lines (the -errno of the first
 * refused one, its entry in the top-level error_log); an open with
 * O_TRUNC (-EBUSY when one is in use). */
int utrace__ctl_synth_text(struct utrace__ctl *c, char **text) UTRACE_HIDDEN;
int utrace__ctl_synth_write(struct utrace__ctl *c, const char *lines, size_t len) UTRACE_HIDDEN;
int utrace__ctl_synth_clear(struct utrace__ctl *c) UTRACE_HIDDEN;
/* dynamic_events' "s:[synthetic/]NAME FIELD..." lines, with the kernel's
 * errors of that form (-EOPNOTSUPP from a runtime without them). */
int utrace__ctl_synth_write_dyn(struct utrace__ctl *c, const char *lines, size_t len)
	UTRACE_HIDDEN;

/*
 * set_event_pid (notrace 0) and set_event_notrace_pid (1): what the file
 * reads, its clearing (an open with O_TRUNC), and a write of at most
 * UTRACE_CTL_EVENT_PID_MAX bytes: the bytes taken or the kernel's -errno.
 */
#define UTRACE_CTL_EVENT_PID_MAX 60000
int utrace__ctl_event_pid_text(struct utrace__ctl *c, int notrace, char **text) UTRACE_HIDDEN;
int utrace__ctl_event_pid_clear(struct utrace__ctl *c, int notrace) UTRACE_HIDDEN;
int utrace__ctl_event_pid_add(struct utrace__ctl *c, int notrace, const char *buf,
			      size_t len) UTRACE_HIDDEN;

/*
 * A write to trace_marker (raw 0) or trace_marker_raw (raw 1), recorded by
 * the agent: the bytes taken, -EINVAL or -EBADF (not recorded) as the
 * kernel's files.  At most a packet's payload.
 */
int utrace__ctl_marker(struct utrace__ctl *c, int raw, const void *buf,
		       size_t len) UTRACE_HIDDEN;

/* tracing_on: set 0 or 1, or query with -1; returns the value now. */
int utrace__ctl_tracing_on(struct utrace__ctl *c, int on) UTRACE_HIDDEN;

/* The buffer size as the kernel's buffer_size_kb counts it: bytes of event
 * data in whole pages (UTRACE_PAGE_DATA, 4080 bytes each, at least 2).
 * Query with 0.  Setting it replaces the process's buffer with one of that
 * size (its events are dropped); -EBUSY while a recorder reads it. */
int utrace__ctl_buffer_size(struct utrace__ctl *c, uint64_t set, uint64_t *now)
	UTRACE_HIDDEN;

/* Empty the buffer (the trace file opened with O_TRUNC). */
int utrace__ctl_clear_buffer(struct utrace__ctl *c) UTRACE_HIDDEN;

/*
 * trace_clock: id an enum utrace_trace_clock to choose it (the buffer is
 * cleared), -1 for the clock now, -2 for the clocks the process can give
 * (a bit each).  -EOPNOTSUPP from a runtime that has only mono.
 */
int utrace__ctl_trace_clock(struct utrace__ctl *c, int id) UTRACE_HIDDEN;

/* The overwrite option: set the buffer's mode (enum utrace_pool_mode) or
 * query with -1; returns the mode now, or -EBUSY while a recorder reads it. */
int utrace__ctl_pool_mode(struct utrace__ctl *c, int mode) UTRACE_HIDDEN;

/*
 * The process's event pool: its memfd (the caller closes it), made if it
 * did not exist yet.  Map it with utrace__pool_map() (pool.h / live.h).
 */
int utrace__ctl_pool(struct utrace__ctl *c, int *fd) UTRACE_HIDDEN;
/* The snapshot trigger's copy of the pool (a memfd, *fd) and its number
 * (> 0), or -ENOENT when there is none; _free() drops it.  *until: the
 * time of the trigger's event (the pool's clock): later events in the copy
 * are not the snapshot's (0: all are). */
int utrace__ctl_snapshot(struct utrace__ctl *c, int *fd, uint64_t *until) UTRACE_HIDDEN;
int utrace__ctl_snapshot_free(struct utrace__ctl *c) UTRACE_HIDDEN;

/*
 * Instances (the mount's instances/<name>/): the requests that follow
 * are for the instance of 'handle' (0: the top level), as listed by
 * utrace__ctl_instances(): "<handle> <name>\n" per instance.  mkdir
 * returns the new handle or -EEXIST, -EINVAL, -ENAMETOOLONG, -ENOSPC;
 * rmdir 0 or -ENOENT.  A request for a removed instance gets -ENODEV.
 */
void utrace__ctl_set_instance(struct utrace__ctl *c, uint32_t handle) UTRACE_HIDDEN;
int utrace__ctl_instances(struct utrace__ctl *c, char **out) UTRACE_HIDDEN;
int utrace__ctl_instance_mkdir(struct utrace__ctl *c, const char *name) UTRACE_HIDDEN;
int utrace__ctl_instance_rmdir(struct utrace__ctl *c, const char *name) UTRACE_HIDDEN;

/*
 * Hand the process to the recorder listening on 'sock_path' (the
 * UTRACE_RECORD protocol of proto.h): the process connects, sends its pool
 * and formats, and records in 'mode' until the recorder goes away; then
 * the enabled events return to what they were at the attach.
 */
int utrace__ctl_attach(struct utrace__ctl *c, const char *sock_path, uint32_t mode)
	UTRACE_HIDDEN;

/*
 * After utrace__ctl_attach(): the process's events carry their call
 * stacks (spec: UTRACE_STACKS's MODE[,SIZE[,FRAMES]]) until the recorder
 * goes.  -EBUSY: on already with another spec (UTRACE_STACKS); -EINVAL:
 * dwarf without libunwind; -EOPNOTSUPP: an older libutrace.
 */
int utrace__ctl_stacks(struct utrace__ctl *c, const char *spec) UTRACE_HIDDEN;

#endif /* UTRACE_CONTROL_CLIENT_H */
