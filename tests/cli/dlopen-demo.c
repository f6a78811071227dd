/* SPDX-License-Identifier: MIT */
/*
 * A program without events of its own that loads a library with events
 * (dlib, linked against libutrace.so like the program) twice:
 *   dlopen-demo LIB N  -> for each of 2 rounds: dlopen, fire N, dlclose
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int round;

	if (argc != 3)
		return 2;
	for (round = 0; round < 2; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*fire)(int);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		*(void **)&fire = dlsym(h, "dlib_fire");
		if (!fire)
			return 1;
		fire(atoi(argv[2]));
		if (dlclose(h))
			return 1;
	}
	printf("done\n");
	return 0;
}
