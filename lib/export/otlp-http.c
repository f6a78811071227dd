/* SPDX-License-Identifier: MIT */
/*
 * OTLP/HTTP client (otlp-http.h), after the OTLP specification's
 * "OTLP/HTTP" section:
 *
 *  - POST BASE/v1/logs or BASE/v1/traces, Content-Type
 *    application/x-protobuf (the bodies made protobuf, otlp-pb.c) or
 *    application/json (http/json), the body gzip'ed (Content-Encoding:
 *    gzip) unless --compress none;
 *  - 2xx is delivered; its body may carry a partial success (an
 *    Export*ServiceResponse in the request's encoding: protobuf, or
 *    {"partialSuccess":{"rejectedLogRecords":"2","errorMessage":"..."}}),
 *    which is counted and said once;
 *  - 429, 502, 503, 504 and failures of the connection itself (refused,
 *    reset, timed out, nothing answered) are tried again after an
 *    exponential backoff with jitter (100 ms doubling to 5 s, each wait
 *    drawn from its upper half), or after the server's Retry-After when
 *    that is longer, until retry_ms has passed since the first try: then
 *    the request is given up;
 *  - any other answer (400, 401, 404, 413, ...) is not tried again: the
 *    request is given up at once, with the server's message (the
 *    "message" of its google.rpc.Status, or the start of its body).
 *
 * Giving up a request stops the export: the caller counts what was not
 * delivered.  A request the server received but whose answer was lost (a
 * timeout) is sent again: OTLP delivers at least once.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include "otlp-http.h"
#include "otlp-pb.h"
#include "problems.h"

#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 5000
#define ANSWER_MAX 4096          /* of a server's answer, kept for messages */

struct utrace__http {
	struct utrace__http_opts o;
	CURL *curl;
	struct curl_slist *hdrs[2];  /* logs, traces */
	unsigned char *z;            /* the gzip'ed body */
	size_t zcap;
	struct utrace__obuf pb;      /* the protobuf body */
	char answer[ANSWER_MAX + 1];
	size_t answer_len;
	unsigned int seed;
	bool said_rejected;
	struct utrace__http_stats st;
	char last_error[512];        /* of the last request given up */
};

static size_t on_answer(char *p, size_t size, size_t n, void *arg)
{
	struct utrace__http *h = arg;
	size_t len = size * n, room = ANSWER_MAX - h->answer_len;

	memcpy(h->answer + h->answer_len, p, len < room ? len : room);
	h->answer_len += len < room ? len : room;
	h->answer[h->answer_len] = 0;
	return len;
}

/* 0, or -EINVAL (said) when url is not http:// or https:// with a host. */
static int check_url(const char *url)
{
	char *scheme = NULL, *host = NULL;
	CURLU *u = curl_url();
	bool ok;

	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
		utrace__say("utrace: '%s' is not a URL\n", url);
		curl_url_cleanup(u);
		return -EINVAL;
	}
	ok = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	     (!strcmp(scheme, "http") || !strcmp(scheme, "https")) &&
	     curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && *host &&
	     !strstr(url, "?") && !strstr(url, "#");
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	if (!ok) {
		utrace__say("utrace: '%s': not an http:// or https:// URL with a host (and no "
			    "query)\n", url);
		return -EINVAL;
	}
	return 0;
}

int utrace__http_new(const struct utrace__http_opts *o, struct utrace__http **hp)
{
	struct utrace__http *h = calloc(1, sizeof(*h));
	size_t i;
	int s;

	*hp = NULL;
	if (!h)
		return -ENOMEM;
	h->o = *o;
	h->seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	/* said now rather than at the first send */
	for (s = 0; s < 2; s++)
		if (check_url(o->sig[s].url) < 0) {
			free(h);
			return -EINVAL;
		}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	h->curl = curl_easy_init();
	for (s = 0; s < 2; s++) {
		const struct utrace__http_signal *sg = &o->sig[s];
		struct curl_slist *l = curl_slist_append(NULL, sg->json ?
			"Content-Type: application/json" : "Content-Type: application/x-protobuf");

		if (l && sg->gzip)
			l = curl_slist_append(l, "Content-Encoding: gzip");
		/* no "Expect: 100-continue" round trip before large bodies */
		if (l)
			l = curl_slist_append(l, "Expect:");
		for (i = 0; i < sg->nr_headers && l; i++)
			l = curl_slist_append(l, sg->headers[i]);
		h->hdrs[s] = l;
	}
	if (!h->curl || !h->hdrs[0] || !h->hdrs[1]) {
		utrace__http_free(h);
		return -ENOMEM;
	}
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "utrace/0.1.0");
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	*hp = h;
	return 0;
}

