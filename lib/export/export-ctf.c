/* SPDX-License-Identifier: MIT */
/*
 * Export to CTF 1.8 (utrace convert --format ctf): a directory that
 * babeltrace2 and Trace Compass read (docs/ctf-export.md).
 *
 *     DIR/metadata       TSDL text: trace, env, clock "monotonic", one
 *                        stream class, one event class per distinct format
 *     DIR/utrace_<cpu>   the events of one CPU, in time order, as packets
 *
 * A packet (little endian, every field byte-aligned, no padding):
 *
 *     header   u32 magic 0xc1fc1fc1, u8 uuid[16], u32 stream_id 0,
 *              u64 stream_instance_id (the CPU)
 *     context  u64 timestamp_begin, timestamp_end (clock "monotonic"),
 *              u64 content_size, packet_size (bits; equal), u64
 *              packet_seq_num, u64 events_discarded (the stream's running
 *              count), u32 cpu_id
 *     events   u16 id, u64 timestamp | s32 vpid, s32 vtid | the fields
 *
 * The events come from the reader's merged iterator (export-walk.c) and
 * go to the packet of their CPU, which is written out once it holds
 * 64 KiB: memory is one packet per CPU whatever the size of the trace.
 * Lost events close the packet of their CPU and raise its count, so that
 * the next packet carries it and babeltrace2 reports the difference as
 * discarded events; a CPU whose first item is a loss first gets an empty
 * packet with count 0 (a reader takes the first packet's count as where
 * the counting starts), and a loss after a CPU's last event an empty
 * packet of its own at the end.  A marker without a count counts 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include <utrace/reader.h>

#include "export-walk.h"
#include "obuf.h"
#include "print.h"
#include "problems.h"

#define MAX_CPUS 8192
#define PACKET_BYTES (64 * 1024)        /* a packet is written once this full */
#define HDR_BYTES (32 + 52)             /* packet header + context */
#define CTF_MAGIC 0xc1fc1fc1u

struct cstream {
	int fd;                          /* -1: not opened yet */
	struct utrace__obuf b;           /* the packet being filled */
	uint64_t begin, end;             /* its first and last time */
	uint64_t nr;                     /* its events */
	uint64_t seq;                    /* packets written */
	uint64_t discarded;              /* lost events so far */
	uint64_t written_discarded;      /* the count of the last packet written */
	uint64_t last;                   /* time of the last packet's end */
};

struct ctf {
	const char *dir, *name;
	unsigned char uuid[16];
	struct cstream *s;
	uint32_t nr_s;
	struct utrace__obuf meta;        /* event classes, as the formats come */
	int werr;                        /* errno of the first write error */
	char *werr_path;
	uint64_t nr_past_cpus;           /* events left out: CPU >= MAX_CPUS */
};

/* --- bytes --- */

static void put_le(struct utrace__obuf *b, uint64_t v, int n)
{
	unsigned char t[8];
	int i;

	for (i = 0; i < n; i++)
		t[i] = (unsigned char)(v >> (8 * i));
	utrace__ob_put(b, t, (size_t)n);
}

static void set_le(char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (char)(v >> (8 * i));
}

static int write_all(struct ctf *c, int fd, const char *path, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!c->werr) {
				c->werr = w < 0 ? errno : EIO;
				free(c->werr_path);
				c->werr_path = strdup(path);
			}
			return -EIO;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static char *path_of(const struct ctf *c, const char *file)
{
	char *p;

	return asprintf(&p, "%s/%s", c->dir, file) < 0 ? NULL : p;
}

/* --- streams and packets --- */

static struct cstream *stream_get(struct ctf *c, uint32_t cpu)
{
	if (cpu >= MAX_CPUS)
		return NULL;
	if (cpu >= c->nr_s) {
		uint32_t n = cpu + 1 > 2 * c->nr_s ? cpu + 1 : 2 * c->nr_s, i;
		struct cstream *v = realloc(c->s, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + c->nr_s, 0, (n - c->nr_s) * sizeof(*v));
		for (i = c->nr_s; i < n; i++)
			v[i].fd = -1;
		c->s = v;
		c->nr_s = n;
	}
	return &c->s[cpu];
}

