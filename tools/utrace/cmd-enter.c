/* SPDX-License-Identifier: MIT */
/*
 * utrace enter -p PID [--] [COMMAND [ARG...]]: run COMMAND where the
 * kernel's tracing directories show PID's tree, so that tools written for
 * the kernel's tracefs (trace-cmd through libtracefs, the kernel's
 * ftracetest, scripts that echo into /sys/kernel/tracing) work on a
 * program unchanged.
 *
 * COMMAND runs in a mount namespace of its own (and a user namespace, in
 * which the caller is root, when the caller is not root): the utrace mount
 * (cmd-mount.c) is mounted in a private directory there, and PID's
 * directory of it is bound over every tracefs mount point the namespace
 * has (/sys/kernel/tracing, /sys/kernel/debug/tracing), since libtracefs
 * finds the tracing directory by the first "tracefs" line of /proc/mounts.
 * trace-cmd's start, record and stream (without -d) write 1 to
 * /proc/sys/kernel/ftrace_enabled: a private copy of it is bound over it
 * there (ftrace_enabled_bind()).  Nothing changes outside: the namespace
 * ends with COMMAND.
 *
 * Two more files of /proc that trace-cmd reads and writes while it records
 * are copies there (bind_copy()): /proc/kallsyms, which trace-cmd up to
 * 3.1 reads twice, for its size and then its text, and gives up when the
 * two differ ("error in size of file '/proc/kallsyms'"): it changes
 * whenever a BPF program is loaded or freed anywhere on the machine (a
 * loaded one: t0031 failed at load 15-30; trace-cmd's "libtracecmd:
 * Support changing /proc/kallsyms", 2025, is the upstream fix); and
 * /proc/sys/kernel/kptr_restrict, which trace-cmd sets to 0 while it
 * copies kallsyms and then back, a change of the whole machine that two
 * trace-cmds at once could leave behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "ctl-client.h"

#define MAX_POINTS 16

static const char usage_text[] =
	"usage: utrace enter -p PID [--] [COMMAND [ARG...]]\n"
	"\n"
	"Run COMMAND (default: $SHELL) in a private mount namespace in which\n"
	"/sys/kernel/tracing (and /sys/kernel/debug/tracing) show the tracefs\n"
	"files of process PID, as utrace mount does: trace-cmd and other tools\n"
	"of the kernel's tracefs then work on PID unchanged. Exits with\n"
	"COMMAND's status.\n"
	"\n"
	"  -p, --pid PID       the traced process\n"
	"  -h, --help          show this help\n";

/* Write 'text' to the file 'path' (/proc/self/uid_map and the like). */
static int put_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	e = n < 0 ? -errno : 0;
	close(fd);
	return e;
}

/* A user namespace in which we are root (to mount), with our own ids
 * mapped to 0. */
static int user_namespace(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int e;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	e = put_file("/proc/self/setgroups", "deny");
	if (e < 0 && e != -ENOENT)
		return e;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	if ((e = put_file("/proc/self/uid_map", map)) < 0)
		return e;
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
	return put_file("/proc/self/gid_map", map);
}

/* The mount points of the filesystems of type 'type', as /proc/self/mounts
 * lists them (octal escapes undone); returns how many. */
static int mount_points(const char *type, char pts[][PATH_MAX], int max)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char line[2 * PATH_MAX], dir[PATH_MAX], ty[100];
	int n = 0, i;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *s, *d;

		if (sscanf(line, "%*s %4095s %99s", dir, ty) != 2 || strcmp(ty, type))
			continue;
		for (s = d = dir; *s; ) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
				*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
				s += 4;
			} else {
				*d++ = *s++;
			}
		}
		*d = 0;
		for (i = 0; i < n && strcmp(pts[i], dir); i++)
			;
		if (i == n)
			strcpy(pts[n++], dir);
	}
	fclose(f);
	return n;
}

#define FTRACE_ENABLED "/proc/sys/kernel/ftrace_enabled"
#define KALLSYMS "/proc/kallsyms"
#define KPTR_RESTRICT "/proc/sys/kernel/kptr_restrict"

