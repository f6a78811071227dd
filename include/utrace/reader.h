/* SPDX-License-Identifier: MIT */
/*
 * utrace/reader.h - libutrace-reader, the consumer side of utrace: trace
 * files, printing (libutrace-reader(3)).
 *
 * A program that reads traces links this library only; it never needs
 * libutrace, which is what traced programs load.  Functions return 0 or a
 * positive count on success and a negative code on failure: -errno, or one
 * of the UTRACE_E* codes of utrace/utrace.h; utrace_reader_strerror()
 * names either.
 *
 *	struct utrace_reader *r;
 *	const struct utrace_record *rec;
 *
 *	if (utrace_reader_open("utrace.dat", &r) < 0 && !r)
 *		return -1;
 *	while (utrace_reader_next(r, &rec) > 0)
 *		utrace_record_fprint(r, rec, stdout);
 *	utrace_reader_close(r);
 */
#ifndef UTRACE_READER_H
#define UTRACE_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tep_handle;
struct tep_event;

/* An open trace file (opaque). */
struct utrace_reader;

/*
 * struct utrace_record - one event of a trace file
 * @time:   when it happened, CLOCK_MONOTONIC nanoseconds
 * @pid:    the process that wrote it
 * @tid:    the thread that wrote it
 * @cpu:    the CPU it was written on
 * @id:     its event id in its process (the record's common_type)
 * @system: the event's system ("sample-trace"), NULL when the process has
 *          no format for @id
 * @name:   the event's name ("foo_bar"), NULL likewise
 * @comm:   the thread's name, or "<...>" when the file does not say it
 * @data:   the record as written: the common fields first (common_type,
 *          common_flags, common_preempt_count, common_pid), then the
 *          event's own; little-endian, not aligned
 * @size:   the bytes at @data
 *
 * The library owns the record; it is valid until the next call of
 * utrace_reader_next() or utrace_reader_close() on its reader.  Fields
 * may be added at the end in later versions.
 */
struct utrace_record {
	uint64_t time;
	uint32_t pid, tid, cpu;
	uint32_t id;
	const char *system, *name;
	const char *comm;
	const void *data;
	uint32_t size;
};

/**
 * utrace_reader_version - the version of the library
 *
 * Returns "0.1.0", the version of the library (and of the utrace tool).
 */
const char *utrace_reader_version(void);

/**
 * utrace_reader_strerror - the message for an error code
 * @err: a negative code from any utrace_reader or utrace_record function
 *
 * Returns a static string, "unknown error" for a code it does not know.
 */
const char *utrace_reader_strerror(int err);

/**
 * utrace_reader_open - open a trace file written by `utrace record`
 * @path: the file
 * @rp:   receives the reader
 *
 * The whole file is checked before anything is read out.  A file with bad
 * records is still read, without them: then -EBADMSG is returned, *rp is
 * set and utrace_reader_error() says what is wrong.  A file cut short is
 * read up to the cut, with 0 returned.
 *
 * Returns 0, -EBADMSG (with *rp set), or another negative code with *rp
 * set to NULL (-ENOENT, -ENOMEM, ...).
 */
int utrace_reader_open(const char *path, struct utrace_reader **rp);

/**
 * utrace_reader_close - close a reader and free what it holds
 * @r: the reader, or NULL
 *
 * Its records, its libtraceevent handle and its events go with it.
 */
void utrace_reader_close(struct utrace_reader *r);

/**
 * utrace_reader_error - what is wrong with the file, or with the last record
 * @r: the reader
 *
 * Returns the message of the latest problem ("'x.dat': record at offset
 * 1234: ..."), without a trailing newline: the first bad record of the
 * file after utrace_reader_open(), or why utrace_record_event() or
 * utrace_record_print() refused a record.  NULL when there was none.
 */
const char *utrace_reader_error(const struct utrace_reader *r);