/* Begin a packet: its header and context, filled in when it is written. */
static void packet_begin(struct ctf *c, struct cstream *s, uint32_t cpu, uint64_t t)
{
	s->b.len = 0;
	put_le(&s->b, CTF_MAGIC, 4);
	utrace__ob_put(&s->b, c->uuid, 16);
	put_le(&s->b, 0, 4);             /* stream_id */
	put_le(&s->b, cpu, 8);           /* stream_instance_id */
	utrace__ob_reserve(&s->b, 52);
	if (s->b.cap - s->b.len >= 52) {
		memset(s->b.p + s->b.len, 0, 52);
		s->b.len += 52;
	}
	s->begin = s->end = t;
	s->nr = 0;
}

/* Write the packet out (opening the stream's file the first time). */
static int packet_write(struct ctf *c, struct cstream *s, uint32_t cpu)
{
	char *p, file[32];
	int r;

	if (s->b.nomem)
		return -ENOMEM;
	snprintf(file, sizeof(file), "utrace_%u", cpu);
	p = path_of(c, file);
	if (!p)
		return -ENOMEM;
	if (s->fd < 0) {
		s->fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (s->fd < 0) {
			utrace__say("utrace: cannot open '%s': %s\n", p, strerror(errno));
			free(p);
			return -EINVAL;
		}
	}
	set_le(s->b.p + 32, s->begin, 8);
	set_le(s->b.p + 40, s->end, 8);
	set_le(s->b.p + 48, (uint64_t)s->b.len * 8, 8);
	set_le(s->b.p + 56, (uint64_t)s->b.len * 8, 8);
	set_le(s->b.p + 64, s->seq, 8);
	set_le(s->b.p + 72, s->discarded, 8);
	set_le(s->b.p + 80, cpu, 4);
	r = write_all(c, s->fd, p, s->b.p, s->b.len);
	free(p);
	s->seq++;
	s->written_discarded = s->discarded;
	s->last = s->end;
	s->b.len = 0;
	return r;
}

/* --- the metadata --- */

static const char *const tsdl_keywords[] = {
	"align", "callsite", "const", "char", "clock", "double", "enum", "env", "event",
	"floating_point", "float", "integer", "int", "long", "short", "signed", "stream",
	"string", "struct", "trace", "typealias", "typedef", "unsigned", "variant", "void",
	"_Bool", "_Complex", "_Imaginary",
};

/*
 * A field's name as a TSDL identifier: characters other than letters,
 * digits and '_' become '_', and a name that is a keyword or starts with
 * '_' or a digit gets a '_' in front, which CTF readers take off again
 * (babeltrace2 shows "_string" as "string", "__x" as "_x").
 */
static void put_ident(struct utrace__obuf *b, const char *name, const char *suffix)
{
	size_t i, at;
	bool under = name[0] == '_' || (name[0] >= '0' && name[0] <= '9') || !name[0];

	for (i = 0; i < sizeof(tsdl_keywords) / sizeof(tsdl_keywords[0]); i++)
		if (!strcmp(name, tsdl_keywords[i]))
			under = true;
	if (under)
		utrace__ob_putc(b, '_');
	at = b->len;
	utrace__ob_puts(b, name);
	for (i = at; !b->nomem && i < b->len; i++) {
		char ch = b->p[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '_'))
			b->p[i] = '_';
	}
	utrace__ob_puts(b, suffix);
}

/* A TSDL string literal: '"' and '\' escaped, control bytes as '?'. */
static void put_literal(struct utrace__obuf *b, const char *s)
{
	utrace__ob_putc(b, '"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			utrace__ob_putc(b, '\\');
		utrace__ob_putc(b, ch < 0x20 || ch == 0x7f ? '?' : (char)ch);
	}
	utrace__ob_putc(b, '"');
}

