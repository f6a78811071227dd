/* SPDX-License-Identifier: MIT */
/*
 * What each jump-label site of an object holds (t0093): its own table,
 * read from its own code.  Included once by each object of the test.
 */
#ifndef NOPSITE_SITES_H
#define NOPSITE_SITES_H

#include <stdio.h>
#include <string.h>

#include <utrace/tracepoint.h>

#ifdef UTRACE__JUMP_LABEL
#ifdef __cplusplus
extern "C" {
#endif
extern struct utrace_jump_entry __start_utrace_jump_table[]
	__attribute__((weak, visibility("hidden")));
extern struct utrace_jump_entry __stop_utrace_jump_table[]
	__attribute__((weak, visibility("hidden")));
#ifdef __cplusplus
}
#endif

/* What one site holds: "nop", "on" (jmp to the traced block), "branch"
 * (the compiled jmp to the load and branch), else "other". */
static inline const char *nopsite_state(const struct utrace_jump_entry *e)
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0, 0 };
	const unsigned char *b = (const unsigned char *)e->site;
	int rel;

	memcpy(&rel, b + 1, 4);
	if (!memcmp(b, nop5, 5))
		return "nop";
	if (b[0] == 0xe9 && (uintptr_t)(b + 5 + rel) == e->target)
		return "on";
	if (b[0] == 0xe9)
		return "branch";
	return "other";
}

/*
 * " obj.event=STATE" for each event with sites in this object, by name:
 * the state of all its sites ("mixed" when they differ).  The compilers
 * inline and unroll differently: the number of sites is theirs.
 */
static inline void nopsite_print(FILE *f, const char *obj)
{
	const char *last = "";

	for (;;) {
		const char *name = NULL, *st = NULL;

		/* the next name after 'last' */
		for (struct utrace_jump_entry *e = __start_utrace_jump_table;
		     e && e < __stop_utrace_jump_table; e++)
			if (strcmp(e->tp->name, last) > 0 &&
			    (!name || strcmp(e->tp->name, name) < 0))
				name = e->tp->name;
		if (!name)
			break;
		for (struct utrace_jump_entry *e = __start_utrace_jump_table;
		     e < __stop_utrace_jump_table; e++) {
			if (strcmp(e->tp->name, name))
				continue;
			if (!st)
				st = nopsite_state(e);
			else if (strcmp(st, nopsite_state(e)))
				st = "mixed";
		}
		fprintf(f, " %s.%s=%s", obj, name, st);
		last = name;
	}
}
#else
static inline void nopsite_print(FILE *f, const char *obj)
{
	fprintf(f, " %s=no-jump-labels", obj);
}
#endif

#endif /* NOPSITE_SITES_H */
