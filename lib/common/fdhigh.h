/* SPDX-License-Identifier: MIT */
/*
 * Descriptors that libutrace keeps open in a traced program (the agent's
 * socket and pipes, a pool's memfd, the recorder's socket, the
 * UTRACE_PRINT file, /proc/self/mem) live at UTRACE_FD_HIGH or above, so
 * that the program's own descriptors get the numbers they get without
 * utrace: a preloaded cat opens its file as 3, not 12.
 *
 * Why 1000, and not the top of the soft RLIMIT_NOFILE: 1000 is above the
 * numbers programs pick for themselves (a shell's 10 and up, bash's 255)
 * and below FD_SETSIZE and the usual soft limit (1024), so the kernel's
 * descriptor table grows no further than for a program with 1024 files.
 * Where the soft limit is raised (1048576 in many containers), a
 * descriptor near it would make the kernel allocate a table of that many
 * slots, 8 MiB, in every traced process.  Below a soft limit of 1024 the
 * descriptors go to its upper half.  When nothing there is free (or the
 * limit forbids it), a descriptor stays where it was: correct, only
 * visible.
 */
#ifndef UTRACE_COMMON_FDHIGH_H
#define UTRACE_COMMON_FDHIGH_H

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#define UTRACE_FD_HIGH 1000

/*
 * utrace__fd_high - move a descriptor of ours out of the program's range
 * @fd: the descriptor (close-on-exec or not); negative values pass through
 *
 * Return: the new descriptor, close-on-exec, @fd being closed; or @fd
 * itself when it is high already or cannot be moved.
 */
static inline int utrace__fd_high(int fd)
{
	struct rlimit rl;
	long base = UTRACE_FD_HIGH;
	int nfd;

	if (fd < 0 || fd >= UTRACE_FD_HIGH)
		return fd;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < 1024)
		base = (long)rl.rlim_cur / 2;
	if (fd >= base)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, base);
	if (nfd < 0)
		return fd;
	close(fd);
	return nfd;
}

#endif /* UTRACE_COMMON_FDHIGH_H */
