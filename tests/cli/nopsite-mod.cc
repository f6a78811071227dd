// SPDX-License-Identifier: MIT
// A C++ module with an event of its own, dlopen()ed by nopsite-demo (t0093).
#include <cstdio>

#define NOPSITE_MOD
#define CREATE_TRACE_POINTS
#include "nopsite-events.h"
#include "nopsite-sites.h"

namespace {
struct counter {
	int hits = 0;
};
counter mod_counter;

void on_mod(void *data, int n)
{
	static_cast<counter *>(data)->hits += n >= 0;
}
} // namespace

extern "C" void nopsite_mod_fire(int n);
extern "C" void nopsite_mod_sites(FILE *f);
extern "C" int nopsite_mod_probe(int on);

void nopsite_mod_fire(int n)
{
	trace_nop_mod(n);
}

void nopsite_mod_sites(FILE *f)
{
	nopsite_print(f, "mod");
}

// on: attach the counting probe; off: detach it.  Returns the hits so far.
int nopsite_mod_probe(int on)
{
	if (on)
		register_trace_nop_mod(on_mod, &mod_counter);
	else
		unregister_trace_nop_mod(on_mod, &mod_counter);
	return mod_counter.hits;
}
