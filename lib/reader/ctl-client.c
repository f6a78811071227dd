/* SPDX-License-Identifier: MIT */
/* The client side of the control protocol (client.h, ctlproto.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl-client.h"
#include "ctlproto.h"
#include "problems.h"
#include "rundir.h"

#define ANSWER_TIMEOUT_S 10

struct utrace__ctl {
	int fd;
	pid_t pid;
	uint32_t inst;           /* the instance requests are for; 0: top level */
	char msg[512];
};


/* --- finding processes --- */

static bool pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/*
 * Connect; -errno.  ECONNREFUSED/ENOENT: nobody listens (stale); EAGAIN:
 * its queue of connections is full (it is alive, but busy or stopped).
 * The connect itself never waits: a process that does not accept cannot
 * hold us.
 */
static int connect_path(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { ANSWER_TIMEOUT_S, 0 };
	int fd, e;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

struct plist {
	struct utrace__ctl_proc *v;
	size_t n, cap;
};

static void scan_dir(const char *dir, struct plist *l)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end, path[sizeof(((struct utrace__ctl_proc *)0)->sock)];
		long pid = strtol(de->d_name, &end, 10);
		struct stat st;
		size_t i;

		if (pid <= 0 || strcmp(end, ".sock"))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    sizeof(path))
			continue;
		if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (!pid_alive((pid_t)pid)) {
			unlink(path);   /* a process that is gone */
			continue;
		}
		for (i = 0; i < l->n; i++)
			if (l->v[i].pid == (pid_t)pid)
				break;
		if (i < l->n)
			continue;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 16;
			void *v = realloc(l->v, cap * sizeof(*l->v));

			if (!v)
				break;
			l->v = v;
			l->cap = cap;
		}
		struct utrace__ctl_proc *p = &l->v[l->n];

		memset(p, 0, sizeof(*p));
		p->pid = (pid_t)pid;
		p->uid = st.st_uid;
		strcpy(p->sock, path);
		{
			char cp[64];
			int fd;
			ssize_t n;

			snprintf(cp, sizeof(cp), "/proc/%ld/comm", pid);
			fd = open(cp, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				n = read(fd, p->comm, sizeof(p->comm) - 1);
				close(fd);
				while (n > 0 && (p->comm[n - 1] == '\n' || !p->comm[n - 1]))
					p->comm[--n] = 0;
			}
		}
		l->n++;
	}
	closedir(d);
}

/* The uid a directory name stands for ("1000" of /run/user/1000). */
static bool name_uid(const char *s, uid_t *uid)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 0xfffffffful)
		return false;
	*uid = (uid_t)v;
	return true;
}

/*
 * Directories to look in: ours, and with 'all_users' (root) everybody's.
 * Each must pass
 * the runtime directory's checks (rundir.h): a directory that someone
 * else could have put sockets in is not looked at.  Ours, refused, is
 * worth saying once; another user's is that user's business.
 */
static void scan_all(struct plist *l, bool all_users)
{
	static bool told;
	char dir[256], err[512];
	DIR *d;
	struct dirent *de;
	uid_t uid;
	int r;

	r = utrace__rundir(dir, sizeof(dir), false, err, sizeof(err));
	if (r == 0)
		scan_dir(dir, l);
	else if (r == -EPERM && !told) {
		utrace__say("utrace: %s\n", err);
		told = true;
	}
	if (!all_users || geteuid() != 0)
		return;
	if ((d = opendir("/run/user"))) {
		while ((de = readdir(d))) {
			if (!name_uid(de->d_name, &uid))
				continue;
			snprintf(dir, sizeof(dir), "/run/user/%.16s", de->d_name);
			if (utrace__rundir_check(dir, uid, NULL, 0) < 0)
				continue;
			snprintf(dir, sizeof(dir), "/run/user/%.16s/utrace", de->d_name);
			if (utrace__rundir_check(dir, uid, NULL, 0) == 0)
				scan_dir(dir, l);
		}
		closedir(d);
	}
	if ((d = opendir("/tmp"))) {
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, "utrace-", 7) || !name_uid(de->d_name + 7, &uid))
				continue;
			snprintf(dir, sizeof(dir), "/tmp/%.32s", de->d_name);
			if (utrace__rundir_check(dir, uid, NULL, 0) == 0)
				scan_dir(dir, l);
		}
		closedir(d);
	}
}

