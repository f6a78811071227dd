/* SPDX-License-Identifier: MIT */
/*
 * utrace mount: the FUSE low-level operations.
 *
 * FUSE is not tracefs, and these are the places where it shows:
 *
 *  - Nothing is cached by the kernel: entry and attribute timeouts are 0,
 *    files are opened with direct_io and report size 0, so every lookup,
 *    stat, open and read comes here and is answered from the process as
 *    it is now.  Processes appear and disappear with their agents.
 *
 *  - Inodes.  The kernel names everything by a node id and keeps it until
 *    it sends FORGET.  A node is made at the first lookup of (parent,
 *    name), found again by later lookups, and freed when the kernel has
 *    forgotten every lookup of it.  Node ids are never reused.  A node
 *    stores what the path means (struct mnode): the process, with its
 *    start time so that a reused pid is not mistaken for the old process,
 *    and the event's system, name and id.
 *
 *  - O_TRUNC.  With FUSE_CAP_ATOMIC_O_TRUNC the kernel passes O_TRUNC in
 *    the open flags (set_event, trace and error_log clear there); without
 *    it, it sends a truncate to size 0 after the open, which does the same.
 *
 *  - trace_pipe blocks.  A read that finds nothing is not answered: the
 *    request is put on the waiters' list and the thread goes back to the
 *    loop, so a blocked reader holds no thread.  The poller thread looks
 *    at the waiters every POLL_MS: it answers a request when its pipe has
 *    text, or when the process has gone (end of file), or with EINTR when
 *    the kernel has sent an interrupt for it (the reader got a signal:
 *    `timeout 2 cat trace_pipe` ends at once).  poll() on trace_pipe is
 *    answered the same way, through the poll handle.
 *
 *  - splice() from trace_pipe_raw.  Kernels before "fuse: use
 *    copy_splice_read() for FOPEN_DIRECT_IO" splice a FUSE file through
 *    the page cache, up to i_size, which is 0 here: splice returned 0 and
 *    trace-cmd record got its events only at the end, with read().  So a
 *    poll() that finds pages (trace-cmd waits in select() before each
 *    splice) stores them into the kernel's cache of the file at the
 *    reader's offset (FUSE_NOTIFY_STORE, which also moves i_size to their
 *    end), where the splice finds them.  The pages stay in the pipe's
 *    buffer, "pushed", until a read shows where the reader is (its
 *    offset): what it spliced is dropped, what it did not is read again,
 *    so a read() after splices loses nothing.  A reader that only splices
 *    never says: past PUSH_MAX bytes pushed, the oldest are taken as read.
 *    read() is unchanged (direct_io: no cache).
 */
#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "ctl-client.h"
#include "hash.h"
#include "live.h"
#include "mount.h"
#include "mount-fs.h"

#define NHASH 1024
#define POLL_MS 50
#define UNKNOWN_INO 0xffffffffu

/* ---- the node table ---------------------------------------------------- */

struct node {
	struct node *ino_next, *name_next;
	fuse_ino_t ino, parent;
	char *name;
	uint64_t nlookup;
	struct mnode m;
};

static pthread_mutex_t nodes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *by_ino[NHASH], *by_name[NHASH];
static fuse_ino_t next_ino = FUSE_ROOT_ID + 1;

static struct {
	bool atomic_trunc;
	uid_t uid;
	gid_t gid;
	struct timespec mounted;
} fs;

static size_t hash_name(fuse_ino_t parent, const char *name)
{
	return (size_t)(utrace__hash_str(UTRACE_HASH_INIT ^ parent, name) % NHASH);
}

static void mnode_free(struct mnode *m)
{
	free(m->sys);
	free(m->ev);
	m->sys = m->ev = NULL;
}

static int mnode_copy(struct mnode *dst, const struct mnode *src)
{
	*dst = *src;
	dst->sys = src->sys ? strdup(src->sys) : NULL;
	dst->ev = src->ev ? strdup(src->ev) : NULL;
	if ((src->sys && !dst->sys) || (src->ev && !dst->ev)) {
		mnode_free(dst);
		return -ENOMEM;
	}
	return 0;
}

static struct node *find_ino(fuse_ino_t ino)
{
	struct node *n;

	for (n = by_ino[ino % NHASH]; n; n = n->ino_next)
		if (n->ino == ino)
			return n;
	return NULL;
}

static struct node *find_name(fuse_ino_t parent, const char *name)
{
	struct node *n;

	for (n = by_name[hash_name(parent, name)]; n; n = n->name_next)
		if (n->parent == parent && !strcmp(n->name, name))
			return n;
	return NULL;
}

/* What node 'ino' names, copied (mnode_free() it). */
static int node_get(fuse_ino_t ino, struct mnode *out)
{
	struct node *n;
	int err = -ENOENT;

	if (ino == FUSE_ROOT_ID) {
		memset(out, 0, sizeof(*out));
		out->kind = MK_ROOT;
		return 0;
	}
	pthread_mutex_lock(&nodes_lock);
	n = find_ino(ino);
	if (n)
		err = mnode_copy(out, &n->m);
	pthread_mutex_unlock(&nodes_lock);
	return err;
}

