/* SPDX-License-Identifier: MIT */
/*
 * The agent: a thread in every traced process that answers the utrace CLI
 * and the FUSE mount (the protocol is in ctlproto.h, the client side in
 * client.c).
 *
 * It starts when the first events register (a process without events, the
 * utrace tool itself, has none), unless UTRACE_CONTROL=0.  It listens on
 * "<runtime dir>/<pid>.sock": the directory is made mode 0700 and must
 * belong to the process's user (rundir.c), the socket is mode 0600, and
 * every connection's peer credentials are checked (same user or root).
 * The thread blocks every signal and sleeps in poll() until a client asks
 * something, so a request is served at once and an idle agent costs
 * nothing.  Nothing the agent does can stop the program: when something
 * fails it says so once (if UTRACE_CONTROL was asked for) and the program
 * runs on.
 *
 * Clients are served concurrently by this one thread, so that none can
 * hold up another: every connection is non-blocking and has its state in
 * a struct conn.  The thread reads one request from a connection, builds
 * the whole answer into the connection's queue and sends what the socket
 * takes; the rest goes out as the client reads (POLLOUT).  A connection
 * with an answer pending is not read from, so a client that sends and
 * never reads holds one answer at most, and loses its connection when it
 * has not taken any of it for SEND_TIMEOUT_MS.  Each turn of the loop
 * serves at most one request per connection.  At most MAX_CONNS
 * connections are open; a new one past that closes the one that has been
 * idle longest, so a flood of connections cannot lock out the next
 * client.  Memory is bounded by MAX_CONNS answers and one request buffer.
 *
 * This file is the transport: the socket, the connections, the packets,
 * decoding a request and queueing its answer.  What a request does to the
 * process (switching probes on and off, compiling and installing filters,
 * making the event pool, handing the pool's memfd to readers, attaching a
 * recorder) is control.c's, one function per operation.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "clock.h"
#include "control.h"
#include "ctlproto.h"
#include "fdhigh.h"
#include "ftrace.h"
#include "filter.h"
#include "instance.h"
#include "internal.h"
#include "record.h"
#include "rundir.h"
#include "tp.h"
#include "uprobes.h"
#include "writer.h"

#define MAX_CONNS 128
#define SEND_TIMEOUT_MS 2000
#define AGENT_NAME "utrace-agent"

static pthread_mutex_t agent_mutex = PTHREAD_MUTEX_INITIALIZER;
/*
 * Held by the agent while it serves a request, and by fork() (atfork
 * prepare): a fork never copies the agent in the middle of a request,
 * holding a lock of the allocator, say.  The agent holds nothing while it
 * sleeps in poll().
 */
static pthread_mutex_t busy_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t ready_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static bool agent_ready;
static bool agent_started, agent_disabled, agent_verbose;
static int listen_fd = -1;
static int wake_fd[2] = { -1, -1 };
/*
 * The snapshot trigger's (trigger.c): a request written to snap_pipe by
 * the event's thread, the copy of the pool made here, out of the writers'
 * path, and kept as a memfd for the mount (UTRACE_CTL_SNAPSHOT).  One
 * per buffer: [0] the top level's, [1 + i] instance i's.  A trigger that
 * fires on the agent thread itself (a trace_marker write) copies at once.
 *
 * The kernel's snapshot is a swap of buffers; ours is a copy of the pool
 * (8 MiB by default), so an unlimited trigger on a hot event would keep
 * this thread copying (91 % of a core, issue 27 item 6) and every client
 * waiting.  Requests are coalesced: the buffers asked for are bits of
 * snap_pending, and only the first bit set writes the pipe's byte; the
 * copies of a turn take them all at once, the next turn's no sooner than
 * 4 D after a turn that took D (SNAP_GAP), so that copies take at most a
 * fifth of the thread; clients are served first in each turn.
 *
 * The copy is made after the event, while the program goes on writing:
 * so the trigger also notes the time of its event (the pool's clock,
 * snap_when: the latest request's), and the copy keeps it (snap_until);
 * the mount shows the copy's events up to that time, as the kernel's swap
 * at the event would have left them.
 */
#define SNAP_GAP 4
static int snap_pipe[2] = { -1, -1 };
static uint64_t snap_pending;          /* (atomic) buffers asked for, bit 1 + i */
static int snap_fd[1 + UTRACE_INSTANCES_MAX] = { [0 ... UTRACE_INSTANCES_MAX] = -1 };
static int32_t snap_seq[1 + UTRACE_INSTANCES_MAX];   /* of the copy in snap_fd, from 1 */
static uint64_t snap_when[1 + UTRACE_INSTANCES_MAX];  /* (atomic) the latest request's time */
static uint64_t snap_until[1 + UTRACE_INSTANCES_MAX]; /* the copy's: 0, or its request's */
static __thread bool on_agent;         /* the agent thread */
static bool snap_wanted;               /* the pipe said: copies wait for snap_next */
static uint64_t snap_next;             /* ns: no copy before this */

