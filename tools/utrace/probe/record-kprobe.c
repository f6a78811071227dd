/* SPDX-License-Identifier: MIT */
/* utrace record --kernel-probe (record-kprobe.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf-names.h"
#include "kevents.h"
#include "kuprobe.h"
#include "kuprobes.h"
#include "probe.h"
#include "record-kprobe.h"

static char **added;            /* "GRP/EV" of our probes */
static char **entries;          /* their "GRP:EV" kernel entries */
static size_t nr_added;

static void remove_added(void)
{
	size_t i;

	for (i = 0; i < nr_added; i++) {
		char err[1024];

		if (kup_remove(added[i], err, sizeof(err)) < 0)
			fprintf(stderr, "utrace record: cannot remove the kernel uprobe '%s': "
				"%s\n", added[i], err);
		free(added[i]);
		free(entries[i]);
	}
	free(added);
	free(entries);
	added = entries = NULL;
	nr_added = 0;
}

/* cmd as execvp() would find it (its default path when PATH is unset). */
static const char *find_cmd(const char *cmd, char *buf, size_t n)
{
	const char *path = getenv("PATH") ? getenv("PATH") : "/bin:/usr/bin";

	if (!cmd || strchr(cmd, '/'))
		return cmd;
	while (path && *path) {
		size_t k = strcspn(path, ":");

		snprintf(buf, n, "%.*s/%s", (int)k, path, cmd);
		if (access(buf, X_OK) == 0)
			return buf;
		path += k + (path[k] == ':');
	}
	return cmd;
}

int rec_cmd_runnable(const char *cmd, char *path, size_t n, char *why, size_t wn)
{
	const char *p = find_cmd(cmd, path, n);
	struct stat st;

	if (!strchr(p, '/')) {
		snprintf(why, wn, "no such command in PATH");
		return -ENOENT;
	}
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		errno = EACCES;         /* (execve()'s answer for a directory) */
	else if (stat(p, &st) == 0 && access(p, X_OK) == 0)
		errno = 0;
	if (errno) {
		int e = errno;

		snprintf(why, wn, "%s", strerror(e));
		return -e;
	}
	if (p != path)
		snprintf(path, n, "%s", p);
	return 0;
}

int rec_kprobes_start(char ***kevents, size_t *nr_kevents, char **defs, size_t nr,
		      const pid_t *pids, size_t nr_pids, const char *cmd)
{
	char group[64], cmdpath[PATH_MAX], err[UTRACE_DW_ERR_MAX], kerr[4096];
	const char *obj = find_cmd(cmd, cmdpath, sizeof(cmdpath));
	size_t i;

	if (kup_unavailable()) {
		fprintf(stderr, "utrace record: --kernel-probe: %s\n", kup_unavailable());
		return -1;
	}
	kev_remove_stale();
	kup_remove_stale();
	snprintf(group, sizeof(group), "utrace_%d", (int)getpid());
	atexit(remove_added);
	for (i = 0; i < nr; i++) {
		struct utrace__kup k;
		char **v, **ev, **kv, *ge, *entry;

		if (utrace__kup_translate(defs[i], nr_pids ? pids[0] : 0, obj, group, &k,
					  err) < 0) {
			fprintf(stderr, "utrace record: --kernel-probe: %s\n", err);
			remove_added();
			return -1;
		}
		if (kup_write(k.line, kerr, sizeof(kerr)) < 0) {
			fprintf(stderr, "utrace record: --kernel-probe: %s\n", kerr);
			utrace__kup_free(&k);
			remove_added();
			return -1;
		}
		v = realloc(added, (nr_added + 1) * sizeof(*v));
		if (v)
			added = v;
		ev = realloc(entries, (nr_added + 1) * sizeof(*ev));
		if (ev)
			entries = ev;
		kv = realloc(*kevents, (*nr_kevents + 1) * sizeof(*kv));
		if (kv)
			*kevents = kv;
		if (asprintf(&ge, "%s/%s", k.group, k.event) < 0)
			ge = NULL;
		if (asprintf(&entry, "%s:%s", k.group, k.event) < 0)
			entry = NULL;
		if (!v || !ev || !kv || !ge || !entry) {
			free(ge);
			free(entry);
			/* written but not listed: remove it now */
			kup_remove(k.line + 2, kerr, sizeof(kerr));
			utrace__kup_free(&k);
			remove_added();
			fprintf(stderr, "utrace record: out of memory\n");
			return -1;
		}
		added[nr_added] = ge;
		entries[nr_added++] = entry;
		(*kevents)[(*nr_kevents)++] = entry;
		fprintf(stderr, "utrace record: kernel uprobe %s\n", k.line);
		utrace__kup_free(&k);
	}
	return 0;
}

