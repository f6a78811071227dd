/* SPDX-License-Identifier: MIT */
/*
 * The probe engine's decoding half (lib/probe/decode.c) against binutils:
 * every function of libc, python3 (when installed) and this test program
 * is decoded, its instruction starts must be the ones objdump -d prints,
 * and every offset that is not one must be refused by
 * utrace__probe_decode_check().  Plus the rules on small hand-made
 * functions, and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "engine.h"
#include "insn.h"
#include "test.h"

struct func {
	uint64_t addr, size;
};

struct image {
	uint8_t *map;
	size_t map_len;
	struct func *f;
	size_t nf;
	/* executable sections: file address -> bytes */
	struct { uint64_t addr, size, off; } sec[64];
	int nsec;
};

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const uint8_t *image_bytes(const struct image *im, uint64_t addr,
				  uint64_t size)
{
	for (int i = 0; i < im->nsec; i++)
		if (addr >= im->sec[i].addr &&
		    addr + size <= im->sec[i].addr + im->sec[i].size)
			return im->map + im->sec[i].off + (addr - im->sec[i].addr);
	return NULL;
}

/* The sized functions of a file (from .symtab, else .dynsym), unique. */
static int image_load(const char *path, struct image *im)
{
	Elf *e;
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr sh;
	struct stat st;
	size_t cap = 0;
	int fd = open(path, O_RDONLY);

	memset(im, 0, sizeof(*im));
	if (fd < 0 || fstat(fd, &st))
		return -1;
	im->map_len = st.st_size;
	im->map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || im->map == MAP_FAILED)
		return -1;
	while ((scn = elf_nextscn(e, scn))) {
		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_SYMTAB ||
		    (sh.sh_type == SHT_DYNSYM && !symscn))
			symscn = scn;
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) &&
		    im->nsec < 64) {
			im->sec[im->nsec].addr = sh.sh_addr;
			im->sec[im->nsec].size = sh.sh_size;
			im->sec[im->nsec].off = sh.sh_offset;
			im->nsec++;
		}
	}
	if (symscn) {
		Elf_Data *d = elf_getdata(symscn, NULL);
		size_t n;

		gelf_getshdr(symscn, &sh);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;

			gelf_getsym(d, i, &s);
			if (GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size ||
			    s.st_shndx == SHN_UNDEF ||
			    !image_bytes(im, s.st_value, s.st_size))
				continue;
			if (im->nf == cap) {
				cap = cap ? cap * 2 : 1024;
				im->f = realloc(im->f, cap * sizeof(*im->f));
			}
			im->f[im->nf].addr = s.st_value;
			im->f[im->nf].size = s.st_size;
			im->nf++;
		}
	}
	elf_end(e);
	close(fd);
	qsort(im->f, im->nf, sizeof(*im->f), cmp_func);
	/* one per address (aliases), the largest */
	size_t k = 0;

	for (size_t i = 0; i < im->nf; i++) {
		if (k && im->f[k - 1].addr == im->f[i].addr) {
			if (im->f[i].size > im->f[k - 1].size)
				im->f[k - 1].size = im->f[i].size;
			continue;
		}
		im->f[k++] = im->f[i];
	}
	im->nf = k;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every instruction address objdump -d prints for the file, sorted. */
static uint64_t *objdump_starts(const char *path, size_t *n)
{
	char cmd[4200], line[4096];
	size_t cap = 1 << 16, k = 0;
	uint64_t *a = malloc(cap * sizeof(*a));
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn -w '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	while (fgets(line, sizeof(line), p)) {
		char *end;
		uint64_t v;

		/* "  1234:\tmov ..." (an instruction), not "0000... <f>:" */
		if (line[0] != ' ')
			continue;
		v = strtoull(line, &end, 16);
		if (end == line || *end != ':' || end[1] != '\t')
			continue;
		if (k == cap) {
			cap *= 2;
			a = realloc(a, cap * sizeof(*a));
		}
		a[k++] = v;
	}
	pclose(p);
	qsort(a, k, sizeof(*a), cmp_u64);
	*n = k;
	return a;
}

