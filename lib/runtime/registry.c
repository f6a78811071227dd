/* SPDX-License-Identifier: MIT */
/*
 * The event registry.
 *
 * Every object (executable or shared library) with events has a section
 * "utrace_events" of pointers to its struct utrace_event; the constructor
 * that define_trace.h adds to the object hands the section to
 * utrace_tp_register_module() (init.c, which starts the library first if
 * it has not started yet, and then calls utrace__registry_add_module()
 * here), and its destructor (at exit or dlclose)
 * takes it back.  Several CREATE_TRACE_POINTS files in one object give
 * several constructors for one section: a module is counted, not doubled.
 *
 * Events are kept in registration order, which is the order in which
 * listings show them (as the kernel's available_events).  An event's id is
 * given the first time its "system:name" is seen and is kept for the life
 * of the process, so a library loaded again gets its old ids back.
 *
 * The UTRACE_EVENTS entries are applied, in order, to each module's events
 * as it registers, so they also reach libraries opened later.
 */
#include <stdarg.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "hash.h"
#include "internal.h"
#include "instance.h"
#include "problems.h"
#include "table.h"
#include "tp.h"
#include "writer.h"

/*
 * Re-entrant for the thread that holds it (foreach callbacks may call the
 * other registry functions), through a per-thread depth rather than a
 * recursive mutex: a fork child can then release it as a plain mutex.
 */
static pthread_mutex_t reg_mutex = PTHREAD_MUTEX_INITIALIZER;
static __thread unsigned int reg_depth;

static void reg_lock(void)
{
	if (reg_depth++ == 0)
		pthread_mutex_lock(&reg_mutex);
}

static void reg_unlock(void)
{
	if (--reg_depth == 0)
		pthread_mutex_unlock(&reg_mutex);
}
static struct utrace__module *modules;
static struct utrace_event **events;   /* registration order */
static size_t nr_events, cap_events;

/*
 * The lookups of registration (an event's id by its name, an event by its
 * tracepoint, by its name, by its id) go through hash tables
 * (lib/common/table.h, the values are pointers), so that a program with
 * tens of thousands of events starts in time linear in them.  Nothing is
 * removed one at a time: the tables of the events are rebuilt when a
 * module goes.
 */
static uint64_t hash_name(const char *system, const char *name)
{
	return utrace__hash_str(utrace__hash_str(UTRACE_HASH_INIT, system), name);
}

static uint64_t hash_ptr(const void *p)
{
	return utrace__hash_u64((uint64_t)(uintptr_t)p);
}

/* Each pointer stored under h: for (TABLE_EACH(t, h, pos, v)) (void *)v */
#define TABLE_EACH(t, h, pos, v) \
	size_t pos = utrace__table_start(t, h), v; utrace__table_next(t, h, &pos, &v);
#define TABLE_PTR(v) ((void *)(uintptr_t)(v))

static int table_add(struct utrace__table *t, uint64_t h, const void *v)
{
	return utrace__table_add(t, h, (size_t)(uintptr_t)v);
}

static struct utrace__table ids_by_name = UTRACE__TABLE_INIT;    /* struct id_entry * */
static struct utrace__table events_by_tp = UTRACE__TABLE_INIT;   /* struct utrace_event * */
static struct utrace__table events_by_name = UTRACE__TABLE_INIT; /* struct utrace_event * */
static struct utrace__table events_by_id = UTRACE__TABLE_INIT;   /* struct utrace_event * */

static struct utrace_event *event_by_tp(const void *tp)
{
	uint64_t h = hash_ptr(tp);

	for (TABLE_EACH(&events_by_tp, h, pos, v)) {
		struct utrace_event *e = TABLE_PTR(v);

		if (e->tp == tp)
			return e;
	}
	return NULL;
}

static struct utrace_event *event_by_name(const char *system, const char *name)
{
	uint64_t h = hash_name(system, name);

	for (TABLE_EACH(&events_by_name, h, pos, v)) {
		struct utrace_event *e = TABLE_PTR(v);

		if (strcmp(e->name, name) == 0 &&
		    strcmp(e->cls->system, system) == 0)
			return e;
	}
	return NULL;
}

static uint64_t hash_id(int id)
{
	return utrace__hash_u64((unsigned int)id);
}

