/* SPDX-License-Identifier: MIT */
/*
 * utrace mount: the pieces shared by cmd-mount.c (command line, session),
 * mount-fs.c (the FUSE low-level operations, inode table, trace_pipe
 * waiters) and mount-files.c (what each tracefs file reads and how it
 * takes writes, following the kernel's code).
 */
#ifndef UTRACE_TOOL_MOUNT_H
#define UTRACE_TOOL_MOUNT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <sys/types.h>

struct utrace__ctl;
struct utrace__ctl_event;

/* The most instances a process can have (the runtime's UTRACE_INSTANCES_MAX). */
#define UTRACE_MOUNT_INSTANCES_MAX 32

/* What a path of the mount names. */
enum mkind {
	MK_ROOT,
	MK_LINK,                 /* <comm>-<pid> -> <pid> */
	MK_PID,                  /* <pid>/ */
	MK_EVENTS,               /* <pid>/events/ */
	MK_SYS,                  /* <pid>/events/<sys>/ */
	MK_EV,                   /* <pid>/events/<sys>/<ev>/ */
	MK_OPTIONS,              /* <pid>/options/ */
	MK_PER_CPU,              /* <pid>/per_cpu/ */
	MK_CPU,                  /* <pid>/per_cpu/cpu<N>/: evid is N, as its files */
	MK_INSTANCES,            /* <pid>/instances/ */
	MK_INST,                 /* <pid>/instances/<name>/: inst is its handle; below
				  * it, the files of <pid>/ with the same 'inst' */
	MK_TRACE_STAT,           /* <pid>/trace_stat/ */
	/* files */
	MK_AVAILABLE_EVENTS,
	MK_SET_EVENT,
	MK_SET_EVENT_PID,
	MK_SET_EVENT_NOTRACE_PID,
	MK_TRACING_ON,
	MK_BUFFER_SIZE_KB,
	MK_BUFFER_TOTAL_SIZE_KB,
	MK_TRACE,
	MK_TRACE_PIPE,
	MK_ERROR_LOG,
	MK_EVENTS_ENABLE,        /* events/enable */
	MK_SYS_ENABLE,
	MK_SYS_FILTER,
	MK_EV_ENABLE,
	MK_EV_FILTER,
	MK_EV_FORMAT,
	MK_EV_ID,
	MK_EV_TRIGGER,           /* events/<sys>/<ev>/trigger (top level only) */
	MK_EV_HIST,              /* events/<sys>/<ev>/hist */
	MK_CURRENT_TRACER,
	MK_AVAILABLE_TRACERS,
	MK_TRACE_CLOCK,
	MK_TRACE_OPTIONS,
	MK_OPTION,               /* options/<name>: evid is its index in the table */
	MK_README,
	MK_SAVED_CMDLINES,
	MK_TRACE_MARKER,
	MK_TRACE_MARKER_RAW,
	MK_HEADER_PAGE,          /* events/header_page */
	MK_HEADER_EVENT,         /* events/header_event */
	MK_CPU_TRACE,            /* per_cpu/cpu<N>/... */
	MK_CPU_TRACE_PIPE,
	MK_CPU_TRACE_PIPE_RAW,
	MK_CPU_STATS,
	MK_CPU_BUFFER_SIZE_KB,
	MK_UPROBE_EVENTS,        /* uprobe_events (lib/probe) */
	MK_UPROBE_PROFILE,
	MK_SYNTH_EVENTS,         /* synthetic_events (lib/runtime/synth.c) */
	MK_DYNAMIC_EVENTS,       /* dynamic_events: both of the above */
	MK_AVAILABLE_FILTER_FUNCS,   /* the function tracers' files (lib/runtime/ftrace.c) */
	MK_SET_FTRACE_FILTER,
	MK_SET_FTRACE_NOTRACE,
	MK_SET_GRAPH_FUNCTION,
	MK_MAX_GRAPH_DEPTH,
	MK_ENABLED_FUNCS,
	MK_SNAPSHOT,             /* snapshot (the mount's copy, mount-procs.c) */
	MK_FUNC_PROFILE_ENABLED, /* function_profile_enabled (lib/runtime/ftrace.c) */
	MK_STAT_FUNCTION,        /* trace_stat/function<N>: evid is N */
	MK_SET_FTRACE_PID,
	MK_SET_FTRACE_NOTRACE_PID,
};

struct mnode {
	enum mkind kind;
	pid_t pid;
	uint64_t start;          /* the process's start time (/proc/<pid>/stat) */
	uint32_t evid;           /* MK_EV and its files */
	uint32_t inst;           /* the instance (its handle), 0: the top level */
	char *sys, *ev;          /* malloc()ed; MK_SYS, MK_EV and their files */
};

static inline bool mk_is_dir(enum mkind k)
{
	return k == MK_ROOT || k == MK_PID || k == MK_EVENTS || k == MK_SYS || k == MK_EV ||
	       k == MK_OPTIONS || k == MK_PER_CPU || k == MK_CPU || k == MK_INSTANCES ||
	       k == MK_INST || k == MK_TRACE_STAT;
}

/* The CPUs per_cpu/ has a directory for: the possible ones, as trace-cmd
 * counts them (sysconf(_SC_NPROCESSORS_CONF)). */
unsigned int mount_nr_cpus(void);

