/* SPDX-License-Identifier: MIT */
/*
 * Attaching to any running process (issue 30 item 1): libutrace is loaded
 * into a program that never linked it, as debuggers do (gdb's "call
 * dlopen"), and its agent started; then the program runs on alone, at
 * full speed, with in-process probes.
 *
 *   1. Refuse early, with the way out: a process that another tracer
 *      holds (TracerPid: gdb, strace), a stopped one, one without a
 *      dynamic loader (static), no libutrace.so.0 file to load.
 *   2. PTRACE_SEIZE one thread (the main one unless it is gone) and
 *      PTRACE_INTERRUPT it; the others run on: the loader takes its own
 *      locks, and a thread holding malloc's or the loader's lock can let
 *      it go.  EPERM names Yama's ptrace_scope.
 *   3. Save its registers, its FPU/SIMD state (NT_X86_XSTATE) and signal
 *      mask.  A thread stopped in a system call (nanosleep, read) has
 *      rax = -ERESTART* and orig_rax = the call: the calls below run with
 *      orig_rax = -1 (the kernel must not back up *their* rip), and the
 *      saved registers put back make the kernel restart the system call
 *      as if a signal without a handler had come.
 *   4. Call dlopen(path, RTLD_NOW) (libc.so.6's, glibc >= 2.34; else
 *      __libc_dlopen_mode) and then libutrace's utrace__attach_start(rundir)
 *      on that thread: a fake return address below mmap_min_addr makes the
 *      end a SIGSEGV at it, below the red zone, 16-byte aligned.  The
 *      thread blocks all signals but the faults' meanwhile: those that
 *      come stay pending (or go to another thread), none lost or merged.
 *   5. Put everything back and PTRACE_DETACH.
 * Nothing is written over the program's code; only its stack below the
 * red zone holds the two strings for the time of the calls.
 */
#include <dirent.h>
#include <stddef.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "ctl-client.h"
#include "elfsyms.h"
#include "inject.h"
#include "rundir.h"

#ifndef PTRACE_GETSIGMASK
#define PTRACE_GETSIGMASK 0x420a
#define PTRACE_SETSIGMASK 0x420b
#endif
#ifndef NT_X86_XSTATE
#define NT_X86_XSTATE 0x202
#endif

/* where a call "returns": unmapped (below vm.mmap_min_addr) */
#define FAKE_RETURN 0x320UL
#define RED_ZONE 128
/* a call that takes longer is taken for a deadlock */
#define CALL_TIMEOUT_MS 20000

void utrace_find_libutrace(char *buf, size_t len, bool *found)
{
	static const char *const rel[] = { "../../lib", "../" UTRACE_LIBDIR_REL };
	char exe[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (found)
		*found = true;
	if (!buf || !len)
		return;
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				snprintf(buf, len, "%s/%s/libutrace.so.0", exe, rel[i]);
				if (access(buf, R_OK) == 0)
					return;
			}
		}
	}
	snprintf(buf, len, "%s/libutrace.so.0", UTRACE_LIBDIR);
	if (access(buf, R_OK) != 0) {
		snprintf(buf, len, "libutrace.so.0");
		if (found)
			*found = false;
	}
}

/* One mapped file of the process: where its symbols land. */
struct obj {
	char path[PATH_MAX];
	uint64_t start, off;
	bool found;
};

/* The first mapping of a file whose base name starts with 'prefix' (and
 * is followed by '.' or '-'), or whose path is 'exact'. */
static bool find_obj(pid_t pid, const char *prefix, const char *exact, struct obj *o)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	o->found = false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char *file = NULL, *base;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &off, &pos) < 3 || !pos)
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = 0;
		if (file[0] != '/')
			continue;
		base = strrchr(file, '/') + 1;
		if (exact ? strcmp(file, exact) != 0 :
		    strncmp(base, prefix, strlen(prefix)) != 0 ||
		    (base[strlen(prefix)] != '.' && base[strlen(prefix)] != '-'))
			continue;
		snprintf(o->path, sizeof(o->path), "%s", file);
		o->start = s;
		o->off = off;
		o->found = true;
		break;
	}
	fclose(f);
	return o->found;
}

/* The run-time address of one of names[] (the first found) in object o
 * of process pid; 0 when none. */
static uint64_t obj_sym(pid_t pid, const struct obj *o, const char *const *names, size_t n,
			const char **which)
{
	struct utrace__symtab t = { 0 };
	char path[PATH_MAX + 32];
	uint64_t bias, addr = 0;
	int fd;

	/* through the process's root: the file it mapped, in its mount
	 * namespace */
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, o->path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (utrace__elf_bias(fd, o->start, o->off, &bias) == 0 && utrace__symtab_load(fd, &t) == 0) {
		for (size_t i = 0; i < n && !addr; i++) {
			const struct utrace__sym *s = utrace__symtab_by_name(&t, names[i]);

			if (s && !s->ifunc && s->addr) {
				addr = s->addr + bias;
				if (which)
					*which = names[i];
			}
		}
	}
	utrace__symtab_free(&t);
	close(fd);
	return addr;
}

/* The st_value of 'name' in the ELF file open on fd; 0 when none. */
static uint64_t file_sym(int fd, const char *name)
{
	struct utrace__symtab t = { 0 };
	const struct utrace__sym *s;
	uint64_t v = 0;

	if (utrace__symtab_load(fd, &t) == 0 && (s = utrace__symtab_by_name(&t, name)))
		v = s->addr;
	utrace__symtab_free(&t);
	return v;
}

/* The sanitizer runtime the library at path needs that must be the first
 * library of a process (AddressSanitizer's, ThreadSanitizer's), or NULL:
 * loaded later, it kills the process ("ASan runtime does not come first"). */
static const char *needs_first(const char *path)
{
	/* gcc's libraries name the runtime (libasan.so); clang's link none
	 * and call its entry (__asan_init) */
	static const char *const rt[][2] = {
		{ "libasan.so", "libasan.so" }, { "libtsan.so", "libtsan.so" },
		{ "libhwasan.so", "libhwasan.so" }, { "__asan_init", "libasan.so" },
		{ "__tsan_init", "libtsan.so" }, { "__hwasan_init", "libhwasan.so" },
	};
	const char *found = NULL;
	struct stat st;
	char *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map != MAP_FAILED) {
			for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]) && !found; i++)
				if (memmem(map, (size_t)st.st_size, rt[i][0], strlen(rt[i][0])))
					found = rt[i][1];
			munmap(map, (size_t)st.st_size);
		}
	}
	close(fd);
	return found;
}

/* A field of /proc/PID/status ("TracerPid:"), or -1. */
static long status_field(pid_t pid, const char *name, char *text, size_t len)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name))) {
			char *p = line + strlen(name);

			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = 0;
			if (text)
				snprintf(text, len, "%s", p);
			v = strtol(p, NULL, 0);
			break;
		}
	fclose(f);
	return v;
}