/* Room for one more event in the event tables.  -ENOMEM. */
static int index_reserve(void)
{
	return utrace__table_reserve(&events_by_tp, nr_events + 1) ||
	       utrace__table_reserve(&events_by_name, nr_events + 1) ||
	       utrace__table_reserve(&events_by_id, nr_events + 1) ? -ENOMEM : 0;
}

/* ev in the event tables (after the events before it; index_reserve()
 * made room). */
static void index_event(struct utrace_event *ev)
{
	(void)table_add(&events_by_tp, hash_ptr(ev->tp), ev);
	(void)table_add(&events_by_name, hash_name(ev->cls->system, ev->name), ev);
	(void)table_add(&events_by_id, hash_id(ev->id), ev);
}

/* The event tables again, from the events (a module went). */
static void reindex_events(void)
{
	size_t i;

	utrace__table_clear(&events_by_tp);
	utrace__table_clear(&events_by_name);
	utrace__table_clear(&events_by_id);
	for (i = 0; i < nr_events; i++)
		index_event(events[i]);  /* (they fit: the tables only shrank) */
}

struct utrace_event *utrace__registry_find_id(uint32_t id)
{
	struct utrace_event *found = NULL;
	uint64_t h = hash_id((int)id);

	reg_lock();
	for (TABLE_EACH(&events_by_id, h, pos, v)) {
		struct utrace_event *e = TABLE_PTR(v);

		if (e->id == (int)id) {
			found = e;
			break;
		}
	}
	reg_unlock();
	return found;
}

struct id_entry {
	char *key;                      /* "system:name" */
	int id;
};
/* (kept in ids_by_name, for the life of the process) */
static int next_id = 1;

struct spec_entry {
	char *text;
	struct utrace__set_event_match m;
	bool matched, bad;
};
static struct spec_entry *spec;
static size_t nr_spec;
static bool spec_reported;

void utrace__registry_lock(void)
{
	reg_lock();
}

void utrace__registry_unlock(void)
{
	reg_unlock();
}

/*
 * The formats of events that were removed (a probe deleted from
 * uprobe_events, a library unloaded): their records can still be in the
 * buffers, and readers ask a format by id (utrace show, record -p, the
 * mount's trace) as long as the process lives.  The kernel clears its
 * buffers when a dynamic event goes; utrace keeps the records readable.
 * An event that registers again under the same name keeps its id when
 * its format is the same, and gets a new id when not, so that an id
 * means one format.  Kept until the process ends (a few hundred bytes
 * each).
 */
struct retired_fmt {
	int id;
	char *system, *name, *text;
};
static struct retired_fmt *retired;
static size_t nr_retired, cap_retired;
/* retired[] by id: index + 1 (0: not retired); ids are small and dense */
static size_t *retired_at;
static size_t cap_retired_at;

static long retired_find(int id)
{
	if (id <= 0 || (size_t)id >= cap_retired_at || !retired_at[id])
		return -1;
	return (long)retired_at[id] - 1;
}

/* Keep the format of ev, about to be removed (its state still whole). */
static void retire_locked(const struct utrace_event *ev)
{
	char *text, *system, *name;

	if (ev->id <= 0 || retired_find(ev->id) >= 0)
		return;
	if (nr_retired == cap_retired) {
		size_t cap = cap_retired ? 2 * cap_retired : 64;
		struct retired_fmt *a = realloc(retired, cap * sizeof(*a));

		if (!a)
			return;  /* (out of memory: its records are left out by the readers) */
		retired = a;
		cap_retired = cap;
	}
	if ((size_t)ev->id >= cap_retired_at) {
		size_t cap = cap_retired_at ? cap_retired_at : 64;
		size_t *a;

		while (cap <= (size_t)ev->id)
			cap *= 2;
		a = realloc(retired_at, cap * sizeof(*a));
		if (!a)
			return;
		memset(a + cap_retired_at, 0, (cap - cap_retired_at) * sizeof(*a));
		retired_at = a;
		cap_retired_at = cap;
	}
	text = utrace__format_text(ev);
	system = strdup(ev->cls->system);
	name = strdup(ev->name);
	if (!text || !system || !name) {
		free(text);
		free(system);
		free(name);
		return;
	}
	retired[nr_retired++] = (struct retired_fmt){ ev->id, system, name, text };
	retired_at[ev->id] = nr_retired;
}

