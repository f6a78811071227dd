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
 * What it does is what needs the process itself: switching probes on and
 * off, compiling and installing filters, making the event pool, handing
 * the pool's memfd to readers, and connecting to an attaching recorder.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "filter.h"
#include "internal.h"
#include "clock.h"
#include "writer.h"
#include "ctlproto.h"
#include "ctlproto.h"
#include "rundir.h"

#define MAX_CONNS 128
#define SEND_TIMEOUT_MS 2000
/* As the kernel's tracing error_log: the last 8 entries; the kernel takes
 * filter writes shorter than a page, so an entry shows that much of one. */
#define ERROR_LOG_MAX 8
#define ERROR_LOG_CMD_MAX 4095

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

/* An attached `utrace record -p`: its socket, and what to restore. */
static int rec_sock = -1;
static uint32_t rec_old_mode;
static int *rec_saved_ids;             /* events that were on at the attach */
static size_t rec_nr_saved;

static char *error_log[ERROR_LOG_MAX];
static unsigned int nr_error_log;

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

/* --- events --- */

struct find_arg {
	uint32_t id;
	struct utrace_event *ev;
};

static int find_cb(struct utrace_event *ev, void *arg)
{
	struct find_arg *a = arg;

	if ((uint32_t)ev->id != a->id)
		return 0;
	a->ev = ev;
	return 1;
}

/* Registry lock held. */
static struct utrace_event *find_id(uint32_t id)
{
	struct find_arg a = { id, NULL };

	utrace_event_foreach(find_cb, &a);
	return a.ev;
}

struct list_arg {
	char *buf;
	size_t len, cap;
	uint32_t nr, nr_on;
	bool fail;
};

static int list_cb(struct utrace_event *ev, void *arg)
{
	struct list_arg *a = arg;
	const struct utrace__event_state *st = ev->priv;
	size_t sl = strlen(ev->cls->system) + 1, nl = strlen(ev->name) + 1;
	struct utrace_ctl_event_msg m = { (uint32_t)ev->id, st->enabled,
					  st->filter != NULL, (uint16_t)(sl + nl) };
	size_t need = sizeof(m) + sl + nl;

	a->nr++;
	a->nr_on += st->enabled;
	if (!a->buf)
		return 0;
	if (sl + nl > 0xffff)
		return 0;
	if (a->len + need > a->cap) {
		size_t cap = a->cap * 2 + need;
		char *b = realloc(a->buf, cap);

		if (!b) {
			a->fail = true;
			return 1;
		}
		a->buf = b;
		a->cap = cap;
	}
	memcpy(a->buf + a->len, &m, sizeof(m));
	memcpy(a->buf + a->len + sizeof(m), ev->cls->system, sl);
	memcpy(a->buf + a->len + sizeof(m) + sl, ev->name, nl);
	a->len += need;
	return 0;
}

/* The event list in packets that each hold whole entries. */
static void do_events(struct conn *c)
{
	struct list_arg a = { .buf = malloc(4096), .cap = 4096 };
	size_t max = UTRACE_CTL_MAX_PACKET - sizeof(struct utrace_ctl_ans), off = 0;

	if (!a.buf) {
		send_ans(c, -ENOMEM, 0, NULL, 0, 0);
		return;
	}
	utrace_event_foreach(list_cb, &a);
	if (a.fail) {
		free(a.buf);
		send_ans(c, -ENOMEM, 0, NULL, 0, 0);
		return;
	}
	do {
		size_t n = 0;

		while (off + n < a.len) {
			struct utrace_ctl_event_msg m;

			memcpy(&m, a.buf + off + n, sizeof(m));
			if (n + sizeof(m) + m.len > max)
				break;
			n += sizeof(m) + m.len;
		}
		if (send_ans(c, (int32_t)a.nr, a.len, a.buf + off, n,
			     off + n < a.len ? UTRACE_CTL_MORE : 0) < 0)
			break;
		off += n;
	} while (off < a.len);
	free(a.buf);
}

