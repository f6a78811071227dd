/* SPDX-License-Identifier: MIT */
/*
 * The probe engine in the process (lib/probe/attach.c, textpatch.c,
 * read.c): probes at every instruction boundary of a few real functions
 * (this file, built -O2), hit counts, registers, results unchanged, 8
 * threads running while probes come and go, signal handlers, recursion,
 * fork, fault-safe reads, and the original bytes back after detach
 * (compared with the file).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <search.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include "engine.h"
#include "test.h"

/* ---- the workload: functions of several shapes, exported (dladdr1) ---- */

/* not inlined, and no call elided as pure or folded at build time */
#if defined(__clang__)
#define WORK __attribute__((noinline))
#else
#define WORK __attribute__((noipa))
#endif

WORK uint64_t w_sum(const uint32_t *a, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += a[i] * (uint64_t)(i | 1);
	return s;
}

WORK uint64_t w_hash(const char *p)
{
	uint64_t h = 1469598103934665603ull;

	while (*p)
		h = (h ^ (uint8_t)*p++) * 1099511628211ull;
	return h;
}

WORK int w_switch(int x)
{
	switch (x & 7) {
	case 0: return x * 3;
	case 1: return x + 11;
	case 2: return x ^ 0x55;
	case 3: return x - 7;
	case 4: return x << 2;
	case 5: return x >> 1;
	case 6: return ~x;
	default: return x;
	}
}

static volatile uint64_t fib_calls;
WORK uint64_t w_fib(unsigned int n);
/* real calls: gcc would turn half the recursion into a loop */
static uint64_t (*volatile fib_again)(unsigned int) = w_fib;

WORK uint64_t w_fib(unsigned int n)
{
	fib_calls++;
	return n < 2 ? n : fib_again(n - 1) + fib_again(n - 2);
}

WORK double w_poly(double x)
{
	return ((x * 1.5 + 2.25) * x - 0.125) * x + 3.0;
}

static volatile int sink;
static uint32_t arr[257];
static const char *const words[] = { "alpha", "kernel", "tracepoint",
				     "uprobe", "zydis", "" };

/* One round of the workload; a number that depends on every function. */
WORK uint64_t workload(int seed)
{
	uint64_t r = w_sum(arr, 257);

	for (int i = 0; i < 6; i++)
		r = r * 31 + w_hash(words[i]);
	for (int i = 0; i < 16; i++)
		r = r * 7 + (uint64_t)w_switch(seed + i);
	r += w_fib(10);
	r += (uint64_t)(w_poly((double)(seed & 15) / 4.0) * 1000.0);
	return r;
}

struct fn {
	const char *name;
	void *addr;
	size_t size;
};

static struct fn fns[] = {
	{ "w_sum", (void *)w_sum, 0 },
	{ "w_hash", (void *)w_hash, 0 },
	{ "w_switch", (void *)w_switch, 0 },
	{ "w_fib", (void *)w_fib, 0 },
	{ "w_poly", (void *)w_poly, 0 },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))

static void setup(void)
{
	for (int i = 0; i < 257; i++)
		arr[i] = (uint32_t)(i * 2654435761u);
	for (size_t i = 0; i < NFNS; i++) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;

		if (!dladdr1(fns[i].addr, &info, (void **)&sym, RTLD_DL_SYMENT) ||
		    !sym)
			TEST_FAIL("no symbol for %s (built with -rdynamic?)", fns[i].name);
		fns[i].size = sym->st_size;
	}
}

/* every instruction start of a function */
static size_t boundaries(const struct fn *f, uint32_t *offs, size_t max)
{
	size_t n;

	CHECK_INT(utrace__probe_decode_boundaries(f->addr, f->size,
			(uintptr_t)f->addr, offs, max, &n), ==, 0);
	return n;
}

static void count(void *data, const struct utrace_probe_regs *regs)
{
	(void)regs;
	atomic_fetch_add_explicit((_Atomic uint64_t *)data, 1,
				  memory_order_relaxed);
}

/* ---- the bytes of the file, to compare after detach ---- */

struct seg_find {
	uintptr_t addr;
	off_t off;
	char path[4096];
};

static int find_seg(struct dl_phdr_info *info, size_t size, void *data)
{
	struct seg_find *sf = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t v = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && sf->addr >= v &&
		    sf->addr < v + ph->p_filesz) {
			sf->off = (off_t)(sf->addr - v + ph->p_offset);
			snprintf(sf->path, sizeof(sf->path), "%s",
				 info->dlpi_name && info->dlpi_name[0] ?
				 info->dlpi_name : "/proc/self/exe");
			return 1;
		}
	}
	return 0;
}

static void same_as_file(const struct fn *f)
{
	struct seg_find sf = { (uintptr_t)f->addr, -1, "" };
	uint8_t buf[4096];
	int fd;

	dl_iterate_phdr(find_seg, &sf);
	CHECK(sf.off >= 0 && f->size <= sizeof(buf));
	fd = open(sf.path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_INT(pread(fd, buf, f->size, sf.off), ==, f->size);
	close(fd);
	if (memcmp(buf, f->addr, f->size))
		TEST_FAIL("%s differs from the file after detach", f->name);
}

/* ---- tests ---- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}


static uint64_t seen_di, seen_ip, seen_ret;

static void look(void *d, const struct utrace_probe_regs *r)
{
	(void)d;
	seen_di = r->di;
	seen_ip = r->ip;
	utrace__probe_read(&seen_ret, r->sp, 8);
	errno = EIO;	/* the program's errno comes back */
}

