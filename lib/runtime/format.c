/* SPDX-License-Identifier: MIT */
/*
 * Format text (events/<sys>/<ev>/format) and TRACE_DEFINE_ENUM replacement,
 * both as the kernel writes them.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void bprintf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	if (!b->s) {
		b->cap = 256;
		b->s = malloc(b->cap);
		if (!b->s) {
			b->oom = true;
			return;
		}
	}
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = (b->cap + (size_t)n + 1) * 2;
		char *s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

/* Append the n bytes at s (no vsnprintf: a process of 50,000 events
 * writes 50,000 formats when they are kept at exit). */
static void bput(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->cap - b->len <= n || !b->s) {
		size_t cap = (b->cap + n + 1) * 2;
		char *p = realloc(b->s, cap < 256 ? 256 : cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap < 256 ? 256 : cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

/* The common fields' lines, the same in every format (the kernel's
 * struct trace_entry). */
static const char common_lines[] =
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

static void field_line(struct buf *b, const struct utrace_event_field *f)
{
	bprintf(b, "\tfield:");
	switch (f->kind) {
	case UTRACE_FIELD_ARRAY:
		bprintf(b, "%s %s[%d];", f->type, f->name, f->array_len);
		break;
	case UTRACE_FIELD_DYNAMIC:
	case UTRACE_FIELD_STRING:
		bprintf(b, "__data_loc %s[] %s;", f->type, f->name);
		break;
	case UTRACE_FIELD_CPUMASK:
		bprintf(b, "__data_loc %s %s;", f->type, f->name);
		break;
	case UTRACE_FIELD_REL:
		bprintf(b, "__rel_loc %s[] %s;", f->type, f->name);
		break;
	case UTRACE_FIELD_REL_CPUMASK:
		bprintf(b, "__rel_loc %s %s;", f->type, f->name);
		break;
	case UTRACE_FIELD_FLEX:
		bprintf(b, "%s %s[];", f->type, f->name);
		break;
	default:
		bprintf(b, "%s %s;", f->type, f->name);
		break;
	}
	bprintf(b, "\toffset:%d;\tsize:%d;\tsigned:%d;\n", f->offset, f->size,
		f->is_signed ? 1 : 0);
}

char *utrace__format_text(const struct utrace_event *ev)
{
	const struct utrace__event_state *st = ev->priv;
	struct buf b = { 0 };
	size_t i;

	bprintf(&b, "name: %s\nID: %d\nformat:\n", ev->name, ev->id);
	bput(&b, common_lines, sizeof(common_lines) - 1);
	bput(&b, "\n", 1);
	for (i = 0; i < st->nr_fields; i++)
		field_line(&b, &st->fields[i]);
	bprintf(&b, "\nprint fmt: %s\n", st->print_fmt);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* Replace the map's name at p (len bytes) with its decimal value. */
static char *replace_at(char *fmt, size_t at, size_t len, long value,
			size_t *next)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%ld", value);
	size_t rest = strlen(fmt + at + len);
	char *s = malloc(at + (size_t)n + rest + 1);

	if (!s)
		return NULL;
	memcpy(s, fmt, at);
	memcpy(s + at, num, (size_t)n);
	memcpy(s + at + (size_t)n, fmt + at + len, rest + 1);
	free(fmt);
	*next = at + (size_t)n;
	return s;
}

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/*
 * The kernel's update_event_printk(): outside quoted strings, a whole word
 * equal to a map's name becomes the map's value; numbers and member names
 * after "." or "->" (REC->field) are skipped.
 */
static char *replace_one(char *fmt, const struct utrace_eval_map *map)
{
	size_t len = strlen(map->name), i = 0;
	bool quote = false;

	while (fmt && fmt[i]) {
		char c = fmt[i];

		if (c == '\\') {
			i += fmt[i + 1] ? 2 : 1;
			continue;
		}
		if (c == '"') {
			quote = !quote;
			i++;
			continue;
		}
		if (quote) {
			i++;
			continue;
		}
		if (isdigit((unsigned char)c)) {
			while (isalnum((unsigned char)fmt[i]))
				i++;
			continue;
		}
		if (isalpha((unsigned char)c) || c == '_') {
			if (strncmp(fmt + i, map->name, len) == 0 &&
			    !ident_char(fmt[i + len])) {
				fmt = replace_at(fmt, i, len, (long)map->value, &i);
				continue;
			}
			for (;;) {
				while (ident_char(fmt[i]))
					i++;
				if (fmt[i] == '.')
					i++;
				else if (fmt[i] == '-' && fmt[i + 1] == '>')
					i += 2;
				else
					break;
			}
			continue;
		}
		i++;
	}
	return fmt;
}

char *utrace__eval_replace(const char *fmt,
			   const struct utrace_eval_map *const *start,
			   const struct utrace_eval_map *const *stop,
			   const char *system)
{
	char *s = strdup(fmt);

	for (; s && start && start < stop; start++)
		if (*start && strcmp((*start)->system, system) == 0)
			s = replace_one(s, *start);
	return s;
}
