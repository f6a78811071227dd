/* SPDX-License-Identifier: MIT */
/*
 * Kernel events in a recording, through libtracefs.
 *
 * The recorder makes a tracing instance of its own, "utrace-record-<pid>",
 * so the system's tracing (the top instance, others' instances) is left
 * as it was: its trace clock is set to "mono" (utrace's times are
 * CLOCK_MONOTONIC ns, so both kinds of event share one time line), its
 * set_event_pid to the traced processes' tasks with the event-fork option
 * (their children are added by the kernel as they fork), then the
 * kernel's -e entries are written to its set_event.  The formats of the
 * events that were switched on go into the file as KFORMAT records.
 *
 * While recording, every 100 ms, the pages the kernel has for each CPU
 * (trace_pipe_raw) are copied to the file as KPAGE records, cut after
 * their data; at the end, tracing is switched off, the rest flushed out,
 * and each task the events name (common_pid) gets a KTASK record: its
 * name and thread group from /proc when first seen, else from the
 * kernel's saved_cmdlines and saved_tgids.  The instance is removed at
 * the end, on Ctrl-C and on errors; one left by a recorder that was
 * killed is removed by the next recorder (its pid is gone).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs.h>

#include "file-writer.h"
#include "kevents.h"
#include "page.h"
#include "setevent.h"

#define INSTANCE_PREFIX "utrace-record-"
#define POLL_NS 100000000ull
#define MAX_READS 4096          /* pages per CPU and poll */

/* The tasks seen in the events: an open-addressing set by pid. */
struct ktask_seen {
	uint32_t key;                    /* pid + 1; 0: a free slot */
	bool named;                      /* its KTASK is written */
};

struct kev {
	struct utrace__tfw *out;
	struct tracefs_instance *inst;
	struct tracefs_cpu **cpu;
	int nr_cpus;
	uint64_t *seq;
	void *buf;
	int bufsize;
	struct ktask_seen *tasks;
	size_t nr_tasks, cap_tasks;      /* cap: a power of two, or 0 */
	unsigned long long events;
	unsigned long long lost;         /* the kernel's stored counts */
	bool lost_unknown;               /* a page lost events, uncounted */
};

/* Once: tracefs_tracing_dir_is_mounted() of libtracefs 1.6 leaks a copy
 * of the path at each call after the first. */
static const char *tracing_dir(void)
{
	static const char *dir;
	static bool looked;

	if (!looked) {
		looked = true;
		/* as trace-cmd: mount it when we may */
		if (tracefs_tracing_dir_is_mounted(geteuid() == 0, &dir) < 0)
			dir = NULL;
		else if (!dir)
			dir = tracefs_tracing_dir();
	}
	return dir;
}

const char *kev_unavailable(void)
{
	static char why[8400];
	const char *dir = tracing_dir();
	char path[4096];

	if (!dir) {
		snprintf(why, sizeof(why), "kernel events need tracefs mounted (as root: "
			 "mount -t tracefs nodev /sys/kernel/tracing)");
		return why;
	}
	snprintf(path, sizeof(path), "%s/instances", dir);
	if (access(path, W_OK) < 0) {
		snprintf(why, sizeof(why), "kernel events need root or read/write access "
			 "to %s (%s: %s)", dir, path, strerror(errno));
		return why;
	}
	return NULL;
}

/* kev_is_kernel() could not look into tracefs's events/ (not root) */
static bool cannot_tell;

bool kev_is_kernel(const char **entry)
{
	const char *e = *entry, *colon;
	char path[4096], sys[256];
	const char *dir;
	size_t n;

	if (!strncmp(e, "kernel:", 7)) {
		*entry = e + 7;
		return true;
	}
	if (!strncmp(e, "user:", 5)) {
		*entry = e + 5;
		return false;
	}
	if (*e == '!')
		e++;
	colon = strchr(e, ':');
	n = colon ? (size_t)(colon - e) : 0;
	if (!n || n >= sizeof(sys))
		return false;
	if (strpbrk(e, "*?[") && strpbrk(e, "*?[") < colon)
		return false;
	memcpy(sys, e, n);
	sys[n] = 0;
	if (strchr(sys, '/') || !strcmp(sys, ".") || !strcmp(sys, ".."))
		return false;
	dir = tracing_dir();
	if (!dir) {
		cannot_tell = true;
		return false;
	}
	snprintf(path, sizeof(path), "%s/events/%s", dir, sys);
	if (access(path, F_OK) == 0)
		return true;
	if (errno != ENOENT)
		cannot_tell = true;
	return false;
}