/* A lookup of (parent, name) found 'm': one more reference to its node. */
static fuse_ino_t node_enter(fuse_ino_t parent, const char *name, const struct mnode *m)
{
	struct node *n;
	fuse_ino_t ino = 0;

	pthread_mutex_lock(&nodes_lock);
	n = find_name(parent, name);
	if (n) {
		/* the same path may now mean a restarted process or event */
		n->m.kind = m->kind;
		n->m.pid = m->pid;
		n->m.start = m->start;
		n->m.evid = m->evid;
		n->m.inst = m->inst;
	} else {
		n = calloc(1, sizeof(*n));
		if (!n || !(n->name = strdup(name)) || mnode_copy(&n->m, m) < 0) {
			if (n)
				free(n->name);
			free(n);
			goto out;
		}
		n->ino = next_ino++;
		n->parent = parent;
		n->ino_next = by_ino[n->ino % NHASH];
		by_ino[n->ino % NHASH] = n;
		n->name_next = by_name[hash_name(parent, name)];
		by_name[hash_name(parent, name)] = n;
	}
	n->nlookup++;
	ino = n->ino;
out:
	pthread_mutex_unlock(&nodes_lock);
	return ino;
}

static fuse_ino_t node_peek(fuse_ino_t parent, const char *name)
{
	struct node *n;
	fuse_ino_t ino;

	pthread_mutex_lock(&nodes_lock);
	n = find_name(parent, name);
	ino = n ? n->ino : UNKNOWN_INO;
	pthread_mutex_unlock(&nodes_lock);
	return ino;
}

static void node_forget(fuse_ino_t ino, uint64_t nlookup)
{
	struct node *n, **pp;

	if (ino == FUSE_ROOT_ID)
		return;
	pthread_mutex_lock(&nodes_lock);
	n = find_ino(ino);
	if (!n)
		goto out;
	n->nlookup -= nlookup < n->nlookup ? nlookup : n->nlookup;
	if (n->nlookup)
		goto out;
	for (pp = &by_ino[ino % NHASH]; *pp != n; pp = &(*pp)->ino_next)
		;
	*pp = n->ino_next;
	for (pp = &by_name[hash_name(n->parent, n->name)]; *pp != n; pp = &(*pp)->name_next)
		;
	*pp = n->name_next;
	mnode_free(&n->m);
	free(n->name);
	free(n);
out:
	pthread_mutex_unlock(&nodes_lock);
}

/*
 * (parent, name) was removed (rmdir of an instance): its node keeps its
 * inode for the descriptors still open below it, under a name no lookup
 * can give, so that a new directory of that name gets a new inode.
 */
static void node_unname(fuse_ino_t parent, const char *name)
{
	struct node *n, **pp;
	char *gone = strdup("/gone");

	pthread_mutex_lock(&nodes_lock);
	n = find_name(parent, name);
	if (n && gone) {
		for (pp = &by_name[hash_name(parent, name)]; *pp != n; pp = &(*pp)->name_next)
			;
		*pp = n->name_next;
		free(n->name);
		n->name = gone;
		gone = NULL;
		n->name_next = by_name[hash_name(parent, n->name)];
		by_name[hash_name(parent, n->name)] = n;
	}
	pthread_mutex_unlock(&nodes_lock);
	free(gone);
}

/* ---- names -------------------------------------------------------------- */

/* "<comm>-<pid>", with '/' (not allowed in a name) shown as '_'. */
static void link_name(const char *comm, pid_t pid, char *buf, size_t len)
{
	char *p;

	snprintf(buf, len, "%.15s-%d", comm, (int)pid);
	for (p = buf; *p; p++)
		if (*p == '/')
			*p = '_';
}

