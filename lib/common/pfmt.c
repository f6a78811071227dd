/* SPDX-License-Identifier: MIT */
/* The kernel's %p extensions, rendered from bytes (pfmt.h). */
#include <stdio.h>
#include <string.h>

#include "pfmt.h"

#define AF_INET_ 2           /* the Linux values, as the record holds them */
#define AF_INET6_ 10

static const char hex_lo[] = "0123456789abcdef";
static const char hex_up[] = "0123456789ABCDEF";

/* A bounded writer: keeps the first cap - 1 characters. */
struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len++] = c;
}

static void puts_(struct out *o, const char *s)
{
	while (*s)
		put(o, *s++);
}

static void put_byte(struct out *o, unsigned char b, const char *digits)
{
	put(o, digits[b >> 4]);
	put(o, digits[b & 15]);
}

static void put_dec(struct out *o, unsigned long long v)
{
	char t[24];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		put(o, t[--n]);
}

static size_t finish(struct out *o)
{
	if (o->cap)
		o->buf[o->len] = 0;
	return o->len;
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

unsigned int utrace__pext_parse(const char *s, struct utrace__pext *x)
{
	unsigned int n = 0;

	while (is_alnum(s[n]))
		n++;
	memset(x, 0, sizeof(*x));
	x->len = n;
	memcpy(x->ext, s, n < sizeof(x->ext) - 1 ? n : sizeof(x->ext) - 1);
	switch (s[0]) {
	case 'x':
		x->kind = UTRACE__PEXT_RAW;
		break;
	case 'S': case 's': case 'B': case 'F': case 'f':
		x->kind = UTRACE__PEXT_SYMBOL;
		break;
	case 'b':
		x->kind = UTRACE__PEXT_BITMAP;
		break;
	case 'h':
		x->kind = UTRACE__PEXT_HEX;
		break;
	case 'E':
		x->kind = UTRACE__PEXT_ESCAPE;
		break;
	case 'M': case 'm':
		x->kind = UTRACE__PEXT_MAC;
		break;
	case 'U':
		x->kind = UTRACE__PEXT_UUID;
		break;
	case 'a':
		x->kind = UTRACE__PEXT_PHYS;
		break;
	case 'I': case 'i':
		/* %pI5 and the like: the kernel prints the pointer */
		x->kind = s[1] == '4' ? UTRACE__PEXT_IP4 : s[1] == '6' ? UTRACE__PEXT_IP6 :
			  s[1] == 'S' ? UTRACE__PEXT_IPSA : UTRACE__PEXT_POINTER;
		break;
	default:
		x->kind = UTRACE__PEXT_POINTER;
		break;
	}
	return n;
}

static unsigned int bits_of(int width)
{
	unsigned int n = width < 0 ? 0 : (unsigned int)width;

	return n > UTRACE__PEXT_MAX_BITS ? UTRACE__PEXT_MAX_BITS : n;
}

/* The kernel's hex_string() and escaped_string(): no width is one byte. */
static size_t bytes_of(int width, size_t max)
{
	size_t n = width < 0 ? 1 : (size_t)width;

	return n > max ? max : n;
}

size_t utrace__pext_need(const struct utrace__pext *x, int width)
{
	switch (x->kind) {
	case UTRACE__PEXT_BITMAP:
		/* whole unsigned longs, as the kernel's bitmaps */
		return (bits_of(width) + 63) / 64 * 8;
	case UTRACE__PEXT_HEX:
		return width == 0 ? 0 : bytes_of(width, UTRACE__PEXT_MAX_HEX);
	case UTRACE__PEXT_ESCAPE:
		return width == 0 ? 0 : bytes_of(width, UTRACE__PEXT_MAX_ESCAPE);
	case UTRACE__PEXT_IP4:
		return 4;
	case UTRACE__PEXT_IP6:
	case UTRACE__PEXT_UUID:
		return 16;
	case UTRACE__PEXT_IPSA:
		return 28;      /* sizeof(struct sockaddr_in6) */
	case UTRACE__PEXT_MAC:
		return 6;
	case UTRACE__PEXT_PHYS:
		return 8;
	default:
		return 0;
	}
}

bool utrace__pext_padded(const struct utrace__pext *x)
{
	switch (x->kind) {
	case UTRACE__PEXT_SYMBOL:
	case UTRACE__PEXT_IP4:
	case UTRACE__PEXT_IP6:
	case UTRACE__PEXT_IPSA:
	case UTRACE__PEXT_MAC:
	case UTRACE__PEXT_UUID:
		return true;
	default:
		return false;
	}
}

const char *utrace__pext_bad_pointer(uint64_t addr)
{
	if (!addr)
		return "(null)";
	if (addr < 4096 || addr >= (uint64_t)-4095)
		return "(efault)";
	return NULL;
}

static bool bit(const unsigned char *m, unsigned int i)
{
	return (m[i / 8] >> (i % 8)) & 1;
}

/* bitmap_string(): 32-bit chunks in hex, the most significant first, the
 * first as wide as its bits need, the others 8 digits. */
static void bitmap_hex(struct out *o, const unsigned char *m, unsigned int nbits)
{
	unsigned int chunksz = nbits % 32 ? nbits % 32 : 32;
	int i;

	for (i = (int)((nbits + 31) / 32 * 32) - 32; i >= 0; i -= 32) {
		uint32_t val = 0;
		unsigned int k, digits = (chunksz + 3) / 4;

		for (k = 0; k < chunksz; k++)
			val |= (uint32_t)bit(m, (unsigned int)i + k) << k;
		if (i != (int)((nbits + 31) / 32 * 32) - 32)
			put(o, ',');
		while (digits--)
			put(o, hex_lo[(val >> (4 * digits)) & 15]);
		chunksz = 32;
	}
}

/* bitmap_list_string(): "0-3,8,10-11" */
static void bitmap_list(struct out *o, const unsigned char *m, unsigned int nbits)
{
	unsigned int i = 0, first = 1;

	while (i < nbits) {
		unsigned int bot;

		if (!bit(m, i)) {
			i++;
			continue;
		}
		bot = i;
		while (i < nbits && bit(m, i))
			i++;
		if (!first)
			put(o, ',');
		first = 0;
		put_dec(o, bot);
		if (i - 1 != bot) {
			put(o, '-');
			put_dec(o, i - 1);
		}
	}
}

/* ip4_string(): fmt is the letters after 'p' ("I4", "i4h", ...); the
 * byte order letter is at ord. */
static void ip4(struct out *o, const unsigned char *a, bool zeros, char ord)
{
	int i, idx = 0, step = 1;

	if (ord == 'h' || ord == 'l') {  /* host order is little-endian here */
		idx = 3;
		step = -1;
	}
	for (i = 0; i < 4; i++, idx += step) {
		unsigned int v = a[idx];

		if (zeros) {
			put(o, (char)('0' + v / 100));
			put(o, (char)('0' + v / 10 % 10));
			put(o, (char)('0' + v % 10));
		} else {
			put_dec(o, v);
		}
		if (i < 3)
			put(o, '.');
	}
}

static void ip6_full(struct out *o, const unsigned char *a, bool colons)
{
	int i;

	for (i = 0; i < 8; i++) {
		put_byte(o, a[2 * i], hex_lo);
		put_byte(o, a[2 * i + 1], hex_lo);
		if (colons && i != 7)
			put(o, ':');
	}
}

/* ip6_compressed_string(): RFC 5952, with the last 32 bits as IPv4 for
 * v4-mapped and ISATAP addresses. */
static void ip6_compressed(struct out *o, const unsigned char *a)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	unsigned int w[8], zl[8] = { 0 };
	int i, j, range, longest = 1, colonpos = -1;
	bool use4, needcolon = false;

	for (i = 0; i < 8; i++)
		w[i] = (unsigned int)a[2 * i] << 8 | a[2 * i + 1];
	use4 = !memcmp(a, mapped, 12) ||
	       ((a[8] | 0x02) == 0x02 && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe);
	range = use4 ? 6 : 8;
	for (i = 0; i < range; i++)
		for (j = i; j < range && !w[j]; j++)
			zl[i]++;
	for (i = 0; i < range; i++) {
		if ((int)zl[i] > longest) {
			longest = (int)zl[i];
			colonpos = i;
		}
	}
	for (i = 0; i < range; i++) {
		char t[8];

		if (i == colonpos) {
			if (needcolon || i == 0)
				put(o, ':');
			put(o, ':');
			needcolon = false;
			i += longest - 1;
			continue;
		}
		if (needcolon)
			put(o, ':');
		snprintf(t, sizeof(t), "%x", w[i]);
		puts_(o, t);
		needcolon = true;
	}
	if (use4) {
		if (needcolon)
			put(o, ':');
		ip4(o, a + 12, false, 0);
	}
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ip4_addr_string_sa() and ip6_addr_string_sa() */
static void ipsa(struct out *o, const char *ext, const unsigned char *m, size_t len)
{
	bool have_p = false, have_s = false, have_f = false, have_c = false;
	char ord = 0;
	unsigned int family;
	const char *c;

	if (len < 2) {
		puts_(o, "(efault)");
		return;
	}
	for (c = ext + 2; (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'); c++) {
		switch (*c) {
		case 'p': have_p = true; break;
		case 'f': have_f = true; break;
		case 's': have_s = true; break;
		case 'c': have_c = true; break;
		case 'h': case 'l': case 'n': case 'b': ord = *c; break;
		}
	}
	family = (unsigned int)m[0] | (unsigned int)m[1] << 8;
	if (family == AF_INET_ && len >= 8) {
		ip4(o, m + 4, ext[0] == 'i', ord);
		if (have_p) {
			put(o, ':');
			put_dec(o, (unsigned int)m[2] << 8 | m[3]);
		}
	} else if (family == AF_INET6_ && len >= 28) {
		bool br = have_p || have_s || have_f;

		if (br)
			put(o, '[');
		if (ext[0] == 'I' && have_c)
			ip6_compressed(o, m + 8);
		else
			ip6_full(o, m + 8, ext[0] == 'I');
		if (br)
			put(o, ']');
		if (have_p) {
			put(o, ':');
			put_dec(o, (unsigned int)m[2] << 8 | m[3]);
		}
		if (have_f) {
			put(o, '/');
			put_dec(o, be32(m + 4) & 0x0fffffff);
		}
		if (have_s) {
			uint32_t scope = (uint32_t)m[24] | (uint32_t)m[25] << 8 |
					 (uint32_t)m[26] << 16 | (uint32_t)m[27] << 24;

			put(o, '%');
			put_dec(o, scope);
		}
	} else if (family == AF_INET_ || family == AF_INET6_) {
		puts_(o, "(efault)");
	} else {
		puts_(o, "(invalid address)");
	}
}

/* The kernel's ctype: Latin-1 letters and signs print too. */
static bool k_isprint(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c >= 0xa0;
}

/* escaped_string() with string_escape_mem() */
static void escape(struct out *o, const char *ext, const unsigned char *m, size_t len)
{
	enum { SPACE = 1, SPECIAL = 2, NUL_ = 4, OCTAL = 8, HEX = 16, NP = 32 };
	unsigned int flags = 0;
	const char *c;
	size_t i;

	/* the flag letters, up to the first other one */
	for (c = ext + 1; *c; c++) {
		unsigned int f = *c == 'a' ? SPACE | SPECIAL | NUL_ | OCTAL :
				 *c == 'c' ? SPECIAL : *c == 'h' ? HEX : *c == 'n' ? NUL_ :
				 *c == 'o' ? OCTAL : *c == 'p' ? NP : *c == 's' ? SPACE : 0;

		if (!f)
			break;
		flags |= f;
	}
	if (!flags)
		flags = SPACE | SPECIAL | NUL_ | OCTAL | NP;
	for (i = 0; i < len; i++) {
		unsigned char ch = m[i];
		const char *esc = NULL;
		char t[8];

		if ((flags & NP) && k_isprint(ch)) {
			put(o, (char)ch);
			continue;
		}
		if (flags & SPACE)
			esc = ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : ch == '\t' ? "\\t" :
			      ch == '\v' ? "\\v" : ch == '\f' ? "\\f" : NULL;
		if (!esc && (flags & SPECIAL))
			esc = ch == '\\' ? "\\\\" : ch == '\a' ? "\\a" : ch == 0x1b ? "\\e" :
			      ch == '"' ? "\\\"" : NULL;
		if (!esc && (flags & NUL_) && ch == 0)
			esc = "\\0";
		if (!esc && (flags & OCTAL)) {
			snprintf(t, sizeof(t), "\\%03o", ch);
			esc = t;
		}
		if (!esc && (flags & HEX)) {
			snprintf(t, sizeof(t), "\\x%02x", ch);
			esc = t;
		}
		if (esc)
			puts_(o, esc);
		else
			put(o, (char)ch);
	}
}

size_t utrace__pext_render(const struct utrace__pext *x, int width,
			   const unsigned char *m, size_t len, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	const char *e = x->ext;
	size_t i, n;

	if (len < utrace__pext_need(x, width) && x->kind != UTRACE__PEXT_IPSA) {
		puts_(&o, "(efault)");
		return finish(&o);
	}
	switch (x->kind) {
	case UTRACE__PEXT_BITMAP:
		if (e[1] == 'l')
			bitmap_list(&o, m, bits_of(width));
		else
			bitmap_hex(&o, m, bits_of(width));
		break;
	case UTRACE__PEXT_HEX: {
		char sep = e[1] == 'C' ? ':' : e[1] == 'D' ? '-' : e[1] == 'N' ? 0 : ' ';

		n = utrace__pext_need(x, width);
		for (i = 0; i < n; i++) {
			put_byte(&o, m[i], hex_lo);
			if (sep && i + 1 != n)
				put(&o, sep);
		}
		break;
	}
	case UTRACE__PEXT_ESCAPE:
		escape(&o, e, m, utrace__pext_need(x, width));
		break;
	case UTRACE__PEXT_IP4:
		ip4(&o, m, e[0] == 'i', e[2]);
		break;
	case UTRACE__PEXT_IP6:
		if (e[0] == 'I' && e[2] == 'c')
			ip6_compressed(&o, m);
		else
			ip6_full(&o, m, e[0] == 'I');
		break;
	case UTRACE__PEXT_IPSA:
		ipsa(&o, e, m, len);
		break;
	case UTRACE__PEXT_MAC: {
		bool rev = e[1] == 'R';
		char sep = e[1] == 'F' ? '-' : ':';

		for (i = 0; i < 6; i++) {
			put_byte(&o, m[rev ? 5 - i : i], hex_lo);
			if (e[0] == 'M' && i != 5)
				put(&o, sep);
		}
		break;
	}
	case UTRACE__PEXT_UUID: {
		static const unsigned char guid[16] = { 3, 2, 1, 0, 5, 4, 7, 6,
							8, 9, 10, 11, 12, 13, 14, 15 };
		bool upper = e[1] == 'L' || e[1] == 'B';
		bool le = e[1] == 'L' || e[1] == 'l';

		for (i = 0; i < 16; i++) {
			put_byte(&o, m[le ? guid[i] : i], upper ? hex_up : hex_lo);
			if (i == 3 || i == 5 || i == 7 || i == 9)
				put(&o, '-');
		}
		break;
	}
	case UTRACE__PEXT_PHYS: {
		uint64_t v;
		char t[24];

		memcpy(&v, m, 8);
		snprintf(t, sizeof(t), "0x%016llx", (unsigned long long)v);
		puts_(&o, t);
		break;
	}
	default:
		break;
	}
	return finish(&o);
}

size_t utrace__pext_symbol(const struct utrace__pext *x, uint64_t addr,
			   const char *name, uint64_t start, uint64_t size,
			   char *buf, size_t cap)
{
	struct out o = { buf, cap, 0 };
	char t[48];

	if (!name) {
		snprintf(t, sizeof(t), "0x%llx", (unsigned long long)addr);
		puts_(&o, t);
		return finish(&o);
	}
	puts_(&o, name);
	if (x->ext[0] == 'S' || x->ext[0] == 'F' || x->ext[0] == 'B') {
		snprintf(t, sizeof(t), "+0x%llx/0x%llx", (unsigned long long)(addr - start),
			 (unsigned long long)size);
		puts_(&o, t);
	}
	return finish(&o);
}

bool utrace__pfmt_uses_symbols(const char *fmt)
{
	const char *p;

	for (p = fmt ? strchr(fmt, '%') : NULL; p; p = strchr(p, '%')) {
		p++;
		if (*p == '%') {
			p++;
			continue;
		}
		p += strspn(p, "-+ #0123456789.*hlzjt");
		if (p[0] == 'p' && p[1] && strchr("sSBfF", p[1]))
			return true;
	}
	return false;
}