void utrace__http_free(struct utrace__http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->hdrs[0]);
	curl_slist_free_all(h->hdrs[1]);
	free(h->z);
	free(h->pb.p);
	free(h);
	curl_global_cleanup();
}

void utrace__http_get_stats(const struct utrace__http *h, struct utrace__http_stats *st)
{
	*st = h->st;
}

/* gzip the body into h->z: its length, or 0 when out of memory. */
static size_t gzip_body(struct utrace__http *h, const char *body, size_t len)
{
	z_stream zs = { 0 };
	size_t need = compressBound((uLong)len) + 64;

	if (need > h->zcap) {
		unsigned char *v = realloc(h->z, need);

		if (!v)
			return 0;
		h->z = v;
		h->zcap = need;
	}
	/* windowBits 15 + 16: a gzip header and trailer; level 1: the
	 * export's time goes into the network, not into zlib */
	if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	zs.next_in = (Bytef *)(uintptr_t)body;
	zs.avail_in = (uInt)len;
	zs.next_out = h->z;
	zs.avail_out = (uInt)h->zcap;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		return 0;
	}
	len = zs.total_out;
	deflateEnd(&zs);
	return len;
}

/* The number after "key": in a JSON text (quoted or not), or 0. */
static uint64_t json_count(const char *s, const char *key, char *msg, size_t msglen)
{
	const char *p = strstr(s, key);

	if (msg && msglen) {
		const char *m = strstr(s, "\"errorMessage\"");
		size_t n = 0;

		msg[0] = 0;
		if (m && (m = strchr(m + 14, '"'))) {
			for (m++; *m && *m != '"' && n + 1 < msglen; m++)
				msg[n++] = *m;
			msg[n] = 0;
		}
	}
	if (!p)
		return 0;
	p += strlen(key);
	while (*p && (*p == '"' || *p == ':' || isspace((unsigned char)*p)))
		p++;
	return strtoull(p, NULL, 10);
}

/* The server's message of a refusal: its Status "message", or its body's start. */
static void server_message(const struct utrace__http *h, char *msg, size_t len)
{
	const char *m = strstr(h->answer, "\"message\"");
	size_t n = 0;

	if (m && (m = strchr(m + 9, '"'))) {
		for (m++; *m && *m != '"' && n + 1 < len; m++)
			msg[n++] = *m;
	} else {
		for (m = h->answer; *m && *m != '\n' && n + 1 < len && n < 200; m++)
			msg[n++] = isprint((unsigned char)*m) ? *m : '?';
	}
	msg[n] = 0;
}

