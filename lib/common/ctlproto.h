/* SPDX-License-Identifier: MIT */
/*
 * The control protocol between a client (utrace CLI, FUSE mount) and the
 * agent thread of a traced process, over a SOCK_SEQPACKET unix socket at
 * "<runtime dir>/<pid>.sock".  Each request is one packet, answered by
 * one packet:
 *
 *   request:  struct utrace_ctl_req, then the payload
 *   answer:   struct utrace_ctl_ans, then the payload (text, records)
 *
 * Answers larger than one packet allows (event lists, formats) come as
 * several packets, each with UTRACE_CTL_MORE set but the last.
 */
#ifndef UTRACE_CONTROL_CTLPROTO_H
#define UTRACE_CONTROL_CTLPROTO_H

#include <stdint.h>

#define UTRACE_CTL_VERSION 1
#define UTRACE_CTL_MAX_PACKET 65536
#define UTRACE_CTL_MORE 1u

enum utrace_ctl_op {
	UTRACE_CTL_INFO = 1,          /* -> struct utrace_ctl_info_msg */
	UTRACE_CTL_EVENTS,            /* -> utrace_ctl_event_msg + "sys\0name\0", repeated;
				       * arg 1: the events removed, whose records
				       * may still be in the buffers (their
				       * FORMAT still answers) */
	UTRACE_CTL_FORMAT,            /* id -> text */
	UTRACE_CTL_SET_EVENT,         /* payload token -> status = count */
	UTRACE_CTL_CLEAR_EVENTS,
	UTRACE_CTL_ENABLE,            /* id, arg on */
	UTRACE_CTL_ENABLE_SYSTEM,     /* payload system ("": all), arg on */
	UTRACE_CTL_FILTER,            /* id, payload expr -> struct utrace_ctl_filter_msg */
	UTRACE_CTL_FILTER_SYSTEM,     /* payload "system\0expr" */
	UTRACE_CTL_FILTER_TEXT,       /* id -> text */
	UTRACE_CTL_FILTER_SYSTEM_TEXT,/* payload system -> text */
	UTRACE_CTL_ERROR_LOG,         /* -> text */
	UTRACE_CTL_ERROR_LOG_CLEAR,
	UTRACE_CTL_TRACING_ON,        /* arg: 0, 1, or -1 to ask */
	UTRACE_CTL_BUFFER_SIZE,       /* size: 0 to ask -> size */
	UTRACE_CTL_CLEAR_BUFFER,
	UTRACE_CTL_POOL,              /* -> the pool's memfd (SCM_RIGHTS) */
	UTRACE_CTL_ATTACH,            /* arg mode, payload recorder socket path */
	UTRACE_CTL_POOL_MODE,         /* arg: enum utrace_pool_mode, or -1 to ask */
	UTRACE_CTL_MARKER,            /* arg raw, payload bytes -> status = bytes taken */
	UTRACE_CTL_EVENT_PID,         /* id enum utrace_ctl_pid_list, arg enum
				       * utrace_ctl_pid_action, payload the write
				       * -> text (READ), status = bytes taken (ADD) */
	UTRACE_CTL_INSTANCES,         /* -> text "<handle> <name>\n" per instance */
	UTRACE_CTL_INSTANCE_MKDIR,    /* payload name -> status = handle */
	UTRACE_CTL_INSTANCE_RMDIR,    /* payload name */
	UTRACE_CTL_TRACE_CLOCK,       /* arg: enum utrace_trace_clock, -1 to ask,
				       * -2 for the clocks it has (a bit each) */
	UTRACE_CTL_TRIGGER,           /* id, arg 0: payload the write; arg 1: the
				       * open with O_TRUNC (hist triggers go)
				       * -> status, payload the error_log entry */
	UTRACE_CTL_TRIGGER_TEXT,      /* id -> the trigger file's text */
	UTRACE_CTL_HIST,              /* id -> the hist file's text */
	UTRACE_CTL_UPROBE,            /* arg enum utrace_ctl_uprobe; payload lines
				       * (WRITE) -> text (READ, PROFILE) */
	UTRACE_CTL_SYNTH,             /* arg enum utrace_ctl_synth; payload lines
				       * (WRITE) -> text (READ) */
	UTRACE_CTL_SNAPSHOT,          /* arg 0: -> status = its number (from 1)
				       * and the memfd of the snapshot trigger's
				       * copy of the pool, value the time (the
				       * pool's clock) of the trigger's event:
				       * later events are not in the snapshot
				       * (0: all are), or -ENOENT; arg 1: free it */
	UTRACE_CTL_SYNTH_DYN_LINES,   /* payload: dynamic_events' "s:..." lines (an
				       * older runtime: -EOPNOTSUPP) */
	UTRACE_CTL_FTRACE,            /* id enum utrace_ctl_ftrace_file, arg enum
				       * utrace_ctl_ftrace_action, payload the write
				       * -> text (READ); an older runtime:
				       * -EOPNOTSUPP */
	UTRACE_CTL_STACKS,            /* payload UTRACE_STACKS's MODE[,SIZE[,FRAMES]]:
				       * the attached recorder's events carry their
				       * call stacks until it goes (record -g -p);
				       * an older runtime: -EOPNOTSUPP */
};

