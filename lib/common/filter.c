/* SPDX-License-Identifier: MIT */
/*
 * Event filters, as the kernel's kernel/trace/trace_events_filter.c accepts
 * them: the same grammar, the same messages, error positions and errnos
 * (tests/unit/test-filter.c checks them against a transcript of Linux
 * 6.18), compiled into a flat program that the writer runs per record.
 *
 * THE PROGRAM
 *
 * A filter is a list of predicates joined by && and ||, with ! and ( ).
 * It compiles to one instruction per predicate:
 *
 *     r = <predicate i>(record);  if (r == when[i]) goto jump[i];  else i++
 *
 * where jump[i] > i always, index nr means TRUE and nr + 1 means FALSE.
 * "a || b && c" becomes
 *
 *     0: if (a)  goto 3 (TRUE)
 *     1: if (!b) goto 4 (FALSE)
 *     2: if (!c) goto 4 (FALSE)
 *                       (falling off the end is TRUE)
 *
 * The ! operators and the negated operators (!=, a glob with a leading !)
 * cost nothing at run time: they are folded into when[i].  The predicate
 * itself is one switch case, chosen at compile time for the field's size
 * and signedness (OPC_LT_S32, OPC_EQ_U8, ...), so "pid == 5" is a load, a
 * compare and a branch.
 *
 * THE COMPILER
 *
 * The kernel's three passes (its predicate_parse() comment is the long
 * explanation), re-implemented here with the step numbers used below:
 *
 *  (1) A pre-scan counts the predicates and the nesting of parentheses and
 *      finds unbalanced quotes and parentheses (the kernel's calc_stack()).
 *  (2) First pass, over the text.  A stack holds, per open parenthesis,
 *      whether that level is inverted and whether an && or an || is
 *      waiting for its right operand.  '(' pushes, '!' toggles the
 *      inversion for what follows, anything else is a predicate.
 *  (3) Each predicate gets an entry whose 'target' provisionally names the
 *      previous entry: the chain of entries still waiting for a label.
 *  (4) After a predicate come ')', '&&', '||' or the end.  A waiting &&
 *      is resolved first (it binds tighter), then a waiting || unless an
 *      && follows; resolving one points the waiting entry's target at the
 *      current entry and sets its branch condition (when_to_branch).
 *  (5) The last entry branches to FALSE when its result is false.
 *  (6) Second pass, backwards: an entry that branches, on the same
 *      condition, to an entry that branches again takes the second
 *      entry's target directly.
 *  (7) Third pass: the inversions collected in (2) and the negated
 *      operators are folded into the branch conditions; every jump must go
 *      forward.
 *
 * A text that ends after "&&" or "||" (and any "!" after it) is refused
 * with "Meaningless filter expression", as kernel 6.18.44 does; kernels
 * before it accepted "pid == 0 &&" and ignored the operator (for one
 * predicate; with more, its entries pointed outside the program).
 *
 * THE EVALUATOR
 *
 * utrace__filter_match() is a loop over the instructions.  It takes no
 * lock, allocates nothing and never reads outside the record: the fixed
 * fields an instruction reads were checked against the record size once,
 * on entry (min_size), and a __data_loc string is checked against the
 * record size before it is read.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "filter.h"

/* ------------------------------------------------------------------ */
/* The kernel's messages, in its order.                                */

#define FILTER_ERRORS(C)						\
	C(NONE,			"No error")				\
	C(INVALID_OP,		"Invalid operator")			\
	C(TOO_MANY_OPEN,	"Too many '('")				\
	C(TOO_MANY_CLOSE,	"Too few '('")				\
	C(MISSING_QUOTE,	"Missing matching quote")		\
	C(MISSING_BRACE_OPEN,	"Missing '{'")				\
	C(MISSING_BRACE_CLOSE,	"Missing '}'")				\
	C(OPERAND_TOO_LONG,	"Operand too long")			\
	C(EXPECT_STRING,	"Expecting string field")		\
	C(EXPECT_DIGIT,		"Expecting numeric field")		\
	C(ILLEGAL_FIELD_OP,	"Illegal operation for field type")	\
	C(FIELD_NOT_FOUND,	"Field not found")			\
	C(ILLEGAL_INTVAL,	"Illegal integer value")		\
	C(BAD_SUBSYS_FILTER,	"Couldn't find or set field in one of a subsystem's events") \
	C(TOO_MANY_PREDS,	"Too many terms in predicate expression") \
	C(INVALID_FILTER,	"Meaningless filter expression")	\
	C(INVALID_CPULIST,	"Invalid cpulist")			\
	C(IP_FIELD_ONLY,	"Only 'ip' field is supported for function trace") \
	C(INVALID_VALUE,	"Invalid value (did you forget quotes)?") \
	C(NO_FUNCTION,		"Function not found")			\
	C(ERRNO,		"Error")				\
	C(NO_FILTER,		"No filter found")

#define C(name, text) FE_##name,
enum filter_err { FILTER_ERRORS(C) };
#undef C
#define C(name, text) text,
static const char *const filter_err_text[] = { FILTER_ERRORS(C) };
#undef C

/* Comparison operators, longest first where one is a prefix of another. */
enum filter_op { OP_GLOB, OP_NE, OP_EQ, OP_LE, OP_LT, OP_GE, OP_GT, OP_BAND, OP_MAX };
static const char *const op_text[OP_MAX] = { "~", "!=", "==", "<=", "<", ">=", ">", "&" };

#define MAX_STR_VAL	256	/* a string operand must be shorter */
#define NUM_BUF		24	/* a number operand must be shorter */
#define NR_CPUS		1024	/* CPUS{} lists; the kernel uses nr_cpu_ids */
#define MASK_WORDS	(NR_CPUS / 64)

/* ------------------------------------------------------------------ */
/* The kernel's ctype: Latin-1 letters are alphanumeric, NBSP is space. */

static bool k_isspace(int c)
{
	c &= 0xff;
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

static bool k_isdigit(int c)
{
	return c >= '0' && c <= '9';
}

static bool k_isalnum(int c)
{
	c &= 0xff;
	return k_isdigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= 0xc0 && c <= 0xd6) || (c >= 0xd8 && c <= 0xf6) || c >= 0xf8;
}

/* ------------------------------------------------------------------ */
/* Instructions.                                                       */

#define INT_TYPES(X)							\
	X(U8, uint8_t) X(S8, int8_t) X(U16, uint16_t) X(S16, int16_t)	\
	X(U32, uint32_t) X(S32, int32_t) X(U64, uint64_t) X(S64, int64_t)

enum opc {
	OPC_FALSE,
	OPC_TRUE,
	/* A record field against a number; MASK: the field's value, as a
	 * CPU number, in a CPUS{} list (mode 0) or just a valid CPU (1). */
#define X(T, ctype) OPC_EQ_##T, OPC_LT_##T, OPC_LE_##T, OPC_GT_##T,	\
		    OPC_GE_##T, OPC_AND_##T, OPC_MASK_##T,
	INT_TYPES(X)
#undef X
	/* The writer's CPU against a number or a CPUS{} list. */
	OPC_CPU_EQ, OPC_CPU_LT, OPC_CPU_LE, OPC_CPU_GT, OPC_CPU_GE, OPC_CPU_AND,
	OPC_CPU_MASK,
	/* Strings: char[N] in the record, __data_loc char[], the thread name. */
	OPC_STR_ARRAY, OPC_STR_DYN, OPC_STR_COMM,
	/* An address inside a function: val <= field < val2. */
	OPC_FUNC,
};

enum str_match { M_FULL, M_FRONT, M_MIDDLE, M_END, M_GLOB };

