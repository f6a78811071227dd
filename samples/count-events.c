/* SPDX-License-Identifier: MIT */
/* Count the events of a trace file by name: ./count-events utrace.dat */
#include <stdio.h>
#include <string.h>

#include <utrace/reader.h>

int main(int argc, char **argv)
{
	static struct { char name[256]; unsigned long n; } ev[1024];
	const struct utrace_record *rec;
	struct utrace_reader *r;
	size_t nr = 0, i;
	char name[256];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: count-events FILE\n");
		return 2;
	}
	ret = utrace_reader_open(argv[1], &r);
	if (!r) {
		fprintf(stderr, "count-events: '%s': %s\n", argv[1], utrace_reader_strerror(ret));
		return 1;
	}
	while ((ret = utrace_reader_next(r, &rec)) > 0) {
		snprintf(name, sizeof(name), "%s:%s", rec->system ? rec->system : "?",
			 rec->name ? rec->name : "?");
		for (i = 0; i < nr && strcmp(ev[i].name, name); i++)
			;
		if (i == nr && nr < 1024)
			strcpy(ev[nr++].name, name);
		if (i < nr)
			ev[i].n++;
	}
	for (i = 0; i < nr; i++)
		printf("%s %lu\n", ev[i].name, ev[i].n);
	utrace_reader_close(r);
	return ret < 0;
}
