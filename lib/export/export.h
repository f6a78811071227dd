/* SPDX-License-Identifier: MIT */
/* The exporters of `utrace convert`, one export-<format>.c each.  Internal
 * to the reader library. */
#ifndef UTRACE_READER_EXPORT_H
#define UTRACE_READER_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"
#include "file-reader.h"
#include "formats.h"

/*
 * Write what can be read of the open trace file 'tf' to 'out' as a
 * trace-cmd trace.dat (version 7, not compressed; docs/trace-dat-export.md).
 * Says what is wrong on stderr; returns the exit status (0 or 1).
 */
int utrace__export_tracedat(struct utrace__tf *tf, const char *out) UTRACE_HIDDEN;

/*
 * Write the open trace file 'tf' to 'out' as one self-contained HTML page:
 * a timeline per thread, the events' lines and fields, and the begin/end
 * pairs of 'slices' ("BEGIN.FIELD:END.FIELD" each) with their latency
 * histograms (docs/html-export.md).  Says what is wrong on stderr;
 * returns the exit status (0 or 1).
 */
int utrace__export_html(struct utrace__tf *tf, const char *out, const char *const *slices,
			size_t nr_slices) UTRACE_HIDDEN;

/*
 * Write the open trace file 'tf' as a CTF 1.8 trace in the directory 'out'
 * (made; it may exist if empty): 'metadata' and one stream file per CPU
 * (docs/ctf-export.md).  Says what is wrong on stderr; the exit status.
 */
int utrace__export_ctf(struct utrace__tf *tf, const char *out) UTRACE_HIDDEN;

/*
 * Write the open trace file 'tf' as an SQLite database 'out' (replaced):
 * a table per event, processes, threads, events, lost and the view
 * all_events (docs/utrace-convert.1).  Not in libutrace-reader: in the
 * tool's own export-sqlite library, the one user of libsqlite3.
 */
int utrace__export_sqlite(struct utrace__tf *tf, const char *out);

/*
 * What the streamed exports (json, perfetto) make of chosen events:
 * --slice "BEGIN.FIELD:END.FIELD" pairs a begin event with the end event
 * whose FIELD has the same value on the same thread (BEGIN and END in
 * the set_event forms "system:name" or "name"); --counter "EVENT.FIELD"
 * makes a counter of a numeric field, per process.
 */
struct utrace__export_opts {
	const char *const *slices;
	size_t nr_slices;
	const char *const *counters;
	size_t nr_counters;
};

/* The --slice / --counter texts well formed?  0, or -EINVAL with the
 * reason in why ("--slice 'x': ..."). */
int utrace__export_opts_check(const struct utrace__export_opts *o, char *why,
			      size_t whylen) UTRACE_HIDDEN;

/*
 * Write the events of 'tf' to 'out' as Chrome's JSON trace event format
 * (export-json.c) or as a Perfetto protobuf trace (export-perfetto.c),
 * streamed: memory does not grow with the trace.  Say what is wrong on
 * stderr; return the exit status (0 or 1).
 */
int utrace__export_json(struct utrace__tf *tf, const char *out,
			const struct utrace__export_opts *o) UTRACE_HIDDEN;
int utrace__export_perfetto(struct utrace__tf *tf, const char *out,
			    const struct utrace__export_opts *o) UTRACE_HIDDEN;

/*
 * OpenTelemetry (export-otlp.c; docs/utrace-export.1): the events of trace
 * files or of live buffers as OTLP LogRecords, and declared begin/end
 * pairs as Spans, in OTLP/HTTP's JSON encoding, handed in batches to a
 * sender (the utrace tool's HTTP client, lib/otlp-http/): the library
 * makes the requests' bodies and never touches the network.
 */
enum utrace__otlp_signal { UTRACE__OTLP_LOGS, UTRACE__OTLP_TRACES };

/* --slice BEGIN.FIELD:END.FIELD: an event ([SYSTEM:]NAME) and its key field. */
struct utrace__otlp_slice {
	char *begin_sys, *begin, *begin_field;  /* begin_sys NULL: any system */
	char *end_sys, *end, *end_field;
};

/* A resource attribute, a string (--resource KEY=VALUE, OTEL_RESOURCE_ATTRIBUTES). */
struct utrace__otlp_attr {
	const char *key, *value;
};

