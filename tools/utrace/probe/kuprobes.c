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
 * The kernel's last error_log entry, if the log grew past 'before' bytes:
 * "[ts] trace_uprobe: error: MSG", "  Command: ...", the caret line.  It
 * replaces err, without its time stamp (as utrace probe prints the
 * agent's, utrace__probe_say_error()).
 */
static void last_error(size_t before, char *err, size_t n)
{
	char path[4096], *line = NULL, *last = NULL;
	size_t cap = 0, at = 0, len = 0;
	ssize_t l;
	FILE *f;
	int more = 0;

	if (!tfile("error_log", path, sizeof(path)) || !(f = fopen(path, "r")))
		return;
	while ((l = getline(&line, &cap, f)) > 0) {
		char *e = strstr(line, "] trace_uprobe: error: ");

		at += (size_t)l;
		if (at > before && line[0] == '[' && e) {
			free(last);
			last = strdup(e + 2);
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
	if (last) {
		while (len && last[len - 1] == '\n')
			last[--len] = 0;
		snprintf(err, n, "%s", last);
	}
	free(last);
	free(line);
	fclose(f);
}

static size_t file_size(const char *name)
{
	char path[4096], buf[4096];
	size_t total = 0;
	ssize_t r;
	int fd;

	if (!tfile(name, path, sizeof(path)) || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		total += (size_t)r;
	close(fd);
	return total;
}

static int append(const char *line, char *err, size_t n)
{
	char path[4096];
	size_t before = file_size("error_log");
	size_t len = strlen(line);
	int fd, e;

	if (!tfile("uprobe_events", path, sizeof(path))) {
		snprintf(err, n, "%s", kup_unavailable());
		return -ENOENT;
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, n, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	if (write(fd, line, len) != (ssize_t)len) {
		e = errno;
		close(fd);
		snprintf(err, n, "the kernel refused '%s': %s", line, strerror(e));
		last_error(before, err, n);
		return -e;
	}
	close(fd);
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