struct utrace__filter_insn {
	uint8_t op;        /* enum opc */
	uint8_t when;      /* branch when the predicate's result equals this */
	uint8_t mode;      /* strings: enum str_match; MASK: 0 test, 1 valid */
	uint8_t pad;
	uint32_t jump;     /* where to go on a branch; nr = TRUE, nr + 1 = FALSE */
	uint32_t offset;   /* of the field in the record */
	uint32_t len;      /* strings: pattern length */
	uint64_t val;      /* number; strings and masks: byte offset from the filter */
	uint64_t val2;     /* STR_ARRAY: the array's size; FUNC: end address */
};

/* A short program's fast forms (filter.h: struct utrace__filter_head). */
#define FAST_MAX UTRACE__FILTER_FAST_MAX
#define FK_RANGE UTRACE__FK_RANGE
#define FK_AND UTRACE__FK_AND
#define FK_STR UTRACE__FK_STR
#define FK_INSN UTRACE__FK_INSN
#define fast_pred utrace__filter_pred

struct utrace__filter {
	struct utrace__filter_head h;   /* (filter.h) */
	struct utrace__filter_insn prog[];
	/* then the CPU masks (uint64_t[MASK_WORDS] each), then the patterns */
};

/* ------------------------------------------------------------------ */
/* The evaluator.                                                      */

/* The thread's name is at most this long (the kernel's TASK_COMM_LEN). */
#define COMM_LEN 16

