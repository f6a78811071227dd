/* SPDX-License-Identifier: MIT */
/*
 * Event filters (lib/runtime/filter.c): every sched_switch expression of the kernel
 * transcript tests/../reference 05-filter.txt (accept or reject, errno,
 * message, caret, filter-file text and error_log text, byte for byte),
 * the other events' cases there and in 08-uprobes.txt, the semantics on
 * hand-made records, a differential test of && || ! ( ) against a tree
 * evaluator, and a fuzz loop (run it under ASan).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>

#include "filter.h"
#include "internal.h"
#include "test.h"

/* ------------------------------------------------------------------ */
/* Events, as their kernel format files (raw/format/<sys>_<ev>.format) show them. */

static const struct utrace_event_field sched_switch[] = {
	{ "char", "prev_comm", 8, 16, 0, UTRACE_FIELD_ARRAY, 16 },
	{ "pid_t", "prev_pid", 24, 4, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "int", "prev_prio", 28, 4, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "long", "prev_state", 32, 8, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "next_comm", 40, 16, 0, UTRACE_FIELD_ARRAY, 16 },
	{ "pid_t", "next_pid", 56, 4, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "int", "next_prio", 60, 4, 1, UTRACE_FIELD_PLAIN, 0 },
};

static const struct utrace_event_field sched_process_fork[] = {
	{ "char", "parent_comm", 8, 4, 0, UTRACE_FIELD_STRING, 0 },
	{ "pid_t", "parent_pid", 12, 4, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "child_comm", 16, 4, 0, UTRACE_FIELD_STRING, 0 },
	{ "pid_t", "child_pid", 20, 4, 1, UTRACE_FIELD_PLAIN, 0 },
};

static const struct utrace_event_field sys_enter_openat[] = {
	{ "int", "__syscall_nr", 8, 4, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "int", "dfd", 16, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "const char *", "filename", 24, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "int", "flags", 32, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "umode_t", "mode", 40, 8, 0, UTRACE_FIELD_PLAIN, 0 },
};

static const struct utrace_event_field refcap_add[] = {
	{ "unsigned long", "__probe_ip", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "s32", "a", 16, 4, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "s64", "b", 20, 8, 1, UTRACE_FIELD_PLAIN, 0 },
};

static const struct utrace_event_field refcap_greet[] = {
	{ "unsigned long", "__probe_ip", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "name", 16, 4, 1, UTRACE_FIELD_STRING, 0 },
};

#define EV(a) a, (unsigned int)(sizeof(a) / sizeof(a[0]))

/* An event with one field of each kind, for the semantics tests. */
struct all_rec {
	uint16_t common_type;
	uint8_t common_flags, common_preempt_count;
	int32_t common_pid;
	uint8_t u8;          /* 8 */
	int8_t s8;           /* 9 */
	uint16_t u16;        /* 10 */
	int16_t s16;         /* 12 */
	uint8_t b;           /* 14: bool */
	char c3[1];          /* 15: char[1] */
	uint32_t u32;        /* 16 */
	int32_t s32;         /* 20 */
	uint64_t u64;        /* 24 */
	int64_t s64;         /* 32 */
	char arr[8];         /* 40 */
	uint32_t loc_str;    /* 48: __data_loc char[] */
	uint32_t loc_ints;   /* 52: __data_loc int[] */
	uint64_t ptr;        /* 56: const char * */
	uint64_t ip;         /* 64: unsigned long */
	int32_t ints2[2];    /* 72: int[2] */
	int32_t ints3[3];    /* 80: int[3] */
	char data[68];       /* 92: dynamic data */
};