struct utrace__otlp_opts {
	const char *service;            /* service.name; NULL: each process's comm */
	/* On every resource after the process's own attributes (process.*,
	 * service.name, service.instance.id), replacing those of the same key:
	 * the machine's (host.*, os.type, telemetry.sdk.*) and the user's. */
	const struct utrace__otlp_attr *resource;
	size_t nr_resource;
	const char *host_id;            /* in each process's service.instance.id
					 * and each record's log.record.uid */
	/*
	 * W3C trace context from the events' fields (NULL: none): the trace
	 * id, the event's span id, a span's parent span id.  A field's value
	 * is taken as it is when it is an id (32 or 16 hex digits, not all
	 * 0), split when it is a traceparent ("00-TRACE-PARENT-FLAGS": the
	 * trace and the parent), and made an id of (hashed) otherwise, so
	 * that a request number gives every process the same trace id.
	 */
	const char *trace_field, *span_field, *parent_field;
	size_t batch;                   /* records (or spans) per request */
	uint64_t batch_ns;              /* the oldest waits no longer (utrace__otlp_tick) */
	const struct utrace__otlp_slice *slices;
	size_t nr_slices;
	/* Deliver one request: 0, or a negative code to stop (the sender said
	 * why on stderr); nr is the records or spans in it, nr_events the
	 * records among them that are events (not [LOST] markers). */
	int (*send)(void *arg, enum utrace__otlp_signal sig, const char *body, size_t len,
		    size_t nr, size_t nr_events);
	void *arg;
	/* A failed send() stops nothing: later batches are sent all the same
	 * (a live export, whose sender counts what it could not deliver). */
	bool keep_going;
};

struct utrace__otlp_stats {
	uint64_t records, spans;        /* made */
	uint64_t events;                /* of the records, events (not [LOST] markers) */
	uint64_t sent_records, sent_spans;  /* delivered (send() returned 0) */
	uint64_t sent_events;           /* of the sent records, events */
	uint64_t lost;                  /* events the buffers lost (the markers' counts) */
	uint64_t open_slices;           /* a begin without an end (at the end, or
					 * followed by a begin of the same key) */
	uint64_t replaced_begins;       /* the latter */
	uint64_t abandoned;             /* open when their process was forgotten */
	uint64_t before_window;         /* events older than the flight window */
	uint64_t stray_ends;            /* an end without a begin */
};

/* Parse "BEGIN.FIELD:END.FIELD": 0, or -EINVAL; utrace__otlp_slice_free(). */
int utrace__otlp_slice_parse(const char *text, struct utrace__otlp_slice *s) UTRACE_HIDDEN;
void utrace__otlp_slice_free(struct utrace__otlp_slice *s) UTRACE_HIDDEN;

struct utrace__otlp;
struct utrace__otlp *utrace__otlp_new(const struct utrace__otlp_opts *o) UTRACE_HIDDEN;
/*
 * Add every event (and lost-events marker) of 'tf', its times set to
 * CLOCK_MONOTONIC (utrace__tf_set_clock()) and moved by 'time_offset' ns
 * (CLOCK_MONOTONIC to Unix time), sending full batches.
 * Returns 0, 1 when the file had problems (said on stderr, the events
 * concerned left out), or a negative code: -ENOMEM, or send()'s failure,
 * after which nothing more is sent (later calls only count).
 */
int utrace__otlp_add(struct utrace__otlp *x, struct utrace__tf *tf, int64_t time_offset)
	UTRACE_HIDDEN;
/* Send the batches that waited longer than batch_ns: 0 or send()'s failure. */
int utrace__otlp_tick(struct utrace__otlp *x) UTRACE_HIDDEN;
/* Send all that waits: 0 or send()'s failure. */
int utrace__otlp_flush(struct utrace__otlp *x) UTRACE_HIDDEN;
void utrace__otlp_get_stats(const struct utrace__otlp *x, struct utrace__otlp_stats *st)
	UTRACE_HIDDEN;
/*
 * What a trace file does not say of a process: its command line (the
 * arguments, ' '-separated; process.command_line) and when it started
 * (any number that differs between two processes of the same pid: it
 * goes into service.instance.id).  0 or -ENOMEM.
 */
int utrace__otlp_set_process(struct utrace__otlp *x, uint32_t pid, const char *command_line,
			     uint64_t start) UTRACE_HIDDEN;
/*
 * The process exited and was read out (utrace agent): its slices still
 * open never end (counted as open_slices), and what is kept of it goes
 * once its records are sent, so that memory does not grow with the
 * processes a machine ran.
 */
void utrace__otlp_forget(struct utrace__otlp *x, uint32_t pid) UTRACE_HIDDEN;
/*
 * The flight recorder's window (utrace agent --flight): the next adds
 * take only events at or after since_ns (Unix ns; 0: all), each record
 * tagged with the attribute utrace.flight = tag (NULL: none, kept by the
 * caller).
 */
void utrace__otlp_set_window(struct utrace__otlp *x, uint64_t since_ns, const char *tag)
	UTRACE_HIDDEN;
/* The processes whose records or identity are kept (the agent's test). */
size_t utrace__otlp_nr_processes(const struct utrace__otlp *x) UTRACE_HIDDEN;
void utrace__otlp_free(struct utrace__otlp *x) UTRACE_HIDDEN;

#endif /* UTRACE_READER_EXPORT_H */
