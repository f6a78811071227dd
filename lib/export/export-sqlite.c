/* SPDX-License-Identifier: MIT */
/*
 * Export to SQLite (utrace convert --format sqlite): one database file
 * that `sqlite3` and any SQL tool query (docs/utrace-convert.1).
 *
 *     events(id, system, name, table_name, format)   one row per distinct format
 *     <system>_<name>(time_ns, pid, tid, cpu, <one column per field>)
 *     processes(pid, ppid, comm, exe)   threads(tid, pid, comm)
 *     lost(time_ns, pid, tid, cpu, count)             count NULL: not known
 *     all_events(time_ns, pid, tid, cpu, system, name, line)   a view, in time order
 *
 * A field is an INTEGER (numbers; an unsigned 64-bit value of 2^63 or
 * more is stored as the signed number of the same bits, as SQLite has no
 * unsigned type), TEXT (strings and char arrays) or BLOB (other arrays,
 * their bytes as in the record, little endian).  Table names are the
 * system and event names with every character other than a letter, digit
 * or '_' made '_' (and "_2", "_3" ... when two come out the same); column
 * names are the field names, "field_" in front of one that is the name of
 * a column before it.  Every name and string goes into SQL through
 * SQLite's own quoting (%w, %Q), values only through bound parameters.
 *
 * All rows go in one transaction through one prepared statement per
 * table, with the journal off (a failed export removes the file): the
 * events stream through, memory stays SQLite's page cache.
 *
 * Not part of libutrace-reader: the utrace tool links it (lib/meson.build),
 * so that no library depends on libsqlite3.
 */
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "export-walk.h"
#include "obuf.h"
#include "problems.h"

#define VIEW_CHUNK 400                  /* SQLite's compound SELECT limit is 500 */
#define BATCH 32                        /* rows of one INSERT */
#define MAX_PARAMS 999                  /* SQLite's smallest limit on ? */

/* A value of a row waiting for its INSERT: a number, or bytes in rowbuf. */
struct cell {
	int64_t num;
	size_t off;
	uint32_t n;
};

struct stable {
	char *name;                      /* the table's */
	sqlite3_stmt *ins;               /* INSERT of 'batch' rows */
	sqlite3_stmt *ins1;              /* of one row, for the rest */
	unsigned int batch, pending;     /* rows per INSERT, rows waiting */
	struct cell *cells;              /* pending * (nr + 4) of them */
	struct utrace__obuf bytes;       /* their strings and arrays */
	struct utrace__fdesc *xf;        /* a copy of the walk's (export-walk.h): the
					  * rows are flushed after it (kind only) */
	unsigned int nr;
	char **col;                      /* column names of the fields */
	const char *system, *event;
	char *select;                    /* its part of all_events */
};

struct sq {
	sqlite3 *db;
	const char *out, *name;
	struct stable **t;               /* by format id */
	size_t cap_t;
	struct stable **all;             /* in format order */
	size_t nr_all;
	sqlite3_stmt *lost;
	bool failed;                     /* an SQLite error was said */
};

/* A new file that nothing else opens, removed if the export fails: no
 * journal, no sync, no locking on each write; large pages. */
static const char schema[] =
	"PRAGMA page_size = 65536;\n"
	"PRAGMA journal_mode = OFF;\n"
	"PRAGMA locking_mode = EXCLUSIVE;\n"
	"PRAGMA synchronous = OFF;\n"
	"CREATE TABLE events(id INTEGER PRIMARY KEY, system TEXT, name TEXT, "
	"table_name TEXT, format TEXT);\n"
	"CREATE TABLE processes(pid INTEGER, ppid INTEGER, comm TEXT, exe TEXT);\n"
	"CREATE TABLE threads(tid INTEGER, pid INTEGER, comm TEXT);\n"
	"CREATE TABLE lost(time_ns INTEGER, pid INTEGER, tid INTEGER, cpu INTEGER, "
	"count INTEGER);\n"
	"BEGIN;\n";

/* Names an event's table may not take (compared without case). */
static const char *const reserved_tables[] = {
	"events", "processes", "threads", "lost", "all_events",
};

static const char *const fixed_cols[] = { "time_ns", "pid", "tid", "cpu" };

static int sq_error(struct sq *s, const char *what)
{
	if (!s->failed)
		utrace__say("utrace: cannot write '%s': %s: %s\n", s->out, what,
			    sqlite3_errmsg(s->db));
	s->failed = true;
	return -EIO;
}

