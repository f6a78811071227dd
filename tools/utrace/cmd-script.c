/* SPDX-License-Identifier: MIT */
/*
 * utrace script: print the events of a trace file in time order, one line
 * each, in the layout of the kernel's trace file:
 *
 *             comm-tid     [cpu] .....  sec.usec: event: TP_printk text
 *
 * or each event's fields (--fields), or one JSON object per event (--json).
 * The printing is the reader library's (lib/reader/print.c, formats.c);
 * here are the options and --list.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utrace/utrace.h>

#include "clock.h"
#include "setevent.h"
#include "file-reader.h"
#include "print.h"
#include "cmds.h"

/* --- the command --- */

static const char usage_text[] =
	"usage: utrace script [-i FILE] [-e EVENTS]... [--filter EVENT:EXPR]...\n"
	"                     [--clock CLOCK] [--fields | --json | --list]\n"
	"\n"
	"Print the events of a trace file in time order, one line each, as the\n"
	"kernel's trace file shows them.\n"
	"\n"
	"  -i, --input FILE    the trace file (default: utrace.dat)\n"
	"  -e, --event EVENTS  only these events, in the kernel's set_event syntax\n"
	"                      (sys:event, sys:*, *:event, event, !sys:event),\n"
	"                      ',' or ' ' apart; may be given more than once\n"
	"  -f, --filter EVENT:EXPR  only the events of EVENT (sys:event, sys:*, event)\n"
	"                      for which EXPR holds, in the kernel's filter language\n"
	"                      ('id > 5 && path ~ \"/api*\"'); events of other names\n"
	"                      pass (select with -e); may repeat, the last entry\n"
	"                      for an event wins\n"
	"      --clock CLOCK   times in this trace clock, not the one chosen when it\n"
	"                      was recorded (its trace_clock, mono by default):\n"
	"                      mono, mono_raw, boot, tai, x86-tsc (ticks), local,\n"
	"                      global, perf (= mono_raw here)\n"
	"      --fields        each event's fields as name=value, not its TP_printk text\n"
	"      --json          one JSON object per line for each event\n"
	"  -l, --list          list the events in the file ('system:event' lines,\n"
	"                      each once; with -e, the selected ones) and exit\n"
	"  -h, --help          show this text\n";

/* --- utrace script --list --- */

struct list_key {
	const char *system, *name;
	size_t index;
};

static int cmp_list_key(const void *a, const void *b)
{
	const struct list_key *x = a, *y = b;
	int c = strcmp(x->system, y->system);

	if (!c)
		c = strcmp(x->name, y->name);
	if (!c)
		c = x->index < y->index ? -1 : x->index > y->index;
	return c;
}

static int cmp_list_index(const void *a, const void *b)
{
	const struct list_key *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The events of a trace file, one 'system:event' line each (as the
 * kernel's available_events), each once, in the order of the file; with
 * -e, only the selected ones.  Returns the exit status.
 */
static int list_events(const struct utrace__print_opts *o, struct utrace__tf *tf)
{
	struct utrace__tf_format *f;
	struct list_key *k;
	size_t n = 0, i, j;
	int status = 0;

	if (utrace__tf_error(tf)) {
		fprintf(stderr, "utrace: %s\n", utrace__tf_error(tf));
		status = 1;
	}
	while (utrace__tf_format(tf, n))
		n++;
	k = calloc(n ? n : 1, sizeof(*k));
	if (!k) {
		fprintf(stderr, "utrace: out of memory\n");
		return 1;
	}
	for (i = 0; (f = utrace__tf_format(tf, i)); i++)
		k[i] = (struct list_key){ f->system, f->name, i };
	qsort(k, n, sizeof(*k), cmp_list_key);
	for (i = j = 0; i < n; i++)
		if (!j || strcmp(k[i].system, k[j - 1].system) ||
		    strcmp(k[i].name, k[j - 1].name))
			k[j++] = k[i];
	qsort(k, j, sizeof(*k), cmp_list_index);
	for (i = 0; i < j; i++)
		if (utrace__print_select(o, k[i].system, k[i].name))
			printf("%s:%s\n", k[i].system, k[i].name);
	free(k);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "utrace: cannot write the output: %s\n", strerror(errno));
		status = 1;
	}
	for (i = 0; i < o->nr_ev; i++)
		if (!o->ev_matched[i]) {
			fprintf(stderr, "utrace: no event in '%s' matches '%s'\n",
				utrace__tf_name(tf), o->ev_text[i]);
			status = 1;
		}
	return status;
}

