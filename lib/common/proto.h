/* SPDX-License-Identifier: MIT */
/*
 * What a traced process tells `utrace record`, over a SOCK_SEQPACKET unix
 * socket whose path is in UTRACE_RECORD.  One message per packet:
 *
 *   HELLO    once, first, with the pool's memfd attached (SCM_RIGHTS)
 *   FORMAT   once per event, when the event registers (also after fork)
 *   OBJECT   once per loaded ELF object (the program, its libraries, and
 *            those dlopen()ed later): its load bias and path, and the file
 *            itself, opened by the process (SCM_RIGHTS), so that the
 *            recorder writes its symbols (%ps / %pS) from it, whether or
 *            not the process still lives by then.  The recorder reads no
 *            file by its name (root's recorder would read what the
 *            process may not): an OBJECT without a file gives no symbols.
 *   PROBE    a dynamic probe's fate that the recorder says (utrace record
 *            --probe): its definition refused, or placed as a breakpoint
 *            (the engine's own result); older recorders skip it
 *
 * The process never waits for an answer, nor for the recorder to read:
 * what does not fit waits in the process (runtime/record.c), and a
 * recorder that stays stuck is dropped, the messages it missed counted in
 * the pool's header (msgs_missed).  The recorder learns that the process
 * ended (or exec'd) when the socket closes, and then drains the pool,
 * which it has mapped too.
 */
#ifndef UTRACE_CONTROL_PROTO_H
#define UTRACE_CONTROL_PROTO_H

#include <stdint.h>

#define UTRACE_MSG_HELLO 1
#define UTRACE_MSG_FORMAT 2
#define UTRACE_MSG_OBJECT 3
#define UTRACE_MSG_PROBE 4
#define UTRACE_PROTO_VERSION 1

struct utrace_msg_hello {
	uint32_t type;
	uint32_t version;
	uint32_t pid;
	uint32_t ppid;
	char comm[16];
	char exe[256];
};

/* followed by "system\0format\0" */
struct utrace_msg_format {
	uint32_t type;
	uint32_t id;
};

/* followed by the definition's line and a text, each with a NUL */
struct utrace_msg_probe {
	uint32_t type;
	uint32_t what;          /* enum utrace_probe_note */
};

enum utrace_probe_note {
	UTRACE_PROBE_REFUSED = 1,       /* text: the error_log message */
	UTRACE_PROBE_BREAKPOINT = 2,    /* text: "SITES: WHY", where the engine
					 * placed breakpoints, and why */
	UTRACE_PROBE_MATCHED = 3,       /* a glob's: "ADDED of MATCHED" functions */
};

/* followed by the object's absolute path and a NUL */
struct utrace_msg_object {
	uint32_t type;
	uint32_t reserved;
	uint64_t bias;          /* dlpi_addr: add to the file's st_values */
};

#endif /* UTRACE_CONTROL_PROTO_H */