/* One packet of an answer, waiting to be sent. */
struct pkt {
	struct pkt *next;
	int pass;                      /* a descriptor to send with it (ours), or -1 */
	size_t len;
	unsigned char data[];
};

/* A client's connection. */
struct conn {
	int fd;
	bool broken;                   /* could not queue an answer: drop it */
	struct pkt *out, **out_tail;   /* the answer not sent yet */
	uint64_t since;                /* ns: accepted, last request, or last sent */
};

static struct conn conns[MAX_CONNS];
static int nr_conns;
static bool refused_told;
static char sock_path[108];
static pid_t sock_owner;

static void agent_warn(const char *what)
{
	if (agent_verbose)
		utrace__warn("control: %s: %s; this process cannot be controlled",
			     what, strerror(errno));
}

/* --- answers --- */

/*
 * Queue one answer packet (sent by conn_flush()), with a copy of
 * descriptor 'pass' if it is not -1.  -1 when out of memory; the
 * connection is then dropped, as a client cannot use half an answer.
 */
static int queue_pkt(struct conn *c, int32_t status, uint64_t value, const void *data,
		     size_t len, uint32_t flags, int pass)
{
	struct utrace_ctl_ans a = { status, flags, value };
	struct pkt *p = malloc(sizeof(*p) + sizeof(a) + len);

	if (!p) {
		c->broken = true;
		return -1;
	}
	p->next = NULL;
	p->len = sizeof(a) + len;
	p->pass = pass >= 0 ? fcntl(pass, F_DUPFD_CLOEXEC, 0) : -1;
	memcpy(p->data, &a, sizeof(a));
	if (len)
		memcpy(p->data + sizeof(a), data, len);
	if (pass >= 0 && p->pass < 0) {
		free(p);
		c->broken = true;
		return -1;
	}
	*c->out_tail = p;
	c->out_tail = &p->next;
	return 0;
}

static int send_ans(struct conn *c, int32_t status, uint64_t value, const void *data,
		    size_t len, uint32_t flags)
{
	return queue_pkt(c, status, value, data, len, flags, -1);
}

/* A long text in packets of at most UTRACE_CTL_MAX_PACKET. */
static int send_text(struct conn *c, int32_t status, const char *text, size_t len)
{
	size_t max = UTRACE_CTL_MAX_PACKET - sizeof(struct utrace_ctl_ans), off = 0;

	do {
		size_t n = len - off > max ? max : len - off;

		if (send_ans(c, status, len, text + off, n,
			     off + n < len ? UTRACE_CTL_MORE : 0) < 0)
			return -1;
		off += n;
	} while (off < len);
	return 0;
}

static int send_fd(struct conn *c, int32_t status, int pass)
{
	return queue_pkt(c, status, 0, NULL, 0, 0, pass);
}

static void answer_status(struct conn *c, int r)
{
	send_ans(c, r, 0, NULL, 0, 0);
}

/* A text answer: the text (freed here) when r is 0, else the error. */
static void answer_text(struct conn *c, int r, char *text)
{
	if (r < 0)
		send_ans(c, r, 0, NULL, 0, 0);
	else
		send_text(c, 0, text, strlen(text));
	free(text);
}

/* The event list in packets that each hold whole entries. */
static void answer_events(struct conn *c, bool removed)
{
	size_t max = UTRACE_CTL_MAX_PACKET - sizeof(struct utrace_ctl_ans), off = 0, len;
	uint32_t nr;
	char *buf;
	int r = utrace__control_event_list(removed, &buf, &len, &nr);

	if (r < 0) {
		answer_status(c, r);
		return;
	}
	do {
		size_t n = 0;

		while (off + n < len) {
			struct utrace_ctl_event_msg m;

			memcpy(&m, buf + off + n, sizeof(m));
			if (n + sizeof(m) + m.len > max)
				break;
			n += sizeof(m) + m.len;
		}
		if (send_ans(c, (int32_t)nr, len, buf + off, n,
			     off + n < len ? UTRACE_CTL_MORE : 0) < 0)
			break;
		off += n;
	} while (off < len);
	free(buf);
}

