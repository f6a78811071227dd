// SPDX-License-Identifier: MIT
// A plain C++ program, not built with utrace, for return probes left by
// an exception (t0087): thrower(0..3) throws through mid(x) for odd x
// (mid is not left by its ret), returns 5 * x for even x; mid returns
// that + 1; then mid(8) and mid(10) (thrower(0), thrower(2)) return.
#include <cstdio>
#include <stdexcept>

extern "C" int thrower(int x);
extern "C" int mid(int x);

static volatile int sink;

extern "C" __attribute__((noinline)) int thrower(int x)
{
	if (x & 1)
		throw std::runtime_error("odd");
	return 5 * x + sink;
}

// thrower is not its tail call: mid works after it
extern "C" __attribute__((noinline)) int mid(int x)
{
	int r = thrower(x & ~0x8);

	sink = sink + 0;
	return r + 1;
}

static int (*volatile mid_p)(int) = mid;

int main()
{
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	for (int x = 0; x < 4; x++) {
		try {
			std::printf("mid(%d)=%d\n", x, mid_p(x));
		} catch (const std::exception &e) {
			std::printf("mid(%d) threw %s\n", x, e.what());
		}
	}
	int a = mid_p(8);
	int b = mid_p(10);

	std::printf("mid(8)=%d mid(10)=%d\n", a, b);
	return 0;
}
