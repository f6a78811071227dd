// SPDX-License-Identifier: MIT
/*
 * The jump targets of an ELF file (targets.h): decoded once per file with
 * Zydis, read with libelf, cached for the process's life.
 *
 * Like the kernel's optprobes (arch/x86/kernel/kprobes/opt.c, which
 * decodes the whole function and refuses a jump when a branch lands in
 * the covered bytes), but over the whole object: in user space one
 * function jumps into another (glibc's mempcpy into memcpy's body), and
 * exception landing pads are reached from the unwinder, not from any
 * instruction.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "elfsyms.h"
#include "targets.h"

/* A target: the address, and what made it one (kind in the top byte of
 * 'from', the instruction's address below) */
struct target {
	uint64_t to;
	uint64_t from;
};

#define FROM_KIND(f) ((unsigned int)((f) >> 56))
#define FROM_ADDR(f) ((f) & ((1ull << 56) - 1))

/* A name for messages: an address of a function-like symbol */
struct tsym {
	uint64_t addr;
	uint32_t name;
};

struct utrace__probe_targets {
	struct target *t;
	size_t n, cap;
	struct tsym *syms;
	size_t nsyms, syms_cap;
	char *names;
	size_t names_len, names_cap;
	size_t by_kind[UTRACE_TARGET_KINDS];	/* before duplicates went */
};

/* An executable section's bytes, and the data sections' (the LSDAs) */
struct sect {
	uint64_t addr, size;
	const uint8_t *data;
	bool exec;
};

struct file {
	Elf *elf;
	struct sect *s;
	size_t ns;
};

static int add(struct utrace__probe_targets *t, uint64_t to, unsigned int kind, uint64_t from)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct target *p = realloc(t->t, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->t = p;
		t->cap = cap;
	}
	t->t[t->n++] = (struct target){ to, FROM_ADDR(from) | ((uint64_t)kind << 56) };
	return 0;
}

static int add_sym(struct utrace__probe_targets *t, uint64_t addr, const char *name)
{
	size_t l = strlen(name) + 1;

	if (t->nsyms == t->syms_cap) {
		size_t cap = t->syms_cap ? t->syms_cap * 2 : 1024;
		struct tsym *p = realloc(t->syms, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		t->syms = p;
		t->syms_cap = cap;
	}
	if (t->names_len + l > t->names_cap) {
		size_t cap = t->names_cap ? t->names_cap * 2 : 16384;
		char *p;

		while (cap < t->names_len + l)
			cap *= 2;
		if (cap > UINT32_MAX || !(p = realloc(t->names, cap)))
			return -ENOMEM;
		t->names = p;
		t->names_cap = cap;
	}
	memcpy(t->names + t->names_len, name, l);
	t->syms[t->nsyms++] = (struct tsym){ addr, (uint32_t)t->names_len };
	t->names_len += l;
	return 0;
}

static const struct sect *sect_of(const struct file *f, uint64_t addr)
{
	for (size_t i = 0; i < f->ns; i++)
		if (addr >= f->s[i].addr && addr - f->s[i].addr < f->s[i].size)
			return &f->s[i];
	return NULL;
}

static bool in_exec(const struct file *f, uint64_t addr)
{
	const struct sect *s = sect_of(f, addr);

	return s && s->exec;
}

/* ---- symbols ---- */

static int scan_symbols(struct utrace__probe_targets *t, const struct file *f, Elf *elf)
{
	Elf_Scn *scn = NULL;
	int r = 0;

	while ((scn = elf_nextscn(elf, scn)) && !r) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !r; i++) {
			GElf_Sym s;
			const char *name;
			int type;

			if (!gelf_getsym(d, (int)i, &s))
				break;
			type = GELF_ST_TYPE(s.st_info);
			if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS ||
			    type == STT_SECTION || type == STT_FILE || type == STT_TLS ||
			    !in_exec(f, s.st_value))
				continue;
			r = add(t, s.st_value, UTRACE_TARGET_SYMBOL, s.st_value);
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!r && name && *name && (type == STT_FUNC || type == STT_GNU_IFUNC))
				r = add_sym(t, s.st_value, name);
		}
	}
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

		if (!gelf_getshdr(scn, &h) || h.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			const uint8_t *id = (const uint8_t *)d->d_buf + doff;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) || nh.n_descsz < 2 ||
			    nh.n_descsz * 2 + 1 > len)
				continue;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", id[i]);
			return 0;
		}
	}
	return -1;
}

