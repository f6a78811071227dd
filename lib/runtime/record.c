/* SPDX-License-Identifier: MIT */
/*
 * The traced side of `utrace record`.  When UTRACE_RECORD names the
 * recorder's socket, the process makes its pool (a memfd of
 * UTRACE_BUFFER_SIZE bytes, default 8 MiB, with room to grow to
 * UTRACE_BUFFER_MAX bytes when the recorder asks it), hands it to the recorder with
 * a HELLO message and sends the format of every event that registers.
 * From then on events go into the pool's pages.
 *
 * A forked child does the same with a pool of its own; an exec'd program
 * starts over from the environment.  If anything here fails the program
 * runs on untraced, and says so once.
 *
 * The program never waits for its recorder.  The socket is non-blocking
 * (connect() too: a recorder whose backlog is full is not waited for); a
 * message that does not fit waits in a queue, in order, which every new
 * message first pushes and the agent thread sends as the recorder reads
 * (utrace__record_queue_fd(), utrace__record_flush()).  A recorder that
 * takes nothing for RECORDER_STUCK_MS while messages wait, or lets more
 * than OUTQ_MAX_MSGS or OUTQ_MAX_BYTES pile up, is dropped with one
 * warning: the socket is shut down (the agent then puts an attached
 * recorder's events back), and the messages it never got are counted in
 * the pool's header (msgs_missed), which the recorder reports.  Before,
 * each format waited up to 2 s (SO_SNDTIMEO) under the registry lock: a
 * dlopen() of a 200-event library took 400 s with the recorder stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"
#include "record.h"
#include "clock.h"
#include "fdhigh.h"
#include "writer.h"
#include "proto.h"
#include "rundir.h"

#define DEFAULT_BUFFER_SIZE (8u << 20)
/* A recorder that reads none of the messages queued for this long, or
 * lets this many pile up, is dropped. */
#define RECORDER_STUCK_MS 5000
#define OUTQ_MAX_MSGS 4096
#define OUTQ_MAX_BYTES (8u << 20)
/* Descriptors held by waiting messages (objects' files): the program's
 * own table must not fill up; past this, an object goes without its file
 * (no symbols for it). */
#define OUTQ_MAX_FDS 64

/* Who is at the other end of sock. */
enum recorder_kind {
	RECORDER_NONE,                 /* nobody: sock is -1 */
	RECORDER_ENV,                  /* UTRACE_RECORD's, from the start */
	RECORDER_ATTACHED,             /* `utrace record -p`, through the agent */
};

static int sock = -1;
static enum recorder_kind recorder = RECORDER_NONE;
/* sock is kept, for the agent to see its hang-up, but nothing more is
 * sent (an attached recorder that was dropped) */
static bool dropped;
static const char *sock_path;
static size_t buffer_size = DEFAULT_BUFFER_SIZE;
static size_t buffer_max;              /* UTRACE_BUFFER_MAX, 0: no growth */
static uint32_t pool_mode = UTRACE_MODE_DISCARD;
static bool mode_set;                  /* UTRACE_MODE was given */
static uint32_t trace_clock;           /* enum utrace_trace_clock, of every pool */
int utrace__pool_fd = -1;              /* the memfd of utrace__pool */
static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;

/*
 * Send one packet with a descriptor attached (SCM_RIGHTS; none when
 * pass < 0), retrying on EINTR.  Returns the bytes sent or -1.
 */