static int exec(struct sq *s, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	if (!s->failed)
		utrace__say("utrace: cannot write '%s': %s\n", s->out,
			    msg ? msg : sqlite3_errmsg(s->db));
	s->failed = true;
	sqlite3_free(msg);
	return -EIO;
}

/* Whether 'name' is taken among n names (no case). */
static bool taken(const char *name, char *const *names, size_t n, const char *const *more,
		  size_t nmore)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcasecmp(names[i], name))
			return true;
	for (i = 0; i < nmore; i++)
		if (!strcasecmp(more[i], name))
			return true;
	return !strncasecmp(name, "sqlite_", 7);
}

/* 'base' (made free of all but letters, digits and '_' when 'sanitize'),
 * or base_2, base_3 ... : the first name not taken. */
static char *unique_name(const char *prefix, const char *base, bool sanitize,
			 char *const *names, size_t n, const char *const *more, size_t nmore)
{
	char *s, *p;
	int k;

	if (asprintf(&s, "%s%s", prefix, base) < 0)
		return NULL;
	for (p = s; sanitize && *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
	for (k = 2; taken(s, names, n, more, nmore); k++) {
		char *t;

		if (asprintf(&t, "%s%s_%d", prefix, base, k) < 0) {
			free(s);
			return NULL;
		}
		for (p = t; sanitize && *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_'))
				*p = '_';
		free(s);
		s = t;
	}
	return s;
}

static void table_free(struct stable *t)
{
	unsigned int i;

	if (!t)
		return;
	sqlite3_finalize(t->ins);
	sqlite3_finalize(t->ins1);
	free(t->cells);
	free(t->bytes.p);
	for (i = 0; t->col && i < t->nr; i++)
		free(t->col[i]);
	free(t->col);
	free(t->xf);
	sqlite3_free(t->select);
	free(t->name);
	free(t);
}

static const char *col_type(const struct utrace__fdesc *x)
{
	return x->kind == UTRACE__FVAL_NUM ? "INTEGER" : x->kind == UTRACE__FVAL_STR ? "TEXT" :
	       "BLOB";
}

/*
 * all_events: a UNION ALL of every event table (each table's SELECT made
 * with the table, t->select), each row with its system, name and a line
 * of its fields ("a=1 s=text b=<hex>"); in chunks of VIEW_CHUNK tables,
 * which SQLite allows in one compound SELECT.
 */
static char *table_select(const struct stable *t)
{
	sqlite3_str *q = sqlite3_str_new(NULL);
	unsigned int i;

	sqlite3_str_appendf(q, "SELECT time_ns, pid, tid, cpu, %Q AS system, %Q AS name, ",
			    t->system, t->event);
	if (!t->nr)
		sqlite3_str_appendall(q, "''");
	for (i = 0; i < t->nr; i++) {
		char *lit = sqlite3_mprintf("%s%s=", i ? " " : "", t->xf[i].name);

		sqlite3_str_appendf(q, "%s%Q || ", i ? " || " : "", lit);
		sqlite3_free(lit);
		if (t->xf[i].kind != UTRACE__FVAL_ARRAY)
			sqlite3_str_appendf(q, "\"%w\"", t->col[i]);
		else
			sqlite3_str_appendf(q, "hex(\"%w\")", t->col[i]);
	}
	sqlite3_str_appendf(q, " AS line FROM \"%w\"", t->name);
	return sqlite3_str_finish(q);
}

/* INSERT INTO t VALUES (?, ...), ... of 'rows' rows. */
static int prepare_insert(struct sq *s, struct stable *t, unsigned int rows,
			  sqlite3_stmt **st)
{
	sqlite3_str *q = sqlite3_str_new(s->db);
	unsigned int i, k;
	char *sql;
	int rc;

	sqlite3_str_appendf(q, "INSERT INTO \"%w\" VALUES", t->name);
	for (k = 0; k < rows; k++) {
		sqlite3_str_appendall(q, k ? ", (?" : " (?");
		for (i = 1; i < t->nr + 4; i++)
			sqlite3_str_appendall(q, ", ?");
		sqlite3_str_appendall(q, ")");
	}
	sql = sqlite3_str_finish(q);
	if (!sql)
		return -ENOMEM;
	rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	sqlite3_free(sql);
	return rc == SQLITE_OK ? 0 : sq_error(s, "cannot prepare an INSERT");
}

/* The table of a format, its row in events, its INSERTs. */
static int sq_format_put(struct sq *s, const struct utrace__xfmt *xf)
{
	const struct utrace__fmt *e = xf->e;
	struct stable *t = calloc(1, sizeof(*t)), **v;
	char *base = NULL, **names = NULL;
	sqlite3_str *q = NULL;
	unsigned int i;
	size_t k;
	int r = -ENOMEM;

	if (!t)
		return -ENOMEM;
	t->system = e->system;
	t->event = e->name;
	if (e->id >= s->cap_t) {
		size_t n = e->id + 64;

		v = realloc(s->t, n * sizeof(*v));
		if (!v)
			goto fail;
		memset(v + s->cap_t, 0, (n - s->cap_t) * sizeof(*v));
		s->t = v;
		s->cap_t = n;
	}
	v = realloc(s->all, (s->nr_all + 1) * sizeof(*v));
	if (!v)
		goto fail;
	s->all = v;
	t->nr = (unsigned int)xf->nr_fields;
	t->xf = malloc((t->nr + 1) * sizeof(*t->xf));
	names = calloc(s->nr_all + 1, sizeof(*names));
	if (t->xf)
		memcpy(t->xf, xf->fields, t->nr * sizeof(*t->xf));
	if (!t->xf || !names || asprintf(&base, "%s_%s", e->system, e->name) < 0)
		goto fail;
	for (k = 0; k < s->nr_all; k++)
		names[k] = s->all[k]->name;
	t->name = unique_name("", base, true, names, s->nr_all,
			      reserved_tables, sizeof(reserved_tables) / sizeof(reserved_tables[0]));
	t->col = calloc(t->nr ? t->nr : 1, sizeof(*t->col));
	if (!t->name || !t->col)
		goto fail;
	for (i = 0; i < t->nr; i++) {
		bool clash = taken(t->xf[i].name, t->col, i, fixed_cols, 4);

		t->col[i] = unique_name(clash ? "field_" : "", t->xf[i].name, false, t->col, i,
					fixed_cols, 4);
		if (!t->col[i])
			goto fail;
	}

	q = sqlite3_str_new(s->db);
	sqlite3_str_appendf(q, "CREATE TABLE \"%w\"(time_ns INTEGER, pid INTEGER, "
			    "tid INTEGER, cpu INTEGER", t->name);
	for (i = 0; i < t->nr; i++)
		sqlite3_str_appendf(q, ", \"%w\" %s", t->col[i], col_type(&t->xf[i]));
	sqlite3_str_appendf(q, ");\nINSERT INTO events VALUES(%u, %Q, %Q, %Q, %Q);",
			    e->id, e->system, e->name, t->name, e->first->text);
	{
		char *sql = sqlite3_str_finish(q);

		q = NULL;
		if (!sql)
			goto fail;
		r = exec(s, sql);
		sqlite3_free(sql);
		if (r < 0)
			goto fail;
		r = -ENOMEM;
	}
	/* Rows go in BATCH at a time: one statement's run costs about as
	 * much as the rows it inserts. */
	t->batch = MAX_PARAMS / (t->nr + 4);
	if (t->batch > BATCH)
		t->batch = BATCH;
	if (!t->batch)
		t->batch = 1;
	t->cells = calloc((size_t)t->batch * (t->nr + 4), sizeof(*t->cells));
	if (!t->cells)
		goto fail;
	r = prepare_insert(s, t, t->batch, &t->ins);
	if (!r)
		r = prepare_insert(s, t, 1, &t->ins1);
	if (r < 0)
		goto fail;
	r = -ENOMEM;
	/* the view's part now: the field names are libtraceevent's, gone
	 * once the reading ends */
	t->select = table_select(t);
	if (!t->select)
		goto fail;
	s->t[e->id] = t;
	s->all[s->nr_all++] = t;
	free(names);
	free(base);
	return 0;
fail:
	if (q)
		sqlite3_free(sqlite3_str_finish(q));
	free(names);
	free(base);
	table_free(t);
	return r;
}

static int step(struct sq *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : sq_error(s, "cannot insert a row");
}

static void bind_common(sqlite3_stmt *st, const struct utrace__tf_item *it)
{
	sqlite3_bind_int64(st, 1, (sqlite3_int64)it->time);
	sqlite3_bind_int64(st, 2, it->proc->pid);
	sqlite3_bind_int64(st, 3, it->thread->tid);
	sqlite3_bind_int64(st, 4, it->cpu);
}

/* Bind the pending rows from 'first' on to st (from its first ?). */
static void bind_rows(struct stable *t, sqlite3_stmt *st, unsigned int first, unsigned int n)
{
	unsigned int cols = t->nr + 4, k, i;
	int at = 1;

	for (k = first; k < first + n; k++)
		for (i = 0; i < cols; i++, at++) {
			const struct cell *c = &t->cells[k * cols + i];
			const char *p = t->bytes.p + c->off;

			if (i < 4 || t->xf[i - 4].kind == UTRACE__FVAL_NUM)
				sqlite3_bind_int64(st, at, c->num);
			else if (t->xf[i - 4].kind == UTRACE__FVAL_STR)
				sqlite3_bind_text(st, at, c->n ? p : "", (int)c->n, SQLITE_STATIC);
			else
				sqlite3_bind_blob(st, at, c->n ? p : "", (int)c->n, SQLITE_STATIC);
		}
}

/* Insert the rows waiting: a batch, or at the end one at a time. */
static int flush_rows(struct sq *s, struct stable *t)
{
	unsigned int k;
	int r = 0;

	if (t->pending == t->batch) {
		bind_rows(t, t->ins, 0, t->batch);
		r = step(s, t->ins);
	} else {
		for (k = 0; !r && k < t->pending; k++) {
			bind_rows(t, t->ins1, k, 1);
			r = step(s, t->ins1);
		}
	}
	t->pending = 0;
	t->bytes.len = 0;
	return r;
}

static int sq_event_put(struct sq *s, const struct utrace__xev *ev)
{
	const struct utrace__tf_item *it = ev->it;
	struct stable *t = s->t[ev->xf->e->id];
	struct cell *c = &t->cells[(size_t)t->pending * (t->nr + 4)];
	unsigned int i;

	c[0].num = (int64_t)it->time;
	c[1].num = it->proc->pid;
	c[2].num = it->thread->tid;
	c[3].num = it->cpu;
	for (i = 0; i < t->nr; i++) {
		struct utrace__fval v;

		utrace__fdesc_read(&t->xf[i], ev->r, &v);
		if (v.kind == UTRACE__FVAL_NUM) {
			c[i + 4].num = (int64_t)v.num;
			continue;
		}
		c[i + 4].off = t->bytes.len;
		c[i + 4].n = v.len;
		if (v.len)
			utrace__ob_put(&t->bytes, v.p, v.len);
	}
	if (t->bytes.nomem)
		return -ENOMEM;
	return ++t->pending == t->batch ? flush_rows(s, t) : 0;
}

static int sq_lost_put(struct sq *s, const struct utrace__tf_item *it)
{
	bind_common(s->lost, it);
	if (it->lost)
		sqlite3_bind_int64(s->lost, 5, (sqlite3_int64)it->lost);
	else
		sqlite3_bind_null(s->lost, 5);
	return step(s, s->lost);
}

/* The walk's steps; an SQLite error is said where it happens. */
static void sq_format(struct utrace__xwalk *w, struct utrace__xfmt *xf)
{
	int r = sq_format_put(w->ctx, xf);

	if (r < 0)
		w->err = r;
}

static void sq_event(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	int r = sq_event_put(w->ctx, ev);

	if (r < 0)
		w->err = r;
}

static void sq_lost(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	int r = sq_lost_put(w->ctx, ev->it);

	if (r < 0)
		w->err = r;
}

static const struct utrace__xwriter sq_writer = {
	.format = sq_format,
	.event = sq_event,
	.lost = sq_lost,
};

static int put_processes(struct sq *s, struct utrace__tf *tf)
{
	const struct utrace__tf_process *p;
	const struct utrace__tf_thread *th;
	sqlite3_stmt *st = NULL;
	size_t i;
	int r = 0;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO processes VALUES(?, ?, ?, ?)", -1, &st,
			       NULL) != SQLITE_OK)
		return sq_error(s, "cannot prepare an INSERT");
	for (i = 0; !r && (p = utrace__tf_process(tf, i)); i++) {
		sqlite3_bind_int64(st, 1, p->pid);
		sqlite3_bind_int64(st, 2, p->ppid);
		sqlite3_bind_text(st, 3, p->comm ? p->comm : "", -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, p->exe ? p->exe : "", -1, SQLITE_STATIC);
		r = step(s, st);
	}
	sqlite3_finalize(st);
	if (r || sqlite3_prepare_v2(s->db, "INSERT INTO threads VALUES(?, ?, ?)", -1, &st,
				    NULL) != SQLITE_OK)
		return r ? r : sq_error(s, "cannot prepare an INSERT");
	for (i = 0; !r && (th = utrace__tf_thread(tf, i)); i++) {
		const char *comm = th->comm && th->comm[0] ? th->comm :
				   th->proc->comm ? th->proc->comm : "";

		sqlite3_bind_int64(st, 1, th->tid);
		sqlite3_bind_int64(st, 2, th->proc->pid);
		sqlite3_bind_text(st, 3, comm, -1, SQLITE_STATIC);
		r = step(s, st);
	}
	sqlite3_finalize(st);
	return r;
}

