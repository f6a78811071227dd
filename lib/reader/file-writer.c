/* SPDX-License-Identifier: MIT */
/*
 * Trace file writer: the header, then records appended with write(2)
 * straight to the file, in the order they are made.  There is no stdio
 * buffer: a record is in the file when utrace__tfw_record() returns, and
 * pages (queued, then written with writev(2)) never overtake the records
 * made before them.  So whatever ends the writer (SIGKILL, a crash, a full
 * disk) leaves a file whose records are all complete but maybe the last,
 * and every page has the records it needs (process, formats, clock points)
 * before it.  A file closed cleanly ends with an END record; a reader that
 * finds none knows the file was cut (docs/trace-file-format.md).
 *
 * The first write error is kept: nothing more is written after it (a
 * later record would follow a torn one), and every call returns it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elfsyms.h"
#include "pool.h"
#include "file-writer.h"

/* Write all of iov[0..n) (which it changes), or keep the error. */
static void write_all(struct utrace__tfw *w, struct iovec *iov, int n)
{
	int i = 0;

	while (!w->error && i < n) {
		ssize_t k = writev(w->fd, iov + i, n - i > IOV_MAX ? IOV_MAX : n - i);

		if (k < 0) {
			if (errno != EINTR)
				w->error = errno;
			continue;
		}
		if (k == 0) {
			w->error = EIO;
			break;
		}
		w->bytes += (uint64_t)k;
		while (i < n && (size_t)k >= iov[i].iov_len) {
			k -= (ssize_t)iov[i].iov_len;
			i++;
		}
		if (i < n) {
			iov[i].iov_base = (char *)iov[i].iov_base + k;
			iov[i].iov_len -= (size_t)k;
		}
	}
}

int utrace__tfw_open(struct utrace__tfw *w, const char *path, uint32_t page_size,
		     bool private)
{
	int fd, r;

	if (private) {
		/* a new inode: O_TRUNC would keep the old file's mode, and
		 * whoever has it open would read what comes */
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	}
	if (fd < 0)
		return -errno;
	r = utrace__tfw_open_fd(w, fd, path, page_size);
	if (r < 0) {
		close(fd);
		w->path = NULL;
		errno = -r;
	}
	return r;
}

int utrace__tfw_open_stream(struct utrace__tfw *w, FILE *f, const char *name,
			  uint32_t page_size)
{
	int r;

	fflush(f);
	r = utrace__tfw_open_fd(w, fileno(f), name, page_size);
	w->f = f;
	return r;
}

int utrace__tfw_open_fd(struct utrace__tfw *w, int fd, const char *name,
		      uint32_t page_size)
{
	unsigned char h[UTRACE_TF_HEADER_SIZE];
	struct iovec iov;
	uint32_t v;
	struct timespec rt, mono;

	memset(w, 0, sizeof(*w));
	w->path = name;
	w->fd = fd;
	memset(h, 0, sizeof(h));
	memcpy(h, UTRACE_TF_MAGIC, 8);
	v = UTRACE_TF_VERSION;
	memcpy(h + 8, &v, 4);
	v = UTRACE_TF_HEADER_SIZE;
	memcpy(h + 12, &v, 4);
	memcpy(h + 16, &page_size, 4);
	v = 0x01020304;
	memcpy(h + 20, &v, 4);
	v = sizeof(long);
	memcpy(h + 24, &v, 4);
	v = UTRACE_TF_FLAG_END;
	memcpy(h + 28, &v, 4);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t t = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	memcpy(h + 32, &t, 8);
	t = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	memcpy(h + 40, &t, 8);
	iov.iov_base = h;
	iov.iov_len = sizeof(h);
	write_all(w, &iov, 1);
	return w->error ? -w->error : 0;
}

/* One record whose payload is the concatenation of up to three parts. */
static int put_record(struct utrace__tfw *w, uint32_t type,
		      const void *a, size_t alen, const void *b, size_t blen,
		      const void *c, size_t clen)
{
	/* Keep the file in order: queued pages go first. */
	if (w->nr_iov)
		utrace__tfw_flush_pages(w);
	static const unsigned char zeros[8];
	unsigned char hdr[16];
	uint64_t size = alen + blen + clen;
	uint32_t flags = 0;
	struct iovec iov[5] = {
		{ hdr, 16 }, { (void *)(uintptr_t)a, alen }, { (void *)(uintptr_t)b, blen },
		{ (void *)(uintptr_t)c, clen }, { (void *)(uintptr_t)zeros, (8 - size % 8) % 8 },
	};

	memcpy(hdr, &type, 4);
	memcpy(hdr + 4, &flags, 4);
	memcpy(hdr + 8, &size, 8);
	write_all(w, iov, 5);
	return w->error ? -w->error : 0;
}

