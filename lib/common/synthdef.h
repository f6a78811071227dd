/* SPDX-License-Identifier: MIT */
/*
 * A synthetic event's definition (the kernel's synthetic_events line,
 * kernel/trace/trace_events_synth.c): its parse, with the kernel's
 * errors, and its record layout.  Shared by the traced program's
 * synthetic events (lib/runtime/synth.c) and `utrace hist -i`, whose
 * actions build the same records offline.
 *
 * Every field takes 8 bytes of the record after the common ones (the
 * kernel's u64 fields[]), a field narrower than that in its first bytes;
 * a char[N] string takes 256 bytes (STR_VAR_LEN_MAX); a char[] string
 * (dynamic) takes 8, its __data_loc word (offset | length << 16), and
 * its bytes follow the fixed part of the record, as the kernel's
 * trace_string() puts them.
 */
#ifndef UTRACE_SYNTHDEF_H
#define UTRACE_SYNTHDEF_H

#include <stdbool.h>
#include <stdint.h>

#include <utrace/tracepoint.h>

#include "compiler.h"

#define UTRACE__SYNTH_FIELDS_MAX 64      /* SYNTH_FIELDS_MAX */
#define UTRACE__SYNTH_STR_SLOT 256       /* STR_VAR_LEN_MAX */

struct utrace__synth_field {
	char *type, *name;       /* "char[16]", "comm" */
	unsigned int size;
	unsigned int offset;     /* in the record */
	bool is_signed;
	bool is_string;          /* char[N] or char[] */
	bool is_dynamic;         /* char[]: a __data_loc string */
};

struct utrace__synth_def {
	char *name;
	unsigned int nr;
	struct utrace__synth_field f[UTRACE__SYNTH_FIELDS_MAX];
	/* the fields as an event's (after the common ones) */
	struct utrace_event_field ef[UTRACE__SYNTH_FIELDS_MAX];
	unsigned int struct_size;        /* the record's fixed bytes */
	unsigned int nr_dynamic;         /* char[] fields */
};

/**
 * utrace__synth_def_parse - parse "NAME FIELD[;FIELD]..." (or fields apart
 *                           by white space alone, the older syntax)
 * @line: the definition, comments and outer blanks stripped
 * @d: filled in (free with utrace__synth_def_fini(), also on error)
 * @log: set to the error_log entry of a refused line (malloc()ed, without
 *       its time stamp), or NULL
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int utrace__synth_def_parse(const char *line, struct utrace__synth_def *d, char **log)
	UTRACE_HIDDEN;
/* The same, the error_log entry's "Command:" being cmd (the dynamic_events
 * line, "s:[synthetic/]" in front of line). */
int utrace__synth_def_parse_cmd(const char *line, const char *cmd, struct utrace__synth_def *d,
				char **log) UTRACE_HIDDEN;

/**
 * utrace__synth_check_command - the checks of a definition before its
 *                               fields are read
 * @line: "NAME FIELD[;FIELD]...", leading blanks skipped
 * @cmd: the command the error_log entry shows (line, or the dynamic_events
 *       line it is in)
 * @log: set to the entry of a refused line, or NULL
 *
 * The kernel's check_command() (at least a name, a type and a field name
 * before the first ';'), then the name's: "Command must be of the form:
 * <name> field[;field] ..." and "Illegal name", in the kernel's order.
 *
 * Return: 0 or -EINVAL.
 */
int utrace__synth_check_command(const char *line, const char *cmd, char **log) UTRACE_HIDDEN;

/*
 * A line of dynamic_events for a synthetic event, "s:[synthetic/]NAME
 * FIELD[;FIELD]..." (the kernel's create_synth_event()): its definition
 * (*def, pointing into line) or the kernel's refusal of its form ("Command
 * must be of the form: s or -:[synthetic/]<name> field[;field] ...").
 * Return: 0 or -EINVAL.
 */
int utrace__synth_dyn_line(const char *line, const char **def, char **log) UTRACE_HIDDEN;
void utrace__synth_def_fini(struct utrace__synth_def *d) UTRACE_HIDDEN;

/* is_good_name(): a C identifier */
bool utrace__synth_good_name(const char *n) UTRACE_HIDDEN;

/* The error_log entry "synthetic_events: error: MSG\n  Command: CMD\n" with
 * the caret under the first occurrence of at; returns err. */
int utrace__synth_refuse(char **log, const char *cmd, const char *msg, const char *at, int err)
	UTRACE_HIDDEN;

/* The print fmt: "\"lat=%llu, id=%d\"" and "REC->lat, REC->id"
 * (malloc()ed; -ENOMEM). */
int utrace__synth_def_print(const struct utrace__synth_def *d, char **fmt, char **args)
	UTRACE_HIDDEN;

/* The bytes of a record of these values: struct_size, and the char[]
 * strings' (each with its NUL), at most UTRACE_EVENT_MAX. */
unsigned int utrace__synth_def_size(const struct utrace__synth_def *d, const uint64_t *vals)
	UTRACE_HIDDEN;

/* Write the record's fields from an action's values (a string: the
 * address of a NUL-terminated copy, or 0); rec has size bytes
 * (utrace__synth_def_size()), its common fields already set. */
void utrace__synth_def_fill(const struct utrace__synth_def *d, unsigned char *rec,
			    unsigned int size, const uint64_t *vals) UTRACE_HIDDEN;

#endif /* UTRACE_SYNTHDEF_H */
