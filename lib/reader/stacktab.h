/* SPDX-License-Identifier: MIT */
/*
 * The call stacks of a recording (utrace record -g): ftrace:stack records
 * define a process's stack by id (the first time it is seen), and
 * ftrace:stack_ref records refer to one (docs/trace-file-format.md).  A
 * reader keeps the definitions it has passed here, keyed by process and
 * id, to name the frames of a stack_ref.  Internal.
 */
#ifndef UTRACE_READER_STACKTAB_H
#define UTRACE_READER_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct utrace__stacktab {
	struct utrace__stack_ent *v;
	size_t nr, cap;              /* cap: a power of two (open addressing) */
};

enum utrace__stack_kind { UTRACE__STACK_NONE, UTRACE__STACK_DEF, UTRACE__STACK_REF };

/* Is system:name one of the stack records? */
enum utrace__stack_kind utrace__stack_kind(const char *system, const char *name) UTRACE_HIDDEN;

/*
 * A stack record of process proc (rec: the record, len bytes): a
 * definition is kept; either way *ips and *nr say the stack's frames
 * (NULL and 0: a reference to a stack not seen).  0, -EINVAL (a record
 * too short) or -ENOMEM.
 */
int utrace__stacktab_item(struct utrace__stacktab *t, const void *proc,
			  enum utrace__stack_kind kind, const unsigned char *rec, size_t len,
			  const uint64_t **ips, uint32_t *nr) UTRACE_HIDDEN;

void utrace__stacktab_free(struct utrace__stacktab *t) UTRACE_HIDDEN;

/*
 * The name of frame ip of process proc, into buf: "function+0xoff/0xsize"
 * from its symbols (just "function" when !offsets), else
 * "[object]+0xoff" (the object's file name, off its address in the file)
 * from its OBJECT records, else a JIT's name from /tmp/perf-PID.map (read
 * now, as perf report does), else "<%016lx>" (the kernel's form for an
 * address it cannot name; "0x..." when !offsets).
 */
struct utrace__tf_process;
void utrace__stack_frame_name(const struct utrace__tf_process *proc, uint64_t ip, bool offsets,
			      char *buf, size_t len) UTRACE_HIDDEN;

#endif /* UTRACE_READER_STACKTAB_H */