int utrace__tfw_flush_pages(struct utrace__tfw *w)
{
	uint64_t start = w->bytes, done;
	int k;

	write_all(w, w->iov, w->nr_iov);
	/* The records written whole (all but after an error), by their
	 * sizes in their headers (write_all() changed the iovecs). */
	done = w->bytes - start;
	for (k = 0; k < w->nr_iov / 3; k++) {
		uint64_t size;

		memcpy(&size, w->hdrs[k] + 8, 8);
		size = 16 + size + (8 - size % 8) % 8;
		if (done < size)
			break;
		done -= size;
		w->pages_done++;
	}
	w->nr_iov = 0;
	return w->error ? -w->error : 0;
}

int utrace__tfw_clock(struct utrace__tfw *w, uint64_t tsc, uint64_t ns)
{
	struct utrace__tf_clock_rec r = { tsc, ns };

	return put_record(w, UTRACE_TF_CLOCK, &r, sizeof(r), NULL, 0, NULL, 0);
}

int utrace__tfw_calib(struct utrace__tfw *w, uint32_t pid, uint32_t index, uint64_t tsc,
		      uint64_t ns)
{
	struct utrace__tf_calib_rec r = { pid, index, tsc, ns };

	return put_record(w, UTRACE_TF_CALIB, &r, sizeof(r), NULL, 0, NULL, 0);
}

int utrace__tfw_calibx(struct utrace__tfw *w, uint32_t pid, uint32_t index,
		       const struct utrace_calib_ext *x)
{
	struct utrace__tf_calibx_rec r = { pid, index, x->tsc, x->raw, x->boot, x->tai };

	return put_record(w, UTRACE_TF_CALIBX, &r, sizeof(r), NULL, 0, NULL, 0);
}

int utrace__tfw_process(struct utrace__tfw *w, uint32_t pid, uint32_t ppid, uint32_t clock,
			uint32_t trace_clock, const char *comm, const char *exe)
{
	struct utrace__tf_process_rec r = { pid, ppid, clock, trace_clock };

	return put_record(w, UTRACE_TF_PROCESS, &r, sizeof(r), comm, strlen(comm) + 1,
			  exe, strlen(exe) + 1);
}

int utrace__tfw_symbol(struct utrace__tfw *w, uint32_t pid, uint64_t addr, uint64_t size,
		       const char *name)
{
	struct utrace__tf_symbol_rec r = { pid, 0, addr, size };

	return put_record(w, UTRACE_TF_SYMBOL, &r, sizeof(r), name, strlen(name) + 1, NULL, 0);
}

int utrace__tfw_object(struct utrace__tfw *w, uint32_t pid, uint64_t start, uint64_t end,
		       uint64_t bias, const char *path)
{
	struct utrace__tf_object_rec r = { pid, 0, start, end, bias };

	return put_record(w, UTRACE_TF_OBJECT, &r, sizeof(r), path, strlen(path) + 1, NULL, 0);
}

int utrace__tfw_format(struct utrace__tfw *w, uint32_t pid, uint32_t id,
		       const char *system, const char *format)
{
	struct utrace__tf_format_rec r = { pid, id };

	return put_record(w, UTRACE_TF_FORMAT, &r, sizeof(r), system, strlen(system) + 1,
			  format, strlen(format) + 1);
}

int utrace__tfw_thread(struct utrace__tfw *w, uint32_t pid, uint32_t tid, const char *comm)
{
	struct utrace__tf_thread_rec r = { pid, tid };

	return put_record(w, UTRACE_TF_THREAD, &r, sizeof(r), comm, strlen(comm) + 1,
			  NULL, 0);
}

int utrace__tfw_lost(struct utrace__tfw *w, uint32_t pid, uint32_t tid, uint64_t count)
{
	struct utrace__tf_lost_rec r = { pid, tid, count };

	return put_record(w, UTRACE_TF_LOST, &r, sizeof(r), NULL, 0, NULL, 0);
}

int utrace__tfw_stats(struct utrace__tfw *w, uint32_t pid, uint64_t written, uint64_t lost,
		      uint32_t missed)
{
	struct utrace__tf_stats_rec r = { pid, missed, written, lost };

	return put_record(w, UTRACE_TF_STATS, &r, sizeof(r), NULL, 0, NULL, 0);
}