/* The kernel's error of a refused filter write, as the client reads it. */
static void answer_filter(struct conn *c, int r, const struct utrace__filter_error *fe)
{
	struct utrace_ctl_filter_msg fm;

	memset(&fm, 0, sizeof(fm));
	if (r < 0) {
		fm.err = fe->err;
		fm.pos = fe->pos;
		memcpy(fm.msg, fe->msg, sizeof(fm.msg));
		fm.msg[sizeof(fm.msg) - 1] = 0;
	}
	send_ans(c, r, 0, &fm, sizeof(fm), 0);
}

/*
 * Decode one request, have control.c apply it, and queue the answer.
 * 'pl' is the request's payload, 'plen' its bytes (not NUL-terminated).
 */
static void handle_op(struct conn *c, uint32_t op, const struct utrace_ctl_req *q,
		      const char *pl, size_t plen);

static void handle(struct conn *c, const struct utrace_ctl_req *q, const char *pl,
		   size_t plen)
{
	int r;

	uint32_t inst = q->op >> UTRACE_CTL_INST_SHIFT;

	if (inst) {
		/* The registry lock holds off events registered meanwhile in
		 * other threads, which take the top level's filters. */
		utrace__registry_lock();
		r = utrace__control_select(inst);
		if (r == 0)
			handle_op(c, q->op & ((1u << UTRACE_CTL_INST_SHIFT) - 1), q, pl, plen);
		else
			answer_status(c, r);
		utrace__control_select(0);
		utrace__registry_unlock();
		return;
	}
	handle_op(c, q->op, q, pl, plen);
}