/*
 * Bind a file of our own over the /proc file 'path' in this namespace: a
 * copy of what it holds now ('fallback' when it cannot be read; with
 * none, nothing is bound then), mode 'mode'.  The command reads and writes
 * that one.  The file is unlinked at once (the bind keeps it while the
 * namespace lives; a memfd could not be bound: it is on no mount of the
 * namespace).  False when nothing was bound.
 */
static bool bind_copy(const char *path, mode_t mode, const char *fallback)
{
	char tmp[] = "/tmp/utrace-enter-proc.XXXXXX", buf[65536];
	int in = open(path, O_RDONLY | O_CLOEXEC), out;
	ssize_t n = 0;
	size_t got = 0;
	bool ok = true;

	if (in < 0 && !fallback)
		return false;
	out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0) {
		if (in >= 0)
			close(in);
		return false;
	}
	while (in >= 0 && ok && (n = read(in, buf, sizeof(buf))) > 0) {
		ok = write(out, buf, (size_t)n) == n;
		got += (size_t)n;
	}
	if (in >= 0)
		close(in);
	if (ok && (in < 0 || n < 0 || !got)) {
		/* unreadable: the fallback, else nothing */
		ok = fallback && ftruncate(out, 0) == 0 && lseek(out, 0, SEEK_SET) == 0 &&
		     write(out, fallback, strlen(fallback)) == (ssize_t)strlen(fallback);
	}
	ok = ok && fchmod(out, mode) == 0;
	close(out);
	ok = ok && mount(tmp, path, NULL, MS_BIND, NULL) == 0;
	unlink(tmp);
	return ok;
}

/*
 * trace-cmd start, record and stream write 1 to the kernel's
 * ftrace_enabled sysctl unless given -d (set_ftrace_proc(), which dies
 * when it cannot): read-only to a user namespace's root, and global to a
 * real one, where it would switch the function tracer of the whole
 * machine.  A copy with its value is bound over it in the namespace: the
 * command writes that one.  A kernel without the sysctl has none to cover
 * (trace-cmd passes it by); returns false when the bind failed.
 */
static bool ftrace_enabled_bind(void)
{
	if (access(FTRACE_ENABLED, F_OK) < 0)
		return true;
	return bind_copy(FTRACE_ENABLED, 0644, "1\n");
}

/* Run argv and wait; returns its wait status, or -errno. */
static int run(char *const argv[], bool path_search)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		if (path_search)
			execvp(argv[0], argv);
		else
			execv(argv[0], argv);
		fprintf(stderr, "utrace enter: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return st;
}

/* The utrace mount at 'dir', started by this very program. */
static int start_mount(const char *dir)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char me[24];
	/* the mount ends with this process, even when it is killed: in this
	 * mount namespace nothing else would unmount it; root's shows the
	 * process wherever it listens (utrace__ctl_open() found it so) */
	char *argv[] = { self, "mount", "--exit-with", me, (char *)dir, NULL, NULL };
	int st;

	if (geteuid() == 0) {
		argv[5] = argv[4];
		argv[4] = "--all-users";
	}

	snprintf(me, sizeof(me), "%d", (int)getpid());
	if (n < 0)
		return -errno;
	self[n] = 0;
	st = run(argv, false);
	if (st < 0)
		return st;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* Wait (up to 10 s) for 'path' to appear: the mount lists a process once
 * its agent answers. */
static bool appears(const char *path)
{
	struct timespec d = { 0, 20000000 };
	struct stat st;
	int i;

	for (i = 0; i < 500; i++) {
		if (stat(path, &st) == 0)
			return true;
		nanosleep(&d, NULL);
	}
	return false;
}

