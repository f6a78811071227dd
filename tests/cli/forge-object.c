/* SPDX-License-Identifier: MIT */
/*
 * A hostile traced program (t0053): started by root's `utrace record`, it
 * fires an event that prints a function (so the recorder wants symbols),
 * drops to another user, then writes OBJECT messages of its own on the
 * recorder's socket that name a file only root may read, with and without
 * a descriptor of a file it may read.
 *
 *   forge-object UID PATH
 */
#include <dirent.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto.h"

#define CREATE_TRACE_POINTS
#include "pfmt-events.h"

/* The recorder's socket among ours: a SEQPACKET socket whose peer is
 * "record-PID.sock". */
static int recorder_socket(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -1;

	while (d && (de = readdir(d))) {
		struct sockaddr_un sa;
		socklen_t len = sizeof(sa);
		int fd = atoi(de->d_name), type = 0;
		socklen_t tl = sizeof(type);

		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET)
			continue;
		memset(&sa, 0, sizeof(sa));
		if (getpeername(fd, (struct sockaddr *)&sa, &len) == 0 &&
		    strstr(sa.sun_path, "/record-")) {
			found = fd;
			break;
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void send_object(int s, const char *path, int pass)
{
	struct utrace_msg_object h = { UTRACE_MSG_OBJECT, 0, 0x1000 };
	char buf[sizeof(h) + 4096], cbuf[CMSG_SPACE(sizeof(int))];
	size_t pl = strlen(path) + 1;
	struct iovec iov = { buf, sizeof(h) + pl };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), path, pl);
	if (pass >= 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass, sizeof(int));
	}
	if (sendmsg(s, &mh, MSG_NOSIGNAL) < 0)
		perror("forge-object: sendmsg");
}

int main(int argc, char **argv)
{
	uid_t uid;
	int s;

	if (argc != 3) {
		fprintf(stderr, "usage: forge-object UID PATH\n");
		return 2;
	}
	uid = (uid_t)atoi(argv[1]);
	trace_pfmt_sym((void *)main, (void *)main);
	s = recorder_socket();
	if (s < 0) {
		fprintf(stderr, "forge-object: no recorder socket\n");
		return 1;
	}
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		perror("forge-object: setresuid");
		return 1;
	}
	/* the name alone, then the name with a file we may read (ourselves) */
	send_object(s, argv[2], -1);
	send_object(s, argv[2], STDIN_FILENO);
	trace_pfmt_sym((void *)main, (void *)main);
	return 0;
}