static const struct utrace_event_field all_fields[] = {
	{ "u8", "u8", 8, 1, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "s8", "s8", 9, 1, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "u16", "u16", 10, 2, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "s16", "s16", 12, 2, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "bool", "b", 14, 1, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "c3", 15, 1, 0, UTRACE_FIELD_ARRAY, 1 },
	{ "u32", "u32", 16, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "s32", "s32", 20, 4, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "u64", "u64", 24, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "s64", "s64", 32, 8, 1, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "arr", 40, 8, 0, UTRACE_FIELD_ARRAY, 8 },
	{ "char", "str", 48, 4, 0, UTRACE_FIELD_STRING, 0 },
	{ "int", "ints", 52, 4, 1, UTRACE_FIELD_DYNAMIC, 0 },
	{ "const char *", "ptr", 56, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned long", "ip", 64, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "int", "ints2", 72, 8, 1, UTRACE_FIELD_ARRAY, 2 },
	{ "int", "ints3", 80, 12, 1, UTRACE_FIELD_ARRAY, 3 },
	{ "int", "cpu", 0, 0, 1, UTRACE_FIELD_PLAIN, 0 },   /* shadows CPU: see below */
};
/* all_fields without the "cpu" field */
#define ALL_NR ((unsigned int)(sizeof(all_fields) / sizeof(all_fields[0]) - 1))

_Static_assert(sizeof(struct all_rec) == 160, "all_rec layout");

static void set_str(struct all_rec *r, const char *s, unsigned int len)
{
	unsigned int off = (unsigned int)offsetof(struct all_rec, data);

	memcpy(r->data, s, len);
	r->loc_str = len << 16 | off;
}

/* ------------------------------------------------------------------ */
/* The transcript.                                                     */

struct tcase {
	const char *expr;   /* as echoed, before the kernel's strstrip() */
	int err;            /* 0 or the negative errno of the write */
	const char *text;   /* the filter file after a failed write */
	const char *log;    /* the error_log entry after "[<ts>] " */
};

/* Every "echo '<expr>' > events/sched/sched_switch/filter" record of
 * 05-filter.txt that shows the write's errno, the file and the error_log;
 * extracted once with a script, not read at test time. */
static const struct tcase sched_switch_cases[] = {
	{ "prev_pid == 0", 0,
	  NULL,
	  NULL },
	{ "prev_pid != 0", 0,
	  NULL,
	  NULL },
	{ "prev_prio < 100", 0,
	  NULL,
	  NULL },
	{ "prev_prio <= 100", 0,
	  NULL,
	  NULL },
	{ "prev_prio > 100", 0,
	  NULL,
	  NULL },
	{ "prev_prio >= 100", 0,
	  NULL,
	  NULL },
	{ "prev_state & 1", 0,
	  NULL,
	  NULL },
	{ "prev_state & 0x2", 0,
	  NULL,
	  NULL },
	{ "prev_comm ~ \"sw*\"", 0,
	  NULL,
	  NULL },
	{ "next_comm ~ \"*worker*\"", 0,
	  NULL,
	  NULL },
	{ "next_comm ~ \"[ks]*\"", 0,
	  NULL,
	  NULL },
	{ "next_comm ~ \"?sh\"", 0,
	  NULL,
	  NULL },
	{ "prev_comm == \"swapper/0\"", 0,
	  NULL,
	  NULL },
	{ "prev_comm != \"swapper/0\"", 0,
	  NULL,
	  NULL },
	{ "prev_comm == swapper/0", -EINVAL,
	  "prev_comm == swapper/0\n"
	  "              ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_comm == swapper/0\n"
	  "                         ^\n" },
	{ "prev_comm == 'swapper/0'", 0,
	  NULL,
	  NULL },
	{ "prev_pid == 0 && next_pid != 0", 0,
	  NULL,
	  NULL },
	{ "prev_pid == 0 || next_pid == 0", 0,
	  NULL,
	  NULL },
	{ "!(prev_pid == 0)", 0,
	  NULL,
	  NULL },
	{ "(prev_pid == 0 || next_pid == 0) && prev_prio < 100", 0,
	  NULL,
	  NULL },
	{ "((prev_pid == 0))", 0,
	  NULL,
	  NULL },
	{ "prev_pid == 0x10", 0,
	  NULL,
	  NULL },
	{ "prev_pid == 0X1f", 0,
	  NULL,
	  NULL },
	{ "prev_pid == 010", 0,
	  NULL,
	  NULL },
	{ "prev_pid == -1", 0,
	  NULL,
	  NULL },
	{ "common_pid == 1", 0,
	  NULL,
	  NULL },
	{ "common_pid != 0 && common_preempt_count == 0", 0,
	  NULL,
	  NULL },
	{ "common_flags & 1", 0,
	  NULL,
	  NULL },
	{ "CPU == 0", 0,
	  NULL,
	  NULL },
	{ "cpu == 0", 0,
	  NULL,
	  NULL },
	{ "COMM == \"bash\"", 0,
	  NULL,
	  NULL },
	{ "comm ~ \"ba*\"", 0,
	  NULL,
	  NULL },
	{ "prev_pid==0&&next_pid!=0", 0,
	  NULL,
	  NULL },
	{ "  prev_pid   ==   0  ", 0,
	  NULL,
	  NULL },
	{ "prev_pid == 0 && (next_pid == 1 || next_pid == 2) || !(prev_prio > 10)", 0,
	  NULL,
	  NULL },
	{ "prev_state == 18446744073709551615", -EINVAL,
	  "prev_state == 18446744073709551615\n"
	  "               ^\n"
	  "parse_error: Illegal integer value\n"
	  "\n",
	  "event filter parse error: error: Illegal integer value\n"
	  "  Command: prev_state == 18446744073709551615\n"
	  "                          ^\n" },
	{ "prev_pid == 4294967296", 0,
	  NULL,
	  NULL },
	{ "prev_comm == \"\"", 0,
	  NULL,
	  NULL },
	{ "prev_comm ~ \"*\"", 0,
	  NULL,
	  NULL },
	{ "prev_comm == \"a b\"", 0,
	  NULL,
	  NULL },
	{ "prev_comm == swapper", -EINVAL,
	  "prev_comm == swapper\n"
	  "              ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_comm == swapper\n"
	  "                         ^\n" },
	{ "prev_comm == sw_ap-per.x", -EINVAL,
	  "prev_comm == sw_ap-per.x\n"
	  "              ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_comm == sw_ap-per.x\n"
	  "                         ^\n" },
	{ "nosuchfield == 1", -EINVAL,
	  "nosuchfield == 1\n"
	  "            ^\n"
	  "parse_error: Field not found\n"
	  "\n",
	  "event filter parse error: error: Field not found\n"
	  "  Command: nosuchfield == 1\n"
	  "                       ^\n" },
	{ "prev_pid == 0 && nosuch == 1", -EINVAL,
	  "prev_pid == 0 && nosuch == 1\n"
	  "                        ^\n"
	  "parse_error: Field not found\n"
	  "\n",
	  "event filter parse error: error: Field not found\n"
	  "  Command: prev_pid == 0 && nosuch == 1\n"
	  "                                   ^\n" },
	{ "prev_comm < \"abc\"", -EINVAL,
	  "prev_comm < \"abc\"\n"
	  "             ^\n"
	  "parse_error: Illegal operation for field type\n"
	  "\n",
	  "event filter parse error: error: Illegal operation for field type\n"
	  "  Command: prev_comm < \"abc\"\n"
	  "                        ^\n" },
	{ "prev_comm > \"abc\"", -EINVAL,
	  "prev_comm > \"abc\"\n"
	  "             ^\n"
	  "parse_error: Illegal operation for field type\n"
	  "\n",
	  "event filter parse error: error: Illegal operation for field type\n"
	  "  Command: prev_comm > \"abc\"\n"
	  "                        ^\n" },
	{ "prev_comm & 1", -EINVAL,
	  "prev_comm & 1\n"
	  "             ^\n"
	  "parse_error: Expecting string field\n"
	  "\n",
	  "event filter parse error: error: Expecting string field\n"
	  "  Command: prev_comm & 1\n"
	  "                        ^\n" },
	{ "prev_pid ~ \"1*\"", -EINVAL,
	  "prev_pid ~ \"1*\"\n"
	  "            ^\n"
	  "parse_error: Expecting numeric field\n"
	  "\n",
	  "event filter parse error: error: Expecting numeric field\n"
	  "  Command: prev_pid ~ \"1*\"\n"
	  "                       ^\n" },
	{ "(prev_pid == 0", -ENOENT,
	  "(prev_pid == 0\n"
	  "^\n"
	  "parse_error: Too many '('\n"
	  "\n",
	  "event filter parse error: error: Too many '('\n"
	  "  Command: (prev_pid == 0\n"
	  "           ^\n" },
	{ "prev_pid == 0)", -EPERM,
	  "prev_pid == 0)\n"
	  "             ^\n"
	  "parse_error: Too few '('\n"
	  "\n",
	  "event filter parse error: error: Too few '('\n"
	  "  Command: prev_pid == 0)\n"
	  "                        ^\n" },
	{ "((prev_pid == 0)", -ENOENT,
	  "((prev_pid == 0)\n"
	  "^\n"
	  "parse_error: Too many '('\n"
	  "\n",
	  "event filter parse error: error: Too many '('\n"
	  "  Command: ((prev_pid == 0)\n"
	  "           ^\n" },
	{ "prev_pid == 0x", -EINVAL,
	  "prev_pid == 0x\n"
	  "             ^\n"
	  "parse_error: Illegal integer value\n"
	  "\n",
	  "event filter parse error: error: Illegal integer value\n"
	  "  Command: prev_pid == 0x\n"
	  "                        ^\n" },
	{ "prev_pid == 12abc", -EINVAL,
	  "prev_pid == 12abc\n"
	  "             ^\n"
	  "parse_error: Illegal integer value\n"
	  "\n",
	  "event filter parse error: error: Illegal integer value\n"
	  "  Command: prev_pid == 12abc\n"
	  "                        ^\n" },
	{ "prev_pid == abc", -EINVAL,
	  "prev_pid == abc\n"
	  "             ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_pid == abc\n"
	  "                        ^\n" },
	{ "prev_pid == \"1\"", -EINVAL,
	  "prev_pid == \"1\"\n"
	  "             ^\n"
	  "parse_error: Expecting numeric field\n"
	  "\n",
	  "event filter parse error: error: Expecting numeric field\n"
	  "  Command: prev_pid == \"1\"\n"
	  "                        ^\n" },
	/* kernel 6.18.44 refuses a trailing operator (earlier 6.18 took it) */
	{ "prev_pid == 0 &&", -EINVAL,
	  "prev_pid == 0 &&\n"
	  "                ^\n"
	  "parse_error: Meaningless filter expression\n"
	  "\n",
	  "event filter parse error: error: Meaningless filter expression\n"
	  "  Command: prev_pid == 0 &&\n"
	  "                           ^\n" },
	{ "&& prev_pid == 0", -EPERM,
	  "&& prev_pid == 0\n"
	  "Error: (0)\n"
	  "\n",
	  "event filter parse error: error: Error\n"
	  "  Command: && prev_pid == 0\n"
	  "           ^\n" },
	{ "prev_pid = 0", -EINVAL,
	  "prev_pid = 0\n"
	  "          ^\n"
	  "parse_error: Invalid operator\n"
	  "\n",
	  "event filter parse error: error: Invalid operator\n"
	  "  Command: prev_pid = 0\n"
	  "                     ^\n" },
	{ "prev_pid ==", -EINVAL,
	  "prev_pid ==\n"
	  "           ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_pid ==\n"
	  "                       ^\n" },
	{ "prev_pid", -EINVAL,
	  "prev_pid\n"
	  "        ^\n"
	  "parse_error: Invalid operator\n"
	  "\n",
	  "event filter parse error: error: Invalid operator\n"
	  "  Command: prev_pid\n"
	  "                    ^\n" },
	{ "prev_pid 0", -EINVAL,
	  "prev_pid 0\n"
	  "          ^\n"
	  "parse_error: Invalid operator\n"
	  "\n",
	  "event filter parse error: error: Invalid operator\n"
	  "  Command: prev_pid 0\n"
	  "                     ^\n" },
	{ "prev_pid == 0 ||| next_pid == 0", -EPERM,
	  "prev_pid == 0 ||| next_pid == 0\n"
	  "Error: (0)\n"
	  "\n",
	  "event filter parse error: error: Error\n"
	  "  Command: prev_pid == 0 ||| next_pid == 0\n"
	  "           ^\n" },
	{ "prev_pid == 0 & & next_pid == 0", -EPERM,
	  "prev_pid == 0 & & next_pid == 0\n"
	  "              ^\n"
	  "parse_error: Too many terms in predicate expression\n"
	  "\n",
	  "event filter parse error: error: Too many terms in predicate expression\n"
	  "  Command: prev_pid == 0 & & next_pid == 0\n"
	  "                         ^\n" },
	{ "prev_comm == \"abc", -ESRCH,
	  "prev_comm == \"abc\n"
	  "             ^\n"
	  "parse_error: Missing matching quote\n"
	  "\n",
	  "event filter parse error: error: Missing matching quote\n"
	  "  Command: prev_comm == \"abc\n"
	  "                        ^\n" },
	{ "prev_pid == 1 2", -EPERM,
	  "prev_pid == 1 2\n"
	  "              ^\n"
	  "parse_error: Too many terms in predicate expression\n"
	  "\n",
	  "event filter parse error: error: Too many terms in predicate expression\n"
	  "  Command: prev_pid == 1 2\n"
	  "                         ^\n" },
	{ "()", -EINVAL,
	  "()\n"
	  "Error: (0)\n"
	  "\n",
	  "event filter parse error: error: Error\n"
	  "  Command: ()\n"
	  "           ^\n" },
	{ "!", -EINVAL,
	  "!\n"
	  " ^\n"
	  "parse_error: No filter found\n"
	  "\n",
	  "event filter parse error: error: No filter found\n"
	  "  Command: !\n"
	  "            ^\n" },
	{ "prev_pid == 0 next_pid == 1", -EPERM,
	  "prev_pid == 0 next_pid == 1\n"
	  "              ^\n"
	  "parse_error: Too many terms in predicate expression\n"
	  "\n",
	  "event filter parse error: error: Too many terms in predicate expression\n"
	  "  Command: prev_pid == 0 next_pid == 1\n"
	  "                         ^\n" },
	{ "prev_pid <> 0", -EINVAL,
	  "prev_pid <> 0\n"
	  "           ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_pid <> 0\n"
	  "                      ^\n" },
	{ "prev_pid =~ 0", -EINVAL,
	  "prev_pid =~ 0\n"
	  "          ^\n"
	  "parse_error: Invalid operator\n"
	  "\n",
	  "event filter parse error: error: Invalid operator\n"
	  "  Command: prev_pid =~ 0\n"
	  "                     ^\n" },
	{ "prev_pid == 1.5", -EPERM,
	  "prev_pid == 1.5\n"
	  "             ^\n"
	  "parse_error: Too many terms in predicate expression\n"
	  "\n",
	  "event filter parse error: error: Too many terms in predicate expression\n"
	  "  Command: prev_pid == 1.5\n"
	  "                        ^\n" },
	{ "prev_comm ~ abc", -EINVAL,
	  "prev_comm ~ abc\n"
	  "             ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_comm ~ abc\n"
	  "                        ^\n" },
	{ "prev_comm != swapper/0", -EINVAL,
	  "prev_comm != swapper/0\n"
	  "              ^\n"
	  "parse_error: Invalid value (did you forget quotes)?\n"
	  "\n",
	  "event filter parse error: error: Invalid value (did you forget quotes)?\n"
	  "  Command: prev_comm != swapper/0\n"
	  "                         ^\n" },
	{ "0", 0,
	  NULL,
	  NULL },
	{ "", -EINVAL,
	  "\n"
	  "Error: (0)\n"
	  "\n",
	  "event filter parse error: error: Error\n"
	  "  Command: \n"
	  "           ^\n" },
};

/* The other records: on sched_switch with a shorter readback, and on
 * sched_process_fork, sys_enter_openat and the uprobe events. */
struct ecase {
	const struct utrace_event_field *fields;
	unsigned int nr;
	const char *expr;
	int err;
	const char *text;   /* NULL: not shown in the transcript */
	const char *log;
};

static const struct ecase other_cases[] = {
	{ EV(sched_switch), "nosuch == 1", -EINVAL,
	  "nosuch == 1\n       ^\nparse_error: Field not found\n\n", NULL },
	{ EV(sched_switch), "00", -EINVAL, "00\n  ^\nparse_error: Field not found\n\n", NULL },
	{ EV(sched_switch), "prev_pid == 0 ||", -EINVAL,
	  "prev_pid == 0 ||\n                ^\nparse_error: Meaningless filter expression\n\n",
	  "event filter parse error: error: Meaningless filter expression\n"
	  "  Command: prev_pid == 0 ||\n"
	  "                           ^\n" },
	{ EV(sched_switch), "prev_pid == 0 && !", -EINVAL,
	  "prev_pid == 0 && !\n                  ^\nparse_error: Meaningless filter expression\n\n",
	  "event filter parse error: error: Meaningless filter expression\n"
	  "  Command: prev_pid == 0 && !\n"
	  "                             ^\n" },
	{ EV(sched_switch), "(prev_pid == 0) ||   ", -EINVAL,
	  "(prev_pid == 0) ||\n                  ^\nparse_error: Meaningless filter expression\n\n",
	  NULL },
	{ EV(sched_switch), "!prev_pid == 0", 0, NULL, NULL },
	{ EV(sched_switch), "CPU & 1", 0, NULL, NULL },
	{ EV(sched_switch), "CPUS & CPUS{0}", -EINVAL,
	  "CPUS & CPUS{0}\n     ^\nparse_error: Field not found\n\n",
	  "event filter parse error: error: Field not found\n"
	  "  Command: CPUS & CPUS{0}\n                ^\n" },
	{ EV(sched_switch), "CPUS == CPUS{0-1}", -EINVAL,
	  "CPUS == CPUS{0-1}\n     ^\nparse_error: Field not found\n\n",
	  "event filter parse error: error: Field not found\n"
	  "  Command: CPUS == CPUS{0-1}\n                ^\n" },
	{ EV(sched_switch), "CPUS & CPUS{0", -EINVAL,
	  "CPUS & CPUS{0\n     ^\nparse_error: Field not found\n\n",
	  "event filter parse error: error: Field not found\n"
	  "  Command: CPUS & CPUS{0\n                ^\n" },
	{ EV(sched_switch), "prev_pid == 0 || prev_pid == 1 || prev_pid == 2 || prev_pid == 3",
	  0, NULL, NULL },
	{ EV(sched_switch), "prev_comm == \"sw\\\"ap\"", -ESRCH,
	  "prev_comm == \"sw\\\"ap\"\n                    ^\nparse_error: Missing matching quote\n\n",
	  NULL },
	{ EV(sched_switch), "CPU & CPUS{0}", 0, NULL, NULL },
	{ EV(sched_switch), "cpu == CPUS{0-1}", 0, NULL, NULL },
	{ EV(sched_switch), "CPU & CPUS{0", -EINVAL,
	  "CPU & CPUS{0\n            ^\nparse_error: Missing '}'\n\n",
	  "event filter parse error: error: Missing '}'\n"
	  "  Command: CPU & CPUS{0\n                        ^\n" },
	{ EV(sched_switch), "CPU & CPUS{x}", -EINVAL,
	  "CPU & CPUS{x}\n             ^\nparse_error: Invalid cpulist\n\n",
	  "event filter parse error: error: Invalid cpulist\n"
	  "  Command: CPU & CPUS{x}\n                        ^\n" },
	{ EV(sched_process_fork), "parent_comm ~ \"ba*\" && child_pid > 100", 0, NULL, NULL },
	{ EV(sched_process_fork), "child_comm == \"bash\"", 0, NULL, NULL },
	{ EV(sched_process_fork), "child_comm < \"bash\"", -EINVAL,
	  "child_comm < \"bash\"\n              ^\nparse_error: Illegal operation for field type\n\n",
	  NULL },
	{ EV(sys_enter_openat), "dfd == -100", -EINVAL,
	  "dfd == -100\n        ^\nparse_error: Illegal integer value\n\n",
	  "event filter parse error: error: Illegal integer value\n"
	  "  Command: dfd == -100\n                   ^\n" },
	{ EV(sys_enter_openat), "flags & 0x40", 0, NULL, NULL },
	{ EV(sys_enter_openat), "filename ~ \"/etc/*\"", 0, NULL, NULL },
	{ EV(sys_enter_openat), "__syscall_nr == 257", 0, NULL, NULL },
	/* 08-uprobes.txt */
	{ EV(refcap_add), "a < -3", 0, NULL, NULL },
	{ EV(refcap_greet), "name ~ \"wor*\"", 0, NULL, NULL },
	{ EV(refcap_greet), "name < \"x\"", -EINVAL,
	  "name < \"x\"\n        ^\nparse_error: Illegal operation for field type\n\n",
	  "event filter parse error: error: Illegal operation for field type\n"
	  "  Command: name < \"x\"\n                   ^\n" },
	{ EV(refcap_greet), "__probe_ip != 0", 0, NULL, NULL },
	{ EV(refcap_add), "b == 0x174876e800", 0, NULL, NULL },
};

/* The caller's strstrip(): trailing whitespace goes, leading stays. */
static char *strip(const char *s)
{
	char *d = strdup(s);
	size_t n = strlen(d);

	while (n && strchr(" \t\n\v\f\r", d[n - 1]))
		d[--n] = 0;
	return d;
}

static void check_case(const struct utrace_event_field *fields, unsigned int nr,
		       const char *expr0, int want, const char *text, const char *log)
{
	struct utrace__filter_error err;
	struct utrace__filter *f = (struct utrace__filter *)1;
	char *expr = strip(expr0);
	int ret;

	if (utrace__filter_is_clear(expr)) {   /* the caller clears instead */
		CHECK_INT(want, ==, 0);
		free(expr);
		return;
	}
	ret = utrace__filter_compile(expr, fields, nr, &f, &err);

	if (ret != want)
		TEST_FAIL("'%s': got %d (%s) want %d", expr, ret, err.msg, want);
	if (ret) {
		char *t = utrace__filter_error_text(expr, &err);
		char *l = utrace__filter_log_text(expr, &err);

		CHECK(f == NULL);
		CHECK_INT(err.err, ==, want);
		if (text)
			CHECK_STR(t, text);
		if (log)
			CHECK_STR(l, log);
		free(t);
		free(l);
	} else {
		CHECK(f != NULL);
		CHECK_INT(utrace__filter_nr_insns(f), >, 0);
	}
	utrace__filter_free(f);
	free(expr);
}

TEST(transcript_sched_switch)
{
	size_t i;

	for (i = 0; i < sizeof(sched_switch_cases) / sizeof(sched_switch_cases[0]); i++) {
		const struct tcase *t = &sched_switch_cases[i];

		check_case(EV(sched_switch), t->expr, t->err, t->text, t->log);
	}
}

TEST(transcript_other_events)
{
	size_t i;

	for (i = 0; i < sizeof(other_cases) / sizeof(other_cases[0]); i++) {
		const struct ecase *t = &other_cases[i];

		check_case(t->fields, t->nr, t->expr, t->err, t->text, t->log);
	}
}

/* The generated expressions of the transcript. */
TEST(transcript_long_expressions)
{
	char expr[1024], want[4096], log[4096];
	int n = 0, i;

	/* 40 "prev_pid == i ||" and a last predicate: accepted */
	for (i = 1; i <= 40; i++)
		n += snprintf(expr + n, sizeof(expr) - (size_t)n, "prev_pid == %d || ", i);
	snprintf(expr + n, sizeof(expr) - (size_t)n, " prev_pid == 0");
	check_case(EV(sched_switch), expr, 0, NULL, NULL);

	/* 'prev_pid == $(seq 1 200)' in single quotes: the text is literal */
	check_case(EV(sched_switch), "prev_pid == $(seq 1 200)", -EINVAL, NULL, NULL);

	/* a 300-character string: the caret at the end of the text */
	n = snprintf(expr, sizeof(expr), "prev_comm == \"");
	for (i = 0; i < 300; i++)
		expr[n++] = 'x';
	snprintf(expr + n, sizeof(expr) - (size_t)n, "\"");
	snprintf(want, sizeof(want), "%s\n%315s^\nparse_error: Operand too long\n\n", expr, "");
	check_case(EV(sched_switch), expr, -EINVAL, want, NULL);

	/* a 30-digit number */
	snprintf(expr, sizeof(expr), "prev_pid == 111111111111111111111111111111");
	snprintf(want, sizeof(want), "%s\n%42s^\nparse_error: Operand too long\n\n", expr, "");
	snprintf(log, sizeof(log), "event filter parse error: error: Operand too long\n"
		 "  Command: %s\n%54s^\n", expr, "");
	check_case(EV(sched_switch), expr, -EINVAL, want, log);
}

TEST(transcript_clear)
{
	CHECK(utrace__filter_is_clear("0"));
	CHECK(utrace__filter_is_clear(" 0"));
	CHECK(utrace__filter_is_clear("0\n"));
	CHECK(utrace__filter_is_clear("\t 0 \n\n"));
	CHECK(!utrace__filter_is_clear("00"));
	CHECK(!utrace__filter_is_clear(""));
	CHECK(!utrace__filter_is_clear("0 0"));
	CHECK(!utrace__filter_is_clear("prev_pid == 0"));
}

/* A subsystem write: the control layer reports each event the filter
 * does not compile for with this error at position 0. */
TEST(transcript_subsystem_error_text)
{
	struct utrace__filter_error err = { -EINVAL, 0, UTRACE__FILTER_MSG_BAD_SUBSYS };
	char *t = utrace__filter_error_text("prev_pid == 0", &err);
	char *l = utrace__filter_log_text("prev_pid ==", &err);

	CHECK_STR(t, "prev_pid == 0\n^\nparse_error: Couldn't find or set field in one of "
		  "a subsystem's events\n\n");
	CHECK_STR(l, "event filter parse error: error: Couldn't find or set field in one of "
		  "a subsystem's events\n  Command: prev_pid ==\n           ^\n");
	free(t);
	free(l);
}

/* ------------------------------------------------------------------ */
/* Semantics.                                                          */

static struct utrace__filter *compile_ok(const struct utrace_event_field *fields,
					 unsigned int nr, const char *expr)
{
	struct utrace__filter_error err;
	struct utrace__filter *f = NULL;
	int ret = utrace__filter_compile(expr, fields, nr, &f, &err);

	if (ret)
		TEST_FAIL("'%s' does not compile: %d %s at %d", expr, ret, err.msg, err.pos);
	return f;
}

static int compile_err(const struct utrace_event_field *fields, unsigned int nr,
		       const char *expr, const char *msg)
{
	struct utrace__filter_error err;
	struct utrace__filter *f = NULL;
	int ret = utrace__filter_compile(expr, fields, nr, &f, &err);

	if (!ret)
		TEST_FAIL("'%s' compiles", expr);
	if (msg)
		CHECK_STR(err.msg, msg);
	return ret;
}

/* Runs 'expr' on a copy of the record in a buffer of exactly 'size'
 * bytes, so that ASan sees any read past it. */
static bool run(const struct utrace_event_field *fields, unsigned int nr, const char *expr,
		const void *rec, unsigned int size, const struct utrace__filter_ctx *ctx)
{
	struct utrace__filter *f = compile_ok(fields, nr, expr);
	void *copy = malloc(size ? size : 1);
	bool r;

	memcpy(copy, rec, size);
	r = utrace__filter_match(f, copy, size, ctx);
	free(copy);
	utrace__filter_free(f);
	return r;
}

#define ALL(expr, rec) run(all_fields, ALL_NR, expr, &(rec), sizeof(rec), NULL)
#define YES(expr, rec) do { if (!ALL(expr, rec)) TEST_FAIL("'%s' should match", expr); } while (0)
#define NO(expr, rec) do { if (ALL(expr, rec)) TEST_FAIL("'%s' should not match", expr); } while (0)

TEST(numbers_every_size_and_sign)
{
	struct all_rec r = { 0 };

	r.u8 = 200; r.s8 = -100; r.u16 = 60000; r.s16 = -30000;
	r.u32 = 4000000000u; r.s32 = -2000000000; r.u64 = UINT64_MAX; r.s64 = INT64_MIN;
	r.b = 1;

	YES("u8 == 200", r); NO("u8 == 201", r); YES("u8 > 100", r); YES("u8 >= 200", r);
	NO("u8 < 200", r); YES("u8 <= 200", r); YES("u8 != 7", r);
	YES("s8 < 0", r); YES("s8 == -100", r); NO("s8 > 0", r); YES("s8 >= -100", r);
	YES("u16 > 50000", r); YES("s16 < -29999", r); NO("s16 > 0", r);
	YES("u32 > 3000000000", r); YES("s32 < -1999999999", r);
	YES("u64 == 18446744073709551615", r); YES("u64 > 0", r);
	YES("u64 == 0xffffffffffffffff", r);
	YES("s64 == -9223372036854775808", r); YES("s64 < 0", r);
	YES("s64 <= -9223372036854775808", r); NO("s64 < -9223372036854775807 && s64 > 0", r);
	YES("b == 1", r);
	compile_err(all_fields, ALL_NR, "b", "Invalid operator");
	/* as the kernel: the value is cast to the field's type */
	YES("u8 == 456", r);            /* 456 & 0xff == 200 */
	YES("s8 == 156", r);            /* equality compares bits */
	NO("s8 < 156", r);              /* (s8)156 is -100 */
	YES("s8 <= 156", r);
}

/*
 * One numeric predicate takes a shortcut past the interpreter (the field
 * widened to 64 bits, one compare); "P && P" is the same predicate run by
 * the interpreter.  Both must agree on every size, sign, operator and
 * value, negated or not, with literals in and out of the field's range.
 */
TEST(numbers_single_predicate_shortcut)
{
	static const char *const fields[] = { "u8", "s8", "u16", "s16", "u32", "s32",
					      "u64", "s64", "common_pid", "b" };
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", "&" };
	static const long long lits[] = { 0, 1, -1, 2, 100, -100, 127, 128, -128, 255, 256,
					  32767, 32768, -32768, 65535, 65536, 2147483647LL,
					  -2147483648LL, 4294967295LL, 4294967296LL,
					  9223372036854775807LL, 0x5a5a5a5a5a5aLL };
	unsigned long long seed = 88172645463325252ULL;
	unsigned int n, fi, oi, li, neg;

	for (n = 0; n < 40; n++) {
		struct all_rec r = { 0 };

		seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
		memcpy(&r.u8, &seed, 8);           /* u8..s16, b, c3 */
		r.u32 = (uint32_t)(seed >> 3); r.s32 = (int32_t)(seed >> 5);
		r.u64 = seed * 3; r.s64 = (int64_t)(seed * 7);
		r.common_pid = (int32_t)(seed >> 11);
		if (n % 4 == 0) { r.u8 = 128; r.s8 = -128; r.s32 = -1; r.s64 = -1; }
		for (fi = 0; fi < sizeof(fields) / sizeof(*fields); fi++)
			for (oi = 0; oi < sizeof(ops) / sizeof(*ops); oi++)
				for (li = 0; li < sizeof(lits) / sizeof(*lits); li++)
					for (neg = 0; neg < 2; neg++) {
						char one[100], two[256];
						struct utrace__filter *f = NULL;
						struct utrace__filter_error err;

						snprintf(one, sizeof(one), "%s%s %s %lld",
							 neg ? "!" : "", fields[fi], ops[oi], lits[li]);
						if (utrace__filter_compile(one, all_fields, ALL_NR,
									   &f, &err))
							continue;   /* out of range, as the kernel */
						utrace__filter_free(f);
						snprintf(two, sizeof(two), "%s && %s", one, one);
						if (ALL(one, r) != ALL(two, r))
							TEST_FAIL("'%s' and '%s' disagree (record %u)",
								  one, two, n);
					}
	}
}

TEST(numbers_literals)
{
	struct all_rec r = { 0 };

	r.u32 = 8; r.s32 = -16; r.u16 = 0x1f;
	YES("u32 == 010", r);
	YES("u32 == 8", r);
	YES("u32 == 0x8", r);
	YES("u16 == 0X1f", r);
	YES("u16 == 0x1F", r);
	YES("s32 == -16", r);
	YES("s32 == -0x10", r);
	YES("s32 == -020", r);
	YES("u32 == 4294967304", r);    /* 2^32 + 8, cast to u32 */
	compile_err(EV(sched_switch), "prev_pid == 09", "Illegal integer value");
	compile_err(EV(sched_switch), "prev_pid == 0x", "Illegal integer value");
	compile_err(EV(sched_switch), "prev_pid == -", "Illegal integer value");
	compile_err(EV(sched_switch), "prev_pid == 0xg", "Illegal integer value");
	compile_err(all_fields, ALL_NR, "u8 == -1", "Illegal integer value");
	compile_err(all_fields, ALL_NR, "s64 == 9223372036854775808", "Illegal integer value");
	compile_err(all_fields, ALL_NR, "s64 == -9223372036854775809", "Illegal integer value");
	compile_err(all_fields, ALL_NR, "u64 == 18446744073709551616", "Illegal integer value");
	compile_err(all_fields, ALL_NR, "u64 == 123456789012345678901234", "Operand too long");
	compile_err(all_fields, ALL_NR, "u64 == 12345678901234567890123", "Illegal integer value");
}

TEST(numbers_band)
{
	struct all_rec r = { 0 };

	r.u32 = 0x41; r.s64 = -1; r.u8 = 0x80;
	YES("u32 & 0x40", r); YES("u32 & 1", r); NO("u32 & 2", r);
	YES("s64 & 0x4000000000000000", r);
	compile_err(all_fields, ALL_NR, "s64 & 0x8000000000000000", "Illegal integer value");
	YES("u8 & 0x80", r); NO("u8 & 0x7f", r);
	YES("!(u32 & 2)", r);
}

TEST(numbers_sched_switch)
{
	unsigned char rec[64] = { 0 };
	int32_t pid = 0, prio = -5;
	int64_t state = 2;

	memcpy(rec + 24, &pid, 4);
	memcpy(rec + 28, &prio, 4);
	memcpy(rec + 32, &state, 8);
	CHECK(run(EV(sched_switch), "prev_pid == 0", rec, 64, NULL));
	CHECK(run(EV(sched_switch), "prev_pid == 4294967296", rec, 64, NULL));
	CHECK(run(EV(sched_switch), "prev_prio < 100", rec, 64, NULL));
	CHECK(run(EV(sched_switch), "prev_prio < 0", rec, 64, NULL));
	CHECK(run(EV(sched_switch), "prev_state & 0x2", rec, 64, NULL));
	CHECK(!run(EV(sched_switch), "prev_state & 1", rec, 64, NULL));
	pid = 7;
	memcpy(rec + 24, &pid, 4);
	CHECK(run(EV(sched_switch), "!prev_pid == 0", rec, 64, NULL));
}

TEST(numbers_uprobe_add)
{
	unsigned char rec[28] = { 0 };
	int32_t a = -5;
	int64_t b = 100000000000;

	memcpy(rec + 16, &a, 4);
	memcpy(rec + 20, &b, 8);       /* unaligned, as the uprobe lays it out */
	CHECK(run(EV(refcap_add), "a < -3", rec, 28, NULL));
	CHECK(run(EV(refcap_add), "b == 0x174876e800", rec, 28, NULL));
	a = -3;
	memcpy(rec + 16, &a, 4);
	CHECK(!run(EV(refcap_add), "a < -3", rec, 28, NULL));
}

/* Fields whose size is not 1, 2, 4 or 8 never match (the kernel picks no
 * comparison for them); a non-char dynamic array compares its
 * __data_loc word; a non-char array of 8 bytes compares as a u64. */
TEST(numbers_odd_fields)
{
	struct all_rec r = { 0 };

	r.ints3[0] = 1;
	NO("ints3 == 1", r);
	NO("ints3 != 1", r);
	NO("ints3 & 1", r);
	r.loc_ints = 0x00040000 | 92;
	YES("ints == 0x4005c", r);
	r.ints2[0] = 1;
	r.ints2[1] = 0;
	YES("ints2 == 1", r);
	NO("stacktrace == 1", r);
	compile_err(all_fields, ALL_NR, "stacktrace ~ \"x\"", "Expecting numeric field");
}

TEST(strings_char_array)
{
	struct all_rec r = { 0 };

	memcpy(r.arr, "swapper", 8);
	YES("arr == \"swapper\"", r);
	YES("arr == 'swapper'", r);
	NO("arr == \"swappe\"", r);
	NO("arr == \"swapperx\"", r);
	YES("arr != \"bash\"", r);
	NO("arr != \"swapper\"", r);
	YES("arr ~ \"swap*\"", r);
	YES("arr ~ \"*pper\"", r);
	YES("arr ~ \"*app*\"", r);
	NO("arr ~ \"*xyz*\"", r);
	YES("arr ~ \"s?app[a-z]r\"", r);
	YES("arr ~ \"s*r\"", r);
	NO("arr ~ \"s*x\"", r);
	YES("arr ~ \"[!a-r]wapper\"", r);
	NO("arr ~ \"[!s]wapper\"", r);
	YES("arr ~ \"*\"", r);
	YES("arr ~ \"**\"", r);
	YES("arr ~ \"!bash\"", r);       /* a leading '!' negates a glob */
	NO("arr ~ \"!swap*\"", r);
	NO("arr == \"\"", r);
	/* full 8 bytes, no NUL: the string is the whole array */
	memcpy(r.arr, "abcdefgh", 8);
	YES("arr == \"abcdefgh\"", r);
	NO("arr == \"abcdefghi\"", r);
	YES("arr ~ \"*fgh\"", r);
	YES("arr ~ \"abcdefg?\"", r);
	NO("arr ~ \"abcdefgh?\"", r);
	memset(r.arr, 0, 8);
	YES("arr == \"\"", r);
	YES("arr ~ \"*\"", r);
	NO("arr ~ \"?\"", r);
	/* a leading digit is matched literally, as the kernel does */
	memcpy(r.arr, "1*", 3);
	YES("arr ~ \"1*\"", r);
	memcpy(r.arr, "12", 3);
	NO("arr ~ \"1*\"", r);
	/* backslash quotes, a malformed class is literal */
	memcpy(r.arr, "a*b", 4);
	YES("arr ~ \"a\\*b\"", r);
	NO("arr ~ \"a\\*c\"", r);
	memcpy(r.arr, "a[b", 4);
	YES("arr ~ \"a[b\"", r);
	memcpy(r.arr, "]", 2);
	YES("arr ~ \"[]]\"", r);
	memcpy(r.arr, "-", 2);
	YES("arr ~ \"[a-]\"", r);
	compile_err(all_fields, ALL_NR, "arr < \"a\"", "Illegal operation for field type");
	compile_err(all_fields, ALL_NR, "arr & 1", "Expecting string field");
	compile_err(all_fields, ALL_NR, "arr == abc", "Invalid value (did you forget quotes)?");
	compile_err(all_fields, ALL_NR, "arr == CPUS{1}", "Illegal operation for field type");
}

/* ftrace:print's char buf[] (a flexible array, size 0): the text to the
 * record's end, NUL-terminated there (trace_marker: kernel 6.18 matches
 * `echo -n stop` with buf == "stop", not `echo stop`). */
static const struct utrace_event_field print_fields[] = {
	{ "unsigned long", "ip", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "buf", 16, 0, 0, UTRACE_FIELD_FLEX, 0 },
};

static bool print_match(const char *expr, const char *text, bool nul)
{
	unsigned char rec[64] = { 0 };
	size_t n = strlen(text);

	memcpy(rec + 16, text, n);
	return run(print_fields, 2, expr, rec, (unsigned int)(16 + n + nul), NULL);
}

TEST(strings_flexible_array)
{
	CHECK(print_match("buf == \"stop\"", "stop", true));
	CHECK(!print_match("buf == \"stop\"", "stop\n", true));
	CHECK(print_match("buf ~ \"sto*\"", "stop\n", true));
	CHECK(print_match("buf != \"start\"", "stop", true));
	CHECK(!print_match("buf == \"sto\"", "stop", true));
	/* no NUL: the record's end ends the text (ASan: nothing past it) */
	CHECK(print_match("buf == \"stop\"", "stop", false));
	CHECK(!print_match("buf == \"stopx\"", "stop", false));
	CHECK(print_match("buf == \"\"", "", false));
	compile_err(print_fields, 2, "buf < \"a\"", "Illegal operation for field type");
	compile_err(print_fields, 2, "buf == abc", "Invalid value (did you forget quotes)?");
}

TEST(strings_glob_backtracking)
{
	struct all_rec r = { 0 };

	set_str(&r, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 31);
	YES("str ~ \"*a*a*a*a*a*b\"", r);
	NO("str ~ \"*a*a*a*a*a*c\"", r);
	YES("str ~ \"a*?b\"", r);
	YES("str ~ \"*[b-c]\"", r);
	set_str(&r, "mississippi", 12);
	YES("str ~ \"m*iss*ppi\"", r);
	YES("str ~ \"*sip*\"", r);
	NO("str ~ \"m*iss*ppix\"", r);
}

TEST(strings_data_loc)
{
	struct all_rec r = { 0 };

	set_str(&r, "bash", 5);
	YES("str == \"bash\"", r);
	YES("str ~ \"ba*\"", r);
	YES("str ~ \"*sh\"", r);
	YES("str ~ \"b?sh\"", r);
	NO("str == \"bas\"", r);
	YES("str != \"bas\"", r);
	/* without a NUL, the length bounds it */
	set_str(&r, "bashXXXX", 4);
	YES("str == \"bash\"", r);
	/* an empty string */
	set_str(&r, "", 0);
	YES("str == \"\"", r);
	NO("str ~ \"?*\"", r);
	compile_err(all_fields, ALL_NR, "str > \"a\"", "Illegal operation for field type");
	compile_err(all_fields, ALL_NR, "str == 1", "Expecting string field");
}

/* The uprobe 'greet' string and sched_process_fork's two strings. */
TEST(strings_transcript_events)
{
	unsigned char rec[64] = { 0 };
	uint32_t loc = 6u << 16 | 24;
	uint32_t loc2 = 5u << 16 | 30;
	int32_t pid = 200;

	memcpy(rec + 16, &loc, 4);
	memcpy(rec + 24, "world", 6);
	CHECK(run(EV(refcap_greet), "name ~ \"wor*\"", rec, 30, NULL));
	memcpy(rec + 24, "other", 6);
	CHECK(!run(EV(refcap_greet), "name ~ \"wor*\"", rec, 30, NULL));

	memset(rec, 0, sizeof(rec));
	loc = 5u << 16 | 24;
	memcpy(rec + 8, &loc, 4);
	memcpy(rec + 16, &loc2, 4);
	memcpy(rec + 20, &pid, 4);
	memcpy(rec + 24, "bash", 5);
	memcpy(rec + 30, "bash", 5);
	CHECK(run(EV(sched_process_fork), "parent_comm ~ \"ba*\" && child_pid > 100", rec, 35, NULL));
	CHECK(run(EV(sched_process_fork), "child_comm == \"bash\"", rec, 35, NULL));
	CHECK(!run(EV(sched_process_fork), "child_comm == \"bash\"", rec, 34, NULL));
}

/* A const char * field: compiled as the kernel does, never dereferenced,
 * never true (the kernel's result for a pointer it cannot read). */
TEST(strings_pointer_field)
{
	struct all_rec r = { 0 };
	static const char text[] = "/etc/passwd";

	r.ptr = (uint64_t)(uintptr_t)text;
	NO("ptr ~ \"/etc/*\"", r);
	NO("ptr == \"/etc/passwd\"", r);
	NO("ptr != \"/etc/passwd\"", r);
	NO("ptr != \"x\"", r);
	YES("ptr != \"x\" || u8 == 0", r);
	compile_err(all_fields, ALL_NR, "ptr == 0", "Expecting string field");
	compile_err(all_fields, ALL_NR, "ptr < \"a\"", "Illegal operation for field type");
	r.ptr = 1;  /* a bogus pointer must not crash */
	NO("ptr == \"x\"", r);
	NO("ptr.ustring == \"x\"", r);
}

TEST(comm_and_cpu)
{
	struct all_rec r = { 0 };
	struct utrace__filter_ctx ctx = { 3, "bash" };
	const char full[16] = "0123456789abcdef";  /* 16 bytes, no NUL */
	struct utrace__filter_ctx ctx16 = { 0, full };

#define CTX(expr, c) run(all_fields, ALL_NR, expr, &r, sizeof(r), c)
	CHECK(CTX("COMM == \"bash\"", &ctx));
	CHECK(CTX("comm ~ \"ba*\"", &ctx));
	CHECK(CTX("comm ~ \"*sh\"", &ctx));
	CHECK(!CTX("comm != \"bash\"", &ctx));
	CHECK(CTX("CPU == 3", &ctx));
	CHECK(CTX("cpu == 3", &ctx));
	CHECK(CTX("common_cpu == 3", &ctx));
	CHECK(CTX("cpu > 2 && cpu < 4 && cpu >= 3 && cpu <= 3 && cpu != 2", &ctx));
	CHECK(CTX("CPU & 1", &ctx));
	CHECK(!CTX("CPU & 4", &ctx));
	CHECK(CTX("CPU > -1", &ctx));
	CHECK(CTX("comm == \"0123456789abcdef\"", &ctx16));
	CHECK(!CTX("comm == \"0123456789abcde\"", &ctx16));
	/* no context: CPU 0 and an empty name */
	CHECK(CTX("cpu == 0 && comm == \"\"", NULL));
	compile_err(all_fields, ALL_NR, "COMM == 1", "Expecting string field");
	compile_err(all_fields, ALL_NR, "COMM < \"a\"", "Illegal operation for field type");
	compile_err(all_fields, ALL_NR, "CPU == \"1\"", "Expecting numeric field");
	compile_err(all_fields, ALL_NR, "CPU ~ 1", "Illegal operation for field type");
	/* an event's own field shadows the generic one (this one has no
	 * usable size, so it never matches) */
	ctx.cpu = 0;
	CHECK(run(all_fields, ALL_NR, "cpu == 0", &r, sizeof(r), &ctx));
	CHECK(!run(all_fields, ALL_NR + 1, "cpu == 0", &r, sizeof(r), &ctx));
#undef CTX
}

TEST(cpus_lists)
{
	struct all_rec r = { 0 };
	struct utrace__filter_ctx c0 = { 0, "" }, c2 = { 2, "" }, c5 = { 5, "" };

#define CTX(expr, c) run(all_fields, ALL_NR, expr, &r, sizeof(r), c)
	CHECK(CTX("CPU & CPUS{0}", &c0));
	CHECK(!CTX("CPU & CPUS{0}", &c2));
	CHECK(CTX("CPU == CPUS{2}", &c2));
	CHECK(CTX("CPU != CPUS{2}", &c0));
	/* a CPU never equals a list of several */
	CHECK(!CTX("cpu == CPUS{0-1}", &c0));
	CHECK(CTX("cpu != CPUS{0-1}", &c0));
	CHECK(CTX("cpu & CPUS{1-3}", &c2));
	CHECK(!CTX("cpu & CPUS{1-3}", &c0));
	CHECK(CTX("cpu & CPUS{0-7:2/4}", &c5));       /* 0,1,4,5 */
	CHECK(!CTX("cpu & CPUS{0-7:2/4}", &c2));
	CHECK(CTX("cpu & CPUS{1, 5}", &c5));
	CHECK(CTX("cpu & CPUS{all}", &c5));
	CHECK(CTX("cpu & CPUS{2-N}", &c5));
	CHECK(CTX("cpu & CPUS{,5,}", &c5));
	compile_err(all_fields, ALL_NR, "cpu & CPUS{3-1}", "Invalid cpulist");
	compile_err(all_fields, ALL_NR, "cpu & CPUS{1024}", "Invalid cpulist");
	compile_err(all_fields, ALL_NR, "cpu & CPUS{1-}", "Invalid cpulist");
	compile_err(all_fields, ALL_NR, "cpu & CPUS{0:1/2}", "Invalid cpulist");
	compile_err(all_fields, ALL_NR, "cpu & CPUS{}", "Invalid cpulist");
	compile_err(all_fields, ALL_NR, "cpu & CPUS(1)", "Missing '{'");
	compile_err(all_fields, ALL_NR, "cpu < CPUS{1}", "Illegal operation for field type");
	compile_err(all_fields, ALL_NR, "comm & CPUS{1}", "Illegal operation for field type");

	/* a number field holding a CPU number */
	r.u32 = 5;
	YES("u32 & CPUS{3,5}", r);
	YES("u32 == CPUS{5}", r);
	YES("u32 & CPUS{5}", r);
	NO("u32 == CPUS{3,5}", r);
	YES("u32 != CPUS{3,4}", r);
	r.u32 = 4;
	NO("u32 & CPUS{3,5}", r);
	r.u32 = 5000;                 /* not a CPU */
	NO("u32 & CPUS{3,5}", r);
	NO("u32 != CPUS{3,5}", r);
	YES("u32 != CPUS{3}", r);
	r.u8 = 1;
	YES("u8 & CPUS{0-1}", r);
	YES("u8 != CPUS{0-1}", r);
#undef CTX
}

/* A function dlsym() does not see (static, in a PIE test program): the
 * runtime finds it in the program's ELF symbol table. */
__attribute__((noinline, used)) static int filter_static_target(int x)
{
	__asm__ volatile("" : : : "memory");
	return x * 3 + 1;
}

TEST(function_field_static)
{
	struct all_rec r = { 0 };
	int (*volatile fn)(int) = filter_static_target;

	utrace__init();                 /* the runtime's symbol lookup */
	CHECK(dlsym(RTLD_DEFAULT, "filter_static_target") == NULL);
	CHECK(fn(1) == 4);
	r.ip = (uint64_t)(uintptr_t)fn + 2;
	YES("ip.function == filter_static_target", r);
	NO("ip.function != filter_static_target", r);
	r.ip = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "qsort");
	NO("ip.function == filter_static_target", r);
}

