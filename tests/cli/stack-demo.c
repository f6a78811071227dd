/* SPDX-License-Identifier: MIT */
/*
 * Known call chains ending in the event stackdemo:hit (t3060-t3079), for
 * the stack tests: built -O0, -O2 with frame pointers and -O2 without.
 * Commands, one a line, from FIFO (opened again after each writer); after
 * each, "done K" (K from 1) is appended to OUT:
 *
 *   chain    main -> sd_chain -> sd_outer -> sd_middle -> sd_inner -> sd_leaf
 *            -> hit(1)
 *   lib      main -> sdlib_outer -> sdlib_inner -> sd_leaf -> hit(2)
 *            (sdlib: a library the program links with)
 *   dl       main -> sddl_outer -> sddl_inner -> sd_leaf -> hit(3)
 *            (sddl: the module DLMOD, dlopen()ed by the command)
 *   signal   main -> sd_raise -> (SIGUSR1) sd_on_signal -> sd_leaf -> hit(4)
 *   loop N   main -> sd_outer ... -> hit(1), N times
 *   thread   a new thread: sd_thread -> sd_outer ... -> hit(7) (joined)
 *   fork     a child: sd_chain ... -> hit(1), then it exits (waited for)
 *   altsig   SIGUSR2 on an alternate signal stack (sigaltstack), its
 *            handler -> sd_badfp -> sd_leaf -> hit(9) with a frame pointer
 *            between the heap and the stack, unmapped
 *   jit      main -> code written at run time (named jitted_fn in
 *            /tmp/perf-PID.map, as a JIT does) -> sd_leaf -> hit(8);
 *            "jit failed" in OUT when no executable memory could be had
 *   deep N D main -> sd_deep x D -> hit(5), N times (bench/stacks.sh)
 *   badfp    main -> sd_badfp -> sd_leaf -> hit(6), three times, with the
 *            frame pointer sd_badfp passes on corrupt: 0xdeadbeef000
 *            (unmapped), odd (1), and the address of stack bytes holding
 *            0x41 (a chain of garbage inside the stack); sd_badfp has
 *            call frame information, so a dwarf unwind still goes through
 *   quit
 *
 *   stack-demo FIFO OUT DLMOD
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CREATE_TRACE_POINTS
#include "stack-trace.h"

#define BARRIER() __asm__ volatile("" ::: "memory")

void sdlib_outer(void (*cb)(int), int where);

void sd_leaf(int where);
void sd_inner(int where);
void sd_middle(int where);
void sd_outer(int where);
void sd_raise(void);

__attribute__((noinline)) void sd_leaf(int where)
{
	trace_hit(where);
	BARRIER();
}

__attribute__((noinline)) void sd_inner(int where)
{
	sd_leaf(where);
	BARRIER();
}

__attribute__((noinline)) void sd_middle(int where)
{
	sd_inner(where);
	BARRIER();
}

__attribute__((noinline)) void sd_outer(int where)
{
	sd_middle(where);
	BARRIER();
}

static void sd_on_signal(int sig)
{
	(void)sig;
	sd_leaf(4);
	BARRIER();
}

/* sd_badfp(where, fp): sd_leaf(where) with %rbp = fp (a corrupt frame
 * pointer chain; the function's CFI does not depend on it) */
void sd_badfp(int where, unsigned long fp);
__asm__(".text\n"
	".globl sd_badfp\n"
	".type sd_badfp, @function\n"
	"sd_badfp:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbp, 0\n"
	"	mov %rsi, %rbp\n"
	"	call sd_leaf\n"
	"	pop %rbp\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size sd_badfp, .-sd_badfp\n");

__attribute__((noinline)) static void sd_badfps(void)
{
	volatile unsigned char garbage[256];

	memset((void *)garbage, 0x41, sizeof(garbage));
	sd_badfp(6, 0xdeadbeef000ul);
	sd_badfp(6, 1);
	sd_badfp(6, (unsigned long)(garbage + 64));
	BARRIER();
}

__attribute__((noinline)) void sd_deep(long depth, long n);

__attribute__((noinline)) void sd_deep(long depth, long n)
{
	long i;

	if (depth > 1) {
		sd_deep(depth - 1, n);
	} else {
		for (i = 0; i < n; i++)
			trace_hit(5);
	}
	BARRIER();
}

/* the chain command's, and a fork child's: the same stack up to here */
__attribute__((noinline)) static void sd_chain(void)
{
	sd_outer(1);
	BARRIER();
}