ssize_t utrace__send_with_fd(int s, const void *buf, size_t len, int pass)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (pass >= 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass, sizeof(int));
	}
	do
		n = sendmsg(s, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

/*
 * A message waiting for the recorder to read (the file's comment).  An
 * event's format waits as its id alone (len 0, fmt_id > 0), and is
 * written out when its turn comes: a process with 50,000 events that a
 * recorder attaches to queues 50,000 ids, not 50,000 texts, and such
 * waiting formats do not count against OUTQ_MAX_MSGS and OUTQ_MAX_BYTES
 * (there is one per event at most; a stuck recorder is still dropped
 * after RECORDER_STUCK_MS).
 */
struct outmsg {
	struct outmsg *next;
	int fd;                        /* passed with it (ours), or -1 */
	uint32_t fmt_id;               /* a format to write out, or 0 */
	size_t len;
	unsigned char data[];
};
static struct outmsg *outq, **outq_tail = &outq;
static size_t outq_msgs, outq_bytes, outq_fds;
static size_t outq_lazy;               /* of outq_msgs, the formats by id */
static uint64_t outq_since;            /* ns: queued first, or last progress */
static uint32_t msgs_missed;           /* never sent, since the HELLO */

static void outq_free(void)
{
	struct outmsg *m;

	while ((m = outq)) {
		outq = m->next;
		if (m->fd >= 0)
			close(m->fd);
		free(m);
	}
	outq_tail = &outq;
	__atomic_store_n(&outq_msgs, 0, __ATOMIC_RELAXED);
	outq_bytes = outq_fds = outq_lazy = 0;
}

static void *format_msg(uint32_t id, const char *system, const char *text, size_t *len);
static void note_missed(size_t n);

/*
 * The format waiting at the head of the queue, written out: the event of
 * its id, or the removed event's (registry.c keeps those).  False when
 * there is none (nothing to send: the node is taken out) or no memory.
 */
static bool outq_render_head(void)
{
	struct outmsg *m = outq, *n = NULL;
	struct utrace_event *ev = utrace__registry_find_id(m->fmt_id);
	char *system = NULL, *text = NULL;
	void *buf = NULL;
	size_t len = 0;

	if (ev) {
		text = utrace__format_text(ev);
		buf = text ? format_msg(m->fmt_id, ev->cls->system, text, &len) : NULL;
	} else if (utrace__registry_retired_format(m->fmt_id, &system, &text) == 0) {
		buf = format_msg(m->fmt_id, system, text, &len);
	}
	free(system);
	free(text);
	if (buf)
		n = malloc(sizeof(*n) + len);
	if (n) {
		n->next = m->next;
		n->fd = -1;
		n->fmt_id = 0;
		n->len = len;
		memcpy(n->data, buf, len);
		outq_bytes += len;
	}
	free(buf);
	outq = n ? n : m->next;
	if (!outq)
		outq_tail = &outq;
	else if (outq_tail == &m->next)
		outq_tail = &n->next;
	outq_lazy--;
	if (!n) {
		__atomic_store_n(&outq_msgs, outq_msgs - 1, __ATOMIC_RELAXED);
		if (ev || system)
			note_missed(1);
	}
	free(m);
	return n != NULL;
}

/* Messages the recorder will never get: counted where it reads them. */
static void note_missed(size_t n)
{
	struct utrace_pool *p = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);

	msgs_missed = n > UINT32_MAX - msgs_missed ? UINT32_MAX : msgs_missed + (uint32_t)n;
	if (p && utrace__pool_fd >= 0)
		__atomic_store_n(&p->msgs_missed, msgs_missed, __ATOMIC_RELEASE);
}

/*
 * Stop sending to the recorder: 'why' is said once (NULL: it went away,
 * nothing to say), what waited is counted missed.  An attached
 * recorder's socket is only shut down: the agent sees the hang-up and
 * detaches it (control.c), which closes it.
 */
static void drop_recorder(const char *why, size_t also_missed)
{
	static bool told;

	if (sock < 0 || dropped)
		return;
	if (why && !told) {
		utrace__warn("the recorder %s: this process stops sending to it (%zu "
			     "messages it never got); its recording of this process ends",
			     why, outq_msgs + also_missed);
		told = true;
	}
	note_missed(outq_msgs + also_missed);
	outq_free();
	if (recorder == RECORDER_ATTACHED) {
		shutdown(sock, SHUT_RDWR);
		dropped = true;
		return;
	}
	close(sock);
	sock = -1;
	recorder = RECORDER_NONE;
}

/*
 * Send what waits, never waiting.  Returns true when the queue is empty.
 * Under the registry lock.
 */