TEST(function_field)
{
	struct all_rec r = { 0 };
	void *fn = dlsym(RTLD_DEFAULT, "qsort");
	char expr[64];

	CHECK(fn != NULL);
	r.ip = (uint64_t)(uintptr_t)fn + 1;     /* inside the function */
	YES("ip.function == qsort", r);
	NO("ip.function != qsort", r);
	NO("ip.function == malloc", r);
	snprintf(expr, sizeof(expr), "ip.function == 0x%llx", (unsigned long long)r.ip);
	YES(expr, r);
	r.ip = 0;
	NO("ip.function == qsort", r);
	YES("ip.function != qsort", r);
	/* an IFUNC resolves to an implementation without a symbol of its
	 * own: at least its entry address matches */
	r.ip = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "strlen");
	YES("ip.function == strlen", r);
	compile_err(all_fields, ALL_NR, "ip.function == no_such_function_xyz", "Function not found");
	compile_err(all_fields, ALL_NR, "ip.function < strlen", "Invalid operator");
	compile_err(all_fields, ALL_NR, "u32.function == strlen", "Illegal operation for field type");
	compile_err(all_fields, ALL_NR, "ip.function == 0x1", "Function not found");
	compile_err(all_fields, ALL_NR, "ip.function == 0xzz", "Invalid value (did you forget quotes)?");
}

