// SPDX-License-Identifier: MIT
/*
 * bench-probe: what a dynamic probe hit costs (issue 12, "Proof").
 *
 * The same function called N times in a loop:
 *   bare     no probe;
 *   jump     a probe at its entry placed as a jump to a trampoline,
 *            calling an empty handler;
 *   jump2    the same, the handler reading two register arguments;
 *   jump-simd  the empty handler, attached with UTRACE_PROBE_SAVE_SIMD
 *            (the trampoline saves the SIMD state with XSAVE);
 *   int3     a probe where only a breakpoint fits (a function of 4
 *            bytes: lea; ret), empty handler;
 *   kernel   the kernel's uprobe on the same function (root, tracefs),
 *            enabled in a private tracing instance;
 *   record   (only when asked, run under `utrace record --probe
 *            "p:grp/add probed a=%di:s32 b=%si:s32"`) the same function
 *            under another name, probed() with the probe event recorded,
 *            next to the static two-field event bench_ev (bench-events.h)
 *            recorded in the same run.
 * Prints one line per case: "CASE ns-per-call" (the thread's CPU time,
 * best of RUNS), and the added cost of a hit next to the bare call.
 *
 * bench-probe [N [RUNS [CASE]]]   CASE: bare (only the bare calls), jump,
 *                                 jump2, jump-simd, int3, kernel; all by default
 */
#include <errno.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench-events.h"
#include "engine.h"

#if defined(__clang__)
#define WORK __attribute__((noinline))
#else
#define WORK __attribute__((noipa))
#endif

long target(long a, long b);
long probed(long a, long b);
int tiny(int a);

/* entry: mov; imul; lea; ret: room for a jump */
WORK long target(long a, long b)
{
	return a * 3 + (b ^ 0x5a5a) + 1;
}

/* the same, for the probe of the record case (`utrace record --probe`) */
WORK long probed(long a, long b)
{
	return a * 3 + (b ^ 0x5a5a) + 1;
}

/* lea 1(%rdi),%eax; ret: 4 bytes, a breakpoint only */
WORK int tiny(int a)
{
	return a + 1;
}

static volatile long sink;

static void empty(void *data, const struct utrace_probe_regs *regs)
{
	(void)data;
	(void)regs;
}

static void two_args(void *data, const struct utrace_probe_regs *regs)
{
	(void)data;
	sink = (long)(regs->di + regs->si);
}

static double now_ns(void)
{
	struct timespec ts;

	/* the thread's CPU time: the machine is shared, a preemption in
	 * the middle of a run would count as the probe's */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* use: 0 target(), 1 tiny(), 2 probed(), 3 the static event bench_ev */
static double time_loop(int use, long n, int runs)
{
	double best = 1e30;

	for (int r = 0; r < runs; r++) {
		double t0 = now_ns(), t;
		long acc = 0;

		if (use == 1)
			for (long i = 0; i < n; i++)
				acc += tiny((int)i);
		else if (use == 2)
			for (long i = 0; i < n; i++)
				acc += probed(i, acc);
		else if (use == 3)
			for (long i = 0; i < n; i++) {
				trace_bench_ev((uint64_t)i, (uint32_t)acc);
				acc += target(i, acc);
			}
		else
			for (long i = 0; i < n; i++)
				acc += target(i, acc);
		t = (now_ns() - t0) / n;
		sink = acc;
		if (t < best)
			best = t;
	}
	return best;
}

static size_t func_size(void *f)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	if (!dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
		return 0;
	return sym->st_size;
}

/* The file offset of an address of this program (/proc/self/maps). */
static long file_offset(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4600];
	long ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;

		if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 &&
		    addr >= lo && addr < hi) {
			ret = (long)(addr - lo + off);
			break;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

static int write_file(const char *path, const char *s, int append)
{
	int fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, s, strlen(s));
	close(fd);
	return w == (ssize_t)strlen(s) ? 0 : -errno;
}

