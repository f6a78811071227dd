/* SPDX-License-Identifier: MIT */
/*
 * The records of a utrace trace file (docs/trace-file-format.md), named
 * once for the writer (file-writer.c, one function per record type) and
 * the reader (file-reader.c, which reads each field at its offsetof() in
 * the file's byte order and never trusts a size).
 *
 * Every record: u32 type, u32 flags, u64 size, then 'size' bytes of
 * payload padded to 8.  The payload starts with the fixed part below,
 * then the variable part the comment names.
 */
#ifndef UTRACE_READER_FILE_FORMAT_H
#define UTRACE_READER_FILE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define UTRACE_TF_MAGIC "UTRACE\n"        /* 8 bytes with its NUL */
#define UTRACE_TF_VERSION 1
#define UTRACE_TF_HEADER_SIZE 64
#define UTRACE_TF_REC_HDR 16              /* type, flags, size */

/* Header flags */
#define UTRACE_TF_FLAG_END 1u   /* a file that ended cleanly ends with END */

enum utrace__tf_type {
	UTRACE_TF_CLOCK = 1,
	UTRACE_TF_PROCESS = 2,
	UTRACE_TF_FORMAT = 3,
	UTRACE_TF_THREAD = 4,
	UTRACE_TF_PAGE = 5,
	UTRACE_TF_LOST = 6,
	UTRACE_TF_STATS = 7,
	UTRACE_TF_END = 8,
	UTRACE_TF_CALIB = 9,
	UTRACE_TF_SYMBOL = 10,
	UTRACE_TF_KFORMAT = 11,
	UTRACE_TF_KPAGE = 12,
	UTRACE_TF_KTASK = 13,
	UTRACE_TF_CALIBX = 14,
	UTRACE_TF_OBJECT = 15,
};

/* CLOCK: one TSC / CLOCK_MONOTONIC calibration point. */
struct utrace__tf_clock_rec {
	uint64_t tsc, ns;
};

/* CALIB: calibration point 'index' of the pool of process 'pid' (the
 * table of lib/common/calib.c, copied). */
struct utrace__tf_calib_rec {
	uint32_t pid, index;
	uint64_t tsc, ns;
};

/* CALIBX: what was read with CALIB point 'index' of process 'pid'
 * (struct utrace_calib_ext of pool.h): CLOCK_MONOTONIC_RAW ns at TSC
 * 'tsc', the offsets of CLOCK_BOOTTIME and CLOCK_TAI from
 * CLOCK_MONOTONIC; for the trace clocks other than mono. */
struct utrace__tf_calibx_rec {
	uint32_t pid, index;
	uint64_t tsc, raw;
	int64_t boot, tai;
};

/* PROCESS: then "comm\0exe\0".  clock: enum utrace_clock of its pool;
 * trace_clock: the enum utrace_trace_clock its readers show (0, mono, in
 * files of older writers, where the field was reserved). */
struct utrace__tf_process_rec {
	uint32_t pid, ppid, clock, trace_clock;
};

/* FORMAT: then "system\0format\0" (the text of events/<sys>/<ev>/format). */
struct utrace__tf_format_rec {
	uint32_t pid, id;
};

/* THREAD: then "comm\0". */
struct utrace__tf_thread_rec {
	uint32_t pid, tid;
};

/* PAGE: then the page (the file header's page size), kernel layout. */
struct utrace__tf_page_rec {
	uint32_t pid, tid, cpu, reserved;
	uint64_t seq, lost_before;
};

/* LOST: events of a thread (tid 0: of the process) in no page. */
struct utrace__tf_lost_rec {
	uint32_t pid, tid;
	uint64_t count;
};

/* SYMBOL: then "name\0": a function or data object of the process
 * (its address in the process, its size), for %ps / %pS.  Written after
 * the process's PROCESS record; a reader that does not know it skips it. */
struct utrace__tf_symbol_rec {
	uint32_t pid, reserved;
	uint64_t addr, size;
};

/* OBJECT: then "path\0": an ELF object process pid has loaded, at
 * [start, end) with load bias 'bias' (what its SYMBOL records add), so
 * that readers name an address no symbol holds [object]+0xoff. */
struct utrace__tf_object_rec {
	uint32_t pid, reserved;
	uint64_t start, end, bias;
};

/* KFORMAT: then "system\0format\0": a kernel event's format, exactly as
 * tracefs's events/<sys>/<ev>/format shows it; 'id' is its kernel id. */
struct utrace__tf_kformat_rec {
	uint32_t id, reserved;
};

/* KPAGE: then one kernel ring-buffer page of CPU 'cpu' as trace_pipe_raw
 * gives it (the record's size says how long: 16 bytes to 1 MiB), times
 * in CLOCK_MONOTONIC ns (the instance's 'mono' trace clock).  'seq'
 * counts the CPU's pages from 0. */
struct utrace__tf_kpage_rec {
	uint32_t cpu, reserved;
	uint64_t seq;
};

/* KTASK: then "comm\0": the name and thread group of a task that kernel
 * events name by common_pid. */
struct utrace__tf_ktask_rec {
	uint32_t pid, tgid;
};

/* STATS: what the process wrote and lost, at its end; 'missed': the
 * messages (formats, objects) it never sent its recorder, which had
 * stopped reading (0 in older files, where it was reserved). */
struct utrace__tf_stats_rec {
	uint32_t pid, missed;
	uint64_t written, lost;
};

_Static_assert(sizeof(struct utrace__tf_clock_rec) == 16, "CLOCK is 16 bytes");
_Static_assert(sizeof(struct utrace__tf_calib_rec) == 24, "CALIB is 24 bytes");
_Static_assert(sizeof(struct utrace__tf_calibx_rec) == 40, "CALIBX is 40 bytes");
_Static_assert(sizeof(struct utrace__tf_process_rec) == 16, "PROCESS starts with 16");
_Static_assert(sizeof(struct utrace__tf_format_rec) == 8, "FORMAT starts with 8");
_Static_assert(sizeof(struct utrace__tf_thread_rec) == 8, "THREAD starts with 8");
_Static_assert(sizeof(struct utrace__tf_page_rec) == 32, "PAGE starts with 32");
_Static_assert(offsetof(struct utrace__tf_page_rec, seq) == 16, "PAGE seq at 16");
_Static_assert(sizeof(struct utrace__tf_lost_rec) == 16, "LOST is 16 bytes");
_Static_assert(sizeof(struct utrace__tf_stats_rec) == 24, "STATS is 24 bytes");
_Static_assert(sizeof(struct utrace__tf_symbol_rec) == 24, "SYMBOL starts with 24");
_Static_assert(sizeof(struct utrace__tf_kformat_rec) == 8, "KFORMAT starts with 8");
_Static_assert(sizeof(struct utrace__tf_object_rec) == 32, "OBJECT starts with 32");
_Static_assert(sizeof(struct utrace__tf_kpage_rec) == 16, "KPAGE starts with 16");
_Static_assert(sizeof(struct utrace__tf_ktask_rec) == 8, "KTASK starts with 8");

#endif /* UTRACE_READER_FILE_FORMAT_H */
