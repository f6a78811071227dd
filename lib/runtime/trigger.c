/* SPDX-License-Identifier: MIT */
/*
 * Event triggers (trigger.h): the kernel's trigger file, its commands
 * and their readback, in the rules of trace_events_trigger.c
 * (event_trigger_parse(), event_enable_trigger_parse(), register_trigger())
 * and trace_events_hist.c (hist_register_trigger(): EEXIST, pause, cont,
 * clear; enable_hist and disable_hist, hist_enable_trigger()).
 *
 * An event's triggers are an array published with RCU (st->triggers):
 * every change makes a new array, publishes it, waits for the grace
 * period (utrace__filter_sync(), as for filters) and frees what left.
 * The writer reads the array under the RCU read lock.  A trigger's
 * remaining count, a hist trigger's pause and its table are atomics that
 * the writer reads; `:pause` returns after a grace period, so that the
 * paused table no longer changes; `:clear` puts a new table in and frees
 * the old one after a grace period.  All of this runs on the agent thread, one
 * request at a time, with the registry lock held.  enable_hist and
 * disable_hist store the pause of the target event's hist triggers from
 * the writer, which reads the target's array under the same read lock.
 *
 * Hist triggers with the same `name=` (the kernel's named triggers) share
 * one table, of the first one's fields, whatever event they are on: a
 * struct named, kept while any trigger uses it.  Each still has its own
 * parse (its event's record layout, its filter) and its own pause.
 *
 * An instance has triggers of its own (the kernel's are per trace_event_file):
 * a list per instance (st->itrig[i]), which the writer runs as the top
 * level's, whether or not the event is on there.  What they do acts on
 * their instance: its tracing_on, the target's enable there, its buffer's
 * stack and snapshot, the target's hist triggers there; the variables a
 * hist trigger reads are those of its instance's triggers.  ftrace's
 * print (trace_marker) has triggers too, which the marker runs on its
 * record (marker.c, utrace__triggers_run_in()): they hold no probe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hist.h"
#include "instance.h"
#include "internal.h"
#include "marker.h"
#include "record.h"
#include "symbols.h"
#include "stacks.h"
#include "synth.h"
#include "trigger.h"
#include "writer.h"

enum trig_kind {
	TK_HIST,
	TK_TRACEON,
	TK_TRACEOFF,
	TK_STACKTRACE,
	TK_ENABLE,
	TK_DISABLE,
	TK_SNAPSHOT,
	TK_ENABLE_HIST,
	TK_DISABLE_HIST,
};

/* The kernel's event_trigger_type: two triggers of one type on one event
 * (and one target) are refused (register_trigger(),
 * event_enable_register_trigger()), enable and disable counting as one
 * (ETT_EVENT_ENABLE, ETT_HIST_ENABLE). */
static const int kind_type[] = { 0, 1, 1, 3, 2, 2, 4, 5, 5 };

static const char *const kind_name[] = {
	"hist", "traceon", "traceoff", "stacktrace", "enable_event", "disable_event", "snapshot",
	"enable_hist", "disable_hist",
};

/* The commands of event_enable_trigger_parse(): SYS:EVENT[:N]. */
static bool has_target(enum trig_kind kind)
{
	return kind == TK_ENABLE || kind == TK_DISABLE || kind == TK_ENABLE_HIST ||
	       kind == TK_DISABLE_HIST;
}

/* The table of the hist triggers named alike (find_named_trigger()). */
struct named {
	struct named *next;
	struct utrace__hist *h;          /* the first trigger's: the table's */
	struct utrace__hist_map *map;    /* (atomic: :clear replaces it) */
	unsigned int refs;               /* triggers using it */
};

static struct named *named_list;

struct trig {
	enum trig_kind kind;
	long count;                      /* left; -1: unlimited (atomic) */
	char *filter_str;                /* after "if ", or NULL */
	struct utrace__filter *filter;
	struct utrace_event *target;     /* enable/disable_event, enable/disable_hist */
	struct utrace__hist *h;          /* hist */
	struct utrace__hist_map *map;    /* (atomic: :clear replaces it) */
	struct utrace__hist_map **mapp;  /* &map, or &sh->map */
	struct named *sh;                /* name=: the shared table, or NULL */
	int inst;                        /* its instance, -1: the top level */
	int paused;                      /* (atomic) */
	struct utrace__stack_skip *skip; /* stacktrace: the frames left out */
	/* hist: the triggers whose variables h->refs name, and how many
	 * triggers name this one's (it cannot go while any does) */
	struct trig *ref_owner[UTRACE__HIST_REFS_MAX];
	unsigned int users;
};

struct utrace__trig_list {
	unsigned int nr;
	struct trig *t[];
};

/* Triggers in the process: UTRACE_TRACING_TRIGGERS is set while any. */
static unsigned int nr_triggers;

static bool is_post(const struct trig *t)
{
	return t->kind != TK_HIST && t->filter;
}

