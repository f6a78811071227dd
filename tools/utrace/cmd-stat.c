/* SPDX-License-Identifier: MIT */
/*
 * utrace stat: run a command and count its utrace events and software
 * counters, in the layout of `perf stat`.  The counting and printing are
 * lib/analyze/stat.c's; here are the options and the processes: the
 * command runs under `utrace record` (this binary) into a temporary file.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stat.h"
#include "cmds.h"

static const char usage_text[] =
	"usage: utrace stat [-e EVENTS] [-x SEP | -j] [-I MSEC] [-r N] [-o FILE]\n"
	"                   [--rusage] -- COMMAND [ARGS]\n"
	"\n"
	"Run COMMAND and count its utrace events and its software counters\n"
	"(task-clock, context-switches, cpu-migrations, page-faults), as 'perf stat'\n"
	"shows them.  The events are counted by recording them into a temporary\n"
	"file; the counters come from perf_event_open() on the command, or from\n"
	"getrusage() where that is denied.  The exit status is the command's.\n"
	"\n"
	"  -e, --event EVENTS  the events to count, in the kernel's set_event syntax\n"
	"                      (sys:event, sys:*, *:event, !...), ',' apart\n"
	"                      (default: all the events of the program)\n"
	"  -x, --field-separator SEP  CSV lines, fields apart by SEP, as perf stat -x\n"
	"  -j, --json-output   one JSON object a line, as perf stat -j\n"
	"  -I, --interval-print MSEC  the software counters every MSEC milliseconds\n"
	"                      (the events are counted at the end)\n"
	"  -r, --repeat N      run the command N times; print the means and their\n"
	"                      spread\n"
	"  -o, --output FILE   print the counts into FILE (default: stderr, as perf)\n"
	"      --rusage        take the counters from getrusage(), not\n"
	"                      perf_event_open()\n"
	"  -h, --help          show this text\n";

int cmd_temp_trace(char *path, size_t len, const char *who)
{
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, len, "%s/utrace-%s-XXXXXX", dir && *dir ? dir : "/tmp", who);
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "utrace %s: cannot make a temporary file: %s\n", who,
			strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int cmd_record_command(const char *self, char **argv, const char *path)
{
	size_t n = 0;
	char **args;
	pid_t pid;
	int st;

	while (argv[n])
		n++;
	args = calloc(n + 6, sizeof(*args));
	if (!args)
		return -1;
	args[0] = (char *)"utrace";
	args[1] = (char *)"record";
	args[2] = (char *)"-o";
	args[3] = (char *)path;
	args[4] = (char *)"--";
	memcpy(args + 5, argv, (n + 1) * sizeof(*args));
	pid = fork();
	if (pid == 0) {
		execv(self, args);
		_exit(127);
	}
	free(args);
	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Ctrl-C reaches the recorder and the command too (one process group):
 * the recorder stops the command, stat prints what was counted. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* The recorder: `self record -o path [-e events] -- argv...`, told to
 * hand the command's pid over sync[1] before its exec, and to hold the
 * exec until a byte comes on go[0] (UTRACE__STAT, cmd-record.c). */
static pid_t start_recorder(const char *self, const struct utrace__stat_opts *o,
			    const char *path, int sync_w, int go_r, int errfd)
{
	char env[64], *args[8], **argv;
	size_t a = 0, n = 0;
	pid_t rec;
	int i;

	args[a++] = (char *)"utrace";
	args[a++] = (char *)"record";
	args[a++] = (char *)"-o";
	args[a++] = (char *)path;
	if (o->events) {
		args[a++] = (char *)"-e";
		args[a++] = (char *)o->events;
	}
	args[a++] = (char *)"--";
	rec = fork();
	if (rec != 0)
		return rec;
	while (o->argv[n])
		n++;
	argv = calloc(a + n + 1, sizeof(*argv));
	if (!argv)
		_exit(1);
	memcpy(argv, args, a * sizeof(*argv));
	memcpy(argv + a, o->argv, (n + 1) * sizeof(*argv));
	fcntl(sync_w, F_SETFD, 0);
	fcntl(go_r, F_SETFD, 0);
	fcntl(errfd, F_SETFD, 0);
	snprintf(env, sizeof(env), "%d %d %d", sync_w, go_r, errfd);
	setenv("UTRACE__STAT", env, 1);
	/* the recorder's own lines are not the command's output */
	i = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (i >= 0)
		dup2(i, STDERR_FILENO);
	execv(self, argv);
	_exit(127);
}

