/* SPDX-License-Identifier: MIT */
/*
 * Dynamic probe definitions (issue 12, "The interface"): the front end of
 * uprobe_events, shared by libutrace and the utrace CLI.
 *
 * A definition line in the kernel's syntax,
 *
 *   p[:[GRP/]EVENT] [OBJ:]SYMBOL[+OFFS] | [OBJ:]0xADDR [FETCHARGS]
 *   r[:[GRP/]EVENT] [OBJ:]SYMBOL[+0] [FETCHARGS]
 *   -:[GRP/]EVENT
 *
 * is parsed and compiled here into a struct utrace__probe_def: the event's
 * names, where it goes (an object and a file offset, or a symbol still to
 * resolve), and one small fetch program per argument.  The same def gives
 * the event's fields (the format file), its print fmt, its canonical
 * readback line, and prints a record as the kernel prints uprobe events.
 *
 * Errors are the kernel's: its errno, its message and the error_log caret
 * position in the command rebuilt from the words (one space between each).
 * Where utrace accepts more than the kernel (symbols, $argN, @SYM, the
 * symbol type) the design notes say so.
 *
 * The fetch program runs on struct utrace_probe_regs (probe-regs.h)
 * and reads program memory only through utrace__probe_read*(): it is
 * async-signal-safe and allocates nothing.
 */
#ifndef UTRACE_PROBE_PROBE_H
#define UTRACE_PROBE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <utrace/tracepoint.h>

#include "compiler.h"
#include "probe-regs.h"

#define UTRACE_PROBE_NAME_MAX   64    /* the kernel's MAX_EVENT_NAME_LEN */
#define UTRACE_PROBE_MAX_ARGS   128   /* MAX_TRACE_ARGS */
#define UTRACE_PROBE_ARGSTR_MAX 63    /* MAX_ARGSTR_LEN */
#define UTRACE_PROBE_ARRAY_MAX  64    /* MAX_ARRAY_LEN */
#define UTRACE_PROBE_STRING_MAX 256   /* bytes kept of one string, NUL included */
#define UTRACE_PROBE_INSN_MAX   16    /* FETCH_INSN_MAX */
#define UTRACE_PROBE_DEFAULT_GROUP "uprobes"

/* One step of an argument's fetch program. */
enum utrace__probe_op {
	UTRACE__POP_REG,      /* value = a register (imm: its index) */
	UTRACE__POP_CONST,    /* value = imm (cs, ss, orig_ax: no such state here) */
	UTRACE__POP_STACK,    /* value = *(u64 *)(sp + 8 * imm) */
	UTRACE__POP_STACKP,   /* value = sp */
	UTRACE__POP_RETVAL,   /* value = ax */
	UTRACE__POP_ARG,      /* value = SysV argument imm (0-based) at entry */
	UTRACE__POP_COMM,     /* the thread's name (a string) */
	UTRACE__POP_IMM,      /* value = imm */
	UTRACE__POP_DATA,     /* an immediate string (data) */
	UTRACE__POP_FOFFS,    /* value = the object's load bias + imm */
	UTRACE__POP_SYM,      /* value = the object's load bias + resolved imm */
	UTRACE__POP_DEREF,    /* value = *(value + imm) */
};

struct utrace__probe_insn {
	uint8_t op;         /* enum utrace__probe_op */
	int64_t imm;
};

/* Argument types, as the kernel's probe_fetch_types. */
enum utrace__probe_type {
	UTRACE__PT_U8, UTRACE__PT_U16, UTRACE__PT_U32, UTRACE__PT_U64,
	UTRACE__PT_S8, UTRACE__PT_S16, UTRACE__PT_S32, UTRACE__PT_S64,
	UTRACE__PT_X8, UTRACE__PT_X16, UTRACE__PT_X32, UTRACE__PT_X64,
	UTRACE__PT_CHAR, UTRACE__PT_STRING, UTRACE__PT_USTRING,
	UTRACE__PT_SYMBOL,
};

struct utrace__probe_arg {
	char *name;
	char *comm;          /* the fetcharg as written: "+0(%di):string" */
	uint8_t type;        /* enum utrace__probe_type */
	uint8_t size;        /* of one element in the record (4 for strings) */
	uint8_t count;       /* array elements, 0 when not an array */
	uint8_t bf_width;    /* bitfield b<width>@<offset>/<size>, 0 if none */
	uint8_t bf_offset;
	uint16_t offset;     /* in the record */
	/* a counted string (utrace's :string[%REG] / :string[$argN]): so
	 * many bytes are read, NUL or not, their number the register's at
	 * the hit (len_reg: its index in utrace_probe_regs) */
	bool counted;
	uint8_t len_reg;
	uint8_t nr_insns;
	struct utrace__probe_insn insns[UTRACE_PROBE_INSN_MAX];
	char *data;          /* \"STR" */
	char *sym;           /* @SYM, resolved into a POP_SYM insn */
};