int cmd_enter(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char pts[MAX_POINTS][PATH_MAX], dir[] = "/tmp/utrace-enter.XXXXXX", tree[PATH_MAX + 32];
	char err[256], *shell_argv[2], **cmd;
	struct utrace__ctl *c;
	bool root = geteuid() == 0;
	pid_t pid = 0;
	int opt, e, i, n, nd, st, ret = 1;

	while ((opt = getopt_long(argc, argv, "+p:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (!parse_pid(optarg, &pid)) {
				fprintf(stderr, "utrace enter: '%s' is not a process id\n", optarg);
				return 129;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 129;
		}
	}
	if (!pid) {
		fprintf(stderr, "utrace enter: no process given (-p PID)\n%s", usage_text);
		return 129;
	}
	if (optind < argc) {
		cmd = argv + optind;
	} else {
		shell_argv[0] = getenv("SHELL") && *getenv("SHELL") ? getenv("SHELL") : "/bin/sh";
		shell_argv[1] = NULL;
		cmd = shell_argv;
	}
	/* Said now, in the caller's words, rather than as an empty tree. */
	if (utrace__ctl_open(pid, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "utrace enter: %s\n", err);
		return 1;
	}
	utrace__ctl_close(c);

	e = root ? (unshare(CLONE_NEWNS) < 0 ? -errno : 0) : user_namespace();
	if (e < 0) {
		fprintf(stderr, "utrace enter: cannot make a private %s namespace: %s%s\n",
			root ? "mount" : "user and mount", strerror(-e),
			root ? "" : " (unprivileged user namespaces may be off: "
			"sysctl kernel.unprivileged_userns_clone)");
		return 1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "utrace enter: cannot make the mounts private: %s\n",
			strerror(errno));
		return 1;
	}
	/* libtracefs takes the first tracefs of /proc/mounts: every one is
	 * covered, and there must be one. */
	n = mount_points("tracefs", pts, MAX_POINTS);
	if (!n && root) {
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
			n = mount_points("tracefs", pts, MAX_POINTS);
	}
	if (!n) {
		fprintf(stderr, "utrace enter: no tracefs is mounted on this machine, and only "
			"root can mount one; libtracefs (trace-cmd) finds the tracing directory "
			"through it: ask root to run 'mount -t tracefs nodev /sys/kernel/tracing'\n");
		return 1;
	}
	/* and debugfs's tracing/ (an automount of tracefs) */
	nd = mount_points("debugfs", pts + n, MAX_POINTS - n);
	for (i = n; i < n + nd; i++) {
		struct stat sb;

		if (strlen(pts[i]) + 9 < PATH_MAX)
			strcat(pts[i], "/tracing");
		if (stat(pts[i], &sb) < 0 || !S_ISDIR(sb.st_mode))
			pts[i][0] = 0;
	}
	n += nd;
	if (!mkdtemp(dir)) {
		fprintf(stderr, "utrace enter: cannot make a directory in /tmp: %s\n",
			strerror(errno));
		return 1;
	}
	if (start_mount(dir) < 0) {
		fprintf(stderr, "utrace enter: the utrace mount did not start (see above)\n");
		rmdir(dir);
		return 1;
	}
	snprintf(tree, sizeof(tree), "%s/%d", dir, (int)pid);
	if (!appears(tree)) {
		fprintf(stderr, "utrace enter: process %d does not appear in the utrace mount\n",
			(int)pid);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (!pts[i][0])
			continue;
		if (mount(tree, pts[i], NULL, MS_BIND, NULL) < 0) {
			fprintf(stderr, "utrace enter: cannot bind process %d's tree on %s: %s\n",
				(int)pid, pts[i], strerror(errno));
			goto out;
		}
	}
	/* (best effort: where a user namespace refuses the mounts, the
	 * command sees the real files) */
	bind_copy(KALLSYMS, 0600, NULL);
	bind_copy(KPTR_RESTRICT, 0644, NULL);
	if (!ftrace_enabled_bind())
		fprintf(stderr, "utrace enter: cannot give the command a %s of its own (%s): "
			"trace-cmd start, record and stream need -d\n", FTRACE_ENABLED,
			strerror(errno));
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	st = run(cmd, true);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (st < 0)
		fprintf(stderr, "utrace enter: cannot run '%s': %s\n", cmd[0], strerror(-st));
	else
		ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	umount2(FTRACE_ENABLED, MNT_DETACH);
	umount2(KALLSYMS, MNT_DETACH);
	umount2(KPTR_RESTRICT, MNT_DETACH);
out:
	for (i = n - 1; i >= 0; i--)
		if (pts[i][0])
			umount2(pts[i], MNT_DETACH);
	/* The mount's server ends when its directory is unmounted. */
	if (umount2(dir, 0) < 0)
		umount2(dir, MNT_DETACH);
	rmdir(dir);
	return ret;
}
