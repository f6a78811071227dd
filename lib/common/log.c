/* SPDX-License-Identifier: MIT */
/* One-line messages on stderr (log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <utrace/utrace.h>

#include "log.h"

void utrace__warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	memcpy(buf, "utrace: ", 8);
	va_start(ap, fmt);
	n = vsnprintf(buf + 8, sizeof(buf) - 9, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n += 8;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(2, buf, (size_t)n);
}

const char *utrace__strerror(int err)
{
	switch (err) {
#define UTRACE__ERR_CASE(name, code, msg) case code: return msg;
	UTRACE_ERRNO_MAP(UTRACE__ERR_CASE)
#undef UTRACE__ERR_CASE
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}