static int put_view(struct sq *s)
{
	sqlite3_str *q = sqlite3_str_new(s->db);
	size_t k;
	char *sql;
	int r;

	sqlite3_str_appendall(q, "CREATE VIEW all_events AS SELECT * FROM (");
	if (!s->nr_all)
		sqlite3_str_appendall(q, "SELECT NULL AS time_ns, NULL AS pid, NULL AS tid, "
				      "NULL AS cpu, NULL AS system, NULL AS name, NULL AS line "
				      "WHERE 0");
	for (k = 0; k < s->nr_all; k++) {
		if (k % VIEW_CHUNK == 0)
			sqlite3_str_appendall(q, k ? ") UNION ALL SELECT * FROM (" : "");
		else
			sqlite3_str_appendall(q, " UNION ALL ");
		sqlite3_str_appendall(q, s->all[k]->select);
	}
	sqlite3_str_appendall(q, ") ORDER BY time_ns;");
	sql = sqlite3_str_finish(q);
	if (!sql)
		return -ENOMEM;
	r = exec(s, sql);
	sqlite3_free(sql);
	return r;
}

int utrace__export_sqlite(struct utrace__tf *tf, const char *out)
{
	struct sq s = { .out = out, .name = utrace__tf_name(tf) };
	struct stat st;
	int status = 0, r = 0, flags;
	size_t k;

	if (!utrace__tf_page_size(tf))
		return utrace__export_walk(tf, NULL, NULL, &sq_writer, &s) | 1;  /* says why */
	if (stat(out, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			utrace__say("utrace: '%s' is not a regular file: the database "
				    "replaces a file or makes a new one\n", out);
			return 1;
		}
		if (unlink(out) < 0) {
			utrace__say("utrace: cannot replace '%s': %s\n", out, strerror(errno));
			return 1;
		}
	}
	/* One thread: no mutex on each call and no memory statistics behind
	 * one (they cost 8% and more of the time).  SQLite takes the
	 * settings before its first use only; the tool has no other. */
	sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(out, &s.db, flags, NULL) != SQLITE_OK) {
		utrace__say("utrace: cannot open '%s': %s\n", out,
			    s.db ? sqlite3_errmsg(s.db) : "out of memory");
		sqlite3_close(s.db);
		return 1;
	}
	r = exec(&s, schema);
	if (!r && sqlite3_prepare_v2(s.db, "INSERT INTO lost VALUES(?, ?, ?, ?, ?)", -1,
				     &s.lost, NULL) != SQLITE_OK)
		r = sq_error(&s, "cannot prepare an INSERT");
	if (!r)
		r = put_processes(&s, tf);
	if (!r) {
		status = utrace__export_walk(tf, NULL, NULL, &sq_writer, &s);
		if (s.failed)
			r = -EIO;
	}
	for (k = 0; !r && k < s.nr_all; k++)
		r = flush_rows(&s, s.all[k]);
	if (!r)
		r = put_view(&s);
	if (!r)
		r = exec(&s, "COMMIT;");
	if (r == -ENOMEM)
		utrace__say("utrace: '%s': out of memory\n", s.name);
	sqlite3_finalize(s.lost);
	for (k = 0; k < s.nr_all; k++)
		table_free(s.all[k]);
	free(s.all);
	free(s.t);
	if (sqlite3_close(s.db) != SQLITE_OK && !r) {
		utrace__say("utrace: cannot write '%s': %s\n", out, sqlite3_errmsg(s.db));
		r = -EIO;
	}
	if (r < 0 || s.failed) {
		status = 1;
		unlink(out);             /* no half-written database */
	}
	return status;
}