static void comm_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(buf, len, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* The signals a fault raises (forced: never blocked during a call). */
static const int sync_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS };

/*
 * The C library's and the loader's code in the process: a thread stopped
 * there outside a system call may hold one of their locks (malloc's arena,
 * the loader's), and a dlopen() on it would wait for itself forever.
 */
struct ranges {
	uint64_t lo[16], hi[16];
	int n;
};

static void libc_text(pid_t pid, struct ranges *r)
{
	static const char *const names[] = { "libc.", "libc-", "ld-linux", "ld-", "libpthread",
					     "libdl." };
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	r->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && r->n < 16) {
		unsigned long long s, e;
		char perms[8], *file, *base;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &s, &e, perms, &pos) < 3 || !pos ||
		    perms[2] != 'x')
			continue;
		file = line + pos;
		file[strcspn(file, "\n")] = 0;
		base = strrchr(file, '/');
		if (!base)
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strncmp(base + 1, names[i], strlen(names[i]))) {
				r->lo[r->n] = s;
				r->hi[r->n++] = e;
				break;
			}
	}
	fclose(f);
}

/* The system calls a thread waits in while it holds none of the C
 * library's locks, as a rule: waiting for input, time, a child, a signal
 * or another thread. */
static bool waiting_call(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_readv: case SYS_pread64: case SYS_poll: case SYS_ppoll:
	case SYS_select: case SYS_pselect6: case SYS_epoll_wait: case SYS_epoll_pwait:
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_futex: case SYS_accept:
	case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg:
	case SYS_wait4: case SYS_waitid: case SYS_pause: case SYS_rt_sigsuspend:
	case SYS_rt_sigtimedwait: case SYS_msgrcv: case SYS_semop: case SYS_semtimedop:
	case SYS_io_getevents: case SYS_restart_syscall:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
#ifdef SYS_io_uring_enter
	case SYS_io_uring_enter:
#endif
		return true;
	default:
		return false;
	}
}

/* The system call thread tid of pid waits in (/proc/PID/task/TID/syscall),
 * or -1 (running, or not readable). */
static long task_syscall(pid_t pid, pid_t tid)
{
	char path[96], buf[64], *end;
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		nr = strtol(buf, &end, 10);
		if (end == buf)
			nr = -1;
	}
	fclose(f);
	return nr;
}

/* A live thread (not a zombie leader). */
static bool task_alive(pid_t pid, pid_t tid)
{
	char path[96], st[512], *p;
	bool alive = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(st, sizeof(st), f) && (p = strrchr(st, ')')) && p[1] && p[2])
		alive = p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

/* The thread to borrow: one waiting in a system call (it holds none of the
 * C library's locks, as a rule), the main one first; else the main one,
 * unless it has exited (a zombie leader whose other threads run on). */
static pid_t pick_thread(pid_t pid)
{
	char path[64];
	pid_t any = 0;
	DIR *d;
	struct dirent *de;

	if (task_alive(pid, pid) && waiting_call(task_syscall(pid, pid)))
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return pid;
	while ((de = readdir(d))) {
		long t = strtol(de->d_name, NULL, 10);

		if (t <= 0 || t == pid || !task_alive(pid, (pid_t)t))
			continue;
		if (waiting_call(task_syscall(pid, (pid_t)t))) {
			any = (pid_t)t;
			break;
		}
		if (!any && !task_alive(pid, pid))
			any = (pid_t)t;
	}
	closedir(d);
	return any ? any : pid;
}

/* Stopped in the C library or the loader, other than waiting in one of
 * those calls: malloc() holds its arena's lock around brk() and mmap()
 * too. */
static bool in_ranges(const struct ranges *r, uint64_t a)
{
	for (int i = 0; i < r->n; i++)
		if (a >= r->lo[i] && a < r->hi[i])
			return true;
	return false;
}

static bool in_libc(const struct ranges *r, const struct user_regs_struct *regs)
{
	if ((long long)regs->orig_rax >= 0 && waiting_call((long)regs->orig_rax))
		return false;
	return in_ranges(r, regs->rip);
}

/*
 * What tells one program of a process from the next one its execve()
 * brings: the auxiliary vector (the loader's, the vDSO's and the stack's
 * addresses, random with ASLR) and the 16 random bytes AT_RANDOM points
 * to, new at each exec.  An attach that meets an exec must notice it
 * wherever it falls: addresses looked up in the old program are wrong in
 * the new one, and an agent started in the old one is gone.
 */
struct image_id {
	uint64_t auxv[128];
	size_t len;
	unsigned char rnd[16];
	bool have;
};

static uint64_t auxv_get(const struct image_id *id, uint64_t type)
{
	for (size_t i = 0; i + 1 < id->len / 8; i += 2)
		if (id->auxv[i] == type)
			return id->auxv[i + 1];
	return 0;
}

static void image_id(pid_t pid, struct image_id *id)
{
	char path[64];
	uint64_t rnd;
	ssize_t n;
	int fd;

	memset(id, 0, sizeof(*id));
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, id->auxv, sizeof(id->auxv));
	close(fd);
	if (n <= 0)
		return;
	id->len = (size_t)n;
	id->have = true;
	rnd = auxv_get(id, AT_RANDOM);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if (rnd && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		if (pread(fd, id->rnd, sizeof(id->rnd), (off_t)rnd) != (ssize_t)sizeof(id->rnd))
			memset(id->rnd, 0, sizeof(id->rnd));
		close(fd);
	}
}

/* Process pid runs another program than the one 'was' names (it ran
 * execve() since); false when either is not known (gone, not readable). */
static bool image_changed(pid_t pid, const struct image_id *was)
{
	struct image_id now;

	if (!was->have)
		return false;
	image_id(pid, &now);
	return now.have && (now.len != was->len || memcmp(now.auxv, was->auxv, now.len) ||
			    memcmp(now.rnd, was->rnd, sizeof(now.rnd)));
}

/* The borrowed thread and what it had. */
struct victim {
	pid_t pid, tid;
	int memfd;
	struct user_regs_struct regs;
	unsigned char *xstate;
	struct iovec xiov;
	bool have_xstate, have_fp, have_mask;
	struct user_fpregs_struct fp;
	uint64_t sigmask;
	int held[8];               /* signals that came meanwhile */
	int nr_held;
	bool died;
	bool execd;                /* it ran execve(): a new program */
	bool exec_stop;            /* stopped at PTRACE_EVENT_EXEC */
	bool exec_stop_seen;       /* run to the entry from there once */
	struct image_id id;        /* the program looked up */
	const char *who;
};

