/* SPDX-License-Identifier: MIT */
/*
 * The OTLP exporter's environment (otlp-config.h), as the OpenTelemetry
 * SDKs read it (the specification's "OpenTelemetry Protocol Exporter" and
 * "Environment Variable Specification"):
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT       base URL: BASE/v1/logs, BASE/v1/traces
 *   OTEL_EXPORTER_OTLP_LOGS_ENDPOINT  the logs' URL as it is (and _TRACES_)
 *   OTEL_EXPORTER_OTLP_HEADERS        "k1=v1,k2=v2", the values %-encoded
 *   OTEL_EXPORTER_OTLP_TIMEOUT        one request, in milliseconds
 *   OTEL_EXPORTER_OTLP_COMPRESSION    gzip | none
 *   OTEL_EXPORTER_OTLP_PROTOCOL       http/protobuf | http/json (grpc: refused)
 *   OTEL_SERVICE_NAME                 service.name (over the next)
 *   OTEL_RESOURCE_ATTRIBUTES          "k1=v1,k2=v2", the values %-encoded
 *
 * each _LOGS_ / _TRACES_ form, when set, instead of the general one for
 * its signal.  A variable set but empty counts as not set.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <utrace/reader.h>

#include "otlp-config.h"

static const char *const sig_name[2] = { "LOGS", "TRACES" };
static const char *const sig_path[2] = { "v1/logs", "v1/traces" };

static char *join(const char *base, const char *path)
{
	size_t n = strlen(base);
	char *s = malloc(n + strlen(path) + 2);

	if (s)
		sprintf(s, "%s%s%s", base, n && base[n - 1] == '/' ? "" : "/", path);
	return s;
}

int utrace__otlp_config_base(struct utrace__otlp_config *c, const char *base)
{
	int i;

	for (i = 0; i < 2; i++) {
		char *u = join(base, sig_path[i]);

		if (!u)
			return -ENOMEM;
		free(c->sig[i].url);
		c->sig[i].url = u;
	}
	return 0;
}

const char *utrace__otlp_config_get(const struct utrace__otlp_config *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->nr_attrs; i++)
		if (!strcmp(c->attrs[i].key, key))
			return c->attrs[i].value;
	return NULL;
}

int utrace__otlp_config_attr(struct utrace__otlp_config *c, const char *key, size_t keylen,
			     const char *value, size_t valuelen)
{
	char *k = strndup(key, keylen), *v = strndup(value, valuelen);
	size_t i;
	void *p;

	if (!k || !v)
		goto nomem;
	for (i = 0; i < c->nr_attrs; i++)
		if (!strcmp(c->attrs[i].key, k)) {
			/* replaced: moved to the end, where later ones go */
			free((char *)c->attrs[i].key);
			free((char *)c->attrs[i].value);
			memmove(&c->attrs[i], &c->attrs[i + 1],
				(c->nr_attrs - i - 1) * sizeof(*c->attrs));
			c->nr_attrs--;
			break;
		}
	p = realloc(c->attrs, (c->nr_attrs + 1) * sizeof(*c->attrs));
	if (!p)
		goto nomem;
	c->attrs = p;
	c->attrs[c->nr_attrs++] = (struct utrace__otlp_attr){ k, v };
	return 0;
nomem:
	free(k);
	free(v);
	return -ENOMEM;
}

static int add_header(struct utrace__otlp_sigconf *s, const char *name, size_t namelen,
		      const char *value, size_t valuelen)
{
	char *h = malloc(namelen + valuelen + 3);
	void *p = h ? realloc(s->headers, (s->nr_headers + 1) * sizeof(*s->headers)) : NULL;

	if (!p) {
		free(h);
		return -ENOMEM;
	}
	s->headers = p;
	sprintf(h, "%.*s: %.*s", (int)namelen, name, (int)valuelen, value);
	s->headers[s->nr_headers++] = h;
	return 0;
}

int utrace__otlp_config_header(struct utrace__otlp_config *c, const char *name, size_t namelen,
			       const char *value, size_t valuelen)
{
	int i, r = 0;

	for (i = 0; i < 2 && !r; i++)
		r = add_header(&c->sig[i], name, namelen, value, valuelen);
	return r;
}

static int hexval(int ch)
{
	return isdigit(ch) ? ch - '0' : isxdigit(ch) ? (tolower(ch) - 'a' + 10) : -1;
}

