/* SPDX-License-Identifier: MIT */
/*
 * Export to Perfetto (utrace convert --format perfetto): a protobuf
 * trace, `Trace { repeated TracePacket packet = 1; }`, of TrackEvents, for
 * ui.perfetto.dev and trace_processor.  The field numbers are those of
 * Perfetto's protos/perfetto/trace/ (trace_packet.proto, the
 * track_event/ protos, interned_data/interned_data.proto,
 * clock_snapshot.proto); tests/data/perfetto-subset.proto holds the part
 * used here.  All packets are on one sequence (trusted_packet_sequence_id
 * 1), in this order:
 *
 *   1. the clock: a ClockSnapshot of CLOCK_MONOTONIC (3) and
 *      CLOCK_REALTIME (1) at the start of the recording, with
 *      primary_trace_clock MONOTONIC, so that the trace's times are the
 *      file's, and wall-clock time is known; SEQ_INCREMENTAL_STATE_CLEARED;
 *      TracePacketDefaults { timestamp_clock_id: 3 } for every packet after
 *   2. a TrackDescriptor per process (ProcessDescriptor pid, process_name)
 *      and per thread (ThreadDescriptor pid, tid, thread_name)
 *   3. each event a TrackEvent on its thread's track: TYPE_INSTANT, or
 *      TYPE_SLICE_BEGIN / TYPE_SLICE_END for a --slice pair
 *      (export-walk.c), its system as category, its fields as
 *      debug_annotations (int_value, uint_value, string_value,
 *      array_values); names, categories and annotation names interned
 *      (InternedData in the packet of the first event that uses them,
 *      SEQ_NEEDS_INCREMENTAL_STATE); events lost while recording an
 *      instant "lost_events" (category "utrace", annotation count)
 *   4. a --counter: a TrackDescriptor with a CounterDescriptor under the
 *      process's track, before its first value; each value a TYPE_COUNTER
 *      TrackEvent with counter_value (double_counter_value past INT64_MAX)
 *   5. the call stack of an event (record -g's ftrace:stack / stack_ref,
 *      the stacktrace trigger's ftrace:user_stack, each the record after
 *      its event on the same thread) is no event of its own: the event's
 *      TrackEvent gets callstack_iid, a Callstack interned with its Frames
 *      and their function names (InternedData callstacks, frames,
 *      function_names; profile_common.proto), frames outermost first.  A
 *      frame is named as utrace script names it, without the offset
 *      (utrace__stack_frame_name()); one frame per distinct name, so
 *      that the flame graphs of the Perfetto UI add up by function.  The
 *      event's packet is therefore held until the record after it
 *      (pf->pend: its TrackEvent's fields; the packet is made then, its
 *      InternedData holding the format's names and the stack's).
 *
 * Strings are UTF-8, as protobuf's string type wants: a byte that is not
 * part of a UTF-8 character becomes the code point of its number, as in
 * the JSON of `utrace script --json`.
 *
 * Track uuids are small numbers, one varint byte for most: thread i is
 * i + 1, then the processes, then the counter tracks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export-walk.h"
#include "hash.h"
#include "protobuf.h"
#include "stacktab.h"

/* The field numbers (Perfetto's protos). */
enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_CLOCK_SNAPSHOT = 6,
	TP_TIMESTAMP = 8,
	TP_TRUSTED_SEQ_ID = 10,
	TP_TRACK_EVENT = 11,
	TP_INTERNED_DATA = 12,
	TP_SEQUENCE_FLAGS = 13,
	TP_TIMESTAMP_CLOCK_ID = 58,
	TP_DEFAULTS = 59,
	TP_TRACK_DESCRIPTOR = 60,
	TP_FIRST_PACKET_ON_SEQUENCE = 87,
	/* TracePacketDefaults */
	TPD_TIMESTAMP_CLOCK_ID = 58,
	/* ClockSnapshot, ClockSnapshot.Clock */
	CS_CLOCKS = 1,
	CS_PRIMARY_TRACE_CLOCK = 2,
	CLK_ID = 1,
	CLK_TIMESTAMP = 2,
	/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,
	PD_PID = 1,
	PD_PROCESS_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_THREAD_NAME = 5,
	/* TrackEvent */
	TE_CATEGORY_IIDS = 3,
	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_CATEGORIES = 22,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_CALLSTACK_IID = 56,
	/* DebugAnnotation */
	DA_NAME_IID = 1,
	DA_UINT_VALUE = 3,
	DA_INT_VALUE = 4,
	DA_STRING_VALUE = 6,
	DA_NAME = 10,
	DA_ARRAY_VALUES = 12,
	/* InternedData; EventCategory, EventName, DebugAnnotationName */
	ID_EVENT_CATEGORIES = 1,
	ID_EVENT_NAMES = 2,
	ID_DEBUG_ANNOTATION_NAMES = 3,
	ID_FUNCTION_NAMES = 5,
	ID_FRAMES = 6,
	ID_CALLSTACKS = 7,
	IID = 1,
	IID_NAME = 2,
	/* InternedString (str), Frame, Callstack (profile_common.proto) */
	IS_STR = 2,
	FR_FUNCTION_NAME_ID = 2,
	CST_FRAME_IDS = 2,
};