static int cmp_proc(const void *a, const void *b)
{
	const struct utrace__ctl_proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int utrace__ctl_list(struct utrace__ctl_proc **out, size_t *nr, unsigned int flags)
{
	struct plist l = { 0 };
	size_t i, j;

	*out = NULL;
	*nr = 0;
	if ((flags & UTRACE__CTL_ALL_USERS) && geteuid() != 0)
		return -EPERM;
	scan_all(&l, flags & UTRACE__CTL_ALL_USERS);
	/* Keep those whose agent answers; a socket nobody listens on is
	 * left by a process that exec'd or died with our pid reused. */
	for (i = 0, j = 0; i < l.n; i++) {
		int fd = connect_path(l.v[i].sock);

		if (fd == -ECONNREFUSED) {
			unlink(l.v[i].sock);
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (fd >= 0 || fd == -EACCES || fd == -EAGAIN)
			l.v[j++] = l.v[i];
	}
	l.n = j;
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_proc);
	*out = l.v;
	*nr = l.n;
	return 0;
}

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned int)uid);
	return buf;
}

/*
 * Connect to a listed socket; a full queue of connections (EAGAIN: the
 * agent is alive but has not accepted, busy or stopped) is tried again
 * until 'wait_ms' have passed, in steps growing from 1 to 50 ms.
 */
static int connect_wait(const char *path, int wait_ms)
{
	struct timespec t0, now;
	long step_us = 1000;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = connect_path(path);
		if (fd == -EINTR)
			continue;   /* a signal (the command's own): again */
		if (fd != -EAGAIN)
			return fd;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
		    wait_ms)
			return -EAGAIN;
		usleep((useconds_t)step_us);
		if (step_us < 50000)
			step_us *= 2;
	}
}

int utrace__ctl_open(pid_t pid, struct utrace__ctl **out, char *err, size_t errlen)
{
	return utrace__ctl_open_wait(pid, out, err, errlen, ANSWER_TIMEOUT_S * 1000);
}

