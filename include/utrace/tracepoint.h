/* SPDX-License-Identifier: MIT */
/*
 * utrace/tracepoint.h - kernel-style static tracepoints for user space.
 *
 * An events header (see samples/sample-trace.h) declares events with
 * TRACE_EVENT() and friends.  Every .c that includes it gets, per event:
 *
 *   void trace_<ev>(<proto>);                      fire the event
 *   bool trace_<ev>_enabled(void);                 is any probe attached?
 *   int  register_trace_<ev>(void (*fn)(void *data, <proto>), void *data);
 *   int  unregister_trace_<ev>(void (*fn)(void *data, <proto>), void *data);
 *
 * and the global
 *
 *   void tracepoint_synchronize_unregister(void);
 *
 * (These names are built with ## and cannot be grepped for.)  Exactly one
 * .c file defines CREATE_TRACE_POINTS before including the events header;
 * that file receives the definitions (include/utrace/define_trace.h).
 *
 * Cost while an event is off: one 5-byte NOP on x86-64 (jump labels, see
 * UTRACE__SITE below), else one load, one compare, one predicted branch;
 * no call.  Building with -DUTRACE_DISABLE turns every call site into an
 * empty inline function and registration into -ENOSYS.
 *
 * The part of this file inside the include guard declares the runtime
 * types; the part after it (re)defines the declaration-stage DSL macros,
 * because define_trace.h undefines them after each CREATE_TRACE_POINTS pass
 * (the kernel's linux/tracepoint.h does the same).
 */
#ifndef UTRACE_TRACEPOINT_H
#define UTRACE_TRACEPOINT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define UTRACE_VERSION_MAJOR 0
#define UTRACE_VERSION_MINOR 1
#define UTRACE_VERSION_PATCH 0

/* Largest record (common header + fields + dynamic data) an event may have. */
#define UTRACE_EVENT_MAX 4000

/*
 * The end of every DSL macro's expansion, in every stage: a declaration
 * that takes the ';' written after TRACE_EVENT(...), DEFINE_EVENT(...),
 * TRACE_DEFINE_ENUM(...) and the others, as kernel events headers write
 * them.  Without it the ';' would be an empty declaration at file scope,
 * which ISO C and C++ forbid (-Wpedantic: "extra ';'", one per event per
 * file).  A tag declaration, not an extern: -Wredundant-decls stays quiet.
 */
#define UTRACE__SEMICOLON struct utrace__semicolon

/*
 * A tracepoint without arguments, TP_PROTO(void) and TP_ARGS() (or
 * DECLARE_TRACE_NOARGS()), has probes 'void fn(void *data)', not
 * 'fn(void *data, void)'.  UTRACE__DATA_PROTO(PARAMS(args), PARAMS(proto))
 * is a probe's parameter list and UTRACE__DATA_ARGS(data, PARAMS(args))
 * the arguments of a call to it.  UTRACE__NOARGS(args) is 1 when the
 * (expanded) TP_ARGS list is empty, else 0: it pastes the list's first
 * element, a parameter name, onto UTRACE__NOARGS_PROBE_, which is a macro
 * only when that element is empty.
 */
#define UTRACE__CAT_(a, b) a##b
#define UTRACE__CAT(a, b) UTRACE__CAT_(a, b)
#define UTRACE__SECOND_(a, b, ...) b
#define UTRACE__SECOND(...) UTRACE__SECOND_(__VA_ARGS__)
#define UTRACE__FIRST_(a, ...) a
#define UTRACE__NOARGS_PROBE_ ~, 1
#define UTRACE__NOARGS__(first) UTRACE__SECOND(UTRACE__NOARGS_PROBE_##first, 0, ~)
#define UTRACE__NOARGS_(first) UTRACE__NOARGS__(first)
#define UTRACE__NOARGS(...) UTRACE__NOARGS_(UTRACE__FIRST_(__VA_ARGS__, ~))
#define UTRACE__DATA_PROTO(args, ...)					\
	UTRACE__CAT(UTRACE__DATA_PROTO_, UTRACE__NOARGS(args))(__VA_ARGS__)
#define UTRACE__DATA_PROTO_0(...) void *__data, __VA_ARGS__
#define UTRACE__DATA_PROTO_1(...) void *__data
#define UTRACE__DATA_ARGS(data, ...)					\
	UTRACE__CAT(UTRACE__DATA_ARGS_, UTRACE__NOARGS(__VA_ARGS__))(data, __VA_ARGS__)
#define UTRACE__DATA_ARGS_0(data, ...) data, __VA_ARGS__
#define UTRACE__DATA_ARGS_1(data, ...) data

#define utrace__stringify_1(...) #__VA_ARGS__
#define utrace__stringify(...) utrace__stringify_1(__VA_ARGS__)
#define utrace__likely(x) __builtin_expect(!!(x), 1)
#define utrace__unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Records are 4-byte aligned, as in the kernel's ring buffer, so a record
 * struct with 8-byte fields is reached at 4-byte aligned addresses (fine
 * on x86-64).  The generated functions that fill and print records say
 * so, so that a program built with -fsanitize=undefined gets no alignment
 * report from them.
 */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define UTRACE__RECORD_ACCESS __attribute__((no_sanitize("alignment")))
#endif
#endif
#ifndef UTRACE__RECORD_ACCESS
#define UTRACE__RECORD_ACCESS
#endif

#ifdef __cplusplus
#define UTRACE__STATIC_ASSERT(c, m) static_assert(c, m)
#define UTRACE__EXTERN extern "C"
#else
#define UTRACE__STATIC_ASSERT(c, m) _Static_assert(c, m)
#define UTRACE__EXTERN extern
#endif

/* A generic function pointer: probes are stored as this and called
 * through their real type. */
typedef void (*utrace_probe_fn)(void);