/* The detached debug file's symbols too (local functions of a stripped
 * library: libc's __memmove_avx_unaligned_erms) */
static int scan_debug_symbols(struct utrace__probe_targets *t, const struct file *f)
{
	char hex[129], path[192];
	Elf *elf;
	int fd, r;

	if (build_id(f->elf, hex, sizeof(hex)))
		return 0;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	r = elf && elf_kind(elf) == ELF_K_ELF ? scan_symbols(t, f, elf) : 0;
	if (elf)
		elf_end(elf);
	close(fd);
	return r;
}

/* ---- code ---- */

/* Decode [start, end) of @s linearly, every relative branch and every
 * RIP-relative operand reaching code a target. */
static int scan_run(struct utrace__probe_targets *t, const struct file *f, const struct sect *s,
		    const ZydisDecoder *dec, uint64_t start, uint64_t end)
{
	uint64_t at = start;

	while (at < end) {
		ZydisDecodedInstruction zi;
		const uint8_t *p = s->data + (at - s->addr);
		uint64_t next, to;
		int r = 0;

		/* (the last instruction of a run may pass a bogus start) */
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, NULL, p, s->addr + s->size - at,
								&zi))) {
			at++;	/* data or padding: on at the next byte */
			continue;
		}
		next = at + zi.length;
		if (zi.raw.imm[0].is_relative) {
			to = next + (uint64_t)zi.raw.imm[0].value.s;
			r = add(t, to, zi.mnemonic == ZYDIS_MNEMONIC_CALL ?
				UTRACE_TARGET_CALL : UTRACE_TARGET_BRANCH, at);
		} else if (zi.raw.modrm.offset && zi.raw.modrm.mod == 0 && zi.raw.modrm.rm == 5 &&
			   zi.address_width == 64) {
			/* (a ModRM byte, never at offset 0: RIP-relative) */
			to = next + (uint64_t)zi.raw.disp.value;
			if (in_exec(f, to))
				r = add(t, to, UTRACE_TARGET_ADDR, at);
		}
		if (r)
			return r;
		at = next;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Each executable section decoded from each known start (its own start,
 * every symbol and FDE start in it) to the next: a desynchronised sweep
 * (data in the code) is caught up at the next function.
 */
static int scan_code(struct utrace__probe_targets *t, const struct file *f)
{
	ZydisDecoder dec;
	uint64_t *starts;
	size_t n = 0, nt = t->n;
	int r = 0;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	/* (lengths, raw immediates, ModRM and displacements only: a third
	 * faster, the same targets) */
	ZydisDecoderEnableMode(&dec, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);
	starts = malloc((nt + f->ns) * sizeof(*starts) + 1);
	if (!starts)
		return -ENOMEM;
	/* (the targets so far: symbols, FDE starts, landing pads) */
	for (size_t i = 0; i < nt; i++)
		starts[n++] = t->t[i].to;
	for (size_t i = 0; i < f->ns; i++)
		if (f->s[i].exec)
			starts[n++] = f->s[i].addr;
	qsort(starts, n, sizeof(*starts), cmp_u64);
	for (size_t i = 0; i < n && !r; i++) {
		const struct sect *s = sect_of(f, starts[i]);
		uint64_t end;
		size_t k = i + 1;

		if (!s || !s->exec || (i && starts[i - 1] == starts[i]))
			continue;
		while (k < n && starts[k] == starts[i])
			k++;
		end = s->addr + s->size;
		if (k < n && starts[k] < end)
			end = starts[k];
		r = scan_run(t, f, s, &dec, starts[i], end);
	}
	free(starts);
	return r;
}

