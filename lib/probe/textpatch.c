// SPDX-License-Identifier: MIT
/*
 * Rewriting code while threads run it (textpatch.h has the protocol).
 *
 * Writes go through /proc/self/mem, which writes to read-only mappings
 * (as a debugger does) so the program's code and the trampolines stay
 * r-x: no page is ever writable and executable, and no mprotect() races
 * with a thread running on the page.
 *
 * The SIGTRAP handler looks up the int3's address in a table of hooks
 * that only grows (open addressing, no locks: signal handlers read it);
 * a trap at an address with no hook goes to the handler the program had.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fdhigh.h"
#include "probe-internal.h"
#include "textpatch.h"

/* the real-time signal that asks a thread where it is */
#define WHERE_SIG (SIGRTMAX - 2)

#define HOOKS 32768		/* addresses ever patched, per process
				 * (a probe, a jump-label site each) */
#define WHERE_MAX 1024		/* threads answering in one round */
#define POKE_TIMEOUT_NS (2 * 1000000000LL)

static struct {
	_Atomic uintptr_t addr;
	_Atomic(const struct utrace__int3_hook *) hook;
} hooks[HOOKS];

static pthread_mutex_t text_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_trap;
static int mem_fd = -1;
static dev_t mem_dev;
static ino_t mem_ino;
static pid_t inited_pid;
static int handlers_set;

/* the round of "where are you": ranges asked, answers */
static struct {
	_Atomic uint64_t gen;
	uintptr_t lo, hi;
	/* or, when set: inside one of these (sorted by address) */
	const struct utrace__poke *sites;
	size_t nsites;
	_Atomic uint32_t n;
	struct {
		_Atomic uint64_t gen;
		_Atomic pid_t tid;
		_Atomic int inside;
	} ans[WHERE_MAX];
} where;

void utrace__text_lock(void)
{
	pthread_mutex_lock(&text_mutex);
}

void utrace__text_unlock(void)
{
	pthread_mutex_unlock(&text_mutex);
}

void utrace__text_lock_reset(void)
{
	text_mutex = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

static size_t hook_slot(uintptr_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 52) & (HOOKS - 1);
}

static const struct utrace__int3_hook *hook_find(uintptr_t addr)
{
	size_t i = hook_slot(addr);

	for (size_t k = 0; k < HOOKS; k++, i = (i + 1) & (HOOKS - 1)) {
		uintptr_t a = atomic_load_explicit(&hooks[i].addr,
						   memory_order_acquire);

		if (!a)
			return NULL;
		if (a == addr)
			return atomic_load_explicit(&hooks[i].hook,
						    memory_order_acquire);
	}
	return NULL;
}

/* under text_mutex */
int utrace__int3_register(uintptr_t addr, const struct utrace__int3_hook *hook)
{
	size_t i = hook_slot(addr);

	for (size_t k = 0; k < HOOKS; k++, i = (i + 1) & (HOOKS - 1)) {
		uintptr_t a = atomic_load(&hooks[i].addr);

		if (a && a != addr)
			continue;
		/* the hook before the address: a reader that finds the
		 * address finds its hook */
		atomic_store_explicit(&hooks[i].hook, hook, memory_order_release);
		if (!a)
			atomic_store_explicit(&hooks[i].addr, addr,
					      memory_order_release);
		return 0;
	}
	return -ENOSPC;
}

void utrace__probe_chain(const struct sigaction *old, int sig, siginfo_t *si,
			 void *uc)
{
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction) {
			old->sa_sigaction(sig, si, uc);
			return;
		}
	} else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
		return;
	}
	/* the default action, as if we had never been here */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t at = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
	const struct utrace__int3_hook *h = NULL;

	/* an int3 reports SI_KERNEL; raise(SIGTRAP), single steps: not ours */
	if (si->si_code == SI_KERNEL)
		h = hook_find(at);
	if (h) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)h->fn(h->arg, uc);
		return;
	}
	utrace__probe_chain(&old_trap, sig, si, ctx);
}