struct utrace_tracepoint_func {
	utrace_probe_fn func;
	void *data;
};

struct utrace_event;

/*
 * One per tracepoint, defined by the CREATE_TRACE_POINTS file.
 * 'enabled' is first and is the only word the call site reads.
 */
struct utrace_tracepoint {
	int enabled;
	const char *name;
	struct utrace_tracepoint_func *funcs; /* RCU-protected, NULL-terminated */
	int (*regfunc)(void);
	void (*unregfunc)(void);
	/*
	 * When the event's own recording probe is the only probe, its data
	 * (the static struct utrace_event) is here and the iterator calls it
	 * directly, without the RCU read side: nothing it uses is ever freed.
	 */
	void *fast_data;
	utrace_probe_fn builtin;     /* the recording probe, set at registration */
};

/* The common header of every record, laid out as the kernel's
 * struct trace_entry. */
struct utrace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

/* One field of an event's record, as shown in its format file. */
struct utrace_event_field {
	const char *type;  /* C type as written: "const char *", "char" */
	const char *name;
	int offset;
	int size;
	int is_signed;
	int kind;          /* enum utrace_field_kind */
	int array_len;     /* UTRACE_FIELD_ARRAY only */
};

enum utrace_field_kind {
	UTRACE_FIELD_PLAIN,   /* __field, __field_struct */
	UTRACE_FIELD_ARRAY,   /* __array: "<type> name[len]" */
	UTRACE_FIELD_DYNAMIC, /* __dynamic_array, __bitmask: "__data_loc <type>[] name" */
	UTRACE_FIELD_STRING,  /* __string, __string_len, __vstring */
	UTRACE_FIELD_CPUMASK, /* __cpumask: "__data_loc cpumask_t name" */
	UTRACE_FIELD_REL,     /* __rel_*: "__rel_loc <type>[] name" */
	UTRACE_FIELD_REL_CPUMASK, /* __rel_cpumask: "__rel_loc cpumask_t name" */
	UTRACE_FIELD_FLEX,    /* a flexible array member: "<type> name[]" (ftrace's own) */
};

/* Printing helpers' tables: { value, "name" } pairs, NULL-terminated. */
struct utrace_print_flag {
	unsigned long mask;
	const char *name;
};

/* A bounded text buffer (the kernel's trace_seq). */
struct utrace_seq {
	char *buf;
	unsigned int len;
	unsigned int size;
	int full;
};

typedef void (*utrace_output_fn)(struct utrace_seq *s, const void *rec);

/* Shared by the events of one DECLARE_EVENT_CLASS. */
struct utrace_event_class {
	const char *system;
	const struct utrace_event_field *(*fields)(unsigned int *nr);
	unsigned int struct_size;
	utrace_probe_fn probe;   /* the built-in probe that records the event */
};

/* One per event.  Defined by the CREATE_TRACE_POINTS file; the registry
 * fills in 'id' and 'priv'. */
struct utrace_event {
	const char *name;
	const struct utrace_event_class *cls;
	struct utrace_tracepoint *tp;
	utrace_output_fn output;     /* compiled TP_printk */
	const char *const *print;    /* { "\"fmt\"", "REC->a, REC->b" or "" } */
	int id;
	void *priv;
	const void *unit;            /* one per translation unit */
	unsigned int seq;            /* definition order within it */
	void *filter;                /* the compiled filter, or NULL */
};

/* TRACE_DEFINE_ENUM / TRACE_DEFINE_SIZEOF entries. */
struct utrace_eval_map {
	const char *system;
	const char *name;
	unsigned long value;
};

/* Runtime entry points used by the generated code (not for direct use). */

/**
 * utrace_tracepoint_probe_register - attach a probe to a tracepoint
 * @tp: the tracepoint
 * @fn: the probe
 * @data: its first argument
 *
 * As the kernel's tracepoint_probe_register(); waits for a grace period
 * before freeing the old probe array.
 *
 * Return: 0, -EEXIST, -ENOMEM, -EINVAL, or the error of a TRACE_EVENT_FN
 * reg function.
 */
int utrace_tracepoint_probe_register(struct utrace_tracepoint *tp,
				     utrace_probe_fn fn, void *data);

/**
 * utrace_tracepoint_probe_unregister - detach a probe from a tracepoint
 * @tp: the tracepoint
 * @fn: the probe
 * @data: the argument it was registered with
 *
 * Return: 0, -ENOENT (not registered), -ENOMEM or -EINVAL.
 */
int utrace_tracepoint_probe_unregister(struct utrace_tracepoint *tp,
				       utrace_probe_fn fn, void *data);

/**
 * utrace_tp_read_lock - enter a read-side section around a probe walk
 */
void utrace_tp_read_lock(void);

/**
 * utrace_tp_read_unlock - leave the section of utrace_tp_read_lock()
 */
void utrace_tp_read_unlock(void);
#ifdef UTRACE_DISABLE
static inline void tracepoint_synchronize_unregister(void) { }
#else
/* Waits until no thread is inside a probe that was unregistered before
 * the call: afterwards the probes' data may be freed. */
void tracepoint_synchronize_unregister(void);
#endif

struct utrace_tp_reserve {
	struct utrace_event *event;
	void *rec;
	unsigned int size;
	unsigned int rb_state;   /* 0: scratch, 1: page, 2: nested (stash) */
	unsigned int rb_len;
};
/**
 * utrace_tp_reserve - reserve an event's record (the generated probe)
 * @r: the reservation, filled in for utrace_tp_commit()
 * @ev: the event
 * @scratch: the probe's stack buffer, used when there is no pool
 * @size: bytes of the record
 *
 * Return: where to write the record, or NULL when it is dropped (too
 * large, buffer full, tracing_on off).
 */
