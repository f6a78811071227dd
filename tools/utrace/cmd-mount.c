/* SPDX-License-Identifier: MIT */
/*
 * utrace mount: a FUSE filesystem with, for every traceable process of
 * the caller, the files of a tracefs instance (DIR/<pid>/, and
 * DIR/<comm>-<pid> linking to it).  See docs/utrace-mount.1; the files
 * are in mount-files.c, the FUSE side in mount-fs.c.
 *
 * Like sshfs, it detaches once the filesystem is mounted, so that when
 * `utrace mount DIR` returns 0 the tree can be used at once; -f keeps it
 * in the foreground.  It ends, unmounting, on SIGINT, SIGTERM or SIGHUP,
 * or when DIR is unmounted (fusermount3 -u DIR, utrace mount -u DIR),
 * or, with --exit-with PID, when process PID ends (utrace enter's mount
 * must not outlive a killed enter: nothing else would unmount it); DIR
 * is then removed if it is empty.
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "cmds.h"
#include "ctl-client.h"
#include "mount-fs.h"

#define MAX_THREADS 32

struct mount_opts {
	const char *dir;
	bool foreground, debug, unmount, lazy;
	char *fuse_opts;         /* the -o options, ',' apart */
	pid_t exit_with;         /* --exit-with: end when it ends (0: none) */
	bool all_users;          /* --all-users: every user's processes (root) */
};

static const char usage_text[] =
	"usage: utrace mount [-f] [-d] [-o OPTIONS] [--exit-with PID] [--all-users] DIR\n"
	"   or: utrace mount -u [-z] DIR\n"
	"\n"
	"Mount at DIR a filesystem showing, for each traceable process of the\n"
	"runtime directory ($UTRACE_RUNTIME_DIR, else $XDG_RUNTIME_DIR/utrace,\n"
	"else /tmp/utrace-UID),\n"
	"the files of a tracefs instance: DIR/<pid>/ with available_events,\n"
	"set_event, tracing_on, buffer_size_kb, buffer_total_size_kb, trace,\n"
	"trace_pipe, error_log and events/, and DIR/<comm>-<pid> linking to it.\n"
	"The command returns once DIR is mounted; the filesystem runs on until\n"
	"DIR is unmounted or it gets SIGINT, SIGTERM or SIGHUP.\n"
	"\n"
	"  -f, --foreground    do not detach; run until unmounted or interrupted\n"
	"  -d, --debug         print every FUSE request (implies -f)\n"
	"  -o OPTIONS          FUSE mount options, ',' apart (allow_other, ...)\n"
	"      --exit-with PID end, unmounting DIR, when process PID ends\n"
	"      --all-users     for root: every user's processes\n"
	"  -u, --unmount       unmount DIR (as fusermount3 -u DIR)\n"
	"  -z, --lazy          with -u: detach DIR even while it is busy\n"
	"  -h, --help          show this help\n";

static void mount_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	const char *s = buf;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (level == FUSE_LOG_DEBUG) {
		fputs(buf, stderr);
		return;
	}
	if (!strncmp(s, "fuse: ", 6))
		s += 6;
	fprintf(stderr, "utrace mount: %s", s);
	if (!*s || s[strlen(s) - 1] != '\n')
		fputc('\n', stderr);
}

static int add_opt(char **opts, const char *o)
{
	size_t len = *opts ? strlen(*opts) : 0;
	char *p = realloc(*opts, len + strlen(o) + 2);

	if (!p)
		return -1;
	if (len)
		p[len++] = ',';
	strcpy(p + len, o);
	*opts = p;
	return 0;
}

