// SPDX-License-Identifier: MIT
/*
 * Loads that cannot crash, for the probes' handlers (utrace__probe_read*):
 * the kernel's exception tables, in user space.  The copy loops are
 * written in assembly so that the address of each load that may fault is
 * known; the SIGSEGV/SIGBUS handler, on a fault at one of them, moves the
 * instruction pointer to the loop's way out, which returns what was copied
 * so far.  Any other fault goes to the handler the program had.
 *
 * No system call on the way: a read of 8 bytes costs a few ns, where
 * process_vm_readv() costs a system call (bench: probe-read).  The loops
 * use general registers only (the handlers run with the program's SIMD
 * registers live).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#include "compiler.h"
/* engine.h declares the engine's functions: internal to libutrace */
#pragma GCC visibility push(hidden)
#include "engine.h"
#pragma GCC visibility pop
#include "probe-internal.h"

size_t utrace__probe_copy(void *dst, uintptr_t src, size_t n) UTRACE_HIDDEN;
long utrace__probe_copy_str(char *dst, uintptr_t src, size_t max) UTRACE_HIDDEN;
extern const char utrace__probe_copy_q[], utrace__probe_copy_q_fix[];
extern const char utrace__probe_copy_b[], utrace__probe_copy_b_fix[];
extern const char utrace__probe_copy_s[], utrace__probe_copy_s_fix[];
extern const char utrace__probe_copy_w[];

__asm__(
	".text\n"
	".p2align 4\n"
	".globl utrace__probe_copy\n"
	".hidden utrace__probe_copy\n"
	".type utrace__probe_copy, @function\n"
	"utrace__probe_copy:\n"		/* rdi dst, rsi src, rdx n */
	"	xor %eax, %eax\n"
	"1:	lea 8(%rax), %rcx\n"
	"	cmp %rdx, %rcx\n"
	"	ja utrace__probe_copy_q_fix\n"
	".globl utrace__probe_copy_q\n"
	".hidden utrace__probe_copy_q\n"
	"utrace__probe_copy_q:\n"
	"	mov (%rsi,%rax), %rcx\n"	/* may fault: bytes from here */
	"	mov %rcx, (%rdi,%rax)\n"
	"	add $8, %rax\n"
	"	jmp 1b\n"
	".globl utrace__probe_copy_q_fix\n"
	".hidden utrace__probe_copy_q_fix\n"
	"utrace__probe_copy_q_fix:\n"
	"	cmp %rdx, %rax\n"
	"	jae utrace__probe_copy_b_fix\n"
	".globl utrace__probe_copy_b\n"
	".hidden utrace__probe_copy_b\n"
	"utrace__probe_copy_b:\n"
	"	movzbl (%rsi,%rax), %ecx\n"	/* may fault: stop */
	"	mov %cl, (%rdi,%rax)\n"
	"	inc %rax\n"
	"	jmp utrace__probe_copy_q_fix\n"
	".globl utrace__probe_copy_b_fix\n"
	".hidden utrace__probe_copy_b_fix\n"
	"utrace__probe_copy_b_fix:\n"
	"	ret\n"
	".size utrace__probe_copy, .-utrace__probe_copy\n"

	".p2align 4\n"
	".globl utrace__probe_copy_str\n"
	".hidden utrace__probe_copy_str\n"
	".type utrace__probe_copy_str, @function\n"
	"utrace__probe_copy_str:\n"	/* rdi dst, rsi src, rdx max > 0 */
	"	xor %eax, %eax\n"
	/* 8 bytes at a time while they fit in max and in src's page (a
	 * load never crosses into the next page, which may be unmapped);
	 * the word that holds the NUL ends the copy (the bytes after the
	 * NUL are written too: dst has room for max).  r10: the last i
	 * a word may start at, min(max, bytes to the page's end) - 8 */
	"	mov %esi, %ecx\n"
	"	and $4095, %ecx\n"
	"	mov $4096, %r10d\n"
	"	sub %rcx, %r10\n"
	"	cmp %r10, %rdx\n"
	"	cmovb %rdx, %r10\n"
	"	sub $8, %r10\n"
	"	jb 2f\n"
	"	movabs $0x0101010101010101, %r8\n"
	"	movabs $0x8080808080808080, %r9\n"
	".globl utrace__probe_copy_w\n"
	".hidden utrace__probe_copy_w\n"
	"utrace__probe_copy_w:\n"
	"4:	mov (%rsi,%rax), %rcx\n"	/* may fault: -EFAULT (one page) */
	"	mov %rcx, (%rdi,%rax)\n"
	"	mov %rcx, %r11\n"
	"	sub %r8, %r11\n"
	"	not %rcx\n"
	"	and %rcx, %r11\n"
	"	and %r9, %r11\n"		/* the lowest flag: the first NUL */
	"	jnz 5f\n"
	"	add $8, %rax\n"
	"	cmp %r10, %rax\n"
	"	jbe 4b\n"
	"	jmp 2f\n"
	"5:	bsf %r11, %r11\n"
	"	shr $3, %r11\n"
	"	lea 1(%rax,%r11), %rax\n"
	"	ret\n"
	/* byte by byte near max or a page's end */
	"2:	cmp %rdx, %rax\n"
	"	jae 3f\n"
	".globl utrace__probe_copy_s\n"
	".hidden utrace__probe_copy_s\n"
	"utrace__probe_copy_s:\n"
	"	movzbl (%rsi,%rax), %ecx\n"	/* may fault: -EFAULT */
	"	mov %cl, (%rdi,%rax)\n"
	"	inc %rax\n"
	"	test %ecx, %ecx\n"
	"	jnz 2b\n"
	"	ret\n"
	"3:	movb $0, -1(%rdi,%rax)\n"	/* truncated */
	"	ret\n"
	".globl utrace__probe_copy_s_fix\n"
	".hidden utrace__probe_copy_s_fix\n"
	"utrace__probe_copy_s_fix:\n"
	"	movb $0, (%rdi)\n"
	"	mov $-14, %rax\n"		/* -EFAULT */
	"	ret\n"
	".size utrace__probe_copy_str, .-utrace__probe_copy_str\n"
	".previous\n");