/* UTRACE_CTL_FTRACE: the function tracers' files (lib/runtime/ftrace.c). */
enum utrace_ctl_ftrace_file {
	UTRACE_CTL_FT_CURRENT_TRACER = 0,
	UTRACE_CTL_FT_AVAILABLE_TRACERS = 1,
	UTRACE_CTL_FT_AVAILABLE_FUNCS = 2,   /* available_filter_functions */
	UTRACE_CTL_FT_FILTER = 3,            /* set_ftrace_filter */
	UTRACE_CTL_FT_NOTRACE = 4,           /* set_ftrace_notrace */
	UTRACE_CTL_FT_GRAPH_FUNCTION = 5,    /* set_graph_function */
	UTRACE_CTL_FT_MAX_GRAPH_DEPTH = 6,
	UTRACE_CTL_FT_ENABLED_FUNCS = 7,     /* enabled_functions */
	UTRACE_CTL_FT_PROFILE_ENABLED = 8,   /* function_profile_enabled */
	UTRACE_CTL_FT_SET_PID = 9,           /* set_ftrace_pid */
	UTRACE_CTL_FT_NOTRACE_PID = 10,      /* set_ftrace_notrace_pid */
	UTRACE_CTL_FT_GRAPH_TIME = 11,       /* options/graph-time */
	UTRACE_CTL_FT_NR
};
/* trace_stat/function<N>: UTRACE_CTL_FT_STAT_FUNCTION | N (READ only) */
#define UTRACE_CTL_FT_STAT_FUNCTION 0x10000u

enum utrace_ctl_ftrace_action {
	UTRACE_CTL_FT_READ = 0,
	UTRACE_CTL_FT_WRITE = 1,      /* the lists: added to (a '>>' or a later write) */
	UTRACE_CTL_FT_CLEAR = 2,      /* the lists: an open with O_TRUNC */
};

/* UTRACE_CTL_SYNTH: synthetic_events (lib/runtime/synth.c). */
enum utrace_ctl_synth {
	UTRACE_CTL_SYNTH_READ = 0,
	UTRACE_CTL_SYNTH_WRITE = 1,   /* lines, applied in order */
	UTRACE_CTL_SYNTH_CLEAR = 2,   /* an open with O_TRUNC */
	UTRACE_CTL_SYNTH_DYN = 3,     /* dynamic_events lines "s:[synthetic/]NAME ..."
				       * (op UTRACE_CTL_SYNTH_DYN_LINES) */
};

/* UTRACE_CTL_UPROBE: uprobe_events and uprobe_profile (lib/probe). */
enum utrace_ctl_uprobe {
	UTRACE_CTL_UPROBE_READ = 0,   /* uprobe_events' text */
	UTRACE_CTL_UPROBE_WRITE = 1,  /* definitions, a line each */
	UTRACE_CTL_UPROBE_CLEAR = 2,  /* an open with O_TRUNC */
	UTRACE_CTL_UPROBE_PROFILE = 3,/* uprobe_profile's text */
	UTRACE_CTL_UPROBE_VERBOSE = 4,/* uprobe_events with a line of detail
				       * under each (pending, IFUNC, sites) */
};

/*
 * The buffer a request is for: op holds the operation in its low
 * UTRACE_CTL_INST_SHIFT bits and above them an instance's handle
 * (UTRACE_CTL_INSTANCES), 0 for the top level.  A handle names one
 * instance for its life: after an rmdir the agent answers -ENODEV.
 */
#define UTRACE_CTL_INST_SHIFT 8
#define UTRACE_CTL_INST_IDX_BITS 6

/* UTRACE_CTL_EVENT_PID: which file, and what to do. */
enum utrace_ctl_pid_list {
	UTRACE_CTL_PIDS = 0,          /* set_event_pid */
	UTRACE_CTL_NOTRACE_PIDS = 1,  /* set_event_notrace_pid */
};

enum utrace_ctl_pid_action {
	UTRACE_CTL_PID_READ = 0,
	UTRACE_CTL_PID_CLEAR = 1,     /* an open with O_TRUNC */
	UTRACE_CTL_PID_ADD = 2,       /* a write */
};

struct utrace_ctl_req {
	uint32_t op;
	uint32_t version;
	uint32_t id;
	int32_t arg;
	uint64_t size;
};

struct utrace_ctl_ans {
	int32_t status;               /* >= 0, or -errno */
	uint32_t flags;               /* UTRACE_CTL_MORE */
	uint64_t value;
};

struct utrace_ctl_info_msg {
	uint32_t pid, ppid, uid;
	char comm[16];
	char exe[256];
	uint32_t nr_events, nr_enabled;
	uint32_t tracing_on, has_pool, mode, recorder;
	uint64_t buffer_size, pages_used, nr_pages, written, lost;
	/* since issue 16 (older agents send the message without them):
	 * tracepoint call sites rewritten as NOP/jmp, and on load and branch */
	uint32_t jump_sites, branch_sites;
};

/* utrace_ctl_event_msg.enabled: on, and held by a trigger (soft mode). */
#define UTRACE_CTL_EV_ON 1u
#define UTRACE_CTL_EV_SOFT 2u

struct utrace_ctl_event_msg {
	uint32_t id;
	uint8_t enabled, filtered;
	uint16_t len;                 /* of the strings that follow */
};

struct utrace_ctl_filter_msg {
	int32_t err, pos;
	char msg[128];
};

#endif /* UTRACE_CONTROL_CTLPROTO_H */