/* Is pc past the first byte of the range asked, or of one of the sites? */
static int pc_inside(uintptr_t pc)
{
	size_t lo = 0, hi = where.nsites;

	if (!where.sites)
		return pc > where.lo && pc < where.hi;
	/* the last site that starts below pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (where.sites[mid].addr < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && pc < where.sites[lo - 1].addr + where.sites[lo - 1].len;
}

static void on_where(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uint64_t gen = atomic_load(&where.gen);
	int inside = pc_inside(ip);
	uint32_t i = atomic_fetch_add(&where.n, 1);
	int saved = errno;

	(void)sig;
	(void)si;
	if (i < WHERE_MAX) {
		atomic_store(&where.ans[i].tid, (pid_t)syscall(SYS_gettid));
		atomic_store(&where.ans[i].inside, inside);
		atomic_store(&where.ans[i].gen, gen);
	}
	errno = saved;
}

static int membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

static void sync_core(void)
{
	membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE);
}

static int trap_handler_ours(void);

int utrace__text_init(char *why, size_t why_len)
{
	struct stat st;
	int ret = 0;

	if (inited_pid == getpid()) {
		/* The descriptor is still ours?  A program that closes every
		 * descriptor (a daemon) and opens a file that gets the number
		 * must not have code bytes written into that file. */
		if (!fstat(mem_fd, &st) && st.st_dev == mem_dev && st.st_ino == mem_ino)
			return trap_handler_ours();
		mem_fd = -1;
	}
	/* a forked child: its own /proc/self/mem and membarrier state */
	if (mem_fd >= 0)
		close(mem_fd);
	mem_fd = utrace__fd_high(open("/proc/self/mem", O_RDWR | O_CLOEXEC));
	if (mem_fd < 0 || fstat(mem_fd, &st)) {
		ret = -errno;
		snprintf(why, why_len, "cannot open /proc/self/mem to write code: %s",
			 strerror(errno));
		if (mem_fd >= 0)
			close(mem_fd);
		mem_fd = -1;
		inited_pid = 0;
		return ret;
	}
	mem_dev = st.st_dev;
	mem_ino = st.st_ino;
	if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) ||
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED)) {
		ret = -errno;
		snprintf(why, why_len, "membarrier(SYNC_CORE) is not available: %s",
			 strerror(errno));
		return ret;
	}
	inited_pid = getpid();
	return trap_handler_ours();
}

/*
 * Ours in front of the program's SIGTRAP handler, again if the program
 * set its own since (its traps are handed on to it): the transient int3s
 * of a patch must reach us.
 */
static int trap_handler_ours(void)
{
	struct sigaction sa, cur;

	if (handlers_set && !sigaction(SIGTRAP, NULL, &cur) &&
	    (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_trap)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, &old_trap);
	handlers_set = 1;
	return 0;
}

int utrace__text_write(uintptr_t addr, const void *bytes, size_t len)
{
	ssize_t w = pwrite(mem_fd, bytes, len, (off_t)addr);

	if (w == (ssize_t)len)
		return 0;
	return w < 0 ? -errno : -EIO;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

/*
 * Where a thread asleep in the kernel will go on in user space: the last
 * field of /proc/self/task/TID/syscall ("nr args... sp pc", or "-1 sp pc"
 * when blocked outside a syscall); 0 when it is running.
 */
static uintptr_t sleeping_pc(pid_t tid)
{
	char path[64], buf[256], *sp;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	if (!strncmp(buf, "running", 7))
		return 0;
	sp = strrchr(buf, ' ');
	return sp ? (uintptr_t)strtoull(sp + 1, NULL, 0) : 0;
}

/*
 * One round: is any thread (this one aside) inside (lo, hi)?  1 yes or
 * unknown (a thread did not answer), 0 no.
 */
static int anyone_inside_(uintptr_t lo, uintptr_t hi);

static int anyone_inside(uintptr_t lo, uintptr_t hi)
{
	where.sites = NULL;
	return anyone_inside_(lo, hi);
}

/* Is any thread inside one of the sites' bytes (past the first)? */
static int anyone_inside_sites(const struct utrace__poke *p, size_t n)
{
	int r;

	where.sites = p;
	where.nsites = n;
	r = anyone_inside_(0, 0);
	where.sites = NULL;
	return r;
}

static int anyone_inside_(uintptr_t lo, uintptr_t hi)
{
	pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
	pid_t asked[WHERE_MAX];
	uint32_t nasked = 0;
	uint64_t gen;
	struct dirent *de;
	int64_t deadline;
	DIR *d;

	static int where_set;

	/* only where a probe's patch must wait for threads: the jump-label
	 * sites never ask, and a program's real-time signal stays its own */
	if (!where_set) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_where;
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		sigaction(WHERE_SIG, &sa, NULL);
		where_set = 1;
	}
	where.lo = lo;
	where.hi = hi;
	atomic_store(&where.n, 0);
	gen = atomic_fetch_add(&where.gen, 1) + 1;
	d = opendir("/proc/self/task");
	if (!d)
		return 1;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		uintptr_t pc;

		if (tid <= 0 || tid == self)
			continue;
		pc = sleeping_pc(tid);
		if (pc) {
			if (pc_inside(pc)) {
				closedir(d);
				return 1;
			}
			continue;
		}
		if (nasked == WHERE_MAX) {
			closedir(d);
			return 1;
		}
		if (syscall(SYS_tgkill, pid, tid, WHERE_SIG) == 0)
			asked[nasked++] = tid;
	}
	closedir(d);
	deadline = now_ns() + 200000000LL;
	for (uint32_t i = 0; i < nasked; i++) {
		int found = 0;

		while (!found) {
			uint32_t n = atomic_load(&where.n);

			for (uint32_t k = 0; k < n && k < WHERE_MAX; k++) {
				if (atomic_load(&where.ans[k].gen) != gen ||
				    atomic_load(&where.ans[k].tid) != asked[i])
					continue;
				if (atomic_load(&where.ans[k].inside))
					return 1;
				found = 1;
				break;
			}
			if (found)
				break;
			if (now_ns() > deadline) {
				/* blocked the signal, or exited: asleep? */
				uintptr_t pc = sleeping_pc(asked[i]);

				if (pc && !pc_inside(pc))
					break;
				char path[64];

				snprintf(path, sizeof(path), "/proc/self/task/%d",
					 (int)asked[i]);
				if (access(path, F_OK))
					break; /* gone */
				return 1;
			}
			nap(20000);
		}
	}
	return 0;
}

