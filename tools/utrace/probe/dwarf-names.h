/* SPDX-License-Identifier: MIT */
/*
 * C names for dynamic probes, like perf probe -x BINARY: the functions,
 * variables and probe-able lines of a program from its DWARF (elfutils'
 * libdw), and perf-probe style definitions ("func:3 r->name:string")
 * turned into raw definitions in the kernel's uprobe_events syntax
 * ("p:probe_prog/func /path/prog:func+0x12 name=+8(%di):string").
 *
 * Only the utrace CLI links this (a static library of its own): a traced
 * program never needs libdw.  See docs/design-notes.md, "Dynamic probes:
 * DWARF names and the kernel fallback".
 */
#ifndef UTRACE_PROBE_DWARF_H
#define UTRACE_PROBE_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Room for a one-line error. */
#define UTRACE_DW_ERR_MAX 320

struct utrace__dw;

/* Open a binary (its DWARF is optional for the function list); 0 or
 * -errno with err filled ("'prog': no DWARF (build with -g)"). */
int utrace__dw_open(const char *path, struct utrace__dw **dw, char err[UTRACE_DW_ERR_MAX]);
void utrace__dw_close(struct utrace__dw *dw);

/* The binary's absolute path and the default group (probe_<basename>). */
const char *utrace__dw_path(const struct utrace__dw *dw);
const char *utrace__dw_group(const struct utrace__dw *dw);

/* perf probe --funcs: the function symbols of the ELF file, sorted, one a
 * line, those matching the glob filter (NULL: "!_*", as perf; a leading
 * '!' negates).  0 or -errno. */
int utrace__dw_list_funcs(struct utrace__dw *dw, const char *filter, FILE *out,
			  char err[UTRACE_DW_ERR_MAX]);

/* perf probe --vars FUNC[:LINE|+OFFS]: "Available variables at ..." then
 * "\t@<func+off>" and "\t\ttype\tname" lines, the variables with a
 * location at that address (externs too: the CU's globals). */
int utrace__dw_list_vars(struct utrace__dw *dw, const char *point, bool externs, FILE *out,
			 char err[UTRACE_DW_ERR_MAX]);

/* perf probe --line FUNC: "<func@file:0>" then the function's source
 * lines, numbered from its first line where a probe can go. */
int utrace__dw_list_lines(struct utrace__dw *dw, const char *func, FILE *out,
			  char err[UTRACE_DW_ERR_MAX]);

/* Where a raw definition's probe point is written. */
enum utrace__dw_site_form {
	UTRACE_DW_SITE_SYMBOL,  /* PATH:func+0xOFF (utrace's probes) */
	UTRACE_DW_SITE_FILEOFF, /* PATH:0xFILEOFFSET (the kernel's uprobe_events) */
};

/* The result of one translation. */
struct utrace__dw_probe {
	char *raw;              /* the raw definition, malloc'ed */
	uint64_t func_addr;     /* the function (file addresses) and its size */
	uint64_t func_size;
	uint64_t addr;          /* the probed address */
	uint64_t file_off;      /* its offset in the file */
};

/*
 * Turn a perf-probe style definition
 *   [[GROUP:]EVENT=]FUNC[:RLINE|+OFFS|%return] [[NAME=]ARG[:TYPE]]...
 * (ARG: a C variable with ->, . and [N]; $params, $vars, $retval; or a
 * raw fetcharg such as %di, $stack1, +8(%si), passed on) into a raw
 * definition.  Event names are made as perf makes them (the function,
 * FUNC__return, then _1, _2 for repeats with the same dw).  0 or
 * -errno with err filled; p->raw is the caller's to free.
 */
int utrace__dw_translate(struct utrace__dw *dw, const char *def,
			 enum utrace__dw_site_form form, struct utrace__dw_probe *p,
			 char err[UTRACE_DW_ERR_MAX]);

/* Whether s is a good group or event name for the kernel (a C
 * identifier). */
bool utrace__dw_good_name(const char *s);

/* The function symbol (ELF) of this name: its start and size; 0 or
 * -ENOENT. */
int utrace__dw_func_at(struct utrace__dw *dw, const char *name, uint64_t *addr,
		       uint64_t *size);

/* A file address as an offset in the file (the PT_LOAD holding it); 0 or
 * -ENOENT. */
int utrace__dw_file_offset(struct utrace__dw *dw, uint64_t addr, uint64_t *off);

/* The file address of a file offset (the PT_LOAD holding it); 0 or
 * -ENOENT. */
int utrace__dw_addr_of_offset(struct utrace__dw *dw, uint64_t off, uint64_t *addr);

/* The function symbol holding a file address: its start and size; 0 or
 * -ENOENT. */
int utrace__dw_func_holding(struct utrace__dw *dw, uint64_t addr, uint64_t *func,
			    uint64_t *size);

/* Copy len bytes of the file at file address addr (a function's code);
 * 0 or -errno. */
int utrace__dw_read_code(struct utrace__dw *dw, uint64_t addr, void *buf, size_t len);

#endif /* UTRACE_PROBE_DWARF_H */
