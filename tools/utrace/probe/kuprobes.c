/* SPDX-License-Identifier: MIT */
/* The kernel's uprobe_events (kuprobes.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "kuprobes.h"

#define STALE_PREFIX "utrace_"

static const char *tfile(const char *name, char *buf, size_t n)
{
	const char *dir = tracefs_tracing_dir();

	if (!dir)
		return NULL;
	snprintf(buf, n, "%s/%s", dir, name);
	return buf;
}

const char *kup_unavailable(void)
{
	static char why[4400];
	char path[4096];

	if (!tfile("uprobe_events", path, sizeof(path)))
		return "the kernel's uprobes need tracefs mounted (as root: mount -t tracefs "
		       "nodev /sys/kernel/tracing)";
	if (access(path, W_OK) < 0) {
		snprintf(why, sizeof(why), "the kernel's uprobes need root or write access to "
			 "%s (%s)", path, strerror(errno));
		return why;
	}
	return NULL;
}

/*
 * The kernel's error_log keeps its last few entries (8), the oldest going
 * as new ones come: an entry is told new by its time stamp, "[  723.587731]".
 * The stamp of its last entry, or "" (malloc()ed; NULL when out of memory).
 */
static char *last_stamp(void)
{
	char path[4096], *line = NULL, *stamp = strdup("");
	size_t cap = 0;
	FILE *f;

	if (!stamp || !tfile("error_log", path, sizeof(path)) || !(f = fopen(path, "r")))
		return stamp;
	while (getline(&line, &cap, f) > 0) {
		char *e = line[0] == '[' ? strchr(line, ']') : NULL;

		if (e) {
			free(stamp);
			stamp = strndup(line, (size_t)(e + 1 - line));
			if (!stamp)
				break;
		}
	}
	free(line);
	fclose(f);
	return stamp;
}

/*
 * The kernel's last error_log entry, if it is newer than the stamp before
 * the write: "[ts] trace_uprobe: error: MSG", "  Command: ...", the caret
 * line.  It replaces err, without its time stamp (as utrace probe prints
 * the agent's, utrace__probe_say_error()).
 */
static void last_error(const char *before, char *err, size_t n)
{
	char path[4096], *line = NULL, *last = NULL, *stamp = NULL;
	size_t cap = 0, len = 0;
	ssize_t l;
	FILE *f;
	int more = 0;

	if (!before || !tfile("error_log", path, sizeof(path)) || !(f = fopen(path, "r")))
		return;
	while ((l = getline(&line, &cap, f)) > 0) {
		char *e = strstr(line, "] trace_uprobe: error: ");

		if (line[0] == '[' && e) {
			free(last);
			free(stamp);
			last = strdup(e + 2);
			stamp = strndup(line, (size_t)(e + 1 - line));
			len = last ? strlen(last) : 0;
			more = 2;       /* its Command: and caret lines */
		} else if (last && more > 0 && line[0] == ' ') {
			char *a = realloc(last, len + (size_t)l + 1);

			if (!a)
				break;
			last = a;
			memcpy(last + len, line, (size_t)l + 1);
			len += (size_t)l;
			more--;
		} else {
			more = 0;
		}
	}
	/* (only an entry newer than the last one before the write: an
	 * EINVAL the kernel does not log leaves an older one last) */
	if (last && stamp && strtod(stamp + 1, NULL) > (before[0] ? strtod(before + 1, NULL) : -1)) {
		while (len && last[len - 1] == '\n')
			last[--len] = 0;
		snprintf(err, n, "%s", last);
	}
	free(last);
	free(stamp);
	free(line);
	fclose(f);
}

static int append(const char *line, char *err, size_t n)
{
	char path[4096];
	char *before = last_stamp();
	size_t len = strlen(line);
	int fd, e;

	if (!tfile("uprobe_events", path, sizeof(path))) {
		snprintf(err, n, "%s", kup_unavailable());
		free(before);
		return -ENOENT;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, n, "cannot open %s: %s", path, strerror(e));
		free(before);
		return -e;
	}
	if (write(fd, line, len) != (ssize_t)len) {
		e = errno;
		close(fd);
		snprintf(err, n, "the kernel refused '%s': %s", line, strerror(e));
		last_error(before, err, n);
		free(before);
		return -e;
	}
	close(fd);
	free(before);
	return 0;
}

int kup_write(const char *line, char *err, size_t n)
{
	return append(line, err, n);
}

int kup_remove(const char *grp_event, char *err, size_t n)
{
	char line[256];

	snprintf(line, sizeof(line), "-:%s", grp_event);
	return append(line, err, n);
}

void kup_remove_stale(void)
{
	char path[4096], *line = NULL, **gone = NULL;
	size_t cap = 0, nr = 0, i;
	FILE *f;

	if (!tfile("uprobe_events", path, sizeof(path)) || !(f = fopen(path, "r")))
		return;
	while (getline(&line, &cap, f) > 0) {
		/* "p:utrace_123/ev /path:0x..." */
		char *g = strchr(line, ':'), *end;
		long pid;

		if (!g || strncmp(g + 1, STALE_PREFIX, strlen(STALE_PREFIX)))
			continue;
		pid = strtol(g + 1 + strlen(STALE_PREFIX), &end, 10);
		if (*end != '/' || pid <= 0 || !(kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			continue;
		end = g + 1 + strcspn(g + 1, " \t\n");
		*end = 0;
		{
			char **v = realloc(gone, (nr + 1) * sizeof(*v));

			if (!v)
				break;
			gone = v;
			gone[nr] = strdup(g + 1);
			if (gone[nr])
				nr++;
		}
	}
	free(line);
	fclose(f);
	for (i = 0; i < nr; i++) {
		char err[512];

		if (kup_remove(gone[i], err, sizeof(err)) == 0)
			fprintf(stderr, "utrace: removed the kernel uprobe '%s' of a recorder that "
				"did not end cleanly\n", gone[i]);
		else
			fprintf(stderr, "utrace: cannot remove the stale kernel uprobe '%s': %s\n",
				gone[i], err);
		free(gone[i]);
	}
	free(gone);
}