/* Steps 3 and 4: the tail, then the first byte. */
static int poke_rest(uintptr_t addr, const uint8_t *b, size_t len)
{
	int ret = utrace__text_write(addr + 1, b + 1, len - 1);

	if (ret)
		return ret;
	sync_core();
	ret = utrace__text_write(addr, b, 1);
	if (ret)
		return ret;
	sync_core();
	return 0;
}

/* Step 2 for up to @wait_ns: 1 when no thread is inside any more */
static int wait_outside(uintptr_t addr, size_t len, int64_t wait_ns)
{
	int64_t deadline = now_ns() + wait_ns;

	for (;;) {
		if (!anyone_inside(addr, addr + len))
			return 1;
		if (now_ns() > deadline)
			return 0;
		nap(1000000);
	}
}

int utrace__text_poke_start(uintptr_t addr, const void *bytes, size_t len,
			    const struct utrace__int3_hook *hook, int64_t wait_ns,
			    char *why, size_t why_len)
{
	static const uint8_t int3 = 0xcc;
	const uint8_t *b = bytes;
	int ret;

	if (hook && utrace__int3_register(addr, hook)) {
		snprintf(why, why_len, "too many patched addresses (%d)", HOOKS);
		return -ENOSPC;
	}
	if (len == 1) {
		ret = utrace__text_write(addr, b, 1);
		if (ret)
			goto failed;
		sync_core();
		return 0;
	}
	ret = utrace__text_write(addr, &int3, 1);
	if (ret)
		goto failed;
	sync_core();
	if (wait_ns >= 0 && !wait_outside(addr, len, wait_ns)) {
		snprintf(why, why_len, "a thread is inside the bytes at 0x%" PRIxPTR
			 " (or did not say where it is): the int3 stays until it leaves", addr);
		return -EINPROGRESS;
	}
	ret = poke_rest(addr, b, len);
	if (ret)
		goto failed;
	return 0;
failed:
	snprintf(why, why_len, "cannot write the code at 0x%" PRIxPTR ": %s",
		 addr, strerror(-ret));
	return -EPERM;
}

int utrace__text_poke_finish(uintptr_t addr, const void *bytes, size_t len, int64_t wait_ns,
			     char *why, size_t why_len)
{
	int ret;

	if (!wait_outside(addr, len, wait_ns))
		return -EINPROGRESS;
	ret = poke_rest(addr, bytes, len);
	if (ret) {
		snprintf(why, why_len, "cannot write the code at 0x%" PRIxPTR ": %s",
			 addr, strerror(-ret));
		return -EPERM;
	}
	return 0;
}

int utrace__text_poke(uintptr_t addr, const void *bytes, size_t len,
		      const struct utrace__int3_hook *hook, int maybe_inside,
		      char *why,
		      size_t why_len)
{
	uint8_t first = *(const volatile uint8_t *)addr;
	int ret = utrace__text_poke_start(addr, bytes, len, hook,
					  maybe_inside ? POKE_TIMEOUT_NS : -1, why, why_len);

	if (ret == -EINPROGRESS) {
		/* the first byte back: as it was */
		utrace__text_write(addr, &first, 1);
		sync_core();
		snprintf(why, why_len, "a thread stayed inside the bytes at 0x%" PRIxPTR " for 2 s",
			 addr);
		return -EBUSY;
	}
	return ret;
}

static int poke_many(struct utrace__poke *p, size_t n, const struct utrace__int3_hook *hook,
		     bool wait, char *why, size_t why_len);