TEST(logic_precedence_and_parentheses)
{
	struct all_rec r = { 0 };

	r.u8 = 1; r.s8 = 0; r.u16 = 1;
	/* a=1 b=0 c=1 */
	YES("u8 == 1 || s8 == 1 && u16 == 0", r);     /* a || (b && c') */
	NO("(u8 == 1 || s8 == 1) && u16 == 0", r);
	YES("s8 == 1 && u16 == 0 || u8 == 1", r);
	NO("!(u8 == 1 || s8 == 1)", r);
	YES("!(u8 == 0 || s8 == 1)", r);
	YES("!(u8 == 0 && s8 == 0)", r);
	YES("!!(u8 == 1)", r);
	YES("! ! u8 == 1", r);
	YES("!(!(u8 == 1))", r);
	YES("((((u8 == 1))))", r);
	YES("u8==1&&s8==0", r);
	NO("!(u8 == 1 && !(s8 == 1 || u16 == 0))||s8==1", r);
	YES("u8 != 0 && (s8 == 1 || !(u16 == 0 || u8 == 0))", r);
}

/* "a || <unreadable string>": the string is read only when 'a' is false,
 * and an unreadable one fails the record, so the result shows whether the
 * second predicate ran. */
TEST(logic_short_circuit)
{
	struct all_rec r = { 0 };

	r.loc_str = 10u << 16 | 155;   /* 155 + 10 > sizeof(r) */
	r.u8 = 1;
	YES("u8 == 1 || str == \"x\"", r);
	NO("u8 == 0 || str == \"x\"", r);
	NO("u8 == 0 || str != \"x\"", r);   /* a bad record fails, != or not */
	NO("u8 == 0 && str != \"x\"", r);
	NO("u8 == 1 && str != \"x\"", r);
	YES("!(u8 == 0 && str == \"x\")", r);
}