static bool outq_push(void)
{
	struct outmsg *m;
	uint64_t now;

	while ((m = outq)) {
		if (m->fmt_id) {
			outq_render_head();
			continue;
		}
		if (utrace__send_with_fd(sock, m->data, m->len, m->fd) < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) {
				drop_recorder(NULL, 0);
				return true;
			}
			now = utrace__mono_ns();
			if (now - outq_since >= (uint64_t)RECORDER_STUCK_MS * 1000000) {
				drop_recorder("has not read its messages for 5 s", 0);
				return true;
			}
			return false;
		}
		outq = m->next;
		if (!outq)
			outq_tail = &outq;
		/* (read without the lock by utrace__record_queue_fd()) */
		__atomic_store_n(&outq_msgs, outq_msgs - 1, __ATOMIC_RELAXED);
		outq_bytes -= m->len;
		if (m->fd >= 0) {
			close(m->fd);
			outq_fds--;
		}
		free(m);
		outq_since = utrace__mono_ns();
	}
	return true;
}

/*
 * Send one message (with descriptor 'pass', ours to keep, or -1) after
 * those waiting, or queue it.  Under the registry lock.  False when the
 * recorder will not get it (none, dropped, or no memory).
 */
static bool send_msg(const void *buf, size_t len, int pass)
{
	struct outmsg *m;

	if (sock < 0)
		return false;
	if (dropped) {
		note_missed(1);
		return false;
	}
	if (outq_push() && sock >= 0 && !dropped) {
		if (utrace__send_with_fd(sock, buf, len, pass) == (ssize_t)len)
			return true;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) {
			drop_recorder(NULL, 1);
			return false;
		}
		outq_since = utrace__mono_ns();
	}
	if (sock < 0 || dropped) {
		note_missed(1);
		return false;
	}
	if (outq_msgs - outq_lazy >= OUTQ_MAX_MSGS || outq_bytes + len > OUTQ_MAX_BYTES) {
		drop_recorder("let too many messages wait", 1);
		return false;
	}
	m = malloc(sizeof(*m) + len);
	if (!m) {
		note_missed(1);
		return false;
	}
	m->next = NULL;
	m->fmt_id = 0;
	m->len = len;
	m->fd = pass >= 0 && outq_fds < OUTQ_MAX_FDS ? fcntl(pass, F_DUPFD_CLOEXEC, 0) : -1;
	if (m->fd >= 0)
		outq_fds++;
	memcpy(m->data, buf, len);
	*outq_tail = m;
	outq_tail = &m->next;
	__atomic_store_n(&outq_msgs, outq_msgs + 1, __ATOMIC_RELAXED);
	outq_bytes += len;
	return true;
}

/*
 * The format of event 'id' after the messages waiting: sent now when
 * nothing waits and the socket takes it, else queued by its id.  Under
 * the registry lock.
 */
static void send_format_id(uint32_t id, const char *system, const char *text)
{
	struct outmsg *m;

	if (sock < 0)
		return;
	if (dropped) {
		note_missed(1);
		return;
	}
	if (outq_push() && sock >= 0 && !dropped && system && text) {
		size_t len;
		void *buf = format_msg(id, system, text, &len);

		if (!buf) {
			note_missed(1);
			return;
		}
		if (utrace__send_with_fd(sock, buf, len, -1) == (ssize_t)len) {
			free(buf);
			return;
		}
		free(buf);
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) {
			drop_recorder(NULL, 1);
			return;
		}
		outq_since = utrace__mono_ns();
	}
	if (sock < 0 || dropped) {
		note_missed(1);
		return;
	}
	m = malloc(sizeof(*m));
	if (!m) {
		note_missed(1);
		return;
	}
	if (!outq)
		outq_since = utrace__mono_ns();
	m->next = NULL;
	m->fd = -1;
	m->fmt_id = id;
	m->len = 0;
	*outq_tail = m;
	outq_tail = &m->next;
	__atomic_store_n(&outq_msgs, outq_msgs + 1, __ATOMIC_RELAXED);
	outq_lazy++;
}

int utrace__record_queue_fd(void)
{
	/* read without the lock: the agent's poll set; a stale answer
	 * costs one turn of its loop */
	return __atomic_load_n(&outq_msgs, __ATOMIC_RELAXED) ?
		__atomic_load_n(&sock, __ATOMIC_RELAXED) : -1;
}

int utrace__record_flush(bool *progress)
{
	uint64_t left;
	size_t before;
	int ms = -1;

	utrace__registry_lock();
	before = outq_msgs;
	if (sock >= 0 && outq && !outq_push()) {
		left = outq_since + (uint64_t)RECORDER_STUCK_MS * 1000000 - utrace__mono_ns();
		ms = (int)(left / 1000000) + 1;
	}
	*progress = outq_msgs < before;
	utrace__registry_unlock();
	return ms;
}

