/* SPDX-License-Identifier: MIT */
/*
 * table.h - the one growable hash table of the tools and readers: open
 * addressing with linear probing, from a 64-bit hash to a size_t value
 * (most often an index into the caller's own array of entries).
 *
 * The table keeps the hashes, not the keys: a lookup walks the values
 * stored under the same hash and the caller compares its keys, so that
 * one table serves strings, pointers, numbers and records:
 *
 *	size_t pos = utrace__table_start(&t, h), i;
 *
 *	while (utrace__table_next(&t, h, &pos, &i))
 *		if (!strcmp(rows[i].key, key))
 *			return i;
 *	return utrace__table_add(&t, h, nr) < 0 ? -ENOMEM : nr++;
 *
 * At most half the slots are taken (it doubles before), so a walk ends at
 * an empty slot soon.  Nothing is removed, except by clearing the table.
 * Not for concurrent writers (hist-map.c is the lock-free one).
 */
#ifndef UTRACE_COMMON_TABLE_H
#define UTRACE_COMMON_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct utrace__table {
	uint64_t *hash;
	size_t *val;            /* UTRACE__TABLE_EMPTY: an empty slot */
	size_t cap, nr;         /* cap: 0 or a power of two */
};

#define UTRACE__TABLE_INIT { NULL, NULL, 0, 0 }
#define UTRACE__TABLE_EMPTY SIZE_MAX

/* A 64-bit number (a pointer, an id) spread over the hash's bits: a
 * bijection, so that equal hashes are equal numbers (no compare needed). */
static inline uint64_t utrace__hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	return k ^ (k >> 33);
}

/* Where a walk for @h begins. */
static inline size_t utrace__table_start(const struct utrace__table *t, uint64_t h)
{
	return t->cap ? (size_t)(h >> 7) & (t->cap - 1) : 0;
}

/*
 * utrace__table_next - the next value stored under @h
 * @pos: from utrace__table_start(), moved on by each call
 * @val: the value, when it returns true
 *
 * Return: false when there is no other.
 */
static inline bool utrace__table_next(const struct utrace__table *t, uint64_t h, size_t *pos,
				      size_t *val)
{
	if (!t->cap)
		return false;
	while (t->val[*pos] != UTRACE__TABLE_EMPTY) {
		size_t i = *pos;

		*pos = (i + 1) & (t->cap - 1);
		if (t->hash[i] == h) {
			*val = t->val[i];
			return true;
		}
	}
	return false;
}

/* The first value stored under @h, or @none. */
static inline size_t utrace__table_get(const struct utrace__table *t, uint64_t h, size_t none)
{
	size_t pos = utrace__table_start(t, h), v;

	return utrace__table_next(t, h, &pos, &v) ? v : none;
}

/* Store @val (not UTRACE__TABLE_EMPTY) under @h, beside any other of the
 * same hash: 0 or -ENOMEM. */
int utrace__table_add(struct utrace__table *t, uint64_t h, size_t val) UTRACE_HIDDEN;
/* For keys whose hash is the key (utrace__hash_u64()): store @val under
 * @h, in place of the value already there if there is one. */
int utrace__table_put(struct utrace__table *t, uint64_t h, size_t val) UTRACE_HIDDEN;
/* Make room for @n entries in all, so that adding them cannot fail. */
int utrace__table_reserve(struct utrace__table *t, size_t n) UTRACE_HIDDEN;
/* Empty the table (its memory kept). */
void utrace__table_clear(struct utrace__table *t) UTRACE_HIDDEN;
void utrace__table_free(struct utrace__table *t) UTRACE_HIDDEN;

#endif /* UTRACE_COMMON_TABLE_H */
