/* SPDX-License-Identifier: MIT */
/*
 * The kernel-uprobe fallback (root): a definition in utrace's syntax,
 *   p[:[GRP/]EVENT] [OBJ:]SYMBOL[+OFFS] [FETCHARGS]
 *   r[:[GRP/]EVENT] [OBJ:]SYMBOL[+0] [FETCHARGS]
 *   p[:[GRP/]EVENT] OBJ:0xFILEOFFSET [FETCHARGS]   (the kernel's own form)
 * becomes the line the kernel's uprobe_events takes,
 *   p:GRP/EVENT /abs/path/OBJ:0xFILEOFFSET FETCHARGS
 * after the site is checked to be an instruction boundary of its function
 * (utrace__probe_decode_check(), engine.h): the kernel does not check, and
 * a probe in the middle of an instruction corrupts the program.  No
 * tracefs here: the caller writes the line.  Only the utrace CLI links it.
 */
#ifndef UTRACE_PROBE_KUPROBE_H
#define UTRACE_PROBE_KUPROBE_H

#include <stdint.h>
#include <sys/types.h>

#include "dwarf-names.h"
#include "probe.h"

struct utrace__kup {
	char *line;             /* for uprobe_events, malloc'ed */
	char group[64];
	char event[64];
	char path[4096];        /* the object */
	uint64_t addr;          /* the site's file address */
	uint64_t file_off;
};

/*
 * Translate and check one definition.  OBJ: a path, or (with pid > 0) the
 * name of an object mapped in the process ("libc" or "libc.so.6");
 * without OBJ, default_obj (utrace probe -k -x BINARY, the recorded
 * command), else the process's executable.  group: when
 * not NULL, the group whatever the definition says (utrace record's own).
 * 0, or -errno with err filled (a refused site says why).
 */
int utrace__kup_translate(const char *def, pid_t pid, const char *default_obj,
			  const char *group, struct utrace__kup *k,
			  char err[UTRACE_DW_ERR_MAX]);
void utrace__kup_free(struct utrace__kup *k);

/* Definitions resolved in files (utrace__probe_files), an object named
 * without a path as the utrace tool itself maps it (libc.so.6): utrace
 * probe without -p, and utrace record --probe before the command. */
extern const struct utrace__probe_resolver utrace__probe_files_here;

/*
 * utrace__probe_site_check_file - utrace__probe_site_rules() on a parsed
 * definition whose object is a file named by its path (outside a process:
 * utrace probe without -p, utrace record --probe before the command), as
 * the process checks it when it binds it (sitecheck.c)
 * @d: the def, resolved (its file offset known)
 * @err: its parse's (command filled); on a refusal msg, err, logged and
 *       pos (under the place, word 1) are set, as the process logs it
 *
 * Return: 0 (accepted, or not checkable here: an object without a '/', an
 * IFUNC, a file without symbols), or -EINVAL.
 */
int utrace__probe_site_check_file(const struct utrace__probe_def *d,
				  struct utrace__probe_error *err);

/* Why utrace__probe_parse() refused a line, on stderr: "WHO: " and the
 * error_log entry when the kernel logs one (caret included), else "WHO:
 * 'LINE': message" (utrace__probe_error_text()). */
void probe_say_error(const char *who, const char *line, int r,
		     const struct utrace__probe_error *err);

/* Whether a definition is in the raw syntax (p/r first) rather than
 * perf's (FUNC[:LINE] VAR...). */
int utrace__kup_is_raw(const char *def);

#endif /* UTRACE_PROBE_KUPROBE_H */