static void handle_op(struct conn *c, uint32_t op, const struct utrace_ctl_req *q,
		      const char *pl, size_t plen)
{
	struct utrace_ctl_info_msg info;
	struct utrace__filter_error fe;
	uint64_t size;
	char *text;
	int r;

	switch (op) {
	case UTRACE_CTL_INSTANCES:
		r = utrace__control_instance_list(&text);
		answer_text(c, r, text);
		return;
	case UTRACE_CTL_INSTANCE_MKDIR:
		answer_status(c, utrace__control_instance_mkdir(pl, plen));
		return;
	case UTRACE_CTL_INSTANCE_RMDIR:
		r = utrace__control_instance_rmdir(pl, plen);
		if (r >= 0)     /* its snapshot goes with it */
			utrace__agent_snapshot_forget(r);
		answer_status(c, r < 0 ? r : 0);
		return;
	case UTRACE_CTL_INFO:
		utrace__control_info(&info);
		send_ans(c, 0, 0, &info, sizeof(info), 0);
		return;
	case UTRACE_CTL_EVENTS:
		answer_events(c, q->arg == 1);
		return;
	case UTRACE_CTL_FORMAT:
		r = utrace__control_format(q->id, &text);
		answer_text(c, r, text);
		return;
	case UTRACE_CTL_SET_EVENT:
		answer_status(c, utrace__control_set_event(pl, plen));
		return;
	case UTRACE_CTL_CLEAR_EVENTS:
		answer_status(c, utrace__control_clear_events());
		return;
	case UTRACE_CTL_ENABLE:
		answer_status(c, utrace__control_enable(q->id, q->arg != 0));
		return;
	case UTRACE_CTL_ENABLE_SYSTEM:
		answer_status(c, utrace__control_enable_system(pl, plen, q->arg != 0));
		return;
	case UTRACE_CTL_FILTER:
		r = utrace__control_filter(q->id, pl, plen, &fe);
		answer_filter(c, r, &fe);
		return;
	case UTRACE_CTL_FILTER_SYSTEM:
		answer_status(c, utrace__control_filter_system(pl, plen));
		return;
	case UTRACE_CTL_FILTER_TEXT:
		r = utrace__control_filter_text(q->id, &text);
		answer_text(c, r, text);
		return;
	case UTRACE_CTL_FILTER_SYSTEM_TEXT:
		r = utrace__control_filter_system_text(pl, plen, &text);
		answer_text(c, r, text);
		return;
	case UTRACE_CTL_ERROR_LOG:
		r = utrace__control_error_log(&text);
		answer_text(c, r, text);
		return;
	case UTRACE_CTL_EVENT_PID:
		if (q->arg == UTRACE_CTL_PID_READ) {
			r = utrace__control_event_pid(q->id, q->arg, pl, plen, &text);
			answer_text(c, r, text);
		} else {
			answer_status(c, utrace__control_event_pid(q->id, q->arg, pl, plen, NULL));
		}
		return;
	case UTRACE_CTL_UPROBE:
		if (q->arg == UTRACE_CTL_UPROBE_READ || q->arg == UTRACE_CTL_UPROBE_PROFILE ||
		    q->arg == UTRACE_CTL_UPROBE_VERBOSE) {
			r = utrace__control_uprobe(q->arg, pl, plen, &text);
			answer_text(c, r, text);
		} else {
			answer_status(c, utrace__control_uprobe(q->arg, pl, plen, NULL));
		}
		return;
	case UTRACE_CTL_FTRACE:
		text = NULL;
		r = utrace__ftrace_control(q->id, q->arg, pl, plen, &text);
		if (q->arg == UTRACE_CTL_FT_READ)
			answer_text(c, r, text);
		else
			answer_status(c, r);
		return;
	case UTRACE_CTL_SYNTH_DYN_LINES:
		answer_status(c, utrace__control_synth(UTRACE_CTL_SYNTH_DYN, pl, plen, NULL));
		return;
	case UTRACE_CTL_SYNTH:
		r = utrace__control_synth(q->arg, pl, plen, &text);
		if (q->arg == UTRACE_CTL_SYNTH_READ)
			answer_text(c, r, text);
		else
			answer_status(c, r);
		return;
	case UTRACE_CTL_ERROR_LOG_CLEAR:
		utrace__control_error_log_clear();
		answer_status(c, 0);
		return;
	case UTRACE_CTL_TRACING_ON:
		answer_status(c, utrace__control_tracing_on(q->arg));
		return;
	case UTRACE_CTL_BUFFER_SIZE:
		r = utrace__control_buffer_size(q->size, &size);
		send_ans(c, r, r < 0 ? 0 : size, NULL, 0, 0);
		return;
	case UTRACE_CTL_CLEAR_BUFFER:
		utrace__control_clear_buffer();
		answer_status(c, 0);
		return;
	case UTRACE_CTL_POOL:
		r = utrace__control_pool_fd();
		if (r < 0)
			answer_status(c, r);
		else
			send_fd(c, 0, r);
		return;
	case UTRACE_CTL_SNAPSHOT:
		r = 1 + utrace__control_instance();
		if (q->arg == 1) {
			utrace__agent_snapshot_forget(r - 1);
			answer_status(c, 0);
		} else if (snap_fd[r] < 0) {
			answer_status(c, -ENOENT);
		} else {
			queue_pkt(c, snap_seq[r], snap_until[r], NULL, 0, 0, snap_fd[r]);
		}
		return;
	case UTRACE_CTL_POOL_MODE:
		answer_status(c, utrace__control_pool_mode(q->arg));
		return;
	case UTRACE_CTL_TRACE_CLOCK:
		answer_status(c, utrace__control_trace_clock(q->arg));
		return;
	case UTRACE_CTL_MARKER:
		answer_status(c, utrace__control_trace_marker(pl, plen, q->arg != 0));
		return;
	case UTRACE_CTL_TRIGGER:
		r = utrace__control_trigger(q->id, pl, plen, q->arg == 1, &text);
		size = text ? strlen(text) : 0;
		if (size > UTRACE_CTL_MAX_PACKET - sizeof(struct utrace_ctl_ans))
			size = UTRACE_CTL_MAX_PACKET - sizeof(struct utrace_ctl_ans);
		send_ans(c, r, 0, text, size, 0);
		free(text);
		return;
	case UTRACE_CTL_TRIGGER_TEXT:
	case UTRACE_CTL_HIST:
		r = utrace__control_trigger_text(q->id, op == UTRACE_CTL_HIST, &text);
		answer_text(c, r, text);
		return;
	case UTRACE_CTL_ATTACH:
		answer_status(c, utrace__control_attach(pl, plen, (uint32_t)q->arg));
		return;
	case UTRACE_CTL_STACKS:
		answer_status(c, utrace__control_stacks(pl, plen));
		return;
	default:
		answer_status(c, -EOPNOTSUPP);
	}
}

/* --- the thread --- */

/* Close a connection and free what it had not sent. */
static void conn_drop(int i)
{
	struct conn *c = &conns[i];
	struct pkt *p;

	while ((p = c->out)) {
		c->out = p->next;
		if (p->pass >= 0)
			close(p->pass);
		free(p);
	}
	close(c->fd);
	conns[i] = conns[--nr_conns];
	if (i < nr_conns && !conns[i].out)
		conns[i].out_tail = &conns[i].out;
}

/*
 * Send what the socket takes of the queued answer, never waiting.
 * Returns -1 when the connection is gone.
 */