static void hold(struct victim *v, int sig)
{
	for (int i = 0; i < v->nr_held; i++)
		if (v->held[i] == sig)
			return;
	if (v->nr_held < (int)(sizeof(v->held) / sizeof(v->held[0])))
		v->held[v->nr_held++] = sig;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * The borrowed thread ended, and the process lives on: another of its
 * threads ran execve(), which ends all the others before the new program
 * replaces the old (so wait, up to 2 s, to see which).  True when the
 * process runs a new program (v->execd set).
 */
static bool thread_execd(struct victim *v)
{
	char path[64], state[64];

	for (int i = 0; i < 400; i++) {
		snprintf(path, sizeof(path), "/proc/%d", (int)v->pid);
		state[0] = 0;
		if (access(path, F_OK) < 0 || status_field(v->pid, "State:", state,
							    sizeof(state)) < 0 ||
		    state[0] == 'Z' || state[0] == 'X')
			return false;
		if (image_changed(v->pid, &v->id)) {
			v->execd = true;
			return true;
		}
		usleep(5000);
	}
	return false;
}

/*
 * The thread could not be let go (PTRACE_DETACH: ESRCH): it is ending,
 * killed by another thread's execve() or the process's end, and stays a
 * zombie until we, its tracer, reap it; an execve() waits for that (the
 * kernel's de_thread()) holding the lock a new PTRACE_SEIZE takes: a
 * deadlock if we went on to attach again.  Reap it, waiting at most 2 s.
 */
static void reap(struct victim *v)
{
	int status;

	for (int i = 0; i < 400; i++) {
		pid_t r = waitpid(v->tid, &status, __WALL | WNOHANG);

		if (r == v->tid && (WIFEXITED(status) || WIFSIGNALED(status)))
			break;
		if (r == v->tid) {
			/* a stop after all: let it go */
			if (ptrace(PTRACE_DETACH, v->tid, NULL, NULL) == 0)
				break;
			continue;
		}
		if (r < 0 && errno != EINTR)
			break;
		usleep(5000);
	}
	v->died = true;
}

/* The borrowed thread, not yet seized, ends or its process runs a new
 * program within 100 ms. */
static bool thread_ending(struct victim *v)
{
	for (int i = 0; i < 20; i++) {
		if (!task_alive(v->pid, v->tid) || image_changed(v->pid, &v->id))
			return true;
		usleep(5000);
	}
	return false;
}

/* Wait for the thread's next stop, at most ms; 1 stopped (*status), 0
 * timed out, -1 gone (said). */
static int wait_stop(struct victim *v, int *status, int ms)
{
	uint64_t end = now_us() + (uint64_t)ms * 1000u;
	unsigned int step = 20;

	for (;;) {
		pid_t r = waitpid(v->tid, status, __WALL | WNOHANG);

		if (r == v->tid) {
			if (WIFSTOPPED(*status) &&
			    *status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
				/* what we looked up is gone with the old image */
				v->execd = true;
				v->exec_stop = true;
				return -1;
			}
			if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
				v->died = true;
				/* another thread's execve() kills the others:
				 * the process lives on, with a new program */
				if (thread_execd(v))
					return -1;
				fprintf(stderr, "%s: process %d ended while it was being attached to "
					"(%s %d)\n", v->who, (int)v->pid,
					WIFEXITED(*status) ? "exit status" : "signal",
					WIFEXITED(*status) ? WEXITSTATUS(*status) :
					WTERMSIG(*status));
				return -1;
			}
			return 1;
		}
		if (r < 0 && errno == ECHILD) {
			/* not ours any more: a leader released by another
			 * thread's execve() */
			v->died = true;
			if (thread_execd(v))
				return -1;
			fprintf(stderr, "%s: process %d: its thread %d ended while it was being "
				"attached to\n", v->who, (int)v->pid, (int)v->tid);
			return -1;
		}
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "%s: process %d: waitpid: %s\n", v->who, (int)v->pid,
				strerror(errno));
			return -1;
		}
		if (now_us() >= end)
			return 0;
		/* short steps: the process waits for us meanwhile */
		usleep(step);
		if (step < 200)
			step *= 2;
	}
}

static int mem_write(struct victim *v, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(v->memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

/* A string of the process (dlerror()'s), at most len - 1 bytes. */
static void mem_string(struct victim *v, uint64_t addr, char *buf, size_t len)
{
	ssize_t n = addr ? pread(v->memfd, buf, len - 1, (off_t)addr) : -1;

	buf[n > 0 ? n : 0] = 0;
}

/*
 * Call fn(a0, a1) on the borrowed thread, with the strings s0/s1 (when
 * not NULL) copied below its red zone and passed instead of a0/a1.
 * *ret is rax.  0, or -1 said (the registers are put back by the caller).
 */
static int remote_call(struct victim *v, uint64_t fn, const char *s0, uint64_t a0,
		       const char *s1, uint64_t a1, uint64_t *ret)
{
	struct user_regs_struct r = v->regs;
	uint64_t sp = v->regs.rsp - RED_ZONE, ra = FAKE_RETURN;
	uint64_t end = now_us() + CALL_TIMEOUT_MS * 1000ull;
	int status, w;

	if (s1) {
		sp -= strlen(s1) + 1;
		if (mem_write(v, sp, s1, strlen(s1) + 1) < 0)
			goto nomem;
		a1 = sp;
	}
	if (s0) {
		sp -= strlen(s0) + 1;
		if (mem_write(v, sp, s0, strlen(s0) + 1) < 0)
			goto nomem;
		a0 = sp;
	}
	sp &= ~(uint64_t)15;
	sp -= 8;                   /* as after a call: rsp + 8 aligned */
	if (mem_write(v, sp, &ra, sizeof(ra)) < 0)
		goto nomem;
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rax = 0;
	/* no system call to restart at the new rip */
	r.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, v->tid, NULL, &r) < 0 ||
	    ptrace(PTRACE_CONT, v->tid, NULL, NULL) < 0) {
		fprintf(stderr, "%s: process %d: ptrace: %s\n", v->who, (int)v->pid,
			strerror(errno));
		return -1;
	}
	for (;;) {
		int left = (int)((end - now_us()) / 1000u);
		int sig, event;

		w = wait_stop(v, &status, left > 0 ? left : 0);
		if (w < 0)
			return -1;
		if (w == 0) {
			fprintf(stderr, "%s: process %d: the loader did not return in %d s (a lock "
				"held by the stopped thread?); its thread is put back as it was, "
				"but the process may hang\n", v->who, (int)v->pid,
				CALL_TIMEOUT_MS / 1000);
			if (ptrace(PTRACE_INTERRUPT, v->tid, NULL, NULL) == 0)
				wait_stop(v, &status, 5000);
			return -1;
		}
		sig = WSTOPSIG(status);
		event = status >> 16;
		if (event == PTRACE_EVENT_STOP) {
			/* a group stop or our interrupt: go on */
			if (ptrace(PTRACE_CONT, v->tid, NULL, NULL) < 0)
				return -1;
			continue;
		}
		if (sig == SIGSEGV) {
			struct user_regs_struct now;

			if (ptrace(PTRACE_GETREGS, v->tid, NULL, &now) == 0 && now.rip == FAKE_RETURN) {
				*ret = now.rax;
				return 0;
			}
			fprintf(stderr, "%s: process %d: the call crashed (SIGSEGV at 0x%llx); the "
				"thread is put back as it was, but the process may be damaged\n",
				v->who, (int)v->pid, (unsigned long long)now.rip);
			return -1;
		}
		if (sig == SIGILL || sig == SIGBUS || sig == SIGFPE || sig == SIGSYS ||
		    sig == SIGTRAP) {
			fprintf(stderr, "%s: process %d: the call was stopped by %s%s; the thread is "
				"put back as it was\n", v->who, (int)v->pid, strsignal(sig),
				sig == SIGSYS ? " (a seccomp filter refuses a system call the "
				"loader makes)" : "");
			return -1;
		}
		/* someone else's signal: delivered after */
		hold(v, sig);
		if (ptrace(PTRACE_CONT, v->tid, NULL, NULL) < 0)
			return -1;
	}
nomem:
	fprintf(stderr, "%s: process %d: cannot write its stack (/proc/%d/mem): %s\n", v->who,
		(int)v->pid, (int)v->pid, strerror(errno));
	return -1;
}

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif

/*
 * A thread stopped inside a restartable sequence's critical section (rseq:
 * glibc registers one per thread; tcmalloc's per-CPU caches use them) has
 * been preempted, so the kernel would send it to the section's abort
 * handler when it next returns to user space; but our calls return to
 * user space outside the section, and there the kernel forgets it
 * (rseq_cs cleared), so the thread put back would finish its section as
 * if nothing had happened.  Abort it as the kernel does: rip = abort_ip,
 * rseq_cs = 0.
 */
static void rseq_abort(struct victim *v)
{
	struct {
		uint64_t ptr;
		uint32_t size, sig, flags, pad;
	} conf;
	struct {
		uint32_t version, flags;
		uint64_t start_ip, post_commit_offset, abort_ip;
	} cs;
	uint64_t csp = 0, zero = 0;

	if ((long long)v->regs.orig_rax >= 0 ||
	    ptrace(PTRACE_GET_RSEQ_CONFIGURATION, v->tid, (void *)sizeof(conf), &conf) <
		    (long)sizeof(conf) || !conf.ptr ||
	    pread(v->memfd, &csp, sizeof(csp), (off_t)(conf.ptr + 8)) != sizeof(csp) || !csp ||
	    pread(v->memfd, &cs, sizeof(cs), (off_t)csp) != sizeof(cs))
		return;
	if (v->regs.rip - cs.start_ip >= cs.post_commit_offset)
		return;
	if (mem_write(v, conf.ptr + 8, &zero, sizeof(zero)) == 0)
		v->regs.rip = cs.abort_ip;
}

/* Put back what the thread had; 0 or -1 said. */
static int restore(struct victim *v)
{
	int bad = 0;

	if (v->execd)
		return 0;              /* nothing of ours in the new image */
	if (v->have_xstate)
		bad |= ptrace(PTRACE_SETREGSET, v->tid, (void *)NT_X86_XSTATE, &v->xiov) < 0;
	else if (v->have_fp)
		bad |= ptrace(PTRACE_SETFPREGS, v->tid, NULL, &v->fp) < 0;
	if (v->have_mask)
		bad |= ptrace(PTRACE_SETSIGMASK, v->tid, (void *)sizeof(v->sigmask),
			      &v->sigmask) < 0;
	bad |= ptrace(PTRACE_SETREGS, v->tid, NULL, &v->regs) < 0;
	if (bad)
		fprintf(stderr, "%s: process %d: cannot put its thread %d back: %s\n", v->who,
			(int)v->pid, (int)v->tid, strerror(errno));
	return bad ? -1 : 0;
}

static int ptrace_refused(const char *who, pid_t pid, int e)
{
	char scope[16] = "";
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");

	if (f) {
		if (!fgets(scope, sizeof(scope), f))
			scope[0] = 0;
		scope[strcspn(scope, "\n")] = 0;
		fclose(f);
	}
	if (e == EPERM && scope[0] && strcmp(scope, "0") != 0)
		fprintf(stderr, "%s: process %d: ptrace is not allowed: "
			"/proc/sys/kernel/yama/ptrace_scope is %s (%s); run as root, or allow it "
			"with 'sysctl kernel.yama.ptrace_scope=0', or start the program under "
			"'utrace record'\n", who, (int)pid, scope,
			!strcmp(scope, "1") ? "only a parent may trace its children" :
			!strcmp(scope, "2") ? "only root may trace" : "nobody may trace");
	else if (e == EPERM)
		fprintf(stderr, "%s: process %d: ptrace is not allowed (EPERM: another user's "
			"process, a set-user-ID program, or no CAP_SYS_PTRACE in this container); "
			"run as root or start the program under 'utrace record'\n", who, (int)pid);
	else
		fprintf(stderr, "%s: process %d: cannot ptrace it: %s\n", who, (int)pid,
			strerror(e));
	return -1;
}

/* Checks that need no ptrace; 0 or -1 said. */
static int precheck(pid_t pid, const char *who)
{
	char path[64], text[64] = "", comm[32];
	long tracer;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(path, &st) < 0) {
		fprintf(stderr, "%s: no process %d\n", who, (int)pid);
		return -1;
	}
	if (pid == getpid()) {
		fprintf(stderr, "%s: process %d is this utrace itself\n", who, (int)pid);
		return -1;
	}
	tracer = status_field(pid, "TracerPid:", NULL, 0);
	if (tracer > 0) {
		comm_of((pid_t)tracer, comm, sizeof(comm));
		fprintf(stderr, "%s: process %d is being traced by process %ld (%s): one tracer at "
			"a time; detach it first (gdb 'detach', end strace), then try again\n", who,
			(int)pid, tracer, comm);
		return -1;
	}
	status_field(pid, "State:", text, sizeof(text));
	if (text[0] == 'T' || text[0] == 't') {
		fprintf(stderr, "%s: process %d is stopped (%s): continue it first (kill -CONT "
			"%d)\n", who, (int)pid, text, (int)pid);
		return -1;
	}
	if (text[0] == 'Z' || text[0] == 'X') {
		fprintf(stderr, "%s: process %d has ended (a zombie)\n", who, (int)pid);
		return -1;
	}
	/* its maps are readable under the same rule as ptrace (the kernel's
	 * PTRACE_MODE_READ): refused, PTRACE_SEIZE would be too */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ptrace_refused(who, pid, errno == EACCES ? EPERM : errno);
	close(fd);
	return 0;
}

/*
 * Stop the borrowed thread again (after a PTRACE_CONT): by our interrupt,
 * or by 'want' at 'addr' (a hardware breakpoint) when addr is not 0 (in
 * at most ms, else interrupted where it is), or by a signal (held).  0, 1
 * when it stopped at addr, -1 said.
 */
