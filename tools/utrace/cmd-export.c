/* SPDX-License-Identifier: MIT */
/*
 * utrace export: send the events of a trace file, or of a running
 * process as they come, to an OpenTelemetry Collector over OTLP/HTTP
 * (JSON).  The requests are made by the reader library
 * (lib/reader/export-otlp.c) and sent by lib/otlp-http/ (libcurl); here
 * are the options and the live loop.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl-client.h"
#include "cmds.h"
#include "export.h"
#include "file-reader.h"
#include "live.h"
#include "otlp-config.h"
#include "otlp-http.h"
#include "pool.h"

static const char usage_text[] =
	"usage: utrace export [--otlp URL] [-i FILE | -p PID] [--slice BEGIN.FIELD:END.FIELD]...\n"
	"                     [--batch N] [--header NAME=VALUE]... [--service NAME]\n"
	"                     [--resource KEY=VALUE]... [--compress gzip|none]\n"
	"                     [--otlp-protocol http/protobuf|http/json]\n"
	"                     [--timeout SEC] [--retry-time SEC]\n"
	"                     [--trace-id FIELD] [--span-id FIELD] [--parent-id FIELD]\n"
	"\n"
	"Send events to an OpenTelemetry Collector over OTLP/HTTP (protobuf, or\n"
	"JSON): each\n"
	"event as a log record (POST URL/v1/logs), each --slice pair as a span\n"
	"(POST URL/v1/traces).  The OTEL_EXPORTER_OTLP_* variables (ENDPOINT,\n"
	"HEADERS, TIMEOUT, COMPRESSION, PROTOCOL and their LOGS_/TRACES_ forms),\n"
	"OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are read as the\n"
	"OpenTelemetry SDKs read them; the options come over them.\n"
	"\n"
	"      --otlp URL       the collector's base URL (http://127.0.0.1:4318;\n"
	"                       default: OTEL_EXPORTER_OTLP_ENDPOINT)\n"
	"  -i, --input FILE     the trace file (default: utrace.dat)\n"
	"  -p, --pid PID        a running process instead: its events as they come\n"
	"                       (consumed, as 'utrace pipe'), until it exits or Ctrl-C;\n"
	"                       a collector that does not take them never stops the\n"
	"                       reading: they are dropped, counted\n"
	"      --slice BEGIN.FIELD:END.FIELD\n"
	"                       a span from each BEGIN event to the END event of\n"
	"                       the same process with the same FIELD value\n"
	"                       ([SYSTEM:]EVENT.FIELD); may repeat\n"
	"      --trace-id FIELD the events' W3C trace id: FIELD's value (32 hex\n"
	"                       digits, or a traceparent, or any value: hashed), on\n"
	"                       their log records and on the spans they begin\n"
	"      --span-id FIELD  the events' span id (16 hex digits, or hashed); a\n"
	"                       slice's own id when its begin event has one\n"
	"      --parent-id FIELD  a slice's parent span id (else: a traceparent's,\n"
	"                       else the innermost slice of its trace open in the\n"
	"                       process)\n"
	"      --batch N        records (or spans) per request (default 512)\n"
	"      --batch-time SEC a record waits no longer for its batch (default 1)\n"
	"      --header NAME=VALUE  an HTTP header for every request; may repeat\n"
	"      --service NAME   service.name (default: OTEL_SERVICE_NAME, else each\n"
	"                       process's name)\n"
	"      --resource KEY=VALUE  a resource attribute (over the machine's and\n"
	"                       OTEL_RESOURCE_ATTRIBUTES'); may repeat\n"
	"      --compress gzip|none  the requests' encoding (default gzip)\n"
	"      --otlp-protocol http/protobuf|http/json  the bodies' encoding (default\n"
	"                       http/protobuf, as collectors expect)\n"
	"      --timeout SEC    one try of a request, connecting included (default 10)\n"
	"      --retry-time SEC give a request up after trying this long (default 60)\n"
	"  -h, --help           show this text\n";

static const char agent_usage_text[] =
	"usage: utrace agent [--otlp URL] [--config FILE] [-e EVENTS]... [--all-users]\n"
	"                    [the options of utrace export but -i, -p]\n"
	"\n"
	"Follow every traceable process of the runtime directory ($UTRACE_RUNTIME_DIR,\n"
	"else $XDG_RUNTIME_DIR/utrace, else /tmp/utrace-UID) as it starts and exits:\n"
	"switch the events on in each, and send its events to an OpenTelemetry\n"
	"Collector as they come (as 'utrace export -p' does one process), until\n"
	"SIGINT or SIGTERM.  A collector that does not keep up never makes a\n"
	"program wait: what it cannot take is dropped, counted; memory is bounded.\n"
	"\n"
	"      --config FILE    options, one a line: \"NAME VALUE\" for --NAME VALUE\n"
	"                       (\"otlp http://...\", \"event demo:*\"), '#' comments;\n"
	"                       the command line's come after them\n"
	"  -e, --event EVENTS   switch these on in each process, in the kernel's\n"
	"                       set_event syntax (default: those already on); may repeat\n"
	"      --all-users      root: every user's runtime directory too\n"
	"      --flight SEC     a flight recorder: each process's buffer in overwrite\n"
	"                       mode, nothing sent until its snapshot trigger fires;\n"
	"                       then its last SEC seconds, as one batch, each record\n"
	"                       tagged utrace.flight\n"
	"      --trigger EVENT=COMMAND  a trigger to set in each process (the\n"
	"                       trigger file's syntax: 'snapshot if lat > 1000');\n"
	"                       may repeat\n"
	"  -h, --help           show this text\n"
	"\n"
	"On SIGUSR1, and at the end, one line on stderr: the processes followed,\n"
	"the events sent, dropped by the agent and lost in the buffers.\n";

enum {
	OPT_OTLP = 256, OPT_SLICE, OPT_BATCH, OPT_BATCH_TIME, OPT_HEADER, OPT_SERVICE,
	OPT_COMPRESS, OPT_TIMEOUT, OPT_RETRY_TIME, OPT_RESOURCE, OPT_TRACE_ID, OPT_SPAN_ID,
	OPT_PARENT_ID, OPT_PROTOCOL, OPT_ALL_USERS, OPT_FLIGHT, OPT_TRIGGER,
};

static volatile sig_atomic_t stop;
static volatile sig_atomic_t tell;      /* agent: SIGUSR1 */