bool rec_pids_alive(const pid_t *pids, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (kill(pids[i], 0) == 0 || errno == EPERM)
			return true;
	return false;
}

/* rec_probes_check()'s lookups: files named by their path, and a library
 * named without one as the system's (libc.so.6); others, and the
 * program's own symbols, are the process's to find. */
static int check_object(void *data, const char *name, char *path, size_t len)
{
	if (utrace__probe_files_here.object(data, name, path, len) == 0)
		return 0;
	snprintf(path, len, "%s", name);
	return 0;
}

static int check_symbol(void *data, const char *path, const char *sym, uint64_t *vaddr,
			uint64_t *off, uint64_t *size)
{
	if (!strchr(path, '/')) {
		*vaddr = *off = *size = 0;      /* (the process's to find) */
		return 0;
	}
	return utrace__probe_files.symbol(data, path, sym, vaddr, off, size);
}

/* -EAGAIN: the process's to list (expand_check()) */
static int check_functions(void *data, const char *path,
			   int (*fn)(void *arg, const char *name, uint64_t vaddr), void *arg)
{
	if (!strchr(path, '/'))
		return -EAGAIN;
	return utrace__probe_files.functions(data, path, fn, arg);
}

static const struct utrace__probe_resolver check_resolver = {
	.object = check_object,
	.symbol = check_symbol,
	.functions = check_functions,
};

/*
 * A glob: the functions it matches in the file, said; none is an error
 * naming the glob.  The first matching line is then checked as any
 * definition (the process checks each site when it places them).  An
 * object the process has to find (the program, a library named without
 * a path and not found here): the process expands it.
 * Return: 0 and *line (the line to check, malloc()ed, or NULL), or -1 said.
 */
static int expand_check(const char *def, char **line)
{
	struct utrace__probe_error err;
	char **lines;
	size_t n;
	int r = utrace__probe_expand(def, &check_resolver, &lines, &n, &err);

	*line = NULL;
	if (r == -EAGAIN)
		return 0;
	if (r) {
		fprintf(stderr, "utrace record: --probe '%s': %s\n", def, err.msg);
		return -1;
	}
	fprintf(stderr, "utrace record: --probe '%s': %zu function%s match\n", def, n,
		n == 1 ? "" : "s");
	*line = lines[0];
	lines[0] = NULL;
	utrace__probe_lines_free(lines, n);
	return 0;
}

int rec_probes_check(char **defs, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		struct utrace__probe_error err;
		struct utrace__probe_def *d;
		enum utrace__probe_cmd cmd;
		char *one = NULL;
		int r;

		if (utrace__probe_is_glob(defs[i])) {
			if (expand_check(defs[i], &one))
				return -1;
			if (!one)
				continue;
		}
		r = utrace__probe_parse(one ? one : defs[i], &check_resolver, &cmd, &d, &err);
		free(one);

		/* the site: the one check, as the process will make it (an
		 * object it has to find itself is checked there, and a
		 * refusal fails the recording) */
		if (!r && cmd == UTRACE__PROBE_ADD)
			r = utrace__probe_site_check_file(d, &err);
		utrace__probe_def_free(d);     /* (NULL when refused by the parse) */
		if (r) {
			probe_say_error("utrace record: --probe", defs[i], r, &err);
			return -1;
		}
	}
	return 0;
}