static int stop_again(struct victim *v, int want, uint64_t addr, int ms)
{
	int status, w;

	if (!addr && ptrace(PTRACE_INTERRUPT, v->tid, NULL, NULL) < 0)
		return -1;
	for (;;) {
		w = wait_stop(v, &status, addr ? ms : 5000);
		if (w < 0)
			return -1;
		if (w == 0) {
			if (addr) {
				/* it did not come there in time: take it
				 * where it is */
				if (ptrace(PTRACE_INTERRUPT, v->tid, NULL, NULL) < 0)
					return -1;
				addr = 0;
				continue;
			}
			fprintf(stderr, "%s: process %d did not stop in 5 s\n", v->who,
				(int)v->pid);
			return -1;
		}
		if (status >> 16 == PTRACE_EVENT_STOP && WSTOPSIG(status) != SIGTRAP) {
			fprintf(stderr, "%s: process %d was stopped (%s) as it was being attached "
				"to: continue it first\n", v->who, (int)v->pid,
				strsignal(WSTOPSIG(status)));
			return -1;
		}
		if (status >> 16 == PTRACE_EVENT_STOP)
			return 0;
		if (addr && WSTOPSIG(status) == want) {
			struct user_regs_struct r;

			if (ptrace(PTRACE_GETREGS, v->tid, NULL, &r) == 0 && r.rip == addr)
				return 1;
		}
		/* someone else's signal: the thread stays stopped with it, to
		 * be delivered at the detach */
		hold(v, WSTOPSIG(status));
		return 0;
	}
}

/* Executable code outside the C library and the loader. */
static bool program_code(pid_t pid, const struct ranges *libc, uint64_t a)
{
	char path[64], line[PATH_MAX + 128];
	bool yes = false;
	FILE *f;

	for (int i = 0; i < libc->n; i++)
		if (a >= libc->lo[i] && a < libc->hi[i])
			return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		char perms[8];

		if (sscanf(line, "%llx-%llx %7s", &s, &e, perms) == 3 && a >= s && a < e) {
			yes = perms[2] == 'x';
			break;
		}
	}
	fclose(f);
	return yes;
}

/*
 * The thread is in the C library and stays there (malloc() over and over,
 * with its arena's lock held now and then): find the return address into
 * the program on its stack (the first word above rsp that points into the
 * program's code just after a call instruction), put a hardware
 * breakpoint there (DR0: this thread only, no code written) and let the
 * thread run to it; the library's locks are let go by then.  0 (stopped
 * at it, or elsewhere after 1 s), -1 said.
 */
static int run_to_caller(struct victim *v, const struct ranges *libc)
{
	char path[64];
	uint64_t stack[1024], ret = 0;
	unsigned char code[8];
	size_t dr0 = offsetof(struct user, u_debugreg[0]);
	size_t dr7 = offsetof(struct user, u_debugreg[7]);
	long old0, old7;
	ssize_t n;
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)v->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, stack, sizeof(stack), (off_t)v->regs.rsp);
	for (ssize_t i = 0; n > 0 && i < n / 8 && !ret; i++) {
		uint64_t a = stack[i];

		if (a < 8 || pread(fd, code, sizeof(code), (off_t)(a - 8)) != (ssize_t)sizeof(code))
			continue;
		/* call rel32 (e8), call *r/m (ff /2): 2, 3 or 6 bytes */
		if (!(code[3] == 0xe8 || (code[6] == 0xff && (code[7] & 0x38) == 0x10) ||
		      (code[5] == 0xff && (code[6] & 0x38) == 0x10) ||
		      (code[2] == 0xff && (code[3] & 0x38) == 0x10)))
			continue;
		if (program_code(v->pid, libc, a))
			ret = a;
	}
	close(fd);
	if (!ret)
		return 0;
	errno = 0;
	old0 = ptrace(PTRACE_PEEKUSER, v->tid, (void *)dr0, NULL);
	old7 = ptrace(PTRACE_PEEKUSER, v->tid, (void *)dr7, NULL);
	if (errno || old7 & 0xff)
		return 0;              /* it uses the debug registers itself */
	if (ptrace(PTRACE_POKEUSER, v->tid, (void *)dr0, (void *)ret) < 0 ||
	    ptrace(PTRACE_POKEUSER, v->tid, (void *)dr7, (void *)1L) < 0)
		return 0;
	r = ptrace(PTRACE_CONT, v->tid, NULL, NULL) < 0 ? -1 : stop_again(v, SIGTRAP, ret, 1000);
	ptrace(PTRACE_POKEUSER, v->tid, (void *)dr7, (void *)old7);
	ptrace(PTRACE_POKEUSER, v->tid, (void *)dr0, (void *)old0);
	return r < 0 ? -1 : 0;
}

/*
 * The thread has just run execve() (stopped at PTRACE_EVENT_EXEC, or found
 * in a new program): its loader is still mapping and relocating the new
 * program's libraries, and a dlopen() now would meet a C library not yet
 * set up.  Run it to the program's entry point (AT_ENTRY: the loader is
 * done, the libraries' constructors have run), with a hardware breakpoint
 * (DR0, nothing written), at most ms; the new attach starts from there.
 * 1 there, 0 elsewhere after ms (or no entry known), -1 said.
 */
static int run_to_entry(struct victim *v, int ms)
{
	size_t dr0 = offsetof(struct user, u_debugreg[0]);
	size_t dr7 = offsetof(struct user, u_debugreg[7]);
	struct image_id id;
	uint64_t entry;
	int r;

again:
	image_id(v->pid, &id);
	entry = auxv_get(&id, AT_ENTRY);
	if (!entry)
		return 0;
	if (ptrace(PTRACE_POKEUSER, v->tid, (void *)dr0, (void *)entry) < 0 ||
	    ptrace(PTRACE_POKEUSER, v->tid, (void *)dr7, (void *)1L) < 0)
		return 0;
	v->exec_stop = false;
	r = ptrace(PTRACE_CONT, v->tid, NULL, NULL) < 0 ? -1 : stop_again(v, SIGTRAP, entry, ms);
	if (v->died)
		return -1;
	/* stopped inside execve(), the new program's auxiliary vector
	 * already there, before its exec event: that comes first */
	if (r < 0 && v->exec_stop && !v->exec_stop_seen) {
		v->exec_stop_seen = true;
		goto again;
	}
	ptrace(PTRACE_POKEUSER, v->tid, (void *)dr7, (void *)0L);
	ptrace(PTRACE_POKEUSER, v->tid, (void *)dr0, (void *)0L);
	return r;
}

/* One attach: 0 done, -1 said, 1 when the process ran execve() meanwhile
 * (nothing said; the thread, if it was held, is let go at its new
 * program's entry point), to be made again.  *id: the program attached
 * to. */
