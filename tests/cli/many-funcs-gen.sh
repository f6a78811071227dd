#!/usr/bin/env bash
# many-funcs-gen.sh N FILE.c: a program of N functions fn_0..fn_N-1 (each
# returns x * (i + 1) + 1) whose main calls them all in rounds and prints
# "ROUND SUM" after each: ./prog R runs R rounds, ./prog -1 a round every
# 10 ms until killed.  Round r sums to r * N(N+1)/2 + N.  (t3131)
set -eu
n=$1
{
	echo "#include <stdio.h>"
	echo "#include <stdlib.h>"
	echo "#include <unistd.h>"
	echo "#define F(i) int fn_##i(int x); __attribute__((noinline)) int fn_##i(int x) { __asm__ volatile(\"\" : \"+r\"(x)); return x * (i + 1) + 1; }"
	for ((i = 0; i < n; i++)); do echo "F($i)"; done
	echo "typedef int (*fn_t)(int);"
	echo "static fn_t fns[] = {"
	for ((i = 0; i < n; i++)); do echo "fn_$i,"; done
	echo "};"
	echo "int main(int argc, char **argv)"
	echo "{"
	echo "	int rounds = argc > 1 ? atoi(argv[1]) : 1;"
	echo "	for (int r = 0; rounds < 0 || r < rounds; r++) {"
	echo "		long s = 0;"
	echo "		for (unsigned i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)"
	echo "			s += fns[i](r);"
	echo "		printf(\"%d %ld\\n\", r, s);"
	echo "		fflush(stdout);"
	echo "		if (rounds < 0)"
	echo "			usleep(10000);"
	echo "	}"
	echo "	return 0;"
	echo "}"
} > "$2"
