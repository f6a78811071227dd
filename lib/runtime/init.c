/* SPDX-License-Identifier: MIT */
/*
 * Start-up: read the environment once, before main() where possible (the
 * library constructor) and at the latest when the first events register.
 *
 *   UTRACE_EVENTS   events on at start, set_event syntax, ',' or ' ' apart
 *   UTRACE_PRINT    "stderr", "stdout" or a file path: print each event
 *                   as a line
 *
 * Nothing here may stop the program: a bad value gives one line on stderr
 * and the program runs on without that setting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "agent.h"
#include "event.h"
#include "record.h"
#include "tp.h"
#include "clock.h"

int utrace__print_fd = -1;
const char *utrace__print_path = "";

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_once_t print_once = PTHREAD_ONCE_INIT;
static char *print_dest;

void utrace__warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	memcpy(buf, "utrace: ", 8);
	va_start(ap, fmt);
	n = vsnprintf(buf + 8, sizeof(buf) - 9, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += 8;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(2, buf, (size_t)n);
}

static void before_fork(void)
{
	utrace__agent_before_fork();
	utrace__registry_lock();
	utrace__tp_before_fork();
}

static void after_fork_parent(void)
{
	utrace__agent_after_fork_parent();
	utrace__tp_after_fork(0);
	utrace__registry_unlock();
}

static void after_fork_child(void)
{
	utrace__tp_after_fork(1);
	utrace__registry_unlock();
	utrace__thread_after_fork();
	utrace__record_after_fork_child();
	utrace__agent_after_fork_child();
}

/* An object's events have registered: controllable from now on; and
 * events that UTRACE_EVENTS switched on get a buffer that `utrace show`
 * can read. */
static void module_added(void)
{
	if (utrace__agent_start() && utrace__registry_any_enabled())
		utrace__pool_ensure();
}

/* The registry tells the control layer about new events through these,
 * rather than calling up into it. */
static const struct utrace__registry_ops registry_ops = {
	.event_added = utrace__record_send_format,
	.module_added = module_added,
};

static void init_once_fn(void)
{
	const char *v;

	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	utrace__registry_set_ops(&registry_ops);

	v = getenv("UTRACE_PRINT");
	if (v && *v)
		print_dest = strdup(v);
	v = getenv("UTRACE_EVENTS");
	if (v && *v)
		utrace__events_spec_set(v);
	utrace__clock_init();
	utrace__record_init();
}

void utrace__init(void)
{
	pthread_once(&init_once, init_once_fn);
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
	return fd;
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

__attribute__((constructor)) static void utrace_ctor(void)
{
	utrace__init();
}

/* A program whose executable has no events never triggers the report of
 * UTRACE_EVENTS entries that matched nothing; give it at exit. */
__attribute__((destructor)) static void utrace_dtor(void)
{
	utrace__events_spec_report();
}

const char *utrace_version(void)
{
	return utrace__stringify(UTRACE_VERSION_MAJOR) "."
	       utrace__stringify(UTRACE_VERSION_MINOR) "."
	       utrace__stringify(UTRACE_VERSION_PATCH);
}

const char *utrace_strerror(int err)
{
	switch (err) {
#define UTRACE__ERR_CASE(name, code, msg) case code: return msg;
	UTRACE_ERRNO_MAP(UTRACE__ERR_CASE)
#undef UTRACE__ERR_CASE
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}