#define MAX_FRAMES 1024

enum {
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,
	CLOCK_REALTIME_ID = 1,
	CLOCK_MONOTONIC_ID = 3,
	SEQ_ID = 1,
};

/* Interned strings of one kind: string -> iid (1, 2, ...). */
struct intern {
	char **keys;                     /* [iid - 1] */
	size_t nr, cap;
	struct utrace__table index;      /* the strings' hashes to iid - 1 */
};

/* A format's interned ids (the walk's xfmt->user). */
struct pf_fmt {
	uint64_t name_iid, cat_iid;
	bool fresh_name, fresh_cat;      /* to be defined ... */
	bool defined;                    /* ... in the packet of its first event */
	size_t nr_fields;
	struct {
		uint64_t iid;
		bool fresh;
	} field[];
};

struct pf_out {
	struct intern cats, names, anames;
	bool *counter_made;              /* [counter * nr_procs + proc] */
	/* call stacks: function names (a frame's iid is its name's), and
	 * callstacks keyed by their frame iids */
	struct intern funcs, stacks;
	struct utrace__stacktab tab;
	/* the event held until the record after it (see 5. above) */
	struct utrace__obuf pend;        /* its TrackEvent's fields */
	bool pending;
	uint64_t pend_time;
	size_t pend_thread;
	struct pf_fmt *pend_f;           /* its format's names to define, */
	const struct utrace__xfmt *pend_xf;  /* or NULL */
	struct utrace__obuf fresh;       /* the stack's InternedData entries */
	struct utrace__obuf post;        /* its counters' packets, after it */
	uint64_t pend_stack;             /* its callstack_iid, 0: none */
	uint64_t *iids;                  /* [MAX_FRAMES] */
};

/* --- interning --- */

/* The iid of s; *fresh when it is new.  0: out of memory. */
static uint64_t intern(struct intern *t, const char *s, bool *fresh)
{
	uint64_t h = utrace__hash_str(UTRACE_HASH_INIT, s);
	size_t pos = utrace__table_start(&t->index, h), i;
	char *k;

	*fresh = false;
	while (utrace__table_next(&t->index, h, &pos, &i))
		if (!strcmp(t->keys[i], s))
			return i + 1;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		char **n = realloc(t->keys, cap * sizeof(*n));

		if (!n)
			return 0;
		t->keys = n;
		t->cap = cap;
	}
	k = strdup(s);
	if (!k || utrace__table_add(&t->index, h, t->nr) < 0) {
		free(k);
		return 0;
	}
	t->keys[t->nr++] = k;
	*fresh = true;
	return t->nr;
}

static void intern_free(struct intern *t)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		free(t->keys[i]);
	free(t->keys);
	utrace__table_free(&t->index);
}

/* --- writing --- */

/* A string field, as UTF-8. */
static void pb_str(struct utrace__obuf *b, uint32_t field, const char *s, size_t n)
{
	size_t i, at;

	for (i = 0; i < n && !((unsigned char)s[i] & 0x80); i++)
		;
	if (i == n) {
		utrace__pb_bytes(b, field, s, n);
		return;
	}
	at = utrace__pb_begin(b, field);
	utrace__ob_utf8(b, s, n);
	utrace__pb_end(b, at);
}

static void pb_cstr(struct utrace__obuf *b, uint32_t field, const char *s)
{
	pb_str(b, field, s, strlen(s));
}

static uint64_t thread_uuid(size_t thread)
{
	return thread + 1;
}

static uint64_t proc_uuid(const struct utrace__xwalk *w, size_t proc)
{
	return w->nr_threads + 1 + proc;
}

