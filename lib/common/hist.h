/* SPDX-License-Identifier: MIT */
/*
 * Hist triggers: the kernel's `hist:keys=...` trigger language
 * (Documentation/trace/histogram.rst), its aggregation table (the
 * kernel's tracing_map) and the text of its `hist` file, in the layout of
 * kernel/trace/trace_events_hist.c.
 *
 * Three steps, split so that the traced program's runtime and the reader
 * can share them:
 *
 *  - utrace__hist_parse() (control side, may allocate): the trigger text
 *    against an event's fields, with the kernel's errors, error positions
 *    and errnos; the `if FILTER` part goes through the filter compiler.
 *  - utrace__hist_map_new() / utrace__hist_add() (writer side): one
 *    record into the table.  The table is sized at creation (2^bits
 *    entries, as tracing_map) and never grows: a new key past that is
 *    counted in Dropped.  utrace__hist_add() takes no lock and allocates
 *    nothing: slots are claimed with compare-and-swap and the sums are
 *    atomic additions, so several threads may add at once.
 *  - utrace__hist_print() (reader side): the `hist` file's text.
 *
 * docs/design-notes.md ("hist triggers") says where utrace differs.
 */
#ifndef UTRACE_HIST_H
#define UTRACE_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <utrace/tracepoint.h>

#include "compiler.h"
#include "filter.h"

#define UTRACE__HIST_KEYS_MAX 3          /* TRACING_MAP_KEYS_MAX */
#define UTRACE__HIST_VALS_MAX 3          /* TRACING_MAP_VALS_MAX, hitcount included */
#define UTRACE__HIST_SORT_MAX 2          /* TRACING_MAP_SORT_KEYS_MAX */
#define UTRACE__HIST_BITS_DEFAULT 11     /* 2048 entries */
#define UTRACE__HIST_STR_MAX 256         /* MAX_FILTER_STR_VAL */

/* The modifiers and kinds of a field (the kernel's HIST_FIELD_FL_*). */
enum {
	UTRACE__HF_HITCOUNT = 1 << 0,
	UTRACE__HF_KEY = 1 << 1,
	UTRACE__HF_STRING = 1 << 2,
	UTRACE__HF_HEX = 1 << 3,
	UTRACE__HF_SYM = 1 << 4,
	UTRACE__HF_SYM_OFFSET = 1 << 5,
	UTRACE__HF_EXECNAME = 1 << 6,
	UTRACE__HF_SYSCALL = 1 << 7,
	UTRACE__HF_LOG2 = 1 << 9,
	UTRACE__HF_TIMESTAMP = 1 << 10,
	UTRACE__HF_USECS = 1 << 11,
	UTRACE__HF_VAR = 1 << 12,
	UTRACE__HF_CPU = 1 << 15,
	UTRACE__HF_BUCKET = 1 << 17,
	UTRACE__HF_PERCENT = 1 << 19,
	UTRACE__HF_GRAPH = 1 << 20,
};

/* Where a field's value comes from. */
enum utrace__hist_src {
	UTRACE__HS_COUNTER,      /* hitcount: 1 */
	UTRACE__HS_NUM,          /* a number of 1, 2, 4 or 8 bytes in the record */
	UTRACE__HS_STR,          /* char name[N] */
	UTRACE__HS_DYNSTR,       /* __data_loc char[] */
	UTRACE__HS_TIMESTAMP,    /* the event's time, ns */
	UTRACE__HS_CPU,
	UTRACE__HS_STACK,        /* the stacktrace key: ctx->stack */
};

#define UTRACE__HIST_STACK_DEPTH 16      /* HIST_STACKTRACE_DEPTH */

struct utrace__hist_field {
	char name[64];           /* as the kernel's hist_field_name() */
	unsigned int flags;
	enum utrace__hist_src src;
	uint32_t offset, size;   /* in the record (NUM, STR, DYNSTR) */
	bool is_signed;
	uint64_t buckets;        /* .buckets=N */
	uint32_t cmp_size;       /* keys: the size the sort compares */
	bool cmp_signed;
	uint32_t key_offset, key_size;   /* keys: their bytes in the key */
};

