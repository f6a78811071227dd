/* SPDX-License-Identifier: MIT */
/* Writing trace files (docs/trace-file-format.md). */
#ifndef UTRACE_TRACEFILE_WRITER_H
#define UTRACE_TRACEFILE_WRITER_H

#include <stdint.h>

#include <stdio.h>
#include <sys/uio.h>

#include "compiler.h"
#include "file-format.h"

#define UTRACE_TF_BATCH 64

struct utrace__tfw {
	int fd;
	FILE *f;              /* utrace__tfw_open_stream()'s, closed at the end */
	const char *path;
	uint64_t bytes;       /* written to the file */
	int error;            /* errno of the first failure */
	uint64_t pages_done;  /* utrace__tfw_page() records written whole */
	int nr_iov;
	struct iovec *iov;    /* 3 per queued page record */
	unsigned char (*hdrs)[64];
};

/* A new trace file at path (replacing one there).  'private': a new file
 * of mode 0600, never the old one's inode (which others may hold open):
 * for a file that will hold data of more than one user. */
int utrace__tfw_open(struct utrace__tfw *w, const char *path,
		   uint32_t page_size, bool private) UTRACE_HIDDEN;
/* The same on an open file descriptor (closed by utrace__tfw_close()). */
int utrace__tfw_open_fd(struct utrace__tfw *w, int fd, const char *name,
		      uint32_t page_size) UTRACE_HIDDEN;
/* The same on an open stream, written through its descriptor (closed by
 * utrace__tfw_close()). */
int utrace__tfw_open_stream(struct utrace__tfw *w, FILE *f, const char *name,
			  uint32_t page_size) UTRACE_HIDDEN;
/*
 * One function per record type (file-format.h): each record is in the
 * file when its function returns (after the queued pages), so a recorder
 * killed later leaves it there.  0 or -errno (the first write error, kept:
 * nothing more is written after it).
 */
int utrace__tfw_clock(struct utrace__tfw *w, uint64_t tsc, uint64_t ns) UTRACE_HIDDEN;
/* A CALIB record: point 'index' of process 'pid' (file-format.h). */
int utrace__tfw_calib(struct utrace__tfw *w, uint32_t pid, uint32_t index, uint64_t tsc,
		      uint64_t ns) UTRACE_HIDDEN;
/* A CALIBX record: what was read with point 'index' (file-format.h). */
struct utrace_calib_ext;
int utrace__tfw_calibx(struct utrace__tfw *w, uint32_t pid, uint32_t index,
		       const struct utrace_calib_ext *x) UTRACE_HIDDEN;
/* One symbol of process pid (its address there), for %ps / %pS. */
int utrace__tfw_symbol(struct utrace__tfw *w, uint32_t pid, uint64_t addr, uint64_t size,
		       const char *name) UTRACE_HIDDEN;
/* The symbols of the ELF files process pid maps (/proc/<pid>/maps), each
 * file's once; the number written or -errno. */
int utrace__tfw_symbols_of(struct utrace__tfw *w, uint32_t pid) UTRACE_HIDDEN;
/* The same, with the files' tables kept in c between calls (a live
 * reader's passes); free c with utrace__symcache_free(). */
struct utrace__symcache {
	struct utrace__symcache_ent *v;
	size_t nr;
};
int utrace__tfw_symbols_cached(struct utrace__tfw *w, uint32_t pid,
			       struct utrace__symcache *c) UTRACE_HIDDEN;
void utrace__symcache_free(struct utrace__symcache *c) UTRACE_HIDDEN;
/* The symbols of the ELF file open on fd, loaded in process pid with
 * load bias 'bias' (what the process's OBJECT message says and passes:
 * the process opened it, so nothing it could not read is read).  Only a
 * regular file is read (-EINVAL else).  The number written or -errno. */
int utrace__tfw_symbols_fd(struct utrace__tfw *w, uint32_t pid, int fd, uint64_t bias)
	UTRACE_HIDDEN;
/* An ELF object of process pid at [start, end), load bias 'bias'. */
int utrace__tfw_object(struct utrace__tfw *w, uint32_t pid, uint64_t start, uint64_t end,
		       uint64_t bias, const char *path) UTRACE_HIDDEN;
int utrace__tfw_process(struct utrace__tfw *w, uint32_t pid, uint32_t ppid, uint32_t clock,
			uint32_t trace_clock, const char *comm, const char *exe) UTRACE_HIDDEN;
int utrace__tfw_format(struct utrace__tfw *w, uint32_t pid, uint32_t id,
		       const char *system, const char *format) UTRACE_HIDDEN;
int utrace__tfw_thread(struct utrace__tfw *w, uint32_t pid, uint32_t tid,
		       const char *comm) UTRACE_HIDDEN;
int utrace__tfw_lost(struct utrace__tfw *w, uint32_t pid, uint32_t tid,
		     uint64_t count) UTRACE_HIDDEN;
/* 'missed': the messages (formats, objects) the process could not send
 * to the recorder, which had stopped reading (STATS's second field). */
int utrace__tfw_stats(struct utrace__tfw *w, uint32_t pid, uint64_t written,
		      uint64_t lost, uint32_t missed) UTRACE_HIDDEN;
/* Kernel events (KFORMAT, KPAGE, KTASK of file-format.h): a kernel
 * event's format text, one raw ring-buffer page of a CPU (plen bytes, as
 * trace_pipe_raw gives it), a task's name and thread group. */
int utrace__tfw_kformat(struct utrace__tfw *w, uint32_t id, const char *system,
			const char *format) UTRACE_HIDDEN;
int utrace__tfw_kpage(struct utrace__tfw *w, uint32_t cpu, uint64_t seq, const void *page,
		      size_t plen) UTRACE_HIDDEN;
int utrace__tfw_ktask(struct utrace__tfw *w, uint32_t pid, uint32_t tgid,
		      const char *comm) UTRACE_HIDDEN;
/* A PAGE record now: 'h', then 'page' (page_size bytes). */
int utrace__tfw_page_now(struct utrace__tfw *w, const struct utrace__tf_page_rec *h,
			 const void *page, size_t plen) UTRACE_HIDDEN;
/* A PAGE record written straight from its source memory with writev(2):
 * batched, queued until utrace__tfw_flush_pages() or the batch is full;
 * 'page' must stay valid until then ('rec' is copied). */
int utrace__tfw_page(struct utrace__tfw *w, const struct utrace__tf_page_rec *rec,
		     const void *page, size_t plen) UTRACE_HIDDEN;
int utrace__tfw_flush_pages(struct utrace__tfw *w) UTRACE_HIDDEN;
/* Write the END record (unless a write failed) and close. */
int utrace__tfw_close(struct utrace__tfw *w) UTRACE_HIDDEN;

#endif /* UTRACE_TRACEFILE_WRITER_H */