static void on_signal(int sig)
{
	int e = errno;

	(void)sig;
	/* (atomic: the sender thread reads it too, through the HTTP options) */
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	errno = e;
}

static bool stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

/* The exports: 0, 1 (problems, said), or -1: nothing could be read (said). */

/* SEC, a decimal number of seconds > 0, in ms; -1 when it is not one. */
static long long parse_ms(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 86400.0 * 365)
		return -1;
	return (long long)(v * 1000 + 0.999);
}

struct export_state {
	struct utrace__otlp *x;
	int status;
};

/*
 * A live export never stops reading for the collector (issue 27 item 7):
 * the requests go to a sender thread through a queue of at most
 * SEND_QUEUE_MAX of them and SEND_QUEUE_BYTES (a collector that stalls for
 * a while gets them late, not never); a batch that finds the queue full
 * is dropped, counted.  The sender delivers each with the OTLP retries (otlp-http.c);
 * one given up is dropped, counted, and the export goes on.  At the end
 * (the process exited, or SIGINT/SIGTERM) the buffers are taken once more
 * and the queue is sent (after a signal, one try each).  Before, the first
 * request given up ended the export while the program ran on, and its
 * last line counted only what it had read.
 */
#define SEND_QUEUE_MAX 1024
#define SEND_QUEUE_BYTES (64u << 20)

struct send_req {
	struct send_req *next;
	enum utrace__otlp_signal sig;
	char *body;
	size_t len, nr, nr_events;
};

struct sender {
	struct utrace__http *http;
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct send_req *head, **tail;
	size_t n, bytes;
	bool done;                      /* no more requests will come */
	/* what was delivered, and dropped (queue full, or given up) */
	uint64_t sent_events, dropped_events, sent_spans, dropped_spans;
};

static void sender_count(struct sender *s, const struct send_req *q, bool sent)
{
	if (q->sig == UTRACE__OTLP_LOGS)
		*(sent ? &s->sent_events : &s->dropped_events) += q->nr_events;
	else
		*(sent ? &s->sent_spans : &s->dropped_spans) += q->nr;
}

/*
 * The sender: each request with its retries.  A collector that does not
 * take them is said once ("dropping them") and once when it takes them
 * again, not at every request given up.  Once told to stop, a request
 * that fails drops the rest untried.
 */
static void *sender_main(void *arg)
{
	struct sender *s = arg;
	struct send_req *q;
	bool down = false;
	int r;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && !s->done)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!(q = s->head))
			break;
		s->head = q->next;
		if (!s->head)
			s->tail = &s->head;
		s->n--;
		s->bytes -= q->len;
		pthread_mutex_unlock(&s->lock);
		r = down && stopped() ? -ECANCELED :
			utrace__http_send(s->http, q->sig, q->body, q->len, q->nr, q->nr_events);
		if (r < 0 && r != -ECANCELED && !down)
			fprintf(stderr, "utrace: %s; dropping the requests, counted, until the "
				"collector takes them\n", utrace__http_last_error(s->http));
		else if (r == 0 && down)
			fprintf(stderr, "utrace: the collector takes the requests again\n");
		down = r < 0;
		pthread_mutex_lock(&s->lock);
		sender_count(s, q, r == 0);
		free(q->body);
		free(q);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The exporter's send() in a live export: queued, never waited for. */
static int sender_queue(void *arg, enum utrace__otlp_signal sig, const char *body, size_t len,
			size_t nr, size_t nr_events)
{
	struct sender *s = arg;
	struct send_req *q = malloc(sizeof(*q));

	if (q) {
		*q = (struct send_req){ NULL, sig, malloc(len), len, nr, nr_events };
		if (q->body)
			memcpy(q->body, body, len);
	}
	pthread_mutex_lock(&s->lock);
	if (!q || !q->body || s->n >= SEND_QUEUE_MAX || s->bytes + len > SEND_QUEUE_BYTES) {
		struct send_req d = { .sig = sig, .nr = nr, .nr_events = nr_events };

		sender_count(s, &d, false);
		pthread_mutex_unlock(&s->lock);
		if (q)
			free(q->body);
		free(q);
		return 0;
	}
	*s->tail = q;
	s->tail = &q->next;
	s->n++;
	s->bytes += len;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* live_take()'s callback: one take of the buffers. */
static int add_take(void *arg, struct utrace__tf *tf)
{
	struct export_state *es = arg;
	struct timespec rt, mono;
	int r;

	/* a live reading has no recording start: the clocks' offset now */
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	r = utrace__otlp_add(es->x, tf, ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000 +
			     (rt.tv_nsec - mono.tv_nsec));
	if (r > 0)
		es->status = 1;
	return r < 0 ? r : 0;
}

static int export_live(struct export_state *es, pid_t pid, uint32_t *comm_pid, char *comm)
{
	struct utrace__ctl *c = NULL;
	struct live *lv = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct utrace__ctl_info in;
	char err[512];
	int r;

	if (utrace__ctl_open(pid, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "utrace: %s\n", err);
		return -1;
	}
	r = live_open(&c, 1, &lv);
	if (r < 0) {
		const char *m = utrace__ctl_errmsg(c);

		if (m && *m)
			fprintf(stderr, "utrace: %s\n", m);
		else
			fprintf(stderr, "utrace: cannot read the buffers: %s\n", strerror(-r));
		utrace__ctl_close(c);
		return -1;
	}
	*comm_pid = (uint32_t)pid;
	{
		char *cmdline = NULL;
		uint64_t start = 0;

		/* what a live reading does not say: the command line, the start */
		if (utrace__otlp_proc_identity(pid, &cmdline, &start) == 0)
			utrace__otlp_set_process(es->x, (uint32_t)pid, cmdline, start);
		free(cmdline);
	}
	if (utrace__ctl_info(c, &in) == 0)
		memcpy(comm, in.comm, sizeof(in.comm));
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stopped()) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		long n = live_take(lv, add_take, es);

		if (n < 0)
			break;    /* the process is gone and was read out (or no memory) */
		if (utrace__otlp_tick(es->x) == -ENOMEM)
			break;
		if (n == 0)
			nanosleep(&ts, NULL);
	}
	/* told to stop: what the buffers hold now goes too */
	if (stopped())
		live_take(lv, add_take, es);
	live_close(lv);
	utrace__ctl_close(c);
	return 0;
}