static int conn_flush(struct conn *c)
{
	struct pkt *p;

	if (c->broken)
		return -1;
	while ((p = c->out)) {
		if (utrace__send_with_fd(c->fd, p->data, p->len, p->pass) < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		c->out = p->next;
		if (!c->out)
			c->out_tail = &c->out;
		if (p->pass >= 0)
			close(p->pass);
		free(p);
		c->since = utrace__mono_ns();
	}
	return 0;
}

/* Read and answer one request; -1 when the connection is to be closed. */
static int conn_serve(struct conn *c)
{
	char buf[UTRACE_CTL_MAX_PACKET];
	struct utrace_ctl_req q;
	ssize_t n;

	/* MSG_TRUNC: the packet's real length, to refuse one too long */
	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < (ssize_t)sizeof(q))
		return -1;
	c->since = utrace__mono_ns();
	memcpy(&q, buf, sizeof(q));
	if (q.version != UTRACE_CTL_VERSION) {
		send_ans(c, -EPROTO, 0, NULL, 0, 0);
		conn_flush(c);
		return -1;
	}
	if ((size_t)n > sizeof(buf)) {
		send_ans(c, -EMSGSIZE, 0, NULL, 0, 0);
		return conn_flush(c);
	}
	pthread_mutex_lock(&busy_mutex);
	handle(c, &q, buf + sizeof(q), (size_t)n - sizeof(q));
	utrace__tp_reap();
	pthread_mutex_unlock(&busy_mutex);
	return conn_flush(c);
}

/* The connection idle longest: the one to close for a new one. */
static int conn_oldest(void)
{
	int i, old = 0;

	for (i = 1; i < nr_conns; i++)
		if (conns[i].since < conns[old].since)
			old = i;
	return old;
}

/* Take the connections waiting, checking who they are from. */
static void accept_conns(void)
{
	int k, fd, r;
	pid_t pid;
	uid_t uid;

	for (k = 0; k < MAX_CONNS; k++) {
		fd = utrace__fd_high(accept4(listen_fd, NULL, NULL,
					     SOCK_CLOEXEC | SOCK_NONBLOCK));
		if (fd < 0)
			return;
		r = utrace__peer_check(fd, &pid, &uid);
		if (r < 0) {
			if (r == -EPERM && !refused_told)
				utrace__warn("control: refused a connection from pid %d, "
					     "uid %u: only uid %u or root may control this "
					     "process", (int)pid, (unsigned int)uid,
					     (unsigned int)geteuid());
			refused_told |= r == -EPERM;
			close(fd);
			continue;
		}
		if (nr_conns == MAX_CONNS)
			conn_drop(conn_oldest());
		conns[nr_conns] = (struct conn){ .fd = fd, .since = utrace__mono_ns() };
		conns[nr_conns].out_tail = &conns[nr_conns].out;
		nr_conns++;
	}
}

/* What agent_main() polls, in this order, the connections last. */
enum agent_pollfd {
	POLL_LISTEN,                   /* new connections */
	POLL_WAKE,                     /* the wake pipe: stop */
	POLL_RECORDER,                 /* an attached recorder's hang-up */
	POLL_SNAP,                     /* a snapshot trigger's request */
	POLL_RECQ,                     /* room for the messages waiting for
					* the recorder (record.c) */
	POLL_CONNS,                    /* conns[0] and on */
};

/* A copy of a buffer's pool (-1: the top level's, else instance inst's),
 * whole (header, slots, pages), into a new memfd: the snapshot the mount
 * reads as it reads the pool. */