/*
 * At exit, what still waits goes out while the recorder takes it (a busy
 * recorder has not read yet: the messages of a short program would be
 * lost), but not once it has taken nothing for EXIT_WAIT_MS: a stopped
 * recorder holds the exit that long at most.  What is left is counted.
 */
#define EXIT_WAIT_MS 1000

__attribute__((destructor)) static void record_fini(void)
{
	uint64_t since;

	if (__atomic_load_n(&sock, __ATOMIC_RELAXED) < 0 ||
	    !__atomic_load_n(&outq_msgs, __ATOMIC_RELAXED))
		return;
	utrace__registry_lock();
	since = utrace__mono_ns();
	while (sock >= 0 && !dropped && outq) {
		struct pollfd pfd = { .fd = sock, .events = POLLOUT };
		size_t before = outq_msgs;
		uint64_t now;

		if (outq_push())
			break;
		now = utrace__mono_ns();
		if (outq_msgs < before)
			since = now;
		if (now - since >= (uint64_t)EXIT_WAIT_MS * 1000000) {
			note_missed(outq_msgs);
			break;
		}
		poll(&pfd, 1, (int)((since + (uint64_t)EXIT_WAIT_MS * 1000000 - now) / 1000000) + 1);
	}
	utrace__registry_unlock();
}

/*
 * The loaded ELF objects the recorder has been told of (OBJECT messages):
 * their load bias and path.  The process sends them itself, right after
 * its HELLO and whenever the loader's count of loaded objects moved
 * (checked when an event registers and by the agent, once a second), so
 * the recorder knows every object's symbols even when the process has
 * exited before the recorder reads its messages.  Under the registry
 * lock, as every send on sock after the HELLO.
 */
struct sent_obj {
	uint64_t bias;
	char *path;
};
static struct sent_obj *sent_objs;
static size_t nr_sent_objs;
static unsigned long long objs_adds;    /* dlpi_adds when last looked */

static void forget_objects(void)
{
	size_t i;

	for (i = 0; i < nr_sent_objs; i++)
		free(sent_objs[i].path);
	free(sent_objs);
	sent_objs = NULL;
	nr_sent_objs = 0;
	objs_adds = 0;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

/* A loaded object, collected by objects_cb. */
struct objs {
	struct sent_obj *v;
	size_t nr;
};

static int objects_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct objs *o = data;
	char path[PATH_MAX], *abs = NULL;
	struct sent_obj *n;
	size_t i;
	int k;

	(void)size;
	/* an object with no load segment has nothing to name */
	for (k = 0; k < info->dlpi_phnum && info->dlpi_phdr[k].p_type != PT_LOAD; k++)
		;
	if (k == info->dlpi_phnum)
		return 0;
	if (!info->dlpi_name || !info->dlpi_name[0]) {
		/* the program itself */
		ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 1);

		if (len <= 0)
			return 0;
		path[len] = 0;
		abs = strdup(path);
	} else if (info->dlpi_name[0] == '/') {
		abs = strdup(info->dlpi_name);
	} else if (strchr(info->dlpi_name, '/')) {
		/* dlopen("./lib.so"): relative to our directory, not the
		 * recorder's */
		abs = realpath(info->dlpi_name, NULL);
	}
	/* else the vDSO ("linux-vdso.so.1"): no file */
	if (!abs)
		return 0;
	for (i = 0; i < nr_sent_objs; i++)
		if (sent_objs[i].bias == info->dlpi_addr && !strcmp(sent_objs[i].path, abs))
			break;
	if (i < nr_sent_objs || !(n = realloc(o->v, (o->nr + 1) * sizeof(*n)))) {
		free(abs);
		return 0;
	}
	o->v = n;
	o->v[o->nr++] = (struct sent_obj){ info->dlpi_addr, abs };
	return 0;
}