static void put_int_type(struct utrace__obuf *b, unsigned int bytes, bool is_signed, bool hex)
{
	utrace__ob_printf(b, "integer { size = %u; align = 8; signed = %s; base = %s; }",
			  bytes * 8, is_signed ? "true" : "false", hex ? "hex" : "decimal");
}

static void ctf_format(struct utrace__xwalk *w, struct utrace__xfmt *xf)
{
	struct ctf *c = w->ctx;
	struct utrace__obuf *b = &c->meta;
	const struct utrace__fmt *e = xf->e;
	size_t i;
	char *full;

	if (asprintf(&full, "%s:%s", e->system, e->name) < 0) {
		w->err = -ENOMEM;
		return;
	}
	utrace__ob_puts(b, "\nevent {\n\tname = ");
	put_literal(b, full);
	free(full);
	utrace__ob_printf(b, ";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n", e->id);
	for (i = 0; i < xf->nr_fields; i++) {
		const struct utrace__fdesc *x = &xf->fields[i];

		utrace__ob_putc(b, '\t');
		utrace__ob_putc(b, '\t');
		switch (x->kind) {
		case UTRACE__FVAL_NUM:
			put_int_type(b, x->elem_size, x->is_signed, x->hex);
			utrace__ob_putc(b, ' ');
			put_ident(b, x->name, ";\n");
			break;
		case UTRACE__FVAL_STR:
			utrace__ob_puts(b, "string ");
			put_ident(b, x->name, ";\n");
			break;
		case UTRACE__FVAL_ARRAY:
			if (!x->dynamic) {
				put_int_type(b, x->elem_size, x->is_signed, x->hex);
				utrace__ob_putc(b, ' ');
				put_ident(b, x->name, "");
				utrace__ob_printf(b, "[%u];\n", x->count);
				break;
			}
			/* a sequence, its length first: "_<name>_length", as
			 * LTTng names it */
			utrace__ob_puts(b, "integer { size = 32; align = 8; signed = false; } _");
			put_ident(b, x->name, "_length;\n\t\t");
			put_int_type(b, x->elem_size, x->is_signed, x->hex);
			utrace__ob_putc(b, ' ');
			put_ident(b, x->name, "[_");
			put_ident(b, x->name, "_length];\n");
			break;
		}
	}
	utrace__ob_puts(b, "\t};\n};\n");
}

static void put_uuid(struct utrace__obuf *b, const unsigned char *u)
{
	int i;

	for (i = 0; i < 16; i++)
		utrace__ob_printf(b, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
				  u[i]);
}