static int export_file(struct export_state *es, const char *input)
{
	struct utrace__tf *tf = NULL;
	uint64_t rt, mono;
	int r = utrace__tf_open(input, &tf);

	if (r == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		utrace__tf_close(tf);
		return -1;
	}
	if (!utrace__tf_page_size(tf) && utrace__tf_error(tf)) {
		fprintf(stderr, "utrace: %s\n", utrace__tf_error(tf));
		utrace__tf_close(tf);
		return -1;
	}
	/* the recording's start: CLOCK_REALTIME and CLOCK_MONOTONIC together */
	utrace__tf_start_time(tf, &rt, &mono);
	r = utrace__otlp_add(es->x, tf, (int64_t)(rt - mono));
	if (utrace__tf_warning(tf) && utrace__tf_cut(tf, NULL))
		fprintf(stderr, "utrace: %s: exported the events before it\n",
			utrace__tf_warning(tf));
	utrace__tf_close(tf);
	if (r == -ENOMEM) {
		fprintf(stderr, "utrace: '%s': out of memory\n", input);
		return 1;
	}
	return r ? 1 : 0;
}

/* The command line, parsed. */
struct export_opts {
	struct utrace__http_opts ho;
	struct utrace__otlp_opts xo;
	struct utrace__otlp_slice *slices;
	size_t nr_slices;
	struct utrace__otlp_config cfg;  /* the environment, the options over it */
	const char *input;
	pid_t pid;
	const char *cmd;             /* "export" or "agent" */
	char **events;               /* agent -e: set_event entries */
	size_t nr_events;
	bool all_users;              /* agent --all-users */
	uint64_t flight_ns;          /* agent --flight SEC: 0, continuous */
	char **triggers;             /* agent --trigger EVENT=COMMAND */
	size_t nr_triggers;
};

static const char *getenv_c(const char *name)
{
	return getenv(name);
}

static int nomem(void)
{
	fprintf(stderr, "utrace: out of memory\n");
	return 1;
}