/* Tell the recorder of the objects loaded since we last did. */
static void send_objects_locked(void)
{
	unsigned long long adds = 0;
	struct objs o = { NULL, 0 };
	struct sent_obj *n;
	size_t i;

	if (sock < 0)
		return;
	dl_iterate_phdr(adds_cb, &adds);
	if (adds && adds == objs_adds)
		return;
	dl_iterate_phdr(objects_cb, &o);
	for (i = 0; i < o.nr; i++) {
		size_t pl = strlen(o.v[i].path) + 1;
		struct utrace_msg_object h = { UTRACE_MSG_OBJECT, 0, o.v[i].bias };
		unsigned char buf[sizeof(h) + PATH_MAX + 1];
		struct stat st;
		int fd;

		if (pl > PATH_MAX || !(n = realloc(sent_objs, (nr_sent_objs + 1) * sizeof(*n)))) {
			free(o.v[i].path);
			continue;
		}
		sent_objs = n;
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), o.v[i].path, pl);
		/* The file goes with its name, opened here: the recorder
		 * (root's, perhaps) reads what this process may read, never
		 * a file it names.  None when we may not read it. */
		fd = open(o.v[i].path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
		}
		send_msg(buf, sizeof(h) + pl, fd);
		if (fd >= 0)
			close(fd);
		sent_objs[nr_sent_objs++] = o.v[i];
	}
	free(o.v);
	objs_adds = adds;
}

bool utrace__record_send_objects(void)
{
	bool connected;

	if (__atomic_load_n(&sock, __ATOMIC_RELAXED) < 0)
		return false;
	utrace__registry_lock();
	send_objects_locked();
	connected = sock >= 0;
	utrace__registry_unlock();
	return connected;
}

static int send_hello(int fd)
{
	struct utrace_msg_hello h;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.type = UTRACE_MSG_HELLO;
	h.version = UTRACE_PROTO_VERSION;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	/* The process's name (its main thread's): the agent thread may be
	 * the one sending. */
	{
		int cfd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);

		n = cfd >= 0 ? read(cfd, h.comm, sizeof(h.comm) - 1) : -1;
		if (cfd >= 0)
			close(cfd);
		if (n <= 0)
			prctl(PR_GET_NAME, h.comm);
		while (n > 0 && (h.comm[n - 1] == '\n' || !h.comm[n - 1]))
			h.comm[--n] = 0;
	}
	n = readlink("/proc/self/exe", h.exe, sizeof(h.exe) - 1);
	if (n < 0)
		h.exe[0] = 0;
	/* a new connection: its queue is empty, and the HELLO fits */
	outq_free();
	dropped = false;
	msgs_missed = 0;
	n = utrace__send_with_fd(sock, &h, sizeof(h), fd);
	return n == (ssize_t)sizeof(h) ? 0 : -1;
}

/*
 * Is the recorder listening at the other end of 's' our user's, or root's?
 * The pool handed to it is this process's memory: a socket put in our
 * place by someone else must get nothing.  Says so once.
 */
static int recorder_allowed(int s)
{
	static bool told;
	pid_t pid = 0;
	uid_t uid = 0;
	int r = utrace__peer_check(s, &pid, &uid);

	if (r == -EPERM && !told) {
		utrace__warn("refused to be recorded by pid %d, uid %u: only uid %u or root "
			     "may record this process", (int)pid, (unsigned int)uid,
			     (unsigned int)geteuid());
		told = true;
	}
	return r;
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
	sock = utrace__fd_high(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (sock < 0) {
		give_up("socket");
		return;
	}
	/* (EAGAIN: its backlog is full, it does not accept: not waited for) */
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		give_up(sock_path);
		return;
	}
	if (recorder_allowed(sock) < 0) {
		close(sock);
		sock = -1;
		return;
	}
	fd = utrace__pool_create_max(buffer_size, buffer_max > buffer_size ? buffer_max :
				     buffer_size, pool_mode, &p);
	if (fd < 0) {
		errno = -fd;
		give_up("event pool");
		return;
	}
	p->trace_clock = trace_clock;
	if (send_hello(fd) < 0) {
		close(fd);
		munmap(p, p->size);
		give_up("recorder");
		return;
	}
	utrace__pool_fd = fd;
	recorder = RECORDER_ENV;
	forget_objects();
	utrace__registry_lock();
	send_objects_locked();
	utrace__registry_unlock();
	__atomic_store_n(&utrace__pool, p, __ATOMIC_RELEASE);
	__atomic_fetch_add(&utrace__pool_gen, 1, __ATOMIC_RELEASE);
	utrace__fast_update();
}