static bool retryable_status(long status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

/* A failure of the connection worth another try, not of the request. */
static bool retryable_curl(CURLcode c)
{
	return c != CURLE_URL_MALFORMAT && c != CURLE_UNSUPPORTED_PROTOCOL &&
	       c != CURLE_OUT_OF_MEMORY && c != CURLE_BAD_FUNCTION_ARGUMENT &&
	       c != CURLE_SSL_CERTPROBLEM && c != CURLE_PEER_FAILED_VERIFICATION;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void check_partial(struct utrace__http *h, bool logs, size_t nr)
{
	char msg[256] = "", *ct = NULL;
	uint64_t n = 0;

	/* the answer is in the request's encoding (the specification), but
	 * a JSON one to a protobuf request is read too */
	curl_easy_getinfo(h->curl, CURLINFO_CONTENT_TYPE, &ct);
	if (ct && strstr(ct, "protobuf"))
		utrace__otlp_pb_partial((const unsigned char *)h->answer, h->answer_len, &n, msg,
					sizeof(msg));
	else
		n = json_count(h->answer, logs ? "\"rejectedLogRecords\"" : "\"rejectedSpans\"",
			       msg, sizeof(msg));

	if (!n)
		return;
	if (logs)
		h->st.rejected_records += n;
	else
		h->st.rejected_spans += n;
	if (!h->said_rejected)
		utrace__say("utrace: the collector rejected %llu of %zu %s%s%s (said once; "
			    "the total comes at the end)\n", (unsigned long long)n, nr,
			    logs ? "log records" : "spans", msg[0] ? ": " : "", msg);
	h->said_rejected = true;
}

/* A request is given up: why, kept, and said unless the caller says it. */
static void __attribute__((format(printf, 2, 3))) give_up(struct utrace__http *h,
							  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->last_error, sizeof(h->last_error), fmt, ap);
	va_end(ap);
	if (!h->o.quiet)
		utrace__say("utrace: %s\n", h->last_error);
}

const char *utrace__http_last_error(const struct utrace__http *h)
{
	return h->last_error;
}

int utrace__http_send(void *arg, enum utrace__otlp_signal sig, const char *body, size_t len,
		      size_t nr, size_t nr_events)
{
	struct utrace__http *h = arg;
	bool logs = sig == UTRACE__OTLP_LOGS;
	const struct utrace__http_signal *sg = &h->o.sig[logs ? 0 : 1];
	const char *url = sg->url;
	uint64_t start = now_ms(), backoff = BACKOFF_FIRST_MS;
	unsigned int tries = 0;
	char why[512];

	if (!sg->json) {
		int r;

		h->pb.len = 0;
		r = utrace__otlp_json_to_pb(body, len, sig, &h->pb);
		if (r) {
			give_up(h, "%s: %s", url, r == -ENOMEM ? "out of memory" :
				"cannot make the request protobuf (utrace's mistake: please "
				"report it; --otlp-protocol http/json sends it)");
			return r;
		}
		body = h->pb.p;
		len = h->pb.len;
	}
	if (sg->gzip) {
		size_t zlen = gzip_body(h, body, len);

		if (!zlen) {
			utrace__say("utrace: cannot compress a request: out of memory\n");
			return -ENOMEM;
		}
		body = (const char *)h->z;
		len = zlen;
	}
	curl_easy_setopt(h->curl, CURLOPT_URL, url);
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->hdrs[logs ? 0 : 1]);
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, sg->timeout_ms);
	curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, sg->timeout_ms);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	for (;;) {
		curl_off_t retry_after = 0;
		long status = 0;
		uint64_t wait, elapsed;
		CURLcode c;

		h->answer_len = 0;
		h->answer[0] = 0;
		tries++;
		h->st.tries++;
		c = curl_easy_perform(h->curl);
		if (c == CURLE_OK) {
			curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
			if (status >= 200 && status < 300) {
				h->st.requests++;
				h->st.bytes += len;
				check_partial(h, logs, nr);
				return 0;
			}
			char msg[256];

			server_message(h, msg, sizeof(msg));
			snprintf(why, sizeof(why), "HTTP %ld%s%s", status, msg[0] ? ": " : "",
				 msg);
			if (!retryable_status(status)) {
				give_up(h, "%s: the collector refused the request (%s); not tried "
					"again", url, why);
				return -EPROTO;
			}
			curl_easy_getinfo(h->curl, CURLINFO_RETRY_AFTER, &retry_after);
		} else {
			snprintf(why, sizeof(why), "%s", curl_easy_strerror(c));
			if (!retryable_curl(c)) {
				give_up(h, "%s: %s", url, why);
				return -EIO;
			}
		}
		/* the upper half of the backoff, at random; the server's
		 * Retry-After when longer */
		wait = backoff / 2 + (uint64_t)rand_r(&h->seed) % (backoff / 2 + 1);
		if (retry_after > 0 && (uint64_t)retry_after * 1000 > wait)
			wait = (uint64_t)retry_after * 1000;
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
		elapsed = now_ms() - start;
		if (elapsed + wait > h->o.retry_ms ||
		    (h->o.stop && __atomic_load_n(h->o.stop, __ATOMIC_RELAXED))) {
			give_up(h, "%s: gave up after %u tries in %.1f s: %s", url, tries,
				(double)elapsed / 1000, why);
			return -ETIMEDOUT;
		}
		struct timespec ts = { (time_t)(wait / 1000), (long)(wait % 1000) * 1000000 };

		nanosleep(&ts, NULL);
	}
}