int utrace__text_poke_many(struct utrace__poke *p, size_t n,
			   const struct utrace__int3_hook *hook,
			   char *why, size_t why_len)
{
	return poke_many(p, n, hook, false, why, why_len);
}

int utrace__text_poke_sleds(struct utrace__poke *p, size_t n,
			    const struct utrace__int3_hook *hook,
			    char *why, size_t why_len)
{
	return poke_many(p, n, hook, true, why, why_len);
}

static int poke_many(struct utrace__poke *p, size_t n, const struct utrace__int3_hook *hook,
		     bool wait, char *why, size_t why_len)
{
	static const uint8_t int3 = 0xcc;
	int64_t deadline;
	size_t i, k;
	int ret = 0;

	if (!n)
		return 0;
	for (i = 0; hook && i < n; i++) {
		if (utrace__int3_register(p[i].addr, hook)) {
			snprintf(why, why_len, "too many patched addresses (%d)", HOOKS);
			return -ENOSPC;
		}
	}
	for (i = 0; i < n; i++) {
		p[i].old = *(const volatile uint8_t *)p[i].addr;
		ret = utrace__text_write(p[i].addr, &int3, 1);
		if (ret)
			break;
	}
	if (ret) {
		/* nothing else was written: the first bytes back */
		if (i) {
			sync_core();
			for (k = 0; k < i; k++)
				utrace__text_write(p[k].addr, &p[k].old, 1);
			sync_core();
		}
		snprintf(why, why_len, "cannot write the code at 0x%" PRIxPTR ": %s",
			 p[i].addr, strerror(-ret));
		return -EPERM;
	}
	sync_core();
	deadline = now_ns() + POKE_TIMEOUT_NS;
	while (wait && anyone_inside_sites(p, n)) {
		if (now_ns() > deadline) {
			for (k = 0; k < n; k++)
				utrace__text_write(p[k].addr, &p[k].old, 1);
			sync_core();
			snprintf(why, why_len, "a thread stayed inside the patched sites for 2 s");
			return -EBUSY;
		}
		nap(1000000);
	}
	for (i = 0; i < n; i++)
		if (p[i].len > 1 && !ret)
			ret = utrace__text_write(p[i].addr + 1, p[i].bytes + 1, p[i].len - 1u);
	sync_core();
	for (i = 0; i < n; i++)
		if (!ret)
			ret = utrace__text_write(p[i].addr, p[i].bytes, 1);
	sync_core();
	if (ret) {
		snprintf(why, why_len, "cannot write the code: %s", strerror(-ret));
		return -EPERM;
	}
	return 0;
}

/* ---- executable memory near an address ---- */

#define CHUNK (64 * 1024)

static struct chunk {
	uintptr_t base;
	size_t used;
	struct chunk *next;
} *chunks;

static int near_enough(uintptr_t a, uintptr_t b)
{
	uintptr_t d = a > b ? a - b : b - a;

	return d < (1ull << 30); /* 1 GiB: its targets are then in reach */
}

void *utrace__text_alloc_near(uintptr_t near, size_t len)
{
	struct chunk *c;

	len = (len + 63) & ~(size_t)63;
	for (c = chunks; c; c = c->next)
		if (near_enough(c->base, near) && c->used + len <= CHUNK &&
		    near_enough(c->base + CHUNK, near))
			break;
	if (!c) {
		uintptr_t base = near & ~(uintptr_t)(CHUNK - 1);
		void *p = MAP_FAILED;

		/* outwards from the code, 1 MiB steps, up to 1 GiB away */
		for (long k = 1; k < 1024 && p == MAP_FAILED; k++) {
			for (int dir = -1; dir <= 1 && p == MAP_FAILED; dir += 2) {
				uintptr_t h = base + (uintptr_t)(dir * k) * (1 << 20);

				if (h < (1 << 20) || h >= (1ull << 47) - CHUNK)
					continue;
				p = mmap((void *)h, CHUNK, PROT_READ | PROT_EXEC,
					 MAP_PRIVATE | MAP_ANONYMOUS |
					 MAP_FIXED_NOREPLACE, -1, 0);
				if (p != MAP_FAILED && (uintptr_t)p != h) {
					/* an old kernel took it as a hint */
					munmap(p, CHUNK);
					p = MAP_FAILED;
				}
			}
		}
		if (p == MAP_FAILED)
			return NULL;
		c = calloc(1, sizeof(*c));
		if (!c) {
			munmap(p, CHUNK);
			return NULL;
		}
		c->base = (uintptr_t)p;
		c->next = chunks;
		chunks = c;
	}
	c->used += len;
	return (void *)(c->base + c->used - len);
}
