/* SPDX-License-Identifier: MIT */
/*
 * The protobuf writer of the Perfetto export (lib/reader/protobuf.h):
 * varints at their edges, negative int64 in ten bytes, doubles, and
 * embedded messages whose length outgrows the byte left for it, nested.
 */
#include "test.h"

#include "protobuf.h"

/* The bytes of b as "xx xx ..." */
static const char *hex(const struct utrace__obuf *b)
{
	static char t[4096];
	size_t i, n = 0;

	t[0] = 0;
	for (i = 0; i < b->len && n + 4 < sizeof(t); i++)
		n += (size_t)snprintf(t + n, sizeof(t) - n, "%s%02x", i ? " " : "",
				      (unsigned char)b->p[i]);
	return t;
}

/* A varint read back (the decoder of the tests, not the writer's). */
static uint64_t get_varint(const unsigned char *p, size_t *n)
{
	uint64_t v = 0;
	int shift = 0;

	*n = 0;
	do {
		v |= (uint64_t)(p[*n] & 0x7f) << shift;
		shift += 7;
	} while (p[(*n)++] & 0x80);
	return v;
}

TEST(varints_at_their_edges)
{
	static const struct { uint64_t v; size_t len; } cases[] = {
		{ 0, 1 }, { 1, 1 }, { 127, 1 }, { 128, 2 }, { 300, 2 }, { 16383, 2 },
		{ 16384, 3 }, { UINT32_MAX, 5 }, { (uint64_t)1 << 63, 10 }, { UINT64_MAX, 10 },
	};
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct utrace__obuf b = { 0 };

		utrace__pb_varint(&b, cases[i].v);
		CHECK_INT(b.len, ==, cases[i].len);
		CHECK_INT(utrace__pb_varint_len(cases[i].v), ==, cases[i].len);
		CHECK(get_varint((unsigned char *)b.p, &n) == cases[i].v);
		CHECK_INT(n, ==, cases[i].len);
		free(b.p);
	}
}

TEST(fields_as_the_encoding_guide_writes_them)
{
	struct utrace__obuf b = { 0 };

	utrace__pb_uint(&b, 1, 150);             /* the guide's first example */
	CHECK_STR(hex(&b), "08 96 01");
	b.len = 0;
	utrace__pb_bytes(&b, 2, "testing", 7);
	CHECK_STR(hex(&b), "12 07 74 65 73 74 69 6e 67");
	b.len = 0;
	utrace__pb_int(&b, 4, -2);               /* int64: two's complement */
	CHECK_STR(hex(&b), "20 fe ff ff ff ff ff ff ff ff 01");
	b.len = 0;
	utrace__pb_uint(&b, 58, 3);              /* a two-byte key */
	CHECK_STR(hex(&b), "d0 03 03");
	b.len = 0;
	utrace__pb_double(&b, 44, 1.5);
	CHECK_STR(hex(&b), "e1 02 00 00 00 00 00 00 f8 3f");
	free(b.p);
}

TEST(short_and_empty_messages)
{
	struct utrace__obuf b = { 0 };
	size_t m;

	m = utrace__pb_begin(&b, 3);
	utrace__pb_uint(&b, 1, 150);
	utrace__pb_end(&b, m);
	CHECK_STR(hex(&b), "1a 03 08 96 01");
	b.len = 0;
	utrace__pb_end(&b, utrace__pb_begin(&b, 8));
	CHECK_STR(hex(&b), "42 00");
	free(b.p);
}

/* Messages of 127, 128 and 20000 bytes inside one another: each length
 * moves what follows it, and every length must still be right. */
TEST(long_messages_nested)
{
	static const size_t sizes[] = { 125, 126, 127, 128, 200, 16381, 16382, 20000 };
	size_t i, k, n, at, len, outer, inner;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct utrace__obuf b = { 0 };
		const unsigned char *p;
		char *fill = malloc(sizes[i]);

		CHECK(fill);
		for (k = 0; k < sizes[i]; k++)
			fill[k] = (char)('a' + k % 26);
		outer = utrace__pb_begin(&b, 1);
		utrace__pb_uint(&b, 2, 7);
		inner = utrace__pb_begin(&b, 3);
		utrace__pb_bytes(&b, 4, fill, sizes[i]);
		utrace__pb_end(&b, inner);
		utrace__pb_uint(&b, 5, 9);
		utrace__pb_end(&b, outer);
		CHECK(!b.nomem);

		p = (const unsigned char *)b.p;
		CHECK_INT(p[0], ==, 0x0a);
		len = get_varint(p + 1, &n);
		at = 1 + n;
		CHECK_INT(at + len, ==, b.len);            /* the outer length */
		CHECK_INT(p[at], ==, 0x10);
		CHECK_INT(p[at + 1], ==, 7);
		CHECK_INT(p[at + 2], ==, 0x1a);
		len = get_varint(p + at + 3, &n);          /* the inner length */
		at += 3 + n;
		CHECK_INT(p[at], ==, 0x22);
		CHECK_INT(get_varint(p + at + 1, &k), ==, sizes[i]);
		CHECK_INT(len, ==, 1 + k + sizes[i]);
		CHECK(!memcmp(p + at + 1 + k, fill, sizes[i]));
		at += len;
		CHECK_INT(p[at], ==, 0x28);                /* what follows, intact */
		CHECK_INT(p[at + 1], ==, 9);
		CHECK_INT(at + 2, ==, b.len);
		free(fill);
		free(b.p);
	}
}

TEST(utf8_strings)
{
	struct utrace__obuf b = { 0 };

	utrace__ob_utf8(&b, "a\xc3\xa9\x80\xff\xe2\x82", 7);
	CHECK_INT(b.len, ==, 11);
	CHECK(!memcmp(b.p, "a\xc3\xa9\xc2\x80\xc3\xbf\xc3\xa2\xc2\x82", 11));
	free(b.p);
}

TEST_MAIN()