/* s[0..n) %-decoded in place, spaces at both ends trimmed: its new length,
 * or -1 for a bad %-escape. */
static long decode(char *s, size_t n)
{
	size_t i, j = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	for (i = 0; i < n && isspace((unsigned char)s[i]); i++)
		;
	for (; i < n; i++) {
		if (s[i] != '%') {
			s[j++] = s[i];
			continue;
		}
		if (i + 2 >= n || hexval((unsigned char)s[i + 1]) < 0 ||
		    hexval((unsigned char)s[i + 2]) < 0)
			return -1;
		s[j++] = (char)(hexval((unsigned char)s[i + 1]) * 16 +
				hexval((unsigned char)s[i + 2]));
		i += 2;
	}
	return (long)j;
}

/*
 * "k1=v1,k2=v2" (the W3C Baggage form both variables use) into pairs
 * for add(): 0, -EINVAL (why said), or -ENOMEM.
 */
static int parse_list(const char *var, const char *text, struct utrace__otlp_config *c,
		      int sig, char *why, size_t whylen)
{
	char *t = strdup(text), *item, *save = NULL;
	int r = 0;

	if (!t)
		return -ENOMEM;
	for (item = strtok_r(t, ",", &save); item && !r; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		long kn, vn;

		if (!eq) {
			if (strspn(item, " \t") == strlen(item))
				continue;       /* "a=1,,b=2": an empty member */
			snprintf(why, whylen, "%s: '%s' is not KEY=VALUE", var, item);
			r = -EINVAL;
			break;
		}
		*eq = 0;
		kn = decode(item, strlen(item));
		vn = decode(eq + 1, strlen(eq + 1));
		if (kn >= 0)
			item[kn] = 0;
		if (vn >= 0)
			eq[1 + vn] = 0;
		if (kn <= 0 || vn < 0 || memchr(item, '\n', (size_t)kn) ||
		    memchr(eq + 1, '\n', (size_t)vn) || memchr(eq + 1, '\r', (size_t)vn) ||
		    (sig >= 0 && ((size_t)kn != strcspn(item, ": \t\r"))) ) {
			snprintf(why, whylen, "%s: '%s=%s' is not KEY=VALUE (%%-encoded)", var,
				 item, eq + 1);
			r = -EINVAL;
			break;
		}
		if (sig < 0)
			r = utrace__otlp_config_attr(c, item, (size_t)kn, eq + 1, (size_t)vn);
		else
			r = add_header(&c->sig[sig], item, (size_t)kn, eq + 1, (size_t)vn);
	}
	free(t);
	return r;
}

/* The variable OTEL_EXPORTER_OTLP_<signal's>_NAME if set, else the general one. */
static const char *var_of(const char *(*get)(const char *), int sig, const char *name,
			  char *buf, size_t len)
{
	const char *v;

	snprintf(buf, len, "OTEL_EXPORTER_OTLP_%s_%s", sig_name[sig], name);
	v = get(buf);
	if (v && *v)
		return v;
	snprintf(buf, len, "OTEL_EXPORTER_OTLP_%s", name);
	v = get(buf);
	return v && *v ? v : NULL;
}

/* The machine's attributes (host.*, os.type, telemetry.sdk.*). */
static int machine_attrs(struct utrace__otlp_config *c)
{
	char host[256] = "", id[128] = "";
	FILE *f = fopen("/etc/machine-id", "re");
	int r;

	if (f) {
		if (fgets(id, sizeof(id), f))
			id[strcspn(id, " \t\r\n")] = 0;
		fclose(f);
	}
	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = 0;
	r = utrace__otlp_config_attr(c, "host.name", 9, host, strlen(host));
	if (!r && id[0]) {
		r = utrace__otlp_config_attr(c, "host.id", 7, id, strlen(id));
		c->host_id = strdup(id);
		if (!c->host_id)
			r = -ENOMEM;
	}
	if (!r)
		r = utrace__otlp_config_attr(c, "os.type", 7, "linux", 5);
	if (!r)
		r = utrace__otlp_config_attr(c, "telemetry.sdk.name", 18, "utrace", 6);
	/* no "c" among the convention's languages: the closest, as other
	 * C tracers do; the custom values are allowed */
	if (!r)
		r = utrace__otlp_config_attr(c, "telemetry.sdk.language", 22, "cpp", 3);
	if (!r)
		r = utrace__otlp_config_attr(c, "telemetry.sdk.version", 21,
					     utrace_reader_version(),
					     strlen(utrace_reader_version()));
	return r;
}