static bool all_digits(const char *s)
{
	if (!*s || (*s == '0' && s[1]))
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* utrace__ctl_list()'s flags: the runtime directory's processes, or
 * (--all-users) every user's */
static unsigned int list_flags;

void mount_fs_set_list_flags(unsigned int flags)
{
	list_flags = flags;
}

/* The traceable process 'pid' of the caller, or -ENOENT. */
static int find_proc(pid_t pid, struct utrace__ctl_proc *out)
{
	struct utrace__ctl_proc *procs;
	size_t nr, i;
	int err = utrace__ctl_list(&procs, &nr, list_flags);

	if (err < 0)
		return err;
	err = -ENOENT;
	for (i = 0; i < nr; i++)
		if (procs[i].pid == pid) {
			*out = procs[i];
			err = 0;
			break;
		}
	free(procs);
	return err;
}

static int resolve_root(const char *name, struct mnode *cm)
{
	struct utrace__ctl_proc proc;
	const char *dash = strrchr(name, '-');
	char buf[64];
	long pid;

	if (all_digits(name)) {
		pid = strtol(name, NULL, 10);
		cm->kind = MK_PID;
	} else {
		if (!dash || !all_digits(dash + 1))
			return -ENOENT;
		pid = strtol(dash + 1, NULL, 10);
		cm->kind = MK_LINK;
	}
	if (pid <= 0 || pid > 0x7fffffff || find_proc((pid_t)pid, &proc) < 0)
		return -ENOENT;
	if (cm->kind == MK_LINK) {
		link_name(proc.comm, proc.pid, buf, sizeof(buf));
		if (strcmp(buf, name))
			return -ENOENT;
	}
	cm->pid = proc.pid;
	return mount_proc(cm->pid, 0, &cm->start, NULL, NULL, NULL);
}

/* A system or an event of the process (MK_EVENTS or MK_SYS parent). */
static int resolve_event(const struct mnode *pm, const char *name, struct mnode *cm)
{
	struct utrace__ctl_event *evs;
	size_t nr, i;
	int err;

	if ((err = mount_events(pm, &evs, &nr)) < 0)
		return err;
	err = -ENOENT;
	for (i = 0; i < nr; i++) {
		if (pm->kind == MK_EVENTS && !strcmp(evs[i].system, name)) {
			cm->kind = MK_SYS;
			cm->sys = strdup(name);
			err = cm->sys ? 0 : -ENOMEM;
			break;
		}
		if (pm->kind == MK_SYS && !strcmp(evs[i].system, pm->sys) &&
		    !strcmp(evs[i].name, name)) {
			cm->kind = MK_EV;
			cm->evid = evs[i].id;
			cm->ev = strdup(name);
			err = cm->ev ? 0 : -ENOMEM;
			break;
		}
	}
	utrace__ctl_events_free(evs, nr);
	return err;
}

/*
 * The instances of the process of 'm': "<handle> <name>\n" lines
 * (malloc()ed), or -ENOENT when it is gone.
 */
static int instance_list(const struct mnode *m, char **text)
{
	struct utrace__ctl *c;
	int err;

	*text = NULL;
	if ((err = mount_ctl(m, &c)) < 0)
		return err;
	err = utrace__ctl_instances(c, text);
	utrace__ctl_close(c);
	return err < 0 ? mount_gone(err, -ENOENT) : 0;
}

/* The handle of instance 'name' ('handle' 0), or whether 'handle' is
 * still an instance ('name' NULL): the handle, or 0. */
static uint32_t instance_find(const struct mnode *m, const char *name, uint32_t handle)
{
	char *text, *line, *save = NULL;
	uint32_t found = 0;

	if (instance_list(m, &text) < 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		uint32_t h = (uint32_t)strtoul(line, NULL, 10);

		if (!sp)
			continue;
		if (name ? !strcmp(sp + 1, name) : h == handle)
			found = h;
	}
	free(text);
	return found;
}

/* What 'name' in directory 'pm' means; cm is filled (mnode_free() it). */
static int resolve(const struct mnode *pm, const char *name, struct mnode *cm)
{
	const struct mentry *e;
	int err;

	memset(cm, 0, sizeof(*cm));
	if (pm->kind == MK_ROOT)
		return resolve_root(name, cm);
	if (!mk_is_dir(pm->kind))
		return -ENOTDIR;
	if (mount_proc(pm->pid, pm->start, NULL, NULL, NULL, NULL) < 0)
		return -ENOENT;
	if (pm->inst && !instance_find(pm, NULL, pm->inst))
		return -ENOENT;         /* the instance was removed */
	err = mnode_copy(cm, pm);
	if (err < 0)
		return err;
	if (pm->kind == MK_INSTANCES) {
		cm->inst = instance_find(pm, name, 0);
		cm->kind = MK_INST;
		if (cm->inst)
			return 0;
		mnode_free(cm);
		return -ENOENT;
	}
	for (e = mount_fixed_entries(pm); e->name; e++)
		if (!strcmp(e->name, name)) {
			cm->kind = e->kind;
			return 0;
		}
	if (pm->kind == MK_OPTIONS) {
		err = mount_option_lookup(name);
		if (err >= 0) {
			cm->kind = MK_OPTION;
			cm->evid = (uint32_t)err;
			return 0;
		}
	}
	if (pm->kind == MK_TRACE_STAT && !strncmp(name, "function", 8) &&
	    all_digits(name + 8) && strlen(name + 8) < 10 &&
	    strtoul(name + 8, NULL, 10) < mount_nr_cpus()) {
		cm->kind = MK_STAT_FUNCTION;
		cm->evid = (uint32_t)strtoul(name + 8, NULL, 10);
		return 0;
	}
	if (pm->kind == MK_PER_CPU && !strncmp(name, "cpu", 3) && all_digits(name + 3) &&
	    strlen(name + 3) < 10 && strtoul(name + 3, NULL, 10) < mount_nr_cpus()) {
		cm->kind = MK_CPU;
		cm->evid = (uint32_t)strtoul(name + 3, NULL, 10);
		return 0;
	}
	if (pm->kind != MK_EVENTS && pm->kind != MK_SYS) {
		mnode_free(cm);
		return -ENOENT;
	}
	err = resolve_event(pm, name, cm);
	if (err < 0)
		mnode_free(cm);
	return err;
}

static int fill_attr(const struct mnode *m, fuse_ino_t ino, struct stat *st)
{
	struct timespec when = fs.mounted;
	uid_t uid = fs.uid;
	gid_t gid = fs.gid;
	char tmp[32];

	memset(st, 0, sizeof(*st));
	if (m->kind != MK_ROOT &&
	    mount_proc(m->pid, m->start, NULL, &uid, &gid, &when) < 0)
		return -ENOENT;
	st->st_ino = ino;
	st->st_mode = mount_mode(m->kind);
	if (mk_is_dir(m->kind)) {
		st->st_mode |= S_IFDIR;
		st->st_nlink = 2;
	} else if (m->kind == MK_LINK) {
		st->st_mode |= S_IFLNK;
		st->st_nlink = 1;
		st->st_size = snprintf(tmp, sizeof(tmp), "%d", (int)m->pid);
	} else {
		st->st_mode |= S_IFREG;
		st->st_nlink = 1;
	}
	st->st_uid = uid;
	st->st_gid = gid;
	st->st_atim = st->st_mtim = st->st_ctim = when;
	st->st_blksize = 4096;
	return 0;
}

/* ---- operations on names ------------------------------------------------ */

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(unsigned int)(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
	fs.atomic_trunc = (conn->want & FUSE_CAP_ATOMIC_O_TRUNC) != 0;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct mnode pm, cm;
	int err = node_get(parent, &pm);

	if (err < 0) {
		fuse_reply_err(req, -err);
		return;
	}
	err = resolve(&pm, name, &cm);
	mnode_free(&pm);
	if (err < 0) {
		fuse_reply_err(req, -err);
		return;
	}
	memset(&e, 0, sizeof(e));
	err = fill_attr(&cm, 0, &e.attr);
	if (!err) {
		e.ino = node_enter(parent, name, &cm);
		if (!e.ino)
			err = -ENOMEM;
	}
	mnode_free(&cm);
	if (err < 0) {
		fuse_reply_err(req, -err);
		return;
	}
	e.attr.st_ino = e.ino;
	e.attr_timeout = 0;
	e.entry_timeout = 0;
	if (fuse_reply_entry(req, &e) != 0)
		node_forget(e.ino, 1);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	node_forget(ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		node_forget(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnode m;
	struct stat st;
	int err = node_get(ino, &m);

	if (!err)
		err = fill_attr(&m, ino, &st);
	mnode_free(&m);
	if (err < 0)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, 0);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct mnode m;
	struct stat st;
	int err = node_get(ino, &m);

	if (!err && (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		err = -EPERM;
	if (!err && (to_set & FUSE_SET_ATTR_SIZE)) {
		if (mk_is_dir(m.kind))
			err = -EISDIR;
		else if (!fs.atomic_trunc && attr->st_size == 0)
			err = mount_file_truncate(&m);
	}
	if (!err)
		err = fill_attr(&m, ino, &st);
	mnode_free(&m);
	if (err < 0)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, 0);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct mnode m;
	char buf[32];
	int err = node_get(ino, &m);

	if (!err && m.kind != MK_LINK)
		err = -EINVAL;
	if (!err)
		err = mount_proc(m.pid, m.start, NULL, NULL, NULL, NULL);
	if (!err)
		snprintf(buf, sizeof(buf), "%d", (int)m.pid);
	mnode_free(&m);
	if (err < 0)
		fuse_reply_err(req, -err);
	else
		fuse_reply_readlink(req, buf);
}

/* Nothing can be made or removed: tracefs instances have no create. */
static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	fuse_reply_err(req, EACCES);
}

/* mkdir is the kernel's only in instances/: a new instance. */
static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct utrace__ctl *c;
	struct mnode pm;
	int err = node_get(parent, &pm);

	if (err == 0 && pm.kind != MK_INSTANCES)
		err = -EACCES;
	if (err == 0)
		err = mount_ctl(&pm, &c);
	if (err == 0) {
		err = utrace__ctl_instance_mkdir(c, name);
		utrace__ctl_close(c);
		if (err == -ENOSPC)
			fprintf(stderr, "utrace mount: process %d has %d instances, the most a "
				"process can have; '%s' not made\n", (int)pm.pid,
				UTRACE_MOUNT_INSTANCES_MAX, name);
	}
	mnode_free(&pm);
	if (err < 0) {
		fuse_reply_err(req, -err);
		return;
	}
	op_lookup(req, parent, name);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EACCES);
}

