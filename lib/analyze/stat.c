/* SPDX-License-Identifier: MIT */
/*
 * `utrace stat` (stat.h): a command's utrace events and software counters
 * in the layout of perf stat (tools/perf/util/stat-display.c):
 *
 *    Performance counter stats for './app':
 *
 *                 0.88 msec task-clock              #    0.009 CPUs utilized
 *                 1000      app:req_begin           #    1.136 M/sec
 *
 *          0.101890979 seconds time elapsed
 *
 * The events are counted by recording them: the command runs under
 * `utrace record` into a temporary file (the command, cmd-stat.c, starts
 * it: nothing under lib/ forks), which is then read (the pages
 * are copied, never formatted, so this costs the program what recording
 * costs it, about 18 ns an event; a count-only mode in the program would
 * be cheaper, see docs/design-notes.md).  The recorder tells stat the
 * command's pid before its exec (UTRACE__STAT, cmd-record.c), so that the
 * counters are opened on the command alone, with inherit for its threads
 * and children, and enable_on_exec: they count the command, not the
 * recorder.  Where perf_event_open() is denied, getrusage() of the command
 * (which the recorder reaps) gives task-clock, context-switches and
 * page-faults, and the output says so.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "clock.h"
#include "file-reader.h"
#include "obuf.h"
#include "problems.h"
#include "setevent.h"
#include "stat.h"

enum { SW_TASK_CLOCK, SW_CSW, SW_MIGR, SW_FAULTS, NR_SW };

static const struct {
	const char *name, *unit;
	uint64_t config;
} sw[NR_SW] = {
	{ "task-clock", "msec", PERF_COUNT_SW_TASK_CLOCK },
	{ "context-switches", "", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", "", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "page-faults", "", PERF_COUNT_SW_PAGE_FAULTS },
};

/* Running sums for the mean and its noise (perf's struct stats). */
struct welford {
	double n, mean, m2;
};

static void wf_add(struct welford *w, double v)
{
	double d = v - w->mean;

	w->n++;
	w->mean += d / w->n;
	w->m2 += d * (v - w->mean);
}

/* perf's stddev_stats(): the standard deviation of the mean */
static double wf_noise(const struct welford *w)
{
	if (w->n < 2)
		return 0;
	return sqrt(w->m2 / (w->n - 1) / w->n);
}

struct counter {
	const char *name, *unit;
	bool is_clock, supported;
	struct welford v;
	double run_ns;                  /* time enabled, for the CSV/JSON runtime */
	uint64_t last;                  /* -I: the value at the previous line */
};

struct utrace__stat {
	const struct utrace__stat_opts *o;
	FILE *out;
	struct counter *c;
	size_t nr;
	int fd[NR_SW];
	bool use_perf;
	char why[256];                  /* why perf_event_open() is not used */
	struct welford wall;
	uint64_t go_ns;
	unsigned int intervals;
	double user_s, sys_s;
	bool warned;                    /* about -e entries that match nothing */
	/* the run under way */
	unsigned int run;
	int pfd;                        /* the command's pidfd, or -1 */
	uint64_t end_ns;
	double swv[NR_SW], wall_ns;
};

static long perf_open(struct perf_event_attr *a, pid_t pid)
{
	return syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 2;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

/* The four counters on pid, counting from its exec on; false: denied. */
static bool open_counters(struct utrace__stat *s, pid_t pid)
{
	int i, e = 0;

	for (i = 0; i < NR_SW; i++)
		s->fd[i] = -1;
	if (s->o->rusage) {
		snprintf(s->why, sizeof(s->why), "--rusage");
		return false;
	}
	for (i = 0; i < NR_SW; i++) {
		struct perf_event_attr a;
		long fd;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_SOFTWARE;
		a.size = sizeof(a);
		a.config = sw[i].config;
		a.disabled = 1;
		a.inherit = 1;
		a.enable_on_exec = 1;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		fd = perf_open(&a, pid);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			/* perf_event_paranoid 2: user space only */
			a.exclude_kernel = 1;
			a.exclude_hv = 1;
			fd = perf_open(&a, pid);
		}
		if (fd < 0) {
			e = errno;
			break;
		}
		s->fd[i] = (int)fd;
	}
	if (i == NR_SW)
		return true;
	for (i = 0; i < NR_SW; i++)
		if (s->fd[i] >= 0)
			close(s->fd[i]);
	snprintf(s->why, sizeof(s->why), "perf_event_open: %s, perf_event_paranoid %d",
		 strerror(e), paranoid());
	return false;
}

