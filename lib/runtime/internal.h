/* SPDX-License-Identifier: MIT */
/* libutrace internals: not installed, not exported. */
#ifndef UTRACE_INTERNAL_H
#define UTRACE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <utrace/utrace.h>

#include "compiler.h"
#include "log.h"
#include "setevent.h"

/* Registry state of one event, kept in utrace_event.priv. */
struct utrace__event_state {
	struct utrace_event *ev;
	struct utrace__module *mod;
	char *print_fmt;                 /* after TRACE_DEFINE_ENUM replacement */
	struct utrace_event_field *fields;
	unsigned int nr_fields;
	bool enabled;
	/* ftrace's own events (marker.c): listed with a format, never
	 * switched on, as the kernel's TRACE_EVENT_FL_IGNORE_ENABLE */
	bool ignore_enable;
	struct utrace__filter *filter;   /* also in ev->filter */
	char *filter_text;               /* what the filter file reads; NULL: "none\n" */
	/* the user's expression when it compiled (NULL: none); st->filter
	 * runs it AND set_event_pid's predicate (control.c) */
	char *filter_expr;
	/* instances (instances/<name>/, instance.h): bit i set when the
	 * event is on in instance i; its filters there (NULL until one is
	 * set, then UTRACE_INSTANCES_MAX entries, freed with the event) */
	uint32_t inst_on;
	struct utrace__inst_filter *ifilt;
	/* triggers (trigger.c): the list the writer runs, published with
	 * RCU; and how many triggers hold the event's probe while it may be
	 * off (the kernel's SOFT_MODE: its enable file reads "0*"), those
	 * of the instances included */
	struct utrace__trig_list *triggers;
	unsigned int soft;
	/* the instances' triggers: NULL until one is set, then
	 * UTRACE_INSTANCES_MAX entries, freed with the event */
	struct utrace__inst_trig *itrig;
};

/* An event's triggers in one instance (utrace__event_state.itrig[i]). */
struct utrace__inst_trig {
	struct utrace__trig_list *triggers;  /* as utrace__event_state.triggers */
	unsigned int soft;                   /* of utrace__event_state.soft, this instance's */
};

struct utrace__module {
	struct utrace_event **start, **stop;
	const struct utrace_eval_map *const *evals_start, *const *evals_stop;
	int refs;
	bool is_main;
	char *path;
	struct utrace__module *next;
};

/* init.c */

/**
 * utrace__init - read the environment and set up the library, once
 *
 * The library constructor calls it, and so do the public entry points
 * that may run before it (an object's event constructor), which are
 * defined in init.c for that reason and then call down into the
 * registry.  Installs the registry hooks and the fork handlers.
 */
void utrace__init(void) UTRACE_HIDDEN;


/* registry.c */

/**
 * struct utrace__registry_ops - what the layers above hear from the registry
 * @event_added: an event has registered; called with the registry lock
 *               held, in registration order (record.c sends its format)
 * @module_added: an object's events have registered and UTRACE_EVENTS was
 *                applied to them; called with no lock held (the agent
 *                starts, and events switched on get a pool)
 * @event_removed: an object is unloaded: each of its events, registry
 *                 lock held, before any of them is torn down (triggers)
 *
 * The registry is below the control layer (agent.c, control.c, record.c),
 * which calls into it: it tells them about new events through these hooks,
 * installed by init.c, and never calls them itself.  Either may be NULL.
 */
struct utrace__registry_ops {
	void (*event_added)(const struct utrace_event *ev);
	void (*module_added)(void);
	/* an object's event is about to go (dlclose), registry lock held */
	void (*event_removed)(struct utrace_event *ev);
};

/**
 * utrace__registry_set_ops - install the hooks of the layers above
 * @ops: the hooks, which must outlive the process's use of the registry
 */
void utrace__registry_set_ops(const struct utrace__registry_ops *ops) UTRACE_HIDDEN;

/**
 * utrace__registry_lock - take the registry lock
 *
 * Re-entrant for the thread that holds it: utrace_event_foreach()
 * callbacks may call the other registry functions.
 */
void utrace__registry_lock(void) UTRACE_HIDDEN;

/**
 * utrace__registry_unlock - let go of the registry lock
 */
void utrace__registry_unlock(void) UTRACE_HIDDEN;

/**
 * utrace__registry_add_module - register an object's events
 * @start, @stop:             its "utrace_events" section
 * @evals_start, @evals_stop: its TRACE_DEFINE_ENUM section
 *
 * What utrace_tp_register_module() does once the library has started:
 * ids, formats, UTRACE_EVENTS, then the module_added hook.
 */
