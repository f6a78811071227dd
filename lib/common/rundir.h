/* SPDX-License-Identifier: MIT */
/*
 * The runtime directory and who may talk to whom through it.  Every part
 * that makes or uses the directory (the agent, the control client, the
 * recorder) goes through utrace__rundir(); every end of a control or
 * record connection checks its peer with utrace__peer_check().
 */
#ifndef UTRACE_CONTROL_RUNDIR_H
#define UTRACE_CONTROL_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "compiler.h"

/*
 * utrace__rundir - find, check and optionally make the caller's runtime dir
 * @buf, @len:     receives the path: $UTRACE_RUNTIME_DIR, else
 *                 $XDG_RUNTIME_DIR/utrace, else /tmp/utrace-<uid> (in a
 *                 secure program /tmp/utrace-<euid>, whatever the
 *                 environment says: utrace__secure())
 * @create:        make it (mode 0700) when it does not exist
 * @err, @errlen:  a one-line message on failure (may be NULL), naming the
 *                 directory and what is wrong with it, without "utrace: "
 *
 * The directory is opened with O_NOFOLLOW | O_DIRECTORY and checked on the
 * open descriptor: it must not be a symbolic link, must belong to the
 * caller's effective uid and have mode 0700.  $XDG_RUNTIME_DIR itself is
 * checked the same way.  Returns 0, -ENOENT (missing and !create), -EPERM
 * (refused: someone else's, open to others, a link), or another -errno.
 */
int utrace__rundir(char *buf, size_t len, bool create, char *err, size_t errlen)
	UTRACE_HIDDEN;

/*
 * utrace__rundir_set - use 'dir' from now on, whatever the environment
 * says (a copy; NULL or "" goes back to the environment): a process that
 * `utrace attach` loaded libutrace into listens where the tool looks, not
 * where its own, older environment would say.  Not in a secure program.
 */
void utrace__rundir_set(const char *dir) UTRACE_HIDDEN;

/*
 * utrace__rundir_check - check a directory that should belong to 'uid'
 * (root looking at another user's runtime directory): the same checks as
 * utrace__rundir() without making it.  0 or -errno, with the message.
 */
int utrace__rundir_check(const char *dir, uid_t uid, char *err, size_t errlen)
	UTRACE_HIDDEN;

/*
 * utrace__peer_check - may the process at the other end of unix socket
 * 'fd' use us?  Only when its effective uid (SO_PEERCRED: the credentials
 * it had at connect() or listen()) is ours or root's; in a secure program
 * (utrace__secure()) root's only: the caller's user must not reach the
 * memory of a program that runs with more rights than it has.  Returns 0, or
 * -EPERM with the peer's pid and uid in *pid and *uid, or -errno.
 */
int utrace__peer_check(int fd, pid_t *pid, uid_t *uid) UTRACE_HIDDEN;

/*
 * utrace__secure - is this a set-user-ID or set-group-ID program (or one
 * with file capabilities): the kernel's AT_SECURE?  Such a program obeys
 * none of the caller's UTRACE_* variables nor the runtime directory's
 * (utrace__getenv() answers NULL), takes /tmp/utrace-<euid>, and serves
 * control connections of root only (utrace__peer_check()).
 */
bool utrace__secure(void) UTRACE_HIDDEN;

/*
 * utrace__getenv - getenv() for every variable utrace reads: NULL in a
 * secure program (utrace__secure()), whatever the environment holds.
 */
const char *utrace__getenv(const char *name) UTRACE_HIDDEN;

/* vsnprintf into an error buffer that may be NULL or empty (nothing then). */
void utrace__setmsg(char *buf, size_t len, const char *fmt, ...)
	UTRACE_HIDDEN __attribute__((format(printf, 3, 4)));

#endif /* UTRACE_CONTROL_RUNDIR_H */
