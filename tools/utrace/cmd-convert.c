/* SPDX-License-Identifier: MIT */
/*
 * utrace convert: export a trace file for other tools.  The exporters
 * are the reader library's (lib/reader/export-<format>.c, export.h); one
 * table row each: trace.dat, a page for a browser (html), CTF, SQLite,
 * Chrome's JSON, Perfetto.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file-reader.h"
#include "cmds.h"
#include "export.h"

static const char usage_text[] =
	"usage: utrace convert [-i FILE] -o OUT [--format FMT] [--slice B.F:E.F]...\n"
	"                      [--counter EVENT.FIELD]...\n"
	"\n"
	"Export a trace file for other tools.\n"
	"\n"
	"  -i, --input FILE    the trace file (default: utrace.dat)\n"
	"  -o, --output OUT    the file to write\n"
	"  -f, --format FMT    trace.dat (default): trace-cmd's file, version 7,\n"
	"                      for 'trace-cmd report -i OUT' and KernelShark\n"
	"                      html: one page for a browser, nothing fetched: a\n"
	"                      timeline per thread, each event's line and fields\n"
	"                      ctf: a CTF 1.8 trace in the directory OUT (new or\n"
	"                      empty), for 'babeltrace2 OUT' and Trace Compass\n"
	"                      sqlite: an SQLite database OUT (replaced), a table\n"
	"                      per event, for 'sqlite3 OUT'\n"
	"                      json: Chrome's trace event format (chrome://tracing,\n"
	"                      ui.perfetto.dev), each field an arg\n"
	"                      perfetto: Perfetto's protobuf trace of track events,\n"
	"                      for ui.perfetto.dev and trace_processor\n"
	"  --slice BEGIN.FIELD:END.FIELD\n"
	"                      (html, json, perfetto) events as 'name' or\n"
	"                      'system:name'; may repeat.  html: a bar from each\n"
	"                      BEGIN event to the next END event of the same\n"
	"                      process whose END.FIELD equals its BEGIN.FIELD, and\n"
	"                      their latency histogram; json, perfetto: a BEGIN\n"
	"                      event opens a slice on its thread that the END event\n"
	"                      with the same FIELD value closes\n"
	"                      (sample:req_start.id:sample:req_end.id)\n"
	"  --counter EVENT.FIELD\n"
	"                      (json, perfetto) a counter track per process of the\n"
	"                      numeric FIELD of EVENT; may repeat\n"
	"  -h, --help          show this text\n";

static int tracedat(struct utrace__tf *tf, const char *out,
		    const struct utrace__export_opts *o)
{
	(void)o;
	return utrace__export_tracedat(tf, out);
}

static int html(struct utrace__tf *tf, const char *out, const struct utrace__export_opts *o)
{
	return utrace__export_html(tf, out, o->slices, o->nr_slices);
}

static int ctf(struct utrace__tf *tf, const char *out, const struct utrace__export_opts *o)
{
	(void)o;
	return utrace__export_ctf(tf, out);
}

static int sqlite(struct utrace__tf *tf, const char *out, const struct utrace__export_opts *o)
{
	(void)o;
	return utrace__export_sqlite(tf, out);
}

/* The formats, and whether each takes --slice and --counter. */
static const struct {
	const char *name;
	int (*run)(struct utrace__tf *tf, const char *out, const struct utrace__export_opts *o);
	bool slices, counters;
} formats[] = {
	{ "trace.dat", tracedat, false, false },
	{ "html", html, true, false },
	{ "ctf", ctf, false, false },
	{ "sqlite", sqlite, false, false },
	{ "json", utrace__export_json, true, true },
	{ "perfetto", utrace__export_perfetto, true, true },
};

#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

/* "trace.dat, html, ..." of the formats that take an option (all: NULL). */
static void format_list(char *s, size_t len, const char *opt)
{
	size_t f, n = 0;

	s[0] = 0;
	for (f = 0; f < NR_FORMATS && n < len; f++) {
		if (opt && !(strcmp(opt, "--slice") ? formats[f].counters : formats[f].slices))
			continue;
		n += (size_t)snprintf(s + n, len - n, "%s%s", n ? ", " : "", formats[f].name);
	}
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "slice", required_argument, NULL, 'S' },
		{ "counter", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "utrace.dat", *output = NULL, *format = "trace.dat";
	const char **slices = calloc((size_t)argc + 1, sizeof(*slices));
	const char **counters = calloc((size_t)argc + 1, sizeof(*counters));
	struct utrace__export_opts opts = { slices, 0, counters, 0 };
	struct utrace__tf *tf = NULL;
	struct stat si, so;
	char why[512], list[128];
	size_t f;
	int c, status;

	if (!slices || !counters) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto out;
	}

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":i:o:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'S':
			slices[opts.nr_slices++] = optarg;
			break;
		case 'C':
			counters[opts.nr_counters++] = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			status = 0;
			goto out;
		case ':':
			status = usage_error("convert", "option '%s' needs a value",
					     argv[optind - 1]);
			goto out;
		default:
			status = usage_error("convert", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	status = 129;
	for (f = 0; f < NR_FORMATS; f++)
		if (!strcmp(format, formats[f].name))
			break;
	if (optind < argc) {
		usage_error("convert", "unexpected argument '%s'", argv[optind]);
	} else if (f == NR_FORMATS) {
		format_list(list, sizeof(list), NULL);
		snprintf(why, sizeof(why), "unknown format '%s' (there are %s)", format, list);
		usage_error("convert", "%s", why);
	} else if (!output) {
		usage_error("convert", "%s", "no output file: give -o OUT");
	} else if ((opts.nr_slices && !formats[f].slices) ||
		   (opts.nr_counters && !formats[f].counters)) {
		const char *opt = opts.nr_slices && !formats[f].slices ? "--slice" : "--counter";

		format_list(list, sizeof(list), opt);
		snprintf(why, sizeof(why), "%s is for --format %s", opt, list);
		usage_error("convert", "%s", why);
	} else if (utrace__export_opts_check(&opts, why, sizeof(why)) < 0) {
		usage_error("convert", "%s", why);
	} else {
		status = 0;
	}
	if (status)
		goto out;
	/* writing over the input would pull the file from under the reader */
	if (stat(input, &si) == 0 && stat(output, &so) == 0 &&
	    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
		fprintf(stderr, "utrace: '%s' is the input file; give another output\n",
			output);
		status = 1;
		goto out;
	}

	if (utrace__tf_open(input, &tf) == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		status = 1;
		goto out;
	}
	status = formats[f].run(tf, output, &opts);
out:
	utrace__tf_close(tf);
	free(slices);
	free(counters);
	return status;
}