#define UTRACE__HIST_VARS_MAX 4
#define UTRACE__HIST_REFS_MAX 4
#define UTRACE__HIST_PARAMS_MAX 8

/* What an operand is (utrace__hist_operand.ref when negative). */
enum {
	UTRACE__HO_FIELD = -1,   /* the field f */
	UTRACE__HO_OWN = -2,     /* this trigger's vars[var] */
	UTRACE__HO_CONST = -3,   /* the number 'constant' */
};

/* An operand of a variable's expression or an action's parameter. */
struct utrace__hist_operand {
	int ref;                 /* >= 0: refs[ref]; else UTRACE__HO_* */
	unsigned int var;
	uint64_t constant;
	struct utrace__hist_field f;
};

/*
 * A node of a variable's expression: an operand (op 0) or an operator
 * on the nodes a and b, as the kernel's hist_field tree of parse_expr():
 * '+', '-', '*', '/' and 'u' (unary minus of a).  At most 3 operators
 * ("Too many subexpressions (3 max)"), so 7 nodes.
 */
#define UTRACE__HIST_NODES_MAX 8
enum { UTRACE__HD_ANY, UTRACE__HD_SHIFT, UTRACE__HD_DIV, UTRACE__HD_MULT };
struct utrace__hist_node {
	char op;
	unsigned char a, b;
	unsigned char div;       /* '/' by a constant: UTRACE__HD_* (the kernel's
				  * hist_field_get_div_fn()) */
	bool usecs;              /* a time in microseconds (TIMESTAMP_USECS) */
	uint32_t str_cap;        /* a string operand: the bytes a variable keeps */
	uint64_t mult;           /* UTRACE__HD_MULT: 2^20 / the divisor */
	const char *type;        /* an operand's (the kernel's hist_field->type) */
	struct utrace__hist_operand o;
};

/* name=EXPR: a value kept per key (the kernel's HIST_FIELD_FL_VAR). */
struct utrace__hist_var {
	char name[64];
	char text[192];          /* what the readback prints after "name=" */
	const char *type;        /* "u64", the field's type, or type_buf */
	char type_buf[24];       /* a string's: "char[16]", "__data_loc char[]" */
	unsigned int nr_nodes;   /* n[0] is the root */
	struct utrace__hist_node n[UTRACE__HIST_NODES_MAX];
	bool usecs;              /* a time in microseconds */
	bool is_str;             /* a string (a string field, $ of one, .execname) */
	uint32_t str_off;        /* is_str: its bytes in an entry's string area */
	uint32_t str_cap;        /* and how many, its NUL included (at most 256) */
};

/* $name: a variable of another trigger, read with the same key. */
struct utrace__hist_ref {
	const void *owner;       /* the caller's handle of that trigger */
	unsigned int idx;        /* the variable's index there */
	bool is_str;             /* a string variable: copied at the read */
	char name[64];           /* as the readback prints it: "sys.event.name" or "name" */
};

/* An action's handler and what it does (the kernel's HANDLER_*, ACTION_*). */
enum { UTRACE__HA_ONMATCH, UTRACE__HA_ONMAX, UTRACE__HA_ONCHANGE };
enum { UTRACE__HA_TRACE, UTRACE__HA_SAVE, UTRACE__HA_SNAPSHOT };

#define UTRACE__HIST_STR_PARAMS_MAX 4    /* strings an action passes on */

/* onmatch(SYS.EVENT).trace(NAME,PARAMS) or .NAME(PARAMS);
 * onmax($var) or onchange($var) with .save(FIELDS), .trace(...) or .NAME(...). */
struct utrace__hist_action {
	int handler, kind;
	char system[64], event[64], synth[64];
	char var_str[64];        /* onmax/onchange: "$var" as written */
	unsigned int track_var;  /* its index in the trigger's vars[] */
	bool trace_kw;
	unsigned int nr_params;
	char params[UTRACE__HIST_PARAMS_MAX][64];
	struct utrace__hist_operand p[UTRACE__HIST_PARAMS_MAX];
	uint32_t save_off[UTRACE__HIST_PARAMS_MAX];  /* save: in an entry's save area */
	void *target;            /* the caller's handle of the synthetic event */
};

