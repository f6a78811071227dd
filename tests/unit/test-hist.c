// SPDX-License-Identifier: MIT
/*
 * The hist table (lib/common/hist.c) under concurrent writers: threads
 * add the same keys at once; no hit is lost or counted twice, a key has
 * one entry, and a full table drops whole keys (an entry that got in has
 * every hit of its key).  onmax()/onchange() with save() and snapshot()
 * while a reader prints the table: what it prints of an entry is of one
 * event (the value, the number and the string saved with it), and the
 * snapshot's entry is the one of its value.  The layout of the printed
 * table is t0084's and t0089's.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "hist.h"
#include "test.h"

#define THREADS 4

struct rec {
	unsigned short common_type;
	unsigned char common_flags, common_preempt_count;
	int common_pid;
	unsigned int k;
	unsigned int pad;
	unsigned long long v;
};

static const struct utrace_event_field fields[] = {
	{ "unsigned int", "k", 8, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "u64", "v", 16, 8, 0, UTRACE_FIELD_PLAIN, 0 },
};

struct job {
	struct utrace__hist_map *m;
	unsigned int keys, rounds;
};

static void *adder(void *arg)
{
	const struct job *j = arg;
	struct utrace__hist_ctx ctx = { .comm = "adder" };
	struct rec r = { 0 };
	unsigned int i, k;

	for (i = 0; i < j->rounds; i++)
		for (k = 0; k < j->keys; k++) {
			r.k = k;
			r.v = k;
			utrace__hist_add(j->m, NULL, &r, sizeof(r), &ctx);
		}
	return NULL;
}

struct counts {
	unsigned long long hits, entries, dropped, rows, hitsum;
	int bad;
};

/* Run THREADS adders and read the printed table back. */
static void run(const char *trigger, unsigned int keys, unsigned int rounds, struct counts *c)
{
	struct utrace__hist_error err;
	struct utrace__hist *h;
	struct utrace__hist_map *m;
	pthread_t t[THREADS];
	struct job j;
	char *text = NULL, *line, *save;
	size_t len = 0;
	FILE *f;
	int i;

	CHECK_INT(utrace__hist_parse(trigger, fields, 2, NULL, &h, &err), ==, 0);
	m = utrace__hist_map_new(h);
	CHECK(m);
	j = (struct job){ m, keys, rounds };
	for (i = 0; i < THREADS; i++)
		CHECK_INT(pthread_create(&t[i], NULL, adder, &j), ==, 0);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	f = open_memstream(&text, &len);
	CHECK(f);
	CHECK_INT(utrace__hist_print(m, NULL, f), ==, 0);
	fclose(f);
	memset(c, 0, sizeof(*c));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long k, hc, v;

		if (sscanf(line, "{ k: %llu } hitcount: %llu v: %llu", &k, &hc, &v) == 3) {
			c->rows++;
			c->hitsum += hc;
			/* every hit of a key that got in, and its sum */
			if (hc != (unsigned long long)THREADS * rounds || v != k * hc || k >= keys)
				c->bad++;
		}
		sscanf(line, "    Hits: %llu", &c->hits);
		sscanf(line, "    Entries: %llu", &c->entries);
		sscanf(line, "    Dropped: %llu", &c->dropped);
	}
	free(text);
	utrace__hist_map_free(m);
	utrace__hist_free(h);
}

TEST(concurrent_adds_lose_nothing)
{
	struct counts c;

	run("hist:keys=k:vals=v:size=1024", 600, 300, &c);
	CHECK_INT(c.rows, ==, 600);
	CHECK_INT(c.entries, ==, 600);
	CHECK_INT(c.hits, ==, (long long)THREADS * 300 * 600);
	CHECK_INT(c.hitsum, ==, c.hits);
	CHECK_INT(c.dropped, ==, 0);
	CHECK_INT(c.bad, ==, 0);
}

TEST(a_full_table_drops_whole_keys)
{
	struct counts c;

	run("hist:keys=k:vals=v:size=128", 1000, 50, &c);
	CHECK_INT(c.rows, ==, 128);
	CHECK_INT(c.entries, ==, 128);
	CHECK_INT(c.hits, ==, (long long)THREADS * 50 * 1000);
	CHECK_INT(c.hitsum + c.dropped, ==, c.hits);
	CHECK_INT(c.bad, ==, 0);
}

