/* SPDX-License-Identifier: MIT */
/*
 * Protocol buffers, the writing half, into an output buffer (obuf.h): the
 * wire format of https://protobuf.dev/programming-guides/encoding/, as
 * much as the Perfetto export needs.
 *
 *     field   = key value
 *     key     = varint (field number << 3 | wire type)
 *     varint  = 7 bits a byte, least significant first, high bit: more
 *     wire type 0 (VARINT): uint64, int64 (two's complement: 10 bytes when
 *         negative), bool, enum
 *     wire type 1 (I64): double, fixed64, little-endian
 *     wire type 2 (LEN): varint length, then the bytes: strings, bytes,
 *         embedded messages
 *
 * An embedded message's length comes before it and is known only after
 * it: utrace__pb_begin() leaves one byte for the length, and
 * utrace__pb_end() writes it there, moving the message up when its
 * length takes more bytes (rare: most messages here are short).
 * Internal to the reader library.
 */
#ifndef UTRACE_READER_PROTOBUF_H
#define UTRACE_READER_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "obuf.h"

enum { UTRACE__PB_VARINT = 0, UTRACE__PB_I64 = 1, UTRACE__PB_LEN = 2 };

#define UTRACE__PB_VARINT_MAX 10

/* v as a varint at p (room for UTRACE__PB_VARINT_MAX); returns its length. */
static inline size_t utrace__pb_varint_at(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

static inline size_t utrace__pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline void utrace__pb_varint(struct utrace__obuf *b, uint64_t v)
{
	utrace__ob_reserve(b, UTRACE__PB_VARINT_MAX);
	if (b->cap - b->len < UTRACE__PB_VARINT_MAX)
		return;
	b->len += utrace__pb_varint_at((unsigned char *)b->p + b->len, v);
}

static inline void utrace__pb_key(struct utrace__obuf *b, uint32_t field, int wire_type)
{
	utrace__pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire_type);
}

/* uint64, uint32, bool, enum */
static inline void utrace__pb_uint(struct utrace__obuf *b, uint32_t field, uint64_t v)
{
	utrace__pb_key(b, field, UTRACE__PB_VARINT);
	utrace__pb_varint(b, v);
}

/* int64, int32 (not sint: no zigzag) */
static inline void utrace__pb_int(struct utrace__obuf *b, uint32_t field, int64_t v)
{
	utrace__pb_uint(b, field, (uint64_t)v);
}

static inline void utrace__pb_double(struct utrace__obuf *b, uint32_t field, double d)
{
	unsigned char t[8];
	uint64_t v;
	int i;

	memcpy(&v, &d, 8);
	for (i = 0; i < 8; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	utrace__pb_key(b, field, UTRACE__PB_I64);
	utrace__ob_put(b, t, 8);
}

/* string, bytes */
static inline void utrace__pb_bytes(struct utrace__obuf *b, uint32_t field, const void *p,
				    size_t n)
{
	utrace__pb_key(b, field, UTRACE__PB_LEN);
	utrace__pb_varint(b, n);
	utrace__ob_put(b, p, n);
}

/* An embedded message: its key and a byte for its length; returns where
 * the message starts, for utrace__pb_end(). */
static inline size_t utrace__pb_begin(struct utrace__obuf *b, uint32_t field)
{
	utrace__pb_key(b, field, UTRACE__PB_LEN);
	utrace__ob_putc(b, 0);
	return b->len;
}

void utrace__pb_end_long(struct utrace__obuf *b, size_t start) UTRACE_HIDDEN;

static inline void utrace__pb_end(struct utrace__obuf *b, size_t start)
{
	if (b->nomem)
		return;
	if (b->len - start < 0x80)
		b->p[start - 1] = (char)(b->len - start);
	else
		utrace__pb_end_long(b, start);
}

#endif /* UTRACE_READER_PROTOBUF_H */