void utrace__registry_add_module(struct utrace_event *const *start,
				 struct utrace_event *const *stop,
				 const struct utrace_eval_map *const *evals_start,
				 const struct utrace_eval_map *const *evals_stop) UTRACE_HIDDEN;

/**
 * utrace__registry_add_builtin - register libutrace's own events
 * @start, @stop: the events (marker.c's ftrace system)
 *
 * As utrace__registry_add_module(), but the events can never be switched
 * on (set_event, UTRACE_EVENTS, enable all pass them by) and they are not
 * the main program's.
 */
void utrace__registry_add_builtin(struct utrace_event *const *start,
				  struct utrace_event *const *stop) UTRACE_HIDDEN;

/**
 * utrace__registry_foreach - utrace_event_foreach() for the layers above
 * @fn:  called for each event, in registration order, registry lock held
 * @arg: passed to @fn
 *
 * Return: the first non-zero return of @fn, or 0.
 */
int utrace__registry_foreach(int (*fn)(struct utrace_event *ev, void *arg),
			     void *arg) UTRACE_HIDDEN;

/*
 * The format of a removed event whose records may still be in the
 * buffers (registry.c, "retired"): its system and format text, both
 * malloc()ed; 0, -ENOENT or -ENOMEM.
 */
int utrace__registry_retired_format(uint32_t id, char **system, char **text) UTRACE_HIDDEN;
/* The event of id 'id', or NULL (a hash lookup). */
struct utrace_event *utrace__registry_find_id(uint32_t id) UTRACE_HIDDEN;
/* fn for each removed event's format (registry lock held). */
void utrace__registry_foreach_retired(void (*fn)(uint32_t id, const char *system,
						 const char *name, const char *text,
						 void *arg),
				      void *arg) UTRACE_HIDDEN;

/**
 * utrace__registry_set_event - utrace_set_event() for the layers above
 * @token: one set_event token
 *
 * Return: the number of events it matched, or a negative code.
 */
int utrace__registry_set_event(const char *token) UTRACE_HIDDEN;
/* utrace__registry_set_event() in instance 'inst' (-1: the top level). */
int utrace__registry_set_event_inst(const char *token, int inst) UTRACE_HIDDEN;
/* utrace_event_enable() in instance 'inst' (-1: the top level). */
int utrace__event_enable_inst(struct utrace_event *ev, int inst, bool on) UTRACE_HIDDEN;
/* Hold (on) or let go of the event's probe for a trigger: the kernel's
 * trace_event_enable_disable(file, on, soft_disable=1).  0 or -errno. */
int utrace__event_soft(struct utrace_event *ev, bool on) UTRACE_HIDDEN;
/* A fork child has no instance: see registry.c. */
void utrace__registry_instances_after_fork(void) UTRACE_HIDDEN;
/* Whether the event is on in instance 'inst' (-1: the top level). */
bool utrace__event_on_inst(const struct utrace_event *ev, int inst) UTRACE_HIDDEN;

/**
 * utrace__registry_any_enabled - is any registered event on?
 *
 * Return: true if at least one event is enabled.
 */
bool utrace__registry_any_enabled(void) UTRACE_HIDDEN;

/**
 * utrace__events_spec_set - take the UTRACE_EVENTS value
 * @spec: set_event entries, ',' or white space apart
 *
 * Called once at start; the entries are applied, in order, to each
 * object's events as it registers.  Malformed entries are reported.
 */
void utrace__events_spec_set(const char *spec) UTRACE_HIDDEN;

/**
 * utrace__events_spec_report - report UTRACE_EVENTS entries that matched nothing
 *
 * Once, when the main program's events have registered or at exit.
 */
void utrace__events_spec_report(void) UTRACE_HIDDEN;

/* format.c */

/**
 * utrace__format_text - an event's format file, as the kernel's
 * @ev: a registered event (registry lock held)
 *
 * Return: the text, malloc()ed, or NULL when out of memory.
 */
char *utrace__format_text(const struct utrace_event *ev) UTRACE_HIDDEN;

/**
 * utrace__eval_replace - replace TRACE_DEFINE_ENUM names in a print format
 * @fmt: the print format
 * @start: the object's eval maps
 * @stop: their end
 * @system: the event's system: only its maps apply
 *
 * Return: the new format, malloc()ed, or NULL when out of memory.
 */
char *utrace__eval_replace(const char *fmt,
			   const struct utrace_eval_map *const *start,
			   const struct utrace_eval_map *const *stop,
			   const char *system) UTRACE_HIDDEN;

#endif /* UTRACE_INTERNAL_H */
