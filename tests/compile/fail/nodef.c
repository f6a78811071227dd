/* SPDX-License-Identifier: MIT */
/*
 * Must fail to link: fires a tracepoint of sample-trace.h, but no
 * translation unit of the program defines CREATE_TRACE_POINTS for it.
 * The linker must name __tracepoint_foo_plain or __traceiter_foo_plain.
 * (Control: linked together with ctp.o it links.)
 */
#include "sample-trace.h"

int main(void)
{
	trace_foo_plain(1);
	return 0;
}