static int write_metadata(struct ctf *c, struct utrace__tf *tf)
{
	struct utrace__obuf m = { 0 };
	uint64_t rt, mono, off = 0;
	char *p = path_of(c, "metadata");
	int fd, r = -ENOMEM;

	if (!p)
		return -ENOMEM;
	utrace__tf_start_time(tf, &rt, &mono);
	if (rt > mono)
		off = rt - mono;         /* CLOCK_REALTIME - CLOCK_MONOTONIC */
	utrace__ob_puts(&m, "/* CTF 1.8 */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n\n"
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"");
	put_uuid(&m, c->uuid);
	utrace__ob_puts(&m, "\";\n\tbyte_order = le;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
		"\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n");
	utrace__ob_printf(&m, "env {\n\tdomain = \"utrace\";\n\ttracer_name = \"utrace\";\n"
		"\ttracer_version = \"%s\";\n\tinput = ", utrace_reader_version());
	put_literal(&m, c->name);
	utrace__ob_puts(&m, ";\n};\n\n");
	utrace__ob_puts(&m, "clock {\n\tname = \"monotonic\";\n\tuuid = \"");
	put_uuid(&m, c->uuid);
	utrace__ob_printf(&m, "\";\n\tdescription = \"CLOCK_MONOTONIC\";\n"
		"\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = %llu;\n\toffset = %llu;\n"
		"\tabsolute = false;\n};\n\n",
		(unsigned long long)(off / 1000000000), (unsigned long long)(off % 1000000000));
	utrace__ob_puts(&m, "typealias integer { size = 64; align = 8; signed = false; "
		"map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n\n"
		"stream {\n\tid = 0;\n"
		"\tpacket.context := struct {\n"
		"\t\tuint64_clock_monotonic_t timestamp_begin;\n"
		"\t\tuint64_clock_monotonic_t timestamp_end;\n"
		"\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
		"\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
		"\t\tuint32_t cpu_id;\n\t};\n"
		"\tevent.header := struct {\n\t\tuint16_t id;\n"
		"\t\tuint64_clock_monotonic_t timestamp;\n\t};\n"
		"\tevent.context := struct {\n\t\tint32_t vpid;\n\t\tint32_t vtid;\n\t};\n};\n");
	if (c->meta.len)                 /* (no event classes: no buffer) */
		utrace__ob_put(&m, c->meta.p, c->meta.len);
	if (m.nomem || c->meta.nomem)
		goto out;
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		utrace__say("utrace: cannot open '%s': %s\n", p, strerror(errno));
		r = -EINVAL;
		goto out;
	}
	r = write_all(c, fd, p, m.p, m.len);
	if (close(fd) < 0 && !r) {
		c->werr = errno;
		c->werr_path = strdup(p);
		r = -EIO;
	}
out:
	free(m.p);
	free(p);
	return r;
}

/* --- events --- */

static int ctf_event_put(struct ctf *c, const struct utrace__xev *ev)
{
	const struct utrace__tf_item *it = ev->it;
	const struct utrace__xfmt *xf = ev->xf;
	struct cstream *s = stream_get(c, it->cpu);
	struct utrace__obuf *b;
	uint64_t t = it->time;
	size_t i;

	if (!s && it->cpu >= MAX_CPUS) {
		c->nr_past_cpus++;
		return 0;
	}
	if (!s)
		return -ENOMEM;
	b = &s->b;
	if (t < s->last)
		t = s->last;             /* never back in a stream */
	if (!b->len)
		packet_begin(c, s, it->cpu, t);
	if (t < s->end)
		t = s->end;
	s->end = t;
	s->nr++;
	put_le(b, xf->e->id, 2);
	put_le(b, t, 8);
	put_le(b, it->proc->pid, 4);
	put_le(b, it->thread->tid, 4);
	for (i = 0; i < xf->nr_fields; i++) {
		const struct utrace__fdesc *x = &xf->fields[i];
		struct utrace__fval v;

		utrace__fdesc_read(x, ev->r, &v);
		switch (x->kind) {
		case UTRACE__FVAL_NUM:
			put_le(b, v.num, (int)x->elem_size);
			break;
		case UTRACE__FVAL_STR:
			utrace__ob_put(b, v.p, v.len);
			utrace__ob_putc(b, 0);
			break;
		case UTRACE__FVAL_ARRAY:
			if (x->dynamic)
				put_le(b, v.len / x->elem_size, 4);
			utrace__ob_put(b, v.p, v.len);
			break;
		}
	}
	if (b->nomem)
		return -ENOMEM;
	return b->len >= PACKET_BYTES ? packet_write(c, s, it->cpu) : 0;
}

static void ctf_event(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	int r = ctf_event_put(w->ctx, ev);

	if (r < 0)
		w->err = r;
}

static int ctf_lost_put(struct ctf *c, const struct utrace__tf_item *it)
{
	struct cstream *s = stream_get(c, it->cpu);
	int r = 0;

	if (!s)
		return it->cpu >= MAX_CPUS ? 0 : -ENOMEM;
	if (s->b.len || !s->seq) {
		if (!s->b.len)           /* the count starts at 0 */
			packet_begin(c, s, it->cpu, it->time > s->last ? it->time : s->last);
		r = packet_write(c, s, it->cpu);
	}
	s->discarded += it->lost ? it->lost : 1;
	if (it->time > s->last)
		s->last = it->time;
	return r;
}