static size_t bounded_len(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

/*
 * The kernel's glob (lib/glob.c semantics): '*' any run, '?' one
 * character, '[a-z]' and '[!a-z]' classes (a ']' first in a class is
 * literal, a malformed class makes '[' literal), '\' quotes the next
 * character.  'str' is s[0..n); past its end it reads as NUL.  Iterative,
 * backtracking only to the last '*', so no recursion in a signal handler.
 */
static bool glob_match(const char *pat, const char *s, size_t n)
{
	const char *back_pat = NULL;
	size_t back_str = 0, i = 0;

	for (;;) {
		unsigned char c = i < n ? (unsigned char)s[i] : 0;
		unsigned char d = (unsigned char)*pat++;
		bool literal = false, fail = false;

		i++;
		switch (d) {
		case '?':
			if (!c)
				return false;
			break;
		case '*':
			if (!*pat)
				return true;
			back_pat = pat;
			back_str = --i;
			break;
		case '[': {
			bool inverted = *pat == '!', hit = false;
			const char *cls = pat + inverted;
			unsigned char a = (unsigned char)*cls++;

			if (!c)
				return false;
			for (;;) {
				unsigned char b = a;

				if (!a) {
					literal = true;
					break;
				}
				if (cls[0] == '-' && cls[1] != ']') {
					b = (unsigned char)cls[1];
					if (!b) {
						literal = true;
						break;
					}
					cls += 2;
				}
				hit |= a <= c && c <= b;
				a = (unsigned char)*cls++;
				if (a == ']')
					break;
			}
			if (literal)
				break;
			if (hit == inverted)
				fail = true;
			else
				pat = cls;
			break;
		}
		case '\\':
			d = (unsigned char)*pat++;
			literal = true;
			break;
		default:
			literal = true;
			break;
		}
		if (literal) {
			if (c == d) {
				if (!d)
					return true;
				continue;
			}
			fail = true;
		}
		if (fail) {
			if (!c || !back_pat)
				return false;
			pat = back_pat;
			i = ++back_str;
		}
	}
}

static bool str_match(const struct utrace__filter *f, const struct utrace__filter_insn *in,
		      const char *s, size_t max)
{
	const char *pat = (const char *)f + in->val;
	size_t n = bounded_len(s, max), plen = in->len;

	switch (in->mode) {
	case M_FULL:
		return n == plen && !memcmp(s, pat, plen);
	case M_FRONT:
		return n >= plen && !memcmp(s, pat, plen);
	case M_END:
		return n >= plen && !memcmp(s + n - plen, pat, plen);
	case M_MIDDLE:
		return plen == 0 || memmem(s, n, pat, plen) != NULL;
	default:
		return glob_match(pat, s, n);
	}
}

static bool mask_test(const struct utrace__filter *f, const struct utrace__filter_insn *in,
		      unsigned int cpu)
{
	const uint64_t *mask = (const uint64_t *)(const void *)((const char *)f + in->val);

	if (cpu >= NR_CPUS)
		return false;
	return in->mode || (mask[cpu / 64] >> (cpu % 64) & 1);
}

/* A record the filter cannot read (a __data_loc outside it): the whole
 * filter fails, whatever the predicate's negation would make of it. */
#define EVAL_BAD 2

/* The string of a STR_ARRAY or STR_DYN instruction and its most bytes
 * (*max); NULL when a __data_loc points outside the record. */
static inline const char *str_at(const struct utrace__filter_insn *in,
				 const unsigned char *rec, unsigned int size, size_t *max)
{
	uint32_t loc, off, len;

	if (in->op == OPC_STR_ARRAY) {
		/* val2 0: char name[] at the end (ftrace's print), to the
		 * record's end */
		*max = in->val2 ? in->val2 : size > in->offset ? size - in->offset : 0;
		return (const char *)rec + in->offset;
	}
	memcpy(&loc, rec + in->offset, sizeof(loc));
	off = loc & 0xffff;
	len = loc >> 16;
	if (off + len > size)
		return NULL;
	*max = len;
	return (const char *)rec + off;
}

/* 0 or 1, the predicate's result, or EVAL_BAD. */
static inline int insn_eval(const struct utrace__filter *f,
			     const struct utrace__filter_insn *in,
			     const unsigned char *rec, unsigned int size,
			     uint32_t cpu, const char *comm)
{
	switch ((enum opc)in->op) {
	case OPC_FALSE:
		return false;
	case OPC_TRUE:
		return true;
#define LOAD(ctype) ctype v; memcpy(&v, rec + in->offset, sizeof(v))
#define X(T, ctype)							\
	case OPC_EQ_##T: { LOAD(ctype); return v == (ctype)in->val; }	\
	case OPC_LT_##T: { LOAD(ctype); return v < (ctype)in->val; }	\
	case OPC_LE_##T: { LOAD(ctype); return v <= (ctype)in->val; }	\
	case OPC_GT_##T: { LOAD(ctype); return v > (ctype)in->val; }	\
	case OPC_GE_##T: { LOAD(ctype); return v >= (ctype)in->val; }	\
	case OPC_AND_##T: { LOAD(ctype); return (v & (ctype)in->val) != 0; } \
	case OPC_MASK_##T: { LOAD(ctype); return mask_test(f, in, (unsigned int)v); }
	INT_TYPES(X)
#undef X
	case OPC_CPU_EQ:
		return (int32_t)cpu == (int32_t)in->val;
	case OPC_CPU_LT:
		return (int32_t)cpu < (int32_t)in->val;
	case OPC_CPU_LE:
		return (int32_t)cpu <= (int32_t)in->val;
	case OPC_CPU_GT:
		return (int32_t)cpu > (int32_t)in->val;
	case OPC_CPU_GE:
		return (int32_t)cpu >= (int32_t)in->val;
	case OPC_CPU_AND:
		return (cpu & (uint32_t)in->val) != 0;
	case OPC_CPU_MASK:
		return mask_test(f, in, cpu);
	case OPC_STR_ARRAY:
	case OPC_STR_DYN: {
		size_t max;
		const char *s = str_at(in, rec, size, &max);

		return s ? str_match(f, in, s, max) : EVAL_BAD;
	}
	case OPC_STR_COMM:
		return str_match(f, in, comm, COMM_LEN);
	case OPC_FUNC: {
		LOAD(uint64_t);
		return v >= in->val && v < in->val2;
	}
#undef LOAD
	}
	return false;
}

/* Where the program goes after instruction i gave r: its jump when r is
 * its 'when', else the next one; NEXT_BAD for a record it cannot read. */
#define NEXT_BAD UINT32_MAX
static inline uint32_t next_insn(int r, unsigned int when, uint32_t jump, uint32_t i)
{
	if (r == (int)when)
		return jump;
	return r == EVAL_BAD ? NEXT_BAD : i + 1;
}

/* A predicate fp[] has no form for: the interpreter's, out of line. */
static __attribute__((noinline)) int slow_insn(const struct utrace__filter *f,
					       const struct utrace__filter_insn *in,
					       const unsigned char *rec, unsigned int size,
					       const struct utrace__filter_ctx *ctx)
{
	static const char no_comm[COMM_LEN];

	return insn_eval(f, in, rec, size, ctx ? ctx->cpu : 0,
			 ctx && ctx->comm ? ctx->comm : no_comm);
}

/*
 * A string == (M_FULL), prefix (M_FRONT) or glob in the record, as
 * str_match() decides it, without measuring the string first: the
 * pattern has no NUL, so where it matches, the string has none either;
 * and glob_match() stops at the first NUL (it never reads past one).
 */
static inline int str_fast(const struct utrace__filter *f, const struct utrace__filter_insn *in,
			   const unsigned char *rec, unsigned int size)
{
	const char *pat = (const char *)f + in->val;
	size_t max, plen = in->len;
	const char *s = str_at(in, rec, size, &max);

	if (!s)
		return EVAL_BAD;
	if (in->mode == M_GLOB)
		return glob_match(pat, s, max);
	if (plen > max || memcmp(s, pat, plen) != 0)
		return false;
	return in->mode == M_FRONT || plen == max || s[plen] == 0;
}

#define num_eval utrace__filter_pred_num

static bool run_program(const struct utrace__filter *f, const void *rec, unsigned int size,
			const struct utrace__filter_ctx *ctx);

/* fp[] with strings or other instructions, or a program too long for it. */
static __attribute__((noinline)) bool match_mixed(const struct utrace__filter *f,
						  const unsigned char *rec, unsigned int size,
						  const struct utrace__filter_ctx *ctx)
{
	uint32_t i = 0, n = f->h.nfast;

	if (!n)
		return run_program(f, rec, size, ctx);
	do {
		const struct fast_pred *p = &f->h.fp[i];
		int r;

		if (p->kind == FK_STR)
			r = str_fast(f, &f->prog[i], rec, size);
		else if (p->kind == FK_INSN)
			r = slow_insn(f, &f->prog[i], rec, size, ctx);
		else
			r = num_eval(p, rec);
		i = next_insn(r, p->when, p->jump, i);
		if (i == NEXT_BAD)
			return false;
	} while (i < n);
	return i == n;
}

bool utrace__filter_match(const struct utrace__filter *f, const void *rec, unsigned int size,
			  const struct utrace__filter_ctx *ctx)
{
	uint32_t i = 0, n;

	if (!f)
		return true;
	if (size < f->h.min_size)
		return false;
	if (__builtin_expect(!f->h.num_only, 0))
		return match_mixed(f, rec, size, ctx);
	/* numbers only (no call, no EVAL_BAD) */
	n = f->h.nfast;
	if (n == 1)
		return utrace__filter_pred_one(&f->h.fp[0], rec);
	do {
		const struct fast_pred *p = &f->h.fp[i];

		if (num_eval(p, rec) == p->when)
			i = p->jump;
		else
			i++;
	} while (i < n);
	return i == n;
}

static bool run_program(const struct utrace__filter *f, const void *rec, unsigned int size,
			const struct utrace__filter_ctx *ctx)
{
	static const char no_comm[COMM_LEN];
	uint32_t i = 0, n, cpu = ctx ? ctx->cpu : 0;
	const char *comm = ctx && ctx->comm ? ctx->comm : no_comm;

	n = f->h.nr;
	while (i < n) {
		const struct utrace__filter_insn *in = &f->prog[i];
		int r = insn_eval(f, in, rec, size, cpu, comm);

		i = next_insn(r, in->when, in->jump, i);
		if (i == NEXT_BAD)
			return false;
	}
	return i == n;
}

void utrace__filter_free(struct utrace__filter *f)
{
	free(f);
}

unsigned int utrace__filter_nr_insns(const struct utrace__filter *f)
{
	return f ? f->h.nr : 0;
}

/* ------------------------------------------------------------------ */
/* Fields.                                                             */

enum field_type {
	FT_OTHER,          /* a number of 1, 2, 4 or 8 bytes (others never match) */
	FT_STATIC_STRING,  /* char name[N] */
	FT_DYN_STRING,     /* __data_loc char[] */
	FT_FLEX_STRING,    /* char name[], the record's last bytes (ftrace's print) */
	FT_PTR_STRING,     /* char *, const char * */
	FT_COMM,
	FT_CPU,
	FT_STACKTRACE,     /* known to the kernel's parser, never matches */
};

struct field {
	const char *name;
	int offset, size, is_signed;
	enum field_type type;
};

static const struct field generic_fields[] = {
	{ "CPU", 0, 0, 1, FT_CPU },
	{ "cpu", 0, 0, 1, FT_CPU },
	{ "common_cpu", 0, 0, 1, FT_CPU },
	{ "COMM", 0, 0, 0, FT_COMM },
	{ "comm", 0, 0, 0, FT_COMM },
	{ "stacktrace", 0, 0, 0, FT_STACKTRACE },
	{ "STACKTRACE", 0, 0, 0, FT_STACKTRACE },
};

static const struct field common_fields[] = {
	{ "common_type", 0, 2, 0, FT_OTHER },
	{ "common_flags", 2, 1, 0, FT_OTHER },
	{ "common_preempt_count", 3, 1, 0, FT_OTHER },
	{ "common_pid", 4, 4, 1, FT_OTHER },
};

/* As the kernel's filter_assign_type() decides from the type text. */
static enum field_type event_field_type(const struct utrace_event_field *f)
{
	const char *t = f->type ? f->type : "";

	switch (f->kind) {
	case UTRACE_FIELD_STRING:
		return FT_DYN_STRING;
	case UTRACE_FIELD_DYNAMIC:
		return strstr(t, "char") ? FT_DYN_STRING : FT_OTHER;
	case UTRACE_FIELD_ARRAY:
		return strstr(t, "char") ? FT_STATIC_STRING : FT_OTHER;
	case UTRACE_FIELD_FLEX:
		return strstr(t, "char") ? FT_FLEX_STRING : FT_OTHER;
	default:
		return !strcmp(t, "char *") || !strcmp(t, "const char *") ?
			FT_PTR_STRING : FT_OTHER;
	}
}

static bool is_string_field(const struct field *fd)
{
	return fd->type == FT_STATIC_STRING || fd->type == FT_DYN_STRING ||
	       fd->type == FT_FLEX_STRING || fd->type == FT_PTR_STRING || fd->type == FT_COMM;
}

static bool name_is(const char *name, const char *s, size_t len)
{
	return name && strlen(name) == len && !memcmp(name, s, len);
}

/* The event's own fields first, then the generic ones, then the common ones. */
static bool find_field(const struct utrace_event_field *fields, unsigned int nr,
		       const char *s, size_t len, struct field *out)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (name_is(fields[i].name, s, len)) {
			*out = (struct field){ fields[i].name, fields[i].offset, fields[i].size,
					       fields[i].is_signed, event_field_type(&fields[i]) };
			return true;
		}
	}
	for (i = 0; i < sizeof(generic_fields) / sizeof(generic_fields[0]); i++) {
		if (name_is(generic_fields[i].name, s, len)) {
			*out = generic_fields[i];
			return true;
		}
	}
	for (i = 0; i < sizeof(common_fields) / sizeof(common_fields[0]); i++) {
		if (name_is(common_fields[i].name, s, len)) {
			*out = common_fields[i];
			return true;
		}
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Compiler state.                                                     */

struct node {
	int target;   /* see (3) */
	int when;     /* when_to_branch */
	bool invert;  /* the '!'s in scope, see (2) */
	bool negate;  /* !=, "!glob": the predicate's result is inverted */
};

struct compiler {
	const char *str;
	const struct utrace_event_field *fields;
	unsigned int nr_fields;
	int lasterr;                    /* enum filter_err, 0: none */
	int lasterr_pos;
	struct utrace__filter_insn *insns;
	struct node *nodes;
	unsigned int nr_insns;
	char *pool;                     /* patterns, NUL-terminated */
	size_t pool_len, pool_cap;
	uint64_t *masks;
	unsigned int nr_masks;
	uint32_t min_size;
	const struct utrace__filter_syms *syms;  /* NULL: this process's */
};

static void parse_error(struct compiler *c, enum filter_err e, int pos)
{
	c->lasterr = e;
	c->lasterr_pos = pos;
}

static long pool_add(struct compiler *c, const char *s, size_t len)
{
	size_t off = c->pool_len;

	if (c->pool_len + len + 1 > c->pool_cap) {
		size_t cap = (c->pool_cap + len + 1) * 2;
		char *p = realloc(c->pool, cap);

		if (!p)
			return -1;
		c->pool = p;
		c->pool_cap = cap;
	}
	memcpy(c->pool + off, s, len);
	c->pool[off + len] = 0;
	c->pool_len += len + 1;
	return (long)off;
}

static uint64_t *mask_add(struct compiler *c, unsigned int *idx)
{
	uint64_t *m = realloc(c->masks, (c->nr_masks + 1) * sizeof(uint64_t) * MASK_WORDS);

	if (!m)
		return NULL;
	c->masks = m;
	*idx = c->nr_masks++;
	m += (size_t)*idx * MASK_WORDS;
	memset(m, 0, sizeof(uint64_t) * MASK_WORDS);
	return m;
}

static void need_bytes(struct compiler *c, const struct field *fd, int bytes)
{
	uint32_t end = (uint32_t)fd->offset + (uint32_t)bytes;

	if (end > c->min_size)
		c->min_size = end;
}

/* ------------------------------------------------------------------ */
/* Numbers, as the kernel's kstrtoull()/kstrtoll() with base 0.        */

static bool parse_u64(const char *s, uint64_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;
	bool any = false;

	if (s[0] == '0') {
		if ((s[1] == 'x' || s[1] == 'X') &&
		    (k_isdigit(s[2]) || ((s[2] | 0x20) >= 'a' && (s[2] | 0x20) <= 'f'))) {
			base = 16;
			s += 2;
		} else {
			base = 8;
		}
	}
	for (; *s; s++) {
		unsigned int d;
		int lc = *s | 0x20;

		if (k_isdigit(*s))
			d = (unsigned int)(*s - '0');
		else if (lc >= 'a' && lc <= 'f')
			d = (unsigned int)(lc - 'a' + 10);
		else
			return false;
		if (d >= base)
			return false;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
		any = true;
	}
	*out = v;
	return any;
}

static bool parse_s64(const char *s, uint64_t *out)
{
	uint64_t v;

	if (s[0] == '-') {
		if (!parse_u64(s + 1, &v) || v > (uint64_t)INT64_MAX + 1)
			return false;
		*out = (uint64_t)0 - v;
		return true;
	}
	if (!parse_u64(s, &v) || v > (uint64_t)INT64_MAX)
		return false;
	*out = v;
	return true;
}

/* ------------------------------------------------------------------ */
/* CPU lists, as the kernel's bitmap_parselist() reads them.           */

static bool cpulist_num(const char **sp, unsigned int *out)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (*s == 'N') {
		*out = NR_CPUS - 1;
		*sp = s + 1;
		return true;
	}
	if (!k_isdigit(*s))
		return false;
	for (; k_isdigit(*s); s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > UINT32_MAX)
			return false;
	}
	if (v > NR_CPUS - 1)
		return false;
	*out = (unsigned int)v;
	*sp = s;
	return true;
}