/*
 * An event registering under the id of a removed one: the same format
 * takes the id back, another gets a new id (the name's from now on).
 */
static int id_reused_locked(const struct utrace_event *ev)
{
	long r = retired_find(ev->id);
	char *text;
	uint64_t h;

	if (r < 0)
		return ev->id;
	text = utrace__format_text(ev);
	if (text && !strcmp(text, retired[r].text)) {
		free(retired[r].system);
		free(retired[r].name);
		free(retired[r].text);
		retired_at[ev->id] = 0;
		retired[r] = retired[--nr_retired];
		if ((size_t)r < nr_retired)
			retired_at[retired[r].id] = (size_t)r + 1;
		free(text);
		return ev->id;
	}
	free(text);
	/* (its name's entry holds the id: it got it from id_for()) */
	h = hash_name(ev->cls->system, ev->name);
	for (TABLE_EACH(&ids_by_name, h, pos, v)) {
		struct id_entry *e = TABLE_PTR(v);

		if (e->id == ev->id)
			e->id = next_id++;
	}
	return next_id - 1;
}

int utrace__registry_retired_format(uint32_t id, char **system, char **text)
{
	long r;
	int ret = -ENOENT;

	reg_lock();
	r = retired_find((int)id);
	if (r >= 0) {
		*system = strdup(retired[r].system);
		*text = strdup(retired[r].text);
		ret = *system && *text ? 0 : -ENOMEM;
		if (ret) {
			free(*system);
			free(*text);
		}
	}
	reg_unlock();
	return ret;
}

void utrace__registry_foreach_retired(void (*fn)(uint32_t id, const char *system,
						 const char *name, const char *text,
						 void *arg), void *arg)
{
	reg_lock();
	for (size_t i = 0; i < nr_retired; i++)
		fn((uint32_t)retired[i].id, retired[i].system, retired[i].name, retired[i].text,
		   arg);
	reg_unlock();
}

static int id_for(const char *system, const char *name)
{
	size_t sl = strlen(system), nl = strlen(name);
	uint64_t h = hash_name(system, name);
	struct id_entry *e;

	for (TABLE_EACH(&ids_by_name, h, pos, v)) {
		e = TABLE_PTR(v);
		if (strncmp(e->key, system, sl) == 0 &&
		    e->key[sl] == ':' && strcmp(e->key + sl + 1, name) == 0)
			return e->id;
	}
	e = malloc(sizeof(*e) + sl + nl + 2);
	if (!e)
		return -ENOMEM;
	e->key = (char *)(e + 1);
	memcpy(e->key, system, sl);
	e->key[sl] = ':';
	memcpy(e->key + sl + 1, name, nl + 1);
	if (table_add(&ids_by_name, h, e)) {
		free(e);
		return -ENOMEM;
	}
	e->id = next_id++;
	return e->id;
}

/* An event's top-level switch: enable_event and disable_event triggers
 * flip it from the writer (trigger.c), so it is read atomically. */
static inline bool st_enabled(const struct utrace__event_state *st)
{
	return __atomic_load_n(&st->enabled, __ATOMIC_RELAXED);
}

/* Its instances' bits: the triggers of an instance flip them too. */
static inline uint32_t st_inst_on(const struct utrace__event_state *st)
{
	return __atomic_load_n(&st->inst_on, __ATOMIC_RELAXED);
}

/* The control layer's hooks (init.c installs them); NULL until then. */
static const struct utrace__registry_ops *reg_ops;

void utrace__registry_set_ops(const struct utrace__registry_ops *ops)
{
	reg_lock();
	reg_ops = ops;
	reg_unlock();
}

bool utrace__registry_any_enabled(void)
{
	size_t i;
	bool on = false;

	reg_lock();
	for (i = 0; i < nr_events && !on; i++)
		on = st_enabled(events[i]->priv);
	reg_unlock();
	return on;
}

/*
 * The event on at the top level ('top') and in the instances of 'mask':
 * its probe is registered while it is on anywhere; the writer decides
 * where a record goes (writer.c, reserve_inst()).
 */