int utrace__tfw_kformat(struct utrace__tfw *w, uint32_t id, const char *system,
			const char *format)
{
	struct utrace__tf_kformat_rec r = { id, 0 };

	return put_record(w, UTRACE_TF_KFORMAT, &r, sizeof(r), system, strlen(system) + 1,
			  format, strlen(format) + 1);
}

int utrace__tfw_kpage(struct utrace__tfw *w, uint32_t cpu, uint64_t seq, const void *page,
		      size_t plen)
{
	struct utrace__tf_kpage_rec r = { cpu, 0, seq };

	return put_record(w, UTRACE_TF_KPAGE, &r, sizeof(r), page, plen, NULL, 0);
}

int utrace__tfw_ktask(struct utrace__tfw *w, uint32_t pid, uint32_t tgid, const char *comm)
{
	struct utrace__tf_ktask_rec r = { pid, tgid };

	return put_record(w, UTRACE_TF_KTASK, &r, sizeof(r), comm, strlen(comm) + 1,
			  NULL, 0);
}

int utrace__tfw_page_now(struct utrace__tfw *w, const struct utrace__tf_page_rec *h,
			 const void *page, size_t plen)
{
	return put_record(w, UTRACE_TF_PAGE, h, sizeof(*h), page, plen, NULL, 0);
}

int utrace__tfw_page(struct utrace__tfw *w, const struct utrace__tf_page_rec *rec,
		     const void *page, size_t plen)
{
	const void *hdr = rec;
	size_t hlen = sizeof(*rec);
	static const unsigned char zeros[8];
	uint64_t size = hlen + plen;
	uint32_t type = UTRACE_TF_PAGE, flags = 0;
	unsigned char *h;
	int k;

	if (hlen > 48)
		return -EINVAL;
	if (!w->iov) {
		w->iov = calloc(3 * UTRACE_TF_BATCH, sizeof(*w->iov));
		w->hdrs = calloc(UTRACE_TF_BATCH, sizeof(*w->hdrs));
		if (!w->iov || !w->hdrs)
			return -ENOMEM;
	}
	k = w->nr_iov / 3;
	h = w->hdrs[k];
	memcpy(h, &type, 4);
	memcpy(h + 4, &flags, 4);
	memcpy(h + 8, &size, 8);
	memcpy(h + 16, hdr, hlen);
	w->iov[w->nr_iov].iov_base = h;
	w->iov[w->nr_iov++].iov_len = 16 + hlen;
	w->iov[w->nr_iov].iov_base = (void *)(uintptr_t)page;
	w->iov[w->nr_iov++].iov_len = plen;
	w->iov[w->nr_iov].iov_base = (void *)(uintptr_t)zeros;
	w->iov[w->nr_iov++].iov_len = (8 - size % 8) % 8;
	if (w->nr_iov / 3 == UTRACE_TF_BATCH)
		return utrace__tfw_flush_pages(w);
	return 0;
}

int utrace__tfw_close(struct utrace__tfw *w)
{
	if (!w->path)
		return 0;                /* closed already */
	utrace__tfw_flush_pages(w);
	put_record(w, UTRACE_TF_END, NULL, 0, NULL, 0, NULL, 0);
	free(w->iov);
	free(w->hdrs);
	w->iov = NULL;
	w->hdrs = NULL;
	if (w->f) {
		if (fclose(w->f) != 0 && !w->error)
			w->error = errno;
	} else if (close(w->fd) != 0 && !w->error && errno != EINTR) {
		w->error = errno;
	}
	w->f = NULL;
	w->fd = -1;
	w->path = NULL;
	return w->error ? -w->error : 0;
}

/* The symbols of the ELF file open on fd, moved by bias. */
static int symbols_fd(struct utrace__tfw *w, uint32_t pid, int fd, uint64_t bias)
{
	struct utrace__symtab t;
	int written = 0;
	size_t i;
	char link[64], path[4096];
	ssize_t n;
	uint64_t lo, hi;

	/* the object itself, for the addresses no symbol holds */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && utrace__elf_extent(fd, &lo, &hi) == 0) {
		path[n] = 0;
		utrace__tfw_object(w, pid, lo + bias, hi + bias, bias, path);
	}
	if (utrace__symtab_load(fd, &t) < 0)
		return 0;
	for (i = 0; i < t.nr; i++)
		if (!utrace__tfw_symbol(w, pid, t.syms[i].addr + bias, t.syms[i].size,
					t.strings + t.syms[i].name))
			written++;
	utrace__symtab_free(&t);
	return written;
}