_Static_assert(EFAULT == 14, "the copy loop returns -14 for -EFAULT");

static struct sigaction old_segv, old_bus;
static int read_ready;

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	uintptr_t to = 0;

	if (ip == (uintptr_t)utrace__probe_copy_q)
		to = (uintptr_t)utrace__probe_copy_q_fix;
	else if (ip == (uintptr_t)utrace__probe_copy_b)
		to = (uintptr_t)utrace__probe_copy_b_fix;
	else if (ip == (uintptr_t)utrace__probe_copy_s ||
		 ip == (uintptr_t)utrace__probe_copy_w)
		to = (uintptr_t)utrace__probe_copy_s_fix;
	if (to) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)to;
		return;
	}
	utrace__probe_chain(sig == SIGBUS ? &old_bus : &old_segv, sig, si, ctx);
}

/* Install (again: the program may have replaced them) the fault handlers. */
void utrace__probe_read_init(void)
{
	struct sigaction sa, cur;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, NULL, &cur);
	if (cur.sa_sigaction != on_fault)
		sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, NULL, &cur);
	if (cur.sa_sigaction != on_fault)
		sigaction(SIGBUS, &sa, &old_bus);
	read_ready = 1;
}

void utrace__probe_read_prepare(void)
{
	if (!read_ready)
		utrace__probe_read_init();
}

size_t utrace__probe_read(void *dst, uintptr_t src, size_t n)
{
	if (__builtin_expect(!read_ready, 0))
		utrace__probe_read_init();
	return utrace__probe_copy(dst, src, n);
}

long utrace__probe_read_str(char *dst, uintptr_t src, size_t max)
{
	if (!max)
		return 0;
	if (__builtin_expect(!read_ready, 0))
		utrace__probe_read_init();
	return utrace__probe_copy_str(dst, src, max);
}