/* What utrace__hist_add_vars() gives the actions to run: the values of
 * the onmatch() action's parameters ([0]) and of the onmax()/onchange()
 * one's ([1]); a string is passed as the address of its copy in str[]. */
struct utrace__hist_fire {
	uint64_t params[2][UTRACE__HIST_PARAMS_MAX];
	char str[2][UTRACE__HIST_STR_PARAMS_MAX][UTRACE__HIST_STR_MAX];
	/* the string variables of other triggers read for this record */
	char refstr[UTRACE__HIST_REFS_MAX][UTRACE__HIST_STR_MAX];
};

/* What the parser asks the caller about the other triggers and events:
 * the live triggers' (lib/runtime/trigger.c) or utrace hist -i's
 * (lib/reader/histfile.c); NULL: variables and actions are refused. */
struct utrace__hist_env {
	void *arg;
	/* a variable of another hist trigger (of SYSTEM.EVENT's triggers
	 * unless system is NULL): 0, or -ENOENT */
	int (*find_var)(void *arg, const char *system, const char *event, const char *name,
			const void **owner, unsigned int *idx,
			const struct utrace__hist_var **var);
	/* a synthetic event (held until utrace__hist_free()'s put, when
	 * put_synth is set), or NULL */
	void *(*get_synth)(void *arg, const char *name, const struct utrace_event_field **f,
			   unsigned int *nr);
	void (*put_synth)(void *arg, void *synth);
	bool (*find_event)(void *arg, const char *system, const char *event);
};

struct utrace__hist_sort {
	bool is_key;
	unsigned int idx;        /* into vals[] (0: hitcount) or keys[] */
	bool descending;
};

/* A parsed trigger: immutable once made, shared by the table. */
struct utrace__hist {
	char *name;              /* "name=foo" as the kernel keeps it, or NULL */
	struct utrace__hist_field keys[UTRACE__HIST_KEYS_MAX];
	unsigned int nr_keys;
	struct utrace__hist_field vals[UTRACE__HIST_VALS_MAX];  /* [0]: hitcount */
	unsigned int nr_vals;
	struct utrace__hist_sort sort[UTRACE__HIST_SORT_MAX];
	unsigned int nr_sort;
	unsigned int bits;       /* 2^bits entries */
	uint32_t key_size;
	bool pause, cont, clear, nohitcount;
	bool timestamps;         /* common_timestamp is used: ":clock=..." */
	bool stacks;             /* a key is stacktrace: the adder gives ctx->stack */
	bool ts_usecs;           /* a .usecs on it: every timestamp in usecs */
	char *clock;             /* timestamps: the clock ("global" unless told) */
	bool execname;           /* an entry keeps the comm of its first hit */
	char *filter_str;        /* the `if` part, stripped, or NULL */
	struct utrace__filter *filter;
	uint32_t min_size;       /* the record bytes the fixed fields need */
	struct utrace__hist_var vars[UTRACE__HIST_VARS_MAX];
	unsigned int nr_vars;
	struct utrace__hist_ref refs[UTRACE__HIST_REFS_MAX];
	unsigned int nr_refs;
	struct utrace__hist_action *action;   /* onmatch(), or NULL */
	struct utrace__hist_action *track;    /* onmax() or onchange(), or NULL */
	bool track_first;        /* written before the onmatch() */
	uint32_t save_size;      /* an entry's bytes for track->kind SAVE */
	uint32_t vstr_size;      /* an entry's bytes for its string variables */
	const struct utrace__hist_env *env;   /* for put_synth */
};

struct utrace__hist_error {
	int err;                 /* the negative errno of the kernel's write() */
	bool logged;             /* the kernel writes an error_log entry */
	int pos;                 /* its caret: column 11 + pos */
	char msg[128];           /* its message */
	bool in_filter;          /* the `if` part's: fe says it */
	struct utrace__filter_error fe;
	char *filter_expr;       /* in_filter: the expression (malloc()ed) */
};