/* -1 to go on, or the exit status (said why). */
static int parse_options(int argc, char **argv, struct export_opts *o)
{
	static const struct option longopts[] = {
		{ "otlp", required_argument, NULL, OPT_OTLP },
		{ "input", required_argument, NULL, 'i' },
		{ "pid", required_argument, NULL, 'p' },
		{ "slice", required_argument, NULL, OPT_SLICE },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "batch-time", required_argument, NULL, OPT_BATCH_TIME },
		{ "header", required_argument, NULL, OPT_HEADER },
		{ "service", required_argument, NULL, OPT_SERVICE },
		{ "compress", required_argument, NULL, OPT_COMPRESS },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "retry-time", required_argument, NULL, OPT_RETRY_TIME },
		{ "resource", required_argument, NULL, OPT_RESOURCE },
		{ "otlp-protocol", required_argument, NULL, OPT_PROTOCOL },
		{ "trace-id", required_argument, NULL, OPT_TRACE_ID },
		{ "span-id", required_argument, NULL, OPT_SPAN_ID },
		{ "parent-id", required_argument, NULL, OPT_PARENT_ID },
		{ "event", required_argument, NULL, 'e' },
		{ "all-users", no_argument, NULL, OPT_ALL_USERS },
		{ "flight", required_argument, NULL, OPT_FLIGHT },
		{ "trigger", required_argument, NULL, OPT_TRIGGER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char why[512];
	long long v;
	char *end;
	int c, i, er;

	er = utrace__otlp_config_env(&o->cfg, getenv_c, why, sizeof(why));
	if (er == -ENOMEM)
		return nomem();
	if (er < 0) {
		fprintf(stderr, "utrace export: %s\n", why);
		return 2;
	}
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":i:p:e:h", longopts, NULL)) != -1) {
		bool agent = !strcmp(o->cmd, "agent");

		/* the agent follows every process: no -i, -p; -e is its own */
		if (agent && (c == 'i' || c == 'p'))
			return usage_error(o->cmd, "%s", c == 'i' ? "no -i: the agent follows the "
					   "running processes" : "no -p: the agent follows every "
					   "process (utrace export -p follows one)");
		if (!agent && (c == 'e' || c == OPT_ALL_USERS || c == OPT_FLIGHT ||
			       c == OPT_TRIGGER))
			return usage_error(o->cmd, "%s", "-e, --all-users, --flight and --trigger "
					   "are utrace agent's options");
		switch (c) {
		case 'e': {
			void *p = realloc(o->events, (o->nr_events + 1) * sizeof(*o->events));

			if (!p)
				return nomem();
			o->events = p;
			if (!(o->events[o->nr_events] = strdup(optarg)))
				return nomem();
			o->nr_events++;
			break;
		}
		case OPT_ALL_USERS:
			o->all_users = true;
			break;
		case OPT_FLIGHT:
			v = parse_ms(optarg);
			if (v < 0)
				return usage_error(o->cmd, "'%s' is not a number of seconds", optarg);
			o->flight_ns = (uint64_t)v * 1000000;
			break;
		case OPT_TRIGGER: {
			const char *eq = strchr(optarg, '=');
			void *p;

			if (!eq || eq == optarg || !eq[1])
				return usage_error(o->cmd, "'%s' is not EVENT=COMMAND", optarg);
			p = realloc(o->triggers, (o->nr_triggers + 1) * sizeof(*o->triggers));
			if (!p)
				return nomem();
			o->triggers = p;
			if (!(o->triggers[o->nr_triggers] = strdup(optarg)))
				return nomem();
			o->nr_triggers++;
			break;
		}
		case OPT_OTLP:
			if (utrace__otlp_config_base(&o->cfg, optarg))
				return nomem();
			break;
		case 'i':
			o->input = optarg;
			break;
		case 'p':
			if (!parse_pid(optarg, &o->pid))
				return usage_error(o->cmd, "'%s' is not a process id", optarg);
			break;
		case OPT_SLICE: {
			void *p = realloc(o->slices, (o->nr_slices + 1) * sizeof(*o->slices));
			int r;

			if (!p)
				return nomem();
			o->slices = p;
			r = utrace__otlp_slice_parse(optarg, &o->slices[o->nr_slices]);
			if (r == -ENOMEM)
				return nomem();
			if (r < 0)
				return usage_error(o->cmd, "'%s' is not BEGIN.FIELD:END.FIELD "
						   "([SYSTEM:]EVENT.FIELD)", optarg);
			o->nr_slices++;
			break;
		}
		case OPT_BATCH:
			errno = 0;
			v = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > 1000000)
				return usage_error(o->cmd,
						   "'%s' is not a batch size (1 to 1000000)", optarg);
			o->xo.batch = (size_t)v;
			break;
		case OPT_BATCH_TIME:
		case OPT_TIMEOUT:
		case OPT_RETRY_TIME:
			v = parse_ms(optarg);
			if (v < 0)
				return usage_error(o->cmd, "'%s' is not a number of seconds", optarg);
			if (c == OPT_BATCH_TIME)
				o->xo.batch_ns = (uint64_t)v * 1000000;
			else if (c == OPT_TIMEOUT)
				for (i = 0; i < 2; i++)
					o->cfg.sig[i].timeout_ms = (long)v;
			else
				o->ho.retry_ms = (uint64_t)v;
			break;
		case OPT_HEADER: {
			const char *eq = strchr(optarg, '=');

			/* a token before '=', no line break anywhere */
			if (!eq || eq == optarg ||
			    strcspn(optarg, ": \t") < (size_t)(eq - optarg) ||
			    strpbrk(optarg, "\r\n"))
				return usage_error(o->cmd, "'%s' is not a header NAME=VALUE", optarg);
			if (utrace__otlp_config_header(&o->cfg, optarg, (size_t)(eq - optarg),
						       eq + 1, strlen(eq + 1)))
				return nomem();
			break;
		}
		case OPT_RESOURCE: {
			const char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || strpbrk(optarg, "\r\n"))
				return usage_error(o->cmd, "'%s' is not a resource attribute "
						   "KEY=VALUE", optarg);
			if (utrace__otlp_config_attr(&o->cfg, optarg, (size_t)(eq - optarg),
						     eq + 1, strlen(eq + 1)))
				return nomem();
			break;
		}
		case OPT_PROTOCOL:
			er = utrace__otlp_protocol_parse(optarg);
			if (er == UTRACE__OTLP_UNSET)
				return usage_error(o->cmd, "unknown protocol '%s' (http/protobuf, "
						   "http/json)", optarg);
			for (i = 0; i < 2; i++)
				o->cfg.sig[i].protocol = er;
			break;
		case OPT_TRACE_ID:
		case OPT_SPAN_ID:
		case OPT_PARENT_ID:
			if (!*optarg || strpbrk(optarg, " .:=,"))
				return usage_error(o->cmd, "'%s' is not a field name", optarg);
			*(c == OPT_TRACE_ID ? &o->xo.trace_field : c == OPT_SPAN_ID ?
			  &o->xo.span_field : &o->xo.parent_field) = optarg;
			break;
		case OPT_SERVICE:
			if (utrace__otlp_config_attr(&o->cfg, "service.name", 12, optarg,
						     strlen(optarg)))
				return nomem();
			break;
		case OPT_COMPRESS:
			if (strcmp(optarg, "gzip") && strcmp(optarg, "none"))
				return usage_error(o->cmd,
						   "unknown compression '%s' (gzip, none)", optarg);
			for (i = 0; i < 2; i++)
				o->cfg.sig[i].gzip = !strcmp(optarg, "gzip");
			break;
		case 'h':
			fputs(strcmp(o->cmd, "agent") ? usage_text : agent_usage_text, stdout);
			return 0;
		case ':':
			return usage_error(o->cmd, "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error(o->cmd, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(o->cmd, "unexpected argument '%s'", argv[optind]);
	if (!o->cfg.sig[0].url || !o->cfg.sig[1].url)
		return usage_error(o->cmd, "%s", "where to? give --otlp URL (or set "
				   "OTEL_EXPORTER_OTLP_ENDPOINT)");
	if (o->input && o->pid)
		return usage_error(o->cmd, "%s", "give -i FILE or -p PID, not both");
	for (i = 0; i < 2; i++) {
		const struct utrace__otlp_sigconf *sc = &o->cfg.sig[i];

		o->ho.sig[i] = (struct utrace__http_signal){
			.url = sc->url, .headers = sc->headers, .nr_headers = sc->nr_headers,
			.gzip = sc->gzip != 0, .json = sc->protocol == UTRACE__OTLP_JSON,
			.timeout_ms = sc->timeout_ms > 0 ? sc->timeout_ms :
							     10000 };
	}
	o->xo.resource = o->cfg.attrs;
	o->xo.nr_resource = o->cfg.nr_attrs;
	o->xo.host_id = o->cfg.host_id;
	o->xo.slices = o->slices;
	o->xo.nr_slices = o->nr_slices;
	return -1;
}

static void free_options(struct export_opts *o)
{
	size_t i;

	for (i = 0; i < o->nr_slices; i++)
		utrace__otlp_slice_free(&o->slices[i]);
	free(o->slices);
	utrace__otlp_config_free(&o->cfg);
	for (i = 0; i < o->nr_events; i++)
		free(o->events[i]);
	free(o->events);
	for (i = 0; i < o->nr_triggers; i++)
		free(o->triggers[i]);
	free(o->triggers);
}

/* What was sent and what was not, on stderr; the exit status. */
static int report(const struct utrace__otlp *x, const struct utrace__http *http)
{
	struct utrace__otlp_stats st;
	struct utrace__http_stats hs;
	int status = 0;

	utrace__otlp_get_stats(x, &st);
	utrace__http_get_stats(http, &hs);
	if (st.sent_records < st.records || st.sent_spans < st.spans) {
		fprintf(stderr, "utrace: not delivered: %llu of %llu log records, %llu of %llu "
			"spans\n", (unsigned long long)(st.records - st.sent_records),
			(unsigned long long)st.records,
			(unsigned long long)(st.spans - st.sent_spans),
			(unsigned long long)st.spans);
		status = 1;
	}
	if (hs.rejected_records || hs.rejected_spans) {
		fprintf(stderr, "utrace: the collector rejected %llu log records and %llu "
			"spans of those delivered\n", (unsigned long long)hs.rejected_records,
			(unsigned long long)hs.rejected_spans);
		status = 1;
	}
	if (st.lost)
		fprintf(stderr, "utrace: %llu events were lost before the export read them "
			"(sent as [LOST] records)\n", (unsigned long long)st.lost);
	if (st.open_slices || st.stray_ends)
		fprintf(stderr, "utrace: slices: %llu begins without an end, %llu ends "
			"without a begin (not sent)\n", (unsigned long long)st.open_slices,
			(unsigned long long)st.stray_ends);
	fprintf(stderr, "utrace: sent %llu log records and %llu spans in %llu requests "
		"(%llu bytes, %llu tries)\n", (unsigned long long)st.sent_records,
		(unsigned long long)st.sent_spans, (unsigned long long)hs.requests,
		(unsigned long long)hs.bytes, (unsigned long long)hs.tries);
	return status;
}