/*
 * A pool for a process that no recorder started: made the first time
 * something enables an event through the control (or UTRACE_EVENTS did),
 * in overwrite mode unless UTRACE_MODE says otherwise, as the kernel's
 * trace buffer.  Returns 0 or -errno.
 */
int utrace__pool_ensure(void)
{
	struct utrace_pool *p;
	int fd, ret = 0;

	if (__atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&pool_mutex);
	if (!utrace__pool) {
		fd = utrace__pool_create(buffer_size,
					 mode_set ? pool_mode : UTRACE_MODE_OVERWRITE, &p);
		if (fd < 0) {
			ret = fd;
		} else {
			p->trace_clock = trace_clock;
			utrace__pool_fd = fd;
			__atomic_store_n(&utrace__pool, p, __ATOMIC_RELEASE);
			__atomic_fetch_add(&utrace__pool_gen, 1, __ATOMIC_RELEASE);
	utrace__fast_update();
		}
	}
	pthread_mutex_unlock(&pool_mutex);
	return ret;
}

/*
 * buffer_size_kb written while the process has a buffer: a new pool of the
 * new size replaces it (its events are dropped: the kernel keeps them).
 * Threads move to the new pool at their next event; the old one is
 * unmapped once none can still be writing into it.  -EBUSY while a
 * recorder reads the pool.
 */
int utrace__pool_resize(uint64_t bytes)
{
	struct utrace_pool *p, *old;
	int fd, oldfd;

	if (__atomic_load_n(&sock, __ATOMIC_RELAXED) >= 0)
		return -EBUSY;
	pthread_mutex_lock(&pool_mutex);
	old = utrace__pool;
	buffer_size = (size_t)bytes;
	if (!old || (uint64_t)old->nr_pages * UTRACE_PAGE_SIZE == bytes / UTRACE_PAGE_SIZE *
	    UTRACE_PAGE_SIZE) {
		pthread_mutex_unlock(&pool_mutex);
		return 0;
	}
	fd = utrace__pool_create(bytes, old->mode, &p);
	if (fd < 0) {
		pthread_mutex_unlock(&pool_mutex);
		return fd;
	}
	p->trace_clock = trace_clock;
	oldfd = utrace__pool_fd;
	utrace__pool_fd = fd;
	__atomic_store_n(&utrace__pool, p, __ATOMIC_RELEASE);
	__atomic_fetch_add(&utrace__pool_gen, 1, __ATOMIC_RELEASE);
	utrace__fast_update();
	pthread_mutex_unlock(&pool_mutex);
	/* Readers that map the old pool (utrace show, pipe, mount) take the
	 * new one when they see this. */
	__atomic_store_n(&old->dead, UTRACE_POOL_REPLACED, __ATOMIC_RELEASE);
	if (oldfd >= 0)
		close(oldfd);
	/* Kept mapped (a leak) when we cannot tell that nobody writes it. */
	if (utrace__threads_quiesce() && utrace__pool_geom(old))
		munmap(old, utrace__pool_geom(old)->size);
	return 0;
}

uint32_t utrace__pool_get_mode(void)
{
	struct utrace_pool *p = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);

	if (p)
		return __atomic_load_n(&p->mode, __ATOMIC_RELAXED);
	return mode_set ? pool_mode : UTRACE_MODE_OVERWRITE;
}

int utrace__pool_set_mode(uint32_t mode)
{
	struct utrace_pool *p;

	if (__atomic_load_n(&sock, __ATOMIC_RELAXED) >= 0)
		return -EBUSY;
	pthread_mutex_lock(&pool_mutex);
	pool_mode = mode;
	mode_set = true;
	p = utrace__pool;
	if (p)
		__atomic_store_n(&p->mode, mode, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&pool_mutex);
	return (int)mode;
}

int utrace__pool_calib_timer(void)
{
	uint64_t due = UINT64_MAX;

	/* Under the lock that a resize takes before it unmaps a pool. */
	pthread_mutex_lock(&pool_mutex);
	if (utrace__pool) {
		utrace__pool_calib_tick(utrace__pool);
		due = utrace__pool_calib_due(utrace__pool);
	}
	pthread_mutex_unlock(&pool_mutex);
	if (due == UINT64_MAX)
		return -1;
	return due / 1000000 >= 60000 ? 60000 : (int)(due / 1000000) + 1;
}

