/* SPDX-License-Identifier: MIT */
/*
 * A plain program, not built with utrace, whose function into() jumps
 * into the middle of covered(), 4 bytes past its entry: a 5-byte jump
 * placed at covered's entry covers that address (t3000; glibc's mempcpy
 * does the same to memcpy).  No libc function is involved in the jump.
 * jump-into-prog N: calls both N times, prints the sums.
 */
#include <stdio.h>
#include <stdlib.h>

int covered(int x);
int into(int x);

__asm__(".text\n"
	".globl covered\n"
	".type covered, @function\n"
	"covered:\n"
	"	mov %edi, %eax\n"	/* 2 bytes */
	"	inc %eax\n"		/* 2 bytes */
	".Linto:\n"			/* covered+4 */
	"	add $2, %eax\n"		/* 3 bytes */
	"	ret\n"
	".size covered, .-covered\n"
	".globl into\n"
	".type into, @function\n"
	"into:\n"
	"	lea 100(%rdi), %eax\n"
	"	jmp .Linto\n"
	".size into, .-into\n");

/* called through these, so that nothing is inlined or specialised */
static int (*volatile covered_p)(int) = covered;
static int (*volatile into_p)(int) = into;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, a = 0, b = 0;

	for (long i = 0; i < n; i++) {
		a += covered_p((int)i);
		b += into_p((int)i);
	}
	printf("covered %ld into %ld\n", a, b);
	return 0;
}