/*
 * export -p: the live export with its sender thread; what happened to
 * every event fired while attached, on the last line; the exit status.
 */
static int export_live_sent(struct export_opts *o, struct export_state *es,
			    struct utrace__http *http)
{
	struct sender s = { .http = http };
	struct utrace__otlp_stats st;
	struct utrace__http_stats hs;
	char comm[17] = "";
	uint32_t pid = 0;
	int status;

	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	s.tail = &s.head;
	o->xo.send = sender_queue;
	o->xo.arg = &s;
	o->xo.keep_going = true;
	es->x = utrace__otlp_new(&o->xo);
	if (!es->x)
		return nomem();
	if (pthread_create(&s.th, NULL, sender_main, &s) != 0) {
		fprintf(stderr, "utrace: cannot start the sender thread\n");
		return 1;
	}
	status = export_live(es, o->pid, &pid, comm);
	if (status >= 0 && utrace__otlp_flush(es->x) == -ENOMEM)
		status = nomem();
	pthread_mutex_lock(&s.lock);
	s.done = true;
	pthread_cond_signal(&s.cond);
	pthread_mutex_unlock(&s.lock);
	pthread_join(s.th, NULL);
	if (status < 0)
		return 1;      /* nothing could be read: said why */
	utrace__otlp_get_stats(es->x, &st);
	utrace__http_get_stats(http, &hs);
	/* what never reached the queue (no memory) is dropped too */
	s.dropped_events = st.events - s.sent_events;
	if (hs.rejected_records || hs.rejected_spans)
		fprintf(stderr, "utrace: the collector rejected %llu log records and %llu "
			"spans of those delivered\n", (unsigned long long)hs.rejected_records,
			(unsigned long long)hs.rejected_spans);
	if (st.spans)
		fprintf(stderr, "utrace: %llu spans: %llu sent, %llu dropped\n",
			(unsigned long long)st.spans, (unsigned long long)s.sent_spans,
			(unsigned long long)(st.spans - s.sent_spans));
	fprintf(stderr, "utrace: pid %u (%s): %llu events while attached: %llu sent, %llu "
		"dropped by the export, %llu lost in the buffer (%llu requests, %llu tries)\n",
		pid, comm, (unsigned long long)(st.events + st.lost),
		(unsigned long long)s.sent_events, (unsigned long long)s.dropped_events,
		(unsigned long long)st.lost, (unsigned long long)hs.requests,
		(unsigned long long)hs.tries);
	return es->status | (s.dropped_events || st.spans > s.sent_spans ||
			     hs.rejected_records || hs.rejected_spans ? 1 : 0);
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = {
		.ho = { .retry_ms = 60000, .stop = &stop },
		.xo = { .batch = 512, .batch_ns = 1000000000 },
		.cmd = "export",
	};
	struct utrace__http *http = NULL;
	struct export_state es = { 0 };
	int status = parse_options(argc, argv, &o);

	if (status >= 0)
		goto out;
	status = 1;
	/* live, the sender says when requests are given up, once */
	o.ho.quiet = o.pid != 0;
	if (utrace__http_new(&o.ho, &http) < 0)
		goto out;
	o.xo.send = utrace__http_send;
	o.xo.arg = http;
	if (!o.pid && !(es.x = utrace__otlp_new(&o.xo))) {
		status = nomem();
		goto out;
	}
	if (o.pid) {
		status = export_live_sent(&o, &es, http);
		goto out;
	}
	status = export_file(&es, o.input ? o.input : "utrace.dat");
	if (status < 0) {
		status = 1;     /* nothing to export: said why */
		goto out;
	}
	if (utrace__otlp_flush(es.x) == -ENOMEM) {
		status = nomem();
		goto out;
	}
	status |= es.status | report(es.x, http);
out:
	utrace__otlp_free(es.x);
	utrace__http_free(http);
	free_options(&o);
	return status;
}

/*
 * utrace agent (issue 34 item 5): export -p for every traceable process
 * of the runtime directory.  Every AGENT_SCAN_MS it lists the processes
 * (utrace__ctl_list), opens the new ones, switches the -e events on in
 * them and reads their buffers from then on (live_add); each take of all
 * the buffers goes to one exporter, whose requests go to the sender
 * thread through its bounded queue (a full queue drops, counted), so
 * nothing waits for the collector, neither the agent's reading nor the
 * programs, whose buffers only lose what is not read in time (counted by
 * the buffers).  A process that exited is read out, then forgotten: its
 * control closed, the exporter's group of it dropped once sent; the pids
 * that could not be followed are remembered only while they are listed.
 */
#define AGENT_SCAN_MS 100
#define AGENT_TAKE_MS 50
#define AGENT_TRIES 20          /* a process not followable yet: tried 2 s */

struct agent_proc {
	struct utrace__ctl *c;
	pid_t pid;
	int seq;                        /* --flight: the last snapshot shipped */
	int mode;                       /* --flight: its buffer's mode before */
	uint32_t nr_events;             /* registered when last switched on */
};

/* A listed pid not followed: tried 'tries' times, or ended (read out,
 * but its socket still listed: a zombie not reaped yet). */
struct agent_tried {
	pid_t pid;
	unsigned int tries;
};

struct agent {
	struct export_opts *o;
	struct export_state *es;
	struct live *lv;
	struct agent_proc *procs;
	size_t n;
	struct agent_tried *tried;      /* listed, not followed */
	size_t nr_tried;
	uint64_t followed, ended, failed, missed;
	uint64_t flights;               /* --flight: snapshots shipped */
	char tag[64];
};

static bool agent_known(const struct agent *ag, pid_t pid)
{
	size_t i;

	for (i = 0; i < ag->n; i++)
		if (ag->procs[i].pid == pid)
			return true;
	for (i = 0; i < ag->nr_tried; i++)
		if (ag->tried[i].pid == pid)
			return ag->tried[i].tries >= AGENT_TRIES;
	return pid == getpid();
}