static bool read_counter(int fd, uint64_t *v, uint64_t *enabled)
{
	uint64_t buf[3];

	if (read(fd, buf, sizeof(buf)) != sizeof(buf))
		return false;
	*v = buf[0];
	*enabled = buf[1];
	return true;
}

/* convert_unit_double() and the "%c/sec" of perf's shadow stats */
static double rate(double count, double task_ns, char *unit, size_t len)
{
	double r = task_ns > 0 ? 1e9 * count / task_ns : 0;
	char u = ' ';

	if (r > 1000) {
		r /= 1000;
		u = 'K';
	}
	if (r > 1000) {
		r /= 1000;
		u = 'M';
	}
	if (r > 1000) {
		r /= 1000;
		u = 'G';
	}
	if (u == ' ')
		snprintf(unit, len, "/sec");
	else
		snprintf(unit, len, "%c/sec", u);
	return r;
}

/*
 * One counter line: value (count, or ns for task-clock), its metric,
 * the noise (-r), the runtime; prefix: the interval's time, or "".
 */
/* A name as a JSON string: quotes, backslashes and control bytes escaped
 * (an event's or a unit's name comes from the user's -e). */
static void json_str(FILE *out, const char *s)
{
	struct utrace__obuf b = { 0 };

	utrace__ob_json_str(&b, s, strlen(s));
	if (b.p)
		fwrite(b.p, 1, b.len, out);
	free(b.p);
}

static void put_line(struct utrace__stat *s, const struct counter *c, double val, double noise,
		     double run_ns, double task_ns, double wall_ns, const char *prefix)
{
	const struct utrace__stat_opts *o = s->o;
	double shown = c->is_clock ? val / 1e6 : val, mval;
	const char *csv = o->sep;
	char munit[32], mtxt[64];

	if (c->is_clock) {
		mval = wall_ns > 0 ? val / wall_ns : 0;
		snprintf(munit, sizeof(munit), "CPUs utilized");
	} else {
		mval = rate(val, task_ns, munit, sizeof(munit));
	}
	if (o->json) {
		if (prefix[0])
			fprintf(s->out, "{\"interval\" : %s, ", prefix);
		else
			fputc('{', s->out);
		if (!c->supported) {
			fputs("\"counter-value\" : \"<not supported>\", \"unit\" : ", s->out);
			json_str(s->out, c->unit);
			fputs(", \"event\" : ", s->out);
			json_str(s->out, c->name);
			fputs(", \"event-runtime\" : 0, \"pcnt-running\" : 100.00, "
			      "\"metric-value\" : 0.000000, \"metric-unit\" : \"\"}\n", s->out);
			return;
		}
		fprintf(s->out, "\"counter-value\" : \"%f\", \"unit\" : ", shown);
		json_str(s->out, c->unit);
		fputs(", \"event\" : ", s->out);
		json_str(s->out, c->name);
		fputs(", ", s->out);
		if (o->runs > 1)
			fprintf(s->out, "\"variance\" : %.2f, ", val ? 100.0 * noise / val : 0.0);
		fprintf(s->out, "\"event-runtime\" : %.0f, \"pcnt-running\" : 100.00, "
			"\"metric-value\" : %f, \"metric-unit\" : \"%s\"}\n", run_ns, mval, munit);
		return;
	}
	if (csv) {
		if (prefix[0])
			fprintf(s->out, "%s%s", prefix, csv);
		if (!c->supported) {
			fprintf(s->out, "<not supported>%s%s%s%s%s0%s100.00%s%s\n", csv, c->unit,
				csv, c->name, csv, csv, csv, csv);
			return;
		}
		fprintf(s->out, c->is_clock ? "%.2f%s%s%s%s" : "%.0f%s%s%s%s", shown, csv,
			c->unit, csv, c->name);
		if (o->runs > 1)
			fprintf(s->out, "%s%.2f%%", csv, val ? 100.0 * noise / val : 0.0);
		/* perf's print_metric_csv(): the number without its padding */
		snprintf(mtxt, sizeof(mtxt), "%.3f", mval);
		fprintf(s->out, "%s%.0f%s100.00%s%s%s%s\n", csv, run_ns, csv, csv, mtxt, csv,
			munit);
		return;
	}
	if (prefix[0])
		fprintf(s->out, "%s ", prefix);
	if (!c->supported) {
		fprintf(s->out, "%18s %-4s %-25s%-35s\n", "<not supported>", c->unit, c->name, "");
		return;
	}
	fprintf(s->out, c->is_clock ? "%18.2f %-4s %-32s" : "%18.0f %-4s %-32s", shown, c->unit,
		c->name);
	{
		int n = fprintf(s->out, " # ");

		n += fprintf(s->out, "%8.3f", mval);
		fprintf(s->out, " %-*s", 35 - n - 1, munit);
	}
	/* perf's print_noise_pct(): not when it is 0 */
	if (o->runs > 1 && val && noise)
		fprintf(s->out, "  ( +-%6.2f%% )", 100.0 * noise / val);
	fputc('\n', s->out);
}