static int set_on_locked(struct utrace_event *ev, bool top, uint32_t mask)
{
	struct utrace__event_state *st = ev->priv;
	bool was = st_enabled(st) || st_inst_on(st) || st->soft, will = top || mask || st->soft;
	int ret = 0;

	if (st->ignore_enable)
		return -EINVAL;
	if (!was && will)
		ret = utrace__tp_add(ev->tp, ev->cls->probe, ev);
	if (ret)
		return ret;
	__atomic_store_n(&st->enabled, top, __ATOMIC_RELAXED);
	__atomic_store_n(&st->inst_on, mask, __ATOMIC_RELEASE);
	if (was && !will)
		ret = utrace__tp_remove(ev->tp, ev->cls->probe, ev);
	return ret;
}

static int enable_locked(struct utrace_event *ev, bool on)
{
	struct utrace__event_state *st = ev->priv;

	if (st->ignore_enable)
		return -EINVAL;
	if (st_enabled(st) == on)
		return 0;
	return set_on_locked(ev, on, st_inst_on(st));
}

/* enable_locked() in instance 'inst' (-1: the top level). */
static int enable_inst_locked(struct utrace_event *ev, int inst, bool on)
{
	struct utrace__event_state *st = ev->priv;
	uint32_t m, now;

	if (inst < 0)
		return enable_locked(ev, on);
	if (st->ignore_enable)
		return -EINVAL;
	now = st_inst_on(st);
	m = on ? now | (1u << inst) : now & ~(1u << inst);
	return m == now ? 0 : set_on_locked(ev, st_enabled(st), m);
}

int utrace__event_soft(struct utrace_event *ev, bool on)
{
	struct utrace__event_state *st;
	int ret = 0;

	reg_lock();
	st = ev->priv;
	if (!st) {
		ret = UTRACE_ENOEVENT;
	} else if (on) {
		if (!st_enabled(st) && !st_inst_on(st) && !st->soft)
			ret = utrace__tp_add(ev->tp, ev->cls->probe, ev);
		if (!ret)
			__atomic_store_n(&st->soft, st->soft + 1, __ATOMIC_RELEASE);
	} else if (st->soft) {
		__atomic_store_n(&st->soft, st->soft - 1, __ATOMIC_RELEASE);
		if (!st_enabled(st) && !st_inst_on(st) && !st->soft)
			ret = utrace__tp_remove(ev->tp, ev->cls->probe, ev);
	}
	reg_unlock();
	utrace__tp_reap();
	return ret;
}

int utrace__event_enable_inst(struct utrace_event *ev, int inst, bool on)
{
	int ret = UTRACE_ENOEVENT;

	reg_lock();
	if (ev && ev->priv)
		ret = enable_inst_locked(ev, inst, on);
	reg_unlock();
	utrace__tp_reap();
	return ret;
}

bool utrace__event_on_inst(const struct utrace_event *ev, int inst)
{
	const struct utrace__event_state *st = ev->priv;

	return inst < 0 ? st_enabled(st) : (st_inst_on(st) >> inst) & 1;
}

/* Apply the UTRACE_EVENTS entries to the events [from, nr_events). */
static void apply_spec_locked(size_t from)
{
	size_t s, i;

	for (s = 0; s < nr_spec; s++) {
		if (spec[s].bad)
			continue;
		for (i = from; i < nr_events; i++) {
			struct utrace_event *ev = events[i];

			if (((struct utrace__event_state *)ev->priv)->ignore_enable)
				continue;
			if (!utrace__set_event_matches(&spec[s].m,
						       ev->cls->system, ev->name))
				continue;
			spec[s].matched = true;
			if (enable_locked(ev, spec[s].m.set) < 0)
				utrace__warn("cannot %s event '%s:%s'",
					     spec[s].m.set ? "enable" : "disable",
					     ev->cls->system, ev->name);
		}
	}
}

/*
 * A bad UTRACE_EVENTS value of a megabyte must not print a line per
 * entry: the first few, then how many more.
 */
#define WARN_MAX 5

static void warn_say(const char *msg)
{
	utrace__warn("%s", msg);
}

