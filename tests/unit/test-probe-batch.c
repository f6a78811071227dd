/* SPDX-License-Identifier: MIT */
/*
 * utrace__probe_attach_many() / utrace__probe_detach_many() (issue 30
 * item 3: all the sites of an event in one round of patching): a probe
 * at every instruction boundary of real functions (this file, -O2) in ONE
 * batch, so that sites fall inside the jumps of others of the same batch
 * (placed after the round, alone), several probes at one address, a bad
 * request among good ones, threads running the functions throughout;
 * hit counts exact, results unchanged, the bytes as in the file after.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "engine.h"
#include "test.h"

#if defined(__clang__)
#define WORK __attribute__((noinline))
#else
#define WORK __attribute__((noipa))
#endif

WORK uint64_t b_sum(const uint32_t *a, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += a[i] * (uint64_t)(i | 1);
	return s;
}

WORK uint64_t b_hash(const char *p)
{
	uint64_t h = 1469598103934665603ull;

	while (*p)
		h = (h ^ (uint8_t)*p++) * 1099511628211ull;
	return h;
}

WORK int b_switch(int x)
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

static uint32_t arr[131];
static const char *const words[] = { "alpha", "kernel", "tracepoint", "" };

WORK uint64_t b_work(int seed)
{
	uint64_t r = b_sum(arr, 131);

	for (int i = 0; i < 4; i++)
		r = r * 31 + b_hash(words[i]);
	for (int i = 0; i < 16; i++)
		r = r * 7 + (uint64_t)b_switch(seed + i);
	return r;
}

struct fn {
	const char *name;
	void *addr;
	size_t size;
};

static struct fn fns[] = {
	{ "b_sum", (void *)b_sum, 0 },
	{ "b_hash", (void *)b_hash, 0 },
	{ "b_switch", (void *)b_switch, 0 },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))
#define MAXB 1024

static uint64_t (*volatile work)(int) = b_work;
static uint64_t reference[64];
static _Atomic int bad_results;
static _Atomic int stop;

static void setup(void)
{
	for (int i = 0; i < 131; i++)
		arr[i] = (uint32_t)(i * 2654435761u);
	for (size_t i = 0; i < NFNS; i++) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;

		if (!dladdr1(fns[i].addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
			TEST_FAIL("no symbol for %s (built with -rdynamic?)", fns[i].name);
		fns[i].size = sym->st_size;
	}
	for (int i = 0; i < 64; i++)
		reference[i] = work(i);
}

static void count(void *data, const struct utrace_probe_regs *regs)
{
	(void)regs;
	atomic_fetch_add_explicit((_Atomic uint64_t *)data, 1, memory_order_relaxed);
}

static void rounds(long n)
{
	for (long r = 0; r < n; r++)
		if (work((int)(r % 64)) != reference[r % 64])
			atomic_fetch_add(&bad_results, 1);
}

/* running the functions while probes come and go */
static void *spin(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		rounds(64);
	return NULL;
}

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

		if (ph->p_type == PT_LOAD && sf->addr >= v && sf->addr < v + ph->p_filesz) {
			sf->off = (off_t)(sf->addr - v + ph->p_offset);
			snprintf(sf->path, sizeof(sf->path), "%s",
				 info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name :
				 "/proc/self/exe");
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
		TEST_FAIL("%s differs from the file after detach_many", f->name);
}

/*
 * Every boundary of every function in one batch, twice at each address
 * (two handlers), with a bad request in the middle, under 2 spinning
 * threads; then, the threads stopped, 64 rounds on this thread add one[]
 * to each site, and the two probes of an address count the same; each
 * handler's count is its site's; off in one batch under threads again,
 * nothing counted after, the bytes the file's.
 */