/* One run: returns the command's exit status, or -1 (said on stderr). */
static int one_run(struct utrace__stat *s, const struct utrace__stat_opts *o,
		   const char *self, const char *path)
{
	int sync[2], go[2], errfd = dup(STDERR_FILENO), st = 0;
	struct rusage ru;
	pid_t rec, cmd;

	if (errfd < 0 || pipe2(sync, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		fprintf(stderr, "utrace stat: %s\n", strerror(errno));
		return -1;
	}
	rec = start_recorder(self, o, path, sync[1], go[0], errfd);
	close(sync[1]);
	close(go[0]);
	close(errfd);
	if (rec < 0) {
		fprintf(stderr, "utrace stat: cannot fork: %s\n", strerror(errno));
		close(sync[0]);
		close(go[1]);
		return -1;
	}
	if (read_full(sync[0], &cmd, sizeof(cmd)) < 0) {
		close(sync[0]);
		close(go[1]);
		waitpid(rec, &st, 0);
		fprintf(stderr, "utrace stat: the recorder did not start the command\n");
		return -1;
	}
	utrace__stat_run_begin(s, cmd);
	if (write(go[1], "g", 1) != 1)
		fprintf(stderr, "utrace stat: cannot start the command\n");
	close(go[1]);
	utrace__stat_run_wait(s);
	if (read_full(sync[0], &ru, sizeof(ru)) < 0)
		memset(&ru, 0, sizeof(ru));
	close(sync[0]);
	while (waitpid(rec, &st, 0) < 0 && errno == EINTR)
		;
	utrace__stat_run_end(s, &ru);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* o->runs runs, then the counts: the command's exit status (of the last
 * run), or 1 when utrace itself failed. */
static int stat_runs(const struct utrace__stat_opts *o, const char *self, FILE *out)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct utrace__stat *s;
	char path[4096];
	int status = 1, r;
	unsigned int run;

	if (cmd_temp_trace(path, sizeof(path), "stat") < 0)
		return 1;
	if (utrace__stat_new(o, out, &s) < 0)
		goto nomem;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (run = 0; run < o->runs && !interrupted; run++) {
		status = one_run(s, o, self, path);
		if (status < 0) {
			status = 1;
			goto out;
		}
		r = utrace__stat_add_run(s, path);
		if (r == -EINVAL) {
			status = 129;
			goto out;
		}
		if (r < 0)
			goto nomem;
	}
	utrace__stat_print(s);
	goto out;
nomem:
	fprintf(stderr, "utrace stat: out of memory\n");
	status = 1;
out:
	unlink(path);
	utrace__stat_free(s);
	return status;
}

static int number(const char *s, unsigned int *v)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	if (!*s || *end || n == 0 || n > 1000000)
		return -1;
	*v = (unsigned int)n;
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json-output", no_argument, NULL, 'j' },
		{ "interval-print", required_argument, NULL, 'I' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "rusage", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct utrace__stat_opts o = { .runs = 1 };
	const char *me = "/proc/self/exe";
	const char *output = NULL;
	char self[PATH_MAX];
	FILE *out = stderr;
	ssize_t n;
	int c, status;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:e:x:jI:r:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.events = optarg;
			break;
		case 'x':
			o.sep = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'I':
			if (number(optarg, &o.interval_ms) < 0 || o.interval_ms < 10)
				return usage_error("stat", "bad interval '%s': give milliseconds, "
						   "10 or more", optarg);
			break;
		case 'r':
			if (number(optarg, &o.runs) < 0)
				return usage_error("stat", "bad repeat count '%s'", optarg);
			break;
		case 'o':
			output = optarg;
			break;
		case 'R':
			o.rusage = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return usage_error("stat", "option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("stat", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("stat", "%s", "no command: give -- COMMAND [ARGS]");
	if (o.sep && o.json)
		return usage_error("stat", "%s", "-x and -j do not go together");
	if (o.interval_ms && o.runs > 1)
		return usage_error("stat", "%s", "-I and -r do not go together");
	o.argv = argv + optind;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		me = self;
	}
	if (output) {
		out = fopen(output, "we");
		if (!out) {
			perror(output);
			return 1;
		}
	}
	status = stat_runs(&o, me, out);
	if (output && fclose(out) != 0) {
		perror(output);
		return 1;
	}
	return status;
}
