/* SPDX-License-Identifier: MIT */
/*
 * utrace convert: export a trace file for other tools.  Only trace.dat
 * for now (lib/reader/export-tracedat.c); Perfetto and CTF will sit beside it.
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
	"usage: utrace convert [-i FILE] -o OUT [--format trace.dat]\n"
	"\n"
	"Export a trace file for other tools.\n"
	"\n"
	"  -i, --input FILE    the trace file (default: utrace.dat)\n"
	"  -o, --output OUT    the file to write\n"
	"  -f, --format FMT    trace.dat (default): trace-cmd's file, version 7,\n"
	"                      for 'trace-cmd report -i OUT' and KernelShark\n"
	"  -h, --help          show this text\n";

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *input = "utrace.dat", *output = NULL, *format = "trace.dat";
	struct utrace__tf *tf = NULL;
	struct stat si, so;
	int c, status;

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
	if (strcmp(format, "trace.dat"))
		return usage_error("convert", "unknown format '%s' (there is trace.dat)", format);
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
	status = utrace__export_tracedat(tf, output);
	utrace__tf_close(tf);
	return status;
}