/* Add an entry to error_log; takes 'text' (malloc()ed, may be NULL). */
static void log_error(char *text)
{
	uint64_t t = utrace__mono_ns();
	char *e;
	int n;

	if (!text)
		return;
	n = asprintf(&e, "[%5llu.%06llu] %s", (unsigned long long)(t / 1000000000),
		     (unsigned long long)(t % 1000000000 / 1000), text);
	free(text);
	if (n < 0)
		return;
	if (nr_error_log == ERROR_LOG_MAX) {
		free(error_log[0]);
		memmove(error_log, error_log + 1, (ERROR_LOG_MAX - 1) * sizeof(*error_log));
		nr_error_log--;
	}
	error_log[nr_error_log++] = e;
}

/* error_log's entry for a filter that was refused, the command cut short
 * as the kernel's would be. */
static void log_filter_error(const char *expr, const struct utrace__filter_error *fe)
{
	struct utrace__filter_error e = *fe;
	char *cut = NULL;

	if (strlen(expr) > ERROR_LOG_CMD_MAX) {
		cut = strndup(expr, ERROR_LOG_CMD_MAX);
		if (!cut)
			return;
		if (e.pos > ERROR_LOG_CMD_MAX)
			e.pos = ERROR_LOG_CMD_MAX;
	}
	log_error(utrace__filter_log_text(cut ? cut : expr, &e));
	free(cut);
}

/*
 * Install (or remove, f NULL) an event's filter and its readback text.
 * The writer reads ev->filter under the RCU read lock; the old program is
 * freed after a grace period.  Registry lock held.
 */
static void set_filter(struct utrace_event *ev, struct utrace__filter *f, char *text)
{
	struct utrace__event_state *st = ev->priv;
	struct utrace__filter *old = st->filter;

	st->filter = f;
	__atomic_store_n(&ev->filter, (void *)f, __ATOMIC_RELEASE);
	free(st->filter_text);
	st->filter_text = text;
	/* Freed once no thread can be running it; kept (a small leak) if a
	 * thread has stayed inside one event too long to wait for. */
	if (old && utrace__filter_sync())
		utrace__filter_free(old);
}