static int inject_once(pid_t pid, const char *who, struct utrace_inject_times *us,
		       struct image_id *id)
{
	static const char *const dlopen_names[] = { "dlopen", "__libc_dlopen_mode" };
	static const char *const err_names[] = { "dlerror" };
	static const char *const start_names[] = { "utrace__attach_start" };
	struct victim v = { .pid = pid, .memfd = -1, .who = who };
	char lib[PATH_MAX], rundir[256], err[PATH_MAX], path[64], msg[512];
	struct obj libc, ut;
	const char *which = NULL;
	uint64_t f_dlopen = 0, f_dlerror = 0, f_start = 0, ret = 0, t0 = 0, t2;
	uint64_t start_value = 0, bias = 0;
	struct ranges safe;
	int libfd = -1;
	bool have_lib, attached = false, pass_dir = true, starting = false;
	int status, w, r = -1, sig;
	struct stat st;

	if (us)
		memset(us, 0, sizeof(*us));
	if (precheck(pid, who) < 0)
		return -1;
	/* the program the addresses below are looked up in (an execve()
	 * between here and the stop is seen there) */
	image_id(pid, &v.id);
	/* inside an execve(): the new program's memory is in place but the
	 * kernel has not written its auxiliary vector yet (all zeros, no
	 * entry point); its maps have no C library.  Wait for the vector and
	 * attach again (t3021 met it: 'has no libc.so.6 mapped'). */
	if (v.id.have && !auxv_get(&v.id, AT_ENTRY)) {
		for (int i = 0; i < 1000 && v.id.have && !auxv_get(&v.id, AT_ENTRY); i++) {
			usleep(1000);
			image_id(pid, &v.id);
		}
		return 1;
	}
/* a refusal that comes from what the maps said: none when the process ran
 * a new program meanwhile (made again in that one) */
#define NEW_PROGRAM_OR_SAY(...) do { \
		if (image_changed(pid, &v.id)) \
			return 1; \
		fprintf(stderr, __VA_ARGS__); \
	} while (0)
	/* The library: this tool's own (a build tree's next to it) */
	utrace_find_libutrace(lib, sizeof(lib), &have_lib);
	/* as the process's maps will name it: no "..", no link */
	if (have_lib && realpath(lib, err))
		snprintf(lib, sizeof(lib), "%s", err);
	find_obj(pid, "libutrace", NULL, &ut);
	if (!ut.found && !have_lib) {
		fprintf(stderr, "%s: cannot find libutrace.so.0 to load into process %d: not next "
			"to this utrace nor in %s; install utrace (or run the build tree's)\n", who,
			(int)pid, UTRACE_LIBDIR);
		return -1;
	}
	if (!ut.found) {
		const char *san = needs_first(lib);
		char base[32];
		struct obj o;

		snprintf(base, sizeof(base), "%.*s", san ? (int)(strlen(san) - 3) : 0,
			 san ? san : "");
		if (san && !find_obj(pid, base, NULL, &o)) {
			NEW_PROGRAM_OR_SAY("%s: this utrace's %s is built with a sanitizer (%s), whose "
				"runtime must be a program's first library: it cannot be loaded "
				"into process %d, which has none\n", who, lib, san, (int)pid);
			return -1;
		}
		if (!find_obj(pid, "libc", NULL, &libc)) {
			/* a program just started (or exec'd) whose loader has
			 * not mapped the C library yet: run it to its entry
			 * point below, and attach again */
			if (auxv_get(&v.id, AT_BASE) && !image_changed(pid, &v.id)) {
				starting = true;
				goto seize;
			}
			NEW_PROGRAM_OR_SAY("%s: process %d has no libc.so.6 mapped (a static "
				"program, or not glibc): libutrace cannot be loaded into it; "
				"start it under 'utrace record' instead\n", who, (int)pid);
			return -1;
		}
		f_dlopen = obj_sym(pid, &libc, dlopen_names, 2, &which);
		f_dlerror = obj_sym(pid, &libc, err_names, 1, NULL);
		if (!f_dlopen) {
			NEW_PROGRAM_OR_SAY("%s: process %d: its C library %s has no dlopen nor "
				"__libc_dlopen_mode (glibc is needed)\n", who, (int)pid, libc.path);
			return -1;
		}
	}
	/* utrace__attach_start's place, found before the process stops:
	 * in the copy it has, or in ours (the bias known once loaded) */
	if (ut.found) {
		f_start = obj_sym(pid, &ut, start_names, 1, NULL);
		if (!f_start) {
			NEW_PROGRAM_OR_SAY("%s: process %d has %s loaded already, an older "
				"one without utrace__attach_start: start it with this "
				"utrace's library\n", who, (int)pid, ut.path);
			return -1;
		}
	} else {
		libfd = open(lib, O_RDONLY | O_CLOEXEC);
		start_value = libfd >= 0 ? file_sym(libfd, start_names[0]) : 0;
		if (!start_value) {
			fprintf(stderr, "%s: %s: %s\n", who, lib, libfd < 0 ? strerror(errno) :
				"not a libutrace with utrace__attach_start");
			goto out;
		}
	}
	/* The tool's runtime directory, where the agent must listen; a
	 * process of another user (we are root) keeps its own. */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0 || st.st_uid != geteuid())
		pass_dir = false;
	if (pass_dir && utrace__rundir(rundir, sizeof(rundir), true, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		goto out;
	}

seize:
	v.tid = pick_thread(pid);
	/* (an execve() meanwhile stops it at once: what we looked up, and
	 * the registers we saved, were the old program's) */
	if (ptrace(PTRACE_SEIZE, v.tid, NULL, (void *)PTRACE_O_TRACEEXEC) < 0) {
		long tracer = status_field(pid, "TracerPid:", NULL, 0);

		int e = errno;

		/* the thread picked is ending (EPERM for an exiting task):
		 * another thread's execve() ended it */
		if ((e == EPERM || e == ESRCH) && thread_ending(&v) && thread_execd(&v))
			goto out;
		if (e == EPERM && tracer > 0)
			precheck(pid, who);
		else
			ptrace_refused(who, pid, e);
		goto out;
	}
	attached = true;
	t0 = now_us();
	if (ptrace(PTRACE_INTERRUPT, v.tid, NULL, NULL) < 0) {
		if (!task_alive(pid, v.tid) && thread_execd(&v)) {
			v.died = true;
			goto out;
		}
		fprintf(stderr, "%s: process %d: PTRACE_INTERRUPT: %s\n", who, (int)pid,
			strerror(errno));
		goto out;
	}
	/* its first stop: our interrupt, or a signal arriving (held, and
	 * delivered at the end: the thread is stopped just the same) */
	for (;;) {
		w = wait_stop(&v, &status, 5000);
		if (w <= 0) {
			if (w == 0)
				fprintf(stderr, "%s: process %d did not stop in 5 s\n", who,
					(int)pid);
			goto out;
		}
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (sig == SIGTRAP)
				break;
			/* a group stop: stopped by a signal meanwhile */
			fprintf(stderr, "%s: process %d was stopped (%s) as it was being attached "
				"to: continue it first\n", who, (int)pid, strsignal(sig));
			goto out;
		}
		if (status >> 16 == 0) {
			hold(&v, sig);
			break;
		}
		ptrace(PTRACE_CONT, v.tid, NULL, NULL);
	}
	if (starting) {
		/* its loader at work: run it to the program's entry, then
		 * once more; a program whose loader is done and that has
		 * no libc.so.6 is refused */
		struct user_regs_struct regs;
		struct obj ld;
		int at = run_to_entry(&v, 2000);

		/* not at the entry yet but still in glibc's loader (it took
		 * more than 2 s on a busy machine, or a signal stopped it on
		 * the way): attach again, as after an exec, within the rounds
		 * (another loader never maps libc.so.6: refused at once) */
		if (at == 0 && !v.died && !v.execd && find_obj(pid, "ld-linux", NULL, &ld) &&
		    ptrace(PTRACE_GETREGS, v.tid, NULL, &regs) == 0) {
			libc_text(pid, &safe);
			if (in_ranges(&safe, regs.rip))
				at = 1;
		}
		if (at == 1) {
			r = 1;
		} else if (!v.died && !v.execd) {
			fprintf(stderr, "%s: process %d has no libc.so.6 mapped (a static "
				"program, or not glibc): libutrace cannot be loaded into it; "
				"start it under 'utrace record' instead\n", who, (int)pid);
		}
		goto out;
	}
	/* the program looked up is the one stopped: else it ran execve()
	 * before the stop */
	if (image_changed(pid, &v.id)) {
		v.execd = true;
		goto out;
	}
	/*
	 * A safe place to borrow the thread: waiting in a system call, or
	 * in code that is not the C library's nor the loader's.  Else let it run a
	 * little and stop it again, up to 200 times (about 0.1 s); then go
	 * on all the same (a thread that never leaves libc: memcpy()s, not
	 * malloc()s, most likely).  A thread stopped in malloc() with its
	 * arena's lock held hung the loader in 4 of 8 attaches to a
	 * malloc()-heavy program, and in 5 of 10 while only the thread's
	 * user code in libc was avoided (free() calls brk() with it held).
	 */
	libc_text(pid, &safe);
	for (int tries = 0; tries < 20 && !v.nr_held; tries++) {
		if (ptrace(PTRACE_GETREGS, v.tid, NULL, &v.regs) < 0 || !in_libc(&safe, &v.regs))
			break;
		if (us)
			us->retries++;
		if (ptrace(PTRACE_CONT, v.tid, NULL, NULL) < 0)
			break;
		usleep(50);
		if (stop_again(&v, SIGTRAP, 0, 0) < 0)
			goto out;
	}
	if (!v.nr_held && ptrace(PTRACE_GETREGS, v.tid, NULL, &v.regs) == 0 &&
	    in_libc(&safe, &v.regs)) {
		/* it lives there (malloc() over and over): run it to where
		 * the C library returns to the program */
		if (us)
			us->to_caller = true;
		if (run_to_caller(&v, &safe) < 0)
			goto out;
	}
	t0 = now_us();
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)v.tid);
	v.memfd = open(path, O_RDWR | O_CLOEXEC);
	if (v.memfd < 0) {
		/* the borrowed thread gone (another thread's execve() ends
		 * it), or a new program: attach again */
		if ((errno == ESRCH || errno == ENOENT) &&
		    (!task_alive(pid, v.tid) || image_changed(pid, &v.id))) {
			v.execd = true;
			goto out;
		}
		fprintf(stderr, "%s: process %d: cannot open %s: %s\n", who, (int)pid, path,
			strerror(errno));
		goto out;
	}
	if (ptrace(PTRACE_GETREGS, v.tid, NULL, &v.regs) < 0) {
		fprintf(stderr, "%s: process %d: cannot read its registers: %s\n", who, (int)pid,
			strerror(errno));
		goto out;
	}
	rseq_abort(&v);
	v.xiov.iov_len = 64 << 10;
	v.xstate = calloc(1, v.xiov.iov_len);
	v.xiov.iov_base = v.xstate;
	if (v.xstate && ptrace(PTRACE_GETREGSET, v.tid, (void *)NT_X86_XSTATE, &v.xiov) == 0)
		v.have_xstate = true;
	else if (ptrace(PTRACE_GETFPREGS, v.tid, NULL, &v.fp) == 0)
		v.have_fp = true;
	v.have_mask = ptrace(PTRACE_GETSIGMASK, v.tid, (void *)sizeof(v.sigmask),
			     &v.sigmask) == 0;
	/* Signals that come during the calls wait, pending, for the mask
	 * given back (or go to another thread): none is taken here, so none
	 * is lost, merged or reordered.  Not the faults: one blocked would
	 * be forced on the thread with its handler reset to the default. */
	if (v.have_mask) {
		uint64_t all = ~0ull;

		for (int k = 0; k < (int)(sizeof(sync_sigs) / sizeof(sync_sigs[0])); k++)
			all &= ~(1ull << (sync_sigs[k] - 1));
		if (ptrace(PTRACE_SETSIGMASK, v.tid, (void *)sizeof(all), &all) < 0)
			v.have_mask = false;
	}

	if (!ut.found) {
		uint64_t t1 = now_us();

		if (remote_call(&v, f_dlopen, lib, 0, NULL, 2 /* RTLD_NOW */, &ret) < 0)
			goto back;
		if (us)
			us->dlopen = (double)(now_us() - t1);
		if (!ret) {
			uint64_t e = 0;

			msg[0] = 0;
			if (f_dlerror && remote_call(&v, f_dlerror, NULL, 0, NULL, 0, &e) == 0)
				mem_string(&v, e, msg, sizeof(msg));
			fprintf(stderr, "%s: process %d: its loader (%s) refused %s: %s\n", who,
				(int)pid, which, lib, msg[0] ? msg : "no reason given");
			goto back;
		}
		if (!find_obj(pid, NULL, lib, &ut) ||
		    utrace__elf_bias(libfd, ut.start, ut.off, &bias) < 0) {
			fprintf(stderr, "%s: process %d: %s loaded but not mapped\n", who,
				(int)pid, lib);
			goto back;
		}
		f_start = start_value + bias;
	}
	t2 = now_us();
	if (remote_call(&v, f_start, pass_dir ? rundir : NULL, 0, NULL, 0, &ret) < 0)
		goto back;
	if (us)
		us->start = (double)(now_us() - t2);
	if ((int)ret < 0) {
		fprintf(stderr, "%s: process %d: its agent did not start (%s)\n", who, (int)pid,
			(int)ret == -EPERM ? "UTRACE_CONTROL=0 in its environment, or its runtime "
			"directory was refused" : strerror(-(int)ret));
		goto back;
	}
	r = 0;