/**
 * utrace__hist_parse - parse a hist trigger for an event
 * @text: what is written to the trigger file: "hist:keys=...[ if FILTER]"
 *        (white space around it is stripped, as the kernel does)
 * @fields: the event's own fields, after the four common ones
 * @nr: how many
 * @syms: for `.function` in the filter (see utrace__filter_compile_syms())
 * @out: set to the trigger, or NULL on error
 * @err: filled in on error (free its filter_expr with
 *       utrace__hist_error_fini())
 *
 * Return: 0, or the negative errno of the kernel's write().
 */
int utrace__hist_parse(const char *text, const struct utrace_event_field *fields,
		       unsigned int nr, const struct utrace__filter_syms *syms,
		       struct utrace__hist **out, struct utrace__hist_error *err) UTRACE_HIDDEN;
/* utrace__hist_parse() with variables (name=EXPR, $name of another
 * trigger through env) and an onmatch() action. */
int utrace__hist_parse_env(const char *text, const struct utrace_event_field *fields,
			   unsigned int nr, const struct utrace__hist_env *env,
			   struct utrace__hist **out, struct utrace__hist_error *err) UTRACE_HIDDEN;
/* Both: syms for the filter, env for variables and actions. */
int utrace__hist_parse_full(const char *text, const struct utrace_event_field *fields,
			    unsigned int nr, const struct utrace__filter_syms *syms,
			    const struct utrace__hist_env *env, struct utrace__hist **out,
			    struct utrace__hist_error *err) UTRACE_HIDDEN;
void utrace__hist_free(struct utrace__hist *h) UTRACE_HIDDEN;
void utrace__hist_error_fini(struct utrace__hist_error *err) UTRACE_HIDDEN;

/**
 * utrace__hist_error_text - the error_log entry of a refused trigger
 * @system: the event's system
 * @event: its name
 * @text: the trigger written
 * @err: its error
 *
 * The entry after its "[<ts>] " prefix:
 * "hist:SYS:EVENT: error: MSG\n  Command: hist:...\n<11+pos spaces>^\n",
 * or the filter's entry for an error of the `if` part; NULL when the
 * kernel logs nothing (err->logged false) or out of memory.
 *
 * Return: the text, malloc()ed.
 */
char *utrace__hist_error_text(const char *system, const char *event, const char *text,
			      const struct utrace__hist_error *err) UTRACE_HIDDEN;

/**
 * utrace__hist_same - would the kernel take @a and @b for the same trigger?
 *
 * Its hist_trigger_match(): the same fields, modifiers, sort keys and
 * filter (the name and the size aside).  A second one is refused with
 * "Hist trigger already exists" (-EEXIST), or applies its pause, continue
 * or clear to the first.
 */
bool utrace__hist_same(const struct utrace__hist *a, const struct utrace__hist *b) UTRACE_HIDDEN;

/**
 * utrace__hist_compatible - may @b share the table of the named trigger @a?
 *
 * The kernel's hist_trigger_match() with ignore_filter, for `name=`: the
 * same fields (by name, size, sign and modifiers; their places in the
 * record may differ, @a and @b may be of two events), values, variables,
 * sort keys and actions, and the same layout of the key (see
 * utrace__hist_same_layout()); the filter, name and size aside.  A later
 * trigger that is not is refused with "Named hist trigger doesn't match
 * existing named trigger (includes variables)" (-EINVAL).
 */
bool utrace__hist_compatible(const struct utrace__hist *a, const struct utrace__hist *b)
	UTRACE_HIDDEN;

/* The error_log caret of a refusal at the first @at in the command of
 * @text (the kernel's errpos()); 0 when it is not there. */
int utrace__hist_errpos(const char *text, const char *at) UTRACE_HIDDEN;

/* ------------------------------------------------------------ the table */

struct utrace__hist_map;

/* What the writer knows of an event beyond its record. */
struct utrace__hist_ctx {
	uint64_t time;           /* ns */
	uint32_t cpu;
	const char *comm;        /* the writer's, for .execname; NULL: "" */
	const void *owner;       /* kept with a new entry (the reader: its
				  * process, for .sym names); may be NULL */
	const uint64_t *stack;   /* the stacktrace key: the event's stack, */
	uint32_t nr_stack;       /* innermost first (NULL, 0: none) */
};