static struct utrace__problems malformed = { .max = WARN_MAX, .say = warn_say };
static struct utrace__problems unmatched = { .max = WARN_MAX, .say = warn_say };

/* "N more WHAT", if there were; then the count starts again. */
static void warn_limited_end(struct utrace__problems *c, const char *what)
{
	uint64_t more = utrace__problems_more(c);

	if (more)
		utrace__warn("UTRACE_EVENTS: %llu more %s", (unsigned long long)more, what);
	c->count = 0;
	c->shown = 0;
}

static void report_spec_locked(void)
{
	size_t s;

	if (spec_reported)
		return;
	spec_reported = true;
	for (s = 0; s < nr_spec; s++)
		if (!spec[s].bad && !spec[s].matched)
			utrace__problem(&unmatched, "UTRACE_EVENTS: no event matches '%s'",
				     spec[s].text);
	warn_limited_end(&unmatched, "entries match no event");
}

void utrace__events_spec_report(void)
{
	reg_lock();
	/* A process that never had events (the utrace tool itself, say)
	 * has nothing to report. */
	if (next_id > 1)
		report_spec_locked();
	reg_unlock();
}

static bool bad_token(const char *t, size_t len)
{
	const char *c = memchr(t, ':', len);
	size_t i;

	if (t[0] == '!') {
		t++;
		len--;
	}
	if (!len)
		return true;
	if (c && memchr(c + 1, ':', len - (size_t)(c + 1 - t)))
		return true;
	for (i = 0; i < len; i++) {
		if (t[i] == '*' && !((i == 0 || t[i - 1] == ':') &&
				     (i + 1 == len || t[i + 1] == ':')))
			return true;
		if (t[i] == '!')
			return true;
	}
	return false;
}

/* Called once from utrace__init() with the UTRACE_EVENTS value. */
void utrace__events_spec_set(const char *value)
{
	const char *p = value, *sep = ", \t\n";
	size_t cap = 0;

	reg_lock();
	while (*p) {
		size_t len;

		p += strspn(p, sep);
		len = strcspn(p, sep);
		if (!len)
			break;
		if (nr_spec == cap) {
			size_t c = cap ? 2 * cap : 8;
			struct spec_entry *n = realloc(spec, c * sizeof(*spec));

			if (!n)
				break;
			spec = n;
			cap = c;
		}
		struct spec_entry *e = &spec[nr_spec];
		memset(e, 0, sizeof(*e));
		e->text = strndup(p, len);
		if (!e->text)
			break;
		nr_spec++;
		if (bad_token(e->text, len) ||
		    utrace__parse_set_event(e->text, len, &e->m) < 0) {
			e->bad = true;
			utrace__problem(&malformed, "UTRACE_EVENTS: malformed entry '%.*s'",
				     len > 200 ? 200 : (int)len, e->text);
		}
		p += len;
	}
	warn_limited_end(&malformed, "malformed entries");
	reg_unlock();
}

struct main_range {
	const void *addr;
	bool found;
};

static int in_main_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct main_range *r = arg;
	uintptr_t a = (uintptr_t)r->addr;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
			r->found = true;
	}
	return 1; /* the first object is the main program */
}

static bool in_main_program(const void *addr)
{
	struct main_range r = { addr, false };

	dl_iterate_phdr(in_main_cb, &r);
	return r.found;
}