TEST(truncated_records)
{
	struct all_rec r = { 0 };
	struct utrace__filter *f;

	r.s64 = 5;
	f = compile_ok(all_fields, ALL_NR, "s64 == 5");
	CHECK(utrace__filter_match(f, &r, sizeof(r), NULL));
	CHECK(utrace__filter_match(f, &r, 40, NULL));
	CHECK(!utrace__filter_match(f, &r, 39, NULL));
	CHECK(!utrace__filter_match(f, &r, 0, NULL));
	utrace__filter_free(f);

	/* a filter on the writer's context reads nothing from the record */
	f = compile_ok(all_fields, ALL_NR, "CPU == 0");
	CHECK(utrace__filter_match(f, NULL, 0, NULL));
	utrace__filter_free(f);

	/* a __data_loc string running past the record */
	set_str(&r, "abc", 4);
	f = compile_ok(all_fields, ALL_NR, "str == \"abc\"");
	CHECK(utrace__filter_match(f, &r, sizeof(r), NULL));
	CHECK(!utrace__filter_match(f, &r, 95, NULL));
	CHECK(utrace__filter_match(f, &r, 96, NULL));
	r.loc_str = 0xffffffff;
	CHECK(!utrace__filter_match(f, &r, sizeof(r), NULL));
	utrace__filter_free(f);

	CHECK(utrace__filter_match(NULL, NULL, 0, NULL));
}