/* rmdir of instances/<name>: EBUSY while a file of it is open. */
static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct utrace__ctl *c;
	struct mnode pm;
	uint32_t h = 0;
	int err = node_get(parent, &pm);

	if (err == 0 && pm.kind != MK_INSTANCES)
		err = -EACCES;
	if (err == 0 && !(h = instance_find(&pm, name, 0)))
		err = -ENOENT;
	if (err == 0 && mount_inst_busy(pm.pid, pm.start, h))
		err = -EBUSY;
	if (err == 0)
		err = mount_ctl(&pm, &c);
	if (err == 0) {
		err = utrace__ctl_instance_rmdir(c, name);
		utrace__ctl_close(c);
	}
	if (err == 0) {
		mount_pipe_clear(pm.pid, pm.start, h);
		mount_snap_free(pm.pid, pm.start, h);
		node_unname(parent, name);
	}
	mnode_free(&pm);
	fuse_reply_err(req, -err);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EACCES);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EACCES);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EACCES);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	fuse_reply_err(req, EACCES);
}

/* ---- directories ---------------------------------------------------------- */

struct dirbuf {
	pthread_mutex_t lock;    /* held while replying (see handle_free()) */
	char *p;
	size_t len, cap;
};

static void dirbuf_free(struct dirbuf *d)
{
	pthread_mutex_lock(&d->lock);
	pthread_mutex_unlock(&d->lock);
	pthread_mutex_destroy(&d->lock);
	free(d->p);
	free(d);
}

