/* SPDX-License-Identifier: MIT */
/* The reader library's version and messages (utrace/reader.h). */
#include <string.h>

#include <utrace/reader.h>
#include <utrace/utrace.h>

const char *utrace_reader_version(void)
{
	return utrace__stringify(UTRACE_VERSION_MAJOR) "."
	       utrace__stringify(UTRACE_VERSION_MINOR) "."
	       utrace__stringify(UTRACE_VERSION_PATCH);
}

const char *utrace_reader_strerror(int err)
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