static int parse_opts(int argc, char **argv, struct mount_opts *o)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'd' },
		{ "unmount", no_argument, NULL, 'u' },
		{ "lazy", no_argument, NULL, 'z' },
		{ "exit-with", required_argument, NULL, 'E' },
		{ "all-users", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+fdo:uzh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->foreground = true;
			break;
		case 'd':
			o->debug = o->foreground = true;
			break;
		case 'o':
			if (add_opt(&o->fuse_opts, optarg) < 0) {
				fprintf(stderr, "utrace mount: out of memory\n");
				return 1;
			}
			break;
		case 'u':
			o->unmount = true;
			break;
		case 'z':
			o->lazy = true;
			break;
		case 'U':
			if (geteuid() != 0) {
				fprintf(stderr, "utrace mount: --all-users: only root may see "
					"other users' processes\n");
				return 1;
			}
			o->all_users = true;
			break;
		case 'E':
			if (!parse_pid(optarg, &o->exit_with)) {
				fprintf(stderr, "utrace mount: --exit-with: '%s' is not a process id\n",
					optarg);
				return 129;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			if (optopt == 'E')
				fprintf(stderr, "utrace mount: option '--exit-with' needs a process id\n");
			else if (optopt && strchr("o", optopt))
				fprintf(stderr, "utrace mount: option '-%c' needs a value\n", optopt);
			else if (optopt)
				fprintf(stderr, "utrace mount: unknown option '-%c'\n", optopt);
			else
				fprintf(stderr, "utrace mount: unknown option '%s'\n",
					argv[optind - 1]);
			fputs(usage_text, stderr);
			return 129;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, optind == argc ? "utrace mount: no directory given\n"
			: "utrace mount: one directory only\n");
		fputs(usage_text, stderr);
		return 129;
	}
	if (o->lazy && !o->unmount) {
		fprintf(stderr, "utrace mount: -z goes with -u\n");
		return 129;
	}
	o->dir = argv[optind];
	return -1;
}

/* DIR as /proc/self/mountinfo writes it: absolute, octal escapes. */
static bool is_fuse_mount(const char *dir)
{
	char path[PATH_MAX], esc[4 * PATH_MAX], line[8192];
	const char *s;
	char *e = esc;
	bool found = false;
	FILE *f;

	if (!realpath(dir, path)) {
		/* a mount whose server died cannot be stat()ed: name it as given */
		if (dir[0] == '/')
			snprintf(path, sizeof(path), "%s", dir);
		else if (!getcwd(path, sizeof(path)) ||
			 strlen(path) + strlen(dir) + 2 > sizeof(path))
			return false;
		else
			strcat(strcat(path, "/"), dir);
	}
	for (s = path; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			e += sprintf(e, "\\%03o", (unsigned char)*s);
		else
			*e++ = *s;
	}
	*e = '\0';
	f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char mnt[sizeof(line)], *sep;

		/* id parent maj:min root mountpoint options ... - fstype ... */
		if (sscanf(line, "%*s %*s %*s %*s %s", mnt) != 1 || strcmp(mnt, esc))
			continue;
		sep = strstr(line, " - ");
		if (sep && !strncmp(sep + 3, "fuse", 4))
			found = true;
	}
	fclose(f);
	return found;
}