static char *strip_expr(const char *in, size_t len)
{
	char *s = strndup(in, len);
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
		     s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

/* One event's filter; returns 0 or the kernel's -errno.  Registry lock held. */
static int filter_event(struct utrace_event *ev, const char *expr,
			struct utrace__filter_error *fe)
{
	const struct utrace__event_state *st = ev->priv;
	struct utrace__filter *f = NULL;
	char *text;
	int r;

	memset(fe, 0, sizeof(*fe));
	if (utrace__filter_is_clear(expr)) {
		set_filter(ev, NULL, NULL);
		return 0;
	}
	r = utrace__filter_compile(expr, st->fields, st->nr_fields, &f, fe);
	if (r < 0) {
		/* As the kernel: a failed write drops the old filter and the
		 * file reads back the error. */
		set_filter(ev, NULL, utrace__filter_error_text(expr, fe));
		log_filter_error(expr, fe);
		return r;
	}
	text = malloc(strlen(expr) + 2);
	if (!text) {
		utrace__filter_free(f);
		return -ENOMEM;
	}
	sprintf(text, "%s\n", expr);
	set_filter(ev, f, text);
	return 0;
}

struct sys_arg {
	const char *system;
	const char *expr;
	int on;                      /* enable_system: 0/1 */
	int matched;
	int ret;
};

static int filter_sys_cb(struct utrace_event *ev, void *arg)
{
	struct sys_arg *a = arg;
	struct utrace__filter_error fe;

	if (strcmp(ev->cls->system, a->system))
		return 0;
	a->matched++;
	if (filter_event(ev, a->expr, &fe) < 0 && !utrace__filter_is_clear(a->expr)) {
		/* The kernel's subsystem rule: an event that cannot take the
		 * filter stays unfiltered and says so, with the caret at 0. */
		struct utrace__event_state *st = ev->priv;
		struct utrace__filter_error se = { -EINVAL, 0, "" };

		snprintf(se.msg, sizeof(se.msg), "%s", UTRACE__FILTER_MSG_BAD_SUBSYS);
		free(st->filter_text);
		st->filter_text = utrace__filter_error_text(a->expr, &se);
		/* filter_event logged the event's own error: replace it */
		if (nr_error_log) {
			free(error_log[nr_error_log - 1]);
			nr_error_log--;
		}
		log_filter_error(a->expr, &se);
	}
	return 0;
}

static int enable_sys_cb(struct utrace_event *ev, void *arg)
{
	struct sys_arg *a = arg;
	int r;

	if (a->system && *a->system && strcmp(ev->cls->system, a->system))
		return 0;
	a->matched++;
	r = utrace_event_enable(ev, a->on);
	if (r < 0)
		a->ret = r;
	return 0;
}

static int count_sys_cb(struct utrace_event *ev, void *arg)
{
	struct sys_arg *a = arg;

	if (!strcmp(ev->cls->system, a->system))
		a->matched++;
	return 0;
}

static int info_cb(struct utrace_event *ev, void *arg)
{
	struct utrace_ctl_info_msg *m = arg;
	const struct utrace__event_state *st = ev->priv;

	m->nr_events++;
	m->nr_enabled += st->enabled;
	return 0;
}

static void do_info(struct conn *c)
{
	struct utrace_ctl_info_msg m;
	struct utrace_pool *p = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);
	int cfd;
	ssize_t n;
	uint32_t i;

	memset(&m, 0, sizeof(m));
	m.pid = (uint32_t)getpid();
	m.ppid = (uint32_t)getppid();
	m.uid = (uint32_t)getuid();
	cfd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		n = read(cfd, m.comm, sizeof(m.comm) - 1);
		close(cfd);
		while (n > 0 && (m.comm[n - 1] == '\n' || !m.comm[n - 1]))
			m.comm[--n] = 0;
	}
	n = readlink("/proc/self/exe", m.exe, sizeof(m.exe) - 1);
	if (n < 0)
		m.exe[0] = 0;
	utrace_event_foreach(info_cb, &m);
	m.tracing_on = !__atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED);
	m.recorder = rec_sock >= 0;
	if (p) {
		m.has_pool = 1;
		m.mode = p->mode;
		/* counts from our own record of the pool: its header is
		 * shared memory anyone with the fd can write */
		m.nr_pages = utrace_pool_nr_pages(p);
		m.buffer_size = (uint64_t)m.nr_pages * UTRACE_PAGE_SIZE;
		for (i = 0; i < m.nr_pages; i++) {
			const struct utrace_page_desc *d = utrace_pool_desc(p, i);
			uint32_t s = __atomic_load_n(&d->state, __ATOMIC_RELAXED);

			if (s != UTRACE_PAGE_FREE)
				m.pages_used++;
		}
		for (i = 0; i < utrace_pool_nr_slots(p); i++) {
			const struct utrace_thread_slot *s = utrace_pool_slot(p, i);

			m.written += __atomic_load_n(&s->written, __ATOMIC_RELAXED);
			m.lost += __atomic_load_n(&s->lost, __ATOMIC_RELAXED) +
				  __atomic_load_n(&s->overwritten, __ATOMIC_RELAXED);
		}
		m.lost += __atomic_load_n(&p->lost_no_slot, __ATOMIC_RELAXED);
	} else {
		m.buffer_size = utrace__pool_next_size() / UTRACE_PAGE_SIZE * UTRACE_PAGE_SIZE;
		m.mode = UTRACE_MODE_OVERWRITE;
	}
	send_ans(c, 0, 0, &m, sizeof(m), 0);
}

static void do_text(struct conn *c, char *text, int err)
{
	if (!text)
		send_ans(c, err ? err : -ENOMEM, 0, NULL, 0, 0);
	else
		send_text(c, 0, text, strlen(text));
	free(text);
}

static int save_cb(struct utrace_event *ev, void *arg)
{
	(void)arg;
	if (((struct utrace__event_state *)ev->priv)->enabled) {
		int *n = realloc(rec_saved_ids, (rec_nr_saved + 1) * sizeof(*n));

		if (!n)
			return 1;
		rec_saved_ids = n;
		rec_saved_ids[rec_nr_saved++] = ev->id;
	}
	return 0;
}

static int restore_cb(struct utrace_event *ev, void *arg)
{
	size_t i;
	int on = 0;

	(void)arg;
	for (i = 0; i < rec_nr_saved; i++)
		if (rec_saved_ids[i] == ev->id)
			on = 1;
	utrace_event_enable(ev, on);
	return 0;
}

