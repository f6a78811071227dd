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

static void bstr(struct buf *b, const char *s)
{
	bput(b, s, strlen(s));
}

static void bint(struct buf *b, int v)
{
	char num[16], *p = num + sizeof(num);
	unsigned int u = v < 0 ? 0u - (unsigned int)v : (unsigned int)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	bput(b, p, (size_t)(num + sizeof(num) - p));
}

static void field_line(struct buf *b, const struct utrace_event_field *f)
{
	static const char *const before[] = {
		[UTRACE_FIELD_DYNAMIC] = "__data_loc ", [UTRACE_FIELD_STRING] = "__data_loc ",
		[UTRACE_FIELD_CPUMASK] = "__data_loc ", [UTRACE_FIELD_REL] = "__rel_loc ",
		[UTRACE_FIELD_REL_CPUMASK] = "__rel_loc ",
	};
	unsigned int k = (unsigned int)f->kind;

	bstr(b, "\tfield:");
	if (k < sizeof(before) / sizeof(before[0]) && before[k])
		bstr(b, before[k]);
	bstr(b, f->type);
	switch (f->kind) {
	case UTRACE_FIELD_DYNAMIC:
	case UTRACE_FIELD_STRING:
	case UTRACE_FIELD_REL:
		bstr(b, "[] ");
		bstr(b, f->name);
		break;
	case UTRACE_FIELD_ARRAY:
		bstr(b, " ");
		bstr(b, f->name);
		bstr(b, "[");
		bint(b, f->array_len);
		bstr(b, "]");
		break;
	case UTRACE_FIELD_FLEX:
		bstr(b, " ");
		bstr(b, f->name);
		bstr(b, "[]");
		break;
	default:  /* plain, CPUMASK, REL_CPUMASK */
		bstr(b, " ");
		bstr(b, f->name);
		break;
	}
	bstr(b, ";\toffset:");
	bint(b, f->offset);
	bstr(b, ";\tsize:");
	bint(b, f->size);
	bstr(b, f->is_signed ? ";\tsigned:1;\n" : ";\tsigned:0;\n");
}

char *utrace__format_text(const struct utrace_event *ev)
{
	const struct utrace__event_state *st = ev->priv;
	struct buf b = { 0 };
	size_t i;

	bstr(&b, "name: ");
	bstr(&b, ev->name);
	bstr(&b, "\nID: ");
	bint(&b, ev->id);
	bstr(&b, "\nformat:\n");
	bput(&b, common_lines, sizeof(common_lines) - 1);
	bput(&b, "\n", 1);
	for (i = 0; i < st->nr_fields; i++)
		field_line(&b, &st->fields[i]);
	bstr(&b, "\nprint fmt: ");
	bstr(&b, st->print_fmt);
	bput(&b, "\n", 1);
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