static void snapshot_take(int inst)
{
	uint64_t until = __atomic_exchange_n(&snap_when[1 + inst], 0, __ATOMIC_ACQ_REL);
	int src = utrace__control_pool_fd_of(inst), dst;
	struct stat st;
	size_t size, off = 0;
	void *p;

	if (src < 0 || fstat(src, &st) < 0 || st.st_size <= 0)
		return;
	size = (size_t)st.st_size;
	dst = utrace__fd_high(memfd_create("utrace-snapshot", MFD_CLOEXEC));
	if (dst < 0)
		return;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, src, 0);
	if (p == MAP_FAILED) {
		close(dst);
		return;
	}
	while (off < size) {
		ssize_t n = write(dst, (const char *)p + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	munmap(p, size);
	if (off < size) {
		close(dst);
		return;
	}
	if (snap_fd[1 + inst] >= 0)
		close(snap_fd[1 + inst]);
	snap_fd[1 + inst] = dst;
	snap_until[1 + inst] = until;
	snap_seq[1 + inst] = snap_seq[1 + inst] == INT32_MAX ? 1 : snap_seq[1 + inst] + 1;
}

void utrace__agent_snapshot_request(int inst)
{
	char b = 's';
	int fd = __atomic_load_n(&snap_pipe[1], __ATOMIC_RELAXED);
	uint64_t bit = 1ull << (inst + 1);

	/* the time of the event: the copy shows the buffer up to it */
	__atomic_store_n(&snap_when[1 + inst], utrace__clock_now(), __ATOMIC_RELEASE);
	if (on_agent) {
		/* a trace_marker write's trigger: the agent holds busy_mutex */
		snapshot_take(inst);
		return;
	}
	/* one byte per request served: async-signal-safe, never blocks */
	if (fd >= 0 && !__atomic_fetch_or(&snap_pending, bit, __ATOMIC_ACQ_REL) &&
	    write(fd, &b, 1) != 1)
		__atomic_fetch_and(&snap_pending, ~bit, __ATOMIC_RELEASE);
}

void utrace__agent_snapshot_forget(int inst)
{
	if (snap_fd[1 + inst] >= 0)
		close(snap_fd[1 + inst]);
	snap_fd[1 + inst] = -1;
	/* a request waiting for its turn is of a snapshot freed now: it
	 * must not come back (its byte, if still in the pipe, finds none) */
	__atomic_fetch_and(&snap_pending, ~(1ull << (inst + 1)), __ATOMIC_ACQ_REL);
	__atomic_store_n(&snap_when[1 + inst], 0, __ATOMIC_RELEASE);
}

static void *agent_main(void *arg)
{
	struct pollfd pfd[POLL_CONNS + MAX_CONNS];
	char name[16] = "";
	sigset_t all;
	int i, n, timeout, rec_fd, qfd;
	uint64_t now, limit = (uint64_t)SEND_TIMEOUT_MS * 1000000;

	(void)arg;
	memset(pfd, 0, sizeof(pfd));
	sigfillset(&all);
	/* but not the synchronous ones: blocked, they kill the process when
	 * they come, and they do here: SIGTRAP is a dynamic probe's int3 in
	 * code this thread runs (malloc, strlen, the dynamic linker's r_brk
	 * when it dlopen()s), SIGSEGV/SIGBUS a fault-safe read's fault */
	sigdelset(&all, SIGTRAP);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGFPE);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* (named already, unless the creator could not take the name) */
	if (prctl(PR_GET_NAME, name) != 0 || strcmp(name, AGENT_NAME) != 0)
		prctl(PR_SET_NAME, AGENT_NAME);
	on_agent = true;
	/* its malloc, open, read... are utrace's: no probe of the user's
	 * fires on them */
	utrace__uprobes_quiet_thread();
	utrace__filter_sync_init();
	/* Started: agent_start() returns only now, so that a fork right
	 * after it does not copy a thread that is still setting up. */
	pthread_mutex_lock(&ready_mutex);
	agent_ready = true;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&ready_mutex);
	/* (a fork child: the parent's instances' triggers go first) */
	pthread_mutex_lock(&busy_mutex);
	utrace__control_fork_cleanup();
	pthread_mutex_unlock(&busy_mutex);
	for (;;) {
		/* Clients that have not taken their answer in time lose it;
		 * the next such deadline is poll's timeout. */
		now = utrace__mono_ns();
		timeout = -1;
		for (i = nr_conns - 1; i >= 0; i--) {
			if (!conns[i].out)
				continue;
			if (now - conns[i].since >= limit) {
				conn_drop(i);
				continue;
			}
			uint64_t left = (conns[i].since + limit - now) / 1000000 + 1;

			if (timeout < 0 || left < (uint64_t)timeout)
				timeout = (int)left;
		}
		/* a snapshot that waits for its turn */
		if (snap_wanted) {
			now = utrace__mono_ns();
			i = now >= snap_next ? 0 : (int)((snap_next - now) / 1000000) + 1;
			if (timeout < 0 || i < timeout)
				timeout = i;
		}
		/* and the next TSC calibration point of the pool */
		i = utrace__pool_calib_timer();
		if (i >= 0 && (timeout < 0 || i < timeout))
			timeout = i;
		i = utrace__control_calib_timer();
		if (i >= 0 && (timeout < 0 || i < timeout))
			timeout = i;
		/* objects dlopen()ed since, for a recorder's symbols: looked
		 * for once a second while one records */
		if (utrace__record_send_objects() && (timeout < 0 || timeout > 1000))
			timeout = 1000;
		/* messages waiting for the recorder: sent as it reads, and
		 * it is dropped when it stays stuck (the deadline).  A turn
		 * that sent nothing though the socket said it had room (its
		 * peer's queue of packets can be full while its bytes are
		 * not) looks again in 10 ms rather than spin on POLLOUT. */
		qfd = utrace__record_queue_fd();
		if (qfd >= 0) {
			bool progress;

			i = utrace__record_flush(&progress);
			if (i >= 0 && (timeout < 0 || i < timeout))
				timeout = i;
			if (i >= 0 && !progress && (pfd[POLL_RECQ].revents & POLLOUT)) {
				qfd = -1;
				if (timeout < 0 || timeout > 10)
					timeout = 10;
			}
			if (i < 0)
				qfd = -1;
		}
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = wake_fd[0], .events = POLLIN };
		rec_fd = utrace__control_recorder_fd();
		pfd[n++] = (struct pollfd){ .fd = rec_fd, .events = 0 };
		pfd[n++] = (struct pollfd){ .fd = snap_pipe[0], .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = qfd, .events = POLLOUT };
		for (i = 0; i < nr_conns; i++)
			pfd[n++] = (struct pollfd){ .fd = conns[i].fd,
						    .events = conns[i].out ? POLLOUT : POLLIN };
		if (poll(pfd, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[POLL_WAKE].revents)
			break;
		if (rec_fd >= 0 && (pfd[POLL_RECORDER].revents & (POLLHUP | POLLERR))) {
			pthread_mutex_lock(&busy_mutex);
			utrace__control_recorder_gone();
			pthread_mutex_unlock(&busy_mutex);
		}
		if (pfd[POLL_SNAP].revents & POLLIN) {
			char buf[64];

			while (read(snap_pipe[0], buf, sizeof(buf)) > 0)
				;
			/* the bits stay in snap_pending until the copies:
			 * no more bytes meanwhile */
			snap_wanted = true;
		}
		/* Backwards: conn_drop() moves the last connection to i. */
		for (i = nr_conns - 1; i >= 0; i--) {
			short re = pfd[POLL_CONNS + i].revents;
			int r = 0;

			if (!re)
				continue;
			if (conns[i].out)
				r = re & (POLLERR | POLLHUP) ? -1 : conn_flush(&conns[i]);
			else
				r = conn_serve(&conns[i]);
			if (r < 0)
				conn_drop(i);
		}
		if (pfd[POLL_LISTEN].revents & POLLIN)
			accept_conns();
		/* the snapshot last: clients first (the file's comment) */
		if (snap_wanted && utrace__mono_ns() >= snap_next) {
			uint64_t t0 = utrace__mono_ns(), t1;
			/* the requests made from here on write the byte
			 * again: a later turn, after the gap */
			uint64_t want = __atomic_exchange_n(&snap_pending, 0, __ATOMIC_ACQ_REL);

			pthread_mutex_lock(&busy_mutex);
			for (i = 0; want; i++, want >>= 1)
				if (want & 1)
					snapshot_take(i - 1);
			pthread_mutex_unlock(&busy_mutex);
			t1 = utrace__mono_ns();
			snap_next = t1 + SNAP_GAP * (t1 - t0);
			snap_wanted = false;
		}
	}
	return NULL;
}

