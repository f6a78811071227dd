/* SPDX-License-Identifier: MIT */
/* The growable hash table (table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

static void put(struct utrace__table *t, uint64_t h, size_t val)
{
	size_t i = utrace__table_start(t, h);

	while (t->val[i] != UTRACE__TABLE_EMPTY)
		i = (i + 1) & (t->cap - 1);
	t->hash[i] = h;
	t->val[i] = val;
	t->nr++;
}

int utrace__table_reserve(struct utrace__table *t, size_t n)
{
	struct utrace__table g = UTRACE__TABLE_INIT;
	size_t i;

	if (2 * n <= t->cap)
		return 0;
	g.cap = t->cap ? t->cap : 64;
	while (2 * n > g.cap) {
		if (g.cap > SIZE_MAX / 4 / sizeof(*g.hash))
			return -ENOMEM;
		g.cap *= 2;
	}
	g.hash = malloc(g.cap * sizeof(*g.hash));
	g.val = malloc(g.cap * sizeof(*g.val));
	if (!g.hash || !g.val) {
		free(g.hash);
		free(g.val);
		return -ENOMEM;
	}
	memset(g.val, 0xff, g.cap * sizeof(*g.val));    /* UTRACE__TABLE_EMPTY */
	for (i = 0; i < t->cap; i++)
		if (t->val[i] != UTRACE__TABLE_EMPTY) {
			size_t j = (size_t)(t->hash[i] >> 7) & (g.cap - 1);

			while (g.val[j] != UTRACE__TABLE_EMPTY)
				j = (j + 1) & (g.cap - 1);
			g.hash[j] = t->hash[i];
			g.val[j] = t->val[i];
			g.nr++;
		}
	free(t->hash);
	free(t->val);
	*t = g;
	return 0;
}

int utrace__table_add(struct utrace__table *t, uint64_t h, size_t val)
{
	if (utrace__table_reserve(t, t->nr + 1) < 0)
		return -ENOMEM;
	put(t, h, val);
	return 0;
}

int utrace__table_put(struct utrace__table *t, uint64_t h, size_t val)
{
	size_t pos = utrace__table_start(t, h), v;

	if (utrace__table_next(t, h, &pos, &v)) {
		t->val[(pos - 1) & (t->cap - 1)] = val;
		return 0;
	}
	return utrace__table_add(t, h, val);
}

void utrace__table_clear(struct utrace__table *t)
{
	if (t->cap)
		memset(t->val, 0xff, t->cap * sizeof(*t->val));
	t->nr = 0;
}

void utrace__table_free(struct utrace__table *t)
{
	free(t->hash);
	free(t->val);
	*t = (struct utrace__table)UTRACE__TABLE_INIT;
}