void *utrace_tp_reserve(struct utrace_tp_reserve *r, struct utrace_event *ev,
			void *scratch, unsigned int size);

/**
 * utrace_tp_commit - commit the record of utrace_tp_reserve()
 * @r: the reservation
 *
 * Runs the event's filter first: a rejected record leaves no trace.
 */
void utrace_tp_commit(struct utrace_tp_reserve *r);

/*
 * The writer's fast path, inlined into every event's recording probe
 * (stage 6 of define_trace.h), ABI version 1.
 *
 * The usual event (a pool, tracing on, the thread attached, not nested,
 * the record fits the thread's page, the same CPU, a short time delta) is
 * written here with plain loads and stores: the thread's state
 * through one TLS access, the time by rdtsc, the CPU from the thread's
 * rseq area (one load; rdtscp's TSC_AUX where glibc registered no rseq),
 * the event header and the common fields, the release store of the page's
 * commit word.  Everything else (a new page, a time extend, nesting and
 * signals, a stash to empty, instances, triggers, tracing_on, lost events)
 * goes to libutrace's out-of-line entries: the library turns the fast path
 * off for all threads by setting UTRACE_TP_SLOW in utrace_tp_fast_v2.gen.
 * An event's filter runs on the record in place, before the commit
 * (utrace__commit_event_inline()), in the probe's second copy of this
 * path, which the first sends the event to while some event of the
 * process has a filter (UTRACE_TP_FILTER in utrace_tp_fast_v2.gen).
 *
 * ABI: the names carry the version.  A library whose thread state or page
 * layout changes exports utrace_tp_thread_v2 and friends, and keeps the v1
 * symbols with UTRACE_TP_SLOW set for good, so programs built against this
 * header still work (out of line).  Programs built before the fast path
 * existed only call utrace_tp_reserve()/utrace_tp_commit(), which stay.
 */

/* The thread's writer state as the inline path sees it: the first fields
 * of the library's own (lib/runtime/writer.c checks the offsets). */
struct utrace_tp_thread_v1 {
	uint32_t nest;           /* events being written on the thread */
	uint32_t stash_used;     /* nested events waiting to be copied */
	uint32_t exit_rounds__;
	int32_t tid;
	uint32_t gen;            /* pool generation the thread is attached to */
	uint32_t tail;           /* bytes used in page->data; with no page,
				  * more than any page holds */
	struct utrace_tp_page_v1 *page;
	uint64_t last_ts;
	uint32_t cpu;            /* the page's CPU */
	uint32_t missed;         /* the commit word's flag bits */
	uint64_t nr_events;      /* events in the page */
};

/* A page of the pool (lib/common/page.h: struct utrace_page). */
struct utrace_tp_page_v1 {
	uint64_t time_stamp;
	uint64_t commit;
	unsigned char data[4080];
};

/* Process-wide: 'gen' is the pool generation, with UTRACE_TP_SLOW set
 * while anything needs the out-of-line path for every event; 'cpu_off'
 * is where the rseq area's cpu_id is from the thread pointer (0: read
 * the CPU with rdtscp).  The inline path of this header reads
 * utrace_tp_fast_v2 (version 2: the probe runs the event's filter itself,
 * utrace__commit_event_inline()); utrace_tp_fast_v1, which the probes built
 * before read, has UTRACE_TP_SLOW set for good (they do not look at
 * filters), so those go out of line. */
struct utrace_tp_fast_v1 {
	uint32_t gen;
	uint32_t pad__;
	long cpu_off;
};
#define UTRACE_TP_SLOW 0x80000000u
/* In utrace_tp_fast_v2.gen while some event has a filter: the inline path
 * then takes its copy that looks at ev->filter before the commit. */
#define UTRACE_TP_FILTER 0x40000000u

#if !defined(UTRACE_DISABLE) && !defined(UTRACE__WRITER_INTERNAL)
UTRACE__EXTERN struct utrace_tp_fast_v1 utrace_tp_fast_v2;
UTRACE__EXTERN __thread struct utrace_tp_thread_v1 utrace_tp_thread_v1;
#endif

/**
 * utrace_tp_filter_commit_v2 - filter and commit a record of the inline path
 * @ev: the event (its filter was not NULL when the probe looked)
 * @t: the thread's state (the inline path's)
 * @rec: the record, written whole at the page's tail, not committed
 * @size: its bytes
 *
 * Called by the inline path (utrace__commit_event_inline()) instead of
 * utrace__commit_inline() when the event has a filter, with the event
 * still entered (nest 1).  Commits the record as utrace__commit_inline()
 * does if the filter takes it; else takes it back (the tail rolled back).
 * Either way the event is left, with what a signal handler stashed
 * meanwhile copied in.
 */
void utrace_tp_filter_commit_v2(const struct utrace_event *ev, struct utrace_tp_thread_v1 *t,
				void *rec, unsigned int size);

/**
 * utrace_tp_leave_v1 - copy in what a signal handler stashed meanwhile
 *
 * Called by the inline path, after it left the event (nest back to 0),
 * when the thread's stash is not empty.
 */
void utrace_tp_leave_v1(void);

#if defined(__x86_64__) && !defined(UTRACE_DISABLE) && \
	!defined(UTRACE__WRITER_INTERNAL) && !defined(UTRACE_NO_INLINE_WRITER)
#define UTRACE__INLINE_WRITER 1

/* An event being written by the inline path (kept in registers). */
struct utrace__fast {
	struct utrace_tp_thread_v1 *t;
	struct utrace_tp_page_v1 *page;
	uint64_t commit;         /* the page's commit word after the event */
};

/* What utrace__reserve_inline_() returns, with 'filters' 0, when some
 * event has a filter: take the copy that looks at it. */
#define UTRACE__FILTERED ((void *)1)

