/* SPDX-License-Identifier: MIT */
/*
 * What the mount knows of each traced process apart from its files
 * (mount.h): whether it is still the process it was (pid and start time),
 * and the trace_pipe text kept between readers, which the FUSE side
 * (mount-fs.c) keeps and takes and the files (mount-files.c) drop when a
 * trace is cleared; the snapshot of each process (the snapshot file).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "ctl-client.h"
#include "live.h"
#include "mount.h"

int mount_proc(pid_t pid, uint64_t start, uint64_t *start_out, uid_t *uid, gid_t *gid,
	       struct timespec *when)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	struct stat sb;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0 || fstat(fd, &sb) < 0) {
		close(fd);
		return -ENOENT;
	}
	close(fd);
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, so from the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return -ENOENT;
	p += 2;
	/* field 3 is the state; starttime is field 22 */
	for (i = 3; i < 22 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		st = strtoull(p, NULL, 10);
	if (start && st != start)
		return -ENOENT;
	if (start_out)
		*start_out = st;
	if (uid)
		*uid = sb.st_uid;
	if (gid)
		*gid = sb.st_gid;
	if (when)
		*when = sb.st_ctim;
	return 0;
}

/*
 * A trace_pipe descriptor takes from the buffer all it holds, but the
 * kernel's consumes only what read() returned: closed with text left, it
 * loses just the rest of a line begun by a short read.  So the whole lines
 * a closing descriptor did not return are kept here, per process, and the
 * next trace_pipe reader of that process gets them first.
 */
struct stash {
	struct stash *next;
	pid_t pid;
	uint64_t start;
	uint32_t inst;
	char *buf;
	size_t len;
};

static pthread_mutex_t stash_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stash *stashes;

static struct stash **stash_find(pid_t pid, uint64_t start, uint32_t inst)
{
	struct stash **pp;

	for (pp = &stashes; *pp; pp = &(*pp)->next)
		if ((*pp)->pid == pid && (*pp)->start == start && (*pp)->inst == inst)
			break;
	return pp;
}

void mount_stash_put(pid_t pid, uint64_t start, uint32_t inst, const char *text, size_t len)
{
	struct stash **pp, *st;
	char *buf;

	pthread_mutex_lock(&stash_lock);
	/* forget the processes that are gone */
	for (pp = &stashes; (st = *pp);) {
		if (mount_proc(st->pid, st->start, NULL, NULL, NULL, NULL) < 0) {
			*pp = st->next;
			free(st->buf);
			free(st);
		} else {
			pp = &st->next;
		}
	}
	pp = stash_find(pid, start, inst);
	st = *pp ? *pp : calloc(1, sizeof(*st));
	buf = st ? realloc(st->buf, st->len + len) : NULL;
	if (buf) {
		memcpy(buf + st->len, text, len);
		st->buf = buf;
		st->len += len;
		st->pid = pid;
		st->start = start;
		st->inst = inst;
		*pp = st;
	} else if (st && !*pp) {
		free(st);
	}
	pthread_mutex_unlock(&stash_lock);
}

/* The kept text of a process (malloc()ed), or NULL. */
char *mount_stash_take(pid_t pid, uint64_t start, uint32_t inst, size_t *len)
{
	struct stash **pp, *st;
	char *buf = NULL;

	pthread_mutex_lock(&stash_lock);
	pp = stash_find(pid, start, inst);
	if ((st = *pp)) {
		*pp = st->next;
		buf = st->buf;
		*len = st->len;
		free(st);
	}
	pthread_mutex_unlock(&stash_lock);
	return buf;
}

void mount_pipe_clear(pid_t pid, uint64_t start, uint32_t inst)
{
	size_t len;

	free(mount_stash_take(pid, start, inst, &len));
}


/*
 * The trace options a process directory remembers (trace_options,
 * options/): the kernel keeps them in the instance, the mount keeps them
 * here, per process, until the process is gone.
 */
struct popts {
	struct popts *next;
	pid_t pid;
	uint64_t start;
	uint32_t inst;
	uint64_t opts;
};

static pthread_mutex_t opts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct popts *popts;

static struct popts **opts_find(pid_t pid, uint64_t start, uint32_t inst)
{
	struct popts **pp;

