/* SPDX-License-Identifier: MIT */
/* The one string hash of utrace's tables (FNV-1a, 64 bits). */
#ifndef UTRACE_COMMON_HASH_H
#define UTRACE_COMMON_HASH_H

#include <stdint.h>

#define UTRACE_HASH_INIT 0xcbf29ce484222325ULL

/**
 * utrace__hash_str - fold the string @s into the hash @h
 * @h: UTRACE_HASH_INIT, or the hash of what came before
 * @s: a NUL-terminated string
 *
 * A separator is folded in after the string, so that ("ab", "c") and
 * ("a", "bc") hash apart.  Return: the new hash.
 */
static inline uint64_t utrace__hash_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL;
}

#endif /* UTRACE_COMMON_HASH_H */