/* What a line asked for. */
enum utrace__probe_cmd {
	UTRACE__PROBE_NONE,    /* empty or a comment */
	UTRACE__PROBE_ADD,
	UTRACE__PROBE_DEL,     /* -:[GRP/]EVENT; event "" deletes the group */
};

struct utrace__probe_def {
	char kind;                    /* 'p' or 'r' */
	char group[UTRACE_PROBE_NAME_MAX + 1];
	char event[UTRACE_PROBE_NAME_MAX + 1];
	char *path;                   /* the object as written ("" = the program) */
	char *symbol;                 /* SYMBOL, or NULL when an offset was given */
	long symoff;
	uint64_t offset;              /* file offset (after resolution) */
	/* (REFCTR): the file offset of a 16-bit SDT semaphore, counted up
	 * while the probe is placed (the kernel's ref_ctr_offset); 0: none */
	uint64_t refctr;
	bool resolved;
	bool auto_name;               /* event made up from the path and offset */
	bool entry;                   /* at a function's entry ($argN allowed) */
	unsigned int nr_args;
	struct utrace__probe_arg *args;
	unsigned int size;            /* record size without strings */
	unsigned int nr_strings;
	struct utrace_event_field *fields;  /* __probe_ip or func/ret_ip, args */
	unsigned int nr_fields;
	char *print_fmt;
};

struct utrace__probe_error {
	int err;            /* negative errno of the write() */
	bool logged;        /* the kernel writes an error_log entry */
	int pos;            /* caret position in command */
	char msg[128];
	char command[1024]; /* the words joined with one space */
};

/*
 * Resolving what a definition names, in a process or in files: the caller
 * (libutrace: its own mappings; the CLI: files) supplies these.  All may
 * be NULL.
 */
struct utrace__probe_resolver {
	/* An object given without a '/': its path, or -ENOENT. */
	int (*object)(void *data, const char *name, char *path, size_t len);
	/* SYMBOL in the object at path: its address in the file (st_value),
	 * its file offset and its size.  0 or -ENOENT. */
	int (*symbol)(void *data, const char *path, const char *sym,
		      uint64_t *vaddr, uint64_t *off, uint64_t *size);
	/* Each function of a size in the object at path (its symbol table:
	 * STT_FUNC and STT_GNU_IFUNC, one call per name, with its address
	 * in the file) until @fn returns non-zero.  0, or -ENOENT when the
	 * object's table cannot be read here.  NULL: globs are not
	 * expanded (utrace__probe_expand() says so). */
	int (*functions)(void *data, const char *path,
			 int (*fn)(void *arg, const char *name, uint64_t vaddr), void *arg);
	void *data;
};

/* Walk a symbol table's functions for a resolver's functions(). */
struct utrace__symtab;
int utrace__probe_symtab_functions(const struct utrace__symtab *t,
				   int (*fn)(void *arg, const char *name, uint64_t vaddr),
				   void *arg) UTRACE_HIDDEN;

/* Is the SYMBOL of a definition line a glob (one of '*', '?', '[')? */
bool utrace__probe_is_glob(const char *line) UTRACE_HIDDEN;

/**
 * utrace__probe_expand - the definitions a glob stands for
 * @line: a definition line whose SYMBOL is a glob ("p:grp/ libc.so.6:str*")
 * @res: the resolver whose functions() lists the object's functions
 * @lines: set to @n malloc()ed lines, each the line with the glob
 *         replaced by one matching function's name, in address order
 *         (free with utrace__probe_lines_free())
 * @err: filled on error
 *
 * Functions are matched by fnmatch(3) on their names (a versioned name
 * "memcpy@GLIBC_2.2.5" as "memcpy"), one name per address.  An event
 * named in the line is the event of every line (one event, many sites,
 * as the kernel's multi-probe events); without a name, each line's event
 * is made up from its function, as for a symbol written out.
 *
 * Return: 0 with @n >= 1; -ENOENT when no function matches (@err names
 * the glob and the object); -EINVAL when the line cannot be expanded.
 */
int utrace__probe_expand(const char *line, const struct utrace__probe_resolver *res,
			 char ***lines, size_t *n, struct utrace__probe_error *err) UTRACE_HIDDEN;
void utrace__probe_lines_free(char **lines, size_t n) UTRACE_HIDDEN;

/* Symbols looked up in the files themselves (no process): files.c. */
extern const struct utrace__probe_resolver utrace__probe_files UTRACE_HIDDEN;

/* Is sym an IFUNC (STT_GNU_IFUNC) of the file at path?  Its address in the
 * file is the resolver's; only a process knows the implementation it
 * runs (libutrace resolves it there, uprobes.c). */
bool utrace__probe_file_ifunc(const char *path, const char *sym) UTRACE_HIDDEN;

