// SPDX-License-Identifier: MIT
/*
 * Functions whose returns a jump can cover only from before the ret
 * (issue 30 item 2, t3120): their code is written out in assembly, so
 * that the shapes do not depend on the compiler.
 *
 *   epi_pop:     push rbx; mov ebx,edi; lea eax,[rbx+1]; pop rbx; ret
 *                (the ret covered with the lea and the pop)
 *   rip_ret:     mov eax,[rip+counter]; add eax,edi; mov [rip+counter],eax;
 *                ret (a RIP-relative store relocated with the ret)
 *   shared_ret:  xor eax,eax; test edi,edi; je 1f; lea eax,[rdi+rdi];
 *                1: ret (a branch lands on the ret: a breakpoint)
 *   jcc_ret:     lea eax,[rdi+1]; test edi,edi; js 1f; ret; 1: neg eax; ret
 *                (the first ret covered with the test and the js, whose
 *                copy jumps back to 1f; the second a breakpoint)
 *   call_entry:  push rbx; call helper; pop rbx; ret (the entry's jump
 *                covers the call, which returns past it)
 *
 * probescale-prog N THREADS [STOP-FILE]: THREADS threads call each N
 * times (or until STOP-FILE exists), check every result, print the sums;
 * exit 1 on a wrong result.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int epi_pop(int x);
int rip_ret(int x);
int shared_ret(int x);
int jcc_ret(int x);
int call_entry(int x);
extern int counter;

__asm__(".text\n"
	".globl epi_pop\n.type epi_pop,@function\n"
	"epi_pop:\n"
	"	push %rbx\n"
	"	mov %edi,%ebx\n"
	"	lea 1(%rbx),%eax\n"
	"	pop %rbx\n"
	"	ret\n"
	".size epi_pop,.-epi_pop\n"
	".globl rip_ret\n.type rip_ret,@function\n"
	"rip_ret:\n"
	"	mov counter(%rip),%eax\n"
	"	add %edi,%eax\n"
	"	mov %eax,counter(%rip)\n"
	"	ret\n"
	".size rip_ret,.-rip_ret\n"
	".globl shared_ret\n.type shared_ret,@function\n"
	"shared_ret:\n"
	"	xor %eax,%eax\n"
	"	test %edi,%edi\n"
	"	je 1f\n"
	"	lea (%rdi,%rdi),%eax\n"
	"1:	ret\n"
	".size shared_ret,.-shared_ret\n"
	".globl jcc_ret\n.type jcc_ret,@function\n"
	"jcc_ret:\n"
	"	lea 1(%rdi),%eax\n"
	"	test %edi,%edi\n"
	"	js 1f\n"
	"	ret\n"
	"1:	neg %eax\n"
	"	ret\n"
	".size jcc_ret,.-jcc_ret\n"
	".type helper,@function\n"
	"helper:\n"
	"	lea 2(%rdi),%eax\n"
	"	ret\n"
	".size helper,.-helper\n"
	".globl call_entry\n.type call_entry,@function\n"
	"call_entry:\n"
	"	push %rbx\n"
	"	call helper\n"
	"	pop %rbx\n"
	"	ret\n"
	".size call_entry,.-call_entry\n");

int counter;
static long n;
static const char *stop;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *run(void *arg)
{
	long bad = 0;

	(void)arg;
	for (long i = 0; stop ? access(stop, F_OK) != 0 : i < n; i++) {
		int x = (int)(i & 0xffff);

		bad += epi_pop(x) != x + 1;
		bad += shared_ret(x) != 2 * x;
		bad += jcc_ret(x - 1) != (x >= 1 ? x : 0);
		bad += call_entry(x) != x + 2;
		pthread_mutex_lock(&lock);
		int before = counter;

		bad += rip_ret(1) != before + 1;
		pthread_mutex_unlock(&lock);
	}
	return (void *)bad;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[16];
	long bad = 0;

	n = argc > 1 ? atol(argv[1]) : 3;
	stop = argc > 3 ? argv[3] : NULL;
	if (threads < 1 || threads > 16)
		threads = 1;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (int i = 0; i < threads; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("counter %d bad %ld\n", counter, bad);
	return bad != 0;
}
