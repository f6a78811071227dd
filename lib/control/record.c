/* SPDX-License-Identifier: MIT */
/*
 * The traced side of `utrace record`.  When UTRACE_RECORD names the
 * recorder's socket, the process makes its pool (a memfd of
 * UTRACE_BUFFER_SIZE bytes, default 8 MiB), hands it to the recorder with
 * a HELLO message and sends the format of every event that registers.
 * From then on events go into the pool's pages.
 *
 * A forked child does the same with a pool of its own; an exec'd program
 * starts over from the environment.  If anything here fails the program
 * runs on untraced, and says so once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../internal.h"
#include "../ringbuf/clock.h"
#include "../ringbuf/writer.h"
#include "proto.h"

#define DEFAULT_BUFFER_SIZE (8u << 20)

static int sock = -1;
static const char *sock_path;
static size_t buffer_size = DEFAULT_BUFFER_SIZE;
static uint32_t pool_mode = UTRACE_MODE_DISCARD;

static uint64_t next_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Make and map the pool; return its memfd, or -1. */
static int pool_create(struct utrace_pool **out)
{
	uint32_t nr_pages = (uint32_t)(buffer_size / UTRACE_PAGE_SIZE);
	uint64_t qsize, off, size, i;
	struct utrace_pool *p;
	int fd;

	if (nr_pages < 4)
		nr_pages = 4;
	/* Twice the pages: a push then never finds its cell still held by
	 * a pop that has claimed it but not yet released it, unless that pop
	 * stalled for a whole lap. */
	qsize = next_pow2(2 * (uint64_t)nr_pages);
	off = align_up(sizeof(*p), 64);
	uint64_t slots_off = off;
	off += align_up((uint64_t)UTRACE_POOL_THREADS * sizeof(struct utrace_thread_slot), 64);
	uint64_t descs_off = off;
	off += align_up((uint64_t)nr_pages * sizeof(struct utrace_page_desc), 64);
	uint64_t freeq_off = off;
	off += qsize * sizeof(struct utrace_qcell);
	uint64_t fullq_off = off;
	off += qsize * sizeof(struct utrace_qcell);
	uint64_t pages_off = align_up(off, UTRACE_PAGE_SIZE);
	size = pages_off + (uint64_t)nr_pages * UTRACE_PAGE_SIZE;

	fd = memfd_create("utrace-pool", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) < 0) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -1;
	}
	p->magic = UTRACE_POOL_MAGIC;
	p->version = UTRACE_POOL_VERSION;
	p->page_size = UTRACE_PAGE_SIZE;
	p->nr_pages = nr_pages;
	p->pid = (uint32_t)getpid();
	p->clock = utrace__clock_tsc ? UTRACE_CLOCK_TSC : UTRACE_CLOCK_MONO;
	p->mode = pool_mode;
	p->nr_slots = UTRACE_POOL_THREADS;
	p->size = size;
	p->slots_off = slots_off;
	p->descs_off = descs_off;
	p->pages_off = pages_off;
	p->freeq.cells_off = freeq_off;
	p->freeq.mask = qsize - 1;
	p->fullq.cells_off = fullq_off;
	p->fullq.mask = qsize - 1;
	for (i = 0; i < qsize; i++) {
		((struct utrace_qcell *)((char *)p + freeq_off))[i].seq = i;
		((struct utrace_qcell *)((char *)p + fullq_off))[i].seq = i;
	}
	for (i = 0; i < nr_pages; i++)
		utrace_queue_push(p, &p->freeq, i);
	*out = p;
	return fd;
}