TEST(entry_probe_sees_the_arguments_and_registers)
{
	struct utrace__probe_site *s;
	char why[UTRACE_PROBE_WHY_MAX];
	void (*fn)(void *, const struct utrace_probe_regs *) = look;
	uint64_t expect;

	setup();
	expect = w_hash("abc");
	CHECK_INT(utrace__probe_attach((uintptr_t)w_hash, (uintptr_t)w_hash,
				       fns[1].size, fn, NULL, &s, why), ==, 0);
	if (!utrace__probe_is_jump(s))
		TEST_FAIL("w_hash's entry is a breakpoint: %s", why);
	errno = ENOENT;
	CHECK_INT(w_hash("abc"), ==, expect);
	CHECK_INT(errno, ==, ENOENT);
	CHECK_INT(seen_di, !=, 0);
	CHECK_STR((const char *)seen_di, "abc");
	CHECK_INT(seen_ip, ==, (uintptr_t)w_hash);
	/* the return address: inside this test */
	CHECK_INT(seen_ret, >, (uintptr_t)setup - (1 << 20));
	CHECK_INT(utrace__probe_hits(s), ==, 1);
	/* the code without our jump */
	{
		uint8_t code[4096], now[4096];

		CHECK_INT(utrace__probe_read_code((uintptr_t)w_hash, code,
						  fns[1].size), ==, 0);
		memcpy(now, (const void *)w_hash, fns[1].size);
		CHECK_INT(now[0], ==, 0xe9);
		CHECK_INT(code[0], !=, 0xe9);
		CHECK_INT(utrace__probe_detach(s), ==, 0);
		CHECK(!memcmp(code, (const void *)w_hash, fns[1].size));
	}
	same_as_file(&fns[1]);
}

static int data_word = 0x90909090;

TEST(bad_addresses_and_sizes_are_refused)
{
	struct utrace__probe_site *s;
	char why[UTRACE_PROBE_WHY_MAX];

	setup();
	/* data, not code */
	CHECK_INT(utrace__probe_attach((uintptr_t)&data_word, (uintptr_t)&data_word,
				       4, look, NULL, &s, why), ==, -EINVAL);
	CHECK(strstr(why, "not in executable code"));
	/* a size running off the end of the mappings */
	CHECK_INT(utrace__probe_attach((uintptr_t)w_hash, (uintptr_t)w_hash,
				       (size_t)1 << 40, look, NULL, &s, why), ==, -EINVAL);
	CHECK(strstr(why, "not in executable code"));
	/* not in the function */
	CHECK_INT(utrace__probe_attach((uintptr_t)w_sum, (uintptr_t)w_hash,
				       fns[1].size, look, NULL, &s, why), ==, -EINVAL);
	/* inside an instruction */
	{
		uint32_t offs[256];
		size_t n = boundaries(&fns[1], offs, 256);

		for (size_t k = 0; k + 1 < n; k++)
			if (offs[k + 1] - offs[k] > 1) {
				/* (the sum made at run time: an address w_hash+1
				 * in the code would be a jump target, targets.h) */
				volatile uintptr_t one = 1;

				CHECK_INT(utrace__probe_attach((uintptr_t)w_hash + offs[k] + one,
						(uintptr_t)w_hash, fns[1].size, look,
						NULL, &s, why), ==, -EINVAL);
				CHECK(strstr(why, "not an instruction boundary"));
				break;
			}
	}
	same_as_file(&fns[1]);
}

/*
 * A probe at each instruction of each function in turn: the workload's
 * result unchanged, and each probe's count, when 8 threads run the
 * workload, exactly 8 times its count with one.
 */
static uint64_t reference[64];
static uint64_t (*work)(int) = workload;
static _Atomic int bad_results;

static void *run_rounds(void *arg)
{
	long rounds = (long)arg;

	for (long r = 0; r < rounds; r++) {
		int seed = (int)(r % 64);

		if (work(seed) != reference[seed])
			atomic_fetch_add(&bad_results, 1);
	}
	return NULL;
}

static void run_threads(int n, long rounds)
{
	pthread_t t[16];

	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run_rounds, (void *)rounds);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* A probe at each boundary of each of @fns in turn, the workload run. */
static void probe_every_boundary(const struct fn *fs, size_t nfs, int *jumps,
				 int *int3s, int *refused)
{
	uint32_t offs[4096];

	for (int i = 0; i < 64; i++)
		reference[i] = work(i);
	for (size_t f = 0; f < nfs; f++) {
		size_t n = boundaries(&fs[f], offs, 4096);

		for (size_t k = 0; k < n; k++) {
			struct utrace__probe_site *s;
			char why[UTRACE_PROBE_WHY_MAX];
			_Atomic uint64_t c = 0;
			uint64_t one;
			uintptr_t a = (uintptr_t)fs[f].addr + offs[k];
			int ret = utrace__probe_attach(a, (uintptr_t)fs[f].addr,
					fs[f].size, count, (void *)&c, &s, why);

			if (ret) {
				/* int3 padding, ud2: nothing may go there */
				CHECK_INT(ret, ==, -EINVAL);
				(*refused)++;
				continue;
			}
			utrace__probe_is_jump(s) ? (*jumps)++ : (*int3s)++;
			run_rounds((void *)64L);
			one = atomic_load(&c);
			if (k == 0 && !one)
				TEST_FAIL("%s: the entry probe was never hit",
					  fs[f].name);
			atomic_store(&c, 0);
			run_threads(8, 64);
			if (atomic_load(&c) != 8 * one)
				TEST_FAIL("%s+0x%x: %" PRIu64 " hits with 8 threads, %" PRIu64 " with one",
					  fs[f].name, offs[k], (uint64_t)atomic_load(&c), one);
			CHECK_INT(utrace__probe_hits(s), ==, 9 * one);
			CHECK_INT(utrace__probe_detach(s), ==, 0);
		}
		same_as_file(&fs[f]);
	}
	CHECK_INT(atomic_load(&bad_results), ==, 0);
}

TEST(every_boundary_results_unchanged_counts_exact)
{
	int jumps = 0, int3s = 0, refused = 0;

	setup();
	probe_every_boundary(fns, NFNS, &jumps, &int3s, &refused);
	fprintf(stderr, "# %d jumps, %d breakpoints, %d refused\n", jumps,
		int3s, refused);
	CHECK_INT(jumps, >, 10);
}

/* libc's own code (Debian's -O2, CET's endbr64); not bsearch: an inline
 * function of stdlib.h */