static int add_event_locked(struct utrace__module *mod, struct utrace_event *ev)
{
	struct utrace__event_state *st;
	struct utrace_event *other;
	const struct utrace_event_field *f;
	unsigned int n, i;
	int id;

	if (!ev || ev->priv)
		return 0;
	other = event_by_tp(ev->tp);
	if (other) {
		/* Two objects define an event of this name: the dynamic
		 * linker bound both to one tracepoint. */
		utrace__warn("event '%s:%s' shares its tracepoint with '%s:%s' "
			     "from another object; event names must be unique "
			     "in a process, '%s:%s' is not registered",
			     ev->cls->system, ev->name, other->cls->system, other->name,
			     ev->cls->system, ev->name);
		return 0;
	}
	id = id_for(ev->cls->system, ev->name);
	if (id < 0)
		return id;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	f = ev->cls->fields(&n);
	st->fields = calloc(n ? n : 1, sizeof(*st->fields));
	if (ev->print[1][0]) {
		size_t l = strlen(ev->print[0]) + strlen(ev->print[1]) + 3;
		char *pf = malloc(l);

		if (pf) {
			snprintf(pf, l, "%s, %s", ev->print[0], ev->print[1]);
			st->print_fmt = utrace__eval_replace(pf, mod->evals_start,
							     mod->evals_stop,
							     ev->cls->system);
			free(pf);
		}
	} else {
		st->print_fmt = strdup(ev->print[0]);
	}
	if (!st->fields || !st->print_fmt) {
		free(st->fields);
		free(st->print_fmt);
		free(st);
		return -ENOMEM;
	}
	if (nr_events == cap_events) {
		size_t cap = cap_events ? cap_events * 2 : 64;
		struct utrace_event **e = realloc(events, cap * sizeof(*e));

		if (e) {
			events = e;
			cap_events = cap;
		}
	}
	if (nr_events == cap_events || index_reserve()) {
		free(st->fields);
		free(st->print_fmt);
		free(st);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		st->fields[i] = f[i];
		/* The kernel is built with -funsigned-char: plain char
		 * reads signed:0 in its formats, so it does in ours. */
		if (strcmp(f[i].type, "char") == 0)
			st->fields[i].is_signed = 0;
	}
	st->nr_fields = n;
	st->ev = ev;
	st->mod = mod;
	ev->id = id;
	ev->priv = st;
	ev->id = id_reused_locked(ev);
	ev->tp->builtin = ev->cls->probe;
	events[nr_events++] = ev;
	index_event(ev);
	if (reg_ops && reg_ops->event_added)
		reg_ops->event_added(ev);
	return 0;
}

/*
 * The linker keeps each file's section entries together, in link order,
 * but a compiler may emit one file's entries in any order: sort them back
 * into the order of definition, keeping the files in link order.
 */
struct ranked {
	struct utrace_event *ev;        /* NULL entries go last */
	size_t rank;                    /* its file's, in link order */
};

static int cmp_events(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (!x->ev || !y->ev)
		return (x->ev == NULL) - (y->ev == NULL);
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->ev->seq < y->ev->seq ? -1 : x->ev->seq > y->ev->seq;
}

/* Each file's rank is where its first entry is (found through a table:
 * a program of 50 files and 50,000 events sorts in n log n). */
static struct utrace_event **sorted_events(struct utrace_event *const *start,
					   struct utrace_event *const *stop)
{
	size_t n = (size_t)(stop - start), i, u = 0;
	struct ranked *r = malloc(n * sizeof(*r));
	struct utrace_event **v = malloc(n * sizeof(*v));
	struct utrace__table units = UTRACE__TABLE_INIT;  /* unit -> rank */
	const void *last = NULL;
	size_t last_rank = 0;

	if (!v || !r || utrace__table_reserve(&units, n)) {
		free(v);
		free(r);
		utrace__table_free(&units);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		r[i].ev = start[i];
		r[i].rank = 0;
		if (!start[i])
			continue;
		if (u == 0 || start[i]->unit != last) {
			uint64_t h = hash_ptr(start[i]->unit);
			size_t pos = utrace__table_start(&units, h), k;

			last = start[i]->unit;
			last_rank = u;
			while (utrace__table_next(&units, h, &pos, &k))
				if (r[k].ev->unit == last) {
					last_rank = r[k].rank;
					break;
				}
			if (last_rank == u) {
				(void)utrace__table_add(&units, h, i);  /* (reserved) */
				u++;
			}
		}
		r[i].rank = last_rank;
	}
	utrace__table_free(&units);
	qsort(r, n, sizeof(*r), cmp_events);
	for (i = 0; i < n; i++)
		v[i] = r[i].ev;
	free(r);
	return v;
}

