/* SPDX-License-Identifier: MIT */
/* The symbols of one ELF file (elfsyms.h), read with libelf. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"

struct cand {
	uint64_t addr, size;
	const char *name;
	int rank;               /* global 0, weak 1, local 2; data + 4 */
	bool ifunc;
};

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* of aliases (getpid, __getpid): functions, then the plainest name,
	 * then global before weak before local */
	if ((x->rank & 4) != (y->rank & 4))
		return (x->rank & 4) - (y->rank & 4);
	if (underscores(x->name) != underscores(y->name))
		return underscores(x->name) - underscores(y->name);
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

static Elf_Scn *find_table(Elf *elf, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr dsh;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr h;

		if (!gelf_getshdr(scn, &h))
			continue;
		if (h.sh_type == SHT_SYMTAB) {
			*sh = h;
			return scn;
		}
		if (h.sh_type == SHT_DYNSYM && !dyn) {
			dyn = scn;
			dsh = h;
		}
	}
	if (dyn)
		*sh = dsh;
	return dyn;
}

static uint32_t name_of(const struct utrace__symtab *t, uint32_t i)
{
	return i < t->nr ? t->syms[i].name : t->aliases[i - t->nr].name;
}

static int by_name_cmp(const void *a, const void *b, void *arg)
{
	const struct utrace__symtab *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(t->strings + name_of(t, x), t->strings + name_of(t, y));

	return c ? c : (x > y) - (x < y);
}

/* t->by_name (a thousand definitions each looked their name up in a
 * linear walk); without it (no memory) the walk. */
static void index_names(struct utrace__symtab *t)
{
	size_t n = t->nr + t->nr_aliases;

	t->by_name = n && n < UINT32_MAX ? malloc(n * sizeof(*t->by_name)) : NULL;
	if (!t->by_name)
		return;
	for (size_t i = 0; i < n; i++)
		t->by_name[i] = (uint32_t)i;
	qsort_r(t->by_name, n, sizeof(*t->by_name), by_name_cmp, t);
}

static int load(Elf *elf, struct utrace__symtab *t)
{
	struct cand *c = NULL;
	size_t n = 0, i, nsyms, slen = 0, k;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn = find_table(elf, &sh);

	if (!scn || !sh.sh_entsize)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EINVAL;
	nsyms = sh.sh_size / sh.sh_entsize;
	c = calloc(nsyms ? nsyms : 1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (i = 0; i < nsyms; i++) {
		GElf_Sym s;
		const char *name;
		int type, bind;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS || !s.st_size ||
		    !s.st_value)
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		c[n++] = (struct cand){ s.st_value, s.st_size, name,
					(bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2) +
					(type == STT_OBJECT ? 4 : 0),
					type == STT_GNU_IFUNC };
	}
	qsort(c, n, sizeof(*c), cand_cmp);
	/* one per address, the first after sorting; the other names of it
	 * are aliases (a name found twice, .symtab's local and global
	 * copies, once) */
	for (i = 0, k = 0; i < n; i++)
		k += !i || c[i - 1].addr != c[i].addr;
	for (i = 0; i < n; i++)
		slen += strlen(c[i].name) + 1;
	if (slen > UINT32_MAX || n > UINT32_MAX) {
		free(c);
		return -EINVAL;
	}
	t->syms = calloc(k ? k : 1, sizeof(*t->syms));
	t->aliases = calloc(n - k ? n - k : 1, sizeof(*t->aliases));
	t->strings = malloc(slen ? slen : 1);
	if (!t->syms || !t->aliases || !t->strings) {
		free(c);
		utrace__symtab_free(t);
		return -ENOMEM;
	}
	t->strings_len = 0;
	for (i = 0; i < n; i++) {
		size_t l = strlen(c[i].name) + 1;
		uint32_t at = (uint32_t)t->strings_len;

		if (!i || c[i - 1].addr != c[i].addr) {
			t->syms[t->nr++] = (struct utrace__sym){ c[i].addr, c[i].size, at,
								 c[i].ifunc, !(c[i].rank & 4) };
		} else {
			if (!strcmp(c[i].name, t->strings + t->syms[t->nr - 1].name))
				continue;
			t->aliases[t->nr_aliases++] = (struct utrace__sym_alias){
				at, (uint32_t)(t->nr - 1) };
		}
		memcpy(t->strings + at, c[i].name, l);
		t->strings_len += l;
	}
	free(c);
	index_names(t);
	return 0;
}

static Elf *open_elf(int fd)
{
	static int ready;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return NULL;
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	/* read, not mapped: the file may be a traced process's, which can
	 * truncate it while we read, and a mapping would then fault (SIGBUS
	 * in a root recorder) where a read only comes up short */
	return elf_begin(fd, ELF_C_READ, NULL);
}

int utrace__symtab_load(int fd, struct utrace__symtab *t)
{
	Elf *elf = open_elf(fd);
	int r;

	memset(t, 0, sizeof(*t));
	if (!elf)
		return -EINVAL;
	r = elf_kind(elf) == ELF_K_ELF ? load(elf, t) : -EINVAL;
	elf_end(elf);
	return r;
}

/* The file's NT_GNU_BUILD_ID in hex; 0 or -1. */
static int build_id(Elf *elf, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr h;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &h) || h.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const uint8_t *id = (const uint8_t *)d->d_buf + doff;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) ||
			    nh.n_descsz < 2 || nh.n_descsz * 2 + 1 > len)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", id[i]);
			return 0;
		}
	}
	return -1;
}