static void *sd_thread(void *arg)
{
	(void)arg;
	sd_outer(7);
	BARRIER();
	return NULL;
}

static void sd_on_altsig(int sig)
{
	(void)sig;
	/* far above the heap, far below the stack: not mapped */
	sd_badfp(9, ((unsigned long)sbrk(0) + (1ul << 36)) & ~15ul);
	BARRIER();
}

static int sd_altsig(void)
{
	static unsigned char alt[65536] __attribute__((aligned(16)));
	struct sigaction sa;
	stack_t ss;

	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = alt;
	ss.ss_size = sizeof(alt);
	if (sigaltstack(&ss, NULL) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sd_on_altsig;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	return 0;
}

/* sd_leaf(8) from code made now: sub $8,%rsp; mov $8,%edi; movabs
 * $sd_leaf,%rax; call *%rax; add $8,%rsp; ret; named in the perf map */
static int sd_jit(void)
{
	static const unsigned char head[] = { 0x48, 0x83, 0xec, 0x08, 0xbf, 0x08, 0x00, 0x00,
					      0x00, 0x48, 0xb8 };
	static const unsigned char tail[] = { 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	void (*leaf)(int) = sd_leaf;
	unsigned char *code;
	char path[64];
	FILE *map;

	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memcpy(code, head, sizeof(head));
	memcpy(code + sizeof(head), &leaf, 8);
	memcpy(code + sizeof(head) + 8, tail, sizeof(tail));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0)
		return -1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return -1;
	fprintf(map, "%lx %zx jitted_fn\n", (unsigned long)code,
		sizeof(head) + 8 + sizeof(tail));
	fclose(map);
	((void (*)(void))code)();
	BARRIER();
	return 0;
}

__attribute__((noinline)) void sd_raise(void)
{
	raise(SIGUSR1);
	BARRIER();
}

int main(int argc, char **argv)
{
	void (*dl_outer)(void (*)(int), int) = NULL;
	struct sigaction sa;
	char line[128];
	unsigned int k = 0;
	FILE *in, *out;
	void *h;

	if (argc != 4) {
		fprintf(stderr, "usage: stack-demo FIFO OUT DLMOD\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sd_on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	for (;;) {
		in = fopen(argv[1], "r");
		if (!in) {
			perror(argv[1]);
			return 1;
		}
		while (fgets(line, sizeof(line), in)) {
			long n = 0, d = 0, i;

			if (!strncmp(line, "quit", 4)) {
				fclose(in);
				return 0;
			}
			if (!strncmp(line, "chain", 5)) {
				sd_chain();
			} else if (!strncmp(line, "lib", 3)) {
				sdlib_outer(sd_leaf, 2);
			} else if (!strncmp(line, "dl", 2)) {
				if (!dl_outer) {
					h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
					if (!h) {
						fprintf(stderr, "dlopen: %s\n", dlerror());
						return 1;
					}
					*(void **)&dl_outer = dlsym(h, "sddl_outer");
					if (!dl_outer)
						return 1;
				}
				dl_outer(sd_leaf, 3);
			} else if (!strncmp(line, "signal", 6)) {
				sd_raise();
			} else if (!strncmp(line, "thread", 6)) {
				pthread_t th;

				if (pthread_create(&th, NULL, sd_thread, NULL) == 0)
					pthread_join(th, NULL);
			} else if (!strncmp(line, "fork", 4)) {
				pid_t c = fork();

				if (c == 0) {
					sd_chain();
					_exit(0);
				}
				if (c > 0)
					waitpid(c, NULL, 0);
			} else if (!strncmp(line, "altsig", 6)) {
				sd_altsig();
			} else if (!strncmp(line, "jit", 3)) {
				if (sd_jit() < 0) {
					out = fopen(argv[2], "a");
					if (out) {
						fputs("jit failed\n", out);
						fclose(out);
					}
				}
			} else if (!strncmp(line, "badfp", 5)) {
				sd_badfps();
			} else if (sscanf(line, "deep %ld %ld", &n, &d) == 2) {
				sd_deep(d, n);
			} else if (sscanf(line, "loop %ld", &n) == 1) {
				for (i = 0; i < n; i++)
					sd_outer(1);
			}
			out = fopen(argv[2], "a");
			if (!out)
				return 1;
			fprintf(out, "done %u\n", ++k);
			fclose(out);
		}
		fclose(in);
	}
}