static bool cpulist_end_of_region(char ch)
{
	return ch == ',' || k_isspace(ch);
}

/* One region: "a", "a-b", "all", optionally followed by ":used/group". */
static bool cpulist_region(const char **sp, uint64_t *mask)
{
	const char *s = *sp;
	unsigned int start, end, used, group, b, k;

	if (!strncasecmp(s, "all", 3)) {
		start = 0;
		end = NR_CPUS - 1;
		s += 3;
	} else {
		if (!cpulist_num(&s, &start))
			return false;
		end = start;
		if (*s && !cpulist_end_of_region(*s)) {
			/* only a range takes a ":used/group" pattern */
			if (*s != '-')
				return false;
			s++;
			if (!cpulist_num(&s, &end))
				return false;
		}
	}
	used = group = end + 1;
	if (*s == ':') {
		s++;
		if (!cpulist_num(&s, &used) || *s != '/')
			return false;
		s++;
		if (!cpulist_num(&s, &group))
			return false;
	}
	if (*s && !cpulist_end_of_region(*s))
		return false;
	if (start > end || group == 0 || used > group)
		return false;
	for (b = start; b <= end; b += group) {
		for (k = b; k < b + used && k <= end; k++)
			mask[k / 64] |= (uint64_t)1 << (k % 64);
	}
	*sp = s;
	return true;
}

static bool cpulist_parse(const char *s, uint64_t *mask)
{
	for (;;) {
		while (*s && cpulist_end_of_region(*s))
			s++;
		if (!*s)
			return true;
		if (!cpulist_region(&s, mask))
			return false;
	}
}

/* ------------------------------------------------------------------ */
/* One predicate: <field>[.ustring][.function] <op> <value>.           */

/* The string match type of a '~' pattern (the kernel's filter_parse_regex):
 * a leading '!' negates, a leading digit means literal, "foo*", "*foo" and
 * "*foo*" are prefix, suffix and substring, anything else with * ? [ \ is a
 * glob.  Returns the type; *start and *len select the pattern. */
static enum str_match classify_glob(char *p, size_t *start, size_t *len, bool *negate)
{
	enum str_match type = M_FULL;
	size_t i, n = *len;
	char *b = p;

	*negate = false;
	*start = 0;
	if (b[0] == '!') {
		*negate = true;
		b++;
		n--;
		*start = 1;
	}
	*len = n;
	if (k_isdigit(b[0]))
		return M_FULL;
	for (i = 0; i < n; i++) {
		if (b[i] == '*') {
			if (i == 0) {
				type = M_END;
			} else if (i == n - 1) {
				type = type == M_END ? M_MIDDLE : M_FRONT;
				b[i] = 0;
				n = i;
				break;
			} else {
				return M_GLOB;
			}
		} else if (b[i] == '[' || b[i] == '?' || b[i] == '\\') {
			return M_GLOB;
		}
	}
	if (b[0] == '*') {
		(*start)++;
		n--;
	}
	*len = n;
	return type;
}