/* pid could not be followed (again), or ended (ended: never again). */
static void agent_not_followed(struct agent *ag, pid_t pid, bool ended)
{
	size_t i;

	for (i = 0; i < ag->nr_tried && ag->tried[i].pid != pid; i++)
		;
	if (i == ag->nr_tried)
		ag->tried[ag->nr_tried++] = (struct agent_tried){ pid, 0 };
	ag->tried[i].tries = ended ? AGENT_TRIES : ag->tried[i].tries + 1;
	if (!ended && ag->tried[i].tries == AGENT_TRIES)
		ag->failed++;
}

/* Switch the -e entries on (on) or off again (!entry) in a process. */
static void agent_events(const struct agent *ag, struct utrace__ctl *c, bool on)
{
	size_t k;

	for (k = 0; k < ag->o->nr_events; k++) {
		char *copy = strdup(ag->o->events[k]), *save = NULL, *tok;

		for (tok = copy ? strtok_r(copy, ", \t", &save) : NULL; tok;
		     tok = strtok_r(NULL, ", \t", &save)) {
			char off[256];

			if (on) {
				utrace__ctl_set_event(c, tok, strlen(tok));
			} else if (tok[0] != '!' && strlen(tok) < sizeof(off) - 1) {
				snprintf(off, sizeof(off), "!%s", tok);
				utrace__ctl_set_event(c, off, strlen(off));
			}
		}
		free(copy);
	}
}

static void agent_gone(void *arg, struct utrace__ctl *c);

enum flight_op {
	FLIGHT_SET,             /* overwrite mode (the mode before in *mode), triggers */
	FLIGHT_AGAIN,           /* the triggers of events registered since */
	FLIGHT_UNDO,            /* the triggers removed, the mode of before (*mode) */
};

/*
 * --flight: the process keeps its last events (overwrite mode) and its
 * --trigger entries; 0 or -1 (not followed).
 */
static int agent_flight_setup(struct agent *ag, struct utrace__ctl *c, enum flight_op op,
			      int *mode)
{
	struct utrace__ctl_event *evs = NULL;
	size_t nr = 0, k, j;
	int fd, r = 0;

	if (op == FLIGHT_SET) {
		if (utrace__ctl_pool(c, &fd) < 0)
			return -1;
		close(fd);
		*mode = utrace__ctl_pool_mode(c, -1);
		if (*mode < 0 || utrace__ctl_pool_mode(c, UTRACE_MODE_OVERWRITE) < 0)
			return -1;
	}
	if (op == FLIGHT_UNDO && *mode >= 0)
		utrace__ctl_pool_mode(c, *mode);
	if (ag->o->nr_triggers && utrace__ctl_events(c, &evs, &nr) < 0)
		return -1;
	for (k = 0; k < ag->o->nr_triggers && !r; k++) {
		const char *t = ag->o->triggers[k], *eq = strchr(t, '='), *colon;
		size_t n = (size_t)(eq - t);

		colon = memchr(t, ':', n);
		for (j = 0; j < nr; j++) {
			const struct utrace__ctl_event *e = &evs[j];

			if (colon ? (strlen(e->system) == (size_t)(colon - t) &&
				     !strncmp(e->system, t, (size_t)(colon - t)) &&
				     strlen(e->name) == n - (size_t)(colon - t) - 1 &&
				     !strncmp(e->name, colon + 1, n - (size_t)(colon - t) - 1))
				  : (strlen(e->name) == n && !strncmp(e->name, t, n))) {
				char *cmd = malloc(strlen(eq + 1) + 2);
				int w;

				if (!cmd)
					continue;
				sprintf(cmd, "%s%s", op == FLIGHT_UNDO ? "!" : "", eq + 1);
				w = utrace__ctl_trigger(c, e->id, cmd, 0, NULL);
				free(cmd);
				/* (set again: the ones there already refuse, -EEXIST) */
				if (op == FLIGHT_SET && w < 0)
					r = -1;
			}
		}
	}
	utrace__ctl_events_free(evs, nr);
	return r;
}

/* live_take()'s callback for a snapshot: the window, one batch. */
static int add_flight(void *arg, struct utrace__tf *tf)
{
	return add_take(arg, tf);
}

/* --flight: ship the snapshots the processes' triggers took since. */
static void agent_flights(struct agent *ag)
{
	size_t i;

	for (i = 0; i < ag->n; i++) {
		struct agent_proc *p = &ag->procs[i];
		struct timespec rt;
		struct live *lv;
		uint64_t until = 0;
		int fd, seq = utrace__ctl_snapshot(p->c, &fd, &until);

		if (seq <= 0)
			continue;
		/* the copy up to the trigger's event (later ones are not its) */
		if (seq != p->seq && live_open_copy(p->c, fd, until, &lv) == 0) {
			clock_gettime(CLOCK_REALTIME, &rt);
			snprintf(ag->tag, sizeof(ag->tag), "snapshot %d of pid %d", seq,
				 (int)p->pid);
			/* the last N seconds before now, within a scan of the trigger */
			utrace__otlp_set_window(ag->es->x, (uint64_t)rt.tv_sec * 1000000000 +
						(uint64_t)rt.tv_nsec - ag->o->flight_ns, ag->tag);
			live_take(lv, add_flight, ag->es);
			utrace__otlp_flush(ag->es->x);
			utrace__otlp_set_window(ag->es->x, 0, NULL);
			live_close(lv);
			ag->flights++;
		}
		p->seq = seq;
		close(fd);
	}
}

/* --flight: the processes that exited (nothing read: forgotten). */
static void agent_flight_gone(struct agent *ag)
{
	size_t i = 0;

	while (i < ag->n) {
		if (kill(ag->procs[i].pid, 0) == 0 || errno != ESRCH) {
			i++;
			continue;
		}
		agent_gone(ag, ag->procs[i].c);
	}
}

/*
 * Events that registered since the process was switched on (a library
 * loaded later, or a program still starting when it was adopted): the -e
 * entries and the triggers again (as utrace top does).
 */
static void agent_refresh(struct agent *ag)
{
	struct utrace__ctl_info in;
	size_t i;

	for (i = 0; i < ag->n; i++) {
		struct agent_proc *p = &ag->procs[i];

		if (utrace__ctl_info(p->c, &in) < 0 || in.nr_events == p->nr_events)
			continue;
		p->nr_events = in.nr_events;
		agent_events(ag, p->c, true);
		if (ag->o->flight_ns)
			agent_flight_setup(ag, p->c, FLIGHT_AGAIN, &p->mode);
	}
}

