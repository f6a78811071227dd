/* SPDX-License-Identifier: MIT */
/*
 * The OTLP/HTTP client of `utrace export` (otlp-http.c): POSTs the bodies
 * that the reader library's exporter makes (lib/reader/export-otlp.c) to
 * a collector with libcurl, gzip'ed with zlib, retried as the OTLP
 * specification says.  Only the utrace tool links it: neither libutrace,
 * which traced programs load, nor libutrace-reader depend on libcurl.
 */
#ifndef UTRACE_OTLP_HTTP_H
#define UTRACE_OTLP_HTTP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"

/* How one signal's requests go (logs, traces: each may differ). */
struct utrace__http_signal {
	const char *url;                 /* the full URL: BASE/v1/logs */
	char *const *headers;            /* "Name: value" lines */
	size_t nr_headers;
	bool gzip;                       /* Content-Encoding: gzip */
	bool json;                       /* http/json, not http/protobuf: the
					  * bodies as made, not made protobuf */
	long timeout_ms;                 /* one attempt, connection included */
};

struct utrace__http_opts {
	struct utrace__http_signal sig[2];  /* [UTRACE__OTLP_LOGS], [..._TRACES] */
	uint64_t retry_ms;               /* a request is given up after this long */
	volatile sig_atomic_t *stop;     /* set: no more waiting between tries
					  * (read atomically: another thread's) */
	bool quiet;                      /* a request given up is not said: the
					  * caller says it (utrace__http_last_error()) */
};

struct utrace__http_stats {
	uint64_t requests, tries;        /* delivered; attempts made */
	uint64_t bytes;                  /* sent in delivered requests (after gzip) */
	uint64_t rejected_records, rejected_spans;  /* partial success */
};

struct utrace__http;

/* 0, or -EINVAL (a bad URL, said on stderr) or -ENOMEM. */
int utrace__http_new(const struct utrace__http_opts *o, struct utrace__http **hp);
/*
 * Deliver one request (an utrace__otlp_opts send()): 0, or a negative
 * code once it is given up, with the reason said on stderr.
 */
int utrace__http_send(void *h, enum utrace__otlp_signal sig, const char *body, size_t len,
		      size_t nr, size_t nr_events);
void utrace__http_get_stats(const struct utrace__http *h, struct utrace__http_stats *st);
/* Why the last request given up was: "URL: reason" ("" before any). */
const char *utrace__http_last_error(const struct utrace__http *h);
void utrace__http_free(struct utrace__http *h);

#endif /* UTRACE_OTLP_HTTP_H */
