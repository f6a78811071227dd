/* SPDX-License-Identifier: MIT */
/*
 * utrace convert: export a trace file for other tools, each format by an
 * exporter of lib/reader/ (export.h): trace.dat (export-tracedat.c), json
 * (export-json.c), perfetto (export-perfetto.c).
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
	"                      json: Chrome's trace event format (chrome://tracing,\n"
	"                      ui.perfetto.dev), each field an arg\n"
	"                      perfetto: Perfetto's protobuf trace of track events,\n"
	"                      for ui.perfetto.dev and trace_processor\n"
	"  --slice BEGIN.FIELD:END.FIELD\n"
	"                      (json, perfetto) a BEGIN event opens a slice on its\n"
	"                      thread that the END event with the same FIELD value\n"
	"                      closes; events as 'name' or 'system:name'; may repeat\n"
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

/* The formats; 'opts': it takes --slice and --counter. */
static const struct {
	const char *name;
	int (*run)(struct utrace__tf *tf, const char *out, const struct utrace__export_opts *o);
	bool opts;
} formats[] = {
	{ "trace.dat", tracedat, false },
	{ "json", utrace__export_json, true },
	{ "perfetto", utrace__export_perfetto, true },
};

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
	char why[512];
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
	for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++)
		if (!strcmp(format, formats[f].name))
			break;
	if (optind < argc)
		usage_error("convert", "unexpected argument '%s'", argv[optind]);
	else if (f == sizeof(formats) / sizeof(formats[0]))
		usage_error("convert", "unknown format '%s' (there are trace.dat, json, "
			    "perfetto)", format);
	else if (!output)
		usage_error("convert", "%s", "no output file: give -o OUT");
	else if ((opts.nr_slices || opts.nr_counters) && !formats[f].opts)
		usage_error("convert", "--slice and --counter are for other formats than "
			    "'%s'", format);
	else if (utrace__export_opts_check(&opts, why, sizeof(why)) < 0)
		usage_error("convert", "%s", why);
	else
		status = 0;
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