static int do_unmount(const struct mount_opts *o)
{
	pid_t pid;
	int status;

	if (!is_fuse_mount(o->dir)) {
		fprintf(stderr, "utrace mount: '%s' is not a mounted FUSE filesystem\n", o->dir);
		return 1;
	}
	if (geteuid() == 0) {
		if (umount2(o->dir, o->lazy ? MNT_DETACH : 0) < 0) {
			fprintf(stderr, "utrace mount: cannot unmount '%s': %s\n", o->dir,
				strerror(errno));
			return 1;
		}
		return 0;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "utrace mount: cannot run fusermount3: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		if (o->lazy)
			execlp("fusermount3", "fusermount3", "-u", "-z", "--", o->dir, (char *)NULL);
		else
			execlp("fusermount3", "fusermount3", "-u", "--", o->dir, (char *)NULL);
		fprintf(stderr, "utrace mount: cannot run fusermount3: %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/*
 * --exit-with: a thread that waits on a pidfd of the process and, when it
 * ends, sends this process SIGTERM; the loop's thread (the only one not
 * blocking it) then leaves the loop and unmounts, as on a user's SIGTERM.
 */
static volatile sig_atomic_t watched_ended;

static void *watch_main(void *arg)
{
	struct pollfd p = { .fd = (int)(intptr_t)arg, .events = POLLIN };

	while (poll(&p, 1, -1) < 0 && errno == EINTR)
		;
	watched_ended = 1;
	kill(getpid(), SIGTERM);
	return NULL;
}

/* Open the pidfd now (before fuse_daemonize: an error is still seen). */
static int watch_open(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd < 0)
		fprintf(stderr, "utrace mount: --exit-with %d: %s\n", (int)pid,
			errno == ESRCH ? "no such process" : strerror(errno));
	return fd;
}

static int watch_start(int fd)
{
	sigset_t all, old;
	pthread_t t;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&t, NULL, watch_main, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pthread_detach(t);
	return 0;
}

static int do_mount(const struct mount_opts *o)
{
	char *argv[8];
	char *opts = NULL;
	struct fuse_args args;
	struct fuse_session *se;
	struct fuse_loop_config *cfg;
	const struct fuse_lowlevel_ops *ops;
	size_t ops_size;
	struct stat st;
	int argc = 0, ret = 1, wfd = -1;

	if (stat(o->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "utrace mount: cannot mount on '%s': %s\n", o->dir,
			stat(o->dir, &st) < 0 ? strerror(errno) : "Not a directory");
		return 1;
	}
	if (access("/dev/fuse", R_OK | W_OK) < 0) {
		fprintf(stderr, "utrace mount: cannot use '/dev/fuse': %s\n", strerror(errno));
		return 1;
	}
	if (add_opt(&opts, "fsname=utrace,subtype=utrace,default_permissions") < 0 ||
	    (o->fuse_opts && add_opt(&opts, o->fuse_opts) < 0)) {
		free(opts);
		fprintf(stderr, "utrace mount: out of memory\n");
		return 1;
	}
	argv[argc++] = "utrace-mount";
	argv[argc++] = "-o";
	argv[argc++] = opts;
	if (o->debug)
		argv[argc++] = "-d";
	argv[argc] = NULL;
	args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);

	if (o->exit_with && (wfd = watch_open(o->exit_with)) < 0)
		goto out_args;
	fuse_set_log_func(mount_log);
	mount_fs_set_list_flags(o->all_users ? UTRACE__CTL_ALL_USERS : 0);
	ops = mount_fs_ops(&ops_size);
	se = fuse_session_new(&args, ops, ops_size, NULL);
	if (!se)
		goto out_args;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, o->dir) != 0)
		goto out_signals;
	if (fuse_daemonize(o->foreground) != 0)
		goto out_unmount;
	if (mount_fs_start(se) < 0 || (wfd >= 0 && watch_start(wfd) < 0)) {
		fprintf(stderr, "utrace mount: cannot start a thread\n");
		goto out_stop;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		fprintf(stderr, "utrace mount: out of memory\n");
		goto out_stop;
	}
	fuse_loop_cfg_set_max_threads(cfg, MAX_THREADS);
	ret = fuse_session_loop_mt(se, cfg) < 0 ? 1 : 0;
	fuse_loop_cfg_destroy(cfg);
out_stop:
	mount_fs_stop();
out_unmount:
	fuse_session_unmount(se);
	/* the mount point was the watched process's (utrace enter's mkdtemp
	 * directory), which it can no longer remove: do it when empty */
	if (watched_ended)
		rmdir(o->dir);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_args:
	if (wfd >= 0)
		close(wfd);
	fuse_opt_free_args(&args);
	free(opts);
	return ret;
}

int cmd_mount(int argc, char **argv)
{
	struct mount_opts o = { 0 };
	int ret = parse_opts(argc, argv, &o);

	if (ret < 0)
		ret = o.unmount ? do_unmount(&o) : do_mount(&o);
	free(o.fuse_opts);
	return ret;
}
