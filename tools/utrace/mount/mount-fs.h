/* SPDX-License-Identifier: MIT */
/* utrace mount: the FUSE operations (mount-fs.c), for cmd-mount.c. */
#ifndef UTRACE_TOOL_MOUNT_FS_H
#define UTRACE_TOOL_MOUNT_FS_H

#include <stddef.h>

struct fuse_lowlevel_ops;
struct fuse_session;

const struct fuse_lowlevel_ops *mount_fs_ops(size_t *size);
/* The processes shown: utrace__ctl_list()'s flags (--all-users). */
void mount_fs_set_list_flags(unsigned int flags);
/* Start the trace_pipe poller (after daemonizing: it is a thread). */
int mount_fs_start(struct fuse_session *se);
/* Stop it, answering the readers still waiting. */
void mount_fs_stop(void);

#endif /* UTRACE_TOOL_MOUNT_FS_H */
