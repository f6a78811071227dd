/* SPDX-License-Identifier: MIT */
/*
 * uprobe_events definitions (lib/probe): every case of the kernel's
 * transcript 08b-uprobe-errors.txt (errno, error_log message and caret,
 * canonical readback), the definitions of 08-uprobes.txt (readback,
 * format fields, print fmt), and the fetch programs run on registers and
 * memory, printed as the kernel prints uprobe events.
 *
 * The kernel captured a file "REF/tools/prog"; here it is a file "prog"
 * in a temporary directory, and a caret after the path moves by the
 * difference of the two paths' lengths.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe.h"
#include "test.h"

#define REF "REF/tools/prog"

static char prog[256];

static void make_prog(void)
{
	char dir[] = "/tmp/utrace-probe-XXXXXX";
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	f = fopen(prog, "w");
	CHECK(f);
	fclose(f);
}

/* @s with REF replaced by the real path */
static char *subst(const char *s)
{
	static char buf[2][1024];
	static int k;
	char *out = buf[k++ & 1];
	const char *p = strstr(s, REF);

	if (!p) {
		snprintf(out, 1024, "%s", s);
		return out;
	}
	snprintf(out, 1024, "%.*s%s%s", (int)(p - s), s, prog, p + strlen(REF));
	return out;
}

struct kcase {
	const char *def;
	int err;            /* the write()'s errno, 0 when accepted */
	const char *msg;    /* the error_log message, "" when none */
	int pos;            /* the caret, with REF as the path */
	const char *readback;
};