static int emit_string(struct compiler *c, struct utrace__filter_insn *in, struct node *nd,
		       const struct field *fd, enum filter_op op, const char *s, size_t len)
{
	char buf[MAX_STR_VAL];
	enum str_match mode = M_FULL;
	size_t start = 0;
	bool negate = op == OP_NE;
	long off;

	memcpy(buf, s, len);
	buf[len] = 0;
	if (op == OP_GLOB)
		mode = classify_glob(buf, &start, &len, &negate);

	switch (fd->type) {
	case FT_COMM:
		in->op = OPC_STR_COMM;
		break;
	case FT_STATIC_STRING:
		in->op = OPC_STR_ARRAY;
		in->val2 = (uint64_t)fd->size;
		need_bytes(c, fd, fd->size);
		break;
	case FT_DYN_STRING:
		in->op = OPC_STR_DYN;
		need_bytes(c, fd, 4);
		break;
	case FT_FLEX_STRING:
		/* the text is NUL-terminated in the record (the marker's) */
		in->op = OPC_STR_ARRAY;
		in->val2 = 0;
		need_bytes(c, fd, 0);
		break;
	default:
		/*
		 * char * / const char *.  The kernel copies the string the
		 * pointer points to with a copy that cannot fault, and the
		 * predicate is false when that copy fails.  In a user-space
		 * writer the pointer was recorded from the traced program and
		 * may be stale or bogus; following it from a signal handler
		 * could crash the program, and a fault-safe read would cost a
		 * system call per record.  So the filter is accepted exactly
		 * when the kernel accepts it, and the predicate behaves as the
		 * kernel's does for a pointer it cannot read: always false,
		 * for == != and ~ alike.  Record the text with __string() to
		 * filter on it.
		 */
		in->op = OPC_FALSE;
		return 0;
	}
	off = pool_add(c, buf + start, len);
	if (off < 0)
		return -ENOMEM;
	in->val = (uint64_t)off;
	in->len = (uint32_t)len;
	in->mode = (uint8_t)mode;
	nd->negate = negate;
	return 0;
}

/* The comparison for a field of 'size' bytes (the kernel's
 * select_comparison_fn()); OPC_FALSE for other sizes. */
static enum opc int_opc(enum filter_op op, int size, bool is_signed)
{
	int t, k;

	switch (size) {
	case 1: t = 0; break;
	case 2: t = 1; break;
	case 4: t = 2; break;
	case 8: t = 3; break;
	default: return OPC_FALSE;
	}
	switch (op) {
	case OP_EQ:
	case OP_NE:
		k = 0;
		is_signed = false;
		break;
	case OP_LT: k = 1; break;
	case OP_LE: k = 2; break;
	case OP_GT: k = 3; break;
	case OP_GE: k = 4; break;
	case OP_BAND: k = 5; break;
	default: return OPC_FALSE;
	}
	/* 7 opcodes per type, types in the order U8 S8 U16 S16 ... */
	return (enum opc)(OPC_EQ_U8 + (t * 2 + is_signed) * (OPC_EQ_S8 - OPC_EQ_U8) + k);
}

static enum opc mask_opc(int size)
{
	enum opc o = int_opc(OP_EQ, size, false);

	return o == OPC_FALSE ? o : (enum opc)(o + (OPC_MASK_U8 - OPC_EQ_U8));
}

static enum opc cpu_opc(enum filter_op op)
{
	switch (op) {
	case OP_EQ:
	case OP_NE: return OPC_CPU_EQ;
	case OP_LT: return OPC_CPU_LT;
	case OP_LE: return OPC_CPU_LE;
	case OP_GT: return OPC_CPU_GT;
	case OP_GE: return OPC_CPU_GE;
	case OP_BAND: return OPC_CPU_AND;
	default: return OPC_FALSE;
	}
}

/* A number operand: from str[s] (i is past an optional sign) to the end of
 * its letters and digits, copied into num.  The index after it, or
 * -EINVAL when it is too long (the kernel's "Operand too long"). */
static int scan_number(struct compiler *c, const char *str, int pos, int s, int i,
		       char num[NUM_BUF])
{
	int len;

	while (k_isalnum(str[i]))
		i++;
	len = i - s;
	if (len >= NUM_BUF) {
		parse_error(c, FE_OPERAND_TOO_LONG, pos + i);
		return -EINVAL;
	}
	memcpy(num, str + s, (size_t)len);
	num[len] = 0;
	return i;
}

int (*utrace__filter_sym_by_name)(const char *name, uint64_t *start, uint64_t *size);

/* '<field>.function == <name or address>': the field holds a code
 * address; it matches anywhere inside the function (the kernel looks the
 * symbol up in kallsyms, utrace with dlsym() and dladdr1(), and for what
 * they do not know, a static function of the program, in the ELF symbol
 * tables: utrace__filter_sym_by_name). */
/* The number at i (a function's address): where it ends, or -errno. */
static int scan_address(struct compiler *c, const char *str, int pos, int s, int i,
			uint64_t *v)
{
	char num[NUM_BUF];

	i = scan_number(c, str, pos, s, i, num);
	if (i < 0)
		return i;
	if (!parse_u64(num, v)) {
		parse_error(c, FE_INVALID_VALUE, pos + i);
		return -EINVAL;
	}
	return i;
}

/* The function name at *i, up to white space (a copy, NULL without
 * memory); *s is set to its start and *i past it. */
static char *scan_name(const char *str, int *s, int *i)
{
	*s = *i;
	while (str[*i] && !k_isspace(str[*i]))
		(*i)++;
	return strndup(str + *s, (size_t)(*i - *s));
}

/* '.function' with the symbols of another process (struct
 * utrace__filter_syms): a name, else an address inside a function. */
static int parse_function_syms(struct compiler *c, const char *str, int pos, int i, int s,
			       enum filter_op op, struct utrace__filter_insn *in,
			       struct node *nd, const struct field *fd)
{
	const struct utrace__filter_syms *sy = c->syms;
	uint64_t start = 0, size = 0;
	int r;

	if (k_isdigit(str[i])) {
		uint64_t v;

		i = scan_address(c, str, pos, s, i, &v);
		if (i < 0)
			return i;
		r = sy->by_addr ? sy->by_addr(sy->ctx, v, &start, &size) : -ENOENT;
	} else {
		char *name = scan_name(str, &s, &i);

		if (!name)
			return -ENOMEM;
		r = sy->by_name ? sy->by_name(sy->ctx, name, &start, &size) : -ENOENT;
		free(name);
	}
	if (r < 0) {
		parse_error(c, FE_NO_FUNCTION, pos + i);
		return -EINVAL;
	}
	in->op = OPC_FUNC;
	in->val = start;
	in->val2 = start + (size ? size : 1);
	nd->negate = op == OP_NE;
	need_bytes(c, fd, 8);
	return i;
}

static int parse_function(struct compiler *c, const char *str, int pos, int i, int s,
			  const struct field *fd, enum filter_op op,
			  struct utrace__filter_insn *in, struct node *nd)
{
	const ElfW(Sym) *sym = NULL;
	void *addr = NULL;
	Dl_info info;

	if (fd->size != (int)sizeof(long)) {
		parse_error(c, FE_ILLEGAL_FIELD_OP, pos + i);
		return -EINVAL;
	}
	if (op != OP_EQ && op != OP_NE) {
		parse_error(c, FE_INVALID_OP, pos + i);
		return -EINVAL;
	}
	if (c->syms)
		return parse_function_syms(c, str, pos, i, s, op, in, nd, fd);
	if (k_isdigit(str[i])) {
		uint64_t v;

		i = scan_address(c, str, pos, s, i, &v);
		if (i < 0)
			return i;
		addr = (void *)(uintptr_t)v;
	} else {
		char *name = scan_name(str, &s, &i);

		if (!name)
			return -ENOMEM;
		addr = dlsym(RTLD_DEFAULT, name);
		if (!addr && utrace__filter_sym_by_name) {
			uint64_t start, size;

			if (!utrace__filter_sym_by_name(name, &start, &size) && size) {
				free(name);
				in->op = OPC_FUNC;
				in->val = start;
				in->val2 = start + size;
				nd->negate = op == OP_NE;
				need_bytes(c, fd, 8);
				return i;
			}
		}
		free(name);
		if (!addr) {
			parse_error(c, FE_NO_FUNCTION, pos + i);
			return -EINVAL;
		}
	}
	if (!dladdr1(addr, &info, (void **)&sym, RTLD_DL_SYMENT) || !info.dli_fname) {
		parse_error(c, FE_NO_FUNCTION, pos + i);
		return -EINVAL;
	}
	in->op = OPC_FUNC;
	if (sym && info.dli_saddr) {
		in->val = (uint64_t)(uintptr_t)info.dli_saddr;
		in->val2 = in->val + (sym->st_size ? sym->st_size : 1);
	} else if (!k_isdigit(str[s])) {
		/* A name whose address has no sized symbol (an IFUNC's
		 * implementation): only that address. */
		in->val = (uint64_t)(uintptr_t)addr;
		in->val2 = in->val + 1;
	} else {
		parse_error(c, FE_NO_FUNCTION, pos + i);
		return -EINVAL;
	}
	nd->negate = op == OP_NE;
	need_bytes(c, fd, 8);
	return i;
}