/* Split one -e argument into set_event tokens (cmds.h). */
int script_add_events(struct utrace__print_opts *o, char *arg)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(arg, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		size_t n = o->nr_ev + 1;
		void *a = realloc(o->ev, n * sizeof(*o->ev));

		if (!a)
			return -ENOMEM;
		o->ev = a;
		a = realloc(o->ev_text, n * sizeof(*o->ev_text));
		if (!a)
			return -ENOMEM;
		o->ev_text = a;
		a = realloc(o->ev_matched, n * sizeof(*o->ev_matched));
		if (!a)
			return -ENOMEM;
		o->ev_matched = a;
		if (utrace__parse_set_event(tok, strlen(tok), &o->ev[o->nr_ev]) < 0)
			return UTRACE_EBADSPEC;
		o->ev_text[o->nr_ev] = tok;
		o->ev_matched[o->nr_ev] = false;
		o->nr_ev++;
	}
	return 0;
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "event", required_argument, NULL, 'e' },
		{ "filter", required_argument, NULL, 'f' },
		{ "fields", no_argument, NULL, 'F' },
		{ "clock", required_argument, NULL, 'C' },
		{ "json", no_argument, NULL, 'J' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct utrace__print_opts o = { .input = "utrace.dat", .mode = UTRACE__OUT_TEXT };
	char **ev_args = NULL;
	struct utrace__tf *tf = NULL;
	int c, status = 0, nr_fields = 0, nr_json = 0, nr_ev_args = 0, list = 0, clock = -1;
	uint32_t bad_pid;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":i:e:f:lh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.input = optarg;
			break;
		case 'e': {
			char **a = realloc(ev_args, (size_t)(nr_ev_args + 1) * sizeof(*a));

			if (!a || !(a[nr_ev_args] = strdup(optarg))) {
				free(a ? a : ev_args);
				fprintf(stderr, "utrace: out of memory\n");
				return 1;
			}
			ev_args = a;
			nr_ev_args++;
			break;
		}
		case 'f': {
			struct utrace__print_filter *a;
			size_t ev, ev_len, ex;

			if (utrace__split_event_filter(optarg, strlen(optarg), &ev, &ev_len,
						       &ex) < 0) {
				status = usage_error("script", "bad filter '%s': give "
						     "EVENT:EXPRESSION, as demo:demo_request:"
						     "'id > 5'", optarg);
				goto done;
			}
			a = realloc(o.filters, (o.nr_filters + 1) * sizeof(*a));
			if (!a) {
				fprintf(stderr, "utrace: out of memory\n");
				status = 1;
				goto done;
			}
			o.filters = a;
			a = &o.filters[o.nr_filters];
			memset(a, 0, sizeof(*a));
			if (utrace__parse_set_event(optarg + ev, ev_len, &a->m) < 0) {
				status = usage_error("script", "bad event specification in '%s'",
						     optarg);
				goto done;
			}
			a->text = optarg;
			a->expr = optarg + ex;
			o.nr_filters++;
			break;
		}
		case 'C':
			clock = utrace__trace_clock_parse(optarg);
			if (clock < 0) {
				status = usage_error("script", "unknown clock '%s' (mono, "
						     "mono_raw, boot, tai, x86-tsc, local, "
						     "global, perf)", optarg);
				goto done;
			}
			break;
		case 'F':
			nr_fields = 1;
			o.mode = UTRACE__OUT_FIELDS;
			break;
		case 'J':
			nr_json = 1;
			o.mode = UTRACE__OUT_JSON;
			break;
		case 'l':
			list = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			goto done;
		case ':':
			status = usage_error("script", "option '%s' needs a value", argv[optind - 1]);
			goto done;
		default:
			status = usage_error("script", "unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	if (optind < argc) {
		status = usage_error("script", "unexpected argument '%s'", argv[optind]);
		goto done;
	}
	if (nr_fields + nr_json + list > 1) {
		status = usage_error("script", "%s", nr_fields && nr_json ?
				     "--fields and --json do not go together" :
				     "--list does not go with --fields or --json");
		goto done;
	}
	for (c = 0; c < nr_ev_args; c++) {
		char *copy = strdup(ev_args[c]);
		int r = copy ? script_add_events(&o, ev_args[c]) : -ENOMEM;

		if (r == UTRACE_EBADSPEC) {
			status = usage_error("script", "bad event specification in '%s'", copy);
			free(copy);
			goto done;
		}
		free(copy);
		if (r < 0) {
			fprintf(stderr, "utrace: out of memory\n");
			status = 1;
			goto done;
		}
	}
	if (nr_ev_args && !o.nr_ev) {
		status = usage_error("script", "%s", "-e needs at least one event");
		goto done;
	}

	if (utrace__tf_open(o.input, &tf) == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto done;
	}
	if (clock >= 0 && utrace__tf_set_clock(tf, (uint32_t)clock, &bad_pid) < 0) {
		fprintf(stderr, "utrace: cannot show '%s' times of '%s': pid %u has no record "
			"of that clock (recorded by an older utrace, or without the TSC)\n",
			utrace__trace_clock_name((uint32_t)clock), o.input, bad_pid);
		status = 1;
		goto done;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	status = list ? list_events(&o, tf) : utrace__print_file(&o, tf, stdout);
done:
	utrace__tf_close(tf);
	for (c = 0; c < nr_ev_args; c++)
		free(ev_args[c]);
	free(ev_args);
	free(o.ev);
	free(o.ev_text);
	free(o.ev_matched);
	free(o.filters);
	return status;
}