TEST(one_batch_every_boundary_under_threads)
{
	static struct utrace__probe_req req[2 * MAXB + 1];
	static _Atomic uint64_t c[2 * MAXB + 1];
	static struct utrace__probe_site *sites[2 * MAXB + 1];
	static uint64_t one[2 * MAXB + 1];
	uint32_t offs[MAXB];
	size_t n = 0, bad;
	pthread_t t[2];
	int jumps = 0, ret;

	setup();
	for (size_t f = 0; f < NFNS; f++) {
		size_t k, nb;

		CHECK_INT(utrace__probe_decode_boundaries(fns[f].addr, fns[f].size,
				(uintptr_t)fns[f].addr, offs, MAXB, &nb), ==, 0);
		for (k = 0; k < nb && n + 2 < 2 * MAXB; k++) {
			for (int twice = 0; twice < 2; twice++, n++)
				req[n] = (struct utrace__probe_req){
					.addr = (uintptr_t)fns[f].addr + offs[k],
					.func = (uintptr_t)fns[f].addr, .func_len = fns[f].size,
					.fn = count, .data = (void *)&c[n] };
		}
	}
	/* a request outside its function: refused alone */
	bad = n / 2 & ~(size_t)1;
	memmove(&req[bad + 1], &req[bad], (n - bad) * sizeof(req[0]));
	for (size_t i = bad + 1; i <= n; i++)
		req[i].data = (void *)&c[i];
	req[bad] = (struct utrace__probe_req){ .addr = (uintptr_t)fns[0].addr - 1,
					       .func = (uintptr_t)fns[0].addr,
					       .func_len = fns[0].size, .fn = count,
					       .data = (void *)&c[bad] };
	n++;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	ret = utrace__probe_attach_many(req, n);
	CHECK_INT(ret, ==, -EINVAL);
	CHECK_INT(req[bad].ret, ==, -EINVAL);
	CHECK(req[bad].site == NULL);
	for (size_t i = 0; i < n; i++) {
		if (i == bad)
			continue;
		/* int3 padding, ud2: refused with EINVAL, as attach does */
		if (req[i].ret) {
			CHECK_INT(req[i].ret, ==, -EINVAL);
			continue;
		}
		jumps += utrace__probe_is_jump(req[i].site);
	}
	rounds(640);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	/* now alone: 64 rounds add exactly one[] to each, 128 twice that */
	for (size_t i = 0; i < n; i++)
		one[i] = atomic_load(&c[i]);
	rounds(64);
	for (size_t i = 0; i < n; i++)
		one[i] = atomic_load(&c[i]) - one[i];
	rounds(128);
	for (size_t i = 0; i < n; i++) {
		sites[i] = req[i].site;
		if (!sites[i])
			continue;
		if (atomic_load(&c[i]) != utrace__probe_hits(sites[i]) ||
		    utrace__probe_hits(sites[i]) < 3 * one[i])
			TEST_FAIL("site %zu (+0x%" PRIxPTR "): %" PRIu64 " counted, %" PRIu64 " hits",
				  i, req[i].addr - req[i].func, (uint64_t)atomic_load(&c[i]),
				  utrace__probe_hits(sites[i]));
	}
	/* both probes of an address see the same hits; each entry is hit */
	for (size_t i = 0; i + 1 < n; i++)
		if (sites[i] && sites[i + 1] && req[i].addr == req[i + 1].addr)
			CHECK_INT(one[i], ==, one[i + 1]);
	for (size_t f = 0; f < NFNS; f++)
		for (size_t i = 0; i < n; i++)
			if (req[i].addr == (uintptr_t)fns[f].addr && sites[i] && !one[i])
				TEST_FAIL("%s: its entry was never hit", fns[f].name);
	fprintf(stderr, "# %zu requests, %d placed as jumps\n", n, jumps);
	/* (most sites lie inside the jumps of others: breakpoints) */
	CHECK_INT(jumps, >=, 2);
	/* off under threads again, in one round */
	atomic_store(&stop, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	CHECK_INT(utrace__probe_detach_many(sites, n), ==, 0);
	for (size_t i = 0; i < n; i++)
		one[i] = atomic_load(&c[i]);
	rounds(64);
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (size_t i = 0; i < n; i++)
		if (atomic_load(&c[i]) != one[i])
			TEST_FAIL("site %zu counted after detach_many", i);
	for (size_t f = 0; f < NFNS; f++)
		same_as_file(&fns[f]);
	CHECK_INT(atomic_load(&bad_results), ==, 0);
}

/* A batch placed again and again: the records are reused, nothing grows
 * wrong, the bytes are the file's each time. */
TEST(batch_again_and_again)
{
	struct utrace__probe_req req[NFNS];
	struct utrace__probe_site *sites[NFNS];
	_Atomic uint64_t c[NFNS];

	setup();
	for (int round = 0; round < 50; round++) {
		for (size_t f = 0; f < NFNS; f++) {
			atomic_store(&c[f], 0);
			req[f] = (struct utrace__probe_req){
				.addr = (uintptr_t)fns[f].addr, .func = (uintptr_t)fns[f].addr,
				.func_len = fns[f].size, .fn = count, .data = (void *)&c[f] };
		}
		CHECK_INT(utrace__probe_attach_many(req, NFNS), ==, 0);
		rounds(64);
		CHECK_INT(atomic_load(&c[0]), ==, 64);		/* b_sum: once a round */
		CHECK_INT(atomic_load(&c[1]), ==, 4 * 64);	/* b_hash: 4 */
		CHECK_INT(atomic_load(&c[2]), ==, 16 * 64);	/* b_switch: 16 */
		for (size_t f = 0; f < NFNS; f++)
			sites[f] = req[f].site;
		CHECK_INT(utrace__probe_detach_many(sites, NFNS), ==, 0);
		for (size_t f = 0; f < NFNS; f++)
			same_as_file(&fns[f]);
	}
	CHECK_INT(atomic_load(&bad_results), ==, 0);
}

/* The walk utrace__symtab_by_name() made for an exact name (its sorted
 * index must give the same symbol: a glob looks up thousands). */
static const struct utrace__sym *walk_exact(const struct utrace__symtab *t, const char *name)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->strings + t->syms[i].name, name))
			return &t->syms[i];
	for (size_t i = 0; i < t->nr_aliases; i++)
		if (!strcmp(t->strings + t->aliases[i].name, name))
			return &t->syms[t->aliases[i].sym];
	return NULL;
}

static void names_as_the_walk(const char *path)
{
	struct utrace__symtab t;
	size_t checked = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_INT(utrace__symtab_load_debug(fd, &t), ==, 0);
	close(fd);
	CHECK(t.by_name != NULL);
	for (size_t i = 0; i < t.nr + t.nr_aliases; i++) {
		const char *name = t.strings + (i < t.nr ? t.syms[i].name :
						 t.aliases[i - t.nr].name);

		if (utrace__symtab_by_name(&t, name) != walk_exact(&t, name))
			TEST_FAIL("%s: '%s' found at another symbol than the walk's", path, name);
		checked++;
	}
	CHECK(utrace__symtab_by_name(&t, "no_such_symbol_anywhere") == NULL);
	fprintf(stderr, "# %s: %zu names\n", path, checked);
	utrace__symtab_free(&t);
}

TEST(symbol_names_by_index_as_by_walk)
{
	char libc[4096] = "";
	Dl_info info;

	names_as_the_walk("/proc/self/exe");
	/* libc: aliases (open, open64, __open) and versions */
	if (dladdr((void *)strlen, &info) && info.dli_fname)
		snprintf(libc, sizeof(libc), "%s", info.dli_fname);
	if (libc[0] == '/')
		names_as_the_walk(libc);
}

TEST_MAIN()