/*
 * Reserve 'size' bytes for event 'ev' in the thread's page.  NULL when
 * this is not the usual case: the caller then records the event through
 * utrace_tp_reserve() and utrace_tp_commit().  'filters' is
 * UTRACE_TP_FILTER when the caller commits with
 * utrace__commit_event_inline(), which looks at the event's filter; 0
 * when it does not: then, while some event has a filter, the reserve
 * gives UTRACE__FILTERED (nothing touched), and the caller goes to its
 * copy that commits with utrace__commit_event_inline().
 */
static inline __attribute__((always_inline)) void *
utrace__reserve_inline_(struct utrace__fast *f, const struct utrace_event *ev,
			unsigned int size, uint32_t filters)
{
	struct utrace_tp_thread_v1 *t = &utrace_tp_thread_v1;
	uint32_t gen = __atomic_load_n(&utrace_tp_fast_v2.gen, __ATOMIC_RELAXED);
	long off;
	struct utrace_tp_page_v1 *pg;
	uint64_t ts, delta, busy;
	uint32_t cpu, rb, w, tail;
	unsigned char *d;

	/* nest and stash_used in one load: both must be 0 */
	memcpy(&busy, t, sizeof(busy));
	if (utrace__unlikely(size > 112 || t->gen != (gen & ~filters) || busy != 0)) {
		/* (the other copy checks the rest again) */
		if (!filters && (gen & UTRACE_TP_FILTER))
			return UTRACE__FILTERED;
		return NULL;
	}
	t->nest = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* From here a signal handler's event goes to the stash. */
	off = __atomic_load_n(&utrace_tp_fast_v2.cpu_off, __ATOMIC_RELAXED);
	if (utrace__likely(off != 0)) {
		int32_t c;

		ts = __builtin_ia32_rdtsc();
		__asm__ __volatile__("movl %%fs:(%1), %0" : "=r"(c) : "r"(off));
		cpu = (uint32_t)c;
	} else {
		uint32_t aux;

		__asm__ __volatile__("rdtscp\n\tshl $32, %%rdx\n\tor %%rdx, %%rax"
				     : "=a"(ts), "=c"(aux) : : "rdx");
		cpu = aux & 0xfff;
	}
	rb = (size + 3) & ~3u;
	tail = t->tail;
	/* (a time going back makes a huge delta; no page, a huge tail) */
	delta = ts - t->last_ts;
	if (utrace__unlikely(cpu != t->cpu || delta > 0x7ffffff ||
			     tail + 4 + rb > 4080)) {
		/* A new page, a time extend: the library's.  Leave the event
		 * first; what a signal handler stashed meanwhile is copied in
		 * by the caller's slow path (utrace__slow_enter()). */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->nest = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return NULL;
	}
	/* (stores in the order that frees registers soonest: the time, the
	 * header word, then the tail) */
	t->last_ts = ts;
	/* the event header: type_len (record words), time delta */
	w = rb / 4 | (uint32_t)delta << 5;
	pg = t->page;
	d = pg->data + tail;
	memcpy(d, &w, 4);
	tail += 4 + rb;
	t->tail = tail;
	f->t = t;
	f->page = pg;
	f->commit = tail | t->missed;
	/* common_type, common_flags = common_preempt_count = 0, common_pid */
	w = (uint16_t)ev->id;
	memcpy(d + 4, &w, 4);
	memcpy(d + 8, &t->tid, 4);
	/* (not NULL nor UTRACE__FILTERED: the caller's test of those folds
	 * into the reserve's own branches) */
	if ((uintptr_t)(d + 4) <= 1)
		__builtin_unreachable();
	return d + 4;
}

/* The reserve of a caller that commits with utrace__commit_event_inline(). */
#define utrace__reserve_inline(f, ev, size)				\
	utrace__reserve_inline_(f, ev, size, UTRACE_TP_FILTER)

/* The start of the probe's slow path: outside an event, with events
 * stashed by a signal handler (during the inline path's attempt), copy
 * them in first. */
static inline __attribute__((always_inline)) void utrace__slow_enter(void)
{
	struct utrace_tp_thread_v1 *t = &utrace_tp_thread_v1;

	if (utrace__unlikely(t->stash_used != 0 && t->nest == 0))
		utrace_tp_leave_v1();
}

