/* SPDX-License-Identifier: MIT */
/* utrace record --kernel-probe (record-kprobe.h). */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf-names.h"
#include "kevents.h"
#include "kuprobe.h"
#include "kuprobes.h"
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

/* cmd as execvp() would find it. */
static const char *find_cmd(const char *cmd, char *buf, size_t n)
{
	const char *path = getenv("PATH");

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

int rec_kprobes_start(char ***kevents, size_t *nr_kevents, char **defs, size_t nr,
		      const pid_t *pids, size_t nr_pids, const char *cmd)
{
	char group[64], cmdpath[PATH_MAX], err[UTRACE_DW_ERR_MAX], kerr[1024];
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
