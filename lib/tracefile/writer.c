/* SPDX-License-Identifier: MIT */
/*
 * Trace file writer: the header, then records appended through a large
 * stdio buffer.  The first write error is kept and reported at close, so a
 * full disk loses the tail of the file, not the recording.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <string.h>
#include <time.h>

#include "writer.h"

static void put(struct utrace_tf_writer *w, const void *p, size_t n)
{
	if (w->error || !n)
		return;
	if (fwrite(p, 1, n, w->f) != n)
		w->error = errno ? errno : EIO;
	else
		w->bytes += n;
}

int utrace_tf_open(struct utrace_tf_writer *w, const char *path, uint32_t page_size)
{
	FILE *f = fopen(path, "wbe");

	if (!f)
		return -errno;
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	return utrace_tf_open_stream(w, f, path, page_size);
}

int utrace_tf_open_stream(struct utrace_tf_writer *w, FILE *f, const char *name,
			  uint32_t page_size)
{
	unsigned char h[UTRACE_TF_HEADER_SIZE];
	uint32_t v;
	struct timespec rt, mono;

	memset(w, 0, sizeof(*w));
	w->path = name;
	w->f = f;
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
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	uint64_t t = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	memcpy(h + 32, &t, 8);
	t = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	memcpy(h + 40, &t, 8);
	put(w, h, sizeof(h));
	return w->error ? -w->error : 0;
}

int utrace_tf_record(struct utrace_tf_writer *w, uint32_t type,
		     const void *a, size_t alen, const void *b, size_t blen,
		     const void *c, size_t clen)
{
	/* Keep the file in order: queued pages go first. */
	if (w->nr_iov)
		utrace_tf_flush_pages(w);
	static const unsigned char zeros[8];
	unsigned char hdr[16];
	uint64_t size = alen + blen + clen;
	uint32_t flags = 0;

	memcpy(hdr, &type, 4);
	memcpy(hdr + 4, &flags, 4);
	memcpy(hdr + 8, &size, 8);
	put(w, hdr, 16);
	put(w, a, alen);
	put(w, b, blen);
	put(w, c, clen);
	put(w, zeros, (8 - size % 8) % 8);
	return w->error ? -w->error : 0;
}

int utrace_tf_flush_pages(struct utrace_tf_writer *w)
{
	int i = 0;

	if (!w->nr_iov || w->error) {
		w->nr_iov = 0;
		return w->error ? -w->error : 0;
	}
	if (fflush(w->f) != 0) {
		w->error = errno;
		return -w->error;
	}
	while (i < w->nr_iov) {
		ssize_t n = writev(fileno(w->f), w->iov + i, w->nr_iov - i);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			w->error = errno;
			break;
		}
		w->bytes += (uint64_t)n;
		while (i < w->nr_iov && (size_t)n >= w->iov[i].iov_len) {
			n -= (ssize_t)w->iov[i].iov_len;
			i++;
		}
		if (i < w->nr_iov) {
			w->iov[i].iov_base = (char *)w->iov[i].iov_base + n;
			w->iov[i].iov_len -= (size_t)n;
		}
	}
	w->nr_iov = 0;
	return w->error ? -w->error : 0;
}

int utrace_tf_page(struct utrace_tf_writer *w, const void *hdr, size_t hlen,
		   const void *page, size_t plen)
{
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
		return utrace_tf_flush_pages(w);
	return 0;
}

int utrace_tf_close(struct utrace_tf_writer *w)
{
	if (!w->f)
		return 0;
	utrace_tf_flush_pages(w);
	free(w->iov);
	free(w->hdrs);
	w->iov = NULL;
	w->hdrs = NULL;
	if (fflush(w->f) != 0 && !w->error)
		w->error = errno;
	if (fclose(w->f) != 0 && !w->error)
		w->error = errno;
	w->f = NULL;
	return w->error ? -w->error : 0;
}