/* The fixed entries of a directory kind (NULL-terminated). */
struct mentry {
	const char *name;
	enum mkind kind;
};
const struct mentry *mount_fixed_entries(const struct mnode *dir);

/* The kernel's own "ftrace" system: listed under events/ with each
 * event's format and id only, never in available_events or set_event. */
static inline bool mount_sys_ftrace(const char *sys)
{
	return sys && !strcmp(sys, "ftrace");
}
/* options/: the name of the option file number 'i', or NULL past the last. */
const char *mount_option_file(uint32_t i);
/* The index of options/<name>, or -ENOENT. */
int mount_option_lookup(const char *name);
/* st_mode permission bits of a kind, as tracefs has them. */
unsigned int mount_mode(enum mkind k);

/*
 * mount-procs.c: the process 'pid': 0 when it is alive (not a zombie) and, if 'start'
 * is not 0, started at 'start'; -ENOENT otherwise.  Fills what is not NULL.
 */
int mount_proc(pid_t pid, uint64_t start, uint64_t *start_out, uid_t *uid, gid_t *gid,
	       struct timespec *when);

/*
 * Connect to the agent of the process a node belongs to; -ENOENT if gone,
 * -EBUSY if its agent is busy (took no connection, or did not answer, in
 * 10 s): a busy process's files are there, never ENOENT or ENODEV
 * (mount_gone()).
 */
int mount_ctl(const struct mnode *m, struct utrace__ctl **c);

/* The events of the process a node belongs to (free them with
 * utrace__ctl_events_free()); -ENOENT if it is gone, -EBUSY if busy. */
int mount_events(const struct mnode *m, struct utrace__ctl_event **evs, size_t *nr);

/* The error for a node whose process could not be reached ('err', from
 * mount_ctl() or a request): -EBUSY stays, anything else is 'gone'. */
static inline int mount_gone(int err, int gone)
{
	return err == -EBUSY || err == -ETIMEDOUT ? -EBUSY : gone;
}

/* An open file: the generated text and the writer's side. */
struct mfile {
	struct mnode m;
	int flags;               /* open flags */
	char *text;
	size_t len;
	bool have_text;
};

/* Text of a file, made at open or at a read from offset 0. -errno. */
int mount_file_text(struct mfile *f, char **text, size_t *len);
/* What an open does first: the O_TRUNC of set_event, trace, error_log. */
int mount_file_open(struct mfile *f);
/* The truncate that follows an open without atomic O_TRUNC. */
int mount_file_truncate(const struct mnode *m);
/* A write: the bytes consumed or -errno, as the kernel's file would. */
long mount_file_write(struct mfile *f, const char *buf, size_t len);

/* mount-procs.c: the whole lines a closing trace_pipe did not return,
 * per process, for its next reader. */
void mount_stash_put(pid_t pid, uint64_t start, uint32_t inst, const char *text, size_t len);
/* Take them (malloc()ed, *len bytes), or NULL. */
char *mount_stash_take(pid_t pid, uint64_t start, uint32_t inst, size_t *len);
/* Drop the trace_pipe text kept for a process (its trace was cleared). */
void mount_pipe_clear(pid_t pid, uint64_t start, uint32_t inst);

/*
 * mount-procs.c: the snapshot of a process's buffer (the snapshot file of
 * its directory or of an instance, 'inst'): a copy of its pages kept in
 * the mount.  mount_snap_take() takes one
 * (allocating), _free() frees it, _clear() empties an allocated one;
 * mount_snap_print() prints it as the snapshot file (-errno), after
 * taking in a copy the process's snapshot trigger made since.
 */
struct live;
int mount_snap_take(pid_t pid, uint64_t start, uint32_t inst, struct live *lv);
void mount_snap_free(pid_t pid, uint64_t start, uint32_t inst);
void mount_snap_clear(pid_t pid, uint64_t start, uint32_t inst);
/* Allocate an empty one if none is (a snapshot trigger is set). */
int mount_snap_alloc(pid_t pid, uint64_t start, uint32_t inst);
int mount_snap_print(struct utrace__ctl *c, pid_t pid, uint64_t start, uint32_t inst,
		     unsigned int flags, FILE *out);

/* mount-procs.c: files of an instance open (rmdir is EBUSY meanwhile). */
void mount_inst_ref(pid_t pid, uint64_t start, uint32_t inst, int delta);
bool mount_inst_busy(pid_t pid, uint64_t start, uint32_t inst);

/*
 * mount-procs.c: the trace options of a process directory that live only
 * in the mount (a bit per option of mount-files.c's table), kept while the
 * process lives.  mount_opts_get() gives 'dflt' to a process not seen yet.
 */
uint64_t mount_opts_get(pid_t pid, uint64_t start, uint32_t inst, uint64_t dflt);
void mount_opts_set(pid_t pid, uint64_t start, uint32_t inst, uint64_t opts);

/* mount-readme.c: the kernel's README text. */
extern const char mount_readme[];

/* The live_print() flags the options of a process directory ask for
 * (LIVE_NO_IRQ_INFO when irq-info is off). */
unsigned int mount_live_flags(const struct mnode *m);

/* The kernel's parsers, exposed for tests. */
int mount_kstrtoul_user(const char *buf, size_t len, unsigned long long *val);
long mount_get_token(const char *buf, size_t len, size_t *tok, size_t *toklen);

#endif /* UTRACE_TOOL_MOUNT_H */