static void add_module(struct utrace_event *const *start, struct utrace_event *const *stop,
		       const struct utrace_eval_map *const *evals_start,
		       const struct utrace_eval_map *const *evals_stop, bool builtin)
{
	struct utrace__module *mod;
	struct utrace_event *const *p;
	struct utrace_event **sorted = NULL;
	const struct utrace__registry_ops *ops;
	size_t first;

	if (!start || start >= stop)
		return;
	reg_lock();
	for (mod = modules; mod; mod = mod->next) {
		if (mod->start == (struct utrace_event **)start) {
			mod->refs++;
			goto out;
		}
	}
	mod = calloc(1, sizeof(*mod));
	if (!mod) {
		utrace__warn("out of memory: events of this object are not registered");
		goto out;
	}
	mod->start = (struct utrace_event **)start;
	mod->stop = (struct utrace_event **)stop;
	mod->evals_start = evals_start;
	mod->evals_stop = evals_stop;
	mod->refs = 1;
	/* libutrace's own events are never the main program's, even when
	 * it is linked in statically */
	mod->is_main = !builtin && in_main_program(start);
	{
		Dl_info info;

		if (dladdr(start, &info) && info.dli_fname)
			mod->path = strdup(info.dli_fname);
	}
	mod->next = modules;
	modules = mod;
	first = nr_events;
	sorted = sorted_events(start, stop);
	for (p = sorted ? sorted : start; p < (sorted ? sorted + (stop - start) : stop); p++) {
		if (add_event_locked(mod, *p) < 0) {
			utrace__warn("out of memory: event '%s' is not registered",
				     *p ? (*p)->name : "?");
		} else if (builtin && *p && (*p)->priv) {
			((struct utrace__event_state *)(*p)->priv)->ignore_enable = true;
		}
	}
	free(sorted);
	apply_spec_locked(first);
	if (mod->is_main)
		report_spec_locked();
out:
	ops = reg_ops;
	reg_unlock();
	utrace__tp_reap();
	if (ops && ops->module_added)
		ops->module_added();
}

void utrace__registry_add_module(struct utrace_event *const *start,
				 struct utrace_event *const *stop,
				 const struct utrace_eval_map *const *evals_start,
				 const struct utrace_eval_map *const *evals_stop)
{
	add_module(start, stop, evals_start, evals_stop, false);
}

void utrace__registry_add_builtin(struct utrace_event *const *start,
				  struct utrace_event *const *stop)
{
	add_module(start, stop, NULL, NULL, true);
}

void utrace_tp_unregister_module(struct utrace_event *const *start,
				 struct utrace_event *const *stop)
{
	struct utrace__module **pm, *mod = NULL;
	struct utrace__filter **dead = NULL;
	size_t i, j, nr_dead = 0;

	(void)stop;
	if (!start)
		return;
	reg_lock();
	for (pm = &modules; *pm; pm = &(*pm)->next) {
		if ((*pm)->start == (struct utrace_event **)start) {
			mod = *pm;
			break;
		}
	}
	if (!mod || --mod->refs > 0)
		goto out;
	*pm = mod->next;
	/* The control layer lets go of what points at them (triggers), while
	 * every event is still whole. */
	for (i = 0; reg_ops && reg_ops->event_removed && i < nr_events; i++)
		if (((struct utrace__event_state *)events[i]->priv)->mod == mod)
			reg_ops->event_removed(events[i]);
	for (i = 0, j = 0; i < nr_events; i++) {
		struct utrace_event *ev = events[i];
		struct utrace__event_state *st = ev->priv;

		if (st->mod != mod) {
			events[j++] = ev;
			continue;
		}
		if (st_enabled(st) || st_inst_on(st))
			set_on_locked(ev, false, 0);
		retire_locked(ev);
		if (st->filter) {
			/* Freed once no thread can be inside the event. */
			struct utrace__filter **d = realloc(dead, (nr_dead + 1) * sizeof(*d));

			__atomic_store_n(&ev->filter, NULL, __ATOMIC_RELEASE);
			utrace__filter_count(-1);
			if (d) {
				dead = d;
				dead[nr_dead++] = st->filter;
			}
		}
		if (st->ifilt) {
			for (unsigned int k = 0; k < UTRACE_INSTANCES_MAX; k++) {
				struct utrace__filter **d;

				free(st->ifilt[k].text);
				free(st->ifilt[k].expr);
				if (!st->ifilt[k].filter)
					continue;
				d = realloc(dead, (nr_dead + 1) * sizeof(*d));
				if (d) {
					dead = d;
					dead[nr_dead++] = st->ifilt[k].filter;
				}
			}
			free(st->ifilt);
		}
		/* (its triggers went with event_removed) */
		free(st->itrig);
		free(st->filter_text);
		free(st->filter_expr);
		free(st->fields);
		free(st->print_fmt);
		free(st);
		ev->priv = NULL;
	}
	nr_events = j;
	reindex_events();
	free(mod->path);
	free(mod);
out:
	reg_unlock();
	/* The module's probes and records are about to be unmapped: wait
	 * until no thread is still inside one of its probes. */
	tracepoint_synchronize_unregister();
	if (nr_dead && utrace__filter_sync())
		for (i = 0; i < nr_dead; i++)
			utrace__filter_free(dead[i]);
	free(dead);
}