/* A one-predicate numeric filter is one instruction. */
TEST(program_size)
{
	struct utrace__filter *f = compile_ok(EV(sched_switch), "prev_pid == 0");

	CHECK_INT(utrace__filter_nr_insns(f), ==, 1);
	utrace__filter_free(f);
	f = compile_ok(EV(sched_switch), "(prev_pid == 0 || next_pid == 0) && !(prev_prio > 10)");
	CHECK_INT(utrace__filter_nr_insns(f), ==, 3);
	utrace__filter_free(f);
}

/* ------------------------------------------------------------------ */
/* && || ! ( ) against a tree evaluator, on every assignment of 6 bits. */

struct node {
	int kind;   /* 0 leaf, 1 and, 2 or, 3 not */
	int leaf;
	struct node *l, *r;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

static struct node *gen(int depth, struct node *pool, int *used)
{
	struct node *n = &pool[(*used)++];
	int k = depth <= 0 ? 0 : (int)(rnd() % 5);

	n->kind = k == 4 ? 3 : k == 3 ? 0 : k;
	n->leaf = (int)(rnd() % 6);
	if (n->kind == 1 || n->kind == 2) {
		n->l = gen(depth - 1, pool, used);
		n->r = gen(depth - 1, pool, used);
	} else if (n->kind == 3) {
		n->l = gen(depth - 1, pool, used);
	}
	return n;
}

static bool eval_tree(const struct node *n, unsigned int bits)
{
	switch (n->kind) {
	case 0: return n->leaf & 1 ? !(bits >> n->leaf & 1) : (bits >> n->leaf & 1);
	case 1: return eval_tree(n->l, bits) && eval_tree(n->r, bits);
	case 2: return eval_tree(n->l, bits) || eval_tree(n->r, bits);
	default: return !eval_tree(n->l, bits);
	}
}

static const char *const leaves[6] = {
	"u8 == 1", "s8 != 1", "u16 & 1", "s16 == 0", "u32 >= 1", "s32 < 1",
};

static void sp(char **p)
{
	int k = (int)(rnd() % 3);

	while (k--)
		*(*p)++ = ' ';
}

/* Parentheses where the grammar needs them, and sometimes where not. */
static void render(const struct node *n, char **p, int parent)
{
	bool paren = (n->kind == 2 && parent == 1) || (n->kind != 0 && parent == 3) ||
		     rnd() % 4 == 0;

	if (paren) {
		*(*p)++ = '(';
		sp(p);
	}
	switch (n->kind) {
	case 0:
		*p += sprintf(*p, "%s", leaves[n->leaf]);
		break;
	case 1:
	case 2:
		render(n->l, p, n->kind);
		sp(p);
		*p += sprintf(*p, "%s", n->kind == 1 ? "&&" : "||");
		sp(p);
		render(n->r, p, n->kind);
		break;
	default:
		*(*p)++ = '!';
		sp(p);
		render(n->l, p, 3);
		break;
	}
	if (paren) {
		sp(p);
		*(*p)++ = ')';
	}
	**p = 0;
}

TEST(logic_against_tree_evaluator)
{
	static struct node pool[4096];
	static char expr[65536];
	int iter;

	for (iter = 0; iter < 3000; iter++) {
		int used = 0;
		struct node *t = gen(1 + (int)(rnd() % 7), pool, &used);
		struct utrace__filter *f;
		char *p = expr;
		unsigned int bits;

		render(t, &p, 0);
		if (rnd() % 8 == 0) {  /* a trailing operator is refused */
			struct utrace__filter_error err;

			strcpy(p, rnd() % 2 ? " &&" : " || !");
			f = NULL;
			CHECK_INT(utrace__filter_compile(expr, all_fields, ALL_NR, &f, &err), ==, -EINVAL);
			CHECK_STR(err.msg, "Meaningless filter expression");
			CHECK_INT(err.pos, ==, (int)strlen(expr));
			continue;
		}
		f = compile_ok(all_fields, ALL_NR, expr);
		for (bits = 0; bits < 64; bits++) {
			struct all_rec r = { 0 };
			bool want = eval_tree(t, bits), got;

			r.u8 = bits & 1; r.s8 = bits >> 1 & 1; r.u16 = bits >> 2 & 1;
			r.s16 = bits >> 3 & 1; r.u32 = bits >> 4 & 1; r.s32 = bits >> 5 & 1;
			got = utrace__filter_match(f, &r, sizeof(r), NULL);
			if (got != want)
				TEST_FAIL("'%s' bits %#x: got %d want %d", expr, bits, got, want);
		}
		CHECK_INT(utrace__filter_nr_insns(f), <=, used);
		utrace__filter_free(f);
	}
}

/* ------------------------------------------------------------------ */
/* Robustness: mutated and random expressions never crash, and whatever
 * compiles runs on records of every length without reading past them. */

static const char *const seeds[] = {
	"prev_pid == 0 && (next_pid == 1 || next_pid == 2) || !(prev_prio > 10)",
	"u8 == 1 || s8 != 1 && u16 & 1", "str ~ \"a*[b-d]?\\\\x\"", "arr == 'x'",
	"cpu & CPUS{0-3:1/2,N}", "comm ~ \"!*sh\"", "ints == 1", "ptr ~ \"x\"",
	"ip.function == strlen", "s64 < -9223372036854775808", "((u8 == 1))",
	"!(!(u32 >= 0x10) || c3 == \"a\")", "COMM != \"\" && CPU >= 0",
};

static const char alphabet[] = "()!&|=<>~\"' *?[]\\-{}CPUS0123456789abxu_N,:/.";

static bool fuzz_one(const char *expr)
{
	struct utrace__filter_error err;
	struct utrace__filter *f = NULL;
	int ret = utrace__filter_compile(expr, all_fields, ALL_NR, &f, &err);

	if (ret) {
		char *t = utrace__filter_error_text(expr, &err);
		char *l = utrace__filter_log_text(expr, &err);

		CHECK(f == NULL && t && l && err.err == ret && err.pos >= 0);
		CHECK(ret == -EINVAL || ret == -EPERM || ret == -ENOENT || ret == -ESRCH);
		free(t);
		free(l);
		return false;
	}
	for (unsigned int size = 0; size <= sizeof(struct all_rec); size += 1 + rnd() % 16) {
		unsigned char *rec = malloc(size ? size : 1);
		struct utrace__filter_ctx ctx = { rnd() % 8, "fuzz" };
		unsigned int i;

		for (i = 0; i < size; i++)
			rec[i] = (unsigned char)rnd();
		if (size >= 52 && rnd() % 2) {
			uint32_t loc = (rnd() % 32) << 16 | (rnd() % (size + 8));

			memcpy(rec + 48, &loc, 4);
		}
		(void)utrace__filter_match(f, rec, size, &ctx);
		free(rec);
	}
	utrace__filter_free(f);
	return true;
}

TEST(fuzz_mutations)
{
	char buf[512];
	int iter, compiled = 0;

	for (iter = 0; iter < 40000; iter++) {
		const char *seed = seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))];
		size_t n = strlen(seed), k;
		int edits = 1 + (int)(rnd() % 4);

		if (iter % 3 == 0) {
			const struct tcase *t = &sched_switch_cases[rnd() %
				(sizeof(sched_switch_cases) / sizeof(sched_switch_cases[0]))];

			seed = t->expr;
			n = strlen(seed);
		}
		memcpy(buf, seed, n + 1);
		while (edits--) {
			k = n ? rnd() % (n + 1) : 0;
			switch (rnd() % 3) {
			case 0:   /* replace */
				if (k < n)
					buf[k] = alphabet[rnd() % (sizeof(alphabet) - 1)];
				break;
			case 1:   /* insert */
				if (n + 1 < sizeof(buf) - 1) {
					memmove(buf + k + 1, buf + k, n - k + 1);
					buf[k] = alphabet[rnd() % (sizeof(alphabet) - 1)];
					n++;
				}
				break;
			default:  /* delete */
				if (k < n) {
					memmove(buf + k, buf + k + 1, n - k);
					n--;
				}
				break;
			}
		}
		compiled += fuzz_one(buf);
	}
	CHECK_INT(compiled, >, 1000);   /* the evaluator got exercised too */
}