int utrace__symtab_load_debug(int fd, struct utrace__symtab *t)
{
	Elf *elf = open_elf(fd);
	char hex[129], path[192];
	GElf_Shdr sh;
	int dfd, r;

	memset(t, 0, sizeof(*t));
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -EINVAL;
	}
	/* only .dynsym here, and the detached symbols installed (Debian's
	 * -dbg packages: /usr/lib/debug/.build-id/xx/yyyy.debug) */
	if (find_table(elf, &sh) && sh.sh_type == SHT_DYNSYM && build_id(elf, hex, sizeof(hex)) == 0) {
		snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
		dfd = open(path, O_RDONLY | O_CLOEXEC);
		if (dfd >= 0) {
			r = utrace__symtab_load(dfd, t);
			close(dfd);
			if (r == 0) {
				elf_end(elf);
				return 0;
			}
		}
	}
	r = load(elf, t);
	elf_end(elf);
	return r;
}

void utrace__symtab_free(struct utrace__symtab *t)
{
	free(t->syms);
	free(t->aliases);
	free(t->strings);
	free(t->by_name);
	memset(t, 0, sizeof(*t));
}

const struct utrace__sym *utrace__symtab_find(const struct utrace__symtab *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nr, i;
	int back;

	while (lo < hi) {       /* the first symbol after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest symbol below that holds it (a few back: nested ones) */
	for (i = lo, back = 0; i > 0 && back < 8; i--, back++) {
		const struct utrace__sym *s = &t->syms[i - 1];

		if (addr - s->addr < s->size)
			return s;
	}
	return NULL;
}

/* The PT_LOAD segment holding a file offset (by_vaddr false: from the
 * start of its page) or an address of the file; 0 or -1. */
static int load_segment(int fd, uint64_t key, bool by_vaddr, GElf_Phdr *out)
{
	Elf *elf = open_elf(fd);
	size_t n, i;
	int r = -1;

	if (!elf)
		return -1;
	if (elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (by_vaddr ? key < ph.p_vaddr || key >= ph.p_vaddr + ph.p_filesz :
			    key < (ph.p_offset & ~(uint64_t)4095) || key >= ph.p_offset + ph.p_filesz)
				continue;
			*out = ph;
			r = 0;
			break;
		}
	}
	elf_end(elf);
	return r;
}

int utrace__elf_extent(int fd, uint64_t *lo, uint64_t *hi)
{
	Elf *elf = open_elf(fd);
	size_t n, i;
	int r = -1;

	if (!elf)
		return -1;
	*lo = UINT64_MAX;
	*hi = 0;
	if (elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n)) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (ph.p_vaddr < *lo)
				*lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > *hi)
				*hi = ph.p_vaddr + ph.p_memsz;
			r = 0;
		}
	}
	elf_end(elf);
	return r;
}

int utrace__elf_bias(int fd, uint64_t start, uint64_t off, uint64_t *bias)
{
	GElf_Phdr ph;

	if (load_segment(fd, off, false, &ph) < 0)
		return -1;
	*bias = start - (ph.p_vaddr - (ph.p_offset - off));
	return 0;
}

/*
 * Does the table's @sym name @name?  Pass 0: exactly; pass 1: as its
 * default version ("pthread_mutex_lock@@GLIBC_2.2.5", the names of a
 * detached debug file's .symtab, which perf probe matches the same way);
 * pass 2: as any version ("memcpy@GLIBC_2.2.5").
 */
static bool names(const char *sym, const char *name, int pass)
{
	size_t l;

	if (!pass)
		return !strcmp(sym, name);
	l = strlen(name);
	if (strncmp(sym, name, l) || sym[l] != '@')
		return false;
	return pass == 2 || sym[l + 1] == '@';
}

const struct utrace__sym *utrace__symtab_by_name(const struct utrace__symtab *t, const char *name)
{
	/* the exact name: the first in by_name's order, which is the walk's
	 * (syms by address, then aliases) */
	if (t->by_name) {
		size_t lo = 0, hi = t->nr + t->nr_aliases;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (strcmp(t->strings + name_of(t, t->by_name[mid]), name) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < t->nr + t->nr_aliases &&
		    !strcmp(t->strings + name_of(t, t->by_name[lo]), name)) {
			uint32_t i = t->by_name[lo];

			return &t->syms[i < t->nr ? i : t->aliases[i - t->nr].sym];
		}
		if (strchr(name, '@'))
			return NULL;
	}
	/* (a name with its own version is matched exactly only) */
	for (int pass = t->by_name ? 1 : 0; pass < (strchr(name, '@') ? 1 : 3); pass++) {
		for (size_t i = 0; i < t->nr; i++)
			if (t->syms[i].name < t->strings_len &&
			    names(t->strings + t->syms[i].name, name, pass))
				return &t->syms[i];
		for (size_t i = 0; i < t->nr_aliases; i++)
			if (t->aliases[i].name < t->strings_len && t->aliases[i].sym < t->nr &&
			    names(t->strings + t->aliases[i].name, name, pass))
				return &t->syms[t->aliases[i].sym];
	}
	return NULL;
}

int utrace__elf_off_to_vaddr(int fd, uint64_t off, uint64_t *vaddr)
{
	GElf_Phdr ph;

	if (load_segment(fd, off, false, &ph) < 0)
		return -1;
	*vaddr = ph.p_vaddr + off - ph.p_offset;
	return 0;
}

int utrace__elf_vaddr_to_off(int fd, uint64_t vaddr, uint64_t *off)
{
	GElf_Phdr ph;

	if (load_segment(fd, vaddr, true, &ph) < 0)
		return -1;
	*off = vaddr - ph.p_vaddr + ph.p_offset;
	return 0;
}