static uint64_t counter_uuid(const struct utrace__xwalk *w, size_t c, size_t proc)
{
	return w->nr_threads + w->nr_procs + 1 + c * w->nr_procs + proc;
}

/* A packet's start: its key, time (0: none) and sequence; returns where
 * it starts, for utrace__pb_end(). */
static size_t packet_begin(struct utrace__obuf *b, uint64_t time)
{
	size_t at = utrace__pb_begin(b, TRACE_PACKET);

	if (time)
		utrace__pb_uint(b, TP_TIMESTAMP, time);
	utrace__pb_uint(b, TP_TRUSTED_SEQ_ID, SEQ_ID);
	return at;
}

static void put_clock(struct utrace__obuf *b, uint32_t id, uint64_t ts)
{
	size_t at = utrace__pb_begin(b, CS_CLOCKS);

	utrace__pb_uint(b, CLK_ID, id);
	utrace__pb_uint(b, CLK_TIMESTAMP, ts);
	utrace__pb_end(b, at);
}

static void pf_start(struct utrace__xwalk *w, uint64_t first)
{
	struct pf_out *pf = w->ctx;
	struct utrace__obuf *b = &w->ob;
	const struct utrace__tf_process *p;
	const struct utrace__tf_thread *t;
	uint64_t real, mono;
	size_t i, pk, m, d;

	pf->counter_made = calloc(w->nr_counters * w->nr_procs + 1, sizeof(bool));
	if (!pf->counter_made) {
		b->nomem = true;
		return;
	}
	utrace__tf_start_time(w->tf, &real, &mono);
	if (!mono)
		mono = first;

	/* 1. the clock */
	pk = packet_begin(b, mono);
	utrace__pb_uint(b, TP_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC_ID);
	utrace__pb_uint(b, TP_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	utrace__pb_uint(b, TP_FIRST_PACKET_ON_SEQUENCE, 1);
	m = utrace__pb_begin(b, TP_DEFAULTS);
	utrace__pb_uint(b, TPD_TIMESTAMP_CLOCK_ID, CLOCK_MONOTONIC_ID);
	utrace__pb_end(b, m);
	m = utrace__pb_begin(b, TP_CLOCK_SNAPSHOT);
	put_clock(b, CLOCK_MONOTONIC_ID, mono);
	if (real)
		put_clock(b, CLOCK_REALTIME_ID, real);
	utrace__pb_uint(b, CS_PRIMARY_TRACE_CLOCK, CLOCK_MONOTONIC_ID);
	utrace__pb_end(b, m);
	utrace__pb_end(b, pk);

	/* 2. the processes and threads */
	for (i = 0; i < w->nr_procs && (p = w->proc[i]); i++) {
		pk = packet_begin(b, first);
		m = utrace__pb_begin(b, TP_TRACK_DESCRIPTOR);
		utrace__pb_uint(b, TD_UUID, proc_uuid(w, i));
		d = utrace__pb_begin(b, TD_PROCESS);
		utrace__pb_uint(b, PD_PID, p->pid);
		if (p->comm && p->comm[0])
			pb_cstr(b, PD_PROCESS_NAME, p->comm);
		utrace__pb_end(b, d);
		utrace__pb_end(b, m);
		utrace__pb_end(b, pk);
	}
	for (i = 0; i < w->nr_threads && (t = w->thr[i]); i++) {
		pk = packet_begin(b, first);
		m = utrace__pb_begin(b, TP_TRACK_DESCRIPTOR);
		utrace__pb_uint(b, TD_UUID, thread_uuid(i));
		d = utrace__pb_begin(b, TD_THREAD);
		utrace__pb_uint(b, THD_PID, t->proc->pid);
		utrace__pb_uint(b, THD_TID, utrace__xw_tid(t));
		if (utrace__xw_thread_name(t))
			pb_cstr(b, THD_THREAD_NAME, utrace__xw_thread_name(t));
		utrace__pb_end(b, d);
		utrace__pb_end(b, m);
		utrace__pb_end(b, pk);
	}
}

/* The interned ids of a format, made on its first event; NULL: no memory. */
static struct pf_fmt *pf_fmt_get(struct pf_out *pf, struct utrace__xfmt *xf)
{
	struct pf_fmt *f;
	size_t i;

	if (xf->user)
		return xf->user;
	f = calloc(1, sizeof(*f) + xf->nr_fields * sizeof(f->field[0]));
	if (!f)
		return NULL;
	f->nr_fields = xf->nr_fields;
	f->cat_iid = intern(&pf->cats, xf->e->system, &f->fresh_cat);
	f->name_iid = intern(&pf->names, xf->e->name, &f->fresh_name);
	for (i = 0; i < xf->nr_fields; i++)
		f->field[i].iid = intern(&pf->anames, xf->fields[i].name, &f->field[i].fresh);
	if (!f->cat_iid || !f->name_iid) {
		free(f);
		return NULL;
	}
	for (i = 0; i < xf->nr_fields; i++)
		if (!f->field[i].iid) {
			free(f);
			return NULL;
		}
	xf->user = f;
	return f;
}

static void put_interned(struct utrace__obuf *b, uint32_t field, uint64_t iid, const char *s)
{
	size_t at = utrace__pb_begin(b, field);

	utrace__pb_uint(b, IID, iid);
	pb_cstr(b, IID_NAME, s);
	utrace__pb_end(b, at);
}

/* The InternedData entries of what the format's first event defines. */
static void put_fresh(struct utrace__obuf *b, struct pf_fmt *f, const struct utrace__xfmt *xf)
{
	size_t i;

	if (f->fresh_cat)
		put_interned(b, ID_EVENT_CATEGORIES, f->cat_iid, xf->e->system);
	if (f->fresh_name)
		put_interned(b, ID_EVENT_NAMES, f->name_iid, xf->e->name);
	for (i = 0; i < f->nr_fields; i++)
		if (f->field[i].fresh)
			put_interned(b, ID_DEBUG_ANNOTATION_NAMES, f->field[i].iid,
				     xf->fields[i].name);
}

static void put_num(struct utrace__obuf *b, uint64_t v, bool is_signed)
{
	if (is_signed)
		utrace__pb_int(b, DA_INT_VALUE, (int64_t)v);
	else
		utrace__pb_uint(b, DA_UINT_VALUE, v);
}

static void put_annotations(struct utrace__obuf *b, const struct pf_fmt *f,
			    const struct utrace__xev *ev)
{
	const struct utrace__xfmt *xf = ev->xf;
	struct utrace__fval v;
	size_t i, at, e;
	uint32_t k;

	for (i = 0; i < xf->nr_fields; i++) {
		at = utrace__pb_begin(b, TE_DEBUG_ANNOTATIONS);
		utrace__pb_uint(b, DA_NAME_IID, f->field[i].iid);
		utrace__fdesc_read(&xf->fields[i], ev->r, &v);
		if (v.kind == UTRACE__FVAL_NUM) {
			put_num(b, v.num, v.is_signed);
		} else if (v.kind == UTRACE__FVAL_STR) {
			pb_str(b, DA_STRING_VALUE, (const char *)v.p, v.len);
		} else {
			for (k = 0; k < v.len / v.elem_size; k++) {
				e = utrace__pb_begin(b, DA_ARRAY_VALUES);
				put_num(b, utrace__fval_elem(&v, k), v.is_signed);
				utrace__pb_end(b, e);
			}
		}
		utrace__pb_end(b, at);
	}
}

/* The held event's packet, into the output. */
static void pend_flush(struct utrace__xwalk *w, struct pf_out *pf)
{
	struct utrace__obuf *b = &w->ob;
	size_t pk, at;

	if (!pf->pending)
		return;
	pf->pending = false;
	pk = packet_begin(b, pf->pend_time);
	utrace__pb_uint(b, TP_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
	if (pf->pend_xf || pf->fresh.len) {
		at = utrace__pb_begin(b, TP_INTERNED_DATA);
		if (pf->pend_xf)
			put_fresh(b, pf->pend_f, pf->pend_xf);
		utrace__ob_put(b, pf->fresh.p, pf->fresh.len);
		utrace__pb_end(b, at);
	}
	at = utrace__pb_begin(b, TP_TRACK_EVENT);
	utrace__ob_put(b, pf->pend.p, pf->pend.len);
	if (pf->pend_stack)
		utrace__pb_uint(b, TE_CALLSTACK_IID, pf->pend_stack);
	utrace__pb_end(b, at);
	utrace__pb_end(b, pk);
	utrace__ob_put(b, pf->post.p, pf->post.len);
	if (pf->pend.nomem || pf->fresh.nomem || pf->post.nomem)
		b->nomem = true;
	pf->pend.len = pf->fresh.len = pf->post.len = 0;
	pf->pend_stack = 0;
	pf->pend_xf = NULL;
}

/* Is the event a call stack?  Which kind (NONE: the trigger's user_stack). */
static bool is_stack(const struct utrace__xev *ev, enum utrace__stack_kind *kind)
{
	const struct utrace__fmt *e = ev->xf->e;

	if (ev->it->kernel)
		return false;
	*kind = utrace__stack_kind(e->system, e->name);
	return *kind != UTRACE__STACK_NONE ||
	       (!strcmp(e->system, "ftrace") && !strcmp(e->name, "user_stack"));
}

/*
 * The stack record ev, of the held event's thread: its callstack (and
 * the names, frames and callstack it defines) given to the held event.
 * A stack with no event before it on its thread is left out.
 */
static void put_stack(struct utrace__xwalk *w, struct pf_out *pf, const struct utrace__xev *ev,
		      enum utrace__stack_kind kind)
{
	const struct utrace__tf_item *it = ev->it;
	const uint64_t *ips = NULL;
	uint64_t v[8], iid;
	uint32_t nr = 0, i;
	struct utrace__obuf key = { 0 };
	bool fresh;
	char name[512];
	size_t at;

	if (!pf->pending || pf->pend_thread != ev->thread || pf->pend_stack)
		return;
	if (kind != UTRACE__STACK_NONE) {
		if (utrace__stacktab_item(&pf->tab, it->proc, kind, it->rec, it->len, &ips,
					  &nr) == -ENOMEM) {
			w->ob.nomem = true;
			return;
		}
	} else {
		for (; nr < 8 && 16 + 8 * (nr + 1) <= it->len; nr++) {
			memcpy(&v[nr], it->rec + 16 + 8 * nr, 8);
			if (!v[nr])
				break;
		}
		ips = v;
	}
	if (!ips || !nr)
		return;
	if (nr > MAX_FRAMES)
		nr = MAX_FRAMES;         /* the innermost frames */
	for (i = 0; i < nr; i++) {
		utrace__stack_frame_name(it->proc, ips[i], false, name, sizeof(name));
		iid = intern(&pf->funcs, name, &fresh);
		if (!iid) {
			w->ob.nomem = true;
			return;
		}
		if (fresh) {
			at = utrace__pb_begin(&pf->fresh, ID_FUNCTION_NAMES);
			utrace__pb_uint(&pf->fresh, IID, iid);
			pb_cstr(&pf->fresh, IS_STR, name);
			utrace__pb_end(&pf->fresh, at);
			at = utrace__pb_begin(&pf->fresh, ID_FRAMES);
			utrace__pb_uint(&pf->fresh, IID, iid);
			utrace__pb_uint(&pf->fresh, FR_FUNCTION_NAME_ID, iid);
			utrace__pb_end(&pf->fresh, at);
		}
		pf->iids[i] = iid;
		utrace__ob_printf(&key, "%llx,", (unsigned long long)iid);
	}
	utrace__ob_putc(&key, '\0');
	iid = key.nomem ? 0 : intern(&pf->stacks, key.p, &fresh);
	free(key.p);
	if (!iid) {
		w->ob.nomem = true;
		return;
	}
	if (fresh) {
		/* frame_ids: outermost first, not packed (proto2's
		 * repeated uint64, as Perfetto's own writers put it) */
		at = utrace__pb_begin(&pf->fresh, ID_CALLSTACKS);
		utrace__pb_uint(&pf->fresh, IID, iid);
		for (i = nr; i-- > 0;)
			utrace__pb_uint(&pf->fresh, CST_FRAME_IDS, pf->iids[i]);
		utrace__pb_end(&pf->fresh, at);
	}
	pf->pend_stack = iid;
}

static void pf_event(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	struct pf_out *pf = w->ctx;
	struct utrace__obuf *b = &pf->pend;
	enum utrace__stack_kind kind;
	struct pf_fmt *f;

	if (is_stack(ev, &kind)) {
		put_stack(w, pf, ev, kind);
		pend_flush(w, pf);
		return;
	}
	pend_flush(w, pf);
	f = pf_fmt_get(pf, ev->xf);
	if (!f) {
		w->ob.nomem = true;
		return;
	}
	pf->pending = true;
	pf->pend_time = ev->it->time;
	pf->pend_thread = ev->thread;
	if (!f->defined) {
		bool any = f->fresh_cat || f->fresh_name;
		size_t i;

		for (i = 0; i < f->nr_fields; i++)
			any |= f->field[i].fresh;
		if (any) {
			pf->pend_f = f;
			pf->pend_xf = ev->xf;
		}
		f->defined = true;
	}
	utrace__pb_uint(b, TE_TYPE, ev->kind == UTRACE__X_BEGIN ? TYPE_SLICE_BEGIN :
			ev->kind == UTRACE__X_END ? TYPE_SLICE_END : TYPE_INSTANT);
	utrace__pb_uint(b, TE_TRACK_UUID, thread_uuid(ev->thread));
	if (ev->kind != UTRACE__X_END) {
		utrace__pb_uint(b, TE_CATEGORY_IIDS, f->cat_iid);
		utrace__pb_uint(b, TE_NAME_IID, f->name_iid);
	}
	put_annotations(b, f, ev);
}

static void pf_counter(struct utrace__xwalk *w, const struct utrace__xev *ev, size_t c,
		       const struct utrace__fval *v)
{
	struct pf_out *pf = w->ctx;
	/* after the event, which may be held for its stack */
	struct utrace__obuf *b = pf->pending ? &pf->post : &w->ob;
	uint64_t uuid = counter_uuid(w, c, ev->proc);
	size_t pk, m;

	if (!pf->counter_made[c * w->nr_procs + ev->proc]) {
		pf->counter_made[c * w->nr_procs + ev->proc] = true;
		pk = packet_begin(b, ev->it->time);
		m = utrace__pb_begin(b, TP_TRACK_DESCRIPTOR);
		utrace__pb_uint(b, TD_UUID, uuid);
		utrace__pb_uint(b, TD_PARENT_UUID, proc_uuid(w, ev->proc));
		pb_cstr(b, TD_NAME, w->counter_text[c]);
		utrace__pb_end(b, utrace__pb_begin(b, TD_COUNTER));
		utrace__pb_end(b, m);
		utrace__pb_end(b, pk);
	}
	pk = packet_begin(b, ev->it->time);
	m = utrace__pb_begin(b, TP_TRACK_EVENT);
	utrace__pb_uint(b, TE_TYPE, TYPE_COUNTER);
	utrace__pb_uint(b, TE_TRACK_UUID, uuid);
	if (v->is_signed || v->num <= INT64_MAX)
		utrace__pb_int(b, TE_COUNTER_VALUE, (int64_t)v->num);
	else
		utrace__pb_double(b, TE_DOUBLE_COUNTER_VALUE, (double)v->num);
	utrace__pb_end(b, m);
	utrace__pb_end(b, pk);
}

static void pf_lost(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	struct utrace__obuf *b = &w->ob;
	size_t pk, te, da;

	pend_flush(w, w->ctx);           /* packets in time order */
	pk = packet_begin(b, ev->it->time);
	te = utrace__pb_begin(b, TP_TRACK_EVENT);
	utrace__pb_uint(b, TE_TYPE, TYPE_INSTANT);
	utrace__pb_uint(b, TE_TRACK_UUID, thread_uuid(ev->thread));
	pb_cstr(b, TE_CATEGORIES, "utrace");
	pb_cstr(b, TE_NAME, "lost_events");
	if (ev->it->lost) {
		da = utrace__pb_begin(b, TE_DEBUG_ANNOTATIONS);
		pb_cstr(b, DA_NAME, "count");
		utrace__pb_uint(b, DA_UINT_VALUE, ev->it->lost);
		utrace__pb_end(b, da);
	}
	utrace__pb_end(b, te);
	utrace__pb_end(b, pk);
}

static void pf_end(struct utrace__xwalk *w)
{
	pend_flush(w, w->ctx);
}

static const struct utrace__xwriter perfetto_writer = {
	.start = pf_start,
	.event = pf_event,
	.counter = pf_counter,
	.lost = pf_lost,
	.end = pf_end,
};

int utrace__export_perfetto(struct utrace__tf *tf, const char *out,
			    const struct utrace__export_opts *o)
{
	struct pf_out pf = { 0 };
	int status;

	pf.iids = malloc(MAX_FRAMES * sizeof(*pf.iids));
	if (!pf.iids) {
		utrace__say("utrace: out of memory\n");
		return 1;
	}
	status = utrace__export_walk(tf, out, o, &perfetto_writer, &pf);
	intern_free(&pf.funcs);
	intern_free(&pf.stacks);
	utrace__stacktab_free(&pf.tab);
	free(pf.pend.p);
	free(pf.fresh.p);
	free(pf.post.p);
	free(pf.iids);
	intern_free(&pf.cats);
	intern_free(&pf.names);
	intern_free(&pf.anames);
	free(pf.counter_made);
	return status;
}
