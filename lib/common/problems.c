/* SPDX-License-Identifier: MIT */
/* "The first problem, then a count", and what the libraries say (problems.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problems.h"

#define KEPT_MAX 65536

static void (*printer)(const char *text);
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static char *kept;
static size_t kept_len;

void utrace__set_printer(void (*print)(const char *text))
{
	__atomic_store_n(&printer, print, __ATOMIC_RELEASE);
}

static void keep_text(const char *text)
{
	size_t n = strlen(text);
	char *k;

	pthread_mutex_lock(&kept_lock);
	if (kept_len + n <= KEPT_MAX && (k = realloc(kept, kept_len + n + 1))) {
		memcpy(k + kept_len, text, n + 1);
		kept = k;
		kept_len += n;
	}
	pthread_mutex_unlock(&kept_lock);
}

void utrace__vsay(const char *fmt, va_list ap)
{
	void (*print)(const char *) = __atomic_load_n(&printer, __ATOMIC_ACQUIRE);
	char small[1024], *text = NULL;
	va_list aq;

	va_copy(aq, ap);
	if (vasprintf(&text, fmt, aq) < 0) {
		text = NULL;
		vsnprintf(small, sizeof(small), fmt, ap);
	}
	va_end(aq);
	if (print)
		print(text ? text : small);
	else
		keep_text(text ? text : small);
	free(text);
}

void utrace__say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	utrace__vsay(fmt, ap);
	va_end(ap);
}

char *utrace__said_take(void)
{
	char *k;

	pthread_mutex_lock(&kept_lock);
	k = kept;
	kept = NULL;
	kept_len = 0;
	pthread_mutex_unlock(&kept_lock);
	return k;
}

void utrace__vproblem(struct utrace__problems *p, const char *fmt, va_list ap)
{
	char msg[480], *m;
	va_list aq;

	p->count++;
	if (p->keep && p->keep_len) {
		va_copy(aq, ap);
		vsnprintf(p->keep, p->keep_len, fmt, aq);
		va_end(aq);
	}
	if (p->quiet || p->shown >= (p->max ? p->max : 1))
		return;
	p->shown++;
	if (p->say) {
		vsnprintf(msg, sizeof(msg), fmt, ap);
		p->say(msg);
		return;
	}
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	utrace__say("utrace: %s\n", m ? m : "out of memory");
	free(m);
}

void utrace__problem(struct utrace__problems *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	utrace__vproblem(p, fmt, ap);
	va_end(ap);
}

void utrace__problems_count(struct utrace__problems *p, uint64_t n)
{
	p->count += n;
}

uint64_t utrace__problems_more(const struct utrace__problems *p)
{
	return p->count > p->shown ? p->count - p->shown : 0;
}

void utrace__problems_end(const struct utrace__problems *p, const char *file,
			  const char *consequence)
{
	uint64_t more = utrace__problems_more(p);

	if (more && !p->quiet)
		utrace__say("utrace: '%s': %llu more problems: %s\n", file,
			    (unsigned long long)more, consequence);
}