/* The attached recorder went away: events back as they were. */
static void recorder_gone(void)
{
	utrace__record_detach(rec_sock, rec_old_mode);
	rec_sock = -1;
	utrace__registry_lock();
	utrace_event_foreach(restore_cb, NULL);
	utrace__registry_unlock();
	free(rec_saved_ids);
	rec_saved_ids = NULL;
	rec_nr_saved = 0;
}

static void handle(struct conn *c, const struct utrace_ctl_req *q, const char *pl,
		   size_t plen)
{
	struct utrace_event *ev;
	struct utrace__filter_error fe;
	struct utrace_ctl_filter_msg fm;
	struct sys_arg sa;
	char *s, *text;
	int r;

	switch (q->op) {
	case UTRACE_CTL_INFO:
		do_info(c);
		return;
	case UTRACE_CTL_EVENTS:
		do_events(c);
		return;
	case UTRACE_CTL_FORMAT:
		utrace__registry_lock();
		ev = find_id(q->id);
		text = ev ? utrace_event_format(ev) : NULL;
		utrace__registry_unlock();
		do_text(c, text, ev ? -ENOMEM : -ENOENT);
		return;
	case UTRACE_CTL_SET_EVENT: {
		size_t b = 0, e = plen;

		while (b < e && strchr(" \t\n\r\f\v", pl[b]))
			b++;
		while (e > b && strchr(" \t\n\r\f\v", pl[e - 1]))
			e--;
		if (b == e) {
			send_ans(c, 0, 0, NULL, 0, 0);
			return;
		}
		s = strndup(pl + b, e - b);
		if (!s) {
			send_ans(c, -ENOMEM, 0, NULL, 0, 0);
			return;
		}
		r = 0;
		if (s[0] != '!')
			r = utrace__pool_ensure();
		if (r == 0)
			r = utrace_set_event(s);
		free(s);
		send_ans(c, r, 0, NULL, 0, 0);
		return;
	}
	case UTRACE_CTL_CLEAR_EVENTS:
		sa = (struct sys_arg){ .system = NULL, .on = 0 };
		utrace__registry_lock();
		utrace_event_foreach(enable_sys_cb, &sa);
		utrace__registry_unlock();
		send_ans(c, sa.ret, 0, NULL, 0, 0);
		return;
	case UTRACE_CTL_ENABLE:
		r = q->arg ? utrace__pool_ensure() : 0;
		utrace__registry_lock();
		ev = find_id(q->id);
		if (!ev)
			r = -ENOENT;
		else if (r == 0)
			r = utrace_event_enable(ev, q->arg != 0);
		utrace__registry_unlock();
		send_ans(c, r, 0, NULL, 0, 0);
		return;
	case UTRACE_CTL_ENABLE_SYSTEM:
		s = strndup(pl, plen);
		r = q->arg && s ? utrace__pool_ensure() : s ? 0 : -ENOMEM;
		if (r == 0) {
			sa = (struct sys_arg){ .system = s, .on = q->arg != 0 };
			utrace__registry_lock();
			utrace_event_foreach(enable_sys_cb, &sa);
			utrace__registry_unlock();
			r = sa.ret ? sa.ret : sa.matched ? 0 : -ENOENT;
		}
		free(s);
		send_ans(c, r, 0, NULL, 0, 0);
		return;
	case UTRACE_CTL_FILTER:
		s = strip_expr(pl, plen);
		memset(&fm, 0, sizeof(fm));
		if (!s) {
			send_ans(c, -ENOMEM, 0, NULL, 0, 0);
			return;
		}
		utrace__registry_lock();
		ev = find_id(q->id);
		r = ev ? filter_event(ev, s, &fe) : -ENOENT;
		utrace__registry_unlock();
		free(s);
		if (ev && r < 0) {
			fm.err = fe.err;
			fm.pos = fe.pos;
			memcpy(fm.msg, fe.msg, sizeof(fm.msg));
			fm.msg[sizeof(fm.msg) - 1] = 0;
		}
		send_ans(c, r, 0, &fm, sizeof(fm), 0);
		return;
	case UTRACE_CTL_FILTER_SYSTEM: {
		size_t sl = strnlen(pl, plen);

		if (sl == plen) {
			send_ans(c, -EINVAL, 0, NULL, 0, 0);
			return;
		}
		s = strip_expr(pl + sl + 1, plen - sl - 1);
		if (!s) {
			send_ans(c, -ENOMEM, 0, NULL, 0, 0);
			return;
		}
		sa = (struct sys_arg){ .system = pl, .expr = s };
		utrace__registry_lock();
		utrace_event_foreach(filter_sys_cb, &sa);
		utrace__registry_unlock();
		free(s);
		send_ans(c, sa.matched ? 0 : -ENOENT, 0, NULL, 0, 0);
		return;
	}
	case UTRACE_CTL_FILTER_TEXT:
		utrace__registry_lock();
		ev = find_id(q->id);
		text = NULL;
		if (ev) {
			const struct utrace__event_state *st = ev->priv;

			text = strdup(st->filter_text ? st->filter_text : "none\n");
		}
		utrace__registry_unlock();
		do_text(c, text, ev ? -ENOMEM : -ENOENT);
		return;
	case UTRACE_CTL_FILTER_SYSTEM_TEXT:
		s = strndup(pl, plen);
		sa = (struct sys_arg){ .system = s ? s : "" };
		utrace__registry_lock();
		if (s)
			utrace_event_foreach(count_sys_cb, &sa);
		utrace__registry_unlock();
		free(s);
		do_text(c, sa.matched ? strdup("### global filter ###\n"
			"# Use this to set filters for multiple events.\n"
			"# Only events with the given fields will be affected.\n"
			"# If no events are modified, an error message will be displayed here\n")
			: NULL, -ENOENT);
		return;
	case UTRACE_CTL_ERROR_LOG: {
		size_t len = 0;
		unsigned int i;

		for (i = 0; i < nr_error_log; i++)
			len += strlen(error_log[i]);
		text = malloc(len + 1);
		if (text) {
			text[0] = 0;
			for (i = 0; i < nr_error_log; i++)
				strcat(text, error_log[i]);
		}
		if (text && !len) {
			send_ans(c, 0, 0, NULL, 0, 0);
			free(text);
			return;
		}
		do_text(c, text, -ENOMEM);
		return;
	}
	case UTRACE_CTL_ERROR_LOG_CLEAR:
		while (nr_error_log)
			free(error_log[--nr_error_log]);
		send_ans(c, 0, 0, NULL, 0, 0);
		return;
	case UTRACE_CTL_TRACING_ON:
		if (q->arg == 0 || q->arg == 1)
			__atomic_store_n(&utrace__tracing_off, !q->arg, __ATOMIC_RELEASE);
		send_ans(c, !__atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED), 0,
			 NULL, 0, 0);
		return;
	case UTRACE_CTL_BUFFER_SIZE: {
		/* As the kernel's buffer_size_kb: bytes of event data, whole
		 * pages of UTRACE_PAGE_DATA (4080) bytes, at least 2 pages. */
		uint64_t pages;

		if (q->size) {
			if (q->size > (1ULL << 36)) {
				send_ans(c, -EINVAL, 0, NULL, 0, 0);
				return;
			}
			pages = (q->size + UTRACE_PAGE_DATA - 1) / UTRACE_PAGE_DATA;
			if (pages < 2)
				pages = 2;
			r = rec_sock >= 0 ? -EBUSY : utrace__pool_resize(pages * UTRACE_PAGE_SIZE);
			if (r < 0) {
				send_ans(c, r, 0, NULL, 0, 0);
				return;
			}
		}
		struct utrace_pool *cur = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);

		pages = cur ? cur->nr_pages : utrace__pool_next_size() / UTRACE_PAGE_SIZE;
		send_ans(c, 0, (pages < 2 ? 2 : pages) * UTRACE_PAGE_DATA, NULL, 0, 0);
		return;
	}
	case UTRACE_CTL_CLEAR_BUFFER:
		if (__atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE)) {
			struct utrace_pool *p = __atomic_load_n(&utrace__pool, __ATOMIC_ACQUIRE);
			uint64_t ov = 0;
			uint32_t i;

			for (i = 0; i < utrace_pool_nr_slots(p); i++)
				ov += __atomic_load_n(&utrace_pool_slot(p, i)->overwritten,
						      __ATOMIC_RELAXED);
			__atomic_store_n(&p->clear_overwritten, ov, __ATOMIC_RELAXED);
			__atomic_store_n(&p->clear_ts, utrace__clock_now(), __ATOMIC_RELEASE);
		}
		send_ans(c, 0, 0, NULL, 0, 0);
		return;
	case UTRACE_CTL_POOL:
		r = utrace__pool_ensure();
		if (r < 0)
			send_ans(c, r, 0, NULL, 0, 0);
		else
			send_fd(c, 0, utrace__pool_fd);
		return;
	case UTRACE_CTL_ATTACH:
		if (rec_sock >= 0) {
			send_ans(c, -EBUSY, 0, NULL, 0, 0);
			return;
		}
		s = strndup(pl, plen);
		if (!s) {
			send_ans(c, -ENOMEM, 0, NULL, 0, 0);
			return;
		}
		utrace__pool_ensure();
		rec_old_mode = utrace__pool ? utrace__pool->mode : UTRACE_MODE_OVERWRITE;
		utrace__registry_lock();
		utrace_event_foreach(save_cb, NULL);
		utrace__registry_unlock();
		r = utrace__record_attach(s, (uint32_t)q->arg);
		free(s);
		if (r >= 0) {
			rec_sock = r;
			r = 0;
		} else {
			free(rec_saved_ids);
			rec_saved_ids = NULL;
			rec_nr_saved = 0;
		}
		send_ans(c, r, 0, NULL, 0, 0);
		return;
	default:
		send_ans(c, -EOPNOTSUPP, 0, NULL, 0, 0);
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
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
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