static void interval_line(struct utrace__stat *s, uint64_t now)
{
	uint64_t v[NR_SW], en, t = now - s->go_ns;
	char prefix[64];
	int i;

	for (i = 0; i < NR_SW; i++)
		if (!read_counter(s->fd[i], &v[i], &en))
			v[i] = s->c[i].last;
	if (!s->o->json && !s->o->sep && s->intervals++ % 25 == 0)
		fprintf(s->out, "#           time             counts %*s events\n", 4, "unit");
	snprintf(prefix, sizeof(prefix), s->o->json ? "%" PRIu64 ".%09" PRIu64 :
		 "%6" PRIu64 ".%09" PRIu64, t / 1000000000, t % 1000000000);
	for (i = 0; i < NR_SW; i++) {
		double d = (double)(v[i] - s->c[i].last);
		double task = (double)(v[SW_TASK_CLOCK] - s->c[SW_TASK_CLOCK].last);

		put_line(s, &s->c[i], d, 0, task, task, (double)s->o->interval_ms * 1e6, prefix);
	}
	for (i = 0; i < NR_SW; i++)
		s->c[i].last = v[i];
	fflush(s->out);
}

static void add_event(struct utrace__stat *s, const char *label)
{
	struct counter *a;
	size_t i;

	for (i = NR_SW; i < s->nr; i++)
		if (!strcmp(s->c[i].name, label))
			return;
	a = realloc(s->c, (s->nr + 1) * sizeof(*a));
	if (!a)
		return;
	s->c = a;
	memset(&a[s->nr], 0, sizeof(*a));
	a[s->nr].name = strdup(label);
	a[s->nr].unit = "";
	a[s->nr].supported = a[s->nr].name != NULL;
	if (a[s->nr].name)
		s->nr++;
}

/* The events of -e, as set_event matchers; false when one is malformed. */
static bool event_matchers(const char *events, struct utrace__set_event_match **m, size_t *n,
			   char **keep, const char ***toks)
{
	char *copy = events ? strdup(events) : NULL, *save = NULL, *tok;
	bool ok = true;

	*m = NULL;
	*n = 0;
	*keep = copy;           /* the matchers point into it */
	if (!copy)
		return true;
	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		struct utrace__set_event_match *a = realloc(*m, (*n + 1) * sizeof(*a));
		const char **t = realloc(*toks, (*n + 1) * sizeof(*t));

		if (t)
			*toks = t;
		if (!a || !t || utrace__parse_set_event(tok, strlen(tok), &a[*n]) < 0) {
			*m = a ? a : *m;
			ok = false;
			break;
		}
		*m = a;
		t[*n] = tok;
		(*n)++;
	}
	return ok;
}

static bool selected(const struct utrace__set_event_match *m, size_t n, const char *system,
		     const char *name)
{
	bool sel = !n || !m[0].set;
	size_t i;

	for (i = 0; i < n; i++)
		if (utrace__set_event_matches(&m[i], system, name))
			sel = m[i].set;
	return sel;
}

/* Count the events of the recording: each selected format is a counter
 * (0 when it never fired), in the order of the file. */