/* Take one from a trigger's count: false when none is left. */
static bool take_count(struct trig *t)
{
	long c = __atomic_load_n(&t->count, __ATOMIC_RELAXED);

	do {
		if (c == 0)
			return false;
		if (c < 0)
			return true;
	} while (!__atomic_compare_exchange_n(&t->count, &c, c - 1, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

/* The event's list in instance 'inst' (-1: the top level), or NULL. */
static struct utrace__trig_list *list_of(const struct utrace__event_state *st, int inst)
{
	const struct utrace__inst_trig *it;

	if (!st)
		return NULL;
	if (inst < 0)
		return __atomic_load_n(&st->triggers, __ATOMIC_ACQUIRE);
	it = __atomic_load_n(&st->itrig, __ATOMIC_ACQUIRE);
	return it ? __atomic_load_n(&it[inst].triggers, __ATOMIC_ACQUIRE) : NULL;
}

/*
 * hist_enable_trigger(): pause or run every hist trigger of the target
 * in the instance.  Its list is read as the writer reads an event's own,
 * under the RCU read lock that utrace__triggers_run() holds: a hist
 * trigger removed from it meanwhile is freed only after the grace period
 * (publish()).
 */
static void hist_switch(struct utrace_event *target, int inst, int paused)
{
	const struct utrace__trig_list *tl = list_of(target->priv, inst);
	unsigned int i;

	for (i = 0; tl && i < tl->nr; i++)
		if (tl->t[i]->kind == TK_HIST)
			__atomic_store_n(&tl->t[i]->paused, paused, __ATOMIC_RELAXED);
}

/* traceon, traceoff in an instance: its tracing_on. */
static void inst_tracing(struct trig *t, bool on)
{
	int *off = &utrace__inst[t->inst].tracing_off;

	if (!__atomic_load_n(off, __ATOMIC_RELAXED) == on || !take_count(t))
		return;
	__atomic_store_n(off, !on, __ATOMIC_RELEASE);
}

/* enable_event, disable_event in an instance: the target's bit there. */
static void inst_enable(struct trig *t, struct utrace__event_state *ts, bool on)
{
	uint32_t bit = 1u << t->inst;

	if (((__atomic_load_n(&ts->inst_on, __ATOMIC_RELAXED) & bit) != 0) == on ||
	    !take_count(t))
		return;
	if (on)
		__atomic_fetch_or(&ts->inst_on, bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&ts->inst_on, ~bit, __ATOMIC_RELAXED);
}

static void (*snapshot_fn)(int inst);

void utrace__triggers_set_snapshot(void (*fn)(int inst))
{
	__atomic_store_n(&snapshot_fn, fn, __ATOMIC_RELEASE);
}

/* The snapshot trigger: the agent copies the buffer, out of the writer's
 * path (async-signal-safe). */
static void snapshot(int inst)
{
	void (*fn)(int) = __atomic_load_n(&snapshot_fn, __ATOMIC_ACQUIRE);

	if (fn)
		fn(inst);
}

static void fire(struct trig *t)
{
	int off = __atomic_load_n(&utrace__tracing_off, __ATOMIC_RELAXED), saved;
	struct utrace__event_state *ts;
	bool want;

	if (t->inst >= 0 && (t->kind == TK_TRACEON || t->kind == TK_TRACEOFF)) {
		inst_tracing(t, t->kind == TK_TRACEON);
		return;
	}
	switch (t->kind) {
	case TK_TRACEON:        /* traceon_count_trigger() */
		if (!(off & UTRACE_TRACING_OFF) || !take_count(t))
			return;
		__atomic_fetch_and(&utrace__tracing_off, ~UTRACE_TRACING_OFF, __ATOMIC_RELEASE);
		/* the inlined writer's path follows tracing_off (lock-free,
		 * also from a signal handler's event) */
		utrace__fast_update();
		return;
	case TK_TRACEOFF:
		if ((off & UTRACE_TRACING_OFF) || !take_count(t))
			return;
		__atomic_fetch_or(&utrace__tracing_off, UTRACE_TRACING_OFF, __ATOMIC_RELEASE);
		utrace__fast_update();
		return;
	case TK_ENABLE:         /* event_enable_count_trigger() */
	case TK_DISABLE:
		/* the target's probe is held (soft mode): switching it is
		 * the flag alone */
		ts = t->target->priv;
		want = t->kind == TK_ENABLE;
		if (ts && t->inst >= 0) {
			inst_enable(t, ts, want);
			return;
		}
		if (!ts || __atomic_load_n(&ts->enabled, __ATOMIC_RELAXED) == want ||
		    !take_count(t))
			return;
		__atomic_store_n(&ts->enabled, want, __ATOMIC_RELAXED);
		return;
	case TK_STACKTRACE:     /* stacktrace_count_trigger(): into the */
		if (!take_count(t))     /* trigger's buffer */
			return;
		saved = utrace__marker_inst;
		utrace__marker_inst = t->inst;
		utrace__user_stack_record(t->skip);
		utrace__marker_inst = saved;
		return;
	case TK_SNAPSHOT:       /* snapshot_count_trigger(): the agent copies */
		if (take_count(t))
			snapshot(t->inst);
		return;
	case TK_ENABLE_HIST:    /* hist_enable_count_trigger(): unlike */
	case TK_DISABLE_HIST:   /* enable_event, each firing counts */
		if (take_count(t))
			hist_switch(t->target, t->inst, t->kind == TK_DISABLE_HIST);
		return;
	case TK_HIST:
		return;
	}
}

/* A hist trigger with variables or an action: the tables of the triggers
 * it reads variables of, then its action's synthetic event. */
static void hist_vars(const struct trig *t, const void *rec, uint32_t size,
		      const struct utrace__hist_ctx *hc)
{
	struct utrace__hist_map *maps[UTRACE__HIST_REFS_MAX];
	struct utrace__hist_fire fire;
	unsigned int i;
	int r;

	for (i = 0; i < t->h->nr_refs; i++)
		maps[i] = __atomic_load_n(t->ref_owner[i]->mapp, __ATOMIC_ACQUIRE);
	r = utrace__hist_add_vars(__atomic_load_n(t->mapp, __ATOMIC_ACQUIRE), t->h, rec, size,
				  hc, maps, &fire);
	if (r > 0 && (r & 1))
		utrace__synth_fire(t->h->action->target, fire.params[0]);
	if (r > 0 && (r & 2))
		utrace__synth_fire(t->h->track->target, fire.params[1]);
	if (r > 0 && (r & 4))
		snapshot(t->inst);
}

/* The triggers of one list: those of 'pass' (0: before the commit, 1:
 * after it, 2: both). */
static void run_list(const struct utrace__trig_list *tl, const void *rec, uint32_t size,
		     const struct utrace__filter_ctx *fc, int pass)
{
	unsigned int i;

	for (i = 0; tl && i < tl->nr; i++) {
		struct trig *t = tl->t[i];

		if (pass != 2 && is_post(t) != pass)
			continue;
		if (t->kind == TK_HIST) {
			struct utrace__hist_ctx hc = { 0, fc->cpu, fc->comm, NULL, NULL, 0 };
			uintptr_t ips[UTRACE__HIST_STACK_DEPTH];

			if (__atomic_load_n(&t->paused, __ATOMIC_RELAXED))
				continue;
			if (t->h->timestamps)
				hc.time = utrace__mono_ns();
			if (t->h->stacks) {
				/* keys=stacktrace: the stack of the code that
				 * fired the event (from .eh_frame when libunwind
				 * is there, else by frame pointers) */
				hc.nr_stack = utrace__stack_walk(ips, UTRACE__HIST_STACK_DEPTH,
								 UTRACE_HAVE_UNWINDER, 65536);
				hc.stack = (const uint64_t *)ips;
			}
			if (t->h->nr_vars || t->h->nr_refs || t->h->action || t->h->track)
				hist_vars(t, rec, size, &hc);
			else
				utrace__hist_add(__atomic_load_n(t->mapp, __ATOMIC_ACQUIRE), t->h,
						 rec, size, &hc);
			continue;
		}
		if (t->filter && !utrace__filter_match(t->filter, rec, size, fc))
			continue;
		fire(t);
	}
}

void utrace__triggers_run(struct utrace_event *ev, const void *rec, uint32_t size,
			  const struct utrace__filter_ctx *fc, bool post)
{
	const struct utrace__event_state *st = ev->priv;
	const struct utrace__inst_trig *it;
	unsigned int i;

	utrace_tp_read_lock();
	run_list(__atomic_load_n(&st->triggers, __ATOMIC_ACQUIRE), rec, size, fc, post);
	it = __atomic_load_n(&st->itrig, __ATOMIC_ACQUIRE);
	for (i = 0; it && i < UTRACE_INSTANCES_MAX; i++)
		run_list(__atomic_load_n(&it[i].triggers, __ATOMIC_ACQUIRE), rec, size, fc, post);
	utrace_tp_read_unlock();
}

void utrace__triggers_run_in(struct utrace_event *ev, int inst, const void *rec, uint32_t size,
			     const struct utrace__filter_ctx *fc)
{
	utrace_tp_read_lock();
	run_list(list_of(ev->priv, inst), rec, size, fc, 2);
	utrace_tp_read_unlock();
}

bool utrace__triggers_any_in(const struct utrace_event *ev, int inst)
{
	return list_of(ev->priv, inst) != NULL;
}

unsigned int utrace__trigger_soft(const struct utrace__event_state *st, int inst)
{
	unsigned int n = st->soft, i;

	if (inst >= 0)
		return st->itrig ? st->itrig[inst].soft : 0;
	for (i = 0; st->itrig && i < UTRACE_INSTANCES_MAX; i++)
		n -= st->itrig[i].soft;
	return n;
}

/* --- the agent's side --- */

/* One trigger less on a shared table: the last one frees it. */
static void named_put(struct named *sh)
{
	struct named **pp;

	if (--sh->refs)
		return;
	for (pp = &named_list; *pp; pp = &(*pp)->next)
		if (*pp == sh) {
			*pp = sh->next;
			break;
		}
	utrace__hist_map_free(sh->map);
	utrace__hist_free(sh->h);
	free(sh);
}

static void trig_free(struct trig *t)
{
	if (!t)
		return;
	utrace__hist_map_free(t->map);
	if (t->sh) {
		if (t->h != t->sh->h)
			utrace__hist_free(t->h);
		named_put(t->sh);
	} else {
		utrace__hist_free(t->h);
	}
	utrace__filter_free(t->filter);
	free(t->filter_str);
	free(t->skip);
	free(t);
}

/* The instances' lists of the event, made with the first (NULL without
 * memory). */
static struct utrace__inst_trig *itrig_of(struct utrace__event_state *st)
{
	if (!st->itrig) {
		struct utrace__inst_trig *a = calloc(UTRACE_INSTANCES_MAX, sizeof(*a));

		if (!a)
			return NULL;
		__atomic_store_n(&st->itrig, a, __ATOMIC_RELEASE);
	}
	return st->itrig;
}

/* Where the event's list of instance 'inst' is kept (made when 'make'). */
static struct utrace__trig_list **list_slot(struct utrace__event_state *st, int inst, bool make)
{
	if (inst < 0)
		return &st->triggers;
	if (!st->itrig && (!make || !itrig_of(st)))
		return NULL;
	return &st->itrig[inst].triggers;
}

/*
 * Publish 'nl' as the event's list in the instance (NULL: none) and,
 * once no writer can see the old one, free the old array and the
 * triggers in 'gone'.  A thread stuck inside an event for too long: kept
 * (a small leak).
 */
static void publish(struct utrace_event *ev, int inst, struct utrace__trig_list *nl,
		    struct trig *gone)
{
	struct utrace__trig_list **slot = list_slot(ev->priv, inst, false);
	struct utrace__trig_list *old = *slot;

	__atomic_store_n(slot, nl, __ATOMIC_RELEASE);
	if (!utrace__filter_sync())
		return;
	free(old);
	trig_free(gone);
}

/* The list with 't' added (hist at the end, the others in front, as the
 * kernel's list_add_tail_rcu() and list_add_rcu()), or without entry 'drop'
 * (t NULL). */
static struct utrace__trig_list *list_with(const struct utrace__trig_list *tl, struct trig *t,
					   unsigned int drop)
{
	unsigned int n = tl ? tl->nr : 0, i, j = 0;
	struct utrace__trig_list *nl = malloc(sizeof(*nl) + (n + 1) * sizeof(nl->t[0]));

	if (!nl)
		return NULL;
	if (t && t->kind != TK_HIST)
		nl->t[j++] = t;
	for (i = 0; i < n; i++)
		if (t || i != drop)
			nl->t[j++] = tl->t[i];
	if (t && t->kind == TK_HIST)
		nl->t[j++] = t;
	nl->nr = j;
	return nl;
}

static void count_changed(int by)
{
	nr_triggers += (unsigned int)by;
	if (nr_triggers)
		__atomic_fetch_or(&utrace__tracing_off, UTRACE_TRACING_TRIGGERS, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&utrace__tracing_off, ~UTRACE_TRACING_TRIGGERS,
				   __ATOMIC_RELEASE);
	/* events of a process with triggers take the library's path */
	utrace__fast_update();
}

/*
 * Hold (on) or let go of the event's probe for a trigger of instance
 * 'inst', counted in its soft mode there.  ftrace's print has no probe
 * (the marker runs its triggers).  0 or -errno.
 */
static int hold(struct utrace_event *ev, int inst, bool on)
{
	struct utrace__event_state *st = ev->priv;
	int r;

	if (st->ignore_enable)
		return 0;
	if (inst >= 0 && !itrig_of(st))
		return -ENOMEM;
	r = utrace__event_soft(ev, on);
	if (r == 0 && inst >= 0)
		__atomic_store_n(&st->itrig[inst].soft, st->itrig[inst].soft + (on ? 1u : -1u),
				 __ATOMIC_RELAXED);
	return r;
}

/* Add t to the event's list of its instance: its probe (and a target's)
 * held while it lives. */
static int install(struct utrace_event *ev, struct trig *t)
{
	struct utrace__trig_list **slot = list_slot(ev->priv, t->inst, true);
	struct utrace__trig_list *nl = slot ? list_with(*slot, t, 0) : NULL;
	int r;

	if (t->kind == TK_HIST && t->h && t->h->stacks)
		utrace__stacks_skip_init();
	if (!nl)
		return -ENOMEM;
	if (t->target) {
		r = hold(t->target, t->inst, true);
		if (r < 0) {
			free(nl);
			return r;
		}
	}
	/* the slow path first, then the probe: never recorded while off */
	count_changed(1);
	r = hold(ev, t->inst, true);
	if (r < 0) {
		count_changed(-1);
		if (t->target)
			hold(t->target, t->inst, false);
		free(nl);
		return r;
	}
	publish(ev, t->inst, nl, NULL);
	return 0;
}

/* Remove entry i of the event's list in instance 'inst'. */
static int uninstall(struct utrace_event *ev, int inst, unsigned int i)
{
	const struct utrace__trig_list *tl = list_of(ev->priv, inst);
	struct trig *t = tl->t[i];
	struct utrace__trig_list *nl = NULL;
	struct utrace_event *target = t->target;
	unsigned int k;

	if (t->users)
		return -EBUSY;   /* hist_trigger_check_refs() */
	for (k = 0; t->h && k < t->h->nr_refs; k++)
		t->ref_owner[k]->users--;
	if (tl->nr > 1) {
		nl = list_with(tl, NULL, i);
		if (!nl)
			return -ENOMEM;
	}
	publish(ev, inst, nl, t);
	/* no writer runs it any more: let go of the probes */
	hold(ev, inst, false);
	if (target)
		hold(target, inst, false);
	count_changed(-1);
	return 0;
}

/* Every list of the event: the top level's (-1), then the instances'. */
#define FOR_EACH_LIST(k) for (int k = -1; k < UTRACE_INSTANCES_MAX; k++)

/* Has the event no trigger list at all (the common case)? */
static bool no_lists(const struct utrace__event_state *st)
{
	return !st || (!__atomic_load_n(&st->triggers, __ATOMIC_ACQUIRE) &&
		       !__atomic_load_n(&st->itrig, __ATOMIC_ACQUIRE));
}

static int gone_cb(struct utrace_event *ev, void *arg)
{
	const struct utrace__trig_list *tl;
	unsigned int i;

	if (no_lists(ev->priv))
		return 0;

	FOR_EACH_LIST(k)
		for (i = (tl = list_of(ev->priv, k)) ? tl->nr : 0; i-- > 0;) {
			tl = list_of(ev->priv, k);
			if (ev == arg || tl->t[i]->target == arg)
				uninstall(ev, k, i);
		}
	return 0;
}

/* Does t read a variable of a trigger of the event 'gone'? */
static bool reads_from(const struct trig *t, const struct utrace_event *gone)
{
	const struct utrace__trig_list *gl = list_of(gone->priv, t->inst);
	unsigned int k, j;

	/* (variables are read within an instance) */
	for (k = 0; t->kind == TK_HIST && k < t->h->nr_refs; k++)
		for (j = 0; gl && j < gl->nr; j++)
			if (t->ref_owner[k] == gl->t[j])
				return true;
	return false;
}

/* The triggers of other events that read the going event's variables go
 * first, so that its own are no longer in use. */
static int readers_gone_cb(struct utrace_event *ev, void *arg)
{
	const struct utrace__trig_list *tl;
	unsigned int i;

	if (no_lists(ev->priv))
		return 0;

	FOR_EACH_LIST(k)
		for (i = ev != arg && (tl = list_of(ev->priv, k)) ? tl->nr : 0; i-- > 0;) {
			tl = list_of(ev->priv, k);
			if (reads_from(tl->t[i], arg))
				uninstall(ev, k, i);
		}
	return 0;
}

void utrace__triggers_event_gone(struct utrace_event *ev)
{
	/* (a module's events go one by one, at exit too: with no trigger in
	 * the process, walking every event for each would be quadratic) */
	if (!nr_triggers)
		return;
	utrace__registry_foreach(readers_gone_cb, ev);
	utrace__registry_foreach(gone_cb, ev);
}

struct inst_gone {
	int inst;
	unsigned int removed, left;
};

/* An instance's triggers that no other trigger reads. */
static int inst_gone_cb(struct utrace_event *ev, void *arg)
{
	struct inst_gone *a = arg;
	const struct utrace__trig_list *tl;
	unsigned int i;

	for (i = (tl = list_of(ev->priv, a->inst)) ? tl->nr : 0; i-- > 0;) {
		tl = list_of(ev->priv, a->inst);
		if (uninstall(ev, a->inst, i) == 0)
			a->removed++;
		else
			a->left++;
	}
	return 0;
}

void utrace__triggers_inst_gone(int inst)
{
	struct inst_gone a = { inst, 0, 0 };

	/* the readers of variables first: each round removes those that
	 * nothing reads, until none is left or nothing moved */
	do {
		a.removed = a.left = 0;
		utrace__registry_foreach(inst_gone_cb, &a);
	} while (a.left && a.removed);
}

static char *strip(const char *in, size_t len)
{
	size_t b = 0;
	char *s;

	while (b < len && strchr(" \t\n\r\f\v", in[b]))
		b++;
	while (len > b && strchr(" \t\n\r\f\v", in[len - 1]))
		len--;
	s = malloc(len - b + 1);
	if (!s)
		return NULL;
	memcpy(s, in + b, len - b);
	s[len - b] = 0;
	return s;
}

static char *skip_spaces(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	return s;
}

/* --- hist --- */

static int hist_refused(struct utrace_event *ev, const char *text, int err, const char *msg,
			const char *at, char **log)
{
	struct utrace__hist_error e = { .err = err, .logged = true };

	e.pos = utrace__hist_errpos(text, at);
	snprintf(e.msg, sizeof(e.msg), "%s", msg);
	*log = utrace__hist_error_text(ev->cls->system, ev->name, text, &e);
	return err;
}

/* --- what the parser asks: other triggers' variables, events, synthetic events --- */

struct var_find {
	int inst;                       /* the instance whose triggers */
	const char *system, *event;     /* NULL: any event's */
	const char *name;
	struct trig *owner;
	unsigned int idx;
	const struct utrace__hist_var *var;
};

static int var_cb(struct utrace_event *ev, void *arg)
{
	struct var_find *a = arg;
	const struct utrace__trig_list *tl = list_of(ev->priv, a->inst);
	unsigned int i, j;

	if (a->system && (strcmp(a->system, ev->cls->system) || strcmp(a->event, ev->name)))
		return 0;
	for (i = 0; tl && i < tl->nr; i++) {
		struct trig *t = tl->t[i];

		for (j = 0; t->kind == TK_HIST && j < t->h->nr_vars; j++)
			if (!strcmp(t->h->vars[j].name, a->name)) {
				a->owner = t;
				a->idx = j;
				a->var = &t->h->vars[j];
				return 1;
			}
	}
	return 0;
}

static int env_find_var(void *arg, const char *system, const char *event, const char *name,
			const void **owner, unsigned int *idx, const struct utrace__hist_var **var)
{
	struct var_find a = { *(const int *)arg, system, event, name, NULL, 0, NULL };

	utrace__registry_foreach(var_cb, &a);
	if (!a.owner)
		return -ENOENT;
	*owner = a.owner;
	*idx = a.idx;
	*var = a.var;
	return 0;
}

static bool env_find_event(void *arg, const char *system, const char *event);

static void *env_get_synth(void *arg, const char *name, const struct utrace_event_field **f,
			   unsigned int *nr)
{
	struct utrace__synth *s = utrace__synth_get(name);

	(void)arg;
	if (s)
		*f = utrace__synth_fields(s, nr);
	return s;
}

static void env_put_synth(void *arg, void *s)
{
	(void)arg;
	utrace__synth_put(s);
}

/* The parser's questions for a trigger of instance 'inst' (-1: the top
 * level); a trigger keeps it as long as it lives. */
static const struct utrace__hist_env *env_of(int inst)
{
	static struct utrace__hist_env envs[1 + UTRACE_INSTANCES_MAX];
	static int insts[1 + UTRACE_INSTANCES_MAX];
	struct utrace__hist_env *e = &envs[inst + 1];

	/* (the agent thread's, under the registry lock) */
	if (!e->find_var) {
		insts[inst + 1] = inst;
		*e = (struct utrace__hist_env){ &insts[inst + 1], env_find_var, env_get_synth,
						env_put_synth, env_find_event };
	}
	return e;
}

static struct named *named_find(const char *name)
{
	struct named *sh;

	for (sh = named_list; sh; sh = sh->next)
		if (!strcmp(sh->h->name, name))
			return sh;
	return NULL;
}

struct unpause {
	const struct named *sh;
};

/* hist_clear()'s unpause_named_trigger(): every trigger of the name runs. */
static int unpause_cb(struct utrace_event *ev, void *arg)
{
	const struct unpause *a = arg;
	const struct utrace__trig_list *tl;
	unsigned int i;

	FOR_EACH_LIST(k)
		for (i = 0, tl = list_of(ev->priv, k); tl && i < tl->nr; i++)
			if (tl->t[i]->sh == a->sh)
				__atomic_store_n(&tl->t[i]->paused, 0, __ATOMIC_RELAXED);
	return 0;
}

/* hist_trigger_match(): o is the trigger h names.  A named one only
 * matches a trigger sharing its table, an unnamed one an unnamed one. */
static bool hist_match(const struct trig *o, const struct utrace__hist *h,
		       const struct named *sh)
{
	return o->kind == TK_HIST && o->sh == sh && utrace__hist_same(o->h, h);
}

/* :pause, :cont, :clear on the trigger o (hist_register_trigger()). */
static int hist_update(struct trig *o, const struct utrace__hist *h)
{
	struct utrace__hist_map *m, *old;

	if (h->pause) {
		/* and once no writer that saw it running is still
		 * adding: the table stands still when the write
		 * returns (the hist file's Hits is then the sum of
		 * its entries' hitcounts) */
		__atomic_store_n(&o->paused, 1, __ATOMIC_RELAXED);
		utrace__filter_sync();
	} else if (h->cont) {
		__atomic_store_n(&o->paused, 0, __ATOMIC_RELAXED);
	}
	if (!h->clear)
		return 0;
	/* a new table; the old one once no writer adds to it (a shared
	 * one: for every trigger of the name, which all run afterwards, as
	 * the kernel's hist_clear() leaves them) */
	m = utrace__hist_map_new(o->sh ? o->sh->h : o->h);
	if (!m)
		return -ENOMEM;
	old = *o->mapp;
	__atomic_store_n(o->mapp, m, __ATOMIC_RELEASE);
	if (o->sh) {
		struct unpause a = { o->sh };

		utrace__registry_foreach(unpause_cb, &a);
	}
	if (utrace__filter_sync())
		utrace__hist_map_free(old);
	return 0;
}

static int hist_write(struct utrace_event *ev, int inst, const char *text, bool remove,
		      char **log)
{
	struct utrace__event_state *st = ev->priv;
	const struct utrace__trig_list *tl = list_of(st, inst);
	struct utrace__hist_error err;
	struct utrace__hist *h;
	struct named *sh = NULL;
	struct trig *t;
	unsigned int i;
	int r;

	r = utrace__hist_parse_env(text, st->fields, st->nr_fields, env_of(inst), &h, &err);
	if (r < 0) {
		*log = utrace__hist_error_text(ev->cls->system, ev->name, text, &err);
		utrace__hist_error_fini(&err);
		return r;
	}
	if (h->name) {
		sh = named_find(h->name);
		if (sh && !remove && !utrace__hist_compatible(sh->h, h)) {
			r = hist_refused(ev, text, -EINVAL,
					 "Named hist trigger doesn't match existing named trigger "
					 "(includes variables)", h->name, log);
			utrace__hist_free(h);
			return r;
		}
	}
	/* a name that no trigger has yet: a new table (no EEXIST) */
	for (i = 0; tl && (!h->name || sh || remove) && i < tl->nr; i++) {
		struct trig *o = tl->t[i];

		if (!hist_match(o, h, sh))
			continue;
		if (remove)
			r = uninstall(ev, inst, i);
		else if (!h->pause && !h->cont && !h->clear)
			r = hist_refused(ev, text, -EEXIST, "Hist trigger already exists", NULL, log);
		else
			r = hist_update(o, h);
		utrace__hist_free(h);
		return r;
	}
	if (remove) {
		utrace__hist_free(h);
		return 0;
	}
	if (h->cont || h->clear) {
		utrace__hist_free(h);
		return hist_refused(ev, text, -ENOENT,
				    "Can't clear or continue a nonexistent hist trigger", NULL, log);
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		utrace__hist_free(h);
		return -ENOMEM;
	}
	t->kind = TK_HIST;
	t->count = -1;
	t->inst = inst;
	t->h = h;
	t->paused = h->pause;
	t->mapp = &t->map;
	if (sh) {
		/* the shared table's size */
		h->bits = sh->h->bits;
		sh->refs++;
		t->sh = sh;
		t->mapp = &sh->map;
	} else if (h->name) {
		sh = calloc(1, sizeof(*sh));
		if (!sh) {
			trig_free(t);
			return -ENOMEM;
		}
		sh->h = h;
		sh->refs = 1;
		sh->next = named_list;
		named_list = sh;
		t->sh = sh;
		t->mapp = &sh->map;
		sh->map = utrace__hist_map_new(h);
	} else {
		t->map = utrace__hist_map_new(h);
	}
	if (!*t->mapp) {
		trig_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < h->nr_refs; i++)
		t->ref_owner[i] = (struct trig *)h->refs[i].owner;
	r = install(ev, t);
	if (r < 0) {
		trig_free(t);
		return r;
	}
	for (i = 0; i < h->nr_refs; i++)
		t->ref_owner[i]->users++;
	return 0;
}

/* --- traceon, traceoff, enable_event, disable_event --- */

/* event_trigger_separate_filter(): "N if ..." or "if ..." or "N". */
static int separate_filter(char *pf, char **param, char **filter, bool param_required)
{
	*param = NULL;
	*filter = NULL;
	if (!pf)
		return param_required ? -EINVAL : 0;
	if (!param_required && !(*pf >= '0' && *pf <= '9')) {
		*filter = pf;
		return 0;
	}
	*param = pf;
	pf += strcspn(pf, " \t");
	if (*pf) {
		*pf++ = 0;
		*filter = skip_spaces(pf);
		if (!**filter)
			*filter = NULL;
	}
	return 0;
}

/* kstrtoul(number, 0, &count) of event_trigger_parse_num(). */
static int parse_num(char *param, long *count)
{
	char *num, *end;
	unsigned long long v;

	*count = -1;
	if (!param)
		return 0;
	num = param;
	param = strchr(param, ':');
	if (param)
		*param = 0;
	if (!*num)
		return -EINVAL;
	errno = 0;
	v = strtoull(num, &end, 0);
	if (errno || *end || *num == '-' || *num == '+' || v > (unsigned long long)(~0UL >> 1))
		return -EINVAL;
	*count = (long)v;
	return 0;
}

/* set_trigger_filter(): "if EXPR", compiled against the event. */
static int set_filter(struct utrace_event *ev, char *filter, struct trig *t, char **log)
{
	struct utrace__event_state *st = ev->priv;
	struct utrace__filter_error fe;
	char *s;
	int r;

	if (!filter)
		return 0;
	s = filter;
	filter += strcspn(filter, " \t");
	if (*filter)
		*filter++ = 0;
	else
		filter = NULL;
	if (strcmp(s, "if") || !filter)
		return -EINVAL;
	r = utrace__filter_compile(filter, st->fields, st->nr_fields, &t->filter, &fe);
	if (r < 0) {
		*log = utrace__filter_log_text(filter, &fe);
		return r;
	}
	t->filter_str = strdup(filter);
	return t->filter_str ? 0 : -ENOMEM;
}

struct find_ev {
	const char *system, *name;
	struct utrace_event *ev;
};

static int find_cb(struct utrace_event *ev, void *arg)
{
	struct find_ev *a = arg;

	if (strcmp(ev->cls->system, a->system) || strcmp(ev->name, a->name))
		return 0;
	a->ev = ev;
	return 1;
}

static int cmd_write(struct utrace_event *ev, int inst, enum trig_kind kind, char *param,
		     bool remove, char **log)
{
	const struct utrace__trig_list *tl = list_of(ev->priv, inst);
	struct trig *t;
	char *p = NULL, *filter = NULL;
	unsigned int i;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->kind = kind;
	t->inst = inst;
	if (has_target(kind)) {
		/* event_enable_trigger_parse(): SYS:EVENT[:N] */
		struct find_ev fa = { 0 };
		char *sys, *evn;

		r = separate_filter(param, &p, &filter, true);
		if (r < 0)
			goto out;
		r = -EINVAL;
		sys = p;
		p = strchr(p, ':');
		if (!p)
			goto out;
		*p++ = 0;
		evn = p;
		p = strchr(p, ':');
		if (p)
			*p++ = 0;
		fa.system = sys;
		fa.name = evn;
		utrace__registry_foreach(find_cb, &fa);
		if (!fa.ev || ((struct utrace__event_state *)fa.ev->priv)->ignore_enable)
			goto out;
		t->target = fa.ev;
	} else {
		r = separate_filter(param, &p, &filter, false);
		if (r < 0)
			goto out;
	}
	/* as register_trigger() / event_enable_register_trigger() */
	for (i = 0; tl && i < tl->nr; i++) {
		struct trig *o = tl->t[i];

		if (kind_type[o->kind] == kind_type[kind] && o->target == t->target)
			break;
	}
	if (remove) {
		r = tl && i < tl->nr ? uninstall(ev, inst, i) : 0;
		goto out;
	}
	r = parse_num(p, &t->count);
	if (r == 0)
		r = set_filter(ev, filter, t, log);
	if (r < 0)
		goto out;
	if (tl && i < tl->nr) {
		r = -EEXIST;
		goto out;
	}
	if (kind == TK_STACKTRACE) {
		if (!utrace__user_stack_register()) {
			/* no libunwind: as a kernel without the command */
			r = -EINVAL;
			goto out;
		}
		/* the frames the stack leaves out: libutrace's, the event's
		 * probe and iterator */
		t->skip = calloc(1, sizeof(*t->skip));
		if (!t->skip) {
			r = -ENOMEM;
			goto out;
		}
		utrace__stack_skip_of((uintptr_t)ev->cls->probe, t->skip);
	}
	if (kind == TK_ENABLE || kind == TK_DISABLE || kind == TK_TRACEON || kind == TK_STACKTRACE ||
	    kind == TK_SNAPSHOT) {
		/* what they switch on records into the pool */
		r = utrace__pool_ensure();
		if (r < 0)
			goto out;
	}
	r = install(ev, t);
	if (r == 0)
		return 0;
out:
	trig_free(t);
	return r;
}

static bool env_find_event(void *arg, const char *system, const char *event)
{
	struct find_ev fa = { system, event, NULL };

	(void)arg;
	utrace__registry_foreach(find_cb, &fa);
	return fa.ev != NULL;
}

int utrace__trigger_write(struct utrace_event *ev, int inst, const char *text, size_t len,
			  char **log)
{
	char *buf = strip(text, len), *cmd, *next;
	bool remove;
	unsigned int k;
	int r = -EINVAL;

	*log = NULL;
	if (!buf)
		return -ENOMEM;
	if (!*buf) {
		free(buf);
		return 0;
	}
	/* trigger_process_regex() */
	remove = buf[0] == '!';
	cmd = buf + remove;
	if (!strncmp(cmd, "hist", 4) && (!cmd[4] || strchr(": \t", cmd[4]))) {
		r = hist_write(ev, inst, cmd, remove, log);
		free(buf);
		return r;
	}
	next = cmd + strcspn(cmd, ": \t");
	if (*next) {
		*next++ = 0;
		next = skip_spaces(next);
		if (!*next)
			next = NULL;
	} else {
		next = NULL;
	}
	for (k = TK_TRACEON; k <= TK_DISABLE_HIST; k++)
		if (!strcmp(cmd, kind_name[k]))
			break;
	if (k <= TK_DISABLE_HIST)
		r = cmd_write(ev, inst, (enum trig_kind)k, next, remove, log);
	free(buf);
	return r;
}

void utrace__trigger_truncate(struct utrace_event *ev, int inst)
{
	const struct utrace__trig_list *tl = list_of(ev->priv, inst);
	bool read = false;
	unsigned int i;

	/* the unreg_all() of hist, enable_hist and disable_hist
	 * (hist_unreg_all(), hist_enable_unreg_all()); the hist triggers
	 * stay, all of them, while another trigger reads a variable of one
	 * (hist_file_check_refs()) */
	for (i = 0; tl && i < tl->nr; i++)
		read |= tl->t[i]->kind == TK_HIST && tl->t[i]->users;
	for (i = tl ? tl->nr : 0; i-- > 0;) {
		tl = list_of(ev->priv, inst);
		if ((tl->t[i]->kind == TK_HIST && !read) ||
		    kind_type[tl->t[i]->kind] == kind_type[TK_ENABLE_HIST])
			uninstall(ev, inst, i);
	}
}

/* event_trigger_print(), event_enable_trigger_print(). */
static int print_trig(FILE *f, const struct trig *t)
{
	long c = __atomic_load_n(&t->count, __ATOMIC_RELAXED);
	char *info;

	if (t->kind == TK_HIST) {
		info = utrace__hist_info(t->h, __atomic_load_n(&t->paused, __ATOMIC_RELAXED));
		if (!info)
			return -ENOMEM;
		fputs(info, f);
		free(info);
		return 0;
	}
	fputs(kind_name[t->kind], f);
	if (t->target)
		fprintf(f, ":%s:%s", t->target->cls->system, t->target->name);
	if (c == -1)
		fputs(":unlimited", f);
	else
		fprintf(f, ":count=%ld", c);
	if (t->filter_str)
		fprintf(f, " if %s\n", t->filter_str);
	else
		fputc('\n', f);
	return 0;
}

char *utrace__trigger_text(struct utrace_event *ev, int inst)
{
	const struct utrace__trig_list *tl = list_of(ev->priv, inst);
	char *text = NULL;
	size_t n = 0;
	unsigned int i;
	int r = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f)
		return NULL;
	if (!tl || !tl->nr)
		/* event_triggers_seq_show(): the commands this build has */
		fprintf(f, "# Available triggers:\n# traceon traceoff snapshot %senable_event "
			"disable_event enable_hist disable_hist hist\n",
			UTRACE_HAVE_UNWINDER ? "stacktrace " : "");
	for (i = 0; tl && i < tl->nr && !r; i++)
		r = print_trig(f, tl->t[i]);
	if (fclose(f) || r < 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* .sym and .sym-offset: this process's symbols. */
static int own_sym(void *arg, const void *owner, uint64_t addr, const char **name,
		   uint64_t *start, uint64_t *size)
{
	(void)arg;
	(void)owner;
	return utrace__sym_lookup((uintptr_t)addr, name, start, size);
}

char *utrace__trigger_hist_text(struct utrace_event *ev, int inst)
{
	const struct utrace__trig_list *tl = list_of(ev->priv, inst);
	char *text = NULL;
	size_t n = 0;
	unsigned int i, k = 0;
	int r = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f)
		return NULL;
	for (i = 0; tl && i < tl->nr && r >= 0; i++) {
		const struct trig *t = tl->t[i];
		struct utrace__hist_print_opts po = { .sym = own_sym };

		if (t->kind != TK_HIST)
			continue;
		po.paused = __atomic_load_n(&t->paused, __ATOMIC_RELAXED);
		po.info = t->h;
		if (k++)
			fputs("\n\n", f);
		r = utrace__hist_print(*t->mapp, &po, f);
	}
	if (fclose(f) || r < 0) {
		free(text);
		return NULL;
	}
	return text;
}
