/* SPDX-License-Identifier: MIT */
/*
 * Start-up: read the environment once, before main() where possible (the
 * library constructor) and at the latest when the first events register.
 *
 *   UTRACE_EVENTS   events on at start, set_event syntax, ',' or ' ' apart
 *   UTRACE_PRINT    "stderr", "stdout" or a file path: print each event
 *                   as a line
 *   UTRACE_FILTER   filters from the start: EVENT:EXPRESSION entries, ';'
 *                   or a newline apart (control.c)
 *
 * Nothing here may stop the program: a bad value gives one line on stderr
 * and the program runs on without that setting.
 *
 * A set-user-ID or set-group-ID program (AT_SECURE) reads none of them:
 * its caller's environment must not make it write files where its caller
 * could not (UTRACE_PRINT), read memory its caller could not (probes,
 * filters), or hand its memory to its caller's recorder (UTRACE_RECORD);
 * its agent answers root only (rundir.c).  When the caller did set some,
 * one line says they were ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "stacks.h"
#include "trigger.h"
#include "agent.h"
#include "event.h"
#include "marker.h"
#include "record.h"
#include "uprobes.h"
#include "tp.h"
#include "clock.h"
#include "filter.h"
#include "symbols.h"
#include "control.h"
#include "writer.h"
#include "jump.h"
#include "ftrace.h"
#include "rundir.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void before_fork(void)
{
	utrace__agent_before_fork();
	utrace__registry_lock();
	utrace__tp_before_fork();
	utrace__jump_before_fork();
}

static void after_fork_parent(void)
{
	utrace__agent_after_fork_parent();
	utrace__jump_after_fork();
	utrace__tp_after_fork(0);
	utrace__registry_unlock();
}

static void after_fork_child(void)
{
	utrace__jump_after_fork();
	utrace__tp_after_fork(1);
	utrace__registry_unlock();
	utrace__thread_after_fork();
	utrace__record_after_fork_child();
	utrace__agent_after_fork_child();
	utrace__stacks_after_fork();
}

/* An object's events have registered: controllable from now on; and
 * events that UTRACE_EVENTS switched on get a buffer that `utrace show`
 * can read. */
static void module_added(void)
{
	if (utrace__agent_start() && utrace__registry_any_enabled())
		utrace__pool_ensure();
}

/* The registry tells the control layer about new events through these,
 * rather than calling up into it. */
static void event_added(const struct utrace_event *ev)
{
	/* Its filter first: UTRACE_EVENTS switches it on after this. */
	utrace__control_filter_spec_apply((struct utrace_event *)ev);
	utrace__record_send_format(ev);
}

static const struct utrace__registry_ops registry_ops = {
	.event_added = event_added,
	.module_added = module_added,
	.event_removed = utrace__triggers_event_gone,
};

extern char **environ;

/* A secure program whose caller set UTRACE_* variables: say once that
 * they were ignored. */
static void secure_notice(void)
{
	char **e;

	if (!utrace__secure())
		return;
	for (e = environ; e && *e; e++)
		if (!strncmp(*e, "UTRACE_", 7)) {
			utrace__warn("a set-user-ID or set-group-ID program: the UTRACE_* "
				     "variables are ignored, and only root may control it");
			return;
		}
}
/* The writer and the marker run the triggers, which are above them. */
static const struct utrace__trigger_ops trigger_ops = {
	.run = utrace__triggers_run,
	.run_in = utrace__triggers_run_in,
	.any_in = utrace__triggers_any_in,
};

static void init_once_fn(void)
{
	const char *v;

	secure_notice();
	pthread_atfork(before_fork, after_fork_parent, after_fork_child);
	utrace__registry_set_ops(&registry_ops);
	utrace__writer_set_trigger_ops(&trigger_ops);
	utrace__triggers_set_snapshot(utrace__agent_snapshot_request);

	v = utrace__getenv("UTRACE_PRINT");
	if (v && *v)
		utrace__print_set_dest(v);
	v = utrace__getenv("UTRACE_FILTER");
	if (v && *v)
		utrace__control_filter_spec_set(v);
	v = utrace__getenv("UTRACE_EVENTS");
	if (v && *v)
		utrace__events_spec_set(v);
	if (utrace__stacks_init() > 0)
		utrace__writer_set_stack_capture(utrace__stacks_capture);
	utrace__clock_init();
	utrace__fast_init();
	/* .function filters name static functions too (symbols.c) */
	utrace__filter_sym_by_name = utrace__sym_by_name;
	utrace__record_init();
	utrace__fast_update();
}