/* A table for h (which must outlive it); NULL when out of memory. */
struct utrace__hist_map *utrace__hist_map_new(const struct utrace__hist *h) UTRACE_HIDDEN;
void utrace__hist_map_free(struct utrace__hist_map *m) UTRACE_HIDDEN;
/* Forget every entry and the counts (the kernel's clear); no writer may
 * be adding. */
void utrace__hist_map_clear(struct utrace__hist_map *m) UTRACE_HIDDEN;

/**
 * utrace__hist_add - count one record
 * @m: the table
 * @h: the trigger as parsed for the record's format (see
 *     utrace__hist_same_layout()); NULL: the table's
 * @rec: the record (common fields first)
 * @size: its bytes
 * @ctx: its time, CPU and writer
 *
 * The filter is run first; a record it rejects, or one too short for the
 * fields, is not a hit.  Lock-free; no allocation.
 *
 * Return: true when it was a hit.
 */
bool utrace__hist_add(struct utrace__hist_map *m, const struct utrace__hist *h, const void *rec,
		      uint32_t size, const struct utrace__hist_ctx *ctx) UTRACE_HIDDEN;

/**
 * utrace__hist_add_vars - utrace__hist_add() for a trigger with variables
 *                         or an action (the kernel's event_hist_trigger())
 * @m: the table
 * @h: the trigger as parsed for the record's format; NULL: the table's
 * @rec, @size, @ctx: as utrace__hist_add()
 * @ref_maps: the table of each h->refs[i]'s trigger
 * @fire: set to the actions' parameters when they are to run
 *
 * The references to other triggers' variables are read with this
 * record's key first, and consumed (read once); one that is not set makes
 * the record no hit.  Then the entry's sums and variables are updated,
 * then its onmax()/onchange() value (a save() is done here).
 *
 * Return: -1 no hit, else a hit with bit 0 set when the onmatch() action's
 * trace is to run, bit 1 when the onmax()/onchange() one's is, bit 2 when
 * its .snapshot() is to be taken.
 */
int utrace__hist_add_vars(struct utrace__hist_map *m, const struct utrace__hist *h,
			  const void *rec, uint32_t size,
			  const struct utrace__hist_ctx *ctx,
			  struct utrace__hist_map *const *ref_maps, struct utrace__hist_fire *fire)
	UTRACE_HIDDEN;

/* Can records read with @b (the same trigger parsed for another format of
 * the event) go into a table made for @a: the same keys and values, in
 * the same places of the key? */
bool utrace__hist_same_layout(const struct utrace__hist *a, const struct utrace__hist *b)
	UTRACE_HIDDEN;

/* What .sym and .sym-offset print for an address: the symbol holding it
 * (0), or -ENOENT. */
typedef int (*utrace__hist_sym_fn)(void *arg, const void *owner, uint64_t addr,
				   const char **name, uint64_t *start, uint64_t *size);

struct utrace__hist_print_opts {
	utrace__hist_sym_fn sym;        /* NULL: no names */
	void *sym_arg;
	bool paused;                    /* "[paused]" instead of "[active]" */
	const char *(*syscall)(uint64_t nr);   /* .syscall's name, or NULL */
	/* the trigger the header's "trigger info" line is of (a named
	 * trigger sharing the table: its filter); NULL: the table's */
	const struct utrace__hist *info;
};

/**
 * utrace__hist_print - the `hist` file's table of one trigger
 * @m: the table
 * @o: options (NULL for none)
 * @out: where
 *
 * "# event histogram" ... "Totals:" ..., as the kernel's
 * hist_trigger_show().  Two tables of one event are apart by "\n\n"
 * (the caller's).  Rows with the same sort keys are in the order of
 * their keys, ascending (the kernel leaves it to its heap sort).
 *
 * Return: 0, -ENOMEM or -EIO.
 */
int utrace__hist_print(struct utrace__hist_map *m, const struct utrace__hist_print_opts *o,
		       FILE *out) UTRACE_HIDDEN;

/* The trigger file's line: "hist:keys=...:size=2048 [active]\n"; NULL
 * when out of memory.  malloc()ed. */
char *utrace__hist_info(const struct utrace__hist *h, bool paused) UTRACE_HIDDEN;

#endif /* UTRACE_HIST_H */