/* The kernel's uprobe on target(): ns per call, or < 0 when unavailable. */
static double kernel_uprobe(long n, int runs)
{
	const char *tr = "/sys/kernel/tracing";
	char exe[4096], def[4300], path[4400], inst[256], ev[64];
	long off = file_offset((uintptr_t)target);
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	double t = -1;

	if (geteuid() != 0 || l <= 0 || access("/sys/kernel/tracing/uprobe_events", W_OK))
		return -1;
	exe[l] = 0;
	if (off < 0)
		return -1;
	snprintf(ev, sizeof(ev), "utrace_bench_%d", (int)getpid());
	snprintf(def, sizeof(def), "p:%s/hit %s:0x%lx\n", ev, exe, off);
	snprintf(path, sizeof(path), "%s/uprobe_events", tr);
	if (write_file(path, def, 1))
		return -1;
	snprintf(inst, sizeof(inst), "%s/instances/%s", tr, ev);
	if (mkdir(inst, 0755) == 0) {
		snprintf(path, sizeof(path), "%s/events/%s/hit/enable", inst, ev);
		if (write_file(path, "1", 0) == 0) {
			t = time_loop(0, n, runs);
			write_file(path, "0", 0);
		}
		rmdir(inst);
	}
	snprintf(def, sizeof(def), "-:%s/hit\n", ev);
	snprintf(path, sizeof(path), "%s/uprobe_events", tr);
	write_file(path, def, 1);
	return t;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *only = argc > 3 ? argv[3] : NULL;
	char why[UTRACE_PROBE_WHY_MAX];
	struct utrace__probe_site *s;
	double bare, bare_tiny, t;

	bare = time_loop(0, n, runs);
	bare_tiny = time_loop(1, n, runs);
	if (only && !strcmp(only, "record")) {
		/* the events are on from the start under `utrace record` */
		if (!trace_bench_ev_enabled()) {
			fprintf(stderr, "bench-probe: record: bench_ev is off (run under utrace record)\n");
			return 3;
		}
		double ts = 1e30, tp = 1e30;

		/* the two in turns, so that both see the recorder alike */
		for (int r = 0; r < runs; r++) {
			t = time_loop(3, n, 1);
			ts = t < ts ? t : ts;
			t = time_loop(2, n, 1);
			tp = t < tp ? t : tp;
		}
		printf("bare %.2f\n", bare);
		printf("static %.2f (+%.2f)\n", ts, ts - bare);
		printf("probe-rec %.2f (+%.2f)\n", tp, tp - bare);
		return 0;
	}
	printf("bare %.2f\n", bare);
	printf("bare-tiny %.2f\n", bare_tiny);
	if (only && !strcmp(only, "bare"))
		return 0;
	if (!only || !strcmp(only, "jump")) {
		if (utrace__probe_attach((uintptr_t)target, (uintptr_t)target,
					 func_size((void *)target), empty, NULL,
					 &s, why)) {
			fprintf(stderr, "bench-probe: jump: %s\n", why);
			return 1;
		}
		if (!utrace__probe_is_jump(s))
			fprintf(stderr, "bench-probe: target() got a breakpoint\n");
		t = time_loop(0, n, runs);
		printf("jump %.2f (+%.2f)\n", t, t - bare);
		utrace__probe_detach(s);
	}
	if (!only || !strcmp(only, "jump-ret")) {
		/* at target()'s ret (issue 30): a jump over it and the
		 * instructions before it, as a return probe places */
		size_t len = func_size((void *)target), nx = 0;
		uint8_t code[256];
		uint64_t ex[4];

		if (len > sizeof(code) ||
		    utrace__probe_read_code((uintptr_t)target, code, len) ||
		    utrace__probe_decode_exits(code, len, (uintptr_t)target, ex, 4, &nx, why) ||
		    nx != 1 ||
		    utrace__probe_attach((uintptr_t)ex[0], (uintptr_t)target, len, empty,
					 NULL, &s, why)) {
			fprintf(stderr, "bench-probe: jump-ret: %zu exits: %s\n", nx, why);
			return 1;
		}
		t = time_loop(0, n, runs);
		printf("jump-ret %.2f (+%.2f)%s\n", t, t - bare,
		       utrace__probe_is_jump(s) ? "" : " (got a breakpoint)");
		utrace__probe_detach(s);
	}
	if (!only || !strcmp(only, "jump2")) {
		if (utrace__probe_attach((uintptr_t)target, (uintptr_t)target,
					 func_size((void *)target), two_args,
					 NULL, &s, why) == 0) {
			t = time_loop(0, n, runs);
			printf("jump2 %.2f (+%.2f)\n", t, t - bare);
			utrace__probe_detach(s);
		}
	}
	if (!only || !strcmp(only, "jump-simd")) {
		if (utrace__probe_attach_flags((uintptr_t)target, (uintptr_t)target,
					       func_size((void *)target),
					       UTRACE_PROBE_SAVE_SIMD, empty,
					       NULL, &s, why) == 0) {
			t = time_loop(0, n, runs);
			printf("jump-simd %.2f (+%.2f)\n", t, t - bare);
			utrace__probe_detach(s);
		}
	}
	if (!only || !strcmp(only, "int3")) {
		long m = n / 100 > 10000 ? n / 100 : 10000;

		if (utrace__probe_attach((uintptr_t)tiny, (uintptr_t)tiny,
					 func_size((void *)tiny), empty, NULL,
					 &s, why) == 0) {
			t = time_loop(1, m, runs);
			printf("int3 %.2f (+%.2f)%s\n", t, t - bare_tiny,
			       utrace__probe_is_jump(s) ? " (got a jump)" : "");
			utrace__probe_detach(s);
		}
	}
	if (!only || !strcmp(only, "kernel")) {
		long m = n / 100 > 10000 ? n / 100 : 10000;

		t = kernel_uprobe(m, runs);
		if (t >= 0)
			printf("kernel %.2f (+%.2f)\n", t, t - bare);
		else
			printf("kernel - (needs root and tracefs)\n");
	}
	return 0;
}