static int count_file(struct utrace__stat *s, const char *path, double *counts, size_t cap)
{
	struct utrace__set_event_match *m = NULL;
	struct utrace__tf_format *f;
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	struct utrace__tf *tf = NULL;
	size_t n = 0, i, k;
	const char **toks = NULL;
	char *keep = NULL;
	int r;

	if (!event_matchers(s->o->events, &m, &n, &keep, &toks)) {
		free(m);
		free(keep);
		free(toks);
		return -EINVAL;
	}
	r = utrace__tf_open(path, &tf);
	if (!tf || !utrace__tf_page_size(tf)) {
		utrace__say("utrace stat: %s\n", tf && utrace__tf_error(tf) ?
			    utrace__tf_error(tf) : "cannot read the recording");
		utrace__tf_close(tf);
		free(m);
		free(keep);
		free(toks);
		return r < 0 ? r : -EBADMSG;
	}
	for (i = 0; (f = utrace__tf_format(tf, i)); i++) {
		char *label;

		f->priv = NULL;
		/* trace_marker's events, which every program has: only by name */
		if (!n && !strcmp(f->system, "ftrace"))
			continue;
		if (!selected(m, n, f->system, f->name) ||
		    asprintf(&label, "%s:%s", f->system, f->name) < 0)
			continue;
		add_event(s, label);
		for (k = NR_SW; k < s->nr; k++)
			if (!strcmp(s->c[k].name, label))
				f->priv = (void *)(uintptr_t)(k + 1);
		free(label);
	}
	/* an -e entry that matches no event of the program: a typo */
	for (k = 0; k < n && !s->warned; k++) {
		bool hit = !m[k].set;

		for (i = 0; !hit && (f = utrace__tf_format(tf, i)); i++)
			hit = utrace__set_event_matches(&m[k], f->system, f->name);
		if (!hit)
			utrace__say("utrace stat: no event of '%s' matches '%s'\n",
				    s->o->argv[0], toks[k]);
	}
	s->warned = true;
	for (k = 0; k < cap; k++)
		counts[k] = 0;
	r = utrace__tf_iter_new(tf, &it);
	while (r >= 0 && (r = utrace__tf_iter_next(it, &item)) > 0)
		if (item.kind == UTRACE__TF_EVENT && item.format && item.format->priv) {
			k = (size_t)(uintptr_t)item.format->priv - 1;
			if (k < cap)
				counts[k]++;
		}
	utrace__tf_iter_free(it);
	utrace__tf_close(tf);
	free(m);
	free(keep);
	free(toks);
	return r < 0 ? r : 0;
}

void utrace__stat_run_begin(struct utrace__stat *s, pid_t cmd)
{
	int i;

	if (s->use_perf)
		s->use_perf = open_counters(s, cmd);
	s->pfd = (int)syscall(SYS_pidfd_open, cmd, 0);
	for (i = 0; i < NR_SW; i++)
		s->c[i].last = 0;
	s->end_ns = 0;
	s->go_ns = utrace__mono_ns();
}

void utrace__stat_run_wait(struct utrace__stat *s)
{
	struct pollfd p = { .fd = s->pfd, .events = POLLIN };
	uint64_t next = s->go_ns + (uint64_t)s->o->interval_ms * 1000000;

	if (s->pfd < 0)
		return;
	/* -I: a line every interval until the command is gone */
	for (;;) {
		int timeout = -1, r;

		if (s->o->interval_ms && s->use_perf) {
			uint64_t now = utrace__mono_ns();

			timeout = now >= next ? 0 : (int)((next - now + 999999) / 1000000);
		}
		r = poll(&p, 1, timeout);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 0)
			break;
		interval_line(s, next);
		next += (uint64_t)s->o->interval_ms * 1000000;
	}
	s->end_ns = utrace__mono_ns();
	close(s->pfd);
	s->pfd = -1;
}

void utrace__stat_run_end(struct utrace__stat *s, const struct rusage *ru)
{
	uint64_t en = 0;
	int i;

	if (!s->end_ns)         /* no pidfd: the recorder's end */
		s->end_ns = utrace__mono_ns();
	if (s->pfd >= 0)
		close(s->pfd);
	s->pfd = -1;
	s->wall_ns = (double)(s->end_ns - s->go_ns);
	if (s->o->interval_ms && s->use_perf)
		interval_line(s, s->end_ns);
	s->user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
	s->sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	if (s->use_perf) {
		for (i = 0; i < NR_SW; i++) {
			uint64_t v = 0;

			if (!read_counter(s->fd[i], &v, &en))
				v = 0;
			s->swv[i] = (double)v;
			s->c[i].run_ns = (double)en;
			close(s->fd[i]);
		}
	} else {
		s->swv[SW_TASK_CLOCK] = (s->user_s + s->sys_s) * 1e9;
		s->swv[SW_CSW] = (double)(ru->ru_nvcsw + ru->ru_nivcsw);
		s->swv[SW_MIGR] = 0;
		s->swv[SW_FAULTS] = (double)(ru->ru_minflt + ru->ru_majflt);
		for (i = 0; i < NR_SW; i++)
			s->c[i].run_ns = s->wall_ns;
	}
}