void utrace__init(void)
{
	pthread_once(&init_once, init_once_fn);
}

/* UTRACE_PRINT's destination, opened once; then the writer's fast path
 * is recomputed (the printer takes the library's path). */
static void print_open(void)
{
	utrace__print_open();
	utrace__fast_update();
}

/*
 * The public entry points that an object's event constructor may reach
 * before the library's own constructor has run (a static libutrace):
 * each starts the library first, then calls down into the registry.
 */
void utrace_tp_register_module(struct utrace_event *const *start,
			       struct utrace_event *const *stop,
			       const struct utrace_eval_map *const *evals_start,
			       const struct utrace_eval_map *const *evals_stop)
{
	utrace__init();
	if (!start || start >= stop)
		return;
	print_open();
	/* ftrace's own events first: the marker files' (not inside the
	 * once above, since registering may start the agent) */
	utrace__marker_register();
	utrace__registry_add_module(start, stop, evals_start, evals_stop);
	/* record -g: ftrace:stack, and the new object's generated code */
	utrace__stacks_register();
}

int utrace_event_foreach(int (*fn)(struct utrace_event *ev, void *arg), void *arg)
{
	utrace__init();
	return utrace__registry_foreach(fn, arg);
}

int utrace_set_event(const char *token)
{
	if (!token)
		return -EINVAL;
	utrace__init();
	return utrace__registry_set_event(token);
}

/* Preloaded into a program that has no events of its own (utrace record
 * --probe, LD_PRELOAD): nothing would register a module, so the agent
 * would never start; ftrace's own events register one, and the probes of
 * UTRACE_PROBES come next. */
static bool preloaded(void)
{
	const char *v = getenv("LD_PRELOAD");

	return v && strstr(v, "libutrace.so");
}

__attribute__((constructor)) static void utrace_ctor(void)
{
	utrace__init();
	utrace__uprobes_snapshot();
	if (preloaded() || utrace__getenv("UTRACE_PROBES") || utrace__getenv("UTRACE_TRACER")) {
		print_open();
		utrace__marker_register();
		utrace__stacks_register();
		utrace__uprobes_from_env();
		utrace__ftrace_from_env();
	}
}

/*
 * `utrace attach` (tools/utrace/inject.c) calls this in a running program
 * it has just loaded the library into (or that had it without an agent),
 * on a thread it borrowed and gives back: the agent listens in the tool's
 * runtime directory 'rundir' from now on, with ftrace's own events; no
 * event is on, no probe placed.  The library's constructor has run (a
 * late dlopen(): the objects already loaded are found as the agent looks).
 * 0 when the agent listens; -EPERM when UTRACE_CONTROL=0 or the runtime
 * directory refused it.  Not public: its name is the tool's.
 */
__attribute__((visibility("default"))) int utrace__attach_start(const char *rundir);
__attribute__((visibility("default"))) int utrace__attach_start(const char *rundir)
{
	utrace__init();
	if (rundir && *rundir)
		utrace__rundir_set(rundir);
	print_open();
	utrace__marker_register();
	return utrace__agent_start() ? 0 : -EPERM;
}

/* A program whose executable has no events never triggers the report of
 * UTRACE_EVENTS entries that matched nothing; give it at exit. */
__attribute__((destructor)) static void utrace_dtor(void)
{
	utrace__events_spec_report();
	/* libraries dlopen()ed since the agent last looked (those without
	 * events of their own): the recorder gets their symbols all the same */
	utrace__record_send_objects();
}

const char *utrace_version(void)
{
	return UTRACE__VERSION_STRING;
}

const char *utrace_strerror(int err)
{
	return utrace__strerror(err);
}