int utrace__otlp_config_env(struct utrace__otlp_config *c, const char *(*get)(const char *),
			    char *why, size_t whylen)
{
	char name[64];
	const char *v;
	int i, r;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < 2; i++) {
		c->sig[i].gzip = -1;
		c->sig[i].protocol = UTRACE__OTLP_UNSET;
		c->sig[i].timeout_ms = -1;
	}
	r = machine_attrs(c);
	if (r)
		return r;
	v = get("OTEL_RESOURCE_ATTRIBUTES");
	if (v && *v && (r = parse_list("OTEL_RESOURCE_ATTRIBUTES", v, c, -1, why, whylen)))
		return r;
	v = get("OTEL_SERVICE_NAME");
	if (v && *v && (r = utrace__otlp_config_attr(c, "service.name", 12, v, strlen(v))))
		return r;
	for (i = 0; i < 2; i++) {
		struct utrace__otlp_sigconf *s = &c->sig[i];

		snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_%s_ENDPOINT", sig_name[i]);
		v = get(name);
		if (v && *v) {
			if (!(s->url = strdup(v)))
				return -ENOMEM;
		} else if ((v = get("OTEL_EXPORTER_OTLP_ENDPOINT")) && *v) {
			if (!(s->url = join(v, sig_path[i])))
				return -ENOMEM;
		}
		if ((v = var_of(get, i, "HEADERS", name, sizeof(name))) &&
		    (r = parse_list(name, v, c, i, why, whylen)))
			return r;
		if ((v = var_of(get, i, "TIMEOUT", name, sizeof(name)))) {
			char *end;
			long t;

			errno = 0;
			t = strtol(v, &end, 10);
			if (errno || end == v || *end || t <= 0 || t > 86400000) {
				snprintf(why, whylen, "%s: '%s' is not a number of milliseconds",
					 name, v);
				return -EINVAL;
			}
			s->timeout_ms = t;
		}
		if ((v = var_of(get, i, "COMPRESSION", name, sizeof(name)))) {
			if (strcmp(v, "gzip") && strcmp(v, "none")) {
				snprintf(why, whylen, "%s: unknown compression '%s' (gzip, none)",
					 name, v);
				return -EINVAL;
			}
			s->gzip = !strcmp(v, "gzip");
		}
		if ((v = var_of(get, i, "PROTOCOL", name, sizeof(name)))) {
			s->protocol = utrace__otlp_protocol_parse(v);
			if (s->protocol == UTRACE__OTLP_UNSET) {
				snprintf(why, whylen, "%s: '%s' is not a protocol utrace speaks "
					 "(http/protobuf, http/json; not grpc)", name, v);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int utrace__otlp_protocol_parse(const char *s)
{
	return !strcmp(s, "http/protobuf") ? UTRACE__OTLP_PROTOBUF :
	       !strcmp(s, "http/json") ? UTRACE__OTLP_JSON : UTRACE__OTLP_UNSET;
}

int utrace__otlp_proc_identity(int pid, char **cmdline, uint64_t *start)
{
	char path[64], buf[1024], *p;
	size_t n, i;
	FILE *f;

	*cmdline = NULL;
	*start = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* after the comm's last ')': state is field 3, starttime field 22 */
	p = strrchr(buf, ')');
	for (i = 3; p && i <= 22; i++)
		p = strchr(p + 1, ' ');
	if (p)
		*start = strtoull(p + 1, NULL, 10);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && !buf[n - 1])
		n--;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
	*cmdline = strdup(buf);
	return *cmdline ? 0 : -ENOMEM;
}

void utrace__otlp_config_free(struct utrace__otlp_config *c)
{
	size_t i;
	int s;

	for (s = 0; s < 2; s++) {
		free(c->sig[s].url);
		for (i = 0; i < c->sig[s].nr_headers; i++)
			free(c->sig[s].headers[i]);
		free(c->sig[s].headers);
	}
	for (i = 0; i < c->nr_attrs; i++) {
		free((char *)c->attrs[i].key);
		free((char *)c->attrs[i].value);
	}
	free(c->attrs);
	free(c->host_id);
	memset(c, 0, sizeof(*c));
}
