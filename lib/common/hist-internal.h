/* SPDX-License-Identifier: MIT */
/*
 * hist-internal.h - what the three parts of the hist triggers share (private
 * to lib/common): hist.c (the trigger language, as trace_events_hist.c),
 * hist-map.c (the table, as tracing_map.c) and hist-print.c (the `hist`
 * file's text).
 */
#ifndef UTRACE_HIST_INTERNAL_H
#define UTRACE_HIST_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

#include "hist.h"

#define KEY_SIZE_MAX (UTRACE__HIST_STR_MAX + 16 * 8)   /* HIST_KEY_SIZE_MAX */
#define COMM_LEN 16

/* A growing text (the trigger info, the hist file). */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

void utrace__sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3))) UTRACE_HIDDEN;
/* The trigger's line, as the `trigger` file and the hist file's head show it. */
void utrace__hist_info_print(struct sbuf *b, const struct utrace__hist *h, bool paused) UTRACE_HIDDEN;
/* The arithmetic of a variable's expression node. */
uint64_t utrace__hist_fold(const struct utrace__hist_node *n, uint64_t a, uint64_t b) UTRACE_HIDDEN;

/* The table (hist-map.c has its comment). */
struct elt {
	const void *owner;
	char comm[COMM_LEN];
	_Atomic uint64_t sums[UTRACE__HIST_VALS_MAX];
	_Atomic uint64_t vars[UTRACE__HIST_VARS_MAX];
	_Atomic uint32_t var_set;                /* a bit each */
	_Atomic uint32_t track_seq;              /* of track and the save() area */
	_Atomic uint64_t track;                  /* onmax()/onchange()'s value */
	_Atomic uint32_t vstr_seq;               /* of the string variables' area */
	unsigned char key[];                     /* then the save() area, then the
						  * string variables' (words) */
};

struct slot {
	_Atomic uint32_t hash;
	struct elt *_Atomic elt;
};

struct utrace__hist_map {
	const struct utrace__hist *h;
	uint32_t max_elts, nr_slots;
	size_t elt_size;
	unsigned char *pool;
	_Atomic uint32_t next_elt;
	struct slot *slots;
	_Atomic uint64_t hits, drops;
	/* .snapshot(): the value and the entry of the last one taken */
	_Atomic uint32_t snap_seq;
	_Atomic uint64_t snap_val;
	struct elt *_Atomic snap_elt;
};

/* The entry of a slot taken by a writer that then found no entry left. */
extern struct elt utrace__hist_dead_elt UTRACE_HIDDEN;

uint32_t utrace__hist_seq_read_begin(const _Atomic uint32_t *seq) UTRACE_HIDDEN;
bool utrace__hist_seq_read_retry(const _Atomic uint32_t *seq, uint32_t s, unsigned int *tries) UTRACE_HIDDEN;
_Atomic uint64_t *utrace__hist_save_area(const struct utrace__hist *h, const struct elt *e) UTRACE_HIDDEN;
uint32_t utrace__hist_save_cap(const struct utrace__hist_field *f) UTRACE_HIDDEN;
uint64_t utrace__hist_read_num(const unsigned char *p, uint32_t size, bool is_signed) UTRACE_HIDDEN;

#endif