	for (pp = &popts; *pp; pp = &(*pp)->next)
		if ((*pp)->pid == pid && (*pp)->start == start && (*pp)->inst == inst)
			break;
	return pp;
}

uint64_t mount_opts_get(pid_t pid, uint64_t start, uint32_t inst, uint64_t dflt)
{
	struct popts *o;
	uint64_t v = dflt;

	pthread_mutex_lock(&opts_lock);
	o = *opts_find(pid, start, inst);
	if (o)
		v = o->opts;
	pthread_mutex_unlock(&opts_lock);
	return v;
}

void mount_opts_set(pid_t pid, uint64_t start, uint32_t inst, uint64_t opts)
{
	struct popts **pp, *o;

	pthread_mutex_lock(&opts_lock);
	/* forget the processes that are gone */
	for (pp = &popts; (o = *pp);) {
		if (mount_proc(o->pid, o->start, NULL, NULL, NULL, NULL) < 0) {
			*pp = o->next;
			free(o);
		} else {
			pp = &o->next;
		}
	}
	pp = opts_find(pid, start, inst);
	o = *pp;
	if (!o && (o = calloc(1, sizeof(*o)))) {
		o->pid = pid;
		o->start = start;
		o->inst = inst;
		*pp = o;
	}
	if (o)
		o->opts = opts;
	pthread_mutex_unlock(&opts_lock);
}

/*
 * Open files of each instance: the kernel's rmdir of an instance is EBUSY
 * while a file of it is open (trace_array_get() at open).
 */
struct iref {
	struct iref *next;
	pid_t pid;
	uint64_t start;
	uint32_t inst;
	long n;
};

static pthread_mutex_t iref_lock = PTHREAD_MUTEX_INITIALIZER;
static struct iref *irefs;

void mount_inst_ref(pid_t pid, uint64_t start, uint32_t inst, int delta)
{
	struct iref **pp, *r;

	if (!inst)
		return;
	pthread_mutex_lock(&iref_lock);
	for (pp = &irefs; (r = *pp); pp = &r->next)
		if (r->pid == pid && r->start == start && r->inst == inst)
			break;
	if (!r && delta > 0 && (r = calloc(1, sizeof(*r)))) {
		r->pid = pid;
		r->start = start;
		r->inst = inst;
		r->next = irefs;
		irefs = r;
		pp = &irefs;
	}
	if (r) {
		r->n += delta;
		if (r->n <= 0) {
			*pp = r->next;
			free(r);
		}
	}
	pthread_mutex_unlock(&iref_lock);
}

bool mount_inst_busy(pid_t pid, uint64_t start, uint32_t inst)
{
	struct iref *r;
	bool busy = false;

	pthread_mutex_lock(&iref_lock);
	for (r = irefs; r; r = r->next)
		if (r->pid == pid && r->start == start && r->inst == inst)
			busy = r->n > 0;
	pthread_mutex_unlock(&iref_lock);
	return busy;
}

/*
 * The snapshots: the kernel keeps a second buffer per instance and swaps
 * it with the main one; the mount keeps a copy of the pages of the
 * process's buffer (live_snapshot()), made when 1 is written, until 0 is
 * written or the process is gone.  An allocated snapshot may be empty
 * (snap NULL).  One per buffer: the process's (inst 0) and each of its
 * instances' (their handles: a removed one's is not used again).
 */
struct psnap {
	struct psnap *next;
	pid_t pid;
	uint64_t start;
	uint32_t inst;
	struct live_snap *snap;
	int seen;                        /* the process's copy taken in */
};

static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct psnap *psnaps;

/* The buffer's entry (made when 'make'), the gone processes' forgotten. */
static struct psnap *snap_find(pid_t pid, uint64_t start, uint32_t inst, bool make)
{
	struct psnap **pp, *o;

	for (pp = &psnaps; (o = *pp);) {
		if (o->pid == pid && o->start == start && o->inst == inst)
			return o;
		if (mount_proc(o->pid, o->start, NULL, NULL, NULL, NULL) < 0) {
			*pp = o->next;
			live_snap_free(o->snap);
			free(o);
		} else {
			pp = &o->next;
		}
	}
	if (!make || !(o = calloc(1, sizeof(*o))))
		return NULL;
	o->pid = pid;
	o->start = start;
	o->inst = inst;
	*pp = o;
	return o;
}

