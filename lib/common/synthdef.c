/* SPDX-License-Identifier: MIT */
/*
 * Synthetic event definitions (synthdef.h), in the rules of the kernel's
 * trace_events_synth.c: parse_synth_field(), __create_synth_event(),
 * synth_event_define_fields(), __set_synth_event_print_fmt() and
 * trace_event_raw_event_synth().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthdef.h"

#define STR_SLOT UTRACE__SYNTH_STR_SLOT

/* synth_field_size(): 0 for a type it does not know. */
static unsigned int type_size(const char *t)
{
	static const struct { const char *type; unsigned int size; } sizes[] = {
		{ "s64", 8 }, { "u64", 8 }, { "s32", 4 }, { "u32", 4 }, { "s16", 2 },
		{ "u16", 2 }, { "s8", 1 }, { "u8", 1 }, { "char", 1 }, { "unsigned char", 1 },
		{ "int", 4 }, { "unsigned int", 4 }, { "long", 8 }, { "unsigned long", 8 },
		{ "bool", 1 }, { "pid_t", 4 }, { "gfp_t", 4 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(t, sizes[i].type))
			return sizes[i].size;
	return 0;
}

/* synth_field_fmt() */
static const char *type_fmt(const char *t)
{
	static const struct { const char *type, *fmt; } fmts[] = {
		{ "s64", "%lld" }, { "s32", "%d" }, { "u32", "%u" }, { "s16", "%d" },
		{ "u16", "%u" }, { "s8", "%d" }, { "u8", "%u" }, { "char", "%d" },
		{ "unsigned char", "%u" }, { "int", "%d" }, { "unsigned int", "%u" },
		{ "long", "%ld" }, { "unsigned long", "%lu" }, { "bool", "%d" },
		{ "pid_t", "%d" }, { "gfp_t", "%x" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
		if (!strcmp(t, fmts[i].type))
			return fmts[i].fmt;
	if (strstr(t, "char["))
		return "%s";
	return "%llu";
}

/* is_good_name() */
bool utrace__synth_good_name(const char *n)
{
	if (!*n || !(*n == '_' || (*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z')))
		return false;
	for (; *n; n++)
		if (!(*n == '_' || (*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9')))
			return false;
	return true;
}

/* The error_log entry: "synthetic_events: error: MSG\n  Command: CMD\n" and
 * the caret under the first occurrence of 'at' (the kernel's err_pos()). */
int utrace__synth_refuse(char **log, const char *cmd, const char *msg, const char *at, int err)
{
	const char *p = at ? strstr(cmd, at) : NULL;
	int pos = p ? (int)(p - cmd) : 0;

	if (asprintf(log, "synthetic_events: error: %s\n  Command: %s\n%*s^\n", msg, cmd,
		     11 + pos, "") < 0)
		*log = NULL;
	return err;
}

/*
 * synth_field_string_size(): N of "char[N]" (1 to STR_SLOT), 0 for "char[]"
 * (a dynamic string), -1 for a bad array.
 */
static int string_size(const char *type)
{
	const char *start = strstr(type, "char["), *end;
	unsigned long n;
	char *stop;

	start += sizeof("char[") - 1;
	end = strchr(type, ']');
	if (!end || end < start || end[1] || end - start > 3)
		return -1;
	if (end == start)
		return 0;
	n = strtoul(start, &stop, 0);
	if (stop != end || n > STR_SLOT)
		return -1;
	return (int)n;
}

/*
 * One field out of the words of a ';' part: "[unsigned] TYPE NAME[ARRAY]"
 * (parse_synth_field()).  Several fields in one part apart by white space
 * only are the kernel's older syntax, which it still takes.
 */
static int parse_field(struct utrace__synth_def *s, char **argv, unsigned int argc,
		       unsigned int *used, const char *cmd, char **log)
{
	struct utrace__synth_field *f = &s->f[s->nr];
	const char *prefix = "", *type = argv[0], *name, *array;
	int len, n;

	if (!strcmp(type, "unsigned")) {
		if (argc < 3)
			return utrace__synth_refuse(log, cmd, "Incomplete type", type, -EINVAL);
		prefix = "unsigned ";
		type = argv[1];
		name = argv[2];
		*used += 3;
	} else {
		name = argc > 1 ? argv[1] : NULL;
		*used += 2;
	}
	if (!name)
		return utrace__synth_refuse(log, cmd, "Invalid field", type, -EINVAL);
	if (s->nr == UTRACE__SYNTH_FIELDS_MAX)
		return utrace__synth_refuse(log, cmd, "Too many fields", NULL, -EINVAL);
	array = strchr(name, '[');
	len = array ? (int)(array - name) : (int)strlen(name);
	f->name = strndup(name, (size_t)len);
	if (asprintf(&f->type, "%s%s%s", prefix, type, array ? array : "") < 0)
		f->type = NULL;
	s->nr++;        /* freed with the definition */
	if (!f->type || !f->name)
		return -ENOMEM;
	if (!utrace__synth_good_name(f->name))
		return utrace__synth_refuse(log, cmd, "Illegal name", name, -EINVAL);
	f->size = type_size(f->type);
	if (!f->size && strstr(f->type, "char[")) {
		n = string_size(f->type);
		if (n < 0)
			return utrace__synth_refuse(log, cmd, "Invalid array specification", name, -EINVAL);
		f->size = (unsigned int)n;
		f->is_string = true;
		if (!n) {
			/* char[]: a __data_loc string in a u64 slot
			 * (parse_synth_field()) */
			f->size = 8;
			f->is_dynamic = true;
		}
	}
	if (!f->size)
		return utrace__synth_refuse(log, cmd, "Invalid type", type, -EINVAL);
	/* synth_field_signed() */
	f->is_signed = f->type[0] != 'u' && strcmp(f->type, "gfp_t");
	return 0;
}

int utrace__synth_def_print(const struct utrace__synth_def *s, char **pfmt, char **pargs)
{
	char *fmt = NULL, *args = NULL;
	size_t nf = 0, na = 0;
	FILE *a, *b;
	unsigned int i;
	bool bad;

	a = open_memstream(&fmt, &nf);
	b = open_memstream(&args, &na);
	if (a) {
		fputc('"', a);
		for (i = 0; i < s->nr; i++)
			fprintf(a, "%s=%s%s", s->f[i].name, type_fmt(s->f[i].type),
				i + 1 < s->nr ? ", " : "");
		fputc('"', a);
	}
	for (i = 0; b && i < s->nr; i++)
		fprintf(b, s->f[i].is_dynamic ? "%s__get_str(%s)" : "%sREC->%s", i ? ", " : "",
			s->f[i].name);
	/* both closed, whatever the first says */
	bad = a ? fclose(a) != 0 : true;
	bad = (b ? fclose(b) != 0 : true) || bad;
	if (bad) {
		free(fmt);
		free(args);
		return -ENOMEM;
	}
	*pfmt = fmt;
	*pargs = args;
	return 0;
}

#define INVALID_CMD "Command must be of the form: <name> field[;field] ..."

int utrace__synth_check_command(const char *line, const char *cmd, char **log)
{
	size_t end = strcspn(line, ";"), i = 0, words = 0, n;
	char name[256];

	*log = NULL;
	/* check_command(): argv_split() of the part before the first ';' */
	while (i < end) {
		i += strspn(line + i, " \t\n");
		if (i >= end)
			break;
		words++;
		i += strcspn(line + i, " \t\n");
	}
	if (words < 3)
		return utrace__synth_refuse(log, cmd, INVALID_CMD, NULL, -EINVAL);
	n = strcspn(line, " \t");
	snprintf(name, sizeof(name), "%.*s", (int)n, line);
	if (!utrace__synth_good_name(name))
		return utrace__synth_refuse(log, cmd, "Illegal name", name, -EINVAL);
	return 0;
}

int utrace__synth_dyn_line(const char *line, const char **def, char **log)
{
	const char *name = line + 2, *blank = line + strcspn(line, " \t"), *slash;

	*log = NULL;
	*def = NULL;
	if (!*blank)
		return utrace__synth_refuse(log, line, INVALID_CMD, NULL, -EINVAL);
	slash = strchr(name, '/');
	if (slash) {
		if (strncmp(name, "synthetic/", 10))
			return utrace__synth_refuse(log, line, "Command must be of the form: s or "
						    "-:[synthetic/]<name> field[;field] ...",
						    NULL, -EINVAL);
		name += 10;
	}
	*def = name;
	return 0;
}

int utrace__synth_def_parse(const char *line, struct utrace__synth_def *s, char **log)
{
	return utrace__synth_def_parse_cmd(line, line, s, log);
}

int utrace__synth_def_parse_cmd(const char *line, const char *cmd, struct utrace__synth_def *s,
				char **log)
{
	char *buf = strdup(line), *rest, *part, *save = NULL;
	unsigned int i, off;
	int r = -ENOMEM;

	memset(s, 0, sizeof(*s));
	*log = NULL;
	if (!buf)
		return -ENOMEM;
	r = utrace__synth_check_command(line, cmd, log);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	rest = buf + strcspn(buf, " \t");
	if (*rest)
		*rest++ = 0;
	s->name = strdup(buf);
	if (!s->name)
		goto out;
	for (part = strtok_r(rest, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
		char *argv[2 * UTRACE__SYNTH_FIELDS_MAX + 2], *w, *wsave = NULL;
		unsigned int argc = 0, used = 0;

		for (w = strtok_r(part, " \t", &wsave); w; w = strtok_r(NULL, " \t", &wsave)) {
			if (argc == sizeof(argv) / sizeof(argv[0]) - 1) {
				r = utrace__synth_refuse(log, cmd, "Too many fields", NULL, -EINVAL);
				goto out;
			}
			argv[argc++] = w;
		}
		argv[argc] = NULL;
		while (used < argc) {
			r = parse_field(s, argv + used, argc - used, &used, cmd, log);
			if (r < 0)
				goto out;
		}
	}
	if (!s->nr) {
		r = utrace__synth_refuse(log, cmd, INVALID_CMD, NULL, -EINVAL);
		goto out;
	}
	/* synth_event_define_fields(): a u64 slot each, STR_SLOT bytes for
	 * a char[N] */
	off = 8;
	for (i = 0; i < s->nr; i++) {
		struct utrace__synth_field *f = &s->f[i];

		f->offset = off;
		off += f->is_string && !f->is_dynamic ? STR_SLOT : 8;
		if (off > UTRACE_EVENT_MAX) {
			r = utrace__synth_refuse(log, cmd, "Too many fields", NULL, -EINVAL);
			goto out;
		}
		s->ef[i] = (struct utrace_event_field){ f->type, f->name, (int)f->offset,
							(int)f->size, f->is_signed,
							UTRACE_FIELD_PLAIN, 0 };
		if (f->is_dynamic) {
			/* "__data_loc char[] name", size 8, signed 1 */
			s->ef[i] = (struct utrace_event_field){ "char", f->name, (int)f->offset, 8, 1,
								UTRACE_FIELD_STRING, 0 };
			s->nr_dynamic++;
		} else if (f->is_string) {
			/* "char comm[16]" in the format, as the kernel's f_show() */
			s->ef[i] = (struct utrace_event_field){ "char", f->name, (int)f->offset,
								(int)f->size, 1, UTRACE_FIELD_ARRAY,
								(int)f->size };
		}
	}
	s->struct_size = off;
	r = 0;
out:
	free(buf);
	return r;
}

void utrace__synth_def_fini(struct utrace__synth_def *s)
{
	unsigned int i;

	for (i = 0; i < s->nr; i++) {
		free(s->f[i].type);
		free(s->f[i].name);
	}
	free(s->name);
	memset(s, 0, sizeof(*s));
}

/* A char[] value's bytes with its NUL, or 0 for none (trace_string()'s
 * fetch_store_strlen()). */
static unsigned int dyn_len(const uint64_t v)
{
	const char *str = (const char *)(uintptr_t)v;

	return str ? (unsigned int)strnlen(str, STR_SLOT - 1) + 1 : 0;
}

unsigned int utrace__synth_def_size(const struct utrace__synth_def *s, const uint64_t *vals)
{
	unsigned int i, size = s->struct_size;

	for (i = 0; s->nr_dynamic && i < s->nr; i++)
		if (s->f[i].is_dynamic)
			size += dyn_len(vals[i]);
	return size < UTRACE_EVENT_MAX ? size : UTRACE_EVENT_MAX;
}

void utrace__synth_def_fill(const struct utrace__synth_def *s, unsigned char *rec,
			    unsigned int size, const uint64_t *vals)
{
	unsigned int i, data = s->struct_size;

	memset(rec + 8, 0, size - 8);
	for (i = 0; i < s->nr; i++) {
		/* the value's low bytes (trace_event_raw_event_synth()) */
		unsigned char *at = rec + s->f[i].offset;
		uint8_t b = (uint8_t)vals[i];
		uint16_t h = (uint16_t)vals[i];
		uint32_t w = (uint32_t)vals[i];
		const char *str = (const char *)(uintptr_t)vals[i];

		if (s->f[i].is_dynamic) {
			/* after the fixed part, as much as the record has */
			unsigned int n = dyn_len(vals[i]);

			if (n > size - data)
				n = size - data;
			if (n) {
				memcpy(rec + data, str, n - 1);
				rec[data + n - 1] = 0;
			}
			w = data | n << 16;
			memcpy(at, &w, 4);
			data += n;
			continue;
		}
		if (s->f[i].is_string) {
			/* trace_string(): a NUL-terminated copy, strscpy() */
			if (str)
				memcpy(at, str, strnlen(str, STR_SLOT - 1));
			continue;
		}
		switch (s->f[i].size) {
		case 1:
			memcpy(at, &b, 1);
			break;
		case 2:
			memcpy(at, &h, 2);
			break;
		case 4:
			memcpy(at, &w, 4);
			break;
		default:
			memcpy(at, &vals[i], 8);
		}
	}
}
