/* SPDX-License-Identifier: MIT */
/*
 * Recording one event: reserve space, let the generated probe fill it in,
 * commit.  Until the shared-memory buffers exist (lib/runtime/writer.c), the record
 * is built in the probe's stack frame and commit() hands it to the text
 * sink selected by UTRACE_PRINT, which writes it as one line of the
 * kernel's trace file layout:
 *
 *             comm-tid     [cpu] flags  seconds.micros: event: TP_printk text
 *
 * Everything here may run in a signal handler and inside probes: no locks
 * and no malloc; the line is built on the stack and written with one
 * write(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "event.h"
#include "fdhigh.h"
#include "traceline.h"

static __thread pid_t cached_tid;
static unsigned long dropped_too_big;

pid_t utrace__gettid(void)
{
	if (!cached_tid)
		cached_tid = gettid();
	return cached_tid;
}

/* The thread that called fork() is the child's only thread. */
void utrace__thread_after_fork(void)
{
	cached_tid = 0;
}

/* Without a pool: the record is built in the probe's stack frame, for
 * the record hook and UTRACE_PRINT. */
void *utrace__reserve_scratch(struct utrace_tp_reserve *r, struct utrace_event *ev,
			      void *scratch, unsigned int size)
{
	struct utrace_entry *ent = scratch;

	if (size > UTRACE_EVENT_MAX) {
		__atomic_fetch_add(&dropped_too_big, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	r->rec = ent;
	ent->type = (unsigned short)ev->id;
	ent->flags = 0;
	ent->preempt_count = 0;
	ent->pid = utrace__gettid();
	return ent;
}

/* What UTRACE_PRINT writes to, learnt at the first line. */
enum print_sink {
	PRINT_SINK_UNKNOWN = -1,
	PRINT_SINK_FILE,               /* a file or terminal: no SIGPIPE */
	PRINT_SINK_PIPE,               /* a pipe or socket: SIGPIPE held off */
};

static enum print_sink print_sink = PRINT_SINK_UNKNOWN;

/* write(2) until done; a line longer than PIPE_BUF may interleave with
 * another thread's line on a pipe, but is never cut short. */
static ssize_t write_all(int fd, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return (ssize_t)done;
}
static int print_broken;

/* One write, with SIGPIPE held off for pipes and sockets: a reader that
 * went away must not kill the traced program. */
static ssize_t write_line(int fd, const char *buf, size_t len)
{
	sigset_t pipe_set, old, pending;
	struct timespec zero = { 0, 0 };
	int was_pending = 0;
	ssize_t n;

	if (print_sink == PRINT_SINK_UNKNOWN) {
		struct stat st;

		print_sink = fstat(fd, &st) == 0 &&
			(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) ?
			PRINT_SINK_PIPE : PRINT_SINK_FILE;
	}
	if (print_sink != PRINT_SINK_PIPE)
		return write_all(fd, buf, len);
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	n = write_all(fd, buf, len);
	if (n < 0 && errno == EPIPE && !was_pending) {
		int e = errno;

		sigtimedwait(&pipe_set, NULL, &zero);
		errno = e;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n;
}

int utrace__print_fd = -1;
const char *utrace__print_path = "";

static pthread_once_t print_once = PTHREAD_ONCE_INIT;
static char *print_dest;

void utrace__print_set_dest(const char *dest)
{
	print_dest = strdup(dest);
}

/*
 * UTRACE_PRINT names a file that may sit in a directory others can write
 * (/tmp): a symbolic link planted there must not make the program append
 * to another of its owner's files, a FIFO nobody reads must not block it,
 * and a file someone else made must not receive its events.  So: no
 * link at the end of the path, not blocking, and only a regular file of
 * our own (or a terminal, FIFO or other character device).
 */
static int print_open_file(const char *path)
{
	struct stat st;
	const char *why = NULL;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW |
		      O_NONBLOCK, 0644);

	if (fd < 0) {
		utrace__warn("UTRACE_PRINT: cannot open '%s': %s; events are not printed",
			     path, errno == ELOOP ? "it is a symbolic link" :
			     errno == ENXIO ? "a FIFO that nobody reads" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (S_ISREG(st.st_mode) && st.st_uid != geteuid())
		why = "the file belongs to another user";
	else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
		why = "not a file, FIFO or terminal";
	if (why) {
		utrace__warn("UTRACE_PRINT: refusing '%s': %s; events are not printed",
			     path, why);
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return utrace__fd_high(fd);
}

/* Opened when the first events register, so that a process without
 * events (the utrace tool itself) leaves no file behind. */
static void print_open_fn(void)
{
	int fd;

	if (!print_dest)
		return;
	if (strcmp(print_dest, "stderr") == 0) {
		utrace__print_path = "stderr";
		__atomic_store_n(&utrace__print_fd, 2, __ATOMIC_RELEASE);
		return;
	}
	if (strcmp(print_dest, "stdout") == 0) {
		utrace__print_path = "stdout";
		__atomic_store_n(&utrace__print_fd, 1, __ATOMIC_RELEASE);
		return;
	}
	fd = print_open_file(print_dest);
	if (fd < 0)
		return;
	utrace__print_path = print_dest;
	__atomic_store_n(&utrace__print_fd, fd, __ATOMIC_RELEASE);
}

void utrace__print_open(void)
{
	pthread_once(&print_once, print_open_fn);
}

static void print_record(const struct utrace_event *ev, const void *rec)
{
	char line[4096];
	char comm[17] = { 0 };
	struct utrace_seq s;
	struct timespec ts;
	const struct utrace_entry *ent = rec;
	int cpu = sched_getcpu();
	ssize_t n;

	if (prctl(PR_GET_NAME, comm) < 0 || !comm[0])
		strcpy(comm, "<...>");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	utrace_seq_init(&s, line, sizeof(line) - 1);
	s.len = (unsigned int)utrace__trace_prefix(line, comm, strlen(comm),
						   (uint32_t)ent->pid,
						   cpu < 0 ? 0 : (uint32_t)cpu,
						   (uint64_t)ts.tv_sec * 1000000000 +
						   (uint64_t)ts.tv_nsec, true);
	utrace_seq_printf(&s, "%s: ", ev->name);
	ev->output(&s, rec);
	line[s.len++] = '\n';
	n = write_line(__atomic_load_n(&utrace__print_fd, __ATOMIC_ACQUIRE), line,
		       s.len);
	if (n < 0 && !__atomic_exchange_n(&print_broken, 1, __ATOMIC_RELAXED)) {
		char msg[256];
		int len = snprintf(msg, sizeof(msg),
				   "utrace: cannot write to '%s': %s; event printing stopped\n",
				   utrace__print_path, strerror(errno));

		if (utrace__print_fd != 2 && len > 0)
			(void)!write(2, msg, (size_t)len);
	}
}

void (*utrace__record_hook)(const struct utrace_event *ev, const void *rec,
			    unsigned int size);

void utrace__commit_observe(struct utrace_tp_reserve *r)
{
	int fd = __atomic_load_n(&utrace__print_fd, __ATOMIC_RELAXED);
	void (*hook)(const struct utrace_event *, const void *, unsigned int) =
		__atomic_load_n(&utrace__record_hook, __ATOMIC_ACQUIRE);

	if (hook)
		hook(r->event, r->rec, r->size);
	if (fd >= 0 && !__atomic_load_n(&print_broken, __ATOMIC_RELAXED))
		print_record(r->event, r->rec);
}
