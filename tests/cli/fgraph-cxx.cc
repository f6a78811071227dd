// SPDX-License-Identifier: MIT
/*
 * C++ exceptions through functions the function_graph tracer hooked
 * (t3043): built with -fpatchable-function-entry=5, without utrace.  A
 * throw through a frame with a destructor (a cleanup landing pad), caught
 * two frames up; a rethrow from a function called in a catch block; the
 * same calls without throwing after.  Prints what it computed.
 */
#include <cstdio>
#include <stdexcept>

#define NOINLINE __attribute__((noinline))

static volatile int sink;

struct Guard {
	int *n;
	explicit Guard(int *p) : n(p) {}
	~Guard() { ++*n; }
};

NOINLINE int leafx(int x);
NOINLINE int thrower(int x);
NOINLINE int middle(int x, int *dtors);
NOINLINE int catcher(int x, int *dtors);
NOINLINE void rethrower();
NOINLINE int rethrow_catcher();

NOINLINE int leafx(int x)
{
	sink++;
	return x + 1;
}

NOINLINE int thrower(int x)
{
	if (x)
		throw std::runtime_error("thrown");
	return leafx(x);
}

NOINLINE int middle(int x, int *dtors)
{
	Guard g(dtors);

	return thrower(x) + 1;
}

NOINLINE int catcher(int x, int *dtors)
{
	try {
		return middle(x, dtors);
	} catch (const std::exception &) {
		return leafx(100);
	}
}

NOINLINE void rethrower()
{
	throw;
}

NOINLINE int rethrow_catcher()
{
	try {
		try {
			thrower(1);
		} catch (...) {
			rethrower();
		}
	} catch (const std::runtime_error &) {
		return leafx(7);
	}
	return 0;
}

int main()
{
	int dtors = 0, sum = 0;

	for (int i = 0; i < 3; i++)
		sum += catcher(1, &dtors) + catcher(0, &dtors);
	sum += rethrow_catcher();
	std::printf("sum=%d dtors=%d\n", sum, dtors);
	return 0;
}