/* Commit what utrace__reserve_inline() reserved. */
static inline __attribute__((always_inline)) void
utrace__commit_inline(const struct utrace__fast *f)
{
	struct utrace_tp_thread_v1 *t = f->t;

	t->nr_events++;
	__atomic_store_n(&f->page->commit, f->commit, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->nest = 0;
	/* (a compare with memory: the compilers load, then test) */
	__asm__ goto("cmpl $0, %0\n\tjne %l1" : : "m"(t->stash_used) : "cc", "memory"
		     : stashed);
	return;
stashed:
	utrace_tp_leave_v1();
}

/*
 * Commit an event's record, after its filter if it has one: the filter
 * runs on the record written in place (the kernel's way: it reads the
 * fields from the reserved buffer), in the library, which commits the
 * record or takes it back.  Without a filter, one compare with memory
 * more than utrace__commit_inline(); with one, a tail call, so that the
 * caller keeps nothing in callee-saved registers.
 */
static inline __attribute__((always_inline)) void
utrace__commit_event_inline(const struct utrace__fast *f, const struct utrace_event *ev,
			    void *rec, unsigned int size)
{
	/* (a compare with memory: a relaxed load would be a load, then a
	 * test.  The library frees a filter only after every thread was seen
	 * outside its event, utrace__filter_sync().) */
	__asm__ goto("cmpq $0, %0\n\tjne %l1" : : "m"(ev->filter) : "cc"
		     : filtered);
	utrace__commit_inline(f);
	return;
filtered:
	utrace_tp_filter_commit_v2(ev, f->t, rec, size);
}
#endif

/**
 * utrace_tp_register_module - register an object's events (its constructor)
 * @start: the object's "utrace_events" section
 * @stop: its end
 * @evals_start: its TRACE_DEFINE_ENUM entries
 * @evals_stop: their end
 *
 * Counted: several constructors of one object register it once.
 * UTRACE_EVENTS applies to the new events.
 */
void utrace_tp_register_module(struct utrace_event *const *start,
			       struct utrace_event *const *stop,
			       const struct utrace_eval_map *const *evals_start,
			       const struct utrace_eval_map *const *evals_stop);
/**
 * utrace_tp_unregister_module - unregister an object's events (its destructor)
 * @start: the section given to utrace_tp_register_module()
 * @stop: its end
 *
 * At the last reference: returns once no thread is inside one of its probes.
 */
void utrace_tp_unregister_module(struct utrace_event *const *start,
				 struct utrace_event *const *stop);

/* Text helpers for compiled TP_printk (the kernel's trace_output.c). */
void utrace_seq_init(struct utrace_seq *s, char *buf, unsigned int size);
void utrace_seq_printf(struct utrace_seq *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const char *utrace_tp_print_flags(struct utrace_seq *p, const char *delim,
				  unsigned long flags,
				  const struct utrace_print_flag *tab);
const char *utrace_tp_print_symbols(struct utrace_seq *p, unsigned long val,
				    const struct utrace_print_flag *tab);
const char *utrace_tp_print_array(struct utrace_seq *p, const void *buf,
				  int count, size_t el_size);
const char *utrace_tp_print_hex(struct utrace_seq *p, const void *buf,
				int len, int concatenate);
const char *utrace_tp_print_bitmask(struct utrace_seq *p, const void *buf,
				    unsigned int len);
const char *utrace_tp_print_hex_dump(struct utrace_seq *p,
				     const char *prefix_str, int prefix_type,
				     int rowsize, int groupsize,
				     const void *buf, size_t len, int ascii);
char *utrace_tp_seq_acquire(struct utrace_seq *p, unsigned int len);

size_t utrace_tp_vstr_len(const char *fmt, va_list *ap);
void utrace_tp_copy_vstr(char *dst, unsigned int cap, const char *fmt,
			 va_list *ap);
#define utrace__vstr_len(fmt, ap) utrace_tp_vstr_len(fmt, ap)
#define utrace__copy_vstr(dst, cap, fmt, ap) utrace_tp_copy_vstr(dst, cap, fmt, ap)

/* A NULL string records as "(null)", as in the kernel; the source
 * expression is evaluated once. */
static inline const char *utrace__str_or_null(const char *s)
{
	return s ? s : "(null)";
}

/* Copy a string into a reserved __data_loc slot of 'cap' bytes (NUL
 * included); never writes past the slot. */
static inline void utrace__copy_str(char *dst, unsigned int cap,
				    const char *src)
{
	size_t n = 0;

	if (!cap)
		return;
	while (n + 1 < cap && src[n])
		n++;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/*
 * Copy n bytes, n known to be small most of the time (a path, a name):
 * up to 32 bytes by overlapping 8- and 4-byte moves, which need neither a
 * call nor the string instructions the compilers pick for a memcpy() of
 * unknown size (rep movs starts slowly); longer ones by memcpy().
 */
static inline __attribute__((always_inline)) void
utrace__copy_small(void *dst, const void *src, size_t n)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	uint64_t a, b, c, e;
	uint32_t x, y;

	if (utrace__likely(n >= 8)) {
		if (utrace__unlikely(n > 32)) {
			memcpy(d, s, n);
			return;
		}
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		if (n > 16) {
			memcpy(&c, s + 8, 8);
			memcpy(&e, s + n - 16, 8);
			memcpy(d + 8, &c, 8);
			memcpy(d + n - 16, &e, 8);
		}
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	}
}

/* The same for the string whose length placed the slot (__string's
 * source, __assign_str(dst)): its bytes are known to be there, so they
 * are copied as they are, as the kernel's __assign_str does (memcpy). */
static inline void utrace__copy_str_known(char *dst, unsigned int cap,
					  const char *src)
{
	if (!cap)
		return;
	utrace__copy_small(dst, src, cap - 1);
	dst[cap - 1] = 0;
}

static inline void utrace__copy_str_len(char *dst, unsigned int cap,
					const char *src, size_t len)
{
	if (!cap)
		return;
	if (len + 1 > cap)
		len = cap - 1;
	/* Stop at a NUL inside len: the kernel copies len bytes, which reads
	 * past a shorter string.  What prints is the same. */
	if (src) {
		const char *nul = (const char *)memchr(src, 0, len);

		if (nul)
			len = (size_t)(nul - src);
		memcpy(dst, src, len);
	} else {
		len = 0;
	}
	memset(dst + len, 0, cap - len);
}

#define utrace__bitmask_bytes(nr_bits)						((((size_t)(nr_bits) + 7) / 8 + sizeof(unsigned long) - 1) /		 sizeof(unsigned long) * sizeof(unsigned long))

/* Argument-count selection for __assign_str(dst) / __assign_str(dst, src). */
#define utrace__arg3(a, b, c, ...) c

/* Copy at most the slot's length (__sockaddr, __rel_sockaddr). */
static inline void utrace__copy_mem(void *dst, unsigned int cap,
				    const void *src, size_t len)
{
	memcpy(dst, src, len < cap ? len : cap);
}

/* __print_hex_dump() prefix types, as the kernel's DUMP_PREFIX_*. */
enum {
	UTRACE_DUMP_PREFIX_NONE,
	UTRACE_DUMP_PREFIX_ADDRESS,
	UTRACE_DUMP_PREFIX_OFFSET
};

/*
 * Kernel macros that are not part of the staged DSL.  There is no perf
 * here: __perf_count() and __perf_task() are their argument, as in the
 * kernel's non-perf stages.  Every tracepoint is already a global symbol:
 * EXPORT_TRACEPOINT_SYMBOL(_GPL) only declares it (and takes the ';').
 */
#ifndef __perf_count
#define __perf_count(c) (c)
#endif
#ifndef __perf_task
#define __perf_task(t) (t)
#endif
#ifndef EXPORT_TRACEPOINT_SYMBOL
#ifdef UTRACE_DISABLE
#define EXPORT_TRACEPOINT_SYMBOL(name) UTRACE__SEMICOLON
#else
/* (a check that the tracepoint was declared, not a second declaration,
 * which -Wredundant-decls would report) */
#define EXPORT_TRACEPOINT_SYMBOL(name)					\
	UTRACE__STATIC_ASSERT(sizeof(__tracepoint_##name) != 0,	\
			      "utrace: EXPORT_TRACEPOINT_SYMBOL(" #name ")")
#endif
#endif
#ifndef EXPORT_TRACEPOINT_SYMBOL_GPL
#define EXPORT_TRACEPOINT_SYMBOL_GPL(name) EXPORT_TRACEPOINT_SYMBOL(name)
#endif

/* One entry of an object's utrace_jump_table (written by the asm below). */
struct utrace_jump_entry {
	uintptr_t site;                 /* the 5-byte instruction */
	uintptr_t target;               /* where it jumps while the event is on */
	struct utrace_tracepoint *tp;
	uintptr_t reserved;             /* 0 (the table can be read-only
					 * after relocation: libutrace keeps
					 * each site's state on its side) */
};
/* The object's constructor and destructor call these (not for direct use). */
void utrace_tp_register_sites(struct utrace_jump_entry *start,
			      struct utrace_jump_entry *stop);
void utrace_tp_unregister_sites(struct utrace_jump_entry *start,
				struct utrace_jump_entry *stop);

/* Jump-label call sites (see "The call site" below). */
/* (UTRACE_FORCE_JUMP_LABEL: in a sanitizer build too; utrace's tests.) */
#if defined(__x86_64__) && !defined(UTRACE_NO_JUMP_LABEL)
#if defined(UTRACE_FORCE_JUMP_LABEL)
#define UTRACE__JUMP_LABEL 1
#elif !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#if defined(__has_feature)
#if !__has_feature(address_sanitizer) && !__has_feature(thread_sanitizer) && \
	!__has_feature(memory_sanitizer)
#define UTRACE__JUMP_LABEL 1
#endif
#else
#define UTRACE__JUMP_LABEL 1
#endif
#endif
#endif

#ifdef UTRACE__JUMP_LABEL

/*
 * Once per assembly file (.ifndef), in a COMDAT group (once per linked
 * object): a constructor and a destructor that hand the object's own
 * table (hidden __start_/__stop_ symbols) to libutrace.  Only objects that
 * have a site get them; nothing else that includes this header does.
 */
#define UTRACE__JUMP_CTOR_ASM						\
	".ifndef utrace__jump_ctor\n\t"					\
	".pushsection .text.utrace__jump_ctor,\"axG\",@progbits,utrace__jump_ctor,comdat\n\t" \
	".weak utrace__jump_ctor\n\t"					\
	".hidden utrace__jump_ctor\n\t"					\
	".type utrace__jump_ctor, @function\n"				\
	"utrace__jump_ctor:\n\t"						\
	".byte 0xf3, 0x0f, 0x1e, 0xfa\n\t" /* endbr64 */			\
	"leaq __start_utrace_jump_table(%%rip), %%rdi\n\t"		\
	"leaq __stop_utrace_jump_table(%%rip), %%rsi\n\t"		\
	"jmp utrace_tp_register_sites@PLT\n\t"				\
	".size utrace__jump_ctor, . - utrace__jump_ctor\n\t"		\
	".weak utrace__jump_dtor\n\t"					\
	".hidden utrace__jump_dtor\n\t"					\
	".type utrace__jump_dtor, @function\n"				\
	"utrace__jump_dtor:\n\t"						\
	".byte 0xf3, 0x0f, 0x1e, 0xfa\n\t"				\
	"leaq __start_utrace_jump_table(%%rip), %%rdi\n\t"		\
	"leaq __stop_utrace_jump_table(%%rip), %%rsi\n\t"		\
	"jmp utrace_tp_unregister_sites@PLT\n\t"				\
	".size utrace__jump_dtor, . - utrace__jump_dtor\n\t"		\
	".popsection\n\t"						\
	".pushsection .init_array,\"awG\",@init_array,utrace__jump_ctor,comdat\n\t" \
	".balign 8\n\t"							\
	".quad utrace__jump_ctor\n\t"					\
	".popsection\n\t"						\
	".pushsection .fini_array,\"awG\",@fini_array,utrace__jump_ctor,comdat\n\t" \
	".balign 8\n\t"							\
	".quad utrace__jump_dtor\n\t"					\
	".popsection\n\t"						\
	".hidden __start_utrace_jump_table\n\t"				\
	".hidden __stop_utrace_jump_table\n\t"				\
	".endif\n\t"

/*
 * True when the site is taken.  As compiled: a 5-byte 'jmp check'; check
 * loads 'enabled'.  The table entry: { site, yes, &__tracepoint_<name>, 0 }.
 */
#define UTRACE__SITE(name)						\
	__asm__ goto("1:\n\t"						\
		     ".byte 0xe9\n\t"						\
		     ".long %l[check] - 2f\n"					\
		     "2:\n\t"							\
		     ".pushsection utrace_jump_table,\"aw\"\n\t"		\
		     ".balign 8\n\t"						\
		     ".quad 1b, %l[yes], __tracepoint_" #name ", 0\n\t"	\
		     ".popsection\n\t"					\
		     UTRACE__JUMP_CTOR_ASM					\
		     : : : : yes, check);					\
	return false;							\
check:									\
	return __atomic_load_n(&__tracepoint_##name.enabled,		\
			       __ATOMIC_RELAXED) != 0;			\
yes:									\
	return true;

#define UTRACE__SITE_ON(name)						\
	static inline __attribute__((always_inline)) bool		\
	utrace__site_##name(void)					\
	{								\
		UTRACE__SITE(name)					\
	}
#else /* !UTRACE__JUMP_LABEL */
#define UTRACE__SITE_ON(name)						\
	static inline __attribute__((always_inline)) bool		\
	utrace__site_##name(void)					\
	{								\
		return __atomic_load_n(&__tracepoint_##name.enabled,	\
				       __ATOMIC_RELAXED) != 0;		\
	}
#endif /* UTRACE__JUMP_LABEL */

#ifdef __cplusplus
}
#endif

/*
 * A tracepoint's definition: the object and its probe iterator.  Made by
 * DEFINE_TRACE(name, proto, args) in one .c file, or for each tracepoint
 * of an events header by stage 0 of define_trace.h.
 *
 *   struct utrace_tracepoint __tracepoint_<name> = { 0, "<name>", NULL, reg, unreg };
 *   void __traceiter_<name>(proto)
 *   {
 *           if (only an event's recording probe is attached)
 *                   call it directly with its data, and return;
 *           read_lock();
 *           for (each registered probe) probe->func(probe->data, args);
 *           read_unlock();
 *   }
 */
#define UTRACE__CALL_PROBES(name, proto, args)				\
	{								\
		struct utrace_tracepoint_func *__utrace_it;		\
		utrace_tp_read_lock();					\
		__utrace_it = __atomic_load_n(&__tracepoint_##name.funcs, \
					      __ATOMIC_CONSUME);	\
		if (__utrace_it)					\
			for (; __utrace_it->func; __utrace_it++)	\
				((void (*)(UTRACE__DATA_PROTO(PARAMS(args), \
							      PARAMS(proto)))) \
				 __utrace_it->func)(			\
					 UTRACE__DATA_ARGS(__utrace_it->data, \
							   PARAMS(args))); \
		utrace_tp_read_unlock();				\
	}

#define UTRACE__DEFINE_TRACE_FN(name, reg, unreg, proto, args)		\
	struct utrace_tracepoint __tracepoint_##name = {		\
		0, #name, NULL, reg, unreg, NULL, NULL			\
	};								\
	void __traceiter_##name(proto)					\
	{								\
		void *__utrace_fast = __atomic_load_n(			\
			&__tracepoint_##name.fast_data, __ATOMIC_ACQUIRE); \
		if (utrace__likely(__utrace_fast)) {			\
			((void (*)(UTRACE__DATA_PROTO(PARAMS(args),	\
						      PARAMS(proto))))	\
			 __tracepoint_##name.builtin)(			\
				 UTRACE__DATA_ARGS(__utrace_fast, PARAMS(args))); \
			return;						\
		}							\
		UTRACE__CALL_PROBES(name, PARAMS(proto), PARAMS(args))	\
	}								\
	UTRACE__SEMICOLON

#define PARAMS(...) __VA_ARGS__
#define TP_PROTO(...) __VA_ARGS__
#define TP_ARGS(...) __VA_ARGS__
#define TP_CONDITION(...) __VA_ARGS__

#endif /* UTRACE_TRACEPOINT_H */

/* ------------------------------------------------------------------ */
/* Declaration stage: what every includer of an events header sees.   */
/* Kept outside the guard on purpose (see the comment at the top).     */

#ifndef TRACE_EVENT

#ifdef UTRACE_DISABLE

/* Compiled out: empty inlines, registration says -ENOSYS. */
#define UTRACE__DECLARE_TRACE(name, proto, args, cond, data_proto)	\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")	\
	static inline void trace_##name(proto) { }			\
	static inline bool trace_##name##_enabled(void) { return false; } \
	static inline int register_trace_##name(void (*probe)(data_proto), \
						void *data)		\
	{ (void)probe; (void)data; return -ENOSYS; }			\
	static inline int unregister_trace_##name(void (*probe)(data_proto), \
						  void *data)		\
	{ (void)probe; (void)data; return -ENOSYS; }			\
	_Pragma("GCC diagnostic pop")					\
	UTRACE__SEMICOLON

#define DEFINE_TRACE_FN(name, reg, unreg, proto, args) UTRACE__SEMICOLON

#else /* !UTRACE_DISABLE */

/*
 * The call site.  Two forms (docs/design-notes.md, "Fast path: the
 * switched-off site"):
 *
 * Jump labels (x86-64, UTRACE__JUMP_LABEL): the site is one 5-byte
 * instruction, recorded in the object's utrace_jump_table section with
 * its tracepoint.  As compiled it is 'jmp <check>', a load-and-branch
 * block that reads 'enabled' (correct on its own, without any patching).
 * When the object registers its sites (its constructor, emitted once per
 * object by the asm below), libutrace rewrites each site into a 5-byte
 * NOP while the event is off and into 'jmp <yes>' (straight to
 * TP_CONDITION and __traceiter_<name>) while it is on.  Where the code
 * cannot be rewritten the sites stay 'jmp <check>': today's load and
 * branch, behind one more jump.
 *
 * Otherwise (another architecture, a sanitizer build, UTRACE_NO_JUMP_LABEL
 * defined): 'cmpl $0, tp(%rip); jne' (plus a GOT load in PIC code).
 * Either way TP_CONDITION, the record and the probes all live behind the
 * branch, in __traceiter_<name>().
 */

#define UTRACE__DECLARE_TRACE(name, proto, args, cond, data_proto)	\
	UTRACE__EXTERN struct utrace_tracepoint __tracepoint_##name;	\
	UTRACE__EXTERN void __traceiter_##name(proto);			\
	UTRACE__SITE_ON(name)						\
	static inline __attribute__((always_inline)) void trace_##name(proto) \
	{								\
		if (utrace__unlikely(utrace__site_##name())) {		\
			if (cond)					\
				__traceiter_##name(args);		\
		}							\
	}								\
	static inline bool trace_##name##_enabled(void)			\
	{								\
		return __atomic_load_n(&__tracepoint_##name.enabled,	\
				       __ATOMIC_RELAXED) != 0;		\
	}								\
	static inline int register_trace_##name(void (*probe)(data_proto), \
						void *data)		\
	{								\
		return utrace_tracepoint_probe_register(		\
			&__tracepoint_##name, (utrace_probe_fn)probe, data); \
	}								\
	static inline int unregister_trace_##name(void (*probe)(data_proto), \
						  void *data)		\
	{								\
		return utrace_tracepoint_probe_unregister(		\
			&__tracepoint_##name, (utrace_probe_fn)probe, data); \
	}								\
	UTRACE__SEMICOLON

/*
 * A bare tracepoint's definition, written in one .c file as the kernel's
 * samples/tracepoints do:
 *
 *     #include "my-tracepoints.h"       (DECLARE_TRACE(my_tp, TP_PROTO(int v), TP_ARGS(v));)
 *     DEFINE_TRACE(my_tp, TP_PROTO(int v), TP_ARGS(v));
 *
 * (An events header that ends with define_trace.h defines its bare
 * DECLARE_TRACE()s itself in its CREATE_TRACE_POINTS file: not both.)
 */
#define DEFINE_TRACE_FN(name, reg, unreg, proto, args)			\
	UTRACE__DEFINE_TRACE_FN(name, reg, unreg, PARAMS(proto), PARAMS(args))

#endif /* UTRACE_DISABLE */

#define DECLARE_TRACE(name, proto, args)				\
	UTRACE__DECLARE_TRACE(name, PARAMS(proto), PARAMS(args), 1,	\
			      UTRACE__DATA_PROTO(PARAMS(args), PARAMS(proto)))
#define DECLARE_TRACE_CONDITION(name, proto, args, cond)		\
	UTRACE__DECLARE_TRACE(name, PARAMS(proto), PARAMS(args),	\
			      utrace__likely(cond),			\
			      UTRACE__DATA_PROTO(PARAMS(args), PARAMS(proto)))
/* Older kernels' tracepoint without arguments: DECLARE_TRACE_NOARGS(name)
 * is DECLARE_TRACE(name, TP_PROTO(void), TP_ARGS()); probes are
 * 'void fn(void *data)'. */
#define DECLARE_TRACE_NOARGS(name) DECLARE_TRACE(name, void, )

#define DEFINE_TRACE(name, proto, args)					\
	DEFINE_TRACE_FN(name, NULL, NULL, PARAMS(proto), PARAMS(args))

#define TRACE_EVENT(name, proto, args, struct, assign, print)		\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN(name, proto, args, struct, assign, print, reg, unreg) \
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define TRACE_EVENT_FN_COND(name, proto, args, cond, struct, assign, print, reg, unreg) \
	DECLARE_TRACE_CONDITION(name, PARAMS(proto), PARAMS(args), PARAMS(cond))
#define TRACE_EVENT_CONDITION(name, proto, args, cond, struct, assign, print) \
	DECLARE_TRACE_CONDITION(name, PARAMS(proto), PARAMS(args), PARAMS(cond))
#define DECLARE_EVENT_CLASS(name, proto, args, tstruct, assign, print) \
	UTRACE__SEMICOLON
#define DEFINE_EVENT(template, name, proto, args)			\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_FN(template, name, proto, args, reg, unreg)	\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_PRINT(template, name, proto, args, print)		\
	DECLARE_TRACE(name, PARAMS(proto), PARAMS(args))
#define DEFINE_EVENT_CONDITION(template, name, proto, args, cond)	\
	DECLARE_TRACE_CONDITION(name, PARAMS(proto), PARAMS(args), PARAMS(cond))
#define TRACE_DEFINE_ENUM(a) UTRACE__SEMICOLON
#define TRACE_DEFINE_SIZEOF(a) UTRACE__SEMICOLON
/* As the kernel's headers write them: TRACE_EVENT_FLAGS(...) without a
 * ';' (nothing to take), TRACE_EVENT_PERF_PERM(...); with one. */
#define TRACE_EVENT_FLAGS(event, flag)
#define TRACE_EVENT_PERF_PERM(event, ...) UTRACE__SEMICOLON

/* Events compiled out by their header: trace_<ev>() does nothing and
 * trace_<ev>_enabled() is false; there is no event, no register_*. */
#define DECLARE_EVENT_NOP(name, proto, args)				\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")	\
	static inline void trace_##name(proto) { }			\
	static inline bool trace_##name##_enabled(void) { return false; } \
	_Pragma("GCC diagnostic pop")					\
	UTRACE__SEMICOLON
#define TRACE_EVENT_NOP(name, proto, args, struct, assign, print)	\
	DECLARE_EVENT_NOP(name, PARAMS(proto), PARAMS(args))
#define DECLARE_EVENT_CLASS_NOP(name, proto, args, tstruct, assign, print) \
	UTRACE__SEMICOLON
#define DEFINE_EVENT_NOP(template, name, proto, args)			\
	DECLARE_EVENT_NOP(name, PARAMS(proto), PARAMS(args))

#endif /* TRACE_EVENT */