TEST(clear_empties_the_table)
{
	struct utrace__hist_error err;
	struct utrace__hist *h;
	struct utrace__hist_map *m;
	struct utrace__hist_ctx ctx = { 0 };
	struct rec r = { .k = 7, .v = 3 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_INT(utrace__hist_parse("hist:keys=k:vals=v if v > 1", fields, 2, NULL, &h, &err),
		  ==, 0);
	m = utrace__hist_map_new(h);
	CHECK(utrace__hist_add(m, NULL, &r, sizeof(r), &ctx));
	r.v = 1;
	CHECK(!utrace__hist_add(m, NULL, &r, sizeof(r), &ctx));   /* filtered out */
	CHECK(!utrace__hist_add(m, NULL, &r, 12, &ctx));          /* too short */
	utrace__hist_map_clear(m);
	f = open_memstream(&text, &len);
	CHECK_INT(utrace__hist_print(m, NULL, f), ==, 0);
	fclose(f);
	CHECK_STR(text, "# event histogram\n#\n# trigger info: hist:keys=k:vals=hitcount,v:"
		  "sort=hitcount:size=2048 if v > 1 [active]\n#\n\n\nTotals:\n    Hits: 0\n"
		  "    Entries: 0\n    Dropped: 0\n");
	free(text);
	utrace__hist_map_free(m);
	utrace__hist_free(h);
}

/* name=: another event's trigger may share a table when its fields match
 * by name, size and sign, wherever they lie in its record. */
struct rec2 {
	unsigned short common_type;
	unsigned char common_flags, common_preempt_count;
	int common_pid;
	unsigned long long v;
	unsigned int k;
	int j;
};

static const struct utrace_event_field fields2[] = {
	{ "u64", "v", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "unsigned int", "k", 16, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "int", "j", 20, 4, 1, UTRACE_FIELD_PLAIN, 0 },
};

TEST(named_tables_take_compatible_triggers_only)
{
	static const char *const refused[] = {
		"hist:name=x:keys=j:vals=v",            /* another field */
		"hist:name=x:keys=k.hex:vals=v",        /* another modifier */
		"hist:name=x:keys=k",                   /* no value */
		"hist:name=x:keys=k:vals=v:sort=v",     /* another sort key */
	};
	struct utrace__hist_error err;
	struct utrace__hist *a, *b;
	struct utrace__hist_map *m;
	struct utrace__hist_ctx ctx = { 0 };
	struct rec r = { .k = 7, .v = 3 };
	struct rec2 r2 = { .k = 7, .v = 5 };
	char *text = NULL;
	size_t len = 0, i;
	FILE *f;

	CHECK_INT(utrace__hist_parse("hist:name=x:keys=k:vals=v", fields, 2, NULL, &a, &err),
		  ==, 0);
	CHECK_INT(utrace__hist_parse("hist:name=x:keys=k:vals=v:size=256 if j < 0", fields2, 3,
				     NULL, &b, &err), ==, 0);
	CHECK(utrace__hist_compatible(a, b));
	CHECK(!utrace__hist_same(a, b));
	m = utrace__hist_map_new(a);
	CHECK(utrace__hist_add(m, a, &r, sizeof(r), &ctx));
	CHECK(!utrace__hist_add(m, b, &r2, sizeof(r2), &ctx));    /* b's filter */
	r2.j = -1;
	CHECK(utrace__hist_add(m, b, &r2, sizeof(r2), &ctx));
	f = open_memstream(&text, &len);
	CHECK_INT(utrace__hist_print(m, &(struct utrace__hist_print_opts){ .info = b }, f), ==, 0);
	fclose(f);
	CHECK_STR(text, "# event histogram\n#\n# trigger info: hist:name=x:keys=k:vals=hitcount,v:"
		  "sort=hitcount:size=256 if j < 0 [active]\n#\n\n"
		  "{ k:          7 } hitcount:          2  v:          8\n\nTotals:\n    Hits: 2\n"
		  "    Entries: 1\n    Dropped: 0\n");
	free(text);
	utrace__hist_map_free(m);
	utrace__hist_free(b);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		CHECK_INT(utrace__hist_parse(refused[i], fields2, 3, NULL, &b, &err), ==, 0);
		CHECK(!utrace__hist_compatible(a, b));
		utrace__hist_free(b);
	}
	CHECK_INT(utrace__hist_errpos("hist:keys=k:name=x:vals=v", "name=x"), ==, 12);
	utrace__hist_free(a);
}

/* ---- onmax()/onchange() with save(), snapshot(), read while written ---- */

#define KEYS 3
#define PRINTS 500

struct trec {
	unsigned short common_type;
	unsigned char common_flags, common_preempt_count;
	int common_pid;
	unsigned int k;
	unsigned int pad;
	unsigned long long v, w;
	char s[24];
};

static const struct utrace_event_field tfields[] = {
	{ "unsigned int", "k", 8, 4, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "u64", "v", 16, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "u64", "w", 24, 8, 0, UTRACE_FIELD_PLAIN, 0 },
	{ "char", "s", 32, 24, 1, UTRACE_FIELD_ARRAY, 24 },
};