static int dir_add(fuse_req_t req, struct dirbuf *d, fuse_ino_t parent, const char *name,
		   mode_t type)
{
	struct stat st;
	size_t need = fuse_add_direntry(req, NULL, 0, name, NULL, 0);

	if (d->len + need > d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4096;
		char *p;

		while (cap < d->len + need)
			cap *= 2;
		p = realloc(d->p, cap);
		if (!p)
			return -ENOMEM;
		d->p = p;
		d->cap = cap;
	}
	memset(&st, 0, sizeof(st));
	st.st_mode = type;
	st.st_ino = !strcmp(name, ".") ? parent : !strcmp(name, "..") ? UNKNOWN_INO
		: node_peek(parent, name);
	fuse_add_direntry(req, d->p + d->len, need, name, &st, (off_t)(d->len + need));
	d->len += need;
	return 0;
}

static int list_root(fuse_req_t req, struct dirbuf *d)
{
	struct utrace__ctl_proc *procs;
	size_t nr, i;
	char name[64];
	int err = utrace__ctl_list(&procs, &nr, list_flags);

	if (err < 0)
		return err;
	for (i = 0; i < nr && !err; i++) {
		snprintf(name, sizeof(name), "%d", (int)procs[i].pid);
		err = dir_add(req, d, FUSE_ROOT_ID, name, S_IFDIR);
		link_name(procs[i].comm, procs[i].pid, name, sizeof(name));
		if (!err)
			err = dir_add(req, d, FUSE_ROOT_ID, name, S_IFLNK);
	}
	free(procs);
	return err;
}

static int list_events(fuse_req_t req, fuse_ino_t ino, const struct mnode *m,
		       struct dirbuf *d)
{
	struct utrace__ctl_event *evs;
	size_t nr, i, j;
	int err = 0;

	if ((err = mount_events(m, &evs, &nr)) < 0)
		return err;
	for (i = 0; i < nr && !err; i++) {
		if (m->kind == MK_SYS) {
			if (!strcmp(evs[i].system, m->sys))
				err = dir_add(req, d, ino, evs[i].name, S_IFDIR);
			continue;
		}
		/* each system once, where its first event is */
		for (j = 0; j < i; j++)
			if (!strcmp(evs[j].system, evs[i].system))
				break;
		if (j == i)
			err = dir_add(req, d, ino, evs[i].system, S_IFDIR);
	}
	utrace__ctl_events_free(evs, nr);
	return err;
}

static int list_instances(fuse_req_t req, fuse_ino_t ino, const struct mnode *m,
			  struct dirbuf *d)
{
	char *text, *line, *save = NULL;
	int err = instance_list(m, &text);

	for (line = err ? NULL : strtok_r(text, "\n", &save); line && !err;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (sp)
			err = dir_add(req, d, ino, sp + 1, S_IFDIR);
	}
	free(text);
	return err;
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const struct mentry *e;
	struct dirbuf *d;
	struct mnode m;
	int err = node_get(ino, &m);

	if (err < 0) {
		fuse_reply_err(req, -err);
		return;
	}
	if (!mk_is_dir(m.kind))
		err = -ENOTDIR;
	else if (m.kind != MK_ROOT && mount_proc(m.pid, m.start, NULL, NULL, NULL, NULL) < 0)
		err = -ENOENT;
	d = err ? NULL : calloc(1, sizeof(*d));
	if (d)
		pthread_mutex_init(&d->lock, NULL);
	else if (!err)
		err = -ENOMEM;
	if (!err)
		err = dir_add(req, d, ino, ".", S_IFDIR);
	if (!err)
		err = dir_add(req, d, ino, "..", S_IFDIR);
	for (e = mount_fixed_entries(&m); !err && e->name; e++)
		err = dir_add(req, d, ino, e->name, mk_is_dir(e->kind) ? S_IFDIR : S_IFREG);
	if (!err && m.kind == MK_OPTIONS) {
		const char *name;
		uint32_t i;

		for (i = 0; !err && (name = mount_option_file(i)); i++)
			err = dir_add(req, d, ino, name, S_IFREG);
	}
	if (!err && m.kind == MK_PER_CPU) {
		unsigned int i;
		char name[16];

		for (i = 0; !err && i < mount_nr_cpus(); i++) {
			snprintf(name, sizeof(name), "cpu%u", i);
			err = dir_add(req, d, ino, name, S_IFDIR);
		}
	}
	if (!err && m.kind == MK_TRACE_STAT) {
		unsigned int i;
		char name[24];

		for (i = 0; !err && i < mount_nr_cpus(); i++) {
			snprintf(name, sizeof(name), "function%u", i);
			err = dir_add(req, d, ino, name, S_IFREG);
		}
	}
	if (!err && m.kind == MK_INSTANCES)
		err = list_instances(req, ino, &m, d);
	if (!err && m.kind == MK_ROOT)
		err = list_root(req, d);
	else if (!err && (m.kind == MK_EVENTS || m.kind == MK_SYS))
		err = list_events(req, ino, &m, d);
	mnode_free(&m);
	if (err < 0) {
		if (d)
			dirbuf_free(d);
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0)
		dirbuf_free(d);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dirbuf *d = (struct dirbuf *)(uintptr_t)fi->fh;