static int send_hello(int fd)
{
	struct utrace_msg_hello h;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { 0 };
	struct cmsghdr *cm;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.type = UTRACE_MSG_HELLO;
	h.version = UTRACE_PROTO_VERSION;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	prctl(PR_GET_NAME, h.comm);
	n = readlink("/proc/self/exe", h.exe, sizeof(h.exe) - 1);
	if (n < 0)
		h.exe[0] = 0;
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof(cbuf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(h) ? 0 : -1;
}

static void give_up(const char *what)
{
	utrace__warn("cannot record this process (%s: %s); it runs on untraced",
		     what, strerror(errno));
	if (sock >= 0)
		close(sock);
	sock = -1;
}

/* Connect to the recorder and hand it a new pool. */
static void connect_recorder(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct utrace_pool *p = NULL;
	int fd;

	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		give_up("UTRACE_RECORD");
		return;
	}
	strcpy(sa.sun_path, sock_path);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		give_up("socket");
		return;
	}
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		give_up(sock_path);
		return;
	}
	fd = pool_create(&p);
	if (fd < 0) {
		give_up("event pool");
		return;
	}
	if (send_hello(fd) < 0) {
		close(fd);
		munmap(p, p->size);
		give_up("recorder");
		return;
	}
	close(fd);
	__atomic_store_n(&utrace__pool, p, __ATOMIC_RELEASE);
	__atomic_fetch_add(&utrace__pool_gen, 1, __ATOMIC_RELEASE);
}

/* Send one event's format (registry lock held). */
void utrace__record_send_format(const struct utrace_event *ev)
{
	char *text;
	size_t sl, tl;
	char *buf;
	struct utrace_msg_format h = { UTRACE_MSG_FORMAT, (uint32_t)ev->id };

	if (sock < 0)
		return;
	text = utrace__format_text(ev);
	if (!text)
		return;
	sl = strlen(ev->cls->system) + 1;
	tl = strlen(text) + 1;
	buf = malloc(sizeof(h) + sl + tl);
	if (buf) {
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), ev->cls->system, sl);
		memcpy(buf + sizeof(h) + sl, text, tl);
		if (send(sock, buf, sizeof(h) + sl + tl, MSG_NOSIGNAL) < 0)
			utrace__warn("cannot send the format of '%s:%s' to the recorder: %s",
				     ev->cls->system, ev->name, strerror(errno));
		free(buf);
	}
	free(text);
}

static int send_format_cb(struct utrace_event *ev, void *arg)
{
	(void)arg;
	utrace__record_send_format(ev);
	return 0;
}

void utrace__record_init(void)
{
	const char *v = getenv("UTRACE_RECORD");

	if (!v || !*v)
		return;
	sock_path = v;
	v = getenv("UTRACE_BUFFER_SIZE");
	if (v && *v) {
		char *end;
		unsigned long long n = strtoull(v, &end, 10);

		if (*end || n < 4 * UTRACE_PAGE_SIZE || n > (1ULL << 36))
			utrace__warn("UTRACE_BUFFER_SIZE: '%s' is not a size in bytes "
				     "between 16384 and 64 GiB; using %u", v,
				     DEFAULT_BUFFER_SIZE);
		else
			buffer_size = (size_t)n;
	}
	v = getenv("UTRACE_MODE");
	if (v && !strcmp(v, "overwrite"))
		pool_mode = UTRACE_MODE_OVERWRITE;
	else if (v && *v && strcmp(v, "discard"))
		utrace__warn("UTRACE_MODE: '%s' is neither 'discard' nor 'overwrite'; "
			     "using discard", v);
	connect_recorder();
}

/* fork(): the child records into a pool of its own. */
void utrace__record_after_fork_child(void)
{
	struct utrace_pool *old = utrace__pool;

	utrace__rb_after_fork();
	if (!sock_path || sock < 0)
		return;
	__atomic_store_n(&utrace__pool, NULL, __ATOMIC_RELEASE);
	__atomic_fetch_add(&utrace__pool_gen, 1, __ATOMIC_RELEASE);
	if (old)
		munmap(old, old->size);
	close(sock);
	sock = -1;
	connect_recorder();
	if (sock >= 0)
		utrace_event_foreach(send_format_cb, NULL);
}