back:
	if (restore(&v) < 0)
		r = -1;
out:
	/* it ran execve(): no call was made in the new program; let it
	 * go at its entry point, then attach again */
	if (v.execd && attached && !v.died)
		run_to_entry(&v, v.exec_stop ? 10000 : 2000);
	if (v.execd)
		r = 1;
	else if (r == 0)
		*id = v.id;
	if (libfd >= 0)
		close(libfd);
	if (v.memfd >= 0)
		close(v.memfd);
	free(v.xstate);
	if (attached && !v.died) {
		/* the first signal held back goes with the detach, the
		 * others after it */
		if (ptrace(PTRACE_DETACH, v.tid, NULL,
			   (void *)(long)(v.nr_held ? v.held[0] : 0)) < 0 && errno == ESRCH)
			reap(&v);
		for (int i = 1; i < v.nr_held; i++)
			syscall(SYS_tgkill, pid, v.tid, v.held[i]);
	}
	if (us && t0)
		us->stopped = (double)(now_us() - t0);
	return r;
#undef NEW_PROGRAM_OR_SAY
}

/* An attach is made again in the new program when the process runs
 * execve() while it is being attached to, or right after (its agent gone
 * before we spoke to it); a process that does so this many times in a
 * row is left alone. */
#define EXEC_ROUNDS 16