const char *kev_cannot_tell(void)
{
	return cannot_tell ? kev_unavailable() : NULL;
}

/* Instances of recorders whose process is gone.  (Read from the
 * directory: tracefs_instances() of libtracefs 1.6 leaks its regex.) */
static void remove_stale(void)
{
	const char *dir = tracing_dir();
	char path[4096];
	struct dirent *de;
	DIR *d;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/instances", dir);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		const char *num = de->d_name + strlen(INSTANCE_PREFIX);
		struct tracefs_instance *in;
		char *end;
		long pid;

		if (strncmp(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) ||
		    *num < '0' || *num > '9')
			continue;
		pid = strtol(num, &end, 10);
		if (*end || pid <= 0 || !(kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			continue;
		in = tracefs_instance_alloc(NULL, de->d_name);
		if (in && tracefs_instance_destroy(in) == 0)
			fprintf(stderr, "utrace record: removed the tracing instance '%s' of "
				"a recorder that did not end cleanly\n", de->d_name);
		else
			fprintf(stderr, "utrace record: cannot remove the stale tracing "
				"instance '%s': %s\n", de->d_name, strerror(errno));
		tracefs_instance_free(in);
	}
	if (d)
		closedir(d);
}

void kev_remove_stale(void)
{
	remove_stale();
}

/* The tasks of process pid (its own pid if it has no task directory),
 * one "tid " each appended to 'list'. */
static void add_tasks(FILE *list, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		fprintf(list, "%d ", (int)pid);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			fprintf(list, "%s ", de->d_name);
	closedir(d);
}

static void destroy(struct kev *k)
{
	int i;

	for (i = 0; i < k->nr_cpus; i++)
		if (k->cpu[i])
			tracefs_cpu_close(k->cpu[i]);
	if (k->inst) {
		tracefs_instance_destroy(k->inst);
		tracefs_instance_free(k->inst);
	}
	free(k->cpu);
	free(k->seq);
	free(k->buf);
	free(k->tasks);
	free(k);
}

/* The formats of the events now on in the instance: KFORMAT records. */
static int write_formats(struct kev *k)
{
	char *list = tracefs_instance_file_read(k->inst, "set_event", NULL);
	char *save = NULL, *line;
	int n = 0;

	for (line = list ? strtok_r(list, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *text;
		unsigned long id;
		const char *idl;

		if (!colon)
			continue;
		*colon = 0;
		text = tracefs_event_file_read(NULL, line, colon + 1, "format", NULL);
		if (!text)
			continue;
		idl = strstr(text, "\nID: ");
		id = idl ? strtoul(idl + 5, NULL, 10) : 0;
		if (idl && id <= 0xffff) {
			utrace__tfw_kformat(k->out, (uint32_t)id, line, text);
			n++;
		}
		free(text);
	}
	free(list);
	return n;
}

/*
 * The kernel's complaint about a filter it refused, from the event's
 * filter file ("EXPR\n   ^\nparse_error: MSG"): MSG and the caret's
 * column into *pos; NULL when there is none.
 */
static char *filter_error(struct kev *k, const char *sys, const char *ev, int *pos)
{
	char *text = tracefs_event_file_read(k->inst, sys, ev, "filter", NULL);
	char *pe = text ? strstr(text, "parse_error: ") : NULL, *msg, *caret, *nl;

	*pos = 0;
	if (!pe) {
		free(text);
		return NULL;
	}
	nl = strchr(pe, '\n');
	if (nl)
		*nl = 0;
	msg = strdup(pe + 13);
	/* the caret's line is the one before */
	*pe = 0;
	caret = strrchr(text, '^');
	if (caret) {
		char *bol = caret;

		while (bol > text && bol[-1] != '\n')
			bol--;
		*pos = (int)(caret - bol);
	}
	free(text);
	return msg;
}

/* Say why the kernel refused 'expr' on sys:ev; -1. */
static int filter_refused(struct kev *k, const char *sys, const char *ev, const char *expr)
{
	int e = errno, pos;
	char *msg = filter_error(k, sys, ev, &pos);

	fprintf(stderr, "utrace record: bad filter for kernel event '%s:%s': %s at position "
		"%d of '%s'\n", sys, ev, msg ? msg : strerror(e), pos, expr);
	free(msg);
	return -1;
}

/* Each filter on the enabled events it names: 0, or -1 said why. */
static int set_filters(struct kev *k, char **filters, size_t nr)
{
	char *list = tracefs_instance_file_read(k->inst, "set_event", NULL);
	size_t i;
	int ret = 0;

	for (i = 0; i < nr && !ret; i++) {
		struct utrace__set_event_match m;
		size_t a, b, c;
		char *save = NULL, *line, *copy;
		int n = 0;

		if (utrace__split_event_filter(filters[i], strlen(filters[i]), &a, &b, &c) < 0 ||
		    utrace__parse_set_event(filters[i] + a, b, &m) < 0) {
			fprintf(stderr, "utrace record: bad filter '%s': give EVENT:EXPRESSION, "
				"as sched:sched_switch:'prev_pid != 0'\n", filters[i]);
			ret = -1;
			break;
		}
		copy = list ? strdup(list) : NULL;
		for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line && !ret;
		     line = strtok_r(NULL, "\n", &save)) {
			char *colon = strchr(line, ':');
			const char *expr = filters[i] + c;

			if (!colon)
				continue;
			*colon = 0;
			if (!utrace__set_event_matches(&m, line, colon + 1))
				continue;
			n++;
			if (tracefs_event_file_write(k->inst, line, colon + 1, "filter",
						     expr) < 0)
				ret = filter_refused(k, line, colon + 1, expr);
		}
		free(copy);
		if (!ret && !n) {
			fprintf(stderr, "utrace record: no kernel event recorded matches the "
				"filter '%s'\n", filters[i]);
			ret = -1;
		}
	}
	free(list);
	return ret;
}

struct kev *kev_start(struct utrace__tfw *out, char **entries, size_t nr,
		      char **filters, size_t nr_filters)
{
	const char *why = kev_unavailable();
	struct kev *k;
	char name[64], *clock;
	size_t i;

	if (why) {
		fprintf(stderr, "utrace record: %s\n", why);
		return NULL;
	}
	remove_stale();
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->out = out;
	snprintf(name, sizeof(name), INSTANCE_PREFIX "%d", (int)getpid());
	k->inst = tracefs_instance_create(name);
	if (!k->inst) {
		fprintf(stderr, "utrace record: cannot make the tracing instance '%s': %s\n",
			name, strerror(errno));
		destroy(k);
		return NULL;
	}
	/* nothing before the pid filter is on */
	tracefs_trace_off(k->inst);
	if (tracefs_instance_file_write(k->inst, "trace_clock", "mono") < 0 ||
	    !(clock = tracefs_get_clock(k->inst)) || strcmp(clock, "mono")) {
		fprintf(stderr, "utrace record: the kernel's trace clock 'mono' cannot be "
			"set (%s): kernel and utrace times would not agree\n",
			strerror(errno));
		destroy(k);
		return NULL;
	}
	free(clock);
	if (tracefs_option_enable(k->inst, TRACEFS_OPTION_EVENT_FORK) < 0 ||
	    tracefs_option_enable(k->inst, TRACEFS_OPTION_RECORD_TGID) < 0) {
		fprintf(stderr, "utrace record: cannot set the instance's event-fork "
			"option: %s\n", strerror(errno));
		destroy(k);
		return NULL;
	}
	for (i = 0; i < nr; i++) {
		if (tracefs_instance_file_append(k->inst, "set_event", entries[i]) < 0) {
			fprintf(stderr, "utrace record: no kernel event matches '%s' (utrace "
				"list --kernel lists them)\n", entries[i]);
			destroy(k);
			return NULL;
		}
	}
	if (set_filters(k, filters, nr_filters) < 0) {
		destroy(k);
		return NULL;
	}
	if (!write_formats(k)) {
		fprintf(stderr, "utrace record: no kernel event is on\n");
		destroy(k);
		return NULL;
	}
	return k;
}

/*
 * Each CPU's trace_pipe_raw, opened only now: a command forked before
 * (it waits for its pid to be in the filter) must not inherit them, or
 * the instance could not be removed while it runs.
 */
static int open_cpus(struct kev *k)
{
	int cpu, n = (int)sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	k->cpu = calloc((size_t)n, sizeof(*k->cpu));
	k->seq = calloc((size_t)n, sizeof(*k->seq));
	if (!k->cpu || !k->seq)
		return -1;
	k->nr_cpus = n;
	for (cpu = 0; cpu < n; cpu++) {
		k->cpu[cpu] = tracefs_cpu_open(k->inst, cpu, true);
		if (k->cpu[cpu] && tracefs_cpu_read_size(k->cpu[cpu]) > k->bufsize)
			k->bufsize = tracefs_cpu_read_size(k->cpu[cpu]);
	}
	k->buf = k->bufsize > 0 ? malloc((size_t)k->bufsize) : NULL;
	if (!k->buf) {
		fprintf(stderr, "utrace record: cannot read the kernel's trace_pipe_raw: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

int kev_set_pids(struct kev *k, const pid_t *pids, size_t nr_pids)
{
	char *tasks = NULL;
	size_t tlen = 0, i;
	FILE *tl = open_memstream(&tasks, &tlen);

	for (i = 0; tl && i < nr_pids; i++)
		add_tasks(tl, pids[i]);
	if (tl)
		fclose(tl);
	if (!tasks || !tasks[0] ||
	    tracefs_instance_file_write(k->inst, "set_event_pid", tasks) < 0) {
		fprintf(stderr, "utrace record: cannot set the kernel's set_event_pid to "
			"the traced processes: %s\n", strerror(errno));
		free(tasks);
		return -1;
	}
	free(tasks);
	if (open_cpus(k) < 0)
		return -1;
	tracefs_trace_on(k->inst);
	return 0;
}

static struct ktask_seen *task_slot(struct ktask_seen *v, size_t cap, uint32_t key)
{
	size_t i = (key * 0x9e3779b1u) & (cap - 1);

	while (v[i].key && v[i].key != key)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* A task named by an event: its name and thread group now, if it lives. */
static void see_task(struct kev *k, uint32_t pid)
{
	char path[64], comm[300] = "", line[256];
	struct ktask_seen *t;
	unsigned long tgid = 0;
	FILE *f;

	if (pid == UINT32_MAX)
		return;
	if (k->cap_tasks && task_slot(k->tasks, k->cap_tasks, pid + 1)->key)
		return;
	if ((k->nr_tasks + 1) * 2 > k->cap_tasks) {
		size_t c = k->cap_tasks ? 2 * k->cap_tasks : 256, i;
		struct ktask_seen *n = calloc(c, sizeof(*n));

		if (!n)
			return;
		for (i = 0; i < k->cap_tasks; i++)
			if (k->tasks[i].key)
				*task_slot(n, c, k->tasks[i].key) = k->tasks[i];
		free(k->tasks);
		k->tasks = n;
		k->cap_tasks = c;
	}
	t = task_slot(k->tasks, k->cap_tasks, pid + 1);
	*t = (struct ktask_seen){ pid + 1, false };
	k->nr_tasks++;
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = pid ? fopen(path, "re") : NULL;
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			snprintf(comm, sizeof(comm), "%s", line + 6);
			comm[strcspn(comm, "\n")] = 0;
		} else if (!strncmp(line, "Tgid:\t", 6)) {
			tgid = strtoul(line + 6, NULL, 10);
		}
	}
	if (f)
		fclose(f);
	if (comm[0] && tgid) {
		utrace__tfw_ktask(k->out, pid, (uint32_t)tgid, comm);
		t->named = true;
	}
}

/* One page read from the kernel: cut after its data, written, its tasks
 * noted. */
static void put_page(struct kev *k, int cpu, int n)
{
	struct utrace_rb_cursor c;
	uint64_t word, bytes;
	size_t len;

	if (n < UTRACE_PAGE_HDR)
		return;
	memcpy(&word, (char *)k->buf + 8, 8);
	bytes = word & UTRACE_RB_COMMIT_MASK;
	if (bytes == 0 && !(word & UTRACE_RB_MISSED_EVENTS))
		return;
	len = UTRACE_PAGE_HDR + bytes + (word & UTRACE_RB_MISSED_STORED ? 8 : 0);
	if (len > (size_t)n)
		len = (size_t)n;
	if ((word & UTRACE_RB_MISSED_STORED) && UTRACE_PAGE_HDR + bytes + 8 <= (size_t)n) {
		uint64_t missed;

		memcpy(&missed, (char *)k->buf + UTRACE_PAGE_HDR + bytes, 8);
		k->lost += missed;
	} else if (word & UTRACE_RB_MISSED_EVENTS) {
		k->lost_unknown = true;
	}
	utrace__tfw_kpage(k->out, (uint32_t)cpu, k->seq[cpu]++, k->buf, len);
	utrace__rb_load(&c, k->buf, (uint32_t)n - UTRACE_PAGE_HDR, 0);
	while (utrace__rb_next(&c, NULL, 0) == UTRACE_RB_EVENT) {
		uint32_t pid;

		if (c.len < 8)
			continue;
		memcpy(&pid, c.rec + 4, 4);
		see_task(k, pid);
		k->events++;
	}
}

void kev_poll(struct kev *k)
{
	static uint64_t next;
	struct timespec ts;
	uint64_t now;
	int cpu, i, n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (now < next)
		return;
	next = now + POLL_NS;
	for (cpu = 0; cpu < k->nr_cpus; cpu++)
		for (i = 0; k->cpu[cpu] && i < MAX_READS &&
		     (n = tracefs_cpu_read(k->cpu[cpu], k->buf, true)) > 0; i++)
			put_page(k, cpu, n);
}

/* "pid comm" lines of the kernel's saved_cmdlines, or "pid tgid" of its
 * saved_tgids: the second word of pid's line. */
static bool saved_word(const char *text, uint32_t pid, char *w, size_t wlen)
{
	const char *p = text;

	while (p && *p) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		const char *nl = strchr(p, '\n');

		if (end != p && *end == ' ' && v == pid) {
			size_t n = nl ? (size_t)(nl - end - 1) : strlen(end + 1);

			if (n >= wlen)
				n = wlen - 1;
			memcpy(w, end + 1, n);
			w[n] = 0;
			return true;
		}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

unsigned long long kev_stop(struct kev *k, unsigned long long *lost, bool *lost_unknown)
{
	unsigned long long events;
	char *cmdlines, *tgids;
	size_t i;
	int cpu, n, j;

	*lost = 0;
	*lost_unknown = false;
	if (!k)
		return 0;
	tracefs_trace_off(k->inst);
	for (cpu = 0; cpu < k->nr_cpus; cpu++) {
		for (j = 0; k->cpu[cpu] && j < MAX_READS &&
		     (n = tracefs_cpu_read(k->cpu[cpu], k->buf, true)) > 0; j++)
			put_page(k, cpu, n);
		for (j = 0; k->cpu[cpu] && j < MAX_READS &&
		     (n = tracefs_cpu_flush(k->cpu[cpu], k->buf)) > 0; j++)
			put_page(k, cpu, n);
	}
	cmdlines = tracefs_instance_file_read(NULL, "saved_cmdlines", NULL);
	tgids = tracefs_instance_file_read(NULL, "saved_tgids", NULL);
	for (i = 0; i < k->cap_tasks; i++) {
		char comm[64] = "", tg[32] = "";
		uint32_t pid = k->tasks[i].key - 1;

		if (!k->tasks[i].key || k->tasks[i].named)
			continue;
		if (pid == 0)
			snprintf(comm, sizeof(comm), "<idle>");
		else if (cmdlines)
			saved_word(cmdlines, pid, comm, sizeof(comm));
		if (tgids)
			saved_word(tgids, pid, tg, sizeof(tg));
		utrace__tfw_ktask(k->out, pid, tg[0] ? (uint32_t)strtoul(tg, NULL, 10) : pid,
				  comm);
	}
	free(cmdlines);
	free(tgids);
	events = k->events;
	*lost = k->lost;
	*lost_unknown = k->lost_unknown;
	destroy(k);
	return events;
}

int kev_list(const char *glob)
{
	const char *why = kev_unavailable();
	const char *dir = tracing_dir();
	char **systems, **events;
	size_t i, j;

	if (!dir) {
		fprintf(stderr, "utrace list: %s\n", why ? why : "no tracefs");
		return 1;
	}
	systems = tracefs_event_systems(dir);
	if (!systems) {
		fprintf(stderr, "utrace list: cannot read %s/events: %s\n", dir,
			why ? why : strerror(errno));
		return 1;
	}
	for (i = 0; systems[i]; i++) {
		events = tracefs_system_events(dir, systems[i]);
		for (j = 0; events && events[j]; j++) {
			char full[512];

			snprintf(full, sizeof(full), "%s:%s", systems[i], events[j]);
			if (!glob || !fnmatch(glob, full, 0))
				printf("%s\n", full);
		}
		tracefs_list_free(events);
	}
	tracefs_list_free(systems);
	return 0;
}
