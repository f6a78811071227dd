/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for the probe engine (lib/probe/engine.h) while libutrace is
 * built without it (t0085): "attaching" only remembers the handler, and
 * the program calls fake_fire() with the registers it would have at the
 * probed address (tests/cli/probe-fake-prog.c).  Preloaded after
 * libutrace, its functions take the place of libutrace's weak, absent
 * ones.  The front end's path (definitions, events, records, the mount's
 * files) is then the real one; only placing code is not.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"

#define SITES 64

struct utrace__probe_site {
	uintptr_t addr;
	utrace_probe_handler_fn fn;
	void *data;
	int used;
};

static struct utrace__probe_site sites[SITES];

void fake_fire(uintptr_t addr, struct utrace_probe_regs *regs);

int utrace__probe_attach(uintptr_t addr, uintptr_t func, size_t func_len,
			 utrace_probe_handler_fn fn, void *data,
			 struct utrace__probe_site **site, char why[UTRACE_PROBE_WHY_MAX])
{
	(void)func;
	(void)func_len;
	for (int i = 0; i < SITES; i++) {
		if (__atomic_load_n(&sites[i].used, __ATOMIC_ACQUIRE))
			continue;
		sites[i].addr = addr;
		sites[i].fn = fn;
		sites[i].data = data;
		__atomic_store_n(&sites[i].used, 1, __ATOMIC_RELEASE);
		*site = &sites[i];
		return 0;
	}
	strcpy(why, "no room");
	return -ENOMEM;
}

int utrace__probe_detach(struct utrace__probe_site *site)
{
	__atomic_store_n(&site->used, 0, __ATOMIC_RELEASE);
	return 0;
}

/* One exit: the function's address + 1000 stands for its ret. */
int utrace__probe_decode_exits(const uint8_t *code, size_t len, uint64_t func,
			       uint64_t *exits, size_t max, size_t *n,
			       char why[UTRACE_PROBE_WHY_MAX])
{
	(void)code;
	(void)len;
	(void)why;
	*n = 1;
	if (max)
		exits[0] = func + 1000;
	return 0;
}

size_t utrace__probe_read(void *dst, uintptr_t src, size_t n)
{
	if (src < 4096)
		return 0;
	memcpy(dst, (const void *)src, n);
	return n;
}

long utrace__probe_read_str(char *dst, uintptr_t src, size_t max)
{
	size_t n;

	if (src < 4096)
		return -EFAULT;
	n = strnlen((const char *)src, max - 1);
	memcpy(dst, (const void *)src, n);
	dst[n] = '\0';
	return (long)n + 1;
}

void fake_fire(uintptr_t addr, struct utrace_probe_regs *regs)
{
	regs->ip = addr;
	for (int i = 0; i < SITES; i++)
		if (__atomic_load_n(&sites[i].used, __ATOMIC_ACQUIRE) && sites[i].addr == addr)
			sites[i].fn(sites[i].data, regs);
}
