/* SPDX-License-Identifier: MIT */
/* Writing trace files (docs/trace-file-format.md). */
#ifndef UTRACE_TRACEFILE_WRITER_H
#define UTRACE_TRACEFILE_WRITER_H

#include <stdint.h>

#include "compiler.h"
#include <stdio.h>
#include <sys/uio.h>

#define UTRACE_TF_MAGIC "UTRACE\n"        /* 8 bytes with its NUL */
#define UTRACE_TF_VERSION 1
#define UTRACE_TF_HEADER_SIZE 64

enum utrace__tf_type {
	UTRACE_TF_CLOCK = 1,
	UTRACE_TF_PROCESS = 2,
	UTRACE_TF_FORMAT = 3,
	UTRACE_TF_THREAD = 4,
	UTRACE_TF_PAGE = 5,
	UTRACE_TF_LOST = 6,
	UTRACE_TF_STATS = 7,
	UTRACE_TF_END = 8,
};

/* Header flags */
#define UTRACE_TF_FLAG_END 1u   /* a file that ended cleanly ends with END */

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

int utrace__tfw_open(struct utrace__tfw *w, const char *path,
		   uint32_t page_size) UTRACE_HIDDEN;
/* The same on an open file descriptor (closed by utrace__tfw_close()). */
int utrace__tfw_open_fd(struct utrace__tfw *w, int fd, const char *name,
		      uint32_t page_size) UTRACE_HIDDEN;
/* The same on an open stream, written through its descriptor (closed by
 * utrace__tfw_close()). */
int utrace__tfw_open_stream(struct utrace__tfw *w, FILE *f, const char *name,
			  uint32_t page_size) UTRACE_HIDDEN;
/* One record whose payload is the concatenation of up to three parts,
 * written at once (after the queued pages): a record is in the file when
 * this returns, so a recorder killed later leaves it there. */
int utrace__tfw_record(struct utrace__tfw *w, uint32_t type,
		     const void *a, size_t alen, const void *b, size_t blen,
		     const void *c, size_t clen) UTRACE_HIDDEN;
/* A PAGE-like record written straight from its source memory with
 * writev(2): 'hdr' then 'page' (page_size bytes).  Batched: records are
 * queued until utrace__tfw_flush_pages() or the batch is full; the memory
 * must stay valid until then. */
int utrace__tfw_page(struct utrace__tfw *w, const void *hdr, size_t hlen,
		   const void *page, size_t plen) UTRACE_HIDDEN;
int utrace__tfw_flush_pages(struct utrace__tfw *w) UTRACE_HIDDEN;
/* Write the END record (unless a write failed) and close. */
int utrace__tfw_close(struct utrace__tfw *w) UTRACE_HIDDEN;

#endif /* UTRACE_TRACEFILE_WRITER_H */