/**
 * utrace__probe_parse - parse and compile one line of uprobe_events
 * @line: the line (no newline); words split on white space as the kernel
 * @res: symbol and object lookups, or NULL
 * @cmd: set to what the line asks for
 * @out: an ADD's or a DEL's def (DEL: only group and event), to free with
 *       utrace__probe_def_free()
 * @err: filled on error
 *
 * Return: 0, or the negative errno of the kernel's write().
 */
int utrace__probe_parse(const char *line, const struct utrace__probe_resolver *res,
			enum utrace__probe_cmd *cmd, struct utrace__probe_def **out,
			struct utrace__probe_error *err) UTRACE_HIDDEN;

void utrace__probe_def_free(struct utrace__probe_def *d) UTRACE_HIDDEN;

/**
 * utrace__probe_same_args - may @b join the event of @a (the kernel's
 * multi-probe events)?  Same kind and the same argument names and types.
 */
bool utrace__probe_same_args(const struct utrace__probe_def *a,
			     const struct utrace__probe_def *b) UTRACE_HIDDEN;

/**
 * utrace__probe_canonical - the def's line in uprobe_events
 *
 * "p:GRP/EVENT PATH:0x%016lx name=fetcharg ...": the kernel's readback.
 * Return: malloc()ed text without newline, or NULL.
 */
char *utrace__probe_canonical(const struct utrace__probe_def *d) UTRACE_HIDDEN;

/**
 * utrace__probe_log_text - the error_log entry after its "[ts] " prefix
 * "trace_uprobe: error: <msg>\n  Command: <command>\n<caret>\n"
 * Return: malloc()ed text, or NULL.
 */
char *utrace__probe_log_text(const struct utrace__probe_error *err) UTRACE_HIDDEN;

/*
 * utrace__probe_error_text - why utrace__probe_parse() refused a line
 * @who: the prefix ("utrace probe", "utrace record: --probe")
 * @line: the line, @r: what the parse returned, @err: its error
 *
 * "WHO: " and the error_log entry when the kernel logs one (caret
 * included), else "WHO: 'LINE': message\n"; the command prints it.
 * Return: malloc()ed text, or NULL (out of memory).
 */
char *utrace__probe_error_text(const char *who, const char *line, int r,
			       const struct utrace__probe_error *err) UTRACE_HIDDEN;

/* ---- running a probe ---- */

/* What a hit needs beyond the registers. */
struct utrace__probe_env {
	uint64_t bias;      /* the object's load bias (for @+OFF, @SYM) */
	uint64_t func;      /* return probes: the function's address */
};

/**
 * utrace__probe_fetch - build a record's fields from a hit
 * @d: the def
 * @regs: the registers at the hit
 * @env: load bias and function
 * @rec: the record (rec[0..8) is the common header, left alone)
 * @cap: its room
 * @faults: incremented for each fetch that could not read memory
 *
 * Strings go after the fixed part, as __data_loc (len << 16 | offset);
 * a string that cannot be read has length 0 and prints "(fault)".
 * Async-signal-safe; allocates nothing.
 *
 * Return: the record's length.
 */
size_t utrace__probe_fetch(const struct utrace__probe_def *d,
			   const struct utrace_probe_regs *regs,
			   const struct utrace__probe_env *env,
			   uint8_t *rec, size_t cap, unsigned int *faults) UTRACE_HIDDEN;

/* The most a record of @d can take. */
size_t utrace__probe_record_max(const struct utrace__probe_def *d) UTRACE_HIDDEN;

/**
 * utrace__probe_print - print a record as the kernel prints uprobe events
 * "(0xIP) a=1 b=2" or "(0xRET <- 0xFUNC) ret=3", without the "EVENT: ".
 * @sym: names an address for the symbol type, as %pS ("add+0x0/0x4"):
 *       the length written, or 0 when it cannot (then hex); may be NULL
 * @ctx: its first argument
 * Return: the length written (as snprintf).
 */
typedef int (*utrace__probe_sym_fn)(void *ctx, uint64_t addr, char *buf, size_t len);
int utrace__probe_print(const struct utrace__probe_def *d, const uint8_t *rec,
			size_t len, char *out, size_t cap, utrace__probe_sym_fn sym, void *ctx)
	UTRACE_HIDDEN;

/**
 * utrace__probe_def_from_format - what a recorded uprobe event's format
 * says, enough for utrace__probe_print()
 * @fields: the fields after the common ones
 * @nr: how many
 * @fmt: the print fmt's format string, unquoted ("(%lx) a=%d")
 *
 * Return: a def to free with utrace__probe_def_free(), or NULL when the
 * format is not a uprobe event's.
 */
struct utrace__probe_def *utrace__probe_def_from_format(const struct utrace_event_field *fields,
							unsigned int nr, const char *fmt)
	UTRACE_HIDDEN;

#endif /* UTRACE_PROBE_PROBE_H */