static int parse_cpus(struct compiler *c, const char *str, int pos, int i,
		      const struct field *fd, enum filter_op op,
		      struct utrace__filter_insn *in, struct node *nd)
{
	unsigned int idx, cpu = 0, weight = 0, k;
	uint64_t *mask;
	char *list;
	int maskstart;
	bool ok;

	if (fd->type != FT_CPU && fd->type != FT_OTHER) {
		parse_error(c, FE_ILLEGAL_FIELD_OP, pos + i);
		return -EINVAL;
	}
	if (op != OP_EQ && op != OP_NE && op != OP_BAND) {
		parse_error(c, FE_ILLEGAL_FIELD_OP, pos + i);
		return -EINVAL;
	}
	i += 4;
	if (str[i++] != '{') {
		parse_error(c, FE_MISSING_BRACE_OPEN, pos + i);
		return -EINVAL;
	}
	maskstart = i;
	while (str[i] && str[i] != '}')
		i++;
	if (str[i] != '}') {
		parse_error(c, FE_MISSING_BRACE_CLOSE, pos + i);
		return -EINVAL;
	}
	if (maskstart == i) {
		parse_error(c, FE_INVALID_CPULIST, pos + i);
		return -EINVAL;
	}
	mask = mask_add(c, &idx);
	list = strndup(str + maskstart, (size_t)(i - maskstart));
	if (!mask || !list) {
		free(list);
		return -ENOMEM;
	}
	ok = cpulist_parse(list, mask);
	free(list);
	if (!ok) {
		parse_error(c, FE_INVALID_CPULIST, pos + i);
		return -EINVAL;
	}
	i++;

	for (k = 0; k < NR_CPUS; k++) {
		if (mask[k / 64] >> (k % 64) & 1) {
			if (!weight++)
				cpu = k;
		}
	}
	in->val = idx;   /* the mask's index until the program is laid out */

	/* One CPU: a plain comparison ("& CPUS{n}" is "== n"). */
	if (weight == 1) {
		in->val = cpu;
		if (fd->type == FT_CPU) {
			in->op = OPC_CPU_EQ;
		} else {
			in->op = (uint8_t)int_opc(OP_EQ, fd->size, false);
			if (in->op != OPC_FALSE)
				need_bytes(c, fd, fd->size);
		}
		nd->negate = op == OP_NE && in->op != OPC_FALSE;
		return i;
	}
	/* Several: a scalar never equals them, differs from them when it is a
	 * valid CPU, and '&' tests membership. */
	if (fd->type == FT_CPU) {
		in->op = op == OP_EQ ? OPC_FALSE : op == OP_NE ? OPC_TRUE : OPC_CPU_MASK;
		return i;
	}
	in->op = op == OP_EQ ? OPC_FALSE : (uint8_t)mask_opc(fd->size);
	if (in->op != OPC_FALSE) {
		in->mode = op == OP_NE;
		need_bytes(c, fd, fd->size);
	}
	return i;
}

/*
 * Parses the predicate at str (which is c->str + pos - 1, the kernel's
 * off-by-one, kept for its error positions).  Returns the length used, or
 * a negative errno; -EPERM with no message when no field name starts here.
 */
static int parse_pred(struct compiler *c, const char *str, int pos,
		      struct utrace__filter_insn *in, struct node *nd)
{
	enum filter_op op;
	struct field fd;
	bool function = false;
	int i = 0, s, len, ret;

	while (k_isspace(str[i]))
		i++;
	s = i;
	while (k_isalnum(str[i]) || str[i] == '_')
		i++;
	len = i - s;
	if (!len)
		return -EPERM;
	if (!find_field(c->fields, c->nr_fields, str + s, (size_t)len, &fd)) {
		parse_error(c, FE_FIELD_NOT_FOUND, pos + i);
		return -EINVAL;
	}
	if (fd.offset < 0 || fd.size < 0 || fd.offset > 0xffff || fd.size > 0xffff)
		return -EINVAL;
	if (!strncmp(str + i, ".ustring", 8))
		i += 8;
	if (!strncmp(str + i, ".function", 9)) {
		function = true;
		i += 9;
	}
	while (k_isspace(str[i]))
		i++;
	for (op = 0; op < OP_MAX; op++) {
		if (!strncmp(str + i, op_text[op], strlen(op_text[op])))
			break;
	}
	if (op == OP_MAX) {
		parse_error(c, FE_INVALID_OP, pos + i);
		return -EINVAL;
	}
	i += (int)strlen(op_text[op]);
	while (k_isspace(str[i]))
		i++;
	s = i;

	memset(in, 0, sizeof(*in));
	in->offset = (uint32_t)fd.offset;

	if (function)
		return parse_function(c, str, pos, i, s, &fd, op, in, nd);

	if (!strncmp(str + i, "CPUS", 4))
		return parse_cpus(c, str, pos, i, &fd, op, in, nd);

	if (str[i] == '\'' || str[i] == '"') {
		char q = str[i];

		if (op != OP_NE && op != OP_GLOB && op != OP_EQ) {
			parse_error(c, FE_ILLEGAL_FIELD_OP, pos + i);
			return -EINVAL;
		}
		if (!is_string_field(&fd)) {
			parse_error(c, FE_EXPECT_DIGIT, pos + i);
			return -EINVAL;
		}
		for (i++; str[i]; i++) {
			if (str[i] == q)
				break;
		}
		if (!str[i]) {
			parse_error(c, FE_MISSING_QUOTE, pos + i);
			return -EINVAL;
		}
		s++;
		len = i - s;
		if (len >= MAX_STR_VAL) {
			parse_error(c, FE_OPERAND_TOO_LONG, pos + i);
			return -EINVAL;
		}
		ret = emit_string(c, in, nd, &fd, op, str + s, (size_t)len);
		if (ret)
			return ret;
		return i + 1;
	}

	if (k_isdigit(str[i]) || str[i] == '-') {
		char num[NUM_BUF];
		uint64_t v;

		if (is_string_field(&fd)) {
			parse_error(c, FE_EXPECT_STRING, pos + i);
			return -EINVAL;
		}
		if (op == OP_GLOB) {
			parse_error(c, FE_ILLEGAL_FIELD_OP, pos + i);
			return -EINVAL;
		}
		if (str[i] == '-')
			i++;
		i = scan_number(c, str, pos, s, i, num);
		if (i < 0)
			return i;
		if (!(fd.is_signed ? parse_s64(num, &v) : parse_u64(num, &v))) {
			parse_error(c, FE_ILLEGAL_INTVAL, pos + s);
			return -EINVAL;
		}
		in->val = v;
		if (fd.type == FT_CPU) {
			in->op = (uint8_t)cpu_opc(op);
		} else {
			in->op = (uint8_t)int_opc(op, fd.size, fd.is_signed);
			if (in->op != OPC_FALSE)
				need_bytes(c, &fd, fd.size);
		}
		nd->negate = op == OP_NE && in->op != OPC_FALSE;
		return i;
	}