static void *agent_main(void *arg)
{
	struct pollfd pfd[MAX_CONNS + 3];
	sigset_t all;
	int i, n, timeout;
	uint64_t now, limit = (uint64_t)SEND_TIMEOUT_MS * 1000000;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "utrace-agent");
	utrace__filter_sync_init();
	/* Started: agent_start() returns only now, so that a fork right
	 * after it does not copy a thread that is still setting up. */
	pthread_mutex_lock(&ready_mutex);
	agent_ready = true;
	pthread_cond_signal(&ready_cond);
	pthread_mutex_unlock(&ready_mutex);
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
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = wake_fd[0], .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = rec_sock, .events = 0 };
		for (i = 0; i < nr_conns; i++)
			pfd[n++] = (struct pollfd){ .fd = conns[i].fd,
						    .events = conns[i].out ? POLLOUT : POLLIN };
		if (poll(pfd, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (rec_sock >= 0 && (pfd[2].revents & (POLLHUP | POLLERR))) {
			pthread_mutex_lock(&busy_mutex);
			recorder_gone();
			pthread_mutex_unlock(&busy_mutex);
		}
		/* Backwards: conn_drop() moves the last connection to i. */
		for (i = nr_conns - 1; i >= 0; i--) {
			short re = pfd[3 + i].revents;
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
		if (pfd[0].revents & POLLIN)
			accept_conns();
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
	char dir[sizeof(sa.sun_path)], err[256];
	pthread_attr_t at;
	pthread_t th;
	const char *v;
	int r;

	pthread_mutex_lock(&agent_mutex);
	if (agent_started || agent_disabled)
		goto out;
	agent_started = true;
	v = getenv("UTRACE_CONTROL");
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
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (listen_fd < 0 || pipe2(wake_fd, O_CLOEXEC) < 0) {
		agent_warn("socket");
		goto fail;
	}
	strcpy(sa.sun_path, sock_path);
	unlink(sock_path);         /* a dead process's, with our pid */
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(sock_path, 0600) < 0 || listen(listen_fd, 16) < 0) {
		agent_warn(sock_path);
		goto fail;
	}
	sock_owner = getpid();
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 << 10);
	if (pthread_create(&th, &at, agent_main, NULL) != 0) {
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
	for (i = 0; i < 2; i++)
		if (wake_fd[i] >= 0)
			close(wake_fd[i]);
	wake_fd[0] = wake_fd[1] = -1;
	while (nr_conns)
		conn_drop(nr_conns - 1);
	rec_sock = -1;      /* the parent's recorder; record.c closed it */
	free(rec_saved_ids);
	rec_saved_ids = NULL;
	rec_nr_saved = 0;
	while (nr_error_log)
		free(error_log[--nr_error_log]);
	sock_path[0] = 0;
	agent_started = false;
	if (had)
		utrace__agent_start();
}