static size_t lower_bound(const uint64_t *a, size_t n, uint64_t v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Every executable section decoded from its start, not only the sized
 * functions: where Zydis and objdump part (data, padding objdump reads
 * differently), both go on from objdump's next instruction, and the
 * places are counted.
 */
static void sweep_sections(const char *path, const struct image *im,
			   const uint64_t *od, size_t nod)
{
	size_t agree = 0, resync = 0, total = 0;
	uint32_t *offs = NULL;
	size_t cap = 0;

	for (int i = 0; i < im->nsec; i++) {
		uint64_t a = im->sec[i].addr, end = a + im->sec[i].size;
		size_t j = lower_bound(od, nod, a);

		total += lower_bound(od, nod, end) - j;
		while (a < end) {
			size_t n, k;
			int ret;

			if (cap < end - a) {
				cap = end - a;
				offs = realloc(offs, cap * sizeof(*offs));
			}
			ret = utrace__probe_decode_boundaries(
				im->map + im->sec[i].off + (a - im->sec[i].addr),
				end - a, a, offs, cap, &n);
			for (k = 0; k < n && j < nod && od[j] == a + offs[k]; k++, j++)
				agree++;
			if (k == n && !ret)
				break;
			/* parted: on from objdump's next instruction */
			resync++;
			{
				uint64_t at = k < n ? a + offs[k] : a + 1;

				while (j < nod && od[j] <= at)
					j++;
			}
			if (j >= nod || od[j] >= end)
				break;
			a = od[j];
		}
	}
	fprintf(stderr, "# %s: whole sections: %zu of objdump's %zu instructions agree, %zu resyncs\n",
		path, agree, total, resync);
	CHECK_INT(agree * 100, >=, total * 99);
	free(offs);
}

/*
 * Compare one file.  Functions objdump disagrees on are counted and the
 * first few printed; a real decoder bug shows as many.  Non-boundaries:
 * every offset of functions up to @full bytes, @spread of the others.
 */
static void compare_file(const char *path, size_t full, size_t spread,
			 size_t *nfunc,
			 size_t *ninsn, size_t *nrefused)
{
	struct image im;
	uint64_t *od;
	size_t nod, mism = 0;
	uint32_t *offs = NULL;
	size_t offs_cap = 0;
	char why[UTRACE_PROBE_WHY_MAX];

	if (image_load(path, &im))
		TEST_FAIL("cannot read '%s'", path);
	od = objdump_starts(path, &nod);
	CHECK(od && nod > 0);
	for (size_t i = 0; i < im.nf; i++) {
		const struct func *f = &im.f[i];
		const uint8_t *code = image_bytes(&im, f->addr, f->size);
		size_t n, j = lower_bound(od, nod, f->addr), k;
		int ret;

		if (offs_cap < f->size) {
			offs_cap = f->size;
			offs = realloc(offs, offs_cap * sizeof(*offs));
		}
		ret = utrace__probe_decode_boundaries(code, f->size, f->addr,
						      offs, offs_cap, &n);
		if (ret) {
			if (mism++ < 5)
				fprintf(stderr, "# %s: 0x%" PRIx64 ": zydis stops at +0x%x\n",
					path, f->addr, n ? offs[n - 1] : 0);
			continue;
		}
		for (k = 0; k < n; k++, j++)
			if (j >= nod || od[j] != f->addr + offs[k])
				break;
		if (k != n || (j < nod && od[j] < f->addr + f->size)) {
			if (mism++ < 5)
				fprintf(stderr, "# %s: 0x%" PRIx64 " (%" PRIu64 " bytes): zydis and objdump differ at instruction %zu (+0x%x)\n",
					path, f->addr, f->size, k,
					k < n ? offs[k] : 0);
			continue;
		}
		(*nfunc)++;
		*ninsn += n;
		/* every non-boundary refused (a spread in big functions) */
		/* (each check decodes the whole function: few in huge ones) */
		size_t step = f->size <= full ? 1 :
			      f->size / (f->size > 8192 ? 8 : spread) + 1;

		for (k = 0; k + 1 < n || (k + 1 == n && offs[k] + 1 < f->size); k++) {
			uint32_t end = k + 1 < n ? offs[k + 1] : f->size;

			for (uint32_t o = offs[k] + 1; o < end; o += step) {
				ret = utrace__probe_decode_check(code, f->size,
						f->addr, f->addr + o, why);
				if (ret != -EINVAL)
					TEST_FAIL("%s: 0x%" PRIx64 "+0x%x is inside an instruction and was accepted (%d)",
						  path, f->addr, o, ret);
				(*nrefused)++;
			}
			if (k + 1 == n)
				break;
		}
	}
	fprintf(stderr, "# %s: %zu functions; %zu disagree with objdump\n",
		path, im.nf, mism);
	/* a few disagreements are objdump's (data in text, bad bytes) */
	CHECK_INT(mism * 1000, <=, im.nf);
	sweep_sections(path, &im, od, nod);
	free(offs);
	free(od);
	free(im.f);
	munmap(im.map, im.map_len);
}

static int have_objdump(void)
{
	return system("objdump --version > /dev/null 2>&1") == 0;
}

static const char *libc_path(void)
{
	static const char *const paths[] = {
		"/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libc.so.6",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	return NULL;
}

/*
 * The placement rate (issue 30 item 2): of every function's entry and
 * exits (rets, tail calls), how many take a jump; of the jumps, how many
 * start before the site (the instructions before a ret covered).
 */
static void rate_file(const char *path, size_t *ej, size_t *en, size_t *xj,
		      size_t *xn, size_t *xback)
{
	struct image im;
	uint64_t ex[256];
	char why[UTRACE_PROBE_WHY_MAX];

	if (image_load(path, &im))
		TEST_FAIL("cannot read '%s'", path);
	for (size_t i = 0; i < im.nf; i++) {
		const struct func *f = &im.f[i];
		const uint8_t *code = image_bytes(&im, f->addr, f->size);
		uint32_t s, e;
		size_t n;

		if (utrace__probe_decode_cover(code, f->size, f->addr, f->addr, &s, &e,
					       why) < 0)
			continue;
		(*en)++;
		if (utrace__probe_decode_cover(code, f->size, f->addr, f->addr, &s, &e,
					       why) == 1)
			(*ej)++;
		else if (getenv("RATE_WHY"))
			fprintf(stderr, "WHY e %s\n", why);
		if (utrace__probe_decode_exits(code, f->size, f->addr, ex, 256, &n, why) ||
		    n > 256)
			continue;
		for (size_t k = 0; k < n; k++) {
			int r = utrace__probe_decode_cover(code, f->size, f->addr, ex[k],
							   &s, &e, why);

			if (r < 0)
				continue;
			(*xn)++;
			*xj += r == 1;
			if (r == 0 && getenv("RATE_WHY"))
				fprintf(stderr, "WHY x %s\n", why);
			*xback += r == 1 && f->addr + s < ex[k];
		}
	}
	free(im.f);
	munmap(im.map, im.map_len);
}

TEST(placement_rate_of_libc_and_python3)
{
	const char *files[2] = { libc_path(), "/usr/bin/python3" };

	for (int i = 0; i < 2; i++) {
		size_t ej = 0, en = 0, xj = 0, xn = 0, xb = 0;

		if (!files[i] || access(files[i], R_OK)) {
			fprintf(stderr, "# skipped: no %s\n", files[i] ? files[i] : "libc");
			continue;
		}
		rate_file(files[i], &ej, &en, &xj, &xn, &xb);
		fprintf(stderr, "# %s: entries %zu of %zu jumps (%.1f %%); exits %zu of %zu jumps (%.1f %%), %zu of them covering the block before a ret\n",
			files[i], ej, en, 100.0 * ej / (en ? en : 1), xj, xn,
			100.0 * xj / (xn ? xn : 1), xb);
		CHECK_INT(en, >, 100);
		/* the rets covered from before them: a quarter of the exits
		 * at least (without them, only tail calls were jumps) */
		CHECK_INT(xb * 4, >, xn);
	}
}

TEST(boundaries_agree_with_objdump_and_non_boundaries_are_refused)
{
	const char *files[3];
	int nfiles = 0;
	char self[4096];
	ssize_t l;
	double t0 = now_s();

	if (!have_objdump()) {
		fprintf(stderr, "# skipped: no objdump (binutils)\n");
		return;
	}
	l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(l > 0);
	self[l] = 0;
	files[nfiles++] = self;
	if (libc_path())
		files[nfiles++] = libc_path();
	if (access("/usr/bin/python3", R_OK) == 0) {
		static char py[4096];
		ssize_t m = readlink("/usr/bin/python3", py, sizeof(py) - 1);

		if (m > 0) {
			py[m] = 0;
			if (py[0] != '/') {
				memmove(py + 9, py, m + 1);
				memcpy(py, "/usr/bin/", 9);
			}
			files[nfiles++] = py;
		} else {
			files[nfiles++] = "/usr/bin/python3";
		}
	}
	for (int i = 0; i < nfiles; i++) {
		size_t nf = 0, ni = 0, nr = 0;
		double t = now_s();

		compare_file(files[i], 512, 64, &nf, &ni, &nr);
		fprintf(stderr, "# %s: %zu functions, %zu instructions agree; %zu non-boundaries refused (%.1f s)\n",
			files[i], nf, ni, nr, now_s() - t);
		CHECK_INT(nf, >, 0);
	}
	fprintf(stderr, "# total %.1f s\n", now_s() - t0);
}

/* ---- the rules, on hand-made code ---- */

static int check(const uint8_t *code, size_t len, uint32_t off, char *why)
{
	return utrace__probe_decode_check(code, len, 0x401000, 0x401000 + off, why);
}

TEST(a_mid_instruction_offset_names_the_instruction)
{
	/* push rbp; mov rbp,rsp; mov eax,0x2a (5 bytes); pop rbp; ret */
	static const uint8_t f[] = { 0x55, 0x48, 0x89, 0xe5, 0xb8, 0x2a, 0, 0, 0,
				     0x5d, 0xc3 };
	char why[UTRACE_PROBE_WHY_MAX];

	CHECK_INT(check(f, sizeof(f), 6, why), ==, -EINVAL);
	CHECK_STR(why, "+0x6 is not an instruction boundary (the instruction at +0x4 is 5 bytes)");
	CHECK_INT(check(f, sizeof(f), 0, why), ==, 1);
	CHECK_INT(check(f, sizeof(f), 4, why), ==, 1);
	/* pop; ret: 2 bytes left; the jump goes before them (issue 30) */
	CHECK_INT(check(f, sizeof(f), 9, why), ==, 1);
	CHECK_INT(check(f, sizeof(f), 10, why), ==, 1);
}

static int cover(const uint8_t *code, size_t len, uint32_t off, uint32_t *s,
		 uint32_t *e, char *why)
{
	return utrace__probe_decode_cover(code, len, 0x401000, 0x401000 + off,
					  s, e, why);
}

TEST(a_ret_is_covered_with_the_instructions_before_it)
{
	/* 0: push rbp; 1: mov rbp,rsp; 4: mov eax,0x2a (5); 9: pop rbp; a: ret */
	static const uint8_t f[] = { 0x55, 0x48, 0x89, 0xe5, 0xb8, 0x2a, 0, 0, 0,
				     0x5d, 0xc3 };
	/* 0: test edi,edi; 2: je 4; 4: add rsp,8 (4); 8: pop rbx; 9: pop rbp; a: ret */
	static const uint8_t g[] = { 0x85, 0xff, 0x74, 0x00, 0x48, 0x83, 0xc4, 0x08,
				     0x5b, 0x5d, 0xc3 };
	/* 0: xor eax,eax; 2: pop rbx; 3: pop rbp; 4: ret; 5: jmp 4 */
	static const uint8_t h[] = { 0x31, 0xc0, 0x5b, 0x5d, 0xc3, 0xeb, 0xfd };
	/* 0: mov 0x10(%rip),%rax (7); 7: ret */
	static const uint8_t rip[] = { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0xc3 };
	char why[UTRACE_PROBE_WHY_MAX];
	uint32_t s, e;

	/* the smallest run ending past the ret: mov eax + pop + ret */
	CHECK_INT(cover(f, sizeof(f), 10, &s, &e, why), ==, 1);
	CHECK_INT(s, ==, 4);
	CHECK_INT(e, ==, 11);
	/* the pop and what follows: mov eax, pop (the jump's 5 bytes) */
	CHECK_INT(cover(f, sizeof(f), 9, &s, &e, why), ==, 1);
	CHECK_INT(s, ==, 4);
	CHECK_INT(e, ==, 10);
	/* forward first: the entry covers push + mov + mov */
	CHECK_INT(cover(f, sizeof(f), 0, &s, &e, why), ==, 1);
	CHECK_INT(s, ==, 0);
	CHECK_INT(e, ==, 9);
	/* the je lands on the add: a jump may start there */
	CHECK_INT(cover(g, sizeof(g), 10, &s, &e, why), ==, 1);
	CHECK_INT(s, ==, 4);
	CHECK_INT(e, ==, 11);
	CHECK_INT(cover(g, sizeof(g), 9, &s, &e, why), ==, 1);
	CHECK_INT(s, ==, 4);
	CHECK_INT(e, ==, 10);
	/* the jmp lands on the ret: no run may hold it past its first byte */
	CHECK_INT(cover(h, sizeof(h), 4, &s, &e, why), ==, 0);
	CHECK(strstr(why, "the branch at +0x5 lands at +0x4"));
	CHECK_INT(s, ==, 4);
	CHECK_INT(e, ==, 5);
	/* a RIP-relative load before the ret: relocated */
	CHECK_INT(cover(rip, sizeof(rip), 7, &s, &e, why), ==, 1);
	CHECK_INT(s, ==, 0);
	CHECK_INT(e, ==, 8);
}

TEST(the_block_before_a_ret_stops_at_a_call_and_takes_a_jcc)
{
	/* 0: call +0 (5); 5: pop rbx; 6: ret */
	static const uint8_t c[] = { 0xe8, 0, 0, 0, 0, 0x5b, 0xc3 };
	/* 0: jne 6 (2); 2: pop rbx; 3: pop rbp; 4: ret; 5: nop; 6: ret */
	static const uint8_t j[] = { 0x75, 0x04, 0x5b, 0x5d, 0xc3, 0x90, 0xc3 };
	/* 0: jne 2 (2); 2: pop rbx; 3: pop rbp; 4: ret */
	static const uint8_t in[] = { 0x75, 0x00, 0x5b, 0x5d, 0xc3 };
	char why[UTRACE_PROBE_WHY_MAX];
	uint32_t s, e;

	/* the call's return would land inside the jump */
	CHECK_INT(cover(c, sizeof(c), 6, &s, &e, why), ==, 0);
	CHECK(strstr(why, "ret"));
	/* the jcc's copy goes to its target (outside) or on to the probe */
	CHECK_INT(cover(j, sizeof(j), 4, &s, &e, why), ==, 1);
	CHECK_INT(s, ==, 0);
	CHECK_INT(e, ==, 5);
	/* ... but not when it lands inside */
	CHECK_INT(cover(in, sizeof(in), 4, &s, &e, why), ==, 0);
	CHECK(strstr(why, "the branch at +0x0 lands at +0x2"));
}

TEST(a_branch_into_the_displaced_bytes_leaves_a_breakpoint)
{
	/* 0: xor eax,eax; 2: inc eax; 4: cmp eax,10 (3); 7: jne 2 (2); 9: ret */
	static const uint8_t f[] = { 0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x0a,
				     0x75, 0xf9, 0xc3 };
	char why[UTRACE_PROBE_WHY_MAX];

	CHECK_INT(check(f, sizeof(f), 0, why), ==, 0);
	CHECK(strstr(why, "the branch at +0x7 lands at +0x2"));
	CHECK_INT(check(f, sizeof(f), 2, why), ==, 1); /* the target itself */
}

TEST(calls_syscalls_and_interrupts)
{
	/* 0: call +0 (5); 5: syscall (2); 7: int3; 8: nop*5; d: ret */
	static const uint8_t f[] = { 0xe8, 0, 0, 0, 0, 0x0f, 0x05, 0xcc,
				     0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	char why[UTRACE_PROBE_WHY_MAX];

	/* a call may end a jump's run: it returns past the jump */
	CHECK_INT(check(f, sizeof(f), 0, why), ==, 1);
	CHECK_INT(check(f, sizeof(f), 5, why), ==, 0);
	CHECK(strstr(why, "a syscall"));
	CHECK_INT(check(f, sizeof(f), 7, why), ==, -EINVAL);
	CHECK(strstr(why, "interrupt"));
	CHECK_INT(check(f, sizeof(f), 8, why), ==, 1);
	CHECK_INT(check(f, sizeof(f), 14, why), ==, -EINVAL);
	CHECK(strstr(why, "outside"));
}

TEST(a_call_inside_a_run_leaves_a_breakpoint)
{
	/* 0: call *%rax (2); 2: pop rbx; 3: pop rbp; 4: nop*4; 8: ret */
	static const uint8_t f[] = { 0xff, 0xd0, 0x5b, 0x5d, 0x90, 0x90, 0x90,
				     0x90, 0xc3 };
	/* 0: nop; 1: nop; 2: call *%rax (2); 4: nop; 5: nop; 6: ret */
	static const uint8_t g[] = { 0x90, 0x90, 0xff, 0xd0, 0x90, 0x90, 0xc3 };
	/* 0: nop; 1: nop; 2: nop; 3: call *%rax (2): ends the run */
	static const uint8_t h[] = { 0x90, 0x90, 0x90, 0xff, 0xd0, 0xc3 };
	char why[UTRACE_PROBE_WHY_MAX];

	CHECK_INT(check(f, sizeof(f), 0, why), ==, 0);
	CHECK(strstr(why, "a call at +0x0 (its return would land inside the jump)"));
	CHECK_INT(check(g, sizeof(g), 0, why), ==, 0);
	CHECK(strstr(why, "a call at +0x2"));
	CHECK_INT(check(h, sizeof(h), 0, why), ==, 1);
}

TEST(a_jump_table_leaves_breakpoints)
{
	/* 0: mov eax,1 (5); 5: jmp rax (2); 7: ret */
	static const uint8_t f[] = { 0xb8, 1, 0, 0, 0, 0xff, 0xe0, 0xc3 };
	char why[UTRACE_PROBE_WHY_MAX];

	CHECK_INT(check(f, sizeof(f), 0, why), ==, 0);
	CHECK(strstr(why, "indirect jump at +0x5"));
}

TEST(exits_are_rets_and_tail_calls)
{
	/* 0: test edi,edi; 2: je 7; 4: ret(1)... */
	static const uint8_t f[] = {
		0x85, 0xff,			/* 0: test edi,edi */
		0x74, 0x01,			/* 2: je 5 */
		0xc3,				/* 4: ret */
		0xe9, 0x00, 0x10, 0, 0,		/* 5: jmp far away (tail call) */
		0xeb, 0xf4,			/* a: jmp 0 (inside) */
		0xff, 0x25, 0, 0, 0, 0,		/* c: jmp *0(%rip) (GOT) */
	};
	uint64_t ex[8];
	size_t n;
	char why[UTRACE_PROBE_WHY_MAX];

	CHECK_INT(utrace__probe_decode_exits(f, sizeof(f), 0x1000, ex, 8, &n, why), ==, 0);
	CHECK_INT(n, ==, 3);
	CHECK_INT(ex[0], ==, 0x1004);
	CHECK_INT(ex[1], ==, 0x1005);
	CHECK_INT(ex[2], ==, 0x100c);
	CHECK_INT(utrace__probe_decode_exits(f, sizeof(f), 0x1000, ex, 1, &n, why), ==, 0);
	CHECK_INT(n, ==, 3);
}

TEST(status_flags_dead_where_set_before_read)
{
	/* the trampoline restores only DF where they are dead */
	static const uint8_t set[] = { 0x48, 0x8d, 0x04, 0x7f,	/* lea (%rdi,%rdi,2),%rax */
				       0x31, 0xc0, 0xc3 };	/* xor %eax,%eax; ret */
	static const uint8_t jcc[] = { 0x90, 0x75, 0x00, 0xc3 };	/* nop; jne; ret */
	static const uint8_t adc[] = { 0xff, 0xc0, 0x11, 0xc0, 0xc3 };	/* inc (not CF); adc */
	static const uint8_t call[] = { 0x90, 0xe8, 0, 0, 0, 0, 0xc3 };	/* nop; call; ret */
	static const uint8_t jmp[] = { 0xeb, 0x00, 0x31, 0xc0, 0xc3 };	/* jmp; xor; ret */
	static const uint8_t pushf[] = { 0x9c, 0x31, 0xc0, 0xc3 };	/* pushfq reads them */

	CHECK_INT(utrace__probe_flags_dead(set, sizeof(set), 0x1000, 0x1000), ==, 1);
	CHECK_INT(utrace__probe_flags_dead(set, sizeof(set), 0x1000, 0x1006), ==, 1);
	CHECK_INT(utrace__probe_flags_dead(jcc, sizeof(jcc), 0x1000, 0x1000), ==, 0);
	CHECK_INT(utrace__probe_flags_dead(adc, sizeof(adc), 0x1000, 0x1000), ==, 0);
	CHECK_INT(utrace__probe_flags_dead(call, sizeof(call), 0x1000, 0x1000), ==, 1);
	CHECK_INT(utrace__probe_flags_dead(jmp, sizeof(jmp), 0x1000, 0x1000), ==, 0);
	CHECK_INT(utrace__probe_flags_dead(pushf, sizeof(pushf), 0x1000, 0x1000), ==, 0);
}

TEST_MAIN()