/* 08b-uprobe-errors.txt, in its order. */
static const struct kcase kcases[] = {
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%xx:s32", EINVAL, "Invalid register name", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%rdi", EINVAL, "Invalid register name", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:s99", EINVAL, "Unknown type is specified", 41, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:foo", EINVAL, "Unknown type is specified", 41, "" },
	/* utrace has the symbol type (resolved in user space) */
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:symbol", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000001240 a=%di:symbol" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:symstr", EINVAL, "Unknown type is specified", 41, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:string", EINVAL, "String accepts only memory argument", 41, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:ustring", EINVAL, "String accepts only memory argument", 41, "" },
	{ "p:refcap/bad /nonexistent/prog:0x1240", ENOENT, "Failed to find the given file", 13, "" },
	{ "p:refcap/bad /tmp:0x1240", EINVAL, "Not a regular file", 13, "" },
	{ "p:refcap/bad REF/tools/prog", EINVAL, "", -1, "" },
	{ "p:refcap/bad REF/tools/prog:", EINVAL, "", -1, "" },
	{ "p:refcap/bad REF/tools/prog:0xzz", EINVAL, "Invalid uprobe offset", 28, "" },
	{ "p:refcap/bad REF/tools/prog:-0x10", EINVAL, "", -1, "" },
	{ "p:refcap/bad REF/tools/prog:1240", 0, "", -1, "p:refcap/bad REF/tools/prog:0x00000000000004d8" },
	{ "p:refcap/bad REF/tools/prog:0x100000", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000100000" },
	/* accepted here; the engine refuses a site inside an instruction */
	{ "p:refcap/bad REF/tools/prog:0x1241", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000001241" },
	{ "p:refcap/bad REF/tools/prog:0x1240 r=$retval", EINVAL, "$retval is not available on probe", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=$arg1", EINVAL, "$arg* can be used only on function entry or exit", 37, "" },
	/* no resolver here: as the kernel */
	{ "p:refcap/bad REF/tools/prog:0x1240 a=@counter", EINVAL, "Symbol is not available with uprobe", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=@0x4028", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000001240 a=@0x4028" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=@+counter", EINVAL, "Invalid file offset value", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=@-0x10", EINVAL, "Symbol is not available with uprobe", 37, "" },
	{ "p:refcap/bad-name REF/tools/prog:0x1240", EINVAL, "Event name must follow the same rules as C identifiers", 9, "" },
	{ "p:refcap/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn REF/tools/prog:0x1240", EINVAL, "Event name is too long", 9, "" },
	{ "p:refcap/ REF/tools/prog:0x1240 a=%di", 0, "", -1, "p:refcap/p_prog_0x1240 REF/tools/prog:0x0000000000001240 a=%di" },
	{ "p:/bad REF/tools/prog:0x1240", EINVAL, "Group name is not specified", 2, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di a=%si", EINVAL, "This argument name is already used", 41, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 common_pid=%di", EINVAL, "This argument name is already used", 35, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=", EINVAL, "No argument expression", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 =%di", EINVAL, "Argument name is not specified", 35, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=+0(%xx)", EINVAL, "Invalid register name", 40, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=+0(%di", EINVAL, "Dereference brace is not closed", 43, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=+zz(%di)", EINVAL, "Invalid dereference offset", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:b40@4/32", EINVAL, "Invalid bitfield", 41, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:u8[0]", EINVAL, "Invalid array size", 44, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di:u8[4]", EINVAL, "String accepts only memory argument", 41, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=$stackX", EINVAL, "Invalid $-variable specified", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=$foo", EINVAL, "Invalid $-variable specified", 37, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 1a=%di", EINVAL, "Argument name must follow the same rules as C identifiers", 35, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a-b=%di", EINVAL, "Argument name must follow the same rules as C identifiers", 35, "" },
	{ "x:refcap/bad REF/tools/prog:0x1240", EINVAL, "", -1, "" },
	{ "p:refcap/bad", EINVAL, "", -1, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 $comm", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000001240 arg1=$comm" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=$comm:u32", EINVAL, "$comm and immediate-string only accepts string type", 43, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240%return a=%di", 0, "", -1, "r:refcap/bad REF/tools/prog:0x0000000000001240 a=%di" },
	{ "p:refcap/bad REF/tools/prog:0x1240%return r=$retval", 0, "", -1, "r:refcap/bad REF/tools/prog:0x0000000000001240 r=$retval" },
	{ "r:refcap/bad REF/tools/prog:0x1240%return", 0, "", -1, "r:refcap/bad REF/tools/prog:0x0000000000001240" },
	/* (REFCTR) parses; the kernel's EINVAL (no error_log entry) came from
	 * validate_ref_ctr_offset(): probes at 0x1240 without one existed
	 * (uprobes.c refuses the same; t0086 checks it) */
	{ "p:refcap/bad REF/tools/prog:0x1240(0x10)", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000001240(0x10)" },
	{ "p:refcap/bad REF/tools/prog:0x1240(0x4028)", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000001240(0x4028)" },
	{ "p:refcap/bad REF/tools/prog:0x1240(1a)", EINVAL, "Invalid reference counter offset", 35, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240(0x10", EINVAL, "Reference counter brace is not closed", 39, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240(0x10)a", EINVAL, "Reference counter has wrong suffix", 40, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=%di if a == 1", EINVAL, "BTF is not available or not supported", 41, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=\\\"unterminated", EINVAL, "String is not closed with '\"'", 51, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=\\zz", EINVAL, "Invalid immediate value", 38, "" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=\\123:string", 0, "", -1, "p:refcap/bad REF/tools/prog:0x0000000000001240 a=\\123:string" },
	{ "p:refcap/bad REF/tools/prog:0x1240 a=\\\"str\\\":u32", EINVAL, "$comm and immediate-string only accepts string type", 45, "" },
	{ "e:refcap/bad sched.sched_switch", EINVAL, "", -1, "" },
	/* deletions parse; ENOENT comes from the table of events */
	{ "-:refcap/nosuch", 0, "", -1, "" },
	{ "-:nosuchgroup/nosuch", 0, "", -1, "" },
	{ "-:refcap/", 0, "", -1, "" },
	{ "-:", EINVAL, "", -1, "" },
	{ "-", EINVAL, "", -1, "" },
	{ "", 0, "", -1, "" },
	{ "# just a comment", 0, "", -1, "" },
	{ "   ", 0, "", -1, "" },
};

TEST(kernel_error_transcript)
{
	make_prog();
	for (size_t i = 0; i < sizeof(kcases) / sizeof(kcases[0]); i++) {
		const struct kcase *k = &kcases[i];
		const char *line = subst(k->def);
		struct utrace__probe_error err;
		struct utrace__probe_def *d;
		enum utrace__probe_cmd cmd;
		int r = utrace__probe_parse(line, NULL, &cmd, &d, &err);

		if (r != -k->err)
			TEST_FAIL("%s: got %d (%s), expected %d", line, r, err.msg, -k->err);
		if (r) {
			int pos = k->pos;
			const char *at = strstr(k->def, REF);

			if (at && pos > at - k->def)
				pos += (int)strlen(prog) - (int)strlen(REF);
			if (err.logged != (k->msg[0] != '\0'))
				TEST_FAIL("%s: logged %d (%s)", line, err.logged, err.msg);
			if (k->msg[0]) {
				CHECK_STR(err.msg, k->msg);
				if (err.pos != pos)
					TEST_FAIL("%s: caret at %d, expected %d", line, err.pos, pos);
			}
			CHECK(!d);
			continue;
		}
		if (k->readback[0]) {
			char *s;

			CHECK_INT(cmd, ==, UTRACE__PROBE_ADD);
			s = utrace__probe_canonical(d);
			CHECK_STR(s, subst(k->readback));
			free(s);
		}
		utrace__probe_def_free(d);
	}
}

TEST(error_log_entry_with_caret)
{
	struct utrace__probe_error err;
	struct utrace__probe_def *d;
	enum utrace__probe_cmd cmd;
	char *s;

	CHECK_INT(utrace__probe_parse("p:refcap/x   /nonexistent:0x10", NULL, &cmd, &d, &err),
		  ==, -ENOENT);
	s = utrace__probe_log_text(&err);
	/* 09-readme-error_log.txt: the words rejoined with one space */
	CHECK_STR(s, "trace_uprobe: error: Failed to find the given file\n"
		     "  Command: p:refcap/x /nonexistent:0x10\n"
		     "                      ^\n");
	free(s);
}

static struct utrace__probe_def *parse_ok(const char *line)
{
	struct utrace__probe_error err;
	struct utrace__probe_def *d;
	enum utrace__probe_cmd cmd;
	int r = utrace__probe_parse(subst(line), NULL, &cmd, &d, &err);

	if (r || cmd != UTRACE__PROBE_ADD)
		TEST_FAIL("%s: %d %s (at %d)", line, r, err.msg, err.pos);
	return d;
}

static char *fields_text(const struct utrace__probe_def *d)
{
	static char buf[4096];
	size_t n = 0;

	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct utrace_event_field *f = &d->fields[i];
		const char *fmt = f->kind == UTRACE_FIELD_STRING ? "__data_loc %s[] %s;" :
				  f->kind == UTRACE_FIELD_FLEX ? "%s %s[];" : "%s %s;";

		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\tfield:");
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, fmt, f->type, f->name);
		n += (size_t)snprintf(buf + n, sizeof(buf) - n,
				      "\toffset:%d;\tsize:%d;\tsigned:%d;\n", f->offset, f->size,
				      f->is_signed);
	}
	return buf;
}

/* raw/format/uprobe_refcap_*.format and 08-uprobes.txt */
TEST(format_fields_and_print_fmt)
{
	struct utrace__probe_def *d;

	make_prog();
	d = parse_ok("p:refcap/add REF/tools/prog:0x1240 a=%di:s32 b=%si:s64");
	CHECK_STR(fields_text(d),
		  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		  "\tfield:s32 a;\toffset:16;\tsize:4;\tsigned:1;\n"
		  "\tfield:s64 b;\toffset:20;\tsize:8;\tsigned:1;\n");
	CHECK_STR(d->print_fmt, "\"(%lx) a=%d b=%Ld\", REC->__probe_ip, REC->a, REC->b");
	utrace__probe_def_free(d);

	d = parse_ok("r:refcap/add_ret REF/tools/prog:0x1240 ret=$retval:s32");
	CHECK_STR(fields_text(d),
		  "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
		  "\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
		  "\tfield:s32 ret;\toffset:24;\tsize:4;\tsigned:1;\n");
	CHECK_STR(d->print_fmt,
		  "\"(%lx <- %lx) ret=%d\", REC->__probe_func, REC->__probe_ret_ip, REC->ret");
	utrace__probe_def_free(d);

	d = parse_ok("p:refcap/greet REF/tools/prog:0x1250 name=+0(%di):string");
	CHECK_STR(fields_text(d),
		  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		  "\tfield:__data_loc char[] name;\toffset:16;\tsize:4;\tsigned:1;\n");
	CHECK_STR(d->print_fmt, "\"(%lx) name=\\\"%s\\\"\", REC->__probe_ip, __get_str(name)");
	utrace__probe_def_free(d);

	d = parse_ok("p:refcap/unnamed REF/tools/prog:0x1240 %di %si $stack +0(%di)");
	CHECK_STR(d->print_fmt, "\"(%lx) arg1=0x%Lx arg2=0x%Lx arg3=0x%Lx arg4=0x%Lx\", "
		  "REC->__probe_ip, REC->arg1, REC->arg2, REC->arg3, REC->arg4");
	utrace__probe_def_free(d);

	d = parse_ok("p:refcap/types REF/tools/prog:0x1250 x8=%di:x8 x16=%di:x16 x32=%di:x32 "
		     "x64=%di:x64 u8=%di:u8 u16=%di:u16 u32=%di:u32 u64=%di:u64 s8=%di:s8 "
		     "s16=%di:s16 ch=+0(%di):char us=+0(%di):ustring arr=+0(%di):u8[4] "
		     "carr=+0(%di):char[5] bf=+0(%di):b4@4/8 imm=\\1234 istr=\\\"hello\\\"");
	CHECK_STR(fields_text(d),
		  "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n"
		  "\tfield:u8 x8;\toffset:16;\tsize:1;\tsigned:0;\n"
		  "\tfield:u16 x16;\toffset:17;\tsize:2;\tsigned:0;\n"
		  "\tfield:u32 x32;\toffset:19;\tsize:4;\tsigned:0;\n"
		  "\tfield:u64 x64;\toffset:23;\tsize:8;\tsigned:0;\n"
		  "\tfield:u8 u8;\toffset:31;\tsize:1;\tsigned:0;\n"
		  "\tfield:u16 u16;\toffset:32;\tsize:2;\tsigned:0;\n"
		  "\tfield:u32 u32;\toffset:34;\tsize:4;\tsigned:0;\n"
		  "\tfield:u64 u64;\toffset:38;\tsize:8;\tsigned:0;\n"
		  "\tfield:s8 s8;\toffset:46;\tsize:1;\tsigned:1;\n"
		  "\tfield:s16 s16;\toffset:47;\tsize:2;\tsigned:1;\n"
		  "\tfield:u8 ch;\toffset:49;\tsize:1;\tsigned:0;\n"
		  "\tfield:__data_loc char[] us;\toffset:50;\tsize:4;\tsigned:1;\n"
		  "\tfield:u8 arr[];\toffset:54;\tsize:4;\tsigned:0;\n"
		  "\tfield:u8 carr[];\toffset:58;\tsize:5;\tsigned:0;\n"
		  "\tfield:u8 bf;\toffset:63;\tsize:1;\tsigned:0;\n"
		  "\tfield:u64 imm;\toffset:64;\tsize:8;\tsigned:0;\n"
		  "\tfield:__data_loc char[] istr;\toffset:72;\tsize:4;\tsigned:1;\n");
	CHECK_STR(d->print_fmt,
		  "\"(%lx) x8=0x%x x16=0x%x x32=0x%x x64=0x%Lx u8=%u u16=%u u32=%u u64=%Lu s8=%d "
		  "s16=%d ch='%c' us=\\\"%s\\\" arr={%u,%u,%u,%u} carr={'%c','%c','%c','%c','%c'} "
		  "bf=%u imm=0x%Lx istr=\\\"%s\\\"\", REC->__probe_ip, REC->x8, REC->x16, REC->x32, "
		  "REC->x64, REC->u8, REC->u16, REC->u32, REC->u64, REC->s8, REC->s16, REC->ch, "
		  "__get_str(us), REC->arr[0], REC->arr[1], REC->arr[2], REC->arr[3], "
		  "REC->carr[0], REC->carr[1], REC->carr[2], REC->carr[3], REC->carr[4], "
		  "REC->bf, REC->imm, __get_str(istr)");
	utrace__probe_def_free(d);
}

static const char *hit(const char *line, const struct utrace_probe_regs *regs,
		       const struct utrace__probe_env *env, unsigned int *faults)
{
	static char out[1024];
	struct utrace__probe_def *d = parse_ok(line);
	uint8_t rec[2048];
	size_t len;

	memset(rec, 0xaa, sizeof(rec));
	*faults = 0;
	len = utrace__probe_fetch(d, regs, env, rec, sizeof(rec), faults);
	CHECK(len >= d->size && len <= utrace__probe_record_max(d));
	utrace__probe_print(d, rec, len, out, sizeof(out), NULL, NULL);
	utrace__probe_def_free(d);
	return out;
}

static volatile long counter = 42;

/* The values of 08-uprobes.txt's trace, from the same registers. */
TEST(fetch_and_print_as_the_kernel)
{
	static const char name[] = "hello-uprobe";
	uint64_t stack[4] = { 0x55d66c31d122, 0, 0, 0 };
	struct utrace_probe_regs regs = { 0 };
	struct utrace__probe_env env = { 0 };
	unsigned int faults;

	make_prog();
	regs.ip = 0x55d66c31d240;
	regs.di = (uint64_t)-5 & 0xffffffff;
	regs.si = 100000000000;
	regs.sp = (uint64_t)(uintptr_t)stack;
	CHECK_STR(hit("p:refcap/add REF/tools/prog:0x1240 a=%di:s32 b=%si:s64", &regs, &env,
		      &faults), "(0x55d66c31d240) a=-5 b=100000000000");
	CHECK_INT(faults, ==, 0);

	regs.ax = 1215752187;
	env.func = 0x55d66c31d240;
	CHECK_STR(hit("r:refcap/add_ret REF/tools/prog:0x1240 ret=$retval:s32 rs=$retval:x32",
		      &regs, &env, &faults),
		  "(0x55d66c31d122 <- 0x55d66c31d240) ret=1215752187 rs=0x4876e7fb");

	regs.ip = 0x55d66c31d250;
	regs.di = (uint64_t)(uintptr_t)name;
	CHECK_STR(hit("p:refcap/types REF/tools/prog:0x1250 ch=+0(%di):char us=+0(%di):ustring "
		      "arr=+0(%di):u8[4] carr=+0(%di):char[5] bf=+0(%di):b4@4/8 imm=\\1234 "
		      "s8=+1(%di):s8", &regs, &env, &faults),
		  "(0x55d66c31d250) ch='h' us=\"hello-uprobe\" arr={104,101,108,108} "
		  "carr={'h','e','l','l','o'} bf=6 imm=0x4d2 s8=101");
	CHECK_INT(faults, ==, 0);

	/* a bad pointer: (fault) for a string, 0 for a number, each a miss */
	regs.di = 16;
	CHECK_STR(hit("p:refcap/greet REF/tools/prog:0x1250 name=+0(%di):string v=+8(%di):u32",
		      &regs, &env, &faults), "(0x55d66c31d250) name=(fault) v=0");
	CHECK_INT(faults, ==, 2);

	/* @+OFF is the load bias + OFF; $stackN; $comm */
	env.bias = (uint64_t)(uintptr_t)&counter - 0x4028;
	CHECK_STR(hit("p:refcap/mem REF/tools/prog:0x1240 counter=@+0x4028:s64 ra=$stack0 "
		      "deref=+8($stack):x64 c=$comm", &regs, &env, &faults),
		  "(0x55d66c31d250) counter=42 ra=0x55d66c31d122 deref=0x0 c=\"test-probe-def\"");
	/* the kernel prints (fault) for an immediate string (its uprobes
	 * read their own copy as user memory), and so does utrace (issue
	 * 28 item 16; t2816 compares with the kernel) */
	CHECK_STR(hit("p:refcap/s REF/tools/prog:0x1240 istr=\\\"hello\" f=\\123:string "
		      "t=\\\"hello\\\"", &regs, &env, &faults),
		  "(0x55d66c31d250) istr=(fault) f=(fault) t=(fault)");
	/* (the immediate strings are no miss of the program's memory; the
	 * number read as a string pointer is) */
	CHECK_INT(faults, ==, 1);
}

static int sym_lookup(void *data, const char *path, const char *sym, uint64_t *vaddr,
		      uint64_t *off, uint64_t *size)
{
	(void)data;
	(void)path;
	if (strcmp(sym, "add") && strcmp(sym, "counter"))
		return -ENOENT;
	*off = !strcmp(sym, "add") ? 0x1240 : 0x3028;
	*vaddr = !strcmp(sym, "add") ? 0x1240 : 0x4028;
	*size = 4;
	return 0;
}

/* Beyond the kernel: symbols, $argN at an entry, @SYM */
TEST(symbols_and_sysv_arguments)
{
	struct utrace__probe_resolver res = { .symbol = sym_lookup };
	struct utrace_probe_regs regs = { 0 };
	struct utrace__probe_env env = { 0 };
	struct utrace__probe_error err;
	struct utrace__probe_def *d;
	enum utrace__probe_cmd cmd;
	uint64_t stack[3] = { 0x1122, 0, 77 };
	uint8_t rec[256];
	unsigned int faults = 0;
	char out[256], *s;

	make_prog();
	CHECK_INT(utrace__probe_parse(subst("p:grp/add " REF ":add a=$arg1:s32 g=$arg8 "
					    "c=@counter:s64"), &res, &cmd, &d, &err), ==, 0);
	s = utrace__probe_canonical(d);
	CHECK_STR(s, subst("p:grp/add " REF ":0x0000000000001240 a=$arg1:s32 g=$arg8 c=@counter:s64"));
	free(s);
	regs.di = 7;
	regs.sp = (uint64_t)(uintptr_t)stack;
	env.bias = (uint64_t)(uintptr_t)&counter - 0x4028;
	utrace__probe_fetch(d, &regs, &env, rec, sizeof(rec), &faults);
	utrace__probe_print(d, rec, d->size, out, sizeof(out), NULL, NULL);
	CHECK_STR(out, "(0x0) a=7 g=0x4d c=42");
	utrace__probe_def_free(d);

	/* $argN only at an entry; a return probe only at +0 */
	CHECK_INT(utrace__probe_parse(subst("p:grp/x " REF ":add+3 a=$arg1"), &res, &cmd, &d,
				      &err), ==, -EINVAL);
	CHECK_STR(err.msg, "$arg* can be used only on function entry or exit");
	CHECK_INT(utrace__probe_parse(subst("r:grp/x " REF ":add+3"), &res, &cmd, &d, &err), ==,
		  -EINVAL);
	CHECK_STR(err.msg, "Return probe must be used without offset.");
	CHECK_INT(utrace__probe_parse(subst("p:grp/x " REF ":nosuch"), &res, &cmd, &d, &err), ==,
		  -ENOENT);
	CHECK_STR(err.msg, "Failed to find the given symbol");
	CHECK(err.logged);
	/* trailing bytes after a dereference: the kernel ignores them */
	CHECK_INT(utrace__probe_parse(subst("p:grp/x " REF ":0x10 a=+0(%di)x"), &res, &cmd, &d,
				      &err), ==, -EINVAL);
	CHECK_STR(err.msg, "Garbage after the dereference brace");
}

/* What a reader does with a recorded event's format: the same print. */
TEST(def_from_format_prints_the_same)
{
	static const char *const defs[] = {
		"p:g/a REF/tools/prog:0x1240 a=%di:s32 b=%si:s64 c=%di:x16 d=%di:u8",
		"r:g/r REF/tools/prog:0x1240 ret=$retval:s32 rs=$retval",
		"p:g/s REF/tools/prog:0x1240 f=%ip:symbol",
		("p:g/t REF/tools/prog:0x1250 ch=+0(%di):char us=+0(%di):ustring arr=+0(%di):u8[4] "
		 "carr=+0(%di):char[5] bf=+0(%di):b4@4/8 bad=+0(%si):string s16=%di:s16"),
	};
	static const char name[] = "hello-uprobe";
	struct utrace_probe_regs regs = { .ip = 0x1234, .ax = 77, .si = 8 };
	struct utrace__probe_env env = { .func = 0x4444 };
	uint64_t stack[1] = { 0x5555 };

	make_prog();
	regs.di = (uint64_t)(uintptr_t)name;
	regs.sp = (uint64_t)(uintptr_t)stack;
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		struct utrace__probe_def *d = parse_ok(defs[i]), *f;
		char fmt[1024], a[1024], b[1024];
		const char *p = d->print_fmt + 1, *end = strstr(p, "\", REC->");
		unsigned int faults = 0;
		uint8_t rec[2048];
		size_t len, n = 0;

		for (; p < end; p++) {   /* unquoted, as libtraceevent has it */
			if (*p == '\\')
				p++;
			fmt[n++] = *p;
		}
		fmt[n] = '\0';
		f = utrace__probe_def_from_format(d->fields, d->nr_fields, fmt);
		if (!f)
			TEST_FAIL("%s: not read back from '%s'", defs[i], fmt);
		len = utrace__probe_fetch(d, &regs, &env, rec, sizeof(rec), &faults);
		utrace__probe_print(d, rec, len, a, sizeof(a), NULL, NULL);
		utrace__probe_print(f, rec, len, b, sizeof(b), NULL, NULL);
		CHECK_STR(b, a);
		utrace__probe_def_free(d);
		utrace__probe_def_free(f);
	}
}

TEST(made_up_names_and_groups)
{
	struct utrace__probe_def *d;

	make_prog();
	d = parse_ok("p REF/tools/prog:0x1240");
	CHECK_STR(d->group, "uprobes");
	CHECK_STR(d->event, "p_prog_0x1240");
	utrace__probe_def_free(d);
	d = parse_ok("p:refcap/ REF/tools/prog:0x1250");
	CHECK_STR(d->group, "refcap");
	CHECK_STR(d->event, "p_prog_0x1250");
	utrace__probe_def_free(d);
	d = parse_ok("p:ev REF/tools/prog:0x1250");
	CHECK_STR(d->group, "uprobes");
	CHECK_STR(d->event, "ev");
	utrace__probe_def_free(d);
	d = parse_ok("p:g.ev REF/tools/prog:0x1250");
	CHECK_STR(d->group, "g");
	CHECK_STR(d->event, "ev");
	utrace__probe_def_free(d);
}

TEST_MAIN()