/* In a fork child (one thread; the registry lock was taken before the
 * fork and released in the child): no event is on in an instance any
 * more.  An event that was on only in instances goes off (its probe is
 * removed), so the child's events leave the slow path with
 * UTRACE_TRACING_INSTANCES, which the control layer clears next. */
void utrace__registry_instances_after_fork(void)
{
	size_t i;

	reg_lock();
	for (i = 0; i < nr_events; i++) {
		struct utrace__event_state *st = events[i]->priv;

		if (st_inst_on(st))
			set_on_locked(events[i], st_enabled(st), 0);
	}
	reg_unlock();
	utrace__tp_reap();
}

int utrace__registry_foreach(int (*fn)(struct utrace_event *ev, void *arg), void *arg)
{
	size_t i;
	int ret = 0;

	reg_lock();
	for (i = 0; i < nr_events && !ret; i++)
		ret = fn(events[i], arg);
	reg_unlock();
	return ret;
}

struct utrace_event *utrace_event_find(const char *system, const char *name)
{
	struct utrace_event *found;

	if (!system || !name)
		return NULL;
	reg_lock();
	found = event_by_name(system, name);
	reg_unlock();
	return found;
}

const char *utrace_event_name(const struct utrace_event *ev)
{
	return ev ? ev->name : NULL;
}

const char *utrace_event_system(const struct utrace_event *ev)
{
	return ev ? ev->cls->system : NULL;
}

int utrace_event_id(const struct utrace_event *ev)
{
	return ev ? ev->id : UTRACE_ENOEVENT;
}

const struct utrace_event_field *utrace_event_fields(const struct utrace_event *ev,
						     unsigned int *nr)
{
	const struct utrace__event_state *st = ev ? ev->priv : NULL;

	if (!st) {
		if (nr)
			*nr = 0;
		return NULL;
	}
	*nr = st->nr_fields;
	return st->fields;
}

char *utrace_event_format(const struct utrace_event *ev)
{
	char *s = NULL;

	if (!ev)
		return NULL;
	reg_lock();
	if (ev->priv)
		s = utrace__format_text(ev);
	reg_unlock();
	return s;
}

int utrace_event_enable(struct utrace_event *ev, int on)
{
	int ret = UTRACE_ENOEVENT;

	reg_lock();
	if (ev && ev->priv)
		ret = enable_locked(ev, on != 0);
	reg_unlock();
	utrace__tp_reap();
	return ret;
}

int utrace_event_is_enabled(const struct utrace_event *ev)
{
	const struct utrace__event_state *st = ev ? ev->priv : NULL;

	return st && st_enabled(st);
}

int utrace__registry_set_event(const char *token)
{
	return utrace__registry_set_event_inst(token, -1);
}

int utrace__registry_set_event_inst(const char *token, int inst)
{
	struct utrace__set_event_match m;
	size_t i;
	int n = 0, ret;

	if (!token)
		return -EINVAL;
	if (utrace__parse_set_event(token, strlen(token), &m) < 0)
		return -EINVAL;
	reg_lock();
	for (i = 0; i < nr_events; i++) {
		if (((struct utrace__event_state *)events[i]->priv)->ignore_enable ||
		    !utrace__set_event_matches(&m, events[i]->cls->system,
					       events[i]->name))
			continue;
		n++;
		ret = enable_inst_locked(events[i], inst, m.set);
		if (ret < 0) {
			n = ret;
			break;
		}
	}
	reg_unlock();
	utrace__tp_reap();
	return n ? n : -EINVAL;
}
