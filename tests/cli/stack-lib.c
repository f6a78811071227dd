/* SPDX-License-Identifier: MIT */
/*
 * The middle of a known call chain for stack-demo (t3060): built twice,
 * as a library the program links with (SDLIB=sdlib) and as a module it
 * dlopen()s (SDLIB=sddl), so that both kinds of object appear by name in
 * a stack.  The callback fires the program's event.
 */
#define SD_NAME2(a, b) a##b
#define SD_NAME(a, b) SD_NAME2(a, b)
#define BARRIER() __asm__ volatile("" ::: "memory")

void SD_NAME(SDLIB, _outer)(void (*cb)(int), int where);

__attribute__((noinline)) static void SD_NAME(SDLIB, _inner)(void (*cb)(int), int where)
{
	cb(where);
	BARRIER();
}

__attribute__((noinline)) void SD_NAME(SDLIB, _outer)(void (*cb)(int), int where)
{
	SD_NAME(SDLIB, _inner)(cb, where);
	BARRIER();
}