/* The string an event with value v carries: its length changes with v,
 * so that a copy made of two events' strings shows. */
static void tstr(char *s, size_t n, unsigned long long v)
{
	snprintf(s, n, "%llu-%s", v, v & 1 ? "odd-odd-odd" : "ev");
}

struct tjob {
	struct utrace__hist_map *m;
	unsigned int id;
	int *stop;
};

/* Every thread its own values (v = i * THREADS + id), rising, until told
 * to stop: each event of a key is a new maximum for its thread, and the
 * threads overtake each other. */
static void *tracker(void *arg)
{
	const struct tjob *j = arg;
	struct utrace__hist_ctx ctx = { .comm = "tracker" };
	static __thread struct utrace__hist_fire fire;
	struct trec r = { 0 };
	unsigned long long i;

	for (i = 1; !__atomic_load_n(j->stop, __ATOMIC_RELAXED); i++) {
		r.v = i * THREADS + j->id;
		r.k = (unsigned int)(r.v % KEYS);
		r.w = r.v;
		tstr(r.s, sizeof(r.s), r.v);
		utrace__hist_add_vars(j->m, NULL, &r, sizeof(r), &ctx, NULL, &fire);
	}
	return NULL;
}

struct tcounts {
	unsigned long long prints;       /* that showed something saved */
	unsigned long long tracks, snaps;
	int bad;
};

/* Check one printed table: every "max:"/"changed:" line's w and s are of
 * its value, and the snapshot's value is of its key. */
static void tcheck(char *text, struct tcounts *c)
{
	char *line, *save, want[64], s[64];
	unsigned long long x, w, k;
	int seen = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "\tmax: ", 6) || !strncmp(line, "\tchanged: ", 10) ||
		    !strncmp(line, "\ttriggering value ", 18))
			c->prints += !seen++;
		if (sscanf(line, "\tmax: %llu w: %llu s: %63s", &x, &w, s) == 3 ||
		    sscanf(line, "\tchanged: %llu w: %llu s: %63s", &x, &w, s) == 3) {
			tstr(want, sizeof(want), x);
			c->tracks++;
			if (w != x || strcmp(s, want)) {
				fprintf(stderr, "torn: %s\n", line);
				c->bad++;
			}
		}
		if (sscanf(line, "\ttriggering value { onmax($m) }: %llu\ttriggered by event "
			   "with key: { k: %llu }", &x, &k) == 2) {
			c->snaps++;
			if (x % KEYS != k) {
				fprintf(stderr, "snapshot of another entry: %s\n", line);
				c->bad++;
			}
		}
	}
}

/* THREADS trackers, and this thread printing the table meanwhile, until
 * PRINTS of the prints showed something saved. */
static void track_run(const char *trigger, struct tcounts *c)
{
	static const struct utrace__hist_env env;
	struct utrace__hist_error err;
	struct utrace__hist *h;
	struct utrace__hist_map *m;
	pthread_t t[THREADS];
	struct tjob j[THREADS];
	int i, stop = 0;

	CHECK_INT(utrace__hist_parse_env(trigger, tfields, 4, &env, &h, &err), ==, 0);
	m = utrace__hist_map_new(h);
	CHECK(m);
	for (i = 0; i < THREADS; i++) {
		j[i] = (struct tjob){ m, (unsigned int)i, &stop };
		CHECK_INT(pthread_create(&t[i], NULL, tracker, &j[i]), ==, 0);
	}
	memset(c, 0, sizeof(*c));
	while (c->prints < PRINTS) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		CHECK(f);
		CHECK_INT(utrace__hist_print(m, NULL, f), ==, 0);
		fclose(f);
		tcheck(text, c);
		free(text);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	utrace__hist_map_free(m);
	utrace__hist_free(h);
}

TEST(onmax_save_prints_one_events_fields)
{
	struct tcounts c;

	track_run("hist:keys=k:m=v:onmax($m).save(w,s)", &c);
	CHECK_INT(c.bad, ==, 0);
	CHECK_INT(c.tracks, >=, KEYS);
}

TEST(onchange_save_prints_one_events_fields)
{
	struct tcounts c;

	track_run("hist:keys=k:m=v:onchange($m).save(w,s)", &c);
	CHECK_INT(c.bad, ==, 0);
	CHECK_INT(c.tracks, >=, KEYS);
}

TEST(onmax_snapshot_keeps_its_entry)
{
	struct tcounts c;

	track_run("hist:keys=k:m=v:onmax($m).snapshot()", &c);
	CHECK_INT(c.bad, ==, 0);
	CHECK_INT(c.snaps, >=, 1);
}