	parse_error(c, FE_INVALID_VALUE, pos + i);
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* (1) The pre-scan.                                                   */

enum { SCAN_TOO_MANY_CLOSE = -1, SCAN_TOO_MANY_OPEN = -2, SCAN_MISSING_QUOTE = -3 };

static int prescan(const char *str, int *parens, int *preds, int *errpos)
{
	int open = 1, max_open = 1, nr = 0, quote = 0, last_quote = 0, i;
	bool in_pred = false;

	for (i = 0; str[i]; i++) {
		if (k_isspace(str[i]))
			continue;
		if (quote) {
			if (str[i] == quote)
				quote = 0;
			continue;
		}
		switch (str[i]) {
		case '\'':
		case '"':
			quote = str[i];
			last_quote = i;
			break;
		case '&':
		case '|':
			if (str[i + 1] != str[i])
				break;
			in_pred = false;
			continue;
		case '(':
			in_pred = false;
			if (++open > max_open)
				max_open = open;
			continue;
		case ')':
			in_pred = false;
			if (open == 1) {
				*errpos = i;
				return SCAN_TOO_MANY_CLOSE;
			}
			open--;
			continue;
		}
		if (!in_pred) {
			nr++;
			in_pred = true;
		}
	}
	if (quote) {
		*errpos = last_quote;
		return SCAN_MISSING_QUOTE;
	}
	if (open != 1) {
		/* Walk back to the '(' left open; the first character is
		 * never looked at, the kernel reports it as position 0. */
		int level = open;

		for (i--; i > 0; i--) {
			if (quote) {
				if (str[i] == quote)
					quote = 0;
				continue;
			}
			if (str[i] == '(') {
				if (level == open) {
					*errpos = i;
					return SCAN_TOO_MANY_OPEN;
				}
				level--;
			} else if (str[i] == ')') {
				level++;
			} else if (str[i] == '\'' || str[i] == '"') {
				quote = str[i];
			}
		}
		*errpos = 0;
		return SCAN_TOO_MANY_OPEN;
	}
	*parens = max_open;
	*preds = nr;
	return 0;
}

/* ------------------------------------------------------------------ */
/* (2)-(7) The passes.                                                 */

enum { LVL_INVERT = 1, LVL_AND = 2, LVL_OR = 4 };

/* Resolve the operator that entry n's chain is waiting on: the waiting
 * entry branches (on 'when') to the label after n, and n inherits its
 * place in the chain. */
static bool resolve(struct node *nd, int n, int when)
{
	int t = nd[n].target, s;

	if (t < 0 || t >= n)
		return false;
	s = nd[t].target;
	nd[t].when = when;
	nd[t].target = n;
	nd[n].target = s;
	return true;
}

static int build_program(struct compiler *c, int nr_parens, int nr_preds)
{
	const char *str = c->str, *p = str;
	int *stack, *top, invert = 0, n = 0, ret = 0, i;
	char dangling = 0;

	stack = calloc((size_t)nr_parens + 1, sizeof(*stack));
	c->nodes = calloc((size_t)nr_preds + 2, sizeof(*c->nodes));
	c->insns = calloc((size_t)nr_preds + 2, sizeof(*c->insns));
	if (!stack || !c->nodes || !c->insns) {
		free(stack);
		return -ENOMEM;
	}
	top = stack;

	while (*p) {							/* (2) */
		const char *next = p++;
		int len;

		if (k_isspace(*next))
			continue;
		if (*next == '(') {
			if (top - stack >= nr_parens) {
				ret = -EINVAL;
				goto out;
			}
			*++top = invert;
			continue;
		}
		if (*next == '!' && next[1] != '=' && next[1] != '~') {
			invert = !invert;
			continue;
		}
		if (n >= nr_preds) {
			parse_error(c, FE_TOO_MANY_PREDS, (int)(next - str));
			ret = -EPERM;
			goto out;
		}
		c->nodes[n].invert = invert;				/* (3) */
		c->nodes[n].target = n - 1;
		len = parse_pred(c, next, (int)(p - str), &c->insns[n], &c->nodes[n]);
		if (len < 0) {
			ret = len;
			goto out;
		}
		p = next + len;
		n++;
		dangling = 0;

		for (;;) {						/* (4) */
			next = p++;
			if (k_isspace(*next))
				continue;
			if (*next == '&' || *next == '|') {
				if (next[1] != next[0]) {
					parse_error(c, FE_TOO_MANY_PREDS, (int)(next - str));
					ret = -EPERM;
					goto out;
				}
				p++;
			} else if (*next != ')' && *next != '\0') {
				parse_error(c, FE_TOO_MANY_PREDS, (int)(next - str));
				ret = -EPERM;
				goto out;
			}
			invert = *top & LVL_INVERT;
			if (*top & LVL_AND) {
				if (!resolve(c->nodes, n - 1, invert))
					goto broken;
				*top &= ~LVL_AND;
			}
			if (*next == '&') {
				*top |= LVL_AND;
				dangling = '&';
				break;
			}
			if (*top & LVL_OR) {
				if (!resolve(c->nodes, n - 1, !invert))
					goto broken;
				*top &= ~LVL_OR;
			}
			if (*next == '|') {
				*top |= LVL_OR;
				dangling = '|';
				break;
			}
			if (!*next)
				goto parsed;
			if (top == stack) {
				parse_error(c, FE_TOO_MANY_CLOSE, (int)(p - str));
				ret = -EPERM;
				goto out;
			}
			top--;
		}
	}
	/* The text ended after an operator ("pid == 0 &&", "a || !"): the
	 * kernel refuses it since 6.18.44 (earlier kernels dropped the operator),
	 * with the caret after the text's last non-space character. */
	if (dangling) {
		size_t end = strlen(str);

		while (end && k_isspace(str[end - 1]))
			end--;
		parse_error(c, FE_INVALID_FILTER, (int)end);
		ret = -EINVAL;
		goto out;
	}
parsed:
	if (top != stack) {
		parse_error(c, FE_TOO_MANY_OPEN, (int)(p - str));
		ret = -EPERM;
		goto out;
	}
	if (!n) {
		parse_error(c, FE_NO_FILTER, (int)(p - str));
		ret = -EINVAL;
		goto out;
	}

	c->nodes[n - 1].target = n;					/* (5) */
	c->nodes[n - 1].when = 0;

	for (i = n - 2; i >= 0; i--) {					/* (6) */
		int t = c->nodes[i].target;

		if (t >= 0 && t < n && c->nodes[i].when == c->nodes[t].when)
			c->nodes[i].target = c->nodes[t].target;
	}

	for (i = 0; i < n; i++) {					/* (7) */
		struct node *nd = &c->nodes[i];

		if (nd->target <= i || nd->target > n) {
			ret = -EINVAL;
			goto out;
		}
		c->insns[i].when = (uint8_t)(nd->when ^ nd->invert ^ nd->negate);
		c->insns[i].jump = (uint32_t)nd->target + 1;
	}
	c->nr_insns = (unsigned int)n;
out:
	free(stack);
	return ret;
broken:
	/* A program the passes cannot link: the kernel's WARN_ON() case. */
	ret = -EINVAL;
	goto out;
}

/* The form of instruction 'in' that utrace__filter_match() runs
 * without the interpreter (struct fast_pred). */
static void fast_form(struct fast_pred *p, const struct utrace__filter_insn *in)
{
	unsigned int k = in->op - OPC_EQ_U8, t = k / 7, sh, cmp = k % 7;
	uint64_t cv, max = ~0ULL;
	bool sgn;

	memset(p, 0, sizeof(*p));
	p->when = in->when;
	p->jump = in->jump;
	p->kind = FK_INSN;
	if (in->op == OPC_FALSE || in->op == OPC_TRUE) {
		/* (no field: the value is 0) false: 0 & 0; true: 0 in [0, max] */
		p->kind = in->op == OPC_TRUE ? FK_RANGE : FK_AND;
		p->span = max;
		return;
	}
	if ((in->op == OPC_STR_DYN || in->op == OPC_STR_ARRAY) &&
	    (in->mode == M_FULL || in->mode == M_FRONT || in->mode == M_GLOB)) {
		p->kind = FK_STR;
		return;
	}
	if (in->op < OPC_EQ_U8 || in->op >= OPC_CPU_EQ || cmp == 6)
		return;         /* a CPUS{} mask, the CPU, comm, ... */
	p->size = (uint8_t)(1u << (t / 2));
	sgn = t & 1;
	p->off = in->offset;
	sh = 64 - 8 * p->size;
	p->sh = (uint8_t)(sgn ? sh : 0);
	/* The number as the field's type sees it ((ctype)val), widened. */
	cv = sgn ? (uint64_t)((int64_t)(in->val << sh) >> sh)
		 : (sh ? in->val & (~0ULL >> sh) : in->val);
	if (cmp == 5) {                  /* & */
		p->kind = FK_AND;
		p->lo = cv;
		return;
	}
	p->bias = sgn ? 1ULL << 63 : 0;
	cv ^= p->bias;
	p->kind = FK_RANGE;
	switch (cmp) {
	case 0:                          /* == */
		p->lo = cv;
		p->span = 0;
		break;
	case 1:                          /* < */
		if (!cv) {               /* never: 0 & 0 */
			memset(p, 0, sizeof(*p));
			p->when = in->when;
			p->jump = in->jump;
			p->kind = FK_AND;
			break;
		}
		p->lo = 0;
		p->span = cv - 1;
		break;
	case 2:                          /* <= */
		p->lo = 0;
		p->span = cv;
		break;
	case 3:                          /* > */
		if (cv == max) {         /* never */
			memset(p, 0, sizeof(*p));
			p->when = in->when;
			p->jump = in->jump;
			p->kind = FK_AND;
			break;
		}
		p->lo = cv + 1;
		p->span = max - cv - 1;
		break;
	default:                         /* >= */
		p->lo = cv;
		p->span = max - cv;
		break;
	}
}

/* Lays the program, the masks and the patterns out in one block. */
static struct utrace__filter *layout(struct compiler *c)
{
	size_t insns = sizeof(struct utrace__filter) + c->nr_insns * sizeof(c->insns[0]);
	size_t masks = (size_t)c->nr_masks * MASK_WORDS * sizeof(uint64_t);
	struct utrace__filter *f = malloc(insns + masks + c->pool_len);
	unsigned int i;

	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->h.nr = c->nr_insns;
	f->h.min_size = c->min_size;
	memcpy(f->prog, c->insns, c->nr_insns * sizeof(c->insns[0]));
	if (masks)
		memcpy((char *)f + insns, c->masks, masks);
	if (c->pool_len)
		memcpy((char *)f + insns + masks, c->pool, c->pool_len);
	for (i = 0; i < f->h.nr; i++) {
		struct utrace__filter_insn *in = &f->prog[i];

		switch (in->op) {
		case OPC_STR_ARRAY:
		case OPC_STR_DYN:
		case OPC_STR_COMM:
			in->val += insns + masks;
			break;
		case OPC_CPU_MASK:
#define X(T, ctype) case OPC_MASK_##T:
		INT_TYPES(X)
#undef X
			in->val = insns + in->val * MASK_WORDS * sizeof(uint64_t);
			break;
		}
	}
	if (f->h.nr > 0 && f->h.nr <= FAST_MAX) {
		f->h.num_only = 1;
		for (i = 0; i < f->h.nr; i++) {
			fast_form(&f->h.fp[i], &f->prog[i]);
			if (f->h.fp[i].kind == FK_STR || f->h.fp[i].kind == FK_INSN)
				f->h.num_only = 0;
		}
		f->h.nfast = f->h.nr;
		f->h.one_num = f->h.nr == 1 && f->h.num_only;
	}
	return f;
}

int utrace__filter_compile(const char *expr, const struct utrace_event_field *fields,
			   unsigned int nr, struct utrace__filter **out,
			   struct utrace__filter_error *err)
{
	return utrace__filter_compile_syms(expr, fields, nr, NULL, out, err);
}

int utrace__filter_compile_syms(const char *expr, const struct utrace_event_field *fields,
				unsigned int nr, const struct utrace__filter_syms *syms,
				struct utrace__filter **out, struct utrace__filter_error *err)
{
	struct compiler c = { .str = expr, .fields = fields, .nr_fields = nr, .syms = syms };
	struct utrace__filter_error dummy;
	int parens = 0, preds = 0, pos = 0, ret;

