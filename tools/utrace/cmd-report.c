/* SPDX-License-Identifier: MIT */
/*
 * utrace report: the events of a trace file counted by sort keys, in the
 * layout of `perf report --stdio`, and the latency between paired events.
 * The work is the reader library's (lib/reader/report.c); here are the
 * options.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <unistd.h>

#include <utrace/utrace.h>

#include "callgraph.h"
#include "file-reader.h"
#include "print.h"
#include "fprofile.h"
#include "report.h"
#include "stat.h"
#include "cmds.h"

static const char usage_text[] =
	"usage: utrace report [-i FILE] [-e EVENTS]... [-s KEYS] [-n] [-g] [-F]\n"
	"                     [--latency BEGIN[.FIELD]:END[.FIELD]]...\n"
	"       utrace report [-e EVENTS]... [-s KEYS] [-n] [--latency ...]... -- COMMAND\n"
	"\n"
	"Count the events of a trace file by sort keys, as 'perf report --stdio'\n"
	"shows samples, and the latency between paired events.  With a COMMAND,\n"
	"record it first (utrace record, into a temporary file) and report that.\n"
	"\n"
	"  -i, --input FILE    the trace file (default: utrace.dat)\n"
	"  -e, --event EVENTS  count only these events, in the kernel's set_event\n"
	"                      syntax (sys:event, sys:*, *:event, event, !sys:event),\n"
	"                      ',' or ' ' apart; may repeat (--latency pairs its own\n"
	"                      events all the same)\n"
	"  -s, --sort KEYS     ',' apart (default: comm,event): comm, pid, tid, event,\n"
	"                      cpu, or a field of the events, [EVENT.]FIELD[/raw]\n"
	"                      (req_end.path), printed as the event prints it, or\n"
	"                      its value with /raw.  Without 'event', one table per\n"
	"                      event, as perf\n"
	"  -n, --show-nr-samples  a column with the number of events of each row\n"
	"  -g, --call-graph    the call stacks of the events (utrace record -g, the\n"
	"                      stacktrace trigger) as perf report --no-children:\n"
	"                      per event, each innermost function with its share,\n"
	"                      then the tree of its callers, callee first\n"
	"  -F, --functions     the function tracers' table (utrace record --tracer):\n"
	"                      per function its total time, self time and calls, as\n"
	"                      uftrace report; the default for a file with function\n"
	"                      tracer events when no -e, -s or --latency is given\n"
	"      --latency BEGIN.FIELD:END.FIELD\n"
	"                      the time from each BEGIN event to the END event of\n"
	"                      the same process whose FIELD has the same value:\n"
	"                      count, min, mean, max, p50, p90, p99 and a log2\n"
	"                      histogram, one line per value of the sort keys that\n"
	"                      are fields of BEGIN or END (and comm, pid, tid,\n"
	"                      cpu); may repeat\n"
	"      --latency BEGIN:END\n"
	"                      without fields: each END pairs with the innermost\n"
	"                      BEGIN still open on its thread, as function_graph\n"
	"                      pairs a function's entry and return (entry and\n"
	"                      return probes, recursion included); EVENT or\n"
	"                      SYS:EVENT, both the same form\n"
	"  -h, --help          show this text\n"
	"\n"
	"Which request path is slowest, and how are its latencies distributed:\n"
	"  utrace report --latency req_begin.id:req_end.id --sort req_begin.path\n"
	"How long does add() take (utrace record --probe 'p:grp/add add'\n"
	"--probe 'r:grp/add_ret add'):\n"
	"  utrace report --latency grp:add:grp:add_ret\n";

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "latency", required_argument, NULL, 'L' },
		{ "event", required_argument, NULL, 'e' },
		{ "show-nr-samples", no_argument, NULL, 'n' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "functions", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct utrace__report_opts o = { 0 };
	struct utrace__print_opts sel = { 0 };
	char **ev_args = NULL;
	size_t nr_ev_args = 0;
	const char *input = "utrace.dat", *sort = "comm,event";
	char tmp[4096] = "", self[PATH_MAX];
	bool has_input = false, graph = false, functions = false, sort_given = false;
	struct utrace__tf *tf = NULL;
	size_t i, bad = 0;
	int c, r, status = 0;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":i:s:e:ngFh", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			graph = true;
			break;
		case 'i':
			input = optarg;
			has_input = true;
			break;
		case 'n':
			o.show_nr = true;
			break;
		case 'e': {
			/* (copied: the tokens point into it) */
			char **a = realloc(ev_args, (nr_ev_args + 1) * sizeof(*a));

			if (!a || !(a[nr_ev_args] = strdup(optarg))) {
				if (a)
					ev_args = a;
				fprintf(stderr, "utrace: out of memory\n");
				status = 1;
				goto done;
			}
			ev_args = a;
			r = script_add_events(&sel, ev_args[nr_ev_args++]);
			if (r == UTRACE_EBADSPEC) {
				status = usage_error("report", "bad event specification in '%s'",
						     optarg);
				goto done;
			}
			if (r < 0) {
				fprintf(stderr, "utrace: out of memory\n");
				status = 1;
				goto done;
			}
			if (!sel.nr_ev) {
				status = usage_error("report", "%s", "-e needs at least one event");
				goto done;
			}
			o.select = &sel;
			break;
		}
		case 's':
			sort = optarg;
			sort_given = true;
			break;
		case 'F':
			functions = true;
			break;
		case 'L': {
			struct utrace__rlatency *a = realloc(o.lat, (o.nr_lat + 1) * sizeof(*a));

			if (!a) {
				fprintf(stderr, "utrace: out of memory\n");
				status = 1;
				goto done;
			}
			o.lat = a;
			r = utrace__report_parse_latency(optarg, &o.lat[o.nr_lat]);
			if (r == -EINVAL) {
				status = usage_error("report", "bad latency '%s': give BEGIN.FIELD:"
						     "END.FIELD, as req_begin.id:req_end.id, or "
						     "BEGIN:END, as grp:add:grp:add_ret", optarg);
				goto done;
			}
			if (r < 0) {
				fprintf(stderr, "utrace: out of memory\n");
				status = 1;
				goto done;
			}
			o.nr_lat++;
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			goto done;
		case ':':
			status = usage_error("report", "option '%s' needs a value", argv[optind - 1]);
			goto done;
		default:
			status = usage_error("report", "unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	/* a command after "--": record it first */
	if (optind < argc && strcmp(argv[optind - 1], "--")) {
		status = usage_error("report", "unexpected argument '%s'", argv[optind]);
		goto done;
	}
	if (optind < argc && has_input) {
		status = usage_error("report", "%s", "-i and a COMMAND do not go together");
		goto done;
	}
	r = utrace__report_parse_sort(sort, &o.keys, &o.nr_keys, &bad);
	if (r == -EINVAL) {
		status = usage_error("report", "bad sort key at '%s': give comm, pid, tid, "
				     "event, cpu or [EVENT.]FIELD[/raw]", sort + bad);
		goto done;
	}
	if (r < 0) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto done;
	}
	if (optind < argc) {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0 || cmd_temp_trace(tmp, sizeof(tmp), "report") < 0) {
			status = 1;
			goto done;
		}
		self[n] = 0;
		if (cmd_record_command(self, argv + optind, tmp) != 0) {
			fprintf(stderr, "utrace report: recording '%s' failed\n", argv[optind]);
			status = 1;
			goto done;
		}
		input = tmp;
	}
	if (utrace__tf_open(input, &tf) == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto done;
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (graph) {
		status = utrace__callgraph_file(tf, o.select, stdout);
		goto done;
	}
	/* the function tracers' events: uftrace report's table, unless a
	 * table of another kind is asked for */
	if (functions || (!sort_given && !o.nr_lat && !o.select)) {
		r = utrace__fprofile_file(tf, stdout);
		if (r == -ENOMEM) {
			fprintf(stderr, "utrace: out of memory\n");
			status = 1;
			goto done;
		}
		if (r > 0)
			goto done;
		if (functions) {
			fprintf(stderr, "utrace report: '%s' has no function tracer events "
				"(record with --tracer function_graph)\n", input);
			status = 1;
			goto done;
		}
	}
	status = utrace__report_file(&o, tf, stdout);
done:
	utrace__tf_close(tf);
	if (tmp[0])
		unlink(tmp);
	utrace__report_keys_free(o.keys, o.nr_keys);
	for (i = 0; i < o.nr_lat; i++)
		utrace__report_latency_free(&o.lat[i]);
	free(o.lat);
	for (i = 0; i < nr_ev_args; i++)
		free(ev_args[i]);
	free(ev_args);
	free(sel.ev);
	free(sel.ev_text);
	free(sel.ev_matched);
	return status;
}
