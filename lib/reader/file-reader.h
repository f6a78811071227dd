/* SPDX-License-Identifier: MIT */
/*
 * Reading trace files (docs/trace-file-format.md).
 *
 * utrace__tf_open() maps the file read-only and checks all of it before
 * anything is read out: every record's size, every string's NUL, every
 * page's commit and every event header inside it.  It collects the
 * processes, threads and event formats, and an index of each thread's
 * pages.  An iterator then merges the events of all threads of all
 * processes into one stream in time order, with the timestamps converted
 * to CLOCK_MONOTONIC nanoseconds, and lost-event markers where the events
 * were lost.
 *
 * A bad record does not stop the reading: the first problem is kept as a
 * message ("'x.dat': record at offset 1234: page commit 5000 exceeds ...")
 * and the record is left out, quietly with what depends on it (the events
 * of a bad FORMAT, the records of a bad PROCESS); a record whose size runs
 * past the end of the file ends the reading there.  A file cut short (its
 * last record incomplete, or no END record where the header promises one:
 * the recorder was killed or the disk was full) is not an error: the
 * reader keeps a warning and reads every whole record before the cut.
 *
 * Nothing here prints; the caller shows the messages ("utrace: " + text).
 */
#ifndef UTRACE_TRACEFILE_READER_H
#define UTRACE_TRACEFILE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct utrace__tf;
struct utrace__tf_iter;

/* A PROCESS record (strings point into the file). */
struct utrace__tf_process {
	uint32_t pid, ppid;
	uint32_t clock;                 /* 0: CLOCK_MONOTONIC ns, 1: TSC ticks */
	uint32_t trace_clock;           /* the trace clock it was read in
					 * (enum utrace_trace_clock of pool.h) */
	const char *comm, *exe;
	uint64_t offset;                /* of its PROCESS record */
	bool has_stats;                 /* a STATS record was read: */
	uint64_t written, lost;         /* what the process counted */
	uint32_t missed;                /* messages (formats, objects) it never
					 * sent its recorder, which had stopped
					 * reading */
};

/* A thread: from its THREAD record, or its first PAGE or LOST record. */
struct utrace__tf_thread {
	const struct utrace__tf_process *proc;
	uint32_t tid;
	const char *comm;               /* THREAD record's name, or NULL */
	uint64_t nr_pages, nr_events;
	uint64_t lost;                  /* sum of lost_before and LOST counts */
};

/* A FORMAT record: the text of events/<system>/<name>/format. */
struct utrace__tf_format {
	const struct utrace__tf_process *proc;
	uint32_t id;                    /* == the text's "ID:" line */
	const char *system, *name;
	const char *text;               /* NUL-terminated, text_len bytes */
	size_t text_len;
	const char *body;               /* the text after its "ID: n" line */
	uint64_t offset;                /* of its FORMAT record */
	void *priv;                     /* the caller's, NULL at open */
};

enum utrace__tf_kind {
	UTRACE__TF_EVENT = 1,
	UTRACE__TF_LOST = 2,
};

/* One step of the merged stream. */
struct utrace__tf_item {
	enum utrace__tf_kind kind;
	uint64_t time;                  /* ns of the process's trace clock
					 * (CLOCK_MONOTONIC unless chosen), or
					 * TSC ticks for x86-tsc */
	uint32_t cpu;
	const struct utrace__tf_process *proc;
	const struct utrace__tf_thread *thread;
	/* UTRACE__TF_EVENT: the record (at least 8 bytes, common fields
	 * first, not aligned) and its format, NULL when the process has no
	 * FORMAT for its common_type. */
	struct utrace__tf_format *format;
	bool format_rejected;           /* its FORMAT record was bad (reported) */
	uint32_t id;                    /* common_type */
	const unsigned char *rec;
	uint32_t len;
	uint64_t offset;                /* file offset of the event's header */
	uint64_t page_offset;           /* file offset of its PAGE record */
	bool kernel;                    /* a kernel event (a KPAGE's) */
	/* UTRACE__TF_LOST: events lost just before this point; 0 when the
	 * count is not known (the page's RB_MISSED_EVENTS bit alone). */
	uint64_t lost;
};

/*
 * Open and check a trace file.  Returns 0, or a negative code: -errno when
 * it cannot be read at all, -EBADMSG when it has bad records.  *tfp is set
 * in both cases (NULL only when out of memory); what it holds is the part
 * of the file that could be read, and utrace__tf_error() says what is
 * wrong.
 */
int utrace__tf_open(const char *path, struct utrace__tf **tfp) UTRACE_HIDDEN;
/* The same for a file already in memory (tests, fuzzing); 'name' names it
 * in messages.  The memory must outlive the handle. */
int utrace__tf_open_mem(const void *data, size_t size, const char *name,
			struct utrace__tf **tfp) UTRACE_HIDDEN;
void utrace__tf_close(struct utrace__tf *tf) UTRACE_HIDDEN;

/* The first problem, without a "utrace: " prefix; NULL if none. */
const char *utrace__tf_error(const struct utrace__tf *tf) UTRACE_HIDDEN;
/* Records left out because they were bad (the first is the error). */
uint64_t utrace__tf_nr_bad(const struct utrace__tf *tf) UTRACE_HIDDEN;
/* "'x.dat': file cut short at byte N (...)", or NULL. */
const char *utrace__tf_warning(const struct utrace__tf *tf) UTRACE_HIDDEN;
/* Whether the file was cut short, and at which byte (*offset). */
bool utrace__tf_cut(const struct utrace__tf *tf, uint64_t *offset) UTRACE_HIDDEN;
const char *utrace__tf_name(const struct utrace__tf *tf) UTRACE_HIDDEN;

