/* SPDX-License-Identifier: MIT */
/*
 * Issue 34: OTLP's JSON encoding into protobuf (lib/export/otlp-pb.c),
 * and the OTEL_* variables (lib/export/otlp-config.c), from fixed inputs:
 * field numbers and wire types of opentelemetry-proto, hex ids, escapes
 * and surrogate pairs into UTF-8, base64, refusals of what the messages
 * do not have; the partial-success answer; the variables' precedence and
 * decoding, and their refusals.
 */
#include "test.h"

#include <errno.h>

#include "otlp-config.h"
#include "otlp-pb.h"

static const char *hex(const struct utrace__obuf *b)
{
	static char t[4096];
	size_t i, n = 0;

	t[0] = 0;
	for (i = 0; i < b->len && n + 3 < sizeof(t); i++)
		n += (size_t)snprintf(t + n, sizeof(t) - n, "%02x", (unsigned char)b->p[i]);
	return t;
}

static int pb(const char *json, enum utrace__otlp_signal sig, struct utrace__obuf *b)
{
	b->len = 0;
	return utrace__otlp_json_to_pb(json, strlen(json), sig, b);
}

TEST(a_log_record_field_by_field)
{
	struct utrace__obuf b = { 0 };

	/* resource_logs(1) { scope_logs(2) { log_records(2) { time(1) fixed64,
	 * severity(2) varint, trace_id(9) 2 bytes, event_name(12) "a" } } } */
	CHECK_INT(pb("{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"258\","
		     "\"severityNumber\":9,\"traceId\":\"0aFf\",\"eventName\":\"a\"}]}]}]}",
		     UTRACE__OTLP_LOGS, &b), ==, 0);
	/* (each length: what it encloses, checked by hand) */
	CHECK_STR(hex(&b), "0a16" "1214" "1212" "090201000000000000" "1009" "4a020aff"
			   "620161");
	free(b.p);
}

TEST(any_values_and_strings)
{
	struct utrace__obuf b = { 0 };

	/* KeyValue{key "k", value AnyValue{int_value -1}}: int64 in 10 bytes */
	CHECK_INT(pb("{\"resource\":{\"attributes\":[{\"key\":\"k\",\"value\":{\"intValue\":\"-1\"}}]}}",
		     UTRACE__OTLP_LOGS, &b), ==, -EINVAL);   /* not at the top */
	CHECK_INT(pb("{\"resourceLogs\":[{\"resource\":{\"attributes\":[{\"key\":\"k\",\"value\":"
		     "{\"intValue\":\"-1\"}}]}}]}", UTRACE__OTLP_LOGS, &b), ==, 0);
	CHECK_STR(hex(&b), "0a140a120a100a016b120b18ffffffffffffffffff01");
	/* escapes, a surrogate pair, \u00e9 into UTF-8; base64 bytes */
	CHECK_INT(pb("{\"resourceLogs\":[{\"resource\":{\"attributes\":[{\"key\":\"\\\"\\n\\u00e9"
		     "\\ud83d\\ude00\",\"value\":{\"bytesValue\":\"AQI=\"}}]}}]}",
		     UTRACE__OTLP_LOGS, &b), ==, 0);
	CHECK_STR(hex(&b), "0a14" "0a12" "0a10" "0a08220ac3a9f09f9880" "1204" "3a020102");
	free(b.p);
}

TEST(spans_with_parents)
{
	struct utrace__obuf b = { 0 };

	CHECK_INT(pb("{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"01\","
		     "\"spanId\":\"02\",\"parentSpanId\":\"03\",\"kind\":1,"
		     "\"endTimeUnixNano\":\"1\"}]}]}]}", UTRACE__OTLP_TRACES, &b), ==, 0);
	CHECK_STR(hex(&b), "0a18" "1216" "1214" "0a0101" "120102" "220103" "3001"
			   "410100000000000000");
	free(b.p);
}