static void ctf_lost(struct utrace__xwalk *w, const struct utrace__xev *ev)
{
	int r = ctf_lost_put(w->ctx, ev->it);

	if (r < 0)
		w->err = r;
}

static const struct utrace__xwriter ctf_writer = {
	.format = ctf_format,
	.event = ctf_event,
	.lost = ctf_lost,
};

/* Write what is left of every stream; the losses after a CPU's last event
 * in an empty packet. */
static int flush_all(struct ctf *c)
{
	uint32_t i;
	int r = 0;

	for (i = 0; r >= 0 && i < c->nr_s; i++) {
		struct cstream *s = &c->s[i];

		if (!s->b.len && s->discarded != s->written_discarded)
			packet_begin(c, s, i, s->last);
		if (s->b.len)
			r = packet_write(c, s, i);
	}
	return r;
}

/* DIR made, or there and empty. */
static int make_dir(const char *dir)
{
	DIR *d;
	struct dirent *de;

	if (mkdir(dir, 0755) == 0)
		return 0;
	if (errno != EEXIST) {
		utrace__say("utrace: cannot make the directory '%s': %s\n", dir,
			    strerror(errno));
		return -1;
	}
	d = opendir(dir);
	if (!d) {
		utrace__say("utrace: cannot open the directory '%s': %s\n", dir,
			    strerror(errno));
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			closedir(d);
			utrace__say("utrace: '%s' is not empty: the CTF trace goes "
				    "into a new or empty directory\n", dir);
			return -1;
		}
	closedir(d);
	return 0;
}

int utrace__export_ctf(struct utrace__tf *tf, const char *out)
{
	struct ctf c = { .dir = out, .name = utrace__tf_name(tf) };
	int status, r = 0;
	uint32_t i;

	if (!utrace__tf_page_size(tf))
		return utrace__export_walk(tf, NULL, NULL, &ctf_writer, &c) | 1;  /* says why */
	if (make_dir(out) < 0)
		return 1;
	if (getrandom(c.uuid, sizeof(c.uuid), 0) != (ssize_t)sizeof(c.uuid)) {
		uint64_t t = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL;

		for (i = 0; i < 16; i++)
			c.uuid[i] = (unsigned char)(t >> (i % 8 * 8)) ^ (unsigned char)i;
	}
	c.uuid[6] = (unsigned char)((c.uuid[6] & 0x0f) | 0x40);   /* version 4 */
	c.uuid[8] = (unsigned char)((c.uuid[8] & 0x3f) | 0x80);
	status = utrace__export_walk(tf, NULL, NULL, &ctf_writer, &c);
	if (c.nr_past_cpus) {
		utrace__say("utrace: '%s': %llu events of CPUs from %u on were left out\n",
			    c.name, (unsigned long long)c.nr_past_cpus, MAX_CPUS);
		status = 1;
	}
	if (c.werr)
		r = -EIO;
	if (!r)
		r = flush_all(&c);
	if (!r)
		r = write_metadata(&c, tf);
	if (r == -ENOMEM)
		utrace__say("utrace: '%s': out of memory\n", c.name);
	if (c.werr)
		utrace__say("utrace: cannot write '%s': %s\n",
			    c.werr_path ? c.werr_path : out, strerror(c.werr));
	if (r < 0)
		status = 1;
	for (i = 0; i < c.nr_s; i++) {
		if (c.s[i].fd >= 0 && close(c.s[i].fd) < 0 && !status) {
			utrace__say("utrace: cannot write into '%s': %s\n", out,
				    strerror(errno));
			status = 1;
		}
		free(c.s[i].b.p);
	}
	free(c.s);
	free(c.meta.p);
	free(c.werr_path);
	return status;
}