/**
 * utrace_reader_next - the next event of the file, in time order
 * @r:   the reader
 * @rec: receives the event
 *
 * The events of all threads of all processes of the file are merged in
 * time order (at equal times, in the order their threads first appear in
 * the file).  Markers of lost events are not returned.
 *
 * Returns 1 with *rec set, 0 at the end of the file, or -ENOMEM.
 */
int utrace_reader_next(struct utrace_reader *r, const struct utrace_record **rec);

/**
 * utrace_reader_tep - the reader's libtraceevent handle
 * @r: the reader
 *
 * The handle holds the formats utrace_record_event() parsed so far, each
 * distinct format (system, name and text) once, under an id of the
 * reader's own: not the record's @id.  It is the reader's: do not free it
 * or parse formats into it.
 */
struct tep_handle *utrace_reader_tep(struct utrace_reader *r);

/**
 * utrace_record_event - the libtraceevent event of a record, for its fields
 * @r:   the reader
 * @rec: a record of @r
 *
 * Parses the record's format (once per distinct format) and checks the
 * record against it: every field, and every __data_loc field's data,
 * lies inside @rec->data.  The fields can then be read from @rec->data
 * with libtraceevent (tep_find_field(), tep_read_number_field() ...).
 *
 * Returns the event, or NULL when the record has no format, its format
 * cannot be used safely with libtraceevent, or the record fails the
 * check (utrace_reader_error() says why), or when out of memory.
 */
struct tep_event *utrace_record_event(struct utrace_reader *r,
				      const struct utrace_record *rec);

/**
 * utrace_record_field_num - a number field of a record
 * @r:    the reader
 * @rec:  a record of @r
 * @name: the field's name (the common fields too: "common_pid")
 * @val:  receives the value, sign-extended when the field is signed
 *
 * Returns 0, -ENOENT when the event has no such field, -EINVAL when the
 * field is not a number of 1, 2, 4 or 8 bytes, or -EBADMSG when
 * utrace_record_event() finds no usable event for the record.
 */
int utrace_record_field_num(struct utrace_reader *r, const struct utrace_record *rec,
			    const char *name, uint64_t *val);

/**
 * utrace_record_field_str - a string field of a record
 * @r:    the reader
 * @rec:  a record of @r
 * @name: the field's name
 * @str:  receives the string, inside @rec->data: not NUL-terminated when
 *        it fills its field
 * @len:  receives its length, up to its first NUL or the field's end
 *
 * The field must be a char array, fixed ("char comm[16]") or dynamic
 * (__string(), "__data_loc char[]").
 *
 * Returns 0, -ENOENT when the event has no such field, -EINVAL when the
 * field is not a char array, or -EBADMSG as utrace_record_field_num().
 */
int utrace_record_field_str(struct utrace_reader *r, const struct utrace_record *rec,
			    const char *name, const char **str, size_t *len);

/**
 * utrace_record_print - a record as a line of the kernel's trace file
 * @r:    the reader
 * @rec:  a record of @r
 * @buf:  receives the line and a NUL, cut to fit
 * @size: the bytes at @buf (0: nothing is written)
 *
 * The line is the one `utrace script` prints, newline included:
 * "comm-tid [cpu] ..... sec.usec: name: TP_printk text\n".
 *
 * Returns the length of the whole line (as snprintf(), so a result of
 * @size or more means it was cut), -EBADMSG when the record cannot be
 * printed safely (utrace_reader_error() says why), or -ENOMEM.
 */
int utrace_record_print(struct utrace_reader *r, const struct utrace_record *rec,
			char *buf, size_t size);

/**
 * utrace_record_fprint - utrace_record_print() to a stream
 * @r:   the reader
 * @rec: a record of @r
 * @f:   the stream
 *
 * Returns the bytes written, -EBADMSG or -ENOMEM as utrace_record_print(),
 * or -EIO when the stream fails.
 */
int utrace_record_fprint(struct utrace_reader *r, const struct utrace_record *rec,
			 FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* UTRACE_READER_H */