uint32_t utrace__tf_page_size(const struct utrace__tf *tf) UTRACE_HIDDEN;

/*
 * The trace clock of every process's times (enum utrace_trace_clock of
 * pool.h), instead of the one each PROCESS record names: 0, or -ENOENT
 * when process *bad_pid's records cannot give it (an older file without
 * CALIBX records, a process timed with CLOCK_MONOTONIC); nothing changes
 * then.
 */
int utrace__tf_set_clock(struct utrace__tf *tf, uint32_t id, uint32_t *bad_pid) UTRACE_HIDDEN;
/* The trace clock a process's item times are in. */
uint32_t utrace__tf_proc_clock(const struct utrace__tf_process *proc) UTRACE_HIDDEN;
/* CLOCK_REALTIME and CLOCK_MONOTONIC when the recording started. */
void utrace__tf_start_time(const struct utrace__tf *tf, uint64_t *realtime_ns,
			   uint64_t *monotonic_ns) UTRACE_HIDDEN;
/* Events in the pages that were read. */
uint64_t utrace__tf_nr_events(const struct utrace__tf *tf) UTRACE_HIDDEN;

/*
 * A time the process wrote in its own clock (a record's field, as
 * ftrace:funcgraph_exit's calltime and rettime: TSC ticks where it counts
 * them) in its trace clock, as the items' times are.
 */
uint64_t utrace__tf_proc_time(const struct utrace__tf *tf, const struct utrace__tf_process *proc,
			      uint64_t t) UTRACE_HIDDEN;

/* Processes, threads and formats in file order; NULL past the end. */
/* The symbol of proc (its SYMBOL records) holding addr: 0 or -ENOENT.
 * ctx is unused (a utrace__syms_fn of formats.h). */
int utrace__tf_sym_lookup(void *ctx, const struct utrace__tf_process *proc, uint64_t addr,
			  const char **name, uint64_t *start, uint64_t *size) UTRACE_HIDDEN;
/* The object (OBJECT record) of proc at addr: its path and load bias; 0
 * or -ENOENT. */
int utrace__tf_obj_lookup(const struct utrace__tf_process *proc, uint64_t addr,
			  const char **path, uint64_t *bias) UTRACE_HIDDEN;
/* Symbol i of proc (its SYMBOL records, in no order): 0, or -ENOENT
 * past the last. */
int utrace__tf_sym_at(const struct utrace__tf_process *proc, size_t i, const char **name,
		      uint64_t *addr, uint64_t *size) UTRACE_HIDDEN;
const struct utrace__tf_process *utrace__tf_process(const struct utrace__tf *tf,
						    size_t i) UTRACE_HIDDEN;
const struct utrace__tf_thread *utrace__tf_thread(const struct utrace__tf *tf,
						  size_t i) UTRACE_HIDDEN;
struct utrace__tf_format *utrace__tf_format(const struct utrace__tf *tf,
					    size_t i) UTRACE_HIDDEN;
/*
 * Kernel events (KFORMAT, KPAGE, KTASK records) come out of the merged
 * stream as any other: their format's proc is the kernel (pid 0, comm
 * "kernel", in no list), their item's proc and thread the task of their
 * common_pid (tid: common_pid, proc->pid: its thread group when a KTASK
 * gave it, comm: the KTASK's name or "").  The tasks, in no order; NULL
 * past the last.  And the number of kernel events.
 */
const struct utrace__tf_thread *utrace__tf_ktask(const struct utrace__tf *tf,
						 size_t i) UTRACE_HIDDEN;
uint64_t utrace__tf_nr_kernel_events(const struct utrace__tf *tf) UTRACE_HIDDEN;
/* The format of event 'id' in process 'proc', or NULL. */
struct utrace__tf_format *utrace__tf_find_format(const struct utrace__tf *tf,
						 const struct utrace__tf_process *proc,
						 uint32_t id) UTRACE_HIDDEN;

/*
 * The merged stream.  Events come in time order; at equal times, in the
 * order their threads first appear in the file.  A lost-event marker comes
 * just before the first event of the page it belongs to; a LOST record's
 * marker after the last event of its thread.  utrace__tf_iter_next()
 * returns 1 with *item filled, 0 at the end, or -ENOMEM.
 */
/* The arguments of "%s %u has no %s for event id %u" of an event without
 * a format: "pid N ... FORMAT", or "kernel event of pid N ... KFORMAT". */
#define UTRACE__TF_NO_FORMAT_ARGS(it)						\
	(it)->kernel ? "kernel event of pid" : "pid",				\
	(it)->kernel ? (it)->thread->tid : (it)->proc->pid,			\
	(it)->kernel ? "KFORMAT" : "FORMAT", (it)->id

int utrace__tf_iter_new(struct utrace__tf *tf, struct utrace__tf_iter **itp) UTRACE_HIDDEN;
/* The same items, thread by thread instead of merged, and without their
 * times (0): for counting, which needs neither (report.c without
 * --latency); it skips the heap and the TSC conversion. */
int utrace__tf_iter_new_unordered(struct utrace__tf *tf,
				  struct utrace__tf_iter **itp) UTRACE_HIDDEN;
int utrace__tf_iter_next(struct utrace__tf_iter *it, struct utrace__tf_item *item) UTRACE_HIDDEN;
void utrace__tf_iter_free(struct utrace__tf_iter *it) UTRACE_HIDDEN;

#endif /* UTRACE_TRACEFILE_READER_H */