TEST(fuzz_random_tokens)
{
	static const char *const tokens[] = {
		"u8", "s64", "str", "arr", "ptr", "cpu", "COMM", "ints", "ints3", "c3",
		"==", "!=", "<", "<=", ">", ">=", "&", "~", "&&", "||", "!", "(", ")",
		"1", "-1", "0x10", "\"a*\"", "'b?'", "\"[x\"", "CPUS{1}", "CPUS{0-2}",
		" ", "  ", "\"", "'", "{", "}", ".function", ".ustring", "\t", "\xc3\xa9",
	};
	char buf[512];
	int iter;

	for (iter = 0; iter < 40000; iter++) {
		size_t n = 0;
		int k = (int)(rnd() % 24);

		while (k-- > 0) {
			const char *t = tokens[rnd() % (sizeof(tokens) / sizeof(tokens[0]))];
			size_t l = strlen(t);

			if (n + l + 1 >= sizeof(buf))
				break;
			memcpy(buf + n, t, l);
			n += l;
		}
		buf[n] = 0;
		fuzz_one(buf);
	}
}

/* Deep nesting and many predicates. */
TEST(fuzz_large)
{
	char *buf = malloc(1 << 16);
	size_t n = 0;
	int i;

	for (i = 0; i < 2000; i++)
		buf[n++] = '(';
	n += (size_t)sprintf(buf + n, "u8 == 1");
	for (i = 0; i < 2000; i++)
		buf[n++] = ')';
	buf[n] = 0;
	CHECK(fuzz_one(buf));
	n = 0;
	for (i = 0; i < 3000; i++)
		n += (size_t)sprintf(buf + n, "%su8 == %d", i ? (i % 2 ? " || " : " && ") : "", i % 3);
	CHECK(fuzz_one(buf));
	free(buf);
}