/* ---- .eh_frame and .gcc_except_table ---- */

struct rd {
	const uint8_t *p, *end;
	uint64_t addr;		/* of p */
	bool bad;
};

static uint64_t rd_n(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < n) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	memcpy(&v, r->p, n);	/* little-endian */
	r->p += n;
	r->addr += n;
	return v;
}

/* A LEB128 number; its last byte in @last (the sign is its bit 6), the
 * bits read in @bits. */
static uint64_t rd_leb(struct rd *r, uint8_t *last, unsigned int *bits)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		b = (uint8_t)rd_n(r, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !r->bad);
	*last = b;
	*bits = shift;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	unsigned int bits;
	uint8_t last;

	return rd_leb(r, &last, &bits);
}

static int64_t rd_sleb(struct rd *r)
{
	unsigned int bits;
	uint8_t last;
	uint64_t v = rd_leb(r, &last, &bits);

	if (bits < 64 && (last & 0x40))
		v |= ~0ull << bits;
	return (int64_t)v;
}

#define PE_OMIT 0xff

/* A DW_EH_PE_* encoded pointer; @base for funcrel/datarel. */
static uint64_t rd_enc(struct rd *r, uint8_t enc, uint64_t base)
{
	uint64_t at = r->addr, v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = rd_n(r, 8); break;
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_n(r, 2); break;
	case 0x03: v = rd_n(r, 4); break;
	case 0x04: v = rd_n(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_n(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_n(r, 4); break;
	case 0x0c: v = rd_n(r, 8); break;
	default: r->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;		/* pcrel */
	case 0x30: case 0x40: v += base; break;	/* datarel, funcrel */
	default: r->bad = true; return 0;
	}
	return v;	/* (indirect, 0x80: the pointer's own address is no code) */
}

/* A reader over the file's bytes at address @addr */
static bool rd_at(const struct file *f, uint64_t addr, struct rd *r)
{
	const struct sect *s = sect_of(f, addr);

	if (!s || !s->data)
		return false;
	r->p = s->data + (addr - s->addr);
	r->end = s->data + s->size;
	r->addr = addr;
	r->bad = false;
	return true;
}

/* The landing pads of the LSDA at @lsda of the function at @func. */
static int scan_lsda(struct utrace__probe_targets *t, const struct file *f, uint64_t lsda,
		     uint64_t func)
{
	struct rd r;
	uint64_t lpstart = func, cs_len;
	uint8_t enc, cs_enc;
	const uint8_t *cs_end;

	if (!rd_at(f, lsda, &r))
		return 0;
	enc = (uint8_t)rd_n(&r, 1);
	if (enc != PE_OMIT)
		lpstart = rd_enc(&r, enc, 0);
	enc = (uint8_t)rd_n(&r, 1);
	if (enc != PE_OMIT)
		rd_uleb(&r);
	cs_enc = (uint8_t)rd_n(&r, 1);
	cs_len = rd_uleb(&r);
	if (r.bad || cs_len > (uint64_t)(r.end - r.p))
		return 0;
	cs_end = r.p + cs_len;
	while (r.p < cs_end && !r.bad) {
		uint64_t lp;

		rd_enc(&r, cs_enc & 0x0f, 0);	/* start */
		rd_enc(&r, cs_enc & 0x0f, 0);	/* length */
		lp = rd_enc(&r, cs_enc & 0x0f, 0);
		rd_uleb(&r);			/* action */
		if (!r.bad && lp && add(t, lpstart + lp, UTRACE_TARGET_LANDING, func))
			return -ENOMEM;
	}
	return 0;
}

struct cie {
	uint64_t off;
	uint8_t fde_enc, lsda_enc;
	bool z;
};

/* A CIE from its version byte on (@e just after its id): the encodings
 * its augmentation gives into @c.  false: it does not parse. */
static bool cie_body(struct rd *e, struct cie *c)
{
	uint8_t version = (uint8_t)rd_n(e, 1);
	const char *aug = (const char *)e->p;
	size_t al;

	if (e->bad)
		return false;
	al = strnlen(aug, (size_t)(e->end - e->p));
	if (al == (size_t)(e->end - e->p))
		return false;
	c->z = aug[0] == 'z';
	e->p += al + 1;
	e->addr += al + 1;
	rd_uleb(e);			/* code alignment */
	rd_sleb(e);			/* data alignment */
	if (version == 1)
		rd_n(e, 1);
	else
		rd_uleb(e);		/* return register */
	if (c->z) {
		rd_uleb(e);		/* augmentation length */
		for (const char *a = aug + 1; *a && !e->bad; a++) {
			if (*a == 'L') {
				c->lsda_enc = (uint8_t)rd_n(e, 1);
			} else if (*a == 'R') {
				c->fde_enc = (uint8_t)rd_n(e, 1);
			} else if (*a == 'P') {
				uint8_t pe = (uint8_t)rd_n(e, 1);

				rd_enc(e, pe & 0x7f, 0);
			} else if (*a != 'S' && *a != 'B' && *a != 'G') {
				break;
			}
		}
	}
	return !e->bad;
}

static int scan_eh_frame(struct utrace__probe_targets *t, const struct file *f,
			 const struct sect *eh)
{
	struct cie cies[64];
	size_t ncies = 0, next_cie = 0;
	struct rd r = { eh->data, eh->data + eh->size, eh->addr, false };

	while (r.p < r.end && !r.bad) {
		uint64_t len = rd_n(&r, 4), start = r.addr, id_at, id;
		struct rd e;

		if (!len)
			break;
		if (len == 0xffffffff) {
			len = rd_n(&r, 8);
			start = r.addr;
		}
		if (r.bad || len > (uint64_t)(r.end - r.p))
			break;
		e = (struct rd){ r.p, r.p + len, r.addr, false };
		r.p += len;
		r.addr += len;
		id_at = e.addr;
		id = rd_n(&e, 4);
		if (!id) {
			/* a CIE */
			struct cie c = { start - 4, 0, PE_OMIT, false };

			if (!cie_body(&e, &c))
				continue;
			if (ncies < sizeof(cies) / sizeof(cies[0]))
				cies[ncies++] = c;
			else
				cies[next_cie++ % ncies] = c;
			continue;
		}
		/* an FDE: its CIE is at id_at - id */
		uint64_t cie_off = id_at - id;
		const struct cie *c = NULL;
		struct cie found;

		for (size_t i = 0; i < ncies; i++)
			if (cies[i].off == cie_off)
				c = &cies[i];
		if (!c) {
			/* (not seen yet or forgotten: parse it now) */
			struct rd cr;
			uint64_t clen;

			if (!rd_at(f, cie_off, &cr))
				continue;
			clen = rd_n(&cr, 4);
			if (cr.bad || clen == 0xffffffff || clen > (uint64_t)(cr.end - cr.p) ||
			    rd_n(&cr, 4) != 0)
				continue;
			found = (struct cie){ cie_off, 0, PE_OMIT, false };
			if (!cie_body(&cr, &found))
				continue;
			c = &found;
		}
		uint64_t pc = rd_enc(&e, c->fde_enc, 0);

		rd_enc(&e, c->fde_enc & 0x0f, 0);	/* range */
		if (e.bad)
			continue;
		if (in_exec(f, pc) && add(t, pc, UTRACE_TARGET_FDE, pc))
			return -ENOMEM;
		if (c->z) {
			uint64_t alen = rd_uleb(&e);
			const uint8_t *aend = e.p + alen;

			if (c->lsda_enc != PE_OMIT && !e.bad) {
				uint64_t lsda = rd_enc(&e, c->lsda_enc, 0);

				if (!e.bad && e.p <= aend && lsda && scan_lsda(t, f, lsda, pc))
					return -ENOMEM;
			}
		}
	}
	return 0;
}

/* ---- the set ---- */

static int cmp_target(const void *a, const void *b)
{
	const struct target *x = a, *y = b;

	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	/* the first kept: a branch names its instruction, best for a message */
	return x->from < y->from ? -1 : x->from > y->from;
}

static int cmp_tsym(const void *a, const void *b)
{
	const struct tsym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void utrace__probe_targets_free(struct utrace__probe_targets *t)
{
	if (!t)
		return;
	free(t->t);
	free(t->syms);
	free(t->names);
	free(t);
}

int utrace__probe_targets_load(int fd, struct utrace__probe_targets **out, char *why,
			       size_t why_len)
{
	struct utrace__probe_targets *t = calloc(1, sizeof(*t));
	struct file f = { 0 };
	size_t eh = SIZE_MAX;
	GElf_Ehdr eh_hdr;
	size_t shstrndx, k;
	Elf_Scn *scn = NULL;
	int r = -EINVAL;

	*out = NULL;
	if (!t) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	elf_version(EV_CURRENT);
	f.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!f.elf || elf_kind(f.elf) != ELF_K_ELF || !gelf_getehdr(f.elf, &eh_hdr) ||
	    eh_hdr.e_machine != EM_X86_64 || elf_getshdrstrndx(f.elf, &shstrndx)) {
		snprintf(why, why_len, "not an x86-64 ELF file");
		goto out;
	}
	while ((scn = elf_nextscn(f.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;
		struct sect *p;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		name = elf_strptr(f.elf, shstrndx, sh.sh_name);
		if (!(sh.sh_flags & SHF_EXECINSTR) && !(name && (!strcmp(name, ".eh_frame") ||
							       !strcmp(name, ".gcc_except_table"))))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || d->d_size != sh.sh_size || !d->d_buf)
			continue;
		p = realloc(f.s, (f.ns + 1) * sizeof(*p));
		if (!p) {
			r = -ENOMEM;
			goto out;
		}
		f.s = p;
		f.s[f.ns++] = (struct sect){ sh.sh_addr, sh.sh_size, d->d_buf,
					     !!(sh.sh_flags & SHF_EXECINSTR) };
		if (name && !strcmp(name, ".eh_frame"))
			eh = f.ns - 1;
	}
	r = scan_symbols(t, &f, f.elf);
	if (!r)
		r = scan_debug_symbols(t, &f);
	if (!r && eh != SIZE_MAX)
		r = scan_eh_frame(t, &f, &f.s[eh]);
	if (!r)
		r = scan_code(t, &f);
	if (r) {
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->n; i++)
		t->by_kind[FROM_KIND(t->t[i].from)]++;
	qsort(t->t, t->n, sizeof(*t->t), cmp_target);
	for (size_t i = k = 0; i < t->n; i++)
		if (!k || t->t[k - 1].to != t->t[i].to)
			t->t[k++] = t->t[i];
	t->n = k;
	qsort(t->syms, t->nsyms, sizeof(*t->syms), cmp_tsym);
	*out = t;
	t = NULL;
	r = 0;
out:
	free(f.s);
	if (f.elf)
		elf_end(f.elf);
	utrace__probe_targets_free(t);
	return r;
}

size_t utrace__probe_targets_count(const struct utrace__probe_targets *t)
{
	return t->n;
}

size_t utrace__probe_targets_kind(const struct utrace__probe_targets *t, unsigned int kind)
{
	return kind < UTRACE_TARGET_KINDS ? t->by_kind[kind] : 0;
}

/* "name+0xoff" of @addr, or the address */
static void name_of(const struct utrace__probe_targets *t, uint64_t addr, char *buf, size_t len)
{
	size_t lo = 0, hi = t->nsyms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		snprintf(buf, len, "%s+0x%" PRIx64, t->names + t->syms[lo - 1].name,
			 addr - t->syms[lo - 1].addr);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
}

int utrace__probe_targets_inside(const struct utrace__probe_targets *t, uint64_t lo, uint64_t hi,
				 char *why, size_t why_len)
{
	size_t a = 0, b = t->n;
	const struct target *x;
	char from[96];

	while (a < b) {
		size_t mid = (a + b) / 2;

		if (t->t[mid].to <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == t->n || t->t[a].to >= hi)
		return 0;
	x = &t->t[a];
	name_of(t, FROM_ADDR(x->from), from, sizeof(from));
	switch (FROM_KIND(x->from)) {
	case UTRACE_TARGET_BRANCH:
		snprintf(why, why_len, "+0x%" PRIx64 " is the target of the jump at %s", x->to - lo,
			 from);
		break;
	case UTRACE_TARGET_CALL:
		snprintf(why, why_len, "+0x%" PRIx64 " is the target of the call at %s", x->to - lo,
			 from);
		break;
	case UTRACE_TARGET_ADDR:
		snprintf(why, why_len, "+0x%" PRIx64 " is an address taken at %s", x->to - lo, from);
		break;
	case UTRACE_TARGET_LANDING:
		snprintf(why, why_len, "+0x%" PRIx64 " is an exception landing pad of %s",
			 x->to - lo, from);
		break;
	case UTRACE_TARGET_FDE:
		snprintf(why, why_len, "+0x%" PRIx64 " starts an .eh_frame FDE", x->to - lo);
		break;
	default:
		snprintf(why, why_len, "+0x%" PRIx64 " is the symbol %s", x->to - lo, from);
		break;
	}
	return 1;
}

/* ---- in this process ---- */

struct cached {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct utrace__probe_targets *t;
	struct cached *next;
};

static struct cached *cache;

const struct utrace__probe_targets *utrace__probe_targets_at(uintptr_t addr, uint64_t *bias,
							     char *why, size_t why_len)
{
	FILE *m = fopen("/proc/self/maps", "re");
	char line[4096 + 128], path[4096] = "";
	unsigned long start = 0, end, off = 0, ino = 0;
	unsigned int maj = 0, min = 0;
	bool found = false;
	struct stat st;
	struct cached *c;
	int fd;

	if (!m) {
		snprintf(why, why_len, "cannot read /proc/self/maps");
		return NULL;
	}
	while (fgets(line, sizeof(line), m)) {
		int pos = 0;

		if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu %n", &start, &end, &off, &maj, &min,
			   &ino, &pos) < 6)
			continue;
		if (addr < start || addr >= end)
			continue;
		found = true;
		if (pos > 0 && line[pos] == '/') {
			snprintf(path, sizeof(path), "%s", line + pos);
			path[strcspn(path, "\n")] = 0;
		}
		break;
	}
	fclose(m);
	if (!found || !*path || !ino) {
		snprintf(why, why_len, "the code at 0x%" PRIxPTR " is not in a file", addr);
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || st.st_ino != ino || major(st.st_dev) != maj ||
	    minor(st.st_dev) != min) {
		snprintf(why, why_len, "%s is not the file mapped at 0x%" PRIxPTR " any more", path,
			 addr);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (utrace__elf_bias(fd, start, off, bias)) {
		snprintf(why, why_len, "%s: no segment at offset 0x%lx", path, off);
		close(fd);
		return NULL;
	}
	for (c = cache; c; c = c->next)
		if (c->dev == st.st_dev && c->ino == st.st_ino && c->size == st.st_size &&
		    c->mtime.tv_sec == st.st_mtim.tv_sec && c->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			return c->t;
		}
	c = calloc(1, sizeof(*c));
	if (!c || utrace__probe_targets_load(fd, &c->t, why, why_len)) {
		if (!c)
			snprintf(why, why_len, "out of memory");
		free(c);
		close(fd);
		return NULL;
	}
	close(fd);
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	c->size = st.st_size;
	c->mtime = st.st_mtim;
	c->next = cache;
	cache = c;
	return c->t;
}