static void agent_cleanup(void)
{
	if (sock_path[0] && sock_owner == getpid())
		unlink(sock_path);
}

__attribute__((destructor)) static void agent_fini(void)
{
	agent_cleanup();
}

/* Start the agent (events have just registered); false when it does not run. */
bool utrace__agent_start(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], err[256], tmp[sizeof(sa.sun_path)];
	char comm[16] = "";
	pthread_attr_t at;
	pthread_t th;
	const char *v;
	bool renamed;
	int r;

	pthread_mutex_lock(&agent_mutex);
	if (agent_started || agent_disabled)
		goto out;
	agent_started = true;
	v = utrace__getenv("UTRACE_CONTROL");
	if (v && !strcmp(v, "0")) {
		agent_disabled = true;
		goto out;
	}
	agent_verbose = v && *v;
	r = utrace__rundir(dir, sizeof(dir), true, err, sizeof(err));
	if (r < 0) {
		/* Someone else's directory is worth a word even unasked:
		 * the user will wonder why `utrace ps` misses this process. */
		if (agent_verbose || r == -EPERM)
			utrace__warn("control: %s; this process cannot be controlled", err);
		goto out;
	}
	if ((size_t)snprintf(sock_path, sizeof(sock_path), "%s/%d.sock", dir,
			     (int)getpid()) >= sizeof(sock_path)) {
		errno = ENAMETOOLONG;
		sock_path[0] = 0;
		agent_warn(dir);
		goto out;
	}
	/* (out of the program's range of descriptors: fdhigh.h) */
	listen_fd = utrace__fd_high(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
					   SOCK_NONBLOCK, 0));
	if (listen_fd < 0 || pipe2(wake_fd, O_CLOEXEC) < 0 ||
	    pipe2(snap_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		agent_warn("socket");
		goto fail;
	}
	for (r = 0; r < 2; r++) {
		wake_fd[r] = utrace__fd_high(wake_fd[r]);
		snap_pipe[r] = utrace__fd_high(snap_pipe[r]);
	}
	/*
	 * Bound under a name clients do not look at, and given its real
	 * name only once it listens: a client that finds PID.sock but is
	 * refused takes it for a dead process's and removes it, so it must
	 * never see one that does not listen yet.  (Between bind() and
	 * listen() one did, about once in 300 starts under load, and the
	 * process was never traceable.)
	 */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%d.sock.new", dir, (int)getpid()) >=
	    sizeof(tmp)) {
		errno = ENAMETOOLONG;
		agent_warn(dir);
		goto fail;
	}
	strcpy(sa.sun_path, tmp);
	unlink(tmp);               /* a dead process's, with our pid */
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(tmp, 0600) < 0 || listen(listen_fd, 16) < 0 ||
	    rename(tmp, sock_path) < 0) {
		agent_warn(sock_path);
		unlink(tmp);
		goto fail;
	}
	sock_owner = getpid();
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 << 10);
	/*
	 * The new thread's name is the creating thread's when the kernel
	 * reports its birth (sched_process_fork, task_newtask): so the
	 * creator bears the agent's name for the length of the call, and
	 * the fork reads "comm=utrace-agent ... child_comm=utrace-agent"
	 * in a kernel trace, which a user who counts the program's forks
	 * can tell apart (a filter on child_comm) rather than one more
	 * fork of the program's.  The agent still starts with the program:
	 * a process must answer `utrace ps` and `record -p` from the start,
	 * and nothing else in it could start the thread later.
	 */
	renamed = prctl(PR_GET_NAME, comm) == 0 && prctl(PR_SET_NAME, AGENT_NAME) == 0;
	r = pthread_create(&th, &at, agent_main, NULL);
	if (renamed)
		prctl(PR_SET_NAME, comm);
	if (r != 0) {
		errno = r;
		pthread_attr_destroy(&at);
		agent_warn("thread");
		goto fail;
	}
	pthread_attr_destroy(&at);
	pthread_detach(th);
	pthread_mutex_lock(&ready_mutex);
	while (!agent_ready)
		pthread_cond_wait(&ready_cond, &ready_mutex);
	pthread_mutex_unlock(&ready_mutex);
	goto out;