TEST(refusals)
{
	static const char *const bad[] = {
		"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"nope\":1}]}]}]}",
		"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"traceId\":\"0g\"}]}]}]}",
		"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"traceId\":\"abc\"}]}]}]}",
		"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"timeUnixNano\":\"-1\"}]}]}]}",
		"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"flags\":\"4294967296\"}]}]}]}",
		"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":{\"stringValue\":\"\\ud83d\"}}]}]}]}",
		"{\"resourceLogs\":[]} x",
		"{\"resourceLogs\":[",
		"{\"resourceSpans\":[]}",
		"{\"\":1}",
		"{\"resourceLogs\\u0000x\":[]}",
		"{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"body\":{\"stringValue\":\"\\",
	};
	struct utrace__obuf b = { 0 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(pb(bad[i], UTRACE__OTLP_LOGS, &b), ==, -EINVAL);
	free(b.p);
}

TEST(partial_success_answer)
{
	/* ExportLogsServiceResponse{partial_success{2, "two"}} */
	static const unsigned char a[] = { 0x0a, 0x07, 0x08, 0x02, 0x12, 0x03, 't', 'w', 'o' };
	static const unsigned char torn[] = { 0x0a, 0x07, 0x08 };
	uint64_t n;
	char msg[16];

	CHECK_INT(utrace__otlp_pb_partial(a, sizeof(a), &n, msg, sizeof(msg)), ==, 0);
	CHECK_INT(n, ==, 2);
	CHECK_STR(msg, "two");
	CHECK_INT(utrace__otlp_pb_partial(a, 0, &n, msg, sizeof(msg)), ==, 0);
	CHECK_INT(n, ==, 0);
	CHECK_INT(utrace__otlp_pb_partial(torn, sizeof(torn), &n, msg, sizeof(msg)), ==, -EINVAL);
}

/* The environment of a test: NAME=VALUE pairs. */
static const char *const *env;

static const char *fake_getenv(const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

TEST(the_variables_as_the_sdks_read_them)
{
	static const char *const e[] = {
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318/base",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://t:1/x",
		"OTEL_EXPORTER_OTLP_HEADERS=a=1%202, b = x ",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS=",          /* empty: not set */
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=c=3",
		"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT=2500",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=svc",
		"OTEL_RESOURCE_ATTRIBUTES=service.name=no,k=v%3Dw,,host.name=h",
		NULL,
	};
	struct utrace__otlp_config c;
	char why[256] = "";

	env = e;
	CHECK_INT(utrace__otlp_config_env(&c, fake_getenv, why, sizeof(why)), ==, 0);
	CHECK_STR(c.sig[UTRACE__OTLP_LOGS].url, "http://c:4318/base/v1/logs");
	CHECK_STR(c.sig[UTRACE__OTLP_TRACES].url, "http://t:1/x");
	CHECK_INT(c.sig[UTRACE__OTLP_LOGS].nr_headers, ==, 2);
	CHECK_STR(c.sig[UTRACE__OTLP_LOGS].headers[0], "a: 1 2");
	CHECK_STR(c.sig[UTRACE__OTLP_LOGS].headers[1], "b: x");
	CHECK_INT(c.sig[UTRACE__OTLP_TRACES].nr_headers, ==, 1);
	CHECK_STR(c.sig[UTRACE__OTLP_TRACES].headers[0], "c: 3");
	CHECK_INT(c.sig[UTRACE__OTLP_LOGS].timeout_ms, ==, 2500);
	CHECK_INT(c.sig[UTRACE__OTLP_TRACES].timeout_ms, ==, -1);
	CHECK_INT(c.sig[UTRACE__OTLP_LOGS].protocol, ==, UTRACE__OTLP_JSON);
	CHECK_INT(c.sig[UTRACE__OTLP_TRACES].protocol, ==, UTRACE__OTLP_PROTOBUF);
	CHECK_STR(utrace__otlp_config_get(&c, "service.name"), "svc");
	CHECK_STR(utrace__otlp_config_get(&c, "k"), "v=w");
	CHECK_STR(utrace__otlp_config_get(&c, "host.name"), "h");
	CHECK_STR(utrace__otlp_config_get(&c, "telemetry.sdk.name"), "utrace");
	/* --otlp over the variables */
	CHECK_INT(utrace__otlp_config_base(&c, "https://o/"), ==, 0);
	CHECK_STR(c.sig[UTRACE__OTLP_TRACES].url, "https://o/v1/traces");
	utrace__otlp_config_free(&c);
}

TEST(variables_refused)
{
	static const char *const cases[][2] = {
		{ "OTEL_EXPORTER_OTLP_TIMEOUT=0", "OTEL_EXPORTER_OTLP_TIMEOUT: '0'" },
		{ "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=br", "unknown compression 'br'" },
		{ "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc'" },
		{ "OTEL_RESOURCE_ATTRIBUTES=a", "'a' is not KEY=VALUE" },
		{ "OTEL_RESOURCE_ATTRIBUTES=a=%4", "is not KEY=VALUE (%-encoded)" },
		{ "OTEL_EXPORTER_OTLP_HEADERS=a b=1", "OTEL_EXPORTER_OTLP_HEADERS: 'a b=1'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *e1[] = { cases[i][0], NULL };
		struct utrace__otlp_config c;
		char why[256] = "";

		env = e1;
		CHECK_INT(utrace__otlp_config_env(&c, fake_getenv, why, sizeof(why)), ==, -EINVAL);
		if (!strstr(why, cases[i][1]))
			TEST_FAIL("%s: said '%s'", cases[i][0], why);
		utrace__otlp_config_free(&c);
	}
}

TEST_MAIN()
