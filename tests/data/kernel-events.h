/* SPDX-License-Identifier: MIT */
/*
 * Kernel events declared as the kernel declares them (include/trace/events/
 * sched.h and irq.h, trimmed to the fields), to check that utrace's format
 * files match the kernel's byte for byte.  Built against the compat headers.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sched

#if !defined(_TRACE_KSCHED_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_KSCHED_H

#include <linux/tracepoint.h>

#ifndef KSCHED_HELPERS
#define KSCHED_HELPERS
#define TASK_COMM_LEN 16
#define TASK_RUNNING 0x00000000
#define TASK_INTERRUPTIBLE 0x00000001
#define TASK_UNINTERRUPTIBLE 0x00000002
#define __TASK_STOPPED 0x00000004
#define __TASK_TRACED 0x00000008
#define EXIT_DEAD 0x00000010
#define EXIT_ZOMBIE 0x00000020
#define TASK_PARKED 0x00000040
#define TASK_REPORT (TASK_RUNNING | TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE | \
		     __TASK_STOPPED | __TASK_TRACED | EXIT_DEAD | EXIT_ZOMBIE | \
		     TASK_PARKED)
#define TASK_REPORT_IDLE (TASK_REPORT + 1)
#define TASK_REPORT_MAX (TASK_REPORT_IDLE << 1)
#endif

TRACE_EVENT(sched_switch,

	TP_PROTO(const char *prev_comm, pid_t prev_pid, int prev_prio,
		 long prev_state, const char *next_comm, pid_t next_pid,
		 int next_prio),

	TP_ARGS(prev_comm, prev_pid, prev_prio, prev_state, next_comm,
		next_pid, next_prio),

	TP_STRUCT__entry(
		__array(	char,	prev_comm,	TASK_COMM_LEN	)
		__field(	pid_t,	prev_pid			)
		__field(	int,	prev_prio			)
		__field(	long,	prev_state			)
		__array(	char,	next_comm,	TASK_COMM_LEN	)
		__field(	pid_t,	next_pid			)
		__field(	int,	next_prio			)
	),

	TP_fast_assign(
		strncpy(__entry->prev_comm, prev_comm, TASK_COMM_LEN - 1);
		__entry->prev_comm[TASK_COMM_LEN - 1] = 0;
		__entry->prev_pid	= prev_pid;
		__entry->prev_prio	= prev_prio;
		__entry->prev_state	= prev_state;
		strncpy(__entry->next_comm, next_comm, TASK_COMM_LEN - 1);
		__entry->next_comm[TASK_COMM_LEN - 1] = 0;
		__entry->next_pid	= next_pid;
		__entry->next_prio	= next_prio;
	),

	TP_printk("prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d",
		__entry->prev_comm, __entry->prev_pid, __entry->prev_prio,

		(__entry->prev_state & (TASK_REPORT_MAX - 1)) ?
		  __print_flags(__entry->prev_state & (TASK_REPORT_MAX - 1), "|",
				{ TASK_INTERRUPTIBLE, "S" },
				{ TASK_UNINTERRUPTIBLE, "D" },
				{ __TASK_STOPPED, "T" },
				{ __TASK_TRACED, "t" },
				{ EXIT_DEAD, "X" },
				{ EXIT_ZOMBIE, "Z" },
				{ TASK_PARKED, "P" },
				{ 0x00000080, "I" }) :
		  "R",

		__entry->prev_state & TASK_REPORT_MAX ? "+" : "",
		__entry->next_comm, __entry->next_pid, __entry->next_prio)
);

TRACE_EVENT(sched_wakeup,

	TP_PROTO(const char *comm, pid_t pid, int prio, int target_cpu),

	TP_ARGS(comm, pid, prio, target_cpu),

	TP_STRUCT__entry(
		__array(	char,	comm,	TASK_COMM_LEN	)
		__field(	pid_t,	pid			)
		__field(	int,	prio			)
		__field(	int,	target_cpu		)
	),

	TP_fast_assign(
		strncpy(__entry->comm, comm, TASK_COMM_LEN - 1);
		__entry->comm[TASK_COMM_LEN - 1] = 0;
		__entry->pid		= pid;
		__entry->prio		= prio;
		__entry->target_cpu	= target_cpu;
	),

	TP_printk("comm=%s pid=%d prio=%d target_cpu=%03d",
		  __entry->comm, __entry->pid, __entry->prio,
		  __entry->target_cpu)
);

TRACE_EVENT(sched_process_fork,

	TP_PROTO(const char *parent, pid_t parent_pid, const char *child,
		 pid_t child_pid),

	TP_ARGS(parent, parent_pid, child, child_pid),

	TP_STRUCT__entry(
		__string(	parent_comm,	parent		)
		__field(	pid_t,		parent_pid	)
		__string(	child_comm,	child		)
		__field(	pid_t,		child_pid	)
	),

	TP_fast_assign(
		__assign_str(parent_comm);
		__entry->parent_pid	= parent_pid;
		__assign_str(child_comm);
		__entry->child_pid	= child_pid;
	),

	TP_printk("comm=%s pid=%d child_comm=%s child_pid=%d",
		__get_str(parent_comm), __entry->parent_pid,
		__get_str(child_comm), __entry->child_pid)
);

TRACE_EVENT(sched_process_exec,

	TP_PROTO(const char *filename, pid_t pid, pid_t old_pid),

	TP_ARGS(filename, pid, old_pid),

	TP_STRUCT__entry(
		__string(	filename,	filename	)
		__field(	pid_t,		pid		)
		__field(	pid_t,		old_pid		)
	),

	TP_fast_assign(
		__assign_str(filename);
		__entry->pid		= pid;
		__entry->old_pid	= old_pid;
	),

	TP_printk("filename=%s pid=%d old_pid=%d", __get_str(filename),
		  __entry->pid, __entry->old_pid)
);

#endif /* _TRACE_KSCHED_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kernel-events
#include <trace/define_trace.h>
