/* SPDX-License-Identifier: MIT */
/*
 * utrace convert: export a trace file for other tools.  The exporters
 * are the reader library's (lib/reader/export-<format>.c); one table row
 * each: trace.dat, a page for a browser (html), CTF, SQLite.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "file-reader.h"
#include "cmds.h"
#include "export.h"

static const char usage_text[] =
	"usage: utrace convert [-i FILE] -o OUT [--format trace.dat|html|ctf|sqlite]\n"
	"                      [--slice BEGIN.FIELD:END.FIELD]...\n"
	"\n"
	"Export a trace file for other tools.\n"
	"\n"
	"  -i, --input FILE    the trace file (default: utrace.dat)\n"
	"  -o, --output OUT    the file to write\n"
	"  -f, --format FMT    trace.dat (default): trace-cmd's file, version 7,\n"
	"                      for 'trace-cmd report -i OUT' and KernelShark\n"
	"                      html: one page for a browser, nothing fetched: a\n"
	"                      timeline per thread, each event's line and fields\n"
	"      --slice BEGIN.FIELD:END.FIELD\n"
	"                      (html) a bar from each BEGIN event to the next END\n"
	"                      event of the same process whose END.FIELD equals its\n"
	"                      BEGIN.FIELD, and their latency histogram; again for\n"
	"                      more (sample:req_start.id:sample:req_end.id)\n"
	"                      ctf: a CTF 1.8 trace in the directory OUT (new or\n"
	"                      empty), for 'babeltrace2 OUT' and Trace Compass\n"
	"                      sqlite: an SQLite database OUT (replaced), a table\n"
	"                      per event, for 'sqlite3 OUT'\n"
	"  -h, --help          show this text\n";

/* The formats and their exporters. */
static const struct {
	const char *name;
	int (*fn)(struct utrace__tf *tf, const char *out);
} formats[] = {
	{ "trace.dat", utrace__export_tracedat },
	{ "html", NULL },                /* utrace__export_html(), with the slices */
	{ "ctf", utrace__export_ctf },
	{ "sqlite", utrace__export_sqlite },
};

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "slice", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "utrace.dat", *output = NULL, *format = "trace.dat";
	struct utrace__tf *tf = NULL;
	const char *slices[64];
	size_t nr_slices = 0;
	struct stat si, so;
	int c, status;
	size_t fi;

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
			if (nr_slices == sizeof(slices) / sizeof(slices[0]))
				return usage_error("convert", "%s", "more than 64 --slice");
			slices[nr_slices++] = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return usage_error("convert", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("convert", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("convert", "unexpected argument '%s'", argv[optind]);
	for (fi = 0; fi < sizeof(formats) / sizeof(formats[0]); fi++)
		if (!strcmp(format, formats[fi].name))
			break;
	if (fi == sizeof(formats) / sizeof(formats[0]))
		return usage_error("convert", "unknown format '%s' (there are trace.dat, html, "
				   "ctf, sqlite)", format);
	if (nr_slices && strcmp(format, "html"))
		return usage_error("convert", "%s", "--slice is for --format html");
	if (!output)
		return usage_error("convert", "%s", "no output file: give -o OUT");
	/* writing over the input would pull the file from under the reader */
	if (stat(input, &si) == 0 && stat(output, &so) == 0 &&
	    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
		fprintf(stderr, "utrace: '%s' is the input file; give another output\n",
			output);
		return 1;
	}

	if (utrace__tf_open(input, &tf) == -ENOMEM || !tf) {
		fprintf(stderr, "utrace: out of memory\n");
		utrace__tf_close(tf);
		return 1;
	}
	if (formats[fi].fn)
		status = formats[fi].fn(tf, output);
	else
		status = utrace__export_html(tf, output, slices, nr_slices);
	utrace__tf_close(tf);
	return status;
}