/* Keep snap (seq: the process's copy it was made of, or 0). */
static int snap_keep(pid_t pid, uint64_t start, uint32_t inst, struct live_snap *snap, int seq)
{
	struct psnap *o;
	int r = 0;

	pthread_mutex_lock(&snap_lock);
	o = snap_find(pid, start, inst, true);
	if (o) {
		live_snap_free(o->snap);
		o->snap = snap;
		if (seq)
			o->seen = seq;
	} else {
		live_snap_free(snap);
		r = -ENOMEM;
	}
	pthread_mutex_unlock(&snap_lock);
	return r;
}

int mount_snap_take(pid_t pid, uint64_t start, uint32_t inst, struct live *lv)
{
	struct live_snap *snap;
	int r = live_snapshot(lv, &snap);

	return r < 0 ? r : snap_keep(pid, start, inst, snap, 0);
}

int mount_snap_alloc(pid_t pid, uint64_t start, uint32_t inst)
{
	int r = 0;

	pthread_mutex_lock(&snap_lock);
	if (!snap_find(pid, start, inst, true))
		r = -ENOMEM;
	pthread_mutex_unlock(&snap_lock);
	return r;
}

/* A copy the process's snapshot trigger made since the last look: taken
 * in (read with the process's formats), replacing the mount's. */
static int snap_from_process(struct utrace__ctl *c, pid_t pid, uint64_t start, uint32_t inst)
{
	struct live_snap *snap;
	struct live *lv;
	struct psnap *o;
	uint64_t until;
	int fd, seq = utrace__ctl_snapshot(c, &fd, &until), r;
	bool seen;

	if (seq <= 0)
		return 0;
	pthread_mutex_lock(&snap_lock);
	o = snap_find(pid, start, inst, false);
	seen = o && o->seen == seq;
	pthread_mutex_unlock(&snap_lock);
	r = 0;
	if (!seen) {
		r = live_open_copy(c, fd, until, &lv);
		if (r == 0) {
			r = live_snapshot(lv, &snap);
			live_close(lv);
			if (r == 0)
				r = snap_keep(pid, start, inst, snap, seq);
		}
	}
	close(fd);
	return r;
}

static void snap_drop(pid_t pid, uint64_t start, uint32_t inst, bool forget)
{
	struct psnap **pp, *o;

	pthread_mutex_lock(&snap_lock);
	for (pp = &psnaps; (o = *pp); pp = &o->next)
		if (o->pid == pid && o->start == start && o->inst == inst)
			break;
	if (o) {
		live_snap_free(o->snap);
		o->snap = NULL;
		if (forget) {
			*pp = o->next;
			free(o);
		}
	}
	pthread_mutex_unlock(&snap_lock);
}

void mount_snap_free(pid_t pid, uint64_t start, uint32_t inst)
{
	snap_drop(pid, start, inst, true);
}

void mount_snap_clear(pid_t pid, uint64_t start, uint32_t inst)
{
	snap_drop(pid, start, inst, false);
}

int mount_snap_print(struct utrace__ctl *c, pid_t pid, uint64_t start, uint32_t inst,
		     unsigned int flags, FILE *out)
{
	struct psnap *o;
	bool allocated;
	long n = 0;
	int r = snap_from_process(c, pid, start, inst);

	if (r < 0)
		return r;
	pthread_mutex_lock(&snap_lock);
	o = snap_find(pid, start, inst, false);
	allocated = o != NULL;
	if (o)
		n = live_snap_print(o->snap, flags, out);
	pthread_mutex_unlock(&snap_lock);
	if (n < 0)
		return (int)n;
	if (n > 0)
		return 0;
	/* s_show() of an empty snapshot: print_snapshot_help() */
	fprintf(out, "# tracer: nop\n#\n#\n# * Snapshot is %s *\n#\n"
		"# Snapshot commands:\n"
		"# echo 0 > snapshot : Clears and frees snapshot buffer\n"
		"# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n"
		"#                      Takes a snapshot of the main buffer.\n"
		"# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n"
		"#                      (Doesn't have to be '2' works with any number that\n"
		"#                       is not a '0' or '1')\n", allocated ? "allocated" : "freed");
	return 0;
}