int utrace__tfw_symbols_fd(struct utrace__tfw *w, uint32_t pid, int fd, uint64_t bias)
{
	struct stat st;

	/* a FIFO or a device passed in its place must not hold the reader */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -EINVAL;
	return symbols_fd(w, pid, fd, bias);
}

struct utrace__symcache_ent {
	char *path;
	uint64_t start, off;            /* the first line that maps it */
	uint64_t bias;
	uint64_t lo, hi;                /* its PT_LOAD extent (lo >= hi: none) */
	struct utrace__symtab t;        /* empty: no symbols, or no ELF */
};

void utrace__symcache_free(struct utrace__symcache *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		free(c->v[i].path);
		utrace__symtab_free(&c->v[i].t);
	}
	free(c->v);
	c->v = NULL;
	c->nr = 0;
}

/*
 * The table of file mapped at start (to end) from off in process pid,
 * loaded now if not cached.  Root opens the mapping itself
 * (/proc/PID/map_files/), never the name: a file put at that path since
 * the process mapped it would be read with root's rights.  Others open
 * the name: only their own processes are read.
 */
static struct utrace__symcache_ent *cache_get(struct utrace__symcache *c, uint32_t pid,
					      const char *file, uint64_t start, uint64_t end,
					      uint64_t off)
{
	char mf[96];
	struct utrace__symcache_ent *e, *n;
	size_t i;
	int fd;

	for (i = 0; i < c->nr; i++)
		if (c->v[i].start == start && c->v[i].off == off && !strcmp(c->v[i].path, file))
			return &c->v[i];
	n = realloc(c->v, (c->nr + 1) * sizeof(*n));
	if (!n)
		return NULL;
	c->v = n;
	e = &c->v[c->nr];
	memset(e, 0, sizeof(*e));
	if (!(e->path = strdup(file)))
		return NULL;
	e->start = start;
	e->off = off;
	c->nr++;
	if (geteuid() == 0) {
		snprintf(mf, sizeof(mf), "/proc/%u/map_files/%llx-%llx", pid,
			 (unsigned long long)start, (unsigned long long)end);
		fd = open(mf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	} else {
		fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0)
		return e;
	{
		struct stat st;

		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    utrace__elf_bias(fd, start, off, &e->bias) < 0 ||
		    utrace__elf_extent(fd, &e->lo, &e->hi) < 0 ||
		    utrace__symtab_load(fd, &e->t) < 0)
			memset(&e->t, 0, sizeof(e->t));
	}
	close(fd);
	return e;
}

/*
 * The symbols of process pid, for the readers' %ps / %pS: each ELF file
 * of /proc/<pid>/maps once (its load bias from the line that maps it),
 * read with libelf as the traced program's own printer reads them
 * (common/elfsyms.c), so both name an address alike; the tables kept in
 * 'c' for the next call (a live reader's next pass).
 */
int utrace__tfw_symbols_cached(struct utrace__tfw *w, uint32_t pid, struct utrace__symcache *c)
{
	char path[64], line[4352], **seen = NULL;
	size_t nr_seen = 0, i;
	int written = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char *file = strchr(line, '/'), **n;
		struct utrace__symcache_ent *e;

		if (!file || sscanf(line, "%llx-%llx %*s %llx", &start, &end, &off) != 3)
			continue;
		file[strcspn(file, "\n")] = 0;
		for (i = 0; i < nr_seen && strcmp(seen[i], file); i++)
			;
		if (i < nr_seen)
			continue;
		n = realloc(seen, (nr_seen + 1) * sizeof(*seen));
		if (!n)
			break;
		seen = n;
		if (!(seen[nr_seen] = strdup(file)))
			break;
		nr_seen++;
		e = cache_get(c, pid, file, start, end, off);
		if (!e)
			break;
		if (e->lo < e->hi)
			utrace__tfw_object(w, pid, e->lo + e->bias, e->hi + e->bias, e->bias, file);
		for (i = 0; i < e->t.nr; i++)
			if (!utrace__tfw_symbol(w, pid, e->t.syms[i].addr + e->bias, e->t.syms[i].size,
						e->t.strings + e->t.syms[i].name))
				written++;
	}
	for (i = 0; i < nr_seen; i++)
		free(seen[i]);
	free(seen);
	fclose(f);
	return written;
}

int utrace__tfw_symbols_of(struct utrace__tfw *w, uint32_t pid)
{
	struct utrace__symcache c = { NULL, 0 };
	int r = utrace__tfw_symbols_cached(w, pid, &c);

	utrace__symcache_free(&c);
	return r;
}
