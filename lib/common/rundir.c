/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory (rundir.h).  It holds the agents' control sockets
 * and the recorders' sockets: whoever can write into it can replace a
 * socket and be handed a process's event memory, so a directory that
 * someone else could have made or can write into is refused, never used.
 *
 * The checks are made on the opened directory (fstat of an O_NOFOLLOW |
 * O_DIRECTORY descriptor), not on a path looked at twice: a symbolic link
 * put in its place fails the open, and what fstat sees is what was opened.
 * Once the directory is ours and 0700 nobody else can add, rename or
 * remove the sockets in it; the sticky /tmp keeps others from renaming
 * the directory itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir.h"

bool utrace__secure(void)
{
	static int secure = -1;

	if (__atomic_load_n(&secure, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(&secure, getauxval(AT_SECURE) != 0, __ATOMIC_RELAXED);
	return __atomic_load_n(&secure, __ATOMIC_RELAXED);
}

const char *utrace__getenv(const char *name)
{
	return utrace__secure() ? NULL : getenv(name);
}

void utrace__setmsg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/*
 * Open 'dir' without following a link and check what was opened: a
 * directory of 'uid', mode 0700.  'what' names it in the message.
 */
static int check_dir(const char *what, const char *dir, uid_t uid, char *err,
		     size_t errlen)
{
	struct stat st;
	int fd, e;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if ((e == ELOOP || e == ENOTDIR) && lstat(dir, &st) == 0 &&
		    S_ISLNK(st.st_mode)) {
			utrace__setmsg(err, errlen, "%s %s is a symbolic link: refusing it", what, dir);
			return -EPERM;
		}
		if (e == ENOTDIR) {
			utrace__setmsg(err, errlen, "%s %s is not a directory: refusing it", what, dir);
			return -EPERM;
		}
		utrace__setmsg(err, errlen, "cannot open the %s %s: %s", what, dir, strerror(e));
		return -e;
	}
	e = fstat(fd, &st) < 0 ? errno : 0;
	close(fd);
	if (e) {
		utrace__setmsg(err, errlen, "cannot open the %s %s: %s", what, dir, strerror(e));
		return -e;
	}
	if (st.st_uid != uid) {
		utrace__setmsg(err, errlen, "%s %s is owned by uid %u, not %u: refusing it", what, dir,
		       (unsigned int)st.st_uid, (unsigned int)uid);
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700) {
		utrace__setmsg(err, errlen, "%s %s has mode %04o, not 0700: refusing it", what, dir,
		       (unsigned int)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int utrace__rundir_check(const char *dir, uid_t uid, char *err, size_t errlen)
{
	return check_dir("runtime directory", dir, uid, err, errlen);
}

static char rundir_given[256];

void utrace__rundir_set(const char *dir)
{
	snprintf(rundir_given, sizeof(rundir_given), "%s", dir && !utrace__secure() ? dir : "");
}

int utrace__rundir(char *buf, size_t len, bool create, char *err, size_t errlen)
{
	const char *v = rundir_given[0] ? rundir_given : utrace__getenv("UTRACE_RUNTIME_DIR");
	uid_t uid = geteuid();
	int n, r;

	if (v && *v) {
		n = snprintf(buf, len, "%s", v);
	} else if ((v = utrace__getenv("XDG_RUNTIME_DIR")) && *v) {
		n = snprintf(buf, len, "%s/utrace", v);
		if (n >= 0 && (size_t)n < len) {
			/* The XDG directory must be ours too (the XDG spec:
			 * owned by the user, 0700): else whoever owns it
			 * could swap our directory inside it. */
			r = check_dir("XDG_RUNTIME_DIR", v, uid, err, errlen);
			if (r < 0)
				return r;
		}
	} else {
		/* A set-user-ID program's directory is its effective user's:
		 * made in the real user's name, it would lock that user out
		 * of their own. */
		n = snprintf(buf, len, "/tmp/utrace-%u",
			     (unsigned int)(utrace__secure() ? uid : getuid()));
	}
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = 0;
		utrace__setmsg(err, errlen, "the runtime directory's path is too long");
		return -ENAMETOOLONG;
	}
	if (create) {
		/* umask may have taken bits away: 0700 exactly, as made */
		if (mkdir(buf, 0700) == 0) {
			if (chmod(buf, 0700) < 0) {
				r = errno;
				utrace__setmsg(err, errlen, "cannot make the runtime directory %s: %s",
				       buf, strerror(r));
				return -r;
			}
		} else if (errno != EEXIST) {
			r = errno;
			utrace__setmsg(err, errlen, "cannot make the runtime directory %s: %s", buf,
			       strerror(r));
			return -r;
		}
	}
	r = check_dir("runtime directory", buf, uid, err, errlen);
	if (r == -ENOENT && !create)
		utrace__setmsg(err, errlen, "no runtime directory %s", buf);
	return r;
}

int utrace__peer_check(int fd, pid_t *pid, uid_t *uid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	if (pid)
		*pid = cr.pid;
	if (uid)
		*uid = cr.uid;
	/* The effective uid only: a set-uid program's real user is not
	 * the owner of its memory.  A secure program (set-user-ID or
	 * set-group-ID: more rights than its caller) answers root only. */
	if (utrace__secure())
		return cr.uid == 0 ? 0 : -EPERM;
	return cr.uid == 0 || cr.uid == geteuid() ? 0 : -EPERM;
}
