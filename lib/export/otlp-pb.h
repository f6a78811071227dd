/* SPDX-License-Identifier: MIT */
/*
 * OTLP/HTTP's protobuf encoding (otlp-pb.c): the requests the exporter
 * makes in OTLP's JSON encoding (export-otlp.c) written again as the
 * binary protobuf of the same messages (opentelemetry-proto:
 * collector/logs/v1 ExportLogsServiceRequest, collector/trace/v1
 * ExportTraceServiceRequest), with the project's protobuf writer; and
 * the partial success of a protobuf answer read.
 */
#ifndef UTRACE_OTLP_PB_H
#define UTRACE_OTLP_PB_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "obuf.h"

/*
 * The request 'json' of signal 'sig' as protobuf, appended to out: 0, or
 * -EINVAL when the text is not such a request in OTLP's JSON encoding
 * (a field the messages do not have, a value of the wrong kind: the
 * exporter's own mistake), or -ENOMEM.
 */
int utrace__otlp_json_to_pb(const char *json, size_t len, enum utrace__otlp_signal sig,
			    struct utrace__obuf *out);

/*
 * An ExportLogsServiceResponse or ExportTraceServiceResponse: its
 * partial_success's rejected count (*rejected) and error message (into
 * msg, "" when none).  0, or -EINVAL when it is not one.
 */
int utrace__otlp_pb_partial(const unsigned char *p, size_t len, uint64_t *rejected, char *msg,
			    size_t msglen);

#endif /* UTRACE_OTLP_PB_H */