/* ---- a string variable read by another trigger while written ---- */

static struct utrace__hist *sv_owner;

static int sv_find_var(void *arg, const char *system, const char *event, const char *name,
		       const void **owner, unsigned int *idx, const struct utrace__hist_var **var)
{
	unsigned int i;

	(void)arg;
	(void)system;
	(void)event;
	for (i = 0; i < sv_owner->nr_vars; i++)
		if (!strcmp(sv_owner->vars[i].name, name)) {
			*owner = sv_owner;
			*idx = i;
			*var = &sv_owner->vars[i];
			return 0;
		}
	return -ENOENT;
}

static void *sv_get_synth(void *arg, const char *name, const struct utrace_event_field **f,
			  unsigned int *nr)
{
	static const struct utrace_event_field sf[] = {
		{ "u64", "v", 8, 8, 0, UTRACE_FIELD_PLAIN, 0 },
		{ "char", "s", 16, 8, 1, UTRACE_FIELD_STRING, 0 },
	};

	(void)arg;
	(void)name;
	*f = sf;
	*nr = 2;
	return (void *)sf;
}

static bool sv_find_event(void *arg, const char *system, const char *event)
{
	(void)arg;
	(void)system;
	(void)event;
	return true;
}

struct svjob {
	struct utrace__hist_map *a, *b;
	unsigned int id;
	int *stop;
	unsigned long long read, bad;
};

/* Writers set the string variable of trigger a (THREADS - 1 of them, each
 * its own values); the last thread reads it through trigger b's
 * onmatch() parameter, which must be one event's whole string. */
static void *sv_thread(void *arg)
{
	struct svjob *j = arg;
	struct utrace__hist_ctx ctx = { .comm = "sv" };
	static __thread struct utrace__hist_fire fire;
	struct utrace__hist_map *maps[1] = { j->a };
	struct trec r = { 0 };
	unsigned long long i, n;
	char want[64];

	for (i = 1; !__atomic_load_n(j->stop, __ATOMIC_RELAXED); i++) {
		r.v = i * THREADS + j->id;
		r.k = (unsigned int)(r.v % KEYS);
		if (j->id + 1 < THREADS) {
			tstr(r.s, sizeof(r.s), r.v);
			utrace__hist_add_vars(j->a, NULL, &r, sizeof(r), &ctx, NULL, &fire);
			continue;
		}
		if (utrace__hist_add_vars(j->b, NULL, &r, sizeof(r), &ctx, maps, &fire) <= 0)
			continue;
		__atomic_fetch_add(&j->read, 1, __ATOMIC_RELAXED);
		n = strtoull((const char *)(uintptr_t)fire.params[0][1], NULL, 10);
		tstr(want, sizeof(want), n);
		if (strcmp(want, (const char *)(uintptr_t)fire.params[0][1])) {
			fprintf(stderr, "torn: %s\n", (const char *)(uintptr_t)fire.params[0][1]);
			j->bad++;
		}
	}
	return NULL;
}

TEST(string_variables_are_read_whole)
{
	static const struct utrace__hist_env env = {
		NULL, sv_find_var, sv_get_synth, NULL, sv_find_event,
	};
	struct utrace__hist_error err;
	struct utrace__hist *a, *b;
	struct utrace__hist_map *ma, *mb;
	pthread_t t[THREADS];
	struct svjob j[THREADS];
	int i, stop = 0;

	CHECK_INT(utrace__hist_parse_env("hist:keys=k:sv=s", tfields, 4, &env, &a, &err), ==, 0);
	CHECK(a->vars[0].is_str);
	CHECK_STR(a->vars[0].type, "char[24]");
	sv_owner = a;
	CHECK_INT(utrace__hist_parse_env("hist:keys=k:onmatch(x.y).sv(v,$sv)", tfields, 4, &env,
					 &b, &err), ==, 0);
	ma = utrace__hist_map_new(a);
	mb = utrace__hist_map_new(b);
	CHECK(ma && mb);
	for (i = 0; i < THREADS; i++) {
		j[i] = (struct svjob){ ma, mb, (unsigned int)i, &stop, 0, 0 };
		CHECK_INT(pthread_create(&t[i], NULL, sv_thread, &j[i]), ==, 0);
	}
	while (__atomic_load_n(&j[THREADS - 1].read, __ATOMIC_RELAXED) < 20000)
		sched_yield();
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK_INT(j[THREADS - 1].bad, ==, 0);
	utrace__hist_map_free(ma);
	utrace__hist_map_free(mb);
	utrace__hist_free(b);
	utrace__hist_free(a);
}

TEST_MAIN()
