/* SPDX-License-Identifier: MIT */
/*
 * What an OTLP exporter is configured by besides its command line
 * (otlp-config.c): the OpenTelemetry SDKs' environment variables
 * (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_* and
 * their _LOGS_ / _TRACES_ forms) and the machine's own resource
 * attributes (host.name, host.id, os.type, telemetry.sdk.*).  The tool's
 * commands (export, agent) lay their options over it.
 */
#ifndef UTRACE_OTLP_CONFIG_H
#define UTRACE_OTLP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"

enum utrace__otlp_protocol { UTRACE__OTLP_UNSET = -1, UTRACE__OTLP_PROTOBUF = 0,
			     UTRACE__OTLP_JSON = 1 };

/* One signal's (logs, traces) settings; "not set": NULL, -1. */
struct utrace__otlp_sigconf {
	char *url;                      /* the signal's full URL (BASE/v1/logs) */
	char **headers;                 /* "Name: value" */
	size_t nr_headers;
	int gzip;                       /* 1 gzip, 0 none, -1 not set */
	int protocol;                   /* enum utrace__otlp_protocol */
	long timeout_ms;                /* -1 not set */
};

struct utrace__otlp_config {
	struct utrace__otlp_sigconf sig[2];     /* [UTRACE__OTLP_LOGS], [..._TRACES] */
	struct utrace__otlp_attr *attrs;        /* the resource's, later ones win */
	size_t nr_attrs;
	char *host_id;                          /* /etc/machine-id, or NULL */
};

/*
 * Read the environment ('getenv' stands for getenv(); tests give their
 * own) into c (zeroed first).  0, or -EINVAL with why a variable is wrong
 * in why ("OTEL_EXPORTER_OTLP_TIMEOUT: 'x' is not ..."), or -ENOMEM.
 * The machine's attributes come first in c->attrs, then
 * OTEL_RESOURCE_ATTRIBUTES', then OTEL_SERVICE_NAME as service.name.
 */
int utrace__otlp_config_env(struct utrace__otlp_config *c, const char *(*getenv_fn)(const char *),
			    char *why, size_t whylen);
/* Add (or replace) a resource attribute: 0 or -ENOMEM. */
int utrace__otlp_config_attr(struct utrace__otlp_config *c, const char *key, size_t keylen,
			     const char *value, size_t valuelen);
/* Add a header line "Name: value" to both signals: 0 or -ENOMEM. */
int utrace__otlp_config_header(struct utrace__otlp_config *c, const char *name, size_t namelen,
			       const char *value, size_t valuelen);
/* Both signals' URLs from a base URL (--otlp): BASE/v1/logs, BASE/v1/traces. */
int utrace__otlp_config_base(struct utrace__otlp_config *c, const char *base);
/* The resource attribute KEY (or NULL). */
const char *utrace__otlp_config_get(const struct utrace__otlp_config *c, const char *key);
/* "http/protobuf", "http/json": the protocol, else UTRACE__OTLP_UNSET. */
int utrace__otlp_protocol_parse(const char *s);
/*
 * A running process's command line (its arguments ' '-separated, into
 * *cmdline, malloc'ed) and start time (clock ticks after boot, from
 * /proc/PID/stat): 0, or -errno (gone, not allowed, out of memory).
 */
int utrace__otlp_proc_identity(int pid, char **cmdline, uint64_t *start);
void utrace__otlp_config_free(struct utrace__otlp_config *c);

#endif /* UTRACE_OTLP_CONFIG_H */
