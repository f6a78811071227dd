/* SPDX-License-Identifier: MIT */
/* The call stacks of a recording (stacktab.h). */
#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file-reader.h"
#include "stacktab.h"

struct utrace__stack_ent {
	const void *proc;            /* NULL: empty */
	uint32_t id;
	uint32_t nr;
	uint64_t *ips;
};

enum utrace__stack_kind utrace__stack_kind(const char *system, const char *name)
{
	if (strcmp(system, "ftrace"))
		return UTRACE__STACK_NONE;
	if (!strcmp(name, "stack"))
		return UTRACE__STACK_DEF;
	if (!strcmp(name, "stack_ref"))
		return UTRACE__STACK_REF;
	return UTRACE__STACK_NONE;
}

static size_t slot_of(const struct utrace__stacktab *t, const void *proc, uint32_t id)
{
	uint64_t h = ((uint64_t)(uintptr_t)proc * 0x9e3779b97f4a7c15ull) ^ (id * 0xff51afd7ed558ccdull);
	size_t i = (size_t)(h >> 17) & (t->cap - 1);

	while (t->v[i].proc && (t->v[i].proc != proc || t->v[i].id != id))
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int grow(struct utrace__stacktab *t)
{
	struct utrace__stacktab n = { NULL, 0, t->cap ? t->cap * 2 : 256 };
	size_t i;

	n.v = calloc(n.cap, sizeof(*n.v));
	if (!n.v)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->v[i].proc)
			n.v[slot_of(&n, t->v[i].proc, t->v[i].id)] = t->v[i];
	n.nr = t->nr;
	free(t->v);
	*t = n;
	return 0;
}

int utrace__stacktab_item(struct utrace__stacktab *t, const void *proc,
			  enum utrace__stack_kind kind, const unsigned char *rec, size_t len,
			  const uint64_t **ips, uint32_t *nr)
{
	struct utrace__stack_ent *e;
	uint32_t id, n;

	*ips = NULL;
	*nr = 0;
	if (len < 12)
		return -EINVAL;
	memcpy(&id, rec + 8, 4);
	if (kind == UTRACE__STACK_REF) {
		if (!t->cap)
			return 0;
		e = &t->v[slot_of(t, proc, id)];
		if (e->proc) {
			*ips = e->ips;
			*nr = e->nr;
		}
		return 0;
	}
	if (len < 16)
		return -EINVAL;
	memcpy(&n, rec + 12, 4);
	if (n > (len - 16) / 8)
		return -EINVAL;
	if ((t->nr + 1) * 2 > t->cap && grow(t) < 0)
		return -ENOMEM;
	e = &t->v[slot_of(t, proc, id)];
	if (!e->proc || e->nr != n) {
		uint64_t *v = malloc(n ? n * sizeof(*v) : 1);

		if (!v)
			return -ENOMEM;
		if (!e->proc)
			t->nr++;
		free(e->ips);
		*e = (struct utrace__stack_ent){ proc, id, n, v };
	}
	memcpy(e->ips, rec + 16, n * sizeof(uint64_t));
	/* id 0: a stack the process's table had no room for, never referred to */
	*ips = e->ips;
	*nr = n;
	return 0;
}

void utrace__stacktab_free(struct utrace__stacktab *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->v[i].ips);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

/*
 * JIT code's names: /tmp/perf-PID.map ("START SIZE name" a line, hex), as
 * perf reads it at report time; one file's table kept (the last pid
 * asked), the rest read again when another pid is asked.
 */
struct jit_sym {
	uint64_t start, size;
	char *name;
};

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t jit_pid;
static bool jit_loaded;
static struct jit_sym *jit;
static size_t nr_jit;

static void jit_load(uint32_t pid)
{
	char path[64], line[1024];
	FILE *f;
	size_t i;

	for (i = 0; i < nr_jit; i++)
		free(jit[i].name);
	free(jit);
	jit = NULL;
	nr_jit = 0;
	jit_pid = pid;
	jit_loaded = true;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nr_jit < 1000000) {
		unsigned long long start, size;
		int at = 0;
		struct jit_sym *v;

		if (sscanf(line, "%llx %llx %n", &start, &size, &at) != 2 || !at)
			continue;
		line[strcspn(line, "\n")] = 0;
		v = realloc(jit, (nr_jit + 1) * sizeof(*v));
		if (!v)
			break;
		jit = v;
		jit[nr_jit].start = start;
		jit[nr_jit].size = size;
		jit[nr_jit].name = strdup(line + at);
		if (jit[nr_jit].name)
			nr_jit++;
	}
	fclose(f);
}

static bool jit_name(uint32_t pid, uint64_t ip, bool offsets, char *buf, size_t len)
{
	bool found = false;
	size_t i;

	pthread_mutex_lock(&jit_lock);
	if (!jit_loaded || jit_pid != pid)
		jit_load(pid);
	/* the last line of a range wins: code moved or replaced */
	for (i = nr_jit; i > 0 && !found; i--) {
		const struct jit_sym *s = &jit[i - 1];

		if (ip - s->start < s->size) {
			if (offsets)
				snprintf(buf, len, "%s+0x%" PRIx64 "/0x%" PRIx64, s->name,
					 ip - s->start, s->size);
			else
				snprintf(buf, len, "%s", s->name);
			found = true;
		}
	}
	pthread_mutex_unlock(&jit_lock);
	return found;
}

void utrace__stack_frame_name(const struct utrace__tf_process *proc, uint64_t ip, bool offsets,
			      char *buf, size_t len)
{
	const char *name = NULL, *path, *base;
	uint64_t start, size, bias;

	if (utrace__tf_sym_lookup(NULL, proc, ip, &name, &start, &size) == 0 && name) {
		if (offsets)
			snprintf(buf, len, "%s+0x%" PRIx64 "/0x%" PRIx64, name, ip - start, size);
		else
			snprintf(buf, len, "%s", name);
		return;
	}
	if (utrace__tf_obj_lookup(proc, ip, &path, &bias) == 0) {
		base = strrchr(path, '/');
		snprintf(buf, len, "[%s]+0x%" PRIx64, base ? base + 1 : path, ip - bias);
		return;
	}
	if (proc && jit_name(proc->pid, ip, offsets, buf, len))
		return;
	snprintf(buf, len, offsets ? "<%016" PRIx64 ">" : "0x%" PRIx64, ip);
}