	pthread_mutex_lock(&d->lock);
	if (off < 0 || (size_t)off >= d->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, d->p + off,
			       d->len - (size_t)off < size ? d->len - (size_t)off : size);
	pthread_mutex_unlock(&d->lock);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	dirbuf_free((struct dirbuf *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* ---- files ---------------------------------------------------------------- */

struct pipe {
	struct utrace__ctl *ctl;
	struct live *lv;
	char *buf;               /* printed, not yet read */
	size_t len, off;
	size_t partial;          /* rest of a line begun by a short read */
	bool gone;               /* the process ended: end of file when empty */
	bool eof;                /* answer the next read with end of file */
	bool read_any;           /* this descriptor has returned text */
	bool raw;                /* per_cpu/cpuN/trace_pipe_raw: pages, not lines */
	struct fuse_pollhandle *ph;
	/* trace_pipe_raw: the file offset of buf[off], the bytes from there
	 * stored into the kernel's cache for splice (see the top), and the
	 * file's node id */
	uint64_t pos;
	size_t pushed;
	fuse_ino_t ino;
};

#define PUSH_MAX (4u << 20)

struct handle {
	pthread_mutex_t lock;
	struct mfile f;
	struct pipe *p;          /* trace_pipe */
	struct handle *next;     /* the open pipes, under waiters_lock */
};

struct waiter {
	struct waiter *next;
	fuse_req_t req;
	struct handle *h;
	size_t size;
};

static pthread_mutex_t waiters_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t poller_cond = PTHREAD_COND_INITIALIZER;
static struct waiter *waiters;
static struct handle *pipes;
static struct fuse_session *session;     /* for FUSE_NOTIFY_STORE */
static bool poller_stop;
static pthread_t poller;
static bool poller_running;

/*
 * A reply ends the request before fuse_reply_*() returns: the opener may
 * close at once and the release come on another thread while the replying
 * one still holds h->lock.  So every reply from a handle is made under its
 * lock, and the release takes the lock once before freeing.
 */
static void handle_free(struct handle *h)
{
	pthread_mutex_lock(&h->lock);
	pthread_mutex_unlock(&h->lock);
	if (h->p) {
		struct pipe *p = h->p;

		/* the rest of a line begun by a short read is lost */
		p->off += p->partial < p->len - p->off ? p->partial : p->len - p->off;
		if (p->off < p->len && h->f.m.kind == MK_TRACE_PIPE)
			mount_stash_put(h->f.m.pid, h->f.m.start, h->f.m.inst, p->buf + p->off,
					p->len - p->off);
		if (h->p->ph)
			fuse_pollhandle_destroy(h->p->ph);
		if (h->p->lv)
			live_close(h->p->lv);
		if (h->p->ctl)
			utrace__ctl_close(h->p->ctl);
		free(h->p->buf);
		free(h->p);
	}
	mount_inst_ref(h->f.m.pid, h->f.m.start, h->f.m.inst, -1);
	mnode_free(&h->f.m);
	free(h->f.text);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

static int pipe_open(struct handle *h)
{
	struct pipe *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	h->p = p;
	err = mount_ctl(&h->f.m, &p->ctl);
	if (err < 0)
		return err;
	err = live_open(&p->ctl, 1, &p->lv);
	if (err < 0)
		return err;
	if (h->f.m.kind != MK_TRACE_PIPE)
		live_set_cpu(p->lv, (int)h->f.m.evid);
	p->raw = h->f.m.kind == MK_CPU_TRACE_PIPE_RAW;
	return 0;
}

/* Print what the buffer holds into the pipe's text; the text is empty. */
static int pipe_fill(struct handle *h)
{
	struct pipe *p = h->p;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	long n;

	if (p->raw) {
		/* after what is left (pushed pages the reader may not have
		 * taken yet) */
		unsigned char *pages;
		size_t left = p->len - p->off;

		n = live_raw(p->lv, &pages);
		if (n < 0)
			return (int)n;
		if (!n && left)
			return 0;
		buf = left + (size_t)n ? malloc(left + (size_t)n) : NULL;
		if (left + (size_t)n && !buf)
			return -ENOMEM;
		if (left)
			memcpy(buf, p->buf + p->off, left);
		if (n)
			memcpy(buf + left, pages, (size_t)n);
		free(p->buf);
		p->buf = buf;
		p->len = left + (size_t)n;
		p->off = 0;
		return 0;
	}
	if (h->f.m.kind == MK_TRACE_PIPE)
		buf = mount_stash_take(h->f.m.pid, h->f.m.start, h->f.m.inst, &p->len);
	if (buf) {
		free(p->buf);
		p->buf = buf;
		p->off = 0;
		return 0;
	}
	mem = open_memstream(&buf, &len);
	if (!mem)
		return -ENOMEM;
	n = live_print(p->lv, LIVE_CONSUME | mount_live_flags(&h->f.m), mem);
	if (fclose(mem) != 0 && n >= 0)
		n = -ENOMEM;
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	free(p->buf);
	p->buf = buf;
	p->len = len;
	p->off = 0;
	return 0;
}

/*
 * Whether a read can be answered now (h->lock held): text is waiting, or
 * the buffer has some, or it is the end of the file: the process is gone,
 * or (trace_wait_pipe()) tracing is off and this descriptor has already
 * read something.  That end of file is not for 'nonblock', an O_NONBLOCK
 * read: tracing_wait_pipe() and tracing_buffers_read() answer it EAGAIN
 * when empty before they look at tracing_on.
 */
static bool pipe_ready(struct handle *h, bool for_poll, bool nonblock)
{
	struct pipe *p = h->p;

	/* a poll waits for pages not yet pushed (the pushed ones are in the
	 * cache, for the splice that follows) */
	if (p->off + (for_poll ? p->pushed : 0) < p->len || p->gone || p->eof)
		return true;
	if (pipe_fill(h) < 0) {
		p->gone = true;
		return true;
	}
	if (p->off + (for_poll ? p->pushed : 0) < p->len)
		return true;
	if (mount_proc(h->f.m.pid, h->f.m.start, NULL, NULL, NULL, NULL) < 0) {
		/* what it wrote before it ended can still be read */
		if (pipe_fill(h) < 0 || p->off + (for_poll ? p->pushed : 0) >= p->len)
			p->gone = true;
		return true;
	}
	if (p->read_any && !nonblock && utrace__ctl_tracing_on(p->ctl, -1) == 0) {
		p->eof = true;
		return true;
	}
	return false;
}

/*
 * tracing_read_pipe(): whole lines that fit in 'size'; a line longer than
 * 'size' is cut, and the next read returns only the rest of it.
 */
static size_t pipe_take(struct pipe *p, size_t size, const char **out)
{
	const char *s = p->buf + p->off;
	size_t avail = p->len - p->off, n = 0, line;
	const char *nl;

	*out = s;
	if (p->raw) {
		/* tracing_buffers_read(): the rest of a page first */
		n = avail < size ? avail : size;
		p->off += n;
		p->pos += n;
		p->pushed -= n < p->pushed ? n : p->pushed;
		return n;
	}
	if (p->partial) {
		n = p->partial < size ? p->partial : size;
		p->partial -= n;
		p->off += n;
		return n;
	}
	while (n < avail) {
		nl = memchr(s + n, '\n', avail - n);
		line = nl ? (size_t)(nl - (s + n)) + 1 : avail - n;
		if (n + line > size) {
			if (!n) {
				n = size;
				p->partial = line - size;
			}
			break;
		}
		n += line;
	}
	p->off += n;
	return n;
}

/* Answer a read of a ready pipe (h->lock held). */
static void pipe_answer(fuse_req_t req, struct handle *h, size_t size)
{
	const char *out;
	size_t n = pipe_take(h->p, size, &out);

	if (n)
		h->p->read_any = true;
	else
		h->p->eof = false;      /* that end of file is given */
	fuse_reply_buf(req, out, n);
}

/*
 * A read of trace_pipe_raw at 'off': the reader spliced the pushed bytes
 * before it from the cache; they are dropped (h->lock held).
 */
static void raw_seen(struct pipe *p, off_t off)
{
	uint64_t n;

	if (!p->raw || off < 0 || (uint64_t)off <= p->pos)
		return;
	n = (uint64_t)off - p->pos;
	if (n > p->pushed)
		n = p->pushed;   /* not ours to skip: only what was pushed */
	p->off += (size_t)n;
	p->pos += n;
	p->pushed -= (size_t)n;
}

/*
 * Store the pages of trace_pipe_raw not yet pushed into the kernel's
 * cache of the file, at the reader's offset, for splice (see the top).
 * Called with h->lock held; the store is made after it is let go (the
 * kernel may wait there on a read of the same file that needs the lock).
 */
static void raw_push(struct handle *h)
{
	struct pipe *p = h->p;
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(0);
	uint64_t at;
	size_t n;
	void *copy;

	if (!p->raw || !session || p->gone)
		return;
	if (p->pushed > PUSH_MAX) {
		/* never read: taken as spliced */
		p->off += p->pushed;
		p->pos += p->pushed;
		p->pushed = 0;
	}
	n = p->len - p->off - p->pushed;
	if (!n || !(copy = malloc(n)))
		return;
	memcpy(copy, p->buf + p->off + p->pushed, n);
	at = p->pos + p->pushed;
	p->pushed += n;
	pthread_mutex_unlock(&h->lock);
	bv.buf[0].mem = copy;
	bv.buf[0].size = n;
	fuse_lowlevel_notify_store(session, p->ino, (off_t)at, &bv, 0);
	free(copy);
	pthread_mutex_lock(&h->lock);
}

static void pipe_read(fuse_req_t req, struct handle *h, size_t size, off_t off, int flags)
{
	struct waiter *w;

	pthread_mutex_lock(&h->lock);
	raw_seen(h->p, off);
	if (pipe_ready(h, false, flags & O_NONBLOCK)) {
		pipe_answer(req, h, size);
		pthread_mutex_unlock(&h->lock);
		return;
	}
	pthread_mutex_unlock(&h->lock);
	if (flags & O_NONBLOCK) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	w->req = req;
	w->h = h;
	w->size = size;
	pthread_mutex_lock(&waiters_lock);
	w->next = waiters;
	waiters = w;
	pthread_mutex_unlock(&waiters_lock);
}

static void *poller_main(void *arg)
{
	struct waiter *w, **pp;
	struct handle *h;
	struct timespec ts;

	pthread_mutex_lock(&waiters_lock);
	while (!poller_stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += POLL_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&poller_cond, &waiters_lock, &ts);
		if (poller_stop)
			break;
		for (pp = &waiters; (w = *pp);) {
			bool done = true;

			if (fuse_req_interrupted(w->req)) {
				fuse_reply_err(w->req, EINTR);
			} else {
				pthread_mutex_lock(&w->h->lock);
				if (pipe_ready(w->h, false, false))
					pipe_answer(w->req, w->h, w->size);
				else
					done = false;
				pthread_mutex_unlock(&w->h->lock);
			}
			if (done) {
				*pp = w->next;
				free(w);
			} else {
				pp = &w->next;
			}
		}
		for (h = pipes; h; h = h->next) {
			pthread_mutex_lock(&h->lock);
			/* (trace_pipe_raw's pages are pushed by the poll
			 * that this wakes: not here, under waiters_lock,
			 * which a read may need while the kernel holds the
			 * page the store waits for) */
			if (h->p->ph && pipe_ready(h, true, false)) {
				fuse_lowlevel_notify_poll(h->p->ph);
				fuse_pollhandle_destroy(h->p->ph);
				h->p->ph = NULL;
			}
			pthread_mutex_unlock(&h->lock);
		}
	}
	/* the session ends: nobody will read the answers, but answer anyway */
	while ((w = waiters)) {
		waiters = w->next;
		fuse_reply_err(w->req, EINTR);
		free(w);
	}
	pthread_mutex_unlock(&waiters_lock);
	return NULL;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct handle *h = calloc(1, sizeof(*h));
	int err = h ? node_get(ino, &h->f.m) : -ENOMEM;

	if (err < 0) {
		free(h);
		fuse_reply_err(req, -err);
		return;
	}
	mount_inst_ref(h->f.m.pid, h->f.m.start, h->f.m.inst, 1);
	pthread_mutex_init(&h->lock, NULL);
	h->f.flags = fi->flags;
	if (mk_is_dir(h->f.m.kind))
		err = -EISDIR;
	else if (h->f.m.kind == MK_LINK)
		err = -ELOOP;
	else if (mount_proc(h->f.m.pid, h->f.m.start, NULL, NULL, NULL, NULL) < 0)
		err = -ENOENT;
	else if (h->f.m.kind == MK_TRACE_PIPE || h->f.m.kind == MK_CPU_TRACE_PIPE ||
		 h->f.m.kind == MK_CPU_TRACE_PIPE_RAW)
		err = pipe_open(h);
	else
		err = mount_file_open(&h->f);
	if (err < 0) {
		handle_free(h);
		fuse_reply_err(req, -err);
		return;
	}
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (h->p) {
		h->p->ino = ino;
		fi->nonseekable = 1;
		pthread_mutex_lock(&waiters_lock);
		h->next = pipes;
		pipes = h;
		pthread_mutex_unlock(&waiters_lock);
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_open(req, fi) != 0) {
		/* the opener is gone (interrupted): no release will come */
		struct handle **pp;

		pthread_mutex_lock(&waiters_lock);
		for (pp = &pipes; *pp; pp = &(*pp)->next)
			if (*pp == h) {
				*pp = h->next;
				break;
			}
		pthread_mutex_unlock(&waiters_lock);
		handle_free(h);
	}
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	int err = 0;

	if (h->p) {
		pipe_read(req, h, size, off, fi->flags);
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (off == 0 || !h->f.have_text) {
		char *text;
		size_t len;

		err = mount_file_text(&h->f, &text, &len);
		if (!err) {
			free(h->f.text);
			h->f.text = text;
			h->f.len = len;
			h->f.have_text = true;
		}
	}
	if (err < 0)
		fuse_reply_err(req, -err);
	else if (off < 0 || (size_t)off >= h->f.len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, h->f.text + off,
			       h->f.len - (size_t)off < size ? h->f.len - (size_t)off : size);
	pthread_mutex_unlock(&h->lock);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
		     off_t off, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	long n;

	pthread_mutex_lock(&h->lock);
	n = mount_file_write(&h->f, buf, size);
	pthread_mutex_unlock(&h->lock);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_write(req, (size_t)n);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh, **pp;

	if (h->p) {
		pthread_mutex_lock(&waiters_lock);
		for (pp = &pipes; *pp; pp = &(*pp)->next)
			if (*pp == h) {
				*pp = h->next;
				break;
			}
		pthread_mutex_unlock(&waiters_lock);
	}
	handle_free(h);
	fuse_reply_err(req, 0);
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	unsigned int revents = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM;

	if (!h->p) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, revents);
		return;
	}
	pthread_mutex_lock(&h->lock);
	if (pipe_ready(h, true, false)) {
		raw_push(h);
		revents = POLLIN | POLLRDNORM;
		if (ph)
			fuse_pollhandle_destroy(ph);
	} else {
		revents = 0;
		if (ph) {
			if (h->p->ph)
				fuse_pollhandle_destroy(h->p->ph);
			h->p->ph = ph;
		}
	}
	pthread_mutex_unlock(&h->lock);
	fuse_reply_poll(req, revents);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.create = op_create,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.release = op_release,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.poll = op_poll,
};

const struct fuse_lowlevel_ops *mount_fs_ops(size_t *size)
{
	*size = sizeof(ops);
	return &ops;
}

int mount_fs_start(struct fuse_session *se)
{
	sigset_t all, old;
	int err;

	session = se;
	fs.uid = getuid();
	fs.gid = getgid();
	clock_gettime(CLOCK_REALTIME, &fs.mounted);
	/* signals are for the loop's thread, which unmounts */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&poller, NULL, poller_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	poller_running = true;
	return 0;
}

void mount_fs_stop(void)
{
	if (!poller_running)
		return;
	pthread_mutex_lock(&waiters_lock);
	poller_stop = true;
	pthread_cond_signal(&poller_cond);
	pthread_mutex_unlock(&waiters_lock);
	pthread_join(poller, NULL);
	poller_running = false;
}
