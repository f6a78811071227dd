/* SPDX-License-Identifier: MIT */
/* A library with events, for the dlopen/dlclose tests. */
#define CREATE_TRACE_POINTS
#include "dlib-events.h"

int dlib_fire(int n);

int dlib_fire(int n)
{
	int i;

	for (i = 0; i < n; i++)
		trace_dlib_hello(i, "dlib");
	return n;
}