/*
 * The short programs (at most 4 instructions: one or two comparisons, a
 * string == or ~) run through the evaluator's fast forms; the same
 * expression with four more always-true predicates is too long for them
 * and runs through the interpreter.  Both must agree on every record:
 * each field size and sign, each operator, edge numbers, strings with and
 * without their NUL, with a NUL inside, a __data_loc outside the record.
 */
static uint64_t edge_value(void)
{
	static const uint64_t edges[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
		0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull,
		0xfffffffffffffffeull, 0xffffffffffffff80ull, 0xffffffff80000000ull,
	};

	if (rnd() % 4 == 0)
		return (uint64_t)rnd() << 32 | rnd();
	return edges[rnd() % (sizeof(edges) / sizeof(edges[0]))] + (rnd() % 3) - 1;
}

static void fill_random(struct all_rec *r, unsigned int *size)
{
	/* (8 bytes each, NUL-padded; "abcdefgh" has none) */
	static const char strs[8][8] = { "", "a", "ab", "abc", "abcd", "xbc", "abcdefgh", "abc\0zz" };
	static const unsigned int lens[8] = { 0, 1, 2, 3, 4, 3, 8, 6 };
	unsigned int k = rnd() % 8;
	const char *str = strs[k];
	unsigned int len = lens[k] + (rnd() % 2);    /* with its NUL or not */

	if (len > 8)
		len = 8;
	memset(r, 0, sizeof(*r));
	r->u8 = (uint8_t)edge_value(); r->s8 = (int8_t)edge_value();
	r->u16 = (uint16_t)edge_value(); r->s16 = (int16_t)edge_value();
	r->b = (uint8_t)(rnd() % 2); r->u32 = (uint32_t)edge_value();
	r->s32 = (int32_t)edge_value(); r->u64 = edge_value(); r->s64 = (int64_t)edge_value();
	memcpy(r->arr, strs[rnd() % 8], 8);
	set_str(r, str, len);
	*size = sizeof(*r);
	if (rnd() % 16 == 0)
		r->loc_str = 60u << 16 | 140;    /* outside the record */
}

TEST(fast_forms_against_interpreter)
{
	static const char *const fields[] = { "u8", "s8", "u16", "s16", "b", "u32", "s32", "u64", "s64" };
	static const char *const ops[] = { "==", "!=", "<", "<=", ">", ">=", "&" };
	static const char *const nums[] = {
		"0", "1", "-1", "127", "128", "-128", "255", "256", "32767", "-32768", "65535",
		"2147483647", "-2147483648", "4294967295", "9223372036854775807",
		"-9223372036854775808", "18446744073709551615", "0x80", "0xffffffff",
	};
	static const char *const others[] = {
		"str == \"abc\"", "str != \"abc\"", "str ~ \"ab*\"", "str ~ \"*bc\"", "str ~ \"a?c\"",
		"str ~ \"*b*\"", "str ~ \"[a-b]bc\"", "str == \"\"", "str ~ \"abc\"", "str ~ \"ab\"",
		"arr == \"abcdefgh\"", "arr == \"abc\"", "arr ~ \"abc*\"", "arr ~ \"*gh\"",
		"arr != \"ab\"", "str == \"abc\" && u8 > 3", "str ~ \"ab*\" || s32 < 0",
		"u32 > 100 && s16 < -5", "u8 == 255 || s64 >= 0", "!(u16 & 3) && b == 1",
		"s8 < 0 || u64 > 18446744073709551614", "comm == \"x\" || u8 < 9",
		"CPU == 0 && u8 != 1", "c3 == \"a\"", "ints2 == 1 || u8 == 0",
		"u8 < 0", "u64 > 18446744073709551615", "s64 > 9223372036854775807",
		"u8 == 1 && u16 == 2 && u32 == 3", "(u8 > 1 || s8 < 1) && (u16 > 1 || s16 < 1)",
	};
	static char exprs[1400][96];
	unsigned int nexpr = 0, i, k;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			for (unsigned int n = 0; n < sizeof(nums) / sizeof(nums[0]); n++)
				snprintf(exprs[nexpr++], sizeof(exprs[0]), "%s %s %s",
					 fields[i], ops[k], nums[n]);
	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		snprintf(exprs[nexpr++], sizeof(exprs[0]), "%s", others[i]);
	for (i = 0; i < nexpr; i++) {
		char padded[160];
		struct utrace__filter *f = NULL, *g = NULL;
		struct utrace__filter_error err;
		struct utrace__filter_ctx ctx = { 0, "x" };

		snprintf(padded, sizeof(padded),
			 "(%.95s) && u8 >= 0 && u16 >= 0 && u32 >= 0 && u64 >= 0", exprs[i]);
		if (utrace__filter_compile(exprs[i], all_fields, ALL_NR, &f, &err) != 0)
			continue;       /* (the kernel refuses it too) */
		g = compile_ok(all_fields, ALL_NR, padded);
		if (utrace__filter_nr_insns(g) <= 4)
			TEST_FAIL("'%s': %u instructions", padded, utrace__filter_nr_insns(g));
		for (k = 0; k < 300; k++) {
			struct all_rec r;
			unsigned int size;
			bool a, b;

			fill_random(&r, &size);
			ctx.cpu = rnd() % 2;
			a = utrace__filter_match(f, &r, size, &ctx);
			b = utrace__filter_match(g, &r, size, &ctx);
			if (a != b)
				TEST_FAIL("'%s' (%u instructions): %d, the interpreter %d "
					  "(u8 %u s8 %d u16 %u s16 %d u32 %u s32 %d u64 %llu s64 %lld)",
					  exprs[i], utrace__filter_nr_insns(f), a, b, r.u8, r.s8,
					  r.u16, r.s16, r.u32, r.s32, (unsigned long long)r.u64,
					  (long long)r.s64);
		}
		utrace__filter_free(f);
		utrace__filter_free(g);
	}
	CHECK_INT(nexpr, >, 1000);
}

TEST_MAIN()