/* The socket a listing named is still there. */
static bool listed_here(const char *sock)
{
	struct stat st;

	return stat(sock, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* The processes that started since the last look: followed.  -ENOMEM or 0. */
static int agent_adopt(struct agent *ag)
{
	struct utrace__ctl_proc *list = NULL;
	size_t nl = 0, i, k;

	if (utrace__ctl_list(&list, &nl, ag->o->all_users ? UTRACE__CTL_ALL_USERS : 0) < 0)
		return 0;
	/* the pids that could not be followed, while they are listed */
	for (i = k = 0; i < ag->nr_tried; i++) {
		size_t j;

		for (j = 0; j < nl && list[j].pid != ag->tried[i].pid; j++)
			;
		if (j < nl)
			ag->tried[k++] = ag->tried[i];
		else if (ag->tried[i].tries < AGENT_TRIES)
			ag->missed++;   /* gone before it could be followed */
	}
	ag->nr_tried = k;
	for (i = 0; i < nl; i++) {
		struct agent_proc *v;
		struct utrace__ctl *c;
		char err[256], *cmdline = NULL;
		struct utrace__ctl_info in;
		uint64_t start = 0;
		struct agent_tried *t;
		int mode;

		if (agent_known(ag, list[i].pid))
			continue;
		v = realloc(ag->procs, (ag->n + 1) * sizeof(*v));
		if (v)
			ag->procs = v;
		t = realloc(ag->tried, (ag->nr_tried + 1) * sizeof(*t));
		if (t)
			ag->tried = t;
		if (!v || !t) {
			free(list);
			return -ENOMEM;
		}
		if (utrace__ctl_open(list[i].pid, &c, err, sizeof(err)) < 0) {
			agent_not_followed(ag, list[i].pid, false);
			continue;
		}
		/* the process listed, and no other: ctl_open() looks in every
		 * runtime directory (root), the listing in ours only */
		if (utrace__ctl_info(c, &in) < 0 || in.pid != (uint32_t)list[i].pid ||
		    !listed_here(list[i].sock)) {
			agent_not_followed(ag, list[i].pid, true);
			utrace__ctl_close(c);
			continue;
		}
		/* its command line and start (for service.instance.id) */
		if (utrace__otlp_proc_identity(list[i].pid, &cmdline, &start) == 0)
			utrace__otlp_set_process(ag->es->x, (uint32_t)list[i].pid, cmdline, start);
		free(cmdline);
		agent_events(ag, c, true);
		mode = -1;
		if (ag->o->flight_ns && agent_flight_setup(ag, c, FLIGHT_SET, &mode) < 0) {
			if (mode >= 0)
				agent_flight_setup(ag, c, FLIGHT_UNDO, &mode);
			agent_not_followed(ag, list[i].pid, false);
			utrace__ctl_close(c);
			continue;
		}
		if (!ag->o->flight_ns && live_add(ag->lv, c) < 0) {
			utrace__otlp_forget(ag->es->x, (uint32_t)list[i].pid);
			agent_not_followed(ag, list[i].pid, false);
			utrace__ctl_close(c);
			continue;
		}
		ag->procs[ag->n++] = (struct agent_proc){ c, list[i].pid, 0, mode, in.nr_events };
		ag->followed++;
	}
	free(list);
	return 0;
}

/* live_drop_gone_each(): a process exited and was read out. */
static void agent_gone(void *arg, struct utrace__ctl *c)
{
	struct agent *ag = arg;
	size_t i;

	for (i = 0; i < ag->n; i++)
		if (ag->procs[i].c == c) {
			struct agent_tried *t = realloc(ag->tried, (ag->nr_tried + 1) * sizeof(*t));

			utrace__otlp_forget(ag->es->x, (uint32_t)ag->procs[i].pid);
			/* (no memory: it may be followed again while listed) */
			if (t) {
				ag->tried = t;
				agent_not_followed(ag, ag->procs[i].pid, true);
			}
			ag->procs[i] = ag->procs[--ag->n];
			break;
		}
	utrace__ctl_close(c);
	ag->ended++;
}

static void on_usr1(int sig)
{
	(void)sig;
	tell = 1;
}

/* The agent's line: what happened to the events so far. */
static void agent_say(const struct agent *ag, struct sender *s)
{
	struct utrace__otlp_stats st;
	uint64_t sent, dropped;
	char flights[96] = "";

	utrace__otlp_get_stats(ag->es->x, &st);
	if (ag->o->flight_ns)
		snprintf(flights, sizeof(flights), "; %llu snapshots shipped, %llu older events "
			 "left", (unsigned long long)ag->flights,
			 (unsigned long long)st.before_window);
	pthread_mutex_lock(&s->lock);
	sent = s->sent_events;
	dropped = s->dropped_events;
	pthread_mutex_unlock(&s->lock);
	fprintf(stderr, "utrace agent: %llu processes followed (%zu now, %llu ended, %llu not "
		"followable, %llu gone before), %llu events: %llu sent, %llu dropped by the agent, "
		"%llu waiting, %llu lost in the buffers; %llu spans; %zu processes kept%s\n",
		(unsigned long long)ag->followed, ag->n, (unsigned long long)ag->ended,
		(unsigned long long)ag->failed, (unsigned long long)ag->missed,
		(unsigned long long)(st.events + st.lost),
		(unsigned long long)sent, (unsigned long long)dropped,
		(unsigned long long)(st.events - sent - dropped), (unsigned long long)st.lost,
		(unsigned long long)st.spans, utrace__otlp_nr_processes(ag->es->x), flights);
}

static int agent_run(struct export_opts *o, struct utrace__http *http)
{
	struct sender s = { .http = http };
	struct export_state es = { 0 };
	struct agent ag = { .o = o, .es = &es };
	struct sigaction sa = { .sa_handler = on_signal }, su = { .sa_handler = on_usr1 };
	struct utrace__otlp_stats st;
	uint64_t next_scan = 0;
	int status = 0;
	size_t i;

	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	s.tail = &s.head;
	o->xo.send = sender_queue;
	o->xo.arg = &s;
	o->xo.keep_going = true;
	es.x = utrace__otlp_new(&o->xo);
	if (!es.x || live_open(NULL, 0, &ag.lv) < 0) {
		utrace__otlp_free(es.x);
		return nomem();
	}
	if (pthread_create(&s.th, NULL, sender_main, &s) != 0) {
		fprintf(stderr, "utrace: cannot start the sender thread\n");
		live_close(ag.lv);
		utrace__otlp_free(es.x);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &su, NULL);
	while (!stopped()) {
		struct timespec ts = { 0, AGENT_TAKE_MS * 1000 * 1000 }, now;
		uint64_t ms;
		long n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
		if (ms >= next_scan) {
			agent_refresh(&ag);
			if (agent_adopt(&ag) == -ENOMEM) {
				status = nomem();
				break;
			}
			next_scan = ms + AGENT_SCAN_MS;
		}
		if (o->flight_ns) {
			agent_flights(&ag);
			agent_flight_gone(&ag);
			n = 0;
		} else {
			n = live_take(ag.lv, add_take, &es);
			if (n == -ENOMEM) {
				status = nomem();
				break;
			}
			/* the exited were read out by this take */
			live_drop_gone_each(ag.lv, agent_gone, &ag);
		}
		if (utrace__otlp_tick(es.x) == -ENOMEM) {
			status = nomem();
			break;
		}
		if (tell) {
			tell = 0;
			agent_say(&ag, &s);
		}
		if (n <= 0)
			nanosleep(&ts, NULL);
	}
	/* told to stop: what the buffers hold now goes too; the events
	 * switched on are switched off again in the processes that run on */
	if (o->flight_ns) {
		agent_flights(&ag);
	} else {
		live_take(ag.lv, add_take, &es);
		live_drop_gone_each(ag.lv, agent_gone, &ag);
	}
	for (i = 0; i < ag.n; i++) {
		agent_events(&ag, ag.procs[i].c, false);
		if (o->flight_ns)
			agent_flight_setup(&ag, ag.procs[i].c, FLIGHT_UNDO, &ag.procs[i].mode);
	}
	if (utrace__otlp_flush(es.x) == -ENOMEM)
		status = nomem();
	pthread_mutex_lock(&s.lock);
	s.done = true;
	pthread_cond_signal(&s.cond);
	pthread_mutex_unlock(&s.lock);
	pthread_join(s.th, NULL);
	utrace__otlp_get_stats(es.x, &st);
	/* what never reached the queue (no memory) is dropped too */
	s.dropped_events = st.events - s.sent_events;
	agent_say(&ag, &s);
	live_close(ag.lv);
	for (i = 0; i < ag.n; i++)
		utrace__ctl_close(ag.procs[i].c);
	free(ag.procs);
	free(ag.tried);
	utrace__otlp_free(es.x);
	return status | es.status | (s.dropped_events ? 1 : 0);
}

/*
 * --config FILE: its lines "NAME VALUE" (or "NAME" alone) as --NAME VALUE
 * before the command line's arguments, in a new argv (*out, its strings
 * in *strs).  0, or the exit status (said why).
 */
static int read_config(int argc, char **argv, char ***out, char ***strs, size_t *nr_strs)
{
	const char *file = NULL;
	char **v = NULL, line[4096];
	size_t n = 0, i;
	FILE *f;
	int lineno = 0;

	*out = argv;
	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < (size_t)argc)
			file = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			file = argv[i] + 9;
	}
	if (!file)
		return -1;
	f = fopen(file, "re");
	if (!f) {
		fprintf(stderr, "utrace agent: cannot read '%s': %s\n", file, strerror(errno));
		return 1;
	}
	v = calloc((size_t)argc + 1, sizeof(*v));
	if (!v)
		goto nomem;
	v[n++] = argv[0];
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *name, *val, *e;
		void *t;

		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		name = p;
		p += strcspn(p, " \t=");
		val = NULL;
		if (*p) {
			*p++ = 0;
			while (*p == ' ' || *p == '\t' || *p == '=')
				p++;
			for (e = p + strlen(p); e > p && (e[-1] == ' ' || e[-1] == '\t'); e--)
				;
			*e = 0;
			val = *p ? p : NULL;
		}
		if (!strcmp(name, "config") || name[0] == '-') {
			fprintf(stderr, "utrace agent: %s:%d: '%s' is not an option name\n", file,
				lineno, name);
			fclose(f);
			free(v);
			return 2;
		}
		t = realloc(v, (n + 3 + (size_t)argc) * sizeof(*v));
		if (!t)
			goto nomem;
		v = t;
		t = realloc(*strs, (*nr_strs + 2) * sizeof(**strs));
		if (!t)
			goto nomem;
		*strs = t;
		if (!((*strs)[*nr_strs] = malloc(strlen(name) + 3)))
			goto nomem;
		sprintf((*strs)[*nr_strs], "--%s", name);
		v[n++] = (*strs)[(*nr_strs)++];
		if (val) {
			if (!((*strs)[*nr_strs] = strdup(val)))
				goto nomem;
			v[n++] = (*strs)[(*nr_strs)++];
		}
	}
	fclose(f);
	/* the command line's, without --config FILE */
	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "--config") && i + 1 < (size_t)argc) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--config=", 9))
			continue;
		v[n++] = argv[i];
	}
	v[n] = NULL;
	*out = v;
	return -1;
nomem:
	fclose(f);
	free(v);
	return nomem();
}

int cmd_agent(int argc, char **argv)
{
	struct export_opts o = {
		.ho = { .retry_ms = 60000, .stop = &stop, .quiet = true },
		.xo = { .batch = 512, .batch_ns = 1000000000 },
		.cmd = "agent",
	};
	struct sigaction su = { .sa_handler = on_usr1 };
	struct utrace__http *http = NULL;
	char **av = argv, **strs = NULL;
	size_t nr_strs = 0, i;
	int ac, status;

	/* SIGUSR1 asks for the accounting line: never the default (death),
	 * also while starting */
	sigaction(SIGUSR1, &su, NULL);
	status = read_config(argc, argv, &av, &strs, &nr_strs);

	if (status >= 0)
		goto out;
	for (ac = 0; av[ac]; ac++)
		;
	status = parse_options(ac, av, &o);
	if (status >= 0)
		goto out;
	status = 1;
	if (utrace__http_new(&o.ho, &http) < 0)
		goto out;
	status = agent_run(&o, http);
out:
	utrace__http_free(http);
	free_options(&o);
	if (av != argv)
		free(av);
	for (i = 0; i < nr_strs; i++)
		free(strs[i]);
	free(strs);
	return status;
}