int utrace__ctl_open_wait(pid_t pid, struct utrace__ctl **out, char *err, size_t errlen,
			  int wait_ms)
{
	struct plist l = { 0 };
	struct utrace__ctl *c;
	char proc[64], user[64];
	struct stat st;
	size_t i;
	int fd = -ESRCH;

	*out = NULL;
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(proc, &st) < 0) {
		utrace__setmsg(err, errlen, "no process %d", (int)pid);
		return -ESRCH;
	}
	if (st.st_uid != geteuid() && geteuid() != 0) {
		utrace__setmsg(err, errlen, "process %d belongs to %s: only that user or root may "
		       "trace it", (int)pid, user_name(st.st_uid, user, sizeof(user)));
		return -EPERM;
	}
	/* a process named by its pid: wherever it listens, for root */
	scan_all(&l, true);
	for (i = 0; i < l.n; i++) {
		if (l.v[i].pid != pid)
			continue;
		fd = connect_wait(l.v[i].sock, wait_ms);
		if (fd == -ECONNREFUSED)
			unlink(l.v[i].sock);
		break;
	}
	free(l.v);
	if (fd == -EACCES || fd == -EPERM) {
		utrace__setmsg(err, errlen, "process %d: permission denied by its control socket",
		       (int)pid);
		return -EPERM;
	}
	if (fd == -EAGAIN) {
		/* it listens: busy (or stopped), not gone */
		utrace__setmsg(err, errlen, "process %d is busy: its agent took no connection in "
			       "%d ms", (int)pid, wait_ms);
		return -EBUSY;
	}
	if (fd < 0) {
		utrace__setmsg(err, errlen, "process %d is not traceable: it does not use libutrace, "
		       "has no events, or runs with UTRACE_CONTROL=0", (int)pid);
		return -ESRCH;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		utrace__setmsg(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->fd = fd;
	c->pid = pid;
	*out = c;
	return 0;
}

void utrace__ctl_close(struct utrace__ctl *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

void utrace__ctl_set_timeout(struct utrace__ctl *c, int ms)
{
	struct timeval tv = { ms / 1000, ms % 1000 * 1000 };

	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

const char *utrace__ctl_errmsg(const struct utrace__ctl *c)
{
	return c->msg;
}

pid_t utrace__ctl_pid(const struct utrace__ctl *c)
{
	return c->pid;
}

/* --- requests --- */

struct answer {
	int32_t status;
	uint64_t value;
	char *data;                 /* NUL-terminated */
	size_t len;
	int fd;                     /* passed descriptor, or -1 */
};

/*
 * Send a request and collect the answer (all its packets).  Returns the
 * answer's status, or -errno for a broken connection (with the message).
 */
static int request(struct utrace__ctl *c, uint32_t op, uint32_t id, int32_t arg,
		   uint64_t size, const void *pl, size_t plen, const void *pl2,
		   size_t plen2, struct answer *a)
{
	struct utrace_ctl_req q = { op | c->inst << UTRACE_CTL_INST_SHIFT, UTRACE_CTL_VERSION,
				    id, arg, size };
	struct iovec iov[3] = { { &q, sizeof(q) }, { (void *)pl, plen },
				{ (void *)pl2, plen2 } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };
	char *buf = NULL;
	int e;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (sizeof(q) + plen + plen2 > UTRACE_CTL_MAX_PACKET) {
		utrace__setmsg(c->msg, sizeof(c->msg), "request too long");
		return -E2BIG;
	}
	/* A signal caught meanwhile (a command's SIGUSR1 for its status line,
	 * SIGTERM) is no broken connection: given up on, the answer would
	 * come to the next request, and every answer after it be one late. */
	while (sendmsg(c->fd, &mh, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			goto broken;
	buf = malloc(UTRACE_CTL_MAX_PACKET);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		struct utrace_ctl_ans h;
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec riov = { buf, UTRACE_CTL_MAX_PACKET };
		struct msghdr rm = { .msg_iov = &riov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		ssize_t n = recvmsg(c->fd, &rm, MSG_CMSG_CLOEXEC);
		struct cmsghdr *cm;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto broken;
		if (n < (ssize_t)sizeof(h)) {
			errno = n == 0 ? ECONNRESET : EPROTO;
			goto broken;
		}
		for (cm = CMSG_FIRSTHDR(&rm); cm; cm = CMSG_NXTHDR(&rm, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				memcpy(&a->fd, CMSG_DATA(cm), sizeof(int));
		memcpy(&h, buf, sizeof(h));
		size_t dl = (size_t)n - sizeof(h);
		char *d = realloc(a->data, a->len + dl + 1);

		if (!d) {
			free(buf);
			free(a->data);
			a->data = NULL;
			return -ENOMEM;
		}
		a->data = d;
		memcpy(a->data + a->len, buf + sizeof(h), dl);
		a->len += dl;
		a->data[a->len] = 0;
		a->status = h.status;
		a->value = h.value;
		if (!(h.flags & UTRACE_CTL_MORE))
			break;
	}
	free(buf);
	return a->status;
broken:
	e = errno;
	free(buf);
	free(a->data);
	a->data = NULL;
	if (e == EAGAIN || e == EWOULDBLOCK)
		utrace__setmsg(c->msg, sizeof(c->msg), "process %d does not answer", (int)c->pid);
	else
		utrace__setmsg(c->msg, sizeof(c->msg), "lost the connection to process %d: %s",
		       (int)c->pid, strerror(e));
	return -(e == EAGAIN || e == EWOULDBLOCK ? ETIMEDOUT : e ? e : EIO);
}

static int simple(struct utrace__ctl *c, uint32_t op, uint32_t id, int32_t arg,
		  const void *pl, size_t plen)
{
	struct answer a;
	int r = request(c, op, id, arg, 0, pl, plen, NULL, 0, &a);

	free(a.data);
	if (a.fd >= 0)
		close(a.fd);
	return r;
}

static int text_arg(struct utrace__ctl *c, uint32_t op, uint32_t id, int32_t arg,
		    const void *pl, size_t plen, char **out)
{
	struct answer a;
	int r = request(c, op, id, arg, 0, pl, plen, NULL, 0, &a);

	*out = NULL;
	if (r < 0) {
		free(a.data);
		return r;
	}
	if (!a.data && !(a.data = strdup("")))
		return -ENOMEM;
	*out = a.data;
	return 0;
}

static int text(struct utrace__ctl *c, uint32_t op, uint32_t id, const void *pl,
		size_t plen, char **out)
{
	return text_arg(c, op, id, 0, pl, plen, out);
}

int utrace__ctl_uprobe_text(struct utrace__ctl *c, int profile, char **out)
{
	return text_arg(c, UTRACE_CTL_UPROBE, 0,
			profile == 2 ? UTRACE_CTL_UPROBE_VERBOSE :
			profile ? UTRACE_CTL_UPROBE_PROFILE : UTRACE_CTL_UPROBE_READ, NULL, 0, out);
}

int utrace__ctl_uprobe_write(struct utrace__ctl *c, const char *lines, size_t len)
{
	return simple(c, UTRACE_CTL_UPROBE, 0, UTRACE_CTL_UPROBE_WRITE, lines, len);
}

int utrace__ctl_synth_text(struct utrace__ctl *c, char **out)
{
	return text_arg(c, UTRACE_CTL_SYNTH, 0, UTRACE_CTL_SYNTH_READ, NULL, 0, out);
}

int utrace__ctl_synth_write(struct utrace__ctl *c, const char *lines, size_t len)
{
	return simple(c, UTRACE_CTL_SYNTH, 0, UTRACE_CTL_SYNTH_WRITE, lines, len);
}

int utrace__ctl_synth_write_dyn(struct utrace__ctl *c, const char *lines, size_t len)
{
	return simple(c, UTRACE_CTL_SYNTH_DYN_LINES, 0, 0, lines, len);
}

int utrace__ctl_synth_clear(struct utrace__ctl *c)
{
	return simple(c, UTRACE_CTL_SYNTH, 0, UTRACE_CTL_SYNTH_CLEAR, NULL, 0);
}

int utrace__ctl_ftrace_text(struct utrace__ctl *c, uint32_t file, char **out)
{
	return text_arg(c, UTRACE_CTL_FTRACE, file, UTRACE_CTL_FT_READ, NULL, 0, out);
}

int utrace__ctl_ftrace_write(struct utrace__ctl *c, uint32_t file, const char *buf, size_t len)
{
	return simple(c, UTRACE_CTL_FTRACE, file, UTRACE_CTL_FT_WRITE, buf, len);
}

int utrace__ctl_ftrace_clear(struct utrace__ctl *c, uint32_t file)
{
	return simple(c, UTRACE_CTL_FTRACE, file, UTRACE_CTL_FT_CLEAR, NULL, 0);
}

int utrace__ctl_uprobe_clear(struct utrace__ctl *c)
{
	return simple(c, UTRACE_CTL_UPROBE, 0, UTRACE_CTL_UPROBE_CLEAR, NULL, 0);
}

int utrace__ctl_info(struct utrace__ctl *c, struct utrace__ctl_info *info)
{
	struct utrace_ctl_info_msg m;
	struct answer a;
	int r = request(c, UTRACE_CTL_INFO, 0, 0, 0, NULL, 0, NULL, 0, &a);

	/* an agent from before the site counts sends less */
	if (r >= 0 && a.len < offsetof(struct utrace_ctl_info_msg, jump_sites))
		r = -EPROTO;
	if (r >= 0) {
		memset(&m, 0, sizeof(m));
		memcpy(&m, a.data, a.len < sizeof(m) ? a.len : sizeof(m));
		memset(info, 0, sizeof(*info));
		info->pid = m.pid;
		info->ppid = m.ppid;
		info->uid = m.uid;
		memcpy(info->comm, m.comm, sizeof(info->comm));
		info->comm[sizeof(info->comm) - 1] = 0;
		memcpy(info->exe, m.exe, sizeof(info->exe));
		info->exe[sizeof(info->exe) - 1] = 0;
		info->nr_events = m.nr_events;
		info->nr_enabled = m.nr_enabled;
		info->tracing_on = m.tracing_on;
		info->has_pool = m.has_pool;
		info->mode = m.mode;
		info->recorder = m.recorder;
		info->buffer_size = m.buffer_size;
		info->pages_used = m.pages_used;
		info->nr_pages = m.nr_pages;
		info->written = m.written;
		info->lost = m.lost;
		info->jump_sites = m.jump_sites;
		info->branch_sites = m.branch_sites;
	}
	free(a.data);
	return r < 0 ? r : 0;
}

/* UTRACE_CTL_EVENTS, arg 0 (the events) or 1 (the removed ones). */
static int event_list(struct utrace__ctl *c, int32_t arg, struct utrace__ctl_event **evs,
		      size_t *nr)
{
	struct answer a;
	struct utrace__ctl_event *v;
	size_t off = 0, n = 0;
	int r = request(c, UTRACE_CTL_EVENTS, 0, arg, 0, NULL, 0, NULL, 0, &a);

	*evs = NULL;
	*nr = 0;
	if (r < 0) {
		free(a.data);
		return r;
	}
	v = calloc((size_t)r + 1, sizeof(*v));
	if (!v) {
		free(a.data);
		return -ENOMEM;
	}
	while (off + sizeof(struct utrace_ctl_event_msg) <= a.len && n < (size_t)r) {
		struct utrace_ctl_event_msg m;
		const char *sys, *name;

		memcpy(&m, a.data + off, sizeof(m));
		off += sizeof(m);
		if (off + m.len > a.len)
			break;
		sys = a.data + off;
		if (strnlen(sys, m.len) >= m.len)
			break;
		name = sys + strlen(sys) + 1;
		if (strnlen(name, m.len - (size_t)(name - sys)) >= m.len - (size_t)(name - sys))
			break;
		v[n].id = m.id;
		v[n].enabled = (m.enabled & UTRACE_CTL_EV_ON) != 0;
		v[n].soft = (m.enabled & UTRACE_CTL_EV_SOFT) != 0;
		v[n].filtered = m.filtered;
		v[n].system = strdup(sys);
		v[n].name = strdup(name);
		if (!v[n].system || !v[n].name) {
			n++;
			utrace__ctl_events_free(v, n);
			free(a.data);
			return -ENOMEM;
		}
		n++;
		off += m.len;
	}
	free(a.data);
	*evs = v;
	*nr = n;
	return 0;
}

int utrace__ctl_events(struct utrace__ctl *c, struct utrace__ctl_event **evs, size_t *nr)
{
	return event_list(c, 0, evs, nr);
}

int utrace__ctl_events_removed(struct utrace__ctl *c, struct utrace__ctl_event **evs,
			       size_t *nr)
{
	return event_list(c, 1, evs, nr);
}

void utrace__ctl_events_free(struct utrace__ctl_event *evs, size_t nr)
{
	size_t i;

	for (i = 0; evs && i < nr; i++) {
		free(evs[i].system);
		free(evs[i].name);
	}
	free(evs);
}

int utrace__ctl_format(struct utrace__ctl *c, uint32_t id, char **out)
{
	return text(c, UTRACE_CTL_FORMAT, id, NULL, 0, out);
}

int utrace__ctl_set_event(struct utrace__ctl *c, const char *tok, size_t len)
{
	return simple(c, UTRACE_CTL_SET_EVENT, 0, 0, tok, len);
}

int utrace__ctl_clear_events(struct utrace__ctl *c)
{
	return simple(c, UTRACE_CTL_CLEAR_EVENTS, 0, 0, NULL, 0);
}

int utrace__ctl_enable(struct utrace__ctl *c, uint32_t id, int on)
{
	return simple(c, UTRACE_CTL_ENABLE, id, on != 0, NULL, 0);
}

int utrace__ctl_enable_system(struct utrace__ctl *c, const char *system, int on)
{
	return simple(c, UTRACE_CTL_ENABLE_SYSTEM, 0, on != 0, system ? system : "",
		      system ? strlen(system) : 0);
}

int utrace__ctl_filter(struct utrace__ctl *c, uint32_t id, const char *expr,
		       struct utrace__ctl_filter_error *fe)
{
	struct utrace_ctl_filter_msg m;
	struct answer a;
	int r = request(c, UTRACE_CTL_FILTER, id, 0, 0, expr, strlen(expr), NULL, 0, &a);

	if (fe) {
		memset(fe, 0, sizeof(*fe));
		if (a.len >= sizeof(m)) {
			memcpy(&m, a.data, sizeof(m));
			fe->err = m.err;
			fe->pos = m.pos;
			memcpy(fe->msg, m.msg, sizeof(fe->msg));
			fe->msg[sizeof(fe->msg) - 1] = 0;
		}
	}
	free(a.data);
	return r;
}

int utrace__ctl_filter_system(struct utrace__ctl *c, const char *system, const char *expr)
{
	struct answer a;
	int r = request(c, UTRACE_CTL_FILTER_SYSTEM, 0, 0, 0, system, strlen(system) + 1,
			expr, strlen(expr), &a);

	free(a.data);
	return r;
}

int utrace__ctl_filter_text(struct utrace__ctl *c, uint32_t id, char **out)
{
	return text(c, UTRACE_CTL_FILTER_TEXT, id, NULL, 0, out);
}

int utrace__ctl_filter_system_text(struct utrace__ctl *c, const char *system, char **out)
{
	return text(c, UTRACE_CTL_FILTER_SYSTEM_TEXT, 0, system, strlen(system), out);
}

int utrace__ctl_trigger(struct utrace__ctl *c, uint32_t id, const char *cmd, int truncate,
			char **log)
{
	struct answer a;
	int r = request(c, UTRACE_CTL_TRIGGER, id, truncate != 0, 0, cmd, cmd ? strlen(cmd) : 0,
			NULL, 0, &a);

	if (log && a.data && a.len) {
		*log = a.data;
		a.data = NULL;
	} else if (log) {
		*log = NULL;
	}
	free(a.data);
	return r;
}

int utrace__ctl_trigger_text(struct utrace__ctl *c, uint32_t id, int hist, char **out)
{
	return text(c, hist ? UTRACE_CTL_HIST : UTRACE_CTL_TRIGGER_TEXT, id, NULL, 0, out);
}

int utrace__ctl_error_log(struct utrace__ctl *c, char **out)
{
	return text(c, UTRACE_CTL_ERROR_LOG, 0, NULL, 0, out);
}

int utrace__ctl_error_log_clear(struct utrace__ctl *c)
{
	return simple(c, UTRACE_CTL_ERROR_LOG_CLEAR, 0, 0, NULL, 0);
}

int utrace__ctl_event_pid_text(struct utrace__ctl *c, int notrace, char **out)
{
	return text(c, UTRACE_CTL_EVENT_PID, notrace ? UTRACE_CTL_NOTRACE_PIDS : UTRACE_CTL_PIDS,
		    NULL, 0, out);
}

int utrace__ctl_event_pid_clear(struct utrace__ctl *c, int notrace)
{
	return simple(c, UTRACE_CTL_EVENT_PID,
		      notrace ? UTRACE_CTL_NOTRACE_PIDS : UTRACE_CTL_PIDS, UTRACE_CTL_PID_CLEAR,
		      NULL, 0);
}

int utrace__ctl_event_pid_add(struct utrace__ctl *c, int notrace, const char *buf, size_t len)
{
	if (len > UTRACE_CTL_EVENT_PID_MAX)
		return -EINVAL;
	return simple(c, UTRACE_CTL_EVENT_PID,
		      notrace ? UTRACE_CTL_NOTRACE_PIDS : UTRACE_CTL_PIDS, UTRACE_CTL_PID_ADD,
		      buf, len);
}

int utrace__ctl_marker(struct utrace__ctl *c, int raw, const void *buf, size_t len)
{
	if (len > UTRACE_CTL_MAX_PACKET - sizeof(struct utrace_ctl_req))
		return -EINVAL;
	return simple(c, UTRACE_CTL_MARKER, 0, raw != 0, buf, len);
}

int utrace__ctl_tracing_on(struct utrace__ctl *c, int on)
{
	return simple(c, UTRACE_CTL_TRACING_ON, 0, on, NULL, 0);
}

int utrace__ctl_buffer_size(struct utrace__ctl *c, uint64_t set, uint64_t *now)
{
	struct answer a;
	int r = request(c, UTRACE_CTL_BUFFER_SIZE, 0, 0, set, NULL, 0, NULL, 0, &a);

	if (now)
		*now = a.value;
	free(a.data);
	return r;
}

int utrace__ctl_pool_mode(struct utrace__ctl *c, int mode)
{
	return simple(c, UTRACE_CTL_POOL_MODE, 0, mode, NULL, 0);
}

int utrace__ctl_trace_clock(struct utrace__ctl *c, int id)
{
	return simple(c, UTRACE_CTL_TRACE_CLOCK, 0, id, NULL, 0);
}

int utrace__ctl_clear_buffer(struct utrace__ctl *c)
{
	return simple(c, UTRACE_CTL_CLEAR_BUFFER, 0, 0, NULL, 0);
}

int utrace__ctl_pool(struct utrace__ctl *c, int *fd)
{
	struct answer a;
	int r = request(c, UTRACE_CTL_POOL, 0, 0, 0, NULL, 0, NULL, 0, &a);

	free(a.data);
	*fd = a.fd;
	if (r >= 0 && a.fd < 0) {
		utrace__setmsg(c->msg, sizeof(c->msg), "process %d sent no buffer", (int)c->pid);
		return -EPROTO;
	}
	if (r < 0 && a.fd >= 0) {
		close(a.fd);
		*fd = -1;
	}
	return r;
}

int utrace__ctl_snapshot(struct utrace__ctl *c, int *fd, uint64_t *until)
{
	struct answer a;
	int r = request(c, UTRACE_CTL_SNAPSHOT, 0, 0, 0, NULL, 0, NULL, 0, &a);

	free(a.data);
	*fd = a.fd;
	*until = r > 0 ? a.value : 0;
	if (r > 0 && a.fd >= 0)
		return r;
	if (a.fd >= 0)
		close(a.fd);
	*fd = -1;
	return r < 0 ? r : -ENOENT;
}

int utrace__ctl_snapshot_free(struct utrace__ctl *c)
{
	return simple(c, UTRACE_CTL_SNAPSHOT, 0, 1, NULL, 0);
}

int utrace__ctl_attach(struct utrace__ctl *c, const char *sock_path, uint32_t mode)
{
	return simple(c, UTRACE_CTL_ATTACH, 0, (int32_t)mode, sock_path, strlen(sock_path));
}

int utrace__ctl_stacks(struct utrace__ctl *c, const char *spec)
{
	return simple(c, UTRACE_CTL_STACKS, 0, 0, spec, strlen(spec));
}

void utrace__ctl_set_instance(struct utrace__ctl *c, uint32_t handle)
{
	c->inst = handle;
}

/* A request about the instances themselves: never for an instance. */
static int top_request(struct utrace__ctl *c, uint32_t op, const char *name, char **out)
{
	uint32_t keep = c->inst;
	int r;

	c->inst = 0;
	if (out)
		r = text(c, op, 0, NULL, 0, out);
	else
		r = simple(c, op, 0, 0, name, name ? strlen(name) : 0);
	c->inst = keep;
	return r;
}

int utrace__ctl_instances(struct utrace__ctl *c, char **out)
{
	return top_request(c, UTRACE_CTL_INSTANCES, NULL, out);
}

int utrace__ctl_instance_mkdir(struct utrace__ctl *c, const char *name)
{
	return top_request(c, UTRACE_CTL_INSTANCE_MKDIR, name, NULL);
}

int utrace__ctl_instance_rmdir(struct utrace__ctl *c, const char *name)
{
	return top_request(c, UTRACE_CTL_INSTANCE_RMDIR, name, NULL);
}