	if (!err)
		err = &dummy;
	*out = NULL;
	memset(err, 0, sizeof(*err));
	if (!expr)
		expr = c.str = "";

	ret = prescan(expr, &parens, &preds, &pos);			/* (1) */
	switch (ret) {
	case 0:
		break;
	case SCAN_MISSING_QUOTE:
		parse_error(&c, FE_MISSING_QUOTE, pos);
		ret = -ESRCH;
		goto out;
	case SCAN_TOO_MANY_OPEN:
		parse_error(&c, FE_TOO_MANY_OPEN, pos);
		ret = -ENOENT;
		goto out;
	default:
		parse_error(&c, FE_TOO_MANY_CLOSE, pos);
		ret = -EPERM;
		goto out;
	}
	if (!preds) {
		ret = -EINVAL;
		goto out;
	}
	ret = build_program(&c, parens, preds);
	if (!ret) {
		*out = layout(&c);
		if (!*out)
			ret = -ENOMEM;
	}
out:
	if (ret) {
		err->err = ret;
		if (c.lasterr > 0) {
			err->pos = c.lasterr_pos;
			snprintf(err->msg, sizeof(err->msg), "%s", filter_err_text[c.lasterr]);
		}
	}
	free(c.insns);
	free(c.nodes);
	free(c.pool);
	free(c.masks);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Texts.                                                              */

bool utrace__filter_is_clear(const char *expr)
{
	size_t n;

	if (!expr)
		return false;
	while (k_isspace(*expr))
		expr++;
	n = strlen(expr);
	while (n && k_isspace(expr[n - 1]))
		n--;
	return n == 1 && expr[0] == '0';
}

char *utrace__filter_error_text(const char *expr, const struct utrace__filter_error *err)
{
	size_t len = strlen(expr), pos;
	char *s = NULL;
	int n;

	if (!err->msg[0]) {
		n = asprintf(&s, "%s\nError: (0)\n\n", expr);
	} else {
		/* The kernel clamps the position to the text and prints
		 * "%*s" with one more than it: that many spaces, then '^'. */
		pos = err->pos < 0 ? 0 : (size_t)err->pos;
		if (pos > len)
			pos = len;
		n = asprintf(&s, "%s\n%*s^\nparse_error: %s\n\n", expr, (int)pos, "", err->msg);
	}
	return n < 0 ? NULL : s;
}

char *utrace__filter_log_text(const char *expr, const struct utrace__filter_error *err)
{
	const char *msg = err->msg[0] ? err->msg : filter_err_text[FE_ERRNO];
	int pos = err->msg[0] ? (uint16_t)err->pos : 0;   /* a u16 in the kernel's log */
	char *s = NULL;

	if (asprintf(&s, "event filter parse error: error: %s\n  Command: %s\n%*s^\n",
		     msg, expr, 11 + pos, "") < 0)
		return NULL;
	return s;
}