fail:
	if (sock_path[0])
		unlink(sock_path);
	sock_path[0] = 0;
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
out:
	pthread_mutex_unlock(&agent_mutex);
	return listen_fd >= 0;
}

void utrace__agent_before_fork(void)
{
	pthread_mutex_lock(&busy_mutex);
}

void utrace__agent_after_fork_parent(void)
{
	pthread_mutex_unlock(&busy_mutex);
}

/* fork(): the agent thread is not in the child; start one of its own. */
void utrace__agent_after_fork_child(void)
{
	bool had = agent_started && !agent_disabled && listen_fd >= 0;
	int i;

	pthread_mutex_init(&agent_mutex, NULL);
	pthread_mutex_init(&busy_mutex, NULL);
	pthread_mutex_init(&ready_mutex, NULL);
	pthread_cond_init(&ready_cond, NULL);
	agent_ready = false;
	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = -1;
	for (i = 0; i < 2; i++) {
		if (wake_fd[i] >= 0)
			close(wake_fd[i]);
		if (snap_pipe[i] >= 0)
			close(snap_pipe[i]);
	}
	wake_fd[0] = wake_fd[1] = -1;
	snap_pipe[0] = snap_pipe[1] = -1;
	for (i = -1; i < UTRACE_INSTANCES_MAX; i++)
		utrace__agent_snapshot_forget(i);
	snap_pending = 0;
	snap_wanted = false;
	snap_next = 0;
	while (nr_conns)
		conn_drop(nr_conns - 1);
	utrace__control_after_fork_child();
	sock_path[0] = 0;
	agent_started = false;
	if (had)
		utrace__agent_start();
}