static void put_header(struct utrace__stat *s)
{
	char **a;

	if (s->o->json || s->o->sep)
		return;
	fprintf(s->out, "\n Performance counter stats for '");
	for (a = s->o->argv; *a; a++)
		fprintf(s->out, "%s%s", a == s->o->argv ? "" : " ", *a);
	fprintf(s->out, "'");
	if (s->o->runs > 1)
		fprintf(s->out, " (%u runs)", s->o->runs);
	fprintf(s->out, ":\n\n");
}

static int get_precision(double num)
{
	if (num > 1)
		return 0;
	return (int)lround(ceil(-log10(num)));
}

static void put_footer(struct utrace__stat *s)
{
	double avg = s->wall.mean / 1e9;

	if (s->o->json || s->o->sep)
		return;
	fprintf(s->out, "\n");
	if (s->o->runs == 1) {
		fprintf(s->out, " %17.9f seconds time elapsed", avg);
		fprintf(s->out, "\n\n");
		fprintf(s->out, " %17.9f seconds user\n", s->user_s);
		fprintf(s->out, " %17.9f seconds sys\n", s->sys_s);
	} else {
		double sd = wf_noise(&s->wall) / 1e9;
		int prec = get_precision(sd) + 2;

		fprintf(s->out, " %17.*f +- %.*f seconds time elapsed", prec, avg, prec, sd);
		if (avg && sd)
			fprintf(s->out, "  ( +-%6.2f%% )", 100.0 * sd / avg);
	}
	fprintf(s->out, "\n\n");
}

int utrace__stat_new(const struct utrace__stat_opts *o, FILE *out, struct utrace__stat **sp)
{
	struct utrace__stat *s = calloc(1, sizeof(*s));
	int i;

	*sp = NULL;
	if (!s)
		return -ENOMEM;
	s->o = o;
	s->out = out;
	s->use_perf = true;
	s->pfd = -1;
	s->c = calloc(NR_SW, sizeof(*s->c));
	if (!s->c) {
		free(s);
		return -ENOMEM;
	}
	s->nr = NR_SW;
	for (i = 0; i < NR_SW; i++) {
		s->c[i].name = sw[i].name;
		s->c[i].unit = sw[i].unit;
		s->c[i].is_clock = i == SW_TASK_CLOCK;
		s->c[i].supported = true;
	}
	*sp = s;
	return 0;
}

int utrace__stat_add_run(struct utrace__stat *s, const char *path)
{
	size_t cap = s->nr + 4096, k;
	double *cnt;

	if (s->run++ == 0 && !s->use_perf)
		s->c[SW_MIGR].supported = false;
	/* the events: counted from the recording */
	cnt = calloc(cap, sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	if (count_file(s, path, cnt, cap) == -EINVAL) {
		free(cnt);
		utrace__say("utrace stat: bad event specification in '%s'\n", s->o->events);
		return -EINVAL;
	}
	for (k = 0; k < NR_SW; k++)
		cnt[k] = s->swv[k];
	for (k = 0; k < s->nr && k < cap; k++)
		wf_add(&s->c[k].v, cnt[k]);
	free(cnt);
	wf_add(&s->wall, s->wall_ns);
	return 0;
}

void utrace__stat_print(struct utrace__stat *s)
{
	const struct utrace__stat_opts *o = s->o;
	FILE *out = s->out;
	size_t k;

	if (o->interval_ms && s->use_perf && !o->json && !o->sep)
		fprintf(out, "\n");
	if (o->interval_ms && !s->use_perf)
		fprintf(out, "# -I %u: no interval lines: %s\n", o->interval_ms, s->why);
	put_header(s);
	for (k = 0; k < s->nr; k++) {
		const struct counter *c = &s->c[k];

		if (o->interval_ms && s->use_perf && k < NR_SW)
			continue;               /* printed by interval */
		put_line(s, c, c->v.mean, wf_noise(&c->v), c->run_ns ? c->run_ns :
			 s->c[SW_TASK_CLOCK].v.mean, s->c[SW_TASK_CLOCK].v.mean, s->wall.mean, "");
	}
	if (!s->use_perf && !o->json && !o->sep)
		fprintf(out, "\n # task-clock, context-switches and page-faults from getrusage() "
			"of the command: %s\n", s->why);
	else if (!s->use_perf)
		utrace__say("utrace stat: task-clock, context-switches and page-faults from "
			    "getrusage() of the command: %s\n", s->why);
	put_footer(s);
	fflush(out);
}

void utrace__stat_free(struct utrace__stat *s)
{
	size_t k;

	if (!s)
		return;
	if (s->pfd >= 0)
		close(s->pfd);
	for (k = NR_SW; k < s->nr; k++)
		free((char *)s->c[k].name);
	free(s->c);
	free(s);
}
