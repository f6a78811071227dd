/* SPDX-License-Identifier: MIT */
/*
 * OTLP's JSON encoding into its protobuf encoding (otlp-pb.h).
 *
 * The JSON is parsed by a recursive descent driven by tables of the
 * messages utrace sends, each field with its JSON name (lowerCamelCase),
 * its number and its type, after the .proto files of opentelemetry-proto
 * (tests/data/opentelemetry-proto/, which the tests decode every body
 * with).  OTLP's JSON mapping: 64-bit integers as decimal strings (or
 * numbers), enums as numbers, traceId/spanId/parentSpanId as hex
 * (not base64), bytesValue as base64.  Each value is written as it is
 * read, embedded messages with utrace__pb_begin()/utrace__pb_end():
 * no tree is built.  A JSON member the message does not have is an
 * error, not skipped: the exporter made it, and a collector would drop
 * it silently.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "otlp-pb.h"
#include "protobuf.h"

enum kind {
	K_MSG,          /* an embedded message (m) */
	K_STR,          /* string */
	K_HEX,          /* bytes, hex in JSON (trace and span ids) */
	K_B64,          /* bytes, base64 in JSON */
	K_FIXED64,      /* fixed64 */
	K_FIXED32,      /* fixed32 */
	K_INT,          /* int64, int32, uint32, enum: a varint */
	K_BOOL,
	K_DOUBLE,
};

struct msg;

struct field {
	const char *json;
	uint32_t num;
	enum kind k;
	const struct msg *m;
};

struct msg {
	const struct field *f;
	size_t n;
};

#define MSG(name, ...) \
	static const struct field name##_f[] = { __VA_ARGS__ }; \
	static const struct msg name = { name##_f, sizeof(name##_f) / sizeof(name##_f[0]) }

/* common/v1/common.proto: AnyValue and KeyValue refer to each other */
static const struct msg any_value, key_value;

MSG(array_value, { "values", 1, K_MSG, &any_value });
MSG(kvlist_value, { "values", 1, K_MSG, &key_value });
static const struct field any_value_f[] = {
	{ "stringValue", 1, K_STR, NULL }, { "boolValue", 2, K_BOOL, NULL },
	{ "intValue", 3, K_INT, NULL }, { "doubleValue", 4, K_DOUBLE, NULL },
	{ "arrayValue", 5, K_MSG, &array_value }, { "kvlistValue", 6, K_MSG, &kvlist_value },
	{ "bytesValue", 7, K_B64, NULL },
};
static const struct msg any_value = { any_value_f, 7 };
static const struct field key_value_f[] = {
	{ "key", 1, K_STR, NULL }, { "value", 2, K_MSG, &any_value },
};
static const struct msg key_value = { key_value_f, 2 };
MSG(scope, { "name", 1, K_STR, NULL }, { "version", 2, K_STR, NULL },
    { "attributes", 3, K_MSG, &key_value }, { "droppedAttributesCount", 4, K_INT, NULL });
/* resource/v1/resource.proto */
MSG(resource, { "attributes", 1, K_MSG, &key_value },
    { "droppedAttributesCount", 2, K_INT, NULL });
/* logs/v1/logs.proto */
MSG(log_record, { "timeUnixNano", 1, K_FIXED64, NULL }, { "severityNumber", 2, K_INT, NULL },
    { "severityText", 3, K_STR, NULL }, { "body", 5, K_MSG, &any_value },
    { "attributes", 6, K_MSG, &key_value }, { "droppedAttributesCount", 7, K_INT, NULL },
    { "flags", 8, K_FIXED32, NULL }, { "traceId", 9, K_HEX, NULL },
    { "spanId", 10, K_HEX, NULL }, { "observedTimeUnixNano", 11, K_FIXED64, NULL },
    { "eventName", 12, K_STR, NULL });
MSG(scope_logs, { "scope", 1, K_MSG, &scope }, { "logRecords", 2, K_MSG, &log_record },
    { "schemaUrl", 3, K_STR, NULL });
MSG(resource_logs, { "resource", 1, K_MSG, &resource },
    { "scopeLogs", 2, K_MSG, &scope_logs }, { "schemaUrl", 3, K_STR, NULL });
/* collector/logs/v1/logs_service.proto */
MSG(logs_request, { "resourceLogs", 1, K_MSG, &resource_logs });
/* trace/v1/trace.proto */
MSG(status, { "message", 2, K_STR, NULL }, { "code", 3, K_INT, NULL });
MSG(span_event, { "timeUnixNano", 1, K_FIXED64, NULL }, { "name", 2, K_STR, NULL },
    { "attributes", 3, K_MSG, &key_value }, { "droppedAttributesCount", 4, K_INT, NULL });
MSG(span_link, { "traceId", 1, K_HEX, NULL }, { "spanId", 2, K_HEX, NULL },
    { "traceState", 3, K_STR, NULL }, { "attributes", 4, K_MSG, &key_value },
    { "droppedAttributesCount", 5, K_INT, NULL }, { "flags", 6, K_FIXED32, NULL });
MSG(span, { "traceId", 1, K_HEX, NULL }, { "spanId", 2, K_HEX, NULL },
    { "traceState", 3, K_STR, NULL }, { "parentSpanId", 4, K_HEX, NULL },
    { "name", 5, K_STR, NULL }, { "kind", 6, K_INT, NULL },
    { "startTimeUnixNano", 7, K_FIXED64, NULL }, { "endTimeUnixNano", 8, K_FIXED64, NULL },
    { "attributes", 9, K_MSG, &key_value }, { "droppedAttributesCount", 10, K_INT, NULL },
    { "events", 11, K_MSG, &span_event }, { "droppedEventsCount", 12, K_INT, NULL },
    { "links", 13, K_MSG, &span_link }, { "droppedLinksCount", 14, K_INT, NULL },
    { "status", 15, K_MSG, &status }, { "flags", 16, K_FIXED32, NULL });
MSG(scope_spans, { "scope", 1, K_MSG, &scope }, { "spans", 2, K_MSG, &span },
    { "schemaUrl", 3, K_STR, NULL });
MSG(resource_spans, { "resource", 1, K_MSG, &resource },
    { "scopeSpans", 2, K_MSG, &scope_spans }, { "schemaUrl", 3, K_STR, NULL });
/* collector/trace/v1/trace_service.proto */
MSG(traces_request, { "resourceSpans", 1, K_MSG, &resource_spans });

struct parser {
	const char *p, *end;
	struct utrace__obuf *out;
	struct utrace__obuf s;          /* a string's bytes */
	int depth;
};

#define DEPTH_MAX 64

static void ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
				   *ps->p == '\r'))
		ps->p++;
}