uint64_t utrace__pool_next_size(void)
{
	return buffer_size;
}

/* Set the size of the next pool (a pool that exists keeps its size). */
void utrace__pool_set_next_size(uint64_t bytes)
{
	buffer_size = (size_t)bytes;
}

static int send_format_cb(struct utrace_event *ev, void *arg);
static void send_format_text(uint32_t id, const char *system, const char *name,
			     const char *text, void *arg);

/*
 * `utrace record -p`: connect to the recorder at 'path' and hand it the
 * pool (made now if there was none) and every format.  The registry lock
 * keeps formats of events registering meanwhile in order.
 */
int utrace__record_attach(const char *path, uint32_t mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	ret = utrace__pool_ensure();
	if (ret < 0)
		return ret;
	s = utrace__fd_high(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
	if (s < 0)
		return -errno;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(s);
		return ret;
	}
	ret = recorder_allowed(s);
	if (ret < 0) {
		close(s);
		return ret;
	}
	utrace__registry_lock();
	if (sock >= 0) {
		utrace__registry_unlock();
		close(s);
		return -EBUSY;
	}
	sock = s;
	recorder = RECORDER_ATTACHED;
	if (send_hello(utrace__pool_fd) < 0) {
		ret = -errno;
		sock = -1;
		recorder = RECORDER_NONE;
		utrace__registry_unlock();
		close(s);
		return ret ? ret : -EIO;
	}
	utrace__pool->mode = mode;
	forget_objects();
	send_objects_locked();
	utrace__registry_foreach(send_format_cb, NULL);
	/* removed events whose records the buffers may still hold */
	utrace__registry_foreach_retired(send_format_text, NULL);
	outq_push();
	utrace__registry_unlock();
	return s;
}

/* The recorder went away (its socket closed): stop sending to it. */
void utrace__record_detach(int s, uint32_t mode)
{
	utrace__registry_lock();
	if (sock == s && s >= 0) {
		outq_free();
		dropped = false;
		close(sock);
		sock = -1;
		recorder = RECORDER_NONE;
		struct utrace_pool *cur = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);

		if (cur)
			cur->mode = mode;
	}
	utrace__registry_unlock();
}

/* A FORMAT message, malloc()ed (its bytes in *len), or NULL. */
static void *format_msg(uint32_t id, const char *system, const char *text, size_t *len)
{
	struct utrace_msg_format h = { UTRACE_MSG_FORMAT, id };
	size_t sl = strlen(system) + 1, tl = strlen(text) + 1;
	char *buf = malloc(sizeof(h) + sl + tl);

	if (!buf)
		return NULL;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), system, sl);
	memcpy(buf + sizeof(h) + sl, text, tl);
	*len = sizeof(h) + sl + tl;
	return buf;
}

/* A removed event's format, queued by its id (registry lock held). */
static void send_format_text(uint32_t id, const char *system, const char *name,
			     const char *text, void *arg)
{
	(void)system;
	(void)name;
	(void)text;
	(void)arg;
	send_format_id(id, NULL, NULL);
}

/* Send one event's format (registry lock held). */
void utrace__record_send_format(const struct utrace_event *ev)
{
	char *text;

	if (sock < 0)
		return;
	/* a new object's events: the object first */
	send_objects_locked();
	if (outq || dropped) {
		/* (written out when its turn comes) */
		send_format_id((uint32_t)ev->id, NULL, NULL);
		return;
	}
	text = utrace__format_text(ev);
	if (!text) {
		note_missed(1);
		return;
	}
	send_format_id((uint32_t)ev->id, ev->cls->system, text);
	free(text);
}

bool utrace__record_probe_note(uint32_t what, const char *line, const char *text)
{
	struct utrace_msg_probe h = { UTRACE_MSG_PROBE, what };
	size_t ll = strlen(line) + 1, tl = strlen(text) + 1;
	char *buf = malloc(sizeof(h) + ll + tl);
	bool sent = false;

	if (!buf)
		return false;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), line, ll);
	memcpy(buf + sizeof(h) + ll, text, tl);
	utrace__registry_lock();
	sent = send_msg(buf, sizeof(h) + ll + tl, -1);
	utrace__registry_unlock();
	free(buf);
	return sent;
}