static int by_ver(const void *a, const void *b)
{
	return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

static uint64_t libc_work(int seed)
{
	static const char *const vers[] = { "a1", "a2", "a10", "a20", "b1",
					    "b01", "b9", "c" };
	const char *key = vers[seed & 7];
	char buf[64], *save = NULL, *t;
	uint64_t r = (uint64_t)a64l("zz1.A") + (uint64_t)seed;
	const void *hit;

	r = r * 31 + (uint64_t)(strverscmp(vers[seed & 7], vers[(seed >> 3) & 7]) + 2);
	size_t nv = 8;

	hit = lfind(&key, vers, &nv, sizeof(vers[0]), by_ver);
	r = r * 31 + (uint64_t)(hit ? (const char *const *)hit - vers : 99);
	snprintf(buf, sizeof(buf), "x,%d,,y z,%d", seed, seed * 7);
	for (t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
		r = r * 31 + (uint64_t)t[0];
	return r;
}

TEST(every_boundary_of_libc_functions)
{
	struct fn lf[] = {
		{ "a64l", (void *)a64l, 0 },
		{ "strverscmp", (void *)strverscmp, 0 },
		{ "lfind", (void *)lfind, 0 },
		{ "strtok_r", (void *)strtok_r, 0 },
	};
	int jumps = 0, int3s = 0, refused = 0;

	for (size_t i = 0; i < sizeof(lf) / sizeof(lf[0]); i++) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;

		CHECK(dladdr1(lf[i].addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
		lf[i].size = sym->st_size;
	}
	work = libc_work;
	probe_every_boundary(lf, sizeof(lf) / sizeof(lf[0]), &jumps, &int3s,
			     &refused);
	fprintf(stderr, "# libc: %d jumps, %d breakpoints, %d refused\n",
		jumps, int3s, refused);
	CHECK_INT(jumps, >, 10);
}

static _Atomic int stop;

/*
 * Each thread runs rounds of the workload, with a short sleep now and
 * then: 8 threads that never sleep on 2 cores make each jump's attach
 * wait for the scheduler to run every one of them (tens of ms), and the
 * 10,000 cycles would take many minutes; the sleeps also put threads
 * inside system calls while the code changes.
 */
static void *spin(void *arg)
{
	(void)arg;
	for (long i = 0; !atomic_load(&stop); i++) {
		run_rounds((void *)1L);
		if (i % 8 == 7) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

TEST(attach_detach_10000_times_under_8_threads)
{
	uint32_t offs[1024];
	uintptr_t sites[4096];
	size_t fn_of[4096], ns = 0;
	pthread_t t[8];
	_Atomic uint64_t c = 0;
	const char *env = getenv("PROBE_CYCLES");
	double tj[2] = { 0, 0 }, ti[2] = { 0, 0 };
	int nj = 0, ni = 0;
	long cycles = env ? atol(env) : 10000;

	setup();
	for (int i = 0; i < 64; i++)
		reference[i] = workload(i);
	for (size_t f = 0; f < NFNS; f++) {
		size_t n = boundaries(&fns[f], offs, 1024);

		for (size_t k = 0; k < n && ns < 4096; k++) {
			char why[UTRACE_PROBE_WHY_MAX];
			uintptr_t a = (uintptr_t)fns[f].addr + offs[k];

			if (utrace__probe_decode_check(fns[f].addr, fns[f].size,
					(uintptr_t)fns[f].addr, a, why) < 0)
				continue;
			fn_of[ns] = f;
			sites[ns++] = a;
		}
	}
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	for (long i = 0; i < cycles; i++) {
		struct utrace__probe_site *s;
		char why[UTRACE_PROBE_WHY_MAX];
		size_t k = (size_t)(i * 7919) % ns;
		const struct fn *f = &fns[fn_of[k]];
		double t0 = now_ns(), t1;
		int ret = utrace__probe_attach(sites[k], (uintptr_t)f->addr,
					       f->size, count, (void *)&c, &s, why);

		if (ret)
			TEST_FAIL("attach %s+0x%lx: %s", f->name,
				  (unsigned long)(sites[k] - (uintptr_t)f->addr), why);
		t1 = now_ns();
		if (utrace__probe_is_jump(s))
			tj[0] += t1 - t0, nj++;
		else
			ti[0] += t1 - t0, ni++;
		CHECK_INT(utrace__probe_detach(s), ==, 0);
		t0 = now_ns();
		(ni + nj) & 1 ? (tj[1] += t0 - t1) : (ti[1] += t0 - t1);
	}
	fprintf(stderr, "# attach: %d jumps %.0f us, %d breakpoints %.0f us; detach %.0f us\n",
		nj, nj ? tj[0] / nj / 1e3 : 0, ni, ni ? ti[0] / ni / 1e3 : 0,
		(tj[1] + ti[1]) / (nj + ni) / 1e3);
	atomic_store(&stop, 1);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	CHECK_INT(atomic_load(&bad_results), ==, 0);
	for (size_t f = 0; f < NFNS; f++)
		same_as_file(&fns[f]);
	fprintf(stderr, "# %ld attach/detach cycles, %" PRIu64 " hits\n",
		cycles, (uint64_t)atomic_load(&c));
}

static struct utrace__probe_site *sig_site;

static void on_usr1(int sig)
{
	(void)sig;
	sink = w_switch(sink + 3);
}

TEST(a_probe_hit_inside_a_signal_handler)
{
	_Atomic uint64_t c = 0;
	char why[UTRACE_PROBE_WHY_MAX];

	setup();
	signal(SIGUSR1, on_usr1);
	CHECK_INT(utrace__probe_attach((uintptr_t)w_switch, (uintptr_t)w_switch,
				       fns[2].size, count, (void *)&c,
				       &sig_site, why), ==, 0);
	for (int i = 0; i < 100; i++)
		raise(SIGUSR1);
	CHECK_INT(atomic_load(&c), ==, 100);
	CHECK_INT(utrace__probe_detach(sig_site), ==, 0);
}

/* a handler that calls the probed function: its own hits are misses */
static void recurse(void *data, const struct utrace_probe_regs *regs)
{
	(void)regs;
	atomic_fetch_add((_Atomic uint64_t *)data, 1);
	sink = (int)w_fib(3); /* each entry a miss */
}

TEST(recursion_counts_every_call_and_a_hit_in_a_handler_is_a_miss)
{
	_Atomic uint64_t c = 0;
	struct utrace__probe_site *s;
	char why[UTRACE_PROBE_WHY_MAX];

	uint64_t calls, inner;

	setup();
	fib_calls = 0;
	w_fib(3);
	inner = fib_calls;	/* the calls of the handler's w_fib(3) */
	CHECK_INT(utrace__probe_attach((uintptr_t)w_fib, (uintptr_t)w_fib,
				       fns[3].size, recurse, (void *)&c, &s,
				       why), ==, 0);
	fib_calls = 0;
	CHECK_INT(w_fib(15), ==, 610);
	/* fib(n) makes 2 fib(n+1) - 1 calls; each a hit, each hit's own
	 * w_fib(3) calls all misses */
	calls = 2 * 987 - 1;
	CHECK_INT(fib_calls, ==, calls + calls * inner);
	CHECK_INT(atomic_load(&c), ==, calls);
	CHECK_INT(utrace__probe_hits(s), ==, calls);
	CHECK_INT(utrace__probe_misses(s), ==, calls * inner);
	CHECK_INT(utrace__probe_detach(s), ==, 0);
}

TEST(a_probe_on_a_call_site)
{
	/* the first call instruction in workload(): a jump since issue 30
	 * (its copy pushes the return address past the jump; it was an
	 * int3) */
	struct fn wf = { "workload", (void *)workload, 0 };
	uint32_t offs[512];
	_Atomic uint64_t c = 0;
	char why[UTRACE_PROBE_WHY_MAX];
	struct utrace__probe_site *s = NULL;
	size_t n;
	Dl_info info;
	const ElfW(Sym) *sym;

	setup();
	CHECK(dladdr1((void *)workload, &info, (void **)&sym, RTLD_DL_SYMENT));
	wf.size = sym->st_size;
	for (int i = 0; i < 64; i++)
		reference[i] = workload(i);
	n = boundaries(&wf, offs, 512);
	for (size_t k = 0; k < n; k++) {
		const uint8_t *p = (const uint8_t *)workload + offs[k];

		if (*p != 0xe8)
			continue;
		CHECK_INT(utrace__probe_attach((uintptr_t)p, (uintptr_t)workload,
				wf.size, count, (void *)&c, &s, why), ==, 0);
		break;
	}
	CHECK(s);
	CHECK(utrace__probe_is_jump(s));
	run_threads(4, 64);
	CHECK_INT(atomic_load(&bad_results), ==, 0);
	CHECK_INT(atomic_load(&c), ==, 4 * 64);
	CHECK_INT(utrace__probe_detach(s), ==, 0);
	same_as_file(&wf);
}

TEST(fork_child_keeps_the_probe_and_can_detach)
{
	_Atomic uint64_t c = 0;
	struct utrace__probe_site *s;
	char why[UTRACE_PROBE_WHY_MAX];
	int status;
	pid_t pid;

	setup();
	CHECK_INT(utrace__probe_attach((uintptr_t)w_poly, (uintptr_t)w_poly,
				       fns[4].size, count, (void *)&c, &s,
				       why), ==, 0);
	pid = fork();
	if (pid == 0) {
		int ok = w_poly(2.0) == 23.75 && atomic_load(&c) == 1 &&
			 utrace__probe_detach(s) == 0 && w_poly(1.0) == 6.625 &&
			 atomic_load(&c) == 1;

		_exit(ok ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the parent's probe is still there */
	CHECK(w_poly(2.0) == 23.75);
	CHECK_INT(atomic_load(&c), ==, 1);
	CHECK_INT(utrace__probe_detach(s), ==, 0);
	same_as_file(&fns[4]);
}

TEST(reads_never_fault)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char buf[64];
	uint64_t v = 0x1122334455667788ull, w = 0;
	double t0, t1, t2;
	int i;

	CHECK(p != MAP_FAILED);
	CHECK_INT(mprotect(p + pg, pg, PROT_NONE), ==, 0);
	CHECK_INT(utrace__probe_read(&w, (uintptr_t)&v, 8), ==, 8);
	CHECK_INT(w, ==, v);
	CHECK_INT(utrace__probe_read(buf, 0, 8), ==, 0);
	CHECK_INT(utrace__probe_read(buf, 16, 8), ==, 0);
	/* 13 bytes before the hole, 32 asked */
	memset(p + pg - 13, 'x', 13);
	CHECK_INT(utrace__probe_read(buf, (uintptr_t)(p + pg - 13), 32), ==, 13);
	/* a string crossing into the hole: -EFAULT, buf empty */
	CHECK_INT(utrace__probe_read_str(buf, (uintptr_t)(p + pg - 13), 64), ==, -EFAULT);
	CHECK_STR(buf, "");
	/* one ending just before it */
	p[pg - 1] = 0;
	CHECK_INT(utrace__probe_read_str(buf, (uintptr_t)(p + pg - 13), 64), ==, 13);
	CHECK_STR(buf, "xxxxxxxxxxxx");
	CHECK_INT(utrace__probe_read_str(buf, (uintptr_t)(p + pg - 13), 5), ==, 5);
	CHECK_STR(buf, "xxxx");
	CHECK_INT(utrace__probe_read_str(buf, 0, 5), ==, -EFAULT);
	/* the word-at-a-time copy: every length, start and limit, the NUL
	 * anywhere in a word, strings ending at the page's last byte */
	for (int len = 0; len < 40; len++)
		for (int at = 0; at < 9; at++)
			for (int max = 1; max < 48; max += 3) {
				char *src = p + pg - 1 - len - at, want[64];
				long n, wn = len + 1 <= max ? len + 1 : max;

				memset(p + pg - 64, '#', 64);
				for (int k = 0; k < len; k++)
					src[k] = (char)('a' + (k + at) % 26);
				src[len] = 0;
				memcpy(want, src, (size_t)wn);
				want[wn - 1] = 0;
				memset(buf, '@', sizeof(buf));
				n = utrace__probe_read_str(buf, (uintptr_t)src, (size_t)max);
				if (n != wn || strcmp(buf, want)) {
					printf("# read_str len %d at %d max %d: %ld '%s'\n", len, at,
					       max, n, buf);
					CHECK(0);
				}
			}
	memset(p + pg - 64, 'y', 64);
	CHECK_INT(utrace__probe_read_str(buf, (uintptr_t)(p + pg - 40), 64), ==, -EFAULT);
	CHECK_INT(utrace__probe_read_str(buf, (uintptr_t)(p + pg - 8), 64), ==, -EFAULT);
	/* the program's own SIGSEGV still works: a real fault kills */
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		*(volatile char *)(p + pg) = 1;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	/* killed by it (or, under ASan, reported by ASan's handler: exit 1) */
	CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
	      (WIFEXITED(status) && WEXITSTATUS(status) != 0));
	/* cost: 8 bytes, vs process_vm_readv */
	t0 = now_ns();
	for (i = 0; i < 100000; i++)
		utrace__probe_read(&w, (uintptr_t)&v, 8);
	t1 = now_ns();
	for (i = 0; i < 100000; i++) {
		struct iovec l = { &w, 8 }, r = { &v, 8 };

		process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	}
	t2 = now_ns();
	fprintf(stderr, "# utrace__probe_read 8 bytes: %.1f ns; process_vm_readv: %.1f ns\n",
		(t1 - t0) / 1e5, (t2 - t1) / 1e5);
	munmap(p, 2 * pg);
}

/* a handler that wipes every vector register (xmm, and ymm with AVX) */
static void clobber_simd(void *data, const struct utrace_probe_regs *regs)
{
	(void)regs;
	atomic_fetch_add((_Atomic uint64_t *)data, 1);
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("vzeroall" ::: "xmm0", "xmm1", "xmm2", "xmm3",
				 "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
				 "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
				 "xmm15");
	else
		__asm__ volatile("pxor %%xmm0,%%xmm0; pxor %%xmm1,%%xmm1\n"
				 "pxor %%xmm2,%%xmm2; pxor %%xmm3,%%xmm3"
				 ::: "xmm0", "xmm1", "xmm2", "xmm3");
}

/*
 * A function that keeps its argument in %xmm5 across a few integer
 * instructions (whatever the compiler): a probe between them whose
 * handler wipes the vector registers breaks it unless the state is saved.
 */
__asm__(".text\n"
	".globl simd_keep\n"
	".type simd_keep, @function\n"
	"simd_keep:\n"
	"	movq %rdi, %xmm5\n"
	"	mov %rdi, %rax\n"
	"	add $1, %rax\n"
	"	imul $3, %rax, %rax\n"
	"	nopl 0(%rax)\n"
	"	movq %xmm5, %rax\n"
	"	ret\n"
	".size simd_keep, .-simd_keep\n"
	".previous\n");
uint64_t simd_keep(uint64_t x);

/* Probes at every boundary of @f with the wiping handler: how many
 * changed a result (of @placed probes). */
static int wrong_at_boundaries(const struct fn *f, unsigned int flags,
			       int *placed)
{
	uint32_t offs[256];
	size_t n = boundaries(f, offs, 256);
	int wrong = 0;

	*placed = 0;
	for (size_t k = 0; k < n; k++) {
		struct utrace__probe_site *s;
		char why[UTRACE_PROBE_WHY_MAX];
		_Atomic uint64_t c = 0;
		double expect[8], got[8];

		for (int i = 0; i < 8; i++)
			expect[i] = f->addr == (void *)w_poly ?
				    w_poly(i * 0.75 - 2) :
				    (double)simd_keep(1000 + i);
		if (utrace__probe_attach_flags((uintptr_t)f->addr + offs[k],
				(uintptr_t)f->addr, f->size, flags,
				clobber_simd, (void *)&c, &s, why))
			continue;
		for (int i = 0; i < 8; i++)
			got[i] = f->addr == (void *)w_poly ?
				 w_poly(i * 0.75 - 2) :
				 (double)simd_keep(1000 + i);
		CHECK_INT(utrace__probe_detach(s), ==, 0);
		(*placed)++;
		if (memcmp(expect, got, sizeof(got)))
			wrong++;
	}
	return wrong;
}

TEST(save_simd_keeps_the_vector_registers)
{
	struct fn keep = { "simd_keep", (void *)simd_keep, 0 };
	const ElfW(Sym) *sym;
	Dl_info info;
	int placed, without, with;

	setup();
	CHECK(dladdr1((void *)simd_keep, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	keep.size = sym->st_size;
	without = wrong_at_boundaries(&keep, 0, &placed);
	with = wrong_at_boundaries(&keep, UTRACE_PROBE_SAVE_SIMD, &placed);
	fprintf(stderr, "# simd_keep: %d probes; a handler wiping SIMD broke %d without UTRACE_PROBE_SAVE_SIMD, %d with it\n",
		placed, without, with);
	CHECK_INT(placed, >=, 5);
	/* the test can fail: without saving, the handler does break it */
	CHECK_INT(without, >, 0);
	CHECK_INT(with, ==, 0);
	without = wrong_at_boundaries(&fns[4], 0, &placed);
	with = wrong_at_boundaries(&fns[4], UTRACE_PROBE_SAVE_SIMD, &placed);
	fprintf(stderr, "# w_poly: %d probes; broken %d without, %d with\n",
		placed, without, with);
	CHECK_INT(with, ==, 0);
	same_as_file(&fns[4]);
}

/*
 * flags_fn(f): sets the flags to f (popfq), a 5-byte nop (room for the
 * jump), then returns the flags as they are: the trampoline must give back
 * the status flags and DF that a probe at the nop found.
 */
uint64_t flags_fn(uint64_t f);
extern const char flags_fn_at[];
__asm__(".text\n"
	".globl flags_fn\n"
	".type flags_fn,@function\n"
	"flags_fn:\n"
	"	push %rdi\n"
	"	popfq\n"
	".globl flags_fn_at\n"
	"flags_fn_at:\n"
	"	nopl 0x0(%rax,%rax,1)\n"
	"	pushfq\n"
	"	pop %rax\n"
	"	cld\n"
	"	ret\n"
	".size flags_fn, .-flags_fn\n");

static void flags_clobber(void *data, const struct utrace_probe_regs *regs)
{
	uint64_t f;

	(void)data;
	/* what the trampoline saw */
	*(uint64_t *)data = regs->flags;
	/* every status flag the other way round from what it was */
	__asm__ __volatile__("pushfq\n\tpop %0" : "=r"(f));
	f ^= 0x8d5;
	__asm__ __volatile__("push %0\n\tpopfq" : : "r"(f) : "cc");
}

TEST(the_flags_come_back_after_a_hit)
{
	/* CF PF AF ZF SF DF OF */
	const uint64_t mask = 0x1 | 0x4 | 0x10 | 0x40 | 0x80 | 0x400 | 0x800;
	const uint64_t tries[] = { 0, mask, 0x800, 0x400, 0x1 | 0x40, 0x4 | 0x80 | 0x10,
				   0x800 | 0x1, mask & ~0x400ul };
	struct utrace__probe_site *s;
	char why[UTRACE_PROBE_WHY_MAX];
	const ElfW(Sym) *sym;
	uint64_t seen = 0;
	Dl_info info;

	setup();
	CHECK(dladdr1((void *)flags_fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	CHECK_INT(utrace__probe_attach((uintptr_t)flags_fn_at, (uintptr_t)flags_fn,
				       sym->st_size, flags_clobber, &seen, &s, why), ==, 0);
	CHECK(utrace__probe_is_jump(s));
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		uint64_t in = tries[i] | 0x202;	/* the reserved bit, IF */
		uint64_t out = flags_fn(in);

		CHECK_INT(seen & mask, ==, tries[i]);
		CHECK_INT(out & mask, ==, tries[i]);
	}
	CHECK_INT(utrace__probe_hits(s), ==, sizeof(tries) / sizeof(tries[0]));
	CHECK_INT(utrace__probe_detach(s), ==, 0);
}

/* a handler that attaches another probe at its own address, once,
 * during its hit: that hit does not run the new probe, later ones do */
static struct utrace__probe_site *late_site;
static _Atomic uint64_t late_calls;

static void attach_late(void *data, const struct utrace_probe_regs *regs)
{
	char why[UTRACE_PROBE_WHY_MAX];

	count(data, regs);
	if (!late_site &&
	    utrace__probe_attach((uintptr_t)w_switch, (uintptr_t)w_switch, fns[2].size,
				 count, (void *)&late_calls, &late_site, why))
		late_site = NULL;
	errno = EIO;	/* the program's errno comes back */
}

/* w_switch(5) ten times (a volatile argument: no call folded), the
 * number of wrong results */
static int switch_10(void)
{
	int wrong = 0;

	for (int i = 0; i < 10; i++) {
		volatile int x = 5;

		wrong += w_switch(x) != 5 >> 1;
	}
	return wrong;
}

/* A handler's calls and its probe's hits: both n. */
static void check_counts(_Atomic uint64_t *calls, struct utrace__probe_site *s, uint64_t n)
{
	CHECK_INT(atomic_load(calls), ==, n);
	CHECK_INT(utrace__probe_hits(s), ==, n);
}

/* One probe at an address, then several (one saving the SIMD state, one
 * attached during a hit), then one again: each handler runs once a hit,
 * the counts exact, errno kept. */
TEST(several_probes_at_one_address)
{
	_Atomic uint64_t a = 0, b = 0, c = 0;
	struct utrace__probe_site *sa, *sb, *sc;
	char why[UTRACE_PROBE_WHY_MAX];

	setup();
	CHECK_INT(utrace__probe_attach((uintptr_t)w_switch, (uintptr_t)w_switch,
				       fns[2].size, count, (void *)&a, &sa, why), ==, 0);
	errno = ENOENT;
	CHECK_INT(switch_10(), ==, 0);
	CHECK_INT(errno, ==, ENOENT);
	check_counts(&a, sa, 10);
	CHECK_INT(utrace__probe_attach_flags((uintptr_t)w_switch, (uintptr_t)w_switch,
					     fns[2].size, UTRACE_PROBE_SAVE_SIMD, count,
					     (void *)&b, &sb, why), ==, 0);
	CHECK_INT(switch_10(), ==, 0);
	check_counts(&a, sa, 20);
	check_counts(&b, sb, 10);
	/* the SIMD one alone */
	CHECK_INT(utrace__probe_detach(sa), ==, 0);
	CHECK_INT(switch_10(), ==, 0);
	CHECK_INT(atomic_load(&a), ==, 20);
	check_counts(&b, sb, 20);
	CHECK_INT(utrace__probe_misses(sb), ==, 0);
	/* one attached during a hit, next to the SIMD one, then alone */
	late_site = NULL;
	atomic_store(&late_calls, 0);
	CHECK_INT(utrace__probe_attach((uintptr_t)w_switch, (uintptr_t)w_switch,
				       fns[2].size, attach_late, (void *)&c, &sc, why), ==, 0);
	errno = ENOENT;
	CHECK_INT(switch_10(), ==, 0);
	CHECK_INT(errno, ==, ENOENT);
	CHECK(late_site != NULL);
	check_counts(&c, sc, 10);
	check_counts(&b, sb, 30);
	check_counts(&late_calls, late_site, 9);
	CHECK_INT(utrace__probe_detach(sb), ==, 0);
	CHECK_INT(utrace__probe_detach(sc), ==, 0);
	CHECK_INT(switch_10(), ==, 0);
	check_counts(&late_calls, late_site, 19);
	CHECK_INT(utrace__probe_detach(late_site), ==, 0);
	CHECK_INT(switch_10(), ==, 0);
	CHECK_INT(atomic_load(&late_calls), ==, 19);
	same_as_file(&fns[2]);
}

/*
 * Issue 27 item 10: a jump covering two instructions waits until no
 * thread is inside them; a thread that cannot say where it is (preempted
 * on a busy machine; here: it blocks the engine's signal) made attach
 * fail with -EBUSY after 2 s.  Now the probe is placed at once as a
 * breakpoint (hits counted) and the jump finished when the thread
 * answers.
 */
int w_short(int x);
__asm__(".text\n"
	".globl w_short\n"
	".type w_short, @function\n"
	"w_short:\n"
	"	mov %edi, %eax\n"	/* 2 bytes: the jump covers two */
	"	add $3, %eax\n"		/* 3 bytes */
	"	add %eax, %eax\n"
	"	ret\n"
	".size w_short, .-w_short\n");
static int (*volatile w_short_p)(int) = w_short;
static _Atomic int mute_release, mute_stop, mute_bad, mute_ready;

/* runs w_short, deaf to the engine's "where are you" signal until
 * released */
static void *mute(void *arg)
{
	sigset_t rt;

	(void)arg;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMAX - 2);
	pthread_sigmask(SIG_BLOCK, &rt, NULL);
	atomic_store(&mute_ready, 1);       /* deaf from now on */
	while (!atomic_load(&mute_stop)) {
		if (w_short_p(5) != 16)
			atomic_fetch_add(&mute_bad, 1);
		if (atomic_load(&mute_release) == 1) {
			pthread_sigmask(SIG_UNBLOCK, &rt, NULL);
			atomic_store(&mute_release, 2);
		}
	}
	return NULL;
}

TEST(a_thread_that_does_not_answer_leaves_a_breakpoint_then_a_jump)
{
	struct fn f = { "w_short", (void *)w_short, 0 };
	struct utrace__probe_site *s;
	char why[UTRACE_PROBE_WHY_MAX];
	_Atomic uint64_t c = 0;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	pthread_t t;
	double t0, t1;
	uint64_t before;
	int ret;

	CHECK(dladdr1(f.addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	f.size = sym->st_size;
	pthread_create(&t, NULL, mute, NULL);
	/* (a loaded machine may not have run it yet: deaf before the attach) */
	while (!atomic_load(&mute_ready))
		sched_yield();
	t0 = now_ns();
	ret = utrace__probe_attach((uintptr_t)w_short, (uintptr_t)w_short, f.size, count,
				   (void *)&c, &s, why);
	t1 = now_ns();
	if (ret)
		TEST_FAIL("attach w_short with a mute thread: %d %s", ret, why);
	fprintf(stderr, "# attached in %.0f ms: %s\n", (t1 - t0) / 1e6, why);
	CHECK(utrace__probe_is_pending(s));
	CHECK(!utrace__probe_is_jump(s));
	CHECK(strstr(why, "a breakpoint for now"));
	before = utrace__probe_hits(s);
	CHECK_INT(w_short_p(1), ==, 8);
	CHECK_INT(utrace__probe_hits(s), >, before);
	/* the thread answers: the jump is finished */
	atomic_store(&mute_release, 1);
	for (int i = 0; i < 3000 && utrace__probe_is_pending(s); i++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
	}
	CHECK(!utrace__probe_is_pending(s));
	CHECK(utrace__probe_is_jump(s));
	CHECK_INT(*(const uint8_t *)w_short, ==, 0xe9);
	before = utrace__probe_hits(s);
	CHECK_INT(w_short_p(2), ==, 10);
	CHECK_INT(utrace__probe_hits(s), >, before);
	CHECK_INT(utrace__probe_detach(s), ==, 0);
	atomic_store(&mute_stop, 1);
	pthread_join(t, NULL);
	CHECK_INT(atomic_load(&mute_bad), ==, 0);
	same_as_file(&f);
}

/* The same, detached while still a breakpoint: the code as it was. */
TEST(a_pending_jump_detached_leaves_the_code_as_it_was)
{
	struct fn f = { "w_short", (void *)w_short, 0 };
	struct utrace__probe_site *s;
	char why[UTRACE_PROBE_WHY_MAX];
	_Atomic uint64_t c = 0;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	pthread_t t;

	CHECK(dladdr1(f.addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	f.size = sym->st_size;
	pthread_create(&t, NULL, mute, NULL);
	/* (a loaded machine may not have run it yet: deaf before the attach) */
	while (!atomic_load(&mute_ready))
		sched_yield();
	CHECK_INT(utrace__probe_attach((uintptr_t)w_short, (uintptr_t)w_short, f.size, count,
				       (void *)&c, &s, why), ==, 0);
	CHECK(utrace__probe_is_pending(s));
	CHECK_INT(w_short_p(1), ==, 8);
	CHECK_INT(utrace__probe_detach(s), ==, 0);      /* (s is freed) */
	same_as_file(&f);
	CHECK_INT(w_short_p(1), ==, 8);
	atomic_store(&mute_stop, 1);
	pthread_join(t, NULL);
	CHECK_INT(atomic_load(&mute_bad), ==, 0);
}

/*
 * Issue 27 item 9: a probe at a boundary inside another probe's jump
 * (w_short+2, inside the jump at +0) was refused ("inside the jump of
 * the probe at +0"); a breakpoint fits: the probe at +0 becomes one, and
 * both count every call.
 */
TEST(a_probe_inside_another_probes_jump_is_placed)
{
	struct fn f = { "w_short", (void *)w_short, 0 };
	struct utrace__probe_site *s0, *s2;
	char why[UTRACE_PROBE_WHY_MAX];
	_Atomic uint64_t c0 = 0, c2 = 0;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	CHECK(dladdr1(f.addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	f.size = sym->st_size;
	CHECK_INT(utrace__probe_attach((uintptr_t)w_short, (uintptr_t)w_short, f.size, count,
				       (void *)&c0, &s0, why), ==, 0);
	CHECK(utrace__probe_is_jump(s0));
	CHECK_INT(w_short_p(1), ==, 8);
	if (utrace__probe_attach((uintptr_t)w_short + 2, (uintptr_t)w_short, f.size, count,
				 (void *)&c2, &s2, why))
		TEST_FAIL("w_short+2 inside the jump at +0: %s", why);
	CHECK(!utrace__probe_is_jump(s0));
	for (int i = 0; i < 100; i++)
		CHECK_INT(w_short_p(i), ==, 2 * (i + 3));
	CHECK_INT(atomic_load(&c0), ==, 101);
	CHECK_INT(atomic_load(&c2), ==, 100);
	CHECK_INT(utrace__probe_detach(s0), ==, 0);
	CHECK_INT(w_short_p(1), ==, 8);
	CHECK_INT(atomic_load(&c2), ==, 101);
	CHECK_INT(utrace__probe_detach(s2), ==, 0);
	same_as_file(&f);
}

/* A child forked while a jump is pending finishes it itself. */
TEST(a_forked_child_finishes_its_pending_jump)
{
	struct fn f = { "w_short", (void *)w_short, 0 };
	struct utrace__probe_site *s, *s2;
	char why[UTRACE_PROBE_WHY_MAX];
	_Atomic uint64_t c = 0;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	pthread_t t;
	pid_t pid;
	int status = -1;

	CHECK(dladdr1(f.addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	f.size = sym->st_size;
	setup();
	pthread_create(&t, NULL, mute, NULL);
	/* (a loaded machine may not have run it yet: deaf before the attach) */
	while (!atomic_load(&mute_ready))
		sched_yield();
	CHECK_INT(utrace__probe_attach((uintptr_t)w_short, (uintptr_t)w_short, f.size, count,
				       (void *)&c, &s, why), ==, 0);
	CHECK(utrace__probe_is_pending(s));
	pid = fork();
	if (pid == 0) {
		/* no mute thread here: the next placement starts a finisher */
		if (utrace__probe_attach((uintptr_t)w_hash, (uintptr_t)w_hash, fns[1].size, count,
					 (void *)&c, &s2, why))
			_exit(2);
		for (int i = 0; i < 1000 && utrace__probe_is_pending(s); i++) {
			struct timespec ts = { 0, 10000000 };

			nanosleep(&ts, NULL);
		}
		_exit(utrace__probe_is_jump(s) && w_short_p(1) == 8 ? 0 : 3);
	}
	CHECK(pid > 0);
	waitpid(pid, &status, 0);
	CHECK_INT(status, ==, 0);
	CHECK(utrace__probe_is_pending(s));	/* the parent's mute thread still */
	CHECK_INT(utrace__probe_detach(s), ==, 0);
	atomic_store(&mute_stop, 1);
	pthread_join(t, NULL);
	same_as_file(&f);
}

/*
 * The finisher thread calls libc (nanosleep, open, read...): a
 * breakpoint probe there must not kill the process (a synchronous SIGTRAP
 * the thread blocked makes the kernel reset the handler and deliver it).
 */
TEST(the_finisher_survives_a_breakpoint_in_the_code_it_calls)
{
	struct fn f = { "w_short", (void *)w_short, 0 }, ns = { "nanosleep", (void *)nanosleep, 0 };
	struct utrace__probe_site *s, *b0, *b1;
	char why[UTRACE_PROBE_WHY_MAX];
	_Atomic uint64_t c = 0, cn = 0;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	uint32_t offs[64];
	pthread_t t;

	CHECK(dladdr1(f.addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	f.size = sym->st_size;
	CHECK(dladdr1(ns.addr, &info, (void **)&sym, RTLD_DL_SYMENT) && sym);
	ns.size = sym->st_size;
	CHECK_INT(boundaries(&ns, offs, 64), >, 1);
	/* both breakpoints: a probe inside the entry's jump makes it one */
	CHECK_INT(utrace__probe_attach((uintptr_t)ns.addr, (uintptr_t)ns.addr, ns.size, count,
				       (void *)&cn, &b0, why), ==, 0);
	CHECK_INT(utrace__probe_attach((uintptr_t)ns.addr + offs[1], (uintptr_t)ns.addr, ns.size,
				       count, (void *)&cn, &b1, why), ==, 0);
	CHECK(!utrace__probe_is_jump(b0));
	pthread_create(&t, NULL, mute, NULL);
	/* (a loaded machine may not have run it yet: deaf before the attach) */
	while (!atomic_load(&mute_ready))
		sched_yield();
	CHECK_INT(utrace__probe_attach((uintptr_t)w_short, (uintptr_t)w_short, f.size, count,
				       (void *)&c, &s, why), ==, 0);
	CHECK(utrace__probe_is_pending(s));
	/* the finisher sleeps through the probed nanosleep meanwhile */
	for (int i = 0; i < 50; i++)
		CHECK_INT(w_short_p(1), ==, 8);
	{
		struct timespec ts = { 0, 300000000 };

		syscall(SYS_nanosleep, &ts, NULL);	/* (not through the probes) */
	}
	atomic_store(&mute_release, 1);
	for (int i = 0; i < 1000 && utrace__probe_is_pending(s); i++) {
		struct timespec ts = { 0, 10000000 };

		syscall(SYS_nanosleep, &ts, NULL);
	}
	CHECK(utrace__probe_is_jump(s));
	CHECK_INT(utrace__probe_detach(s), ==, 0);
	CHECK_INT(utrace__probe_detach(b1), ==, 0);
	CHECK_INT(utrace__probe_detach(b0), ==, 0);
	atomic_store(&mute_stop, 1);
	pthread_join(t, NULL);
	same_as_file(&f);
}

TEST_MAIN()