static bool eat(struct parser *ps, char c)
{
	ws(ps);
	if (ps->p < ps->end && *ps->p == c) {
		ps->p++;
		return true;
	}
	return false;
}

static int hexv(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void put_utf8(struct utrace__obuf *b, uint32_t cp)
{
	char t[4];
	size_t n;

	if (cp < 0x80) {
		t[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		t[0] = (char)(0xc0 | cp >> 6);
		t[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		t[0] = (char)(0xe0 | cp >> 12);
		t[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		t[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		t[0] = (char)(0xf0 | cp >> 18);
		t[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		t[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		t[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	utrace__ob_put(b, t, n);
}

static int u4(struct parser *ps, uint32_t *v)
{
	int i, h;

	if (ps->end - ps->p < 4)
		return -EINVAL;
	for (*v = 0, i = 0; i < 4; i++) {
		if ((h = hexv(ps->p[i])) < 0)
			return -EINVAL;
		*v = *v << 4 | (uint32_t)h;
	}
	ps->p += 4;
	return 0;
}

/* A JSON string's bytes into ps->s: 0 or -EINVAL. */
static int string(struct parser *ps)
{
	ps->s.len = 0;
	if (!eat(ps, '"'))
		return -EINVAL;
	while (ps->p < ps->end && *ps->p != '"') {
		const char *q = memchr(ps->p, '"', (size_t)(ps->end - ps->p)), *bs;
		uint32_t cp, lo;

		/* the run up to the closing quote or an escape, found by
		 * memchr() (most strings have no escape) */
		if (!q)
			q = ps->end;
		bs = memchr(ps->p, '\\', (size_t)(q - ps->p));
		if (bs)
			q = bs;
		utrace__ob_put(&ps->s, ps->p, (size_t)(q - ps->p));
		ps->p = q;
		if (q == ps->end || *q == '"')
			break;
		if (++ps->p == ps->end)
			return -EINVAL;
		switch (*ps->p++) {
		case '"': utrace__ob_putc(&ps->s, '"'); break;
		case '\\': utrace__ob_putc(&ps->s, '\\'); break;
		case '/': utrace__ob_putc(&ps->s, '/'); break;
		case 'b': utrace__ob_putc(&ps->s, '\b'); break;
		case 'f': utrace__ob_putc(&ps->s, '\f'); break;
		case 'n': utrace__ob_putc(&ps->s, '\n'); break;
		case 'r': utrace__ob_putc(&ps->s, '\r'); break;
		case 't': utrace__ob_putc(&ps->s, '\t'); break;
		case 'u':
			if (u4(ps, &cp))
				return -EINVAL;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u')
					return -EINVAL;
				ps->p += 2;
				if (u4(ps, &lo) || lo < 0xdc00 || lo >= 0xe000)
					return -EINVAL;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return -EINVAL;
			}
			put_utf8(&ps->s, cp);
			break;
		default:
			return -EINVAL;
		}
	}
	if (!eat(ps, '"'))
		return -EINVAL;
	return ps->s.nomem ? -ENOMEM : 0;
}

/* A number, bare or quoted (64-bit integers are strings in OTLP's JSON),
 * as its text into ps->s, NUL-terminated. */
static int number_text(struct parser *ps)
{
	ws(ps);
	if (ps->p < ps->end && *ps->p == '"')
		return string(ps) ? -EINVAL : (utrace__ob_putc(&ps->s, 0), 0);
	ps->s.len = 0;
	while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p) && *ps->p)
		utrace__ob_putc(&ps->s, *ps->p++);
	utrace__ob_putc(&ps->s, 0);
	return ps->s.len > 1 ? 0 : -EINVAL;
}

static int integer(struct parser *ps, uint64_t *v, bool sign)
{
	char *e;

	if (number_text(ps))
		return -EINVAL;
	errno = 0;
	*v = sign && ps->s.p[0] == '-' ? (uint64_t)strtoll(ps->s.p, &e, 10) :
					  strtoull(ps->s.p, &e, 10);
	return errno || *e || e == ps->s.p || (!sign && ps->s.p[0] == '-') ? -EINVAL : 0;
}

static int b64v(char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 :
	       c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' || c == '-' ? 62 :
	       c == '/' || c == '_' ? 63 : -1;
}

static int message(struct parser *ps, const struct msg *m);

/* One value of field f (an element, when f is repeated). */
static int value(struct parser *ps, const struct field *f)
{
	struct utrace__obuf *o = ps->out;
	unsigned char t[8];
	uint64_t v;
	size_t i, at;
	int r;

	switch (f->k) {
	case K_MSG:
		at = utrace__pb_begin(o, f->num);
		r = message(ps, f->m);
		utrace__pb_end(o, at);
		return r;
	case K_STR:
		if ((r = string(ps)))
			return r;
		utrace__pb_bytes(o, f->num, ps->s.p, ps->s.len);
		return 0;
	case K_HEX:
		if ((r = string(ps)))
			return r;
		if (ps->s.len % 2)
			return -EINVAL;
		for (i = 0; i < ps->s.len / 2; i++) {
			int hi = hexv(ps->s.p[2 * i]), lo = hexv(ps->s.p[2 * i + 1]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			ps->s.p[i] = (char)(hi << 4 | lo);
		}
		utrace__pb_bytes(o, f->num, ps->s.p, ps->s.len / 2);
		return 0;
	case K_B64: {
		size_t n = 0, bits = 0;
		uint32_t acc = 0;

		if ((r = string(ps)))
			return r;
		for (i = 0; i < ps->s.len && ps->s.p[i] != '='; i++) {
			int d = b64v(ps->s.p[i]);

			if (d < 0)
				return -EINVAL;
			acc = acc << 6 | (uint32_t)d;
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				ps->s.p[n++] = (char)(acc >> bits);
			}
		}
		utrace__pb_bytes(o, f->num, ps->s.p, n);
		return 0;
	}
	case K_FIXED64:
	case K_FIXED32:
		if (integer(ps, &v, false) || (f->k == K_FIXED32 && v > UINT32_MAX))
			return -EINVAL;
		for (i = 0; i < 8; i++)
			t[i] = (unsigned char)(v >> (8 * i));
		utrace__pb_key(o, f->num, f->k == K_FIXED64 ? UTRACE__PB_I64 : 5);
		utrace__ob_put(o, t, f->k == K_FIXED64 ? 8 : 4);
		return 0;
	case K_INT:
		if (integer(ps, &v, true))
			return -EINVAL;
		utrace__pb_uint(o, f->num, v);
		return 0;
	case K_BOOL:
		ws(ps);
		if (ps->end - ps->p >= 4 && !memcmp(ps->p, "true", 4)) {
			ps->p += 4;
			utrace__pb_uint(o, f->num, 1);
		} else if (ps->end - ps->p >= 5 && !memcmp(ps->p, "false", 5)) {
			ps->p += 5;
			utrace__pb_uint(o, f->num, 0);
		} else {
			return -EINVAL;
		}
		return 0;
	case K_DOUBLE: {
		char *e;
		double d;

		if (number_text(ps))
			return -EINVAL;
		d = !strcmp(ps->s.p, "NaN") ? __builtin_nan("") :
		    !strcmp(ps->s.p, "Infinity") ? __builtin_inf() :
		    !strcmp(ps->s.p, "-Infinity") ? -__builtin_inf() : strtod(ps->s.p, &e);
		utrace__pb_double(o, f->num, d);
		return 0;
	}
	}
	return -EINVAL;
}

/* {"member":value,...} of message m; arrays are repeated fields. */
static int message(struct parser *ps, const struct msg *m)
{
	int r;

	if (++ps->depth > DEPTH_MAX || !eat(ps, '{'))
		return -EINVAL;
	if (eat(ps, '}')) {
		ps->depth--;
		return 0;
	}
	do {
		const struct field *f = NULL;
		size_t i;

		if ((r = string(ps)))
			return r;
		for (i = 0; i < m->n && !f; i++)
			if (ps->s.len && m->f[i].json[0] == ps->s.p[0] &&
			    strlen(m->f[i].json) == ps->s.len &&
			    !memcmp(m->f[i].json, ps->s.p, ps->s.len))
				f = &m->f[i];
		if (!f || !eat(ps, ':'))
			return -EINVAL;
		ws(ps);
		if (eat(ps, '[')) {
			if (!eat(ps, ']')) {
				do {
					if ((r = value(ps, f)))
						return r;
				} while (eat(ps, ','));
				if (!eat(ps, ']'))
					return -EINVAL;
			}
		} else if ((r = value(ps, f))) {
			return r;
		}
	} while (eat(ps, ','));
	ps->depth--;
	return eat(ps, '}') ? 0 : -EINVAL;
}

int utrace__otlp_json_to_pb(const char *json, size_t len, enum utrace__otlp_signal sig,
			    struct utrace__obuf *out)
{
	struct parser ps = { json, json + len, out, { 0 }, 0 };
	int r = message(&ps, sig == UTRACE__OTLP_LOGS ? &logs_request : &traces_request);

	ws(&ps);
	if (!r && ps.p != ps.end)
		r = -EINVAL;
	if (!r && (out->nomem || ps.s.nomem))
		r = -ENOMEM;
	free(ps.s.p);
	return r;
}

/* A varint at *p: 0 or -EINVAL. */
static int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	int shift;

	for (*v = 0, shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -EINVAL;
}

/* Skip a field's value of wire type wt: 0 or -EINVAL. */
static int skip(const unsigned char **p, const unsigned char *end, int wt)
{
	uint64_t v;

	switch (wt) {
	case 0:
		return get_varint(p, end, &v);
	case 1:
		if (end - *p < 8)
			return -EINVAL;
		*p += 8;
		return 0;
	case 2:
		if (get_varint(p, end, &v) || v > (uint64_t)(end - *p))
			return -EINVAL;
		*p += v;
		return 0;
	case 5:
		if (end - *p < 4)
			return -EINVAL;
		*p += 4;
		return 0;
	}
	return -EINVAL;
}

int utrace__otlp_pb_partial(const unsigned char *p, size_t len, uint64_t *rejected, char *msg,
			    size_t msglen)
{
	const unsigned char *end = p + len;
	uint64_t k, v;

	*rejected = 0;
	if (msglen)
		msg[0] = 0;
	while (p < end) {
		if (get_varint(&p, end, &k))
			return -EINVAL;
		if (k != (1 << 3 | 2)) {        /* not partial_success */
			if (skip(&p, end, (int)(k & 7)))
				return -EINVAL;
			continue;
		}
		if (get_varint(&p, end, &v) || v > (uint64_t)(end - p))
			return -EINVAL;
		const unsigned char *pe = p + v;

		while (p < pe) {
			if (get_varint(&p, pe, &k))
				return -EINVAL;
			if (k == (1 << 3 | 0)) {
				if (get_varint(&p, pe, rejected))
					return -EINVAL;
			} else if (k == (2 << 3 | 2)) {
				if (get_varint(&p, pe, &v) || v > (uint64_t)(pe - p))
					return -EINVAL;
				if (msglen) {
					size_t n = v < msglen - 1 ? (size_t)v : msglen - 1;

					memcpy(msg, p, n);
					msg[n] = 0;
				}
				p += v;
			} else if (skip(&p, pe, (int)(k & 7))) {
				return -EINVAL;
			}
		}
	}
	return 0;
}