/* Every format at once, by id: they are written out as the recorder
 * takes them. */
static int send_format_cb(struct utrace_event *ev, void *arg)
{
	(void)arg;
	send_format_id((uint32_t)ev->id, NULL, NULL);
	return 0;
}

void utrace__record_init(void)
{
	const char *rec = utrace__getenv("UTRACE_RECORD"), *v;

	v = utrace__getenv("UTRACE_BUFFER_SIZE");
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
	/* Set by the recorder, which deals the pages above the buffer size
	 * when they are needed (utrace__pool_grow()); nonsense: no growth. */
	v = utrace__getenv("UTRACE_BUFFER_MAX");
	if (v && *v) {
		char *end;
		unsigned long long n = strtoull(v, &end, 10);

		if (!*end && n <= (1ULL << 36))
			buffer_max = (size_t)n;
	}
	v = utrace__getenv("UTRACE_MODE");
	mode_set = v && (!strcmp(v, "overwrite") || !strcmp(v, "discard"));
	if (v && !strcmp(v, "overwrite"))
		pool_mode = UTRACE_MODE_OVERWRITE;
	else if (v && *v && strcmp(v, "discard"))
		utrace__warn("UTRACE_MODE: '%s' is neither 'discard' nor 'overwrite'; "
			     "using discard", v);
	if (!rec || !*rec)
		return;
	sock_path = rec;
	connect_recorder();
}

/* fork(): the child records into a pool of its own. */
void utrace__record_after_fork_child(void)
{
	struct utrace_pool *old = utrace__pool;
	struct utrace_pool_geom *g = old ? utrace__pool_geom(old) : NULL;
	bool in_event = utrace__rb_after_fork();

	if (!old)
		return;
	__atomic_store_n(&utrace__pool, NULL, __ATOMIC_RELEASE);
	__atomic_fetch_add(&utrace__pool_gen, 1, __ATOMIC_RELEASE);
	utrace__fast_update();
	/* The size from our own record of the pool, not from the shared
	 * header.  fork() inside an event (from a signal handler): that
	 * event still writes into the pool, so private memory replaces the
	 * parent's pages there, and stays (a leak, in that rare case). */
	if (g && in_event)
		mmap(old, g->size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	else if (g)
		munmap(old, g->size);
	if (utrace__pool_fd >= 0)
		close(utrace__pool_fd);
	utrace__pool_fd = -1;
	pthread_mutex_init(&pool_mutex, NULL);
	bool recorder_was_env = sock >= 0 && recorder == RECORDER_ENV;

	if (sock >= 0)
		close(sock);
	sock = -1;
	recorder = RECORDER_NONE;
	/* the parent's messages are the parent's to send */
	outq_free();
	dropped = false;
	msgs_missed = 0;
	if (!sock_path || !recorder_was_env) {
		/* The parent's buffer was its own: the child gets one too. */
		utrace__pool_ensure();
		return;
	}
	connect_recorder();
	if (sock >= 0) {
		utrace__registry_foreach(send_format_cb, NULL);
		outq_push();
	}
}

uint32_t utrace__pool_get_trace_clock(void)
{
	return __atomic_load_n(&trace_clock, __ATOMIC_RELAXED);
}

int utrace__pool_set_trace_clock(uint32_t id)
{
	struct utrace_pool *p;

	if (id >= UTRACE_TCLOCK_NR || (id != UTRACE_TCLOCK_MONO && !utrace__clock_tsc))
		return -EINVAL;
	pthread_mutex_lock(&pool_mutex);
	__atomic_store_n(&trace_clock, id, __ATOMIC_RELAXED);
	p = utrace__pool;
	if (p) {
		__atomic_store_n(&p->trace_clock, id, __ATOMIC_RELEASE);
		/* tracing_set_clock(): the times before and after would not
		 * compare, the buffer is reset */
		utrace__pool_mark_clear(p, utrace__clock_now());
	}
	pthread_mutex_unlock(&pool_mutex);
	return (int)id;
}

uint32_t utrace__pool_trace_clocks(void)
{
	return utrace__clock_tsc ? (1u << UTRACE_TCLOCK_NR) - 1 : 1u << UTRACE_TCLOCK_MONO;
}