static int ran_new_program(pid_t pid, const char *who, int times)
{
	fprintf(stderr, "%s: process %d ran a new program (execve) %d times in a row while it "
		"was being attached to; try again\n", who, (int)pid, times);
	return -1;
}

/* The process exists and has not ended (not a zombie). */
static bool alive(pid_t pid)
{
	char state[64] = "";

	return status_field(pid, "State:", state, sizeof(state)) >= 0 && state[0] != 'Z' &&
	       state[0] != 'X';
}

/* utrace_inject() with the program attached to in *id; *execs += the
 * times it was made again in a new program. */
static int inject_id(pid_t pid, const char *who, struct utrace_inject_times *us,
		     struct image_id *id, int *execs)
{
	int r, rounds = 0;

	while ((r = inject_once(pid, who, us, id)) == 1 && ++rounds < EXEC_ROUNDS)
		;
	*execs += rounds;
	return r == 1 ? ran_new_program(pid, who, rounds) : r;
}

int utrace_inject(pid_t pid, const char *who, struct utrace_inject_times *us)
{
	struct image_id id;
	int execs = 0, r = inject_id(pid, who, us, &id, &execs);

	if (us)
		us->execs = execs;
	return r;
}

static const char elsewhere[] = "libutrace is loaded and its agent started, but it "
	"listens in another runtime directory (its UTRACE_RUNTIME_DIR or XDG_RUNTIME_DIR's, "
	"or that of the utrace that attached to it first): give utrace the same";

/*
 * Attach, then open the agent's socket.  The process may run execve()
 * between the two (a shell's child that is about to run its program):
 * the agent that was started is gone with its program (its socket file
 * left, nobody listening), so the new program is attached to again.
 * 0, or -1 said.
 */
static int inject_open(pid_t pid, const char *who, struct utrace_inject_times *us,
		       struct utrace__ctl **out)
{
	struct utrace_inject_times t;
	struct image_id id;
	char err[512];
	int execs = 0;

	if (!us)
		us = &t;
	for (int round = 0; round < EXEC_ROUNDS; round++) {
		int r;

		if (inject_id(pid, who, us, &id, &execs) < 0)
			return -1;
		us->execs = execs;
		r = utrace__ctl_open(pid, out, err, sizeof(err));
		if (!r)
			return 0;
		if (r == -ESRCH && image_changed(pid, &id)) {
			us->execs = ++execs;
			continue;
		}
		if (r == -ESRCH && !alive(pid))
			snprintf(err, sizeof(err), "process %d ended just after it was attached to",
				 (int)pid);
		else if (r == -ESRCH)
			snprintf(err, sizeof(err), "process %d: %s", (int)pid, elsewhere);
		fprintf(stderr, "%s: %s\n", who, err);
		return -1;
	}
	return ran_new_program(pid, who, execs);
}

int utrace_ctl_open_attach(pid_t pid, struct utrace__ctl **out, const char *who)
{
	char err[512];
	int r;

	r = utrace__ctl_open(pid, out, err, sizeof(err));
	if (r == -ESRCH && kill(pid, 0) == 0)
		return inject_open(pid, who, NULL, out);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		return -1;
	}
	return 0;
}

static const char attach_usage[] =
	"usage: utrace attach [-v] PID...\n"
	"\n"
	"Make running processes traceable that never linked libutrace: load\n"
	"libutrace.so into each with ptrace (same user under the machine's ptrace\n"
	"policy, or root) and start its agent, then let it run on.  'utrace ps',\n"
	"'list', 'enable', 'probe -p', 'record -p' and the mount then work on it\n"
	"('utrace probe -p' and 'utrace record -p --probe' attach by themselves).\n"
	"A process that is traceable already is left alone.\n"
	"\n"
	"  -v, --verbose   say how long each process was stopped\n"
	"  -h, --help      this text\n";

int cmd_attach(int argc, char **argv)
{
	bool verbose = false;
	int status = 0, i = 1;

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(attach_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = true;
			continue;
		}
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		return usage_error("attach", "unknown option '%s'", argv[i]);
	}
	if (i >= argc)
		return usage_error("attach", "%s", "no PID given");
	for (; i < argc; i++) {
		struct utrace__ctl *c = NULL;
		char err[512], *end;
		long pid = strtol(argv[i], &end, 10);
		struct utrace_inject_times us;
		char retries[96], execs[96];

		if (*end || end == argv[i] || pid <= 0 || pid > INT_MAX) {
			fprintf(stderr, "utrace attach: bad PID '%s'\n", argv[i]);
			status = 1;
			continue;
		}
		if (utrace__ctl_open_wait((pid_t)pid, &c, err, sizeof(err), 1000) == 0) {
			utrace__ctl_close(c);
			if (verbose)
				fprintf(stderr, "utrace attach: process %ld is traceable already\n",
					pid);
			continue;
		}
		if (inject_open((pid_t)pid, "utrace attach", &us, &c) < 0) {
			status = 1;
			continue;
		}
		utrace__ctl_close(c);
		snprintf(retries, sizeof(retries), "; stopped again %d times to leave the C "
			 "library%s", us.retries, us.to_caller ? ", then run to its caller" : "");
		if (!us.retries)
			retries[0] = 0;
		snprintf(execs, sizeof(execs), "; it ran a new program (execve) as it was attached "
			 "to: attached to that one (%d time%s)", us.execs, us.execs > 1 ? "s" : "");
		if (!us.execs)
			execs[0] = 0;
		if (verbose)
			fprintf(stderr, "utrace attach: process %ld: libutrace loaded, its agent "
				"started; stopped for %.0f us (dlopen %.0f us, agent start %.0f us)%s%s\n",
				pid, us.stopped, us.dlopen, us.start, retries, execs);
	}
	return status;
}
