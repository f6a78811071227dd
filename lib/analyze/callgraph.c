/* SPDX-License-Identifier: MIT */
/*
 * utrace report -g (callgraph.h).  One pass in time order: the last event
 * of each thread is remembered, and a stack record that follows it (its
 * own, written nested in it) adds the stack to that event's tree.  A tree
 * node is a function name under its callee; the roots are the innermost
 * functions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "callgraph.h"
#include "file-reader.h"
#include "print.h"
#include "problems.h"
#include "stacktab.h"

struct node {
	char *name;
	uint64_t count;
	struct node *child, *next;   /* first child, next sibling */
};

struct cg_event {
	const char *system, *name;
	uint64_t events, stacked;
	struct node root;            /* its children: the innermost functions */
};

struct last {
	const void *proc;
	uint32_t tid;
	size_t ev;                   /* index in evs + 1; 0: none */
};

struct cg {
	struct cg_event *evs;
	size_t nr_evs;
	struct last *last;
	size_t nr_last;
	struct utrace__stacktab stacks;
};

static struct cg_event *event_of(struct cg *g, const char *system, const char *name)
{
	struct cg_event *v;
	size_t i;

	for (i = 0; i < g->nr_evs; i++)
		if (!strcmp(g->evs[i].system, system) && !strcmp(g->evs[i].name, name))
			return &g->evs[i];
	v = realloc(g->evs, (g->nr_evs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	g->evs = v;
	memset(&v[g->nr_evs], 0, sizeof(v[0]));
	v[g->nr_evs].system = system;
	v[g->nr_evs].name = name;
	return &v[g->nr_evs++];
}

static struct last *last_of(struct cg *g, const void *proc, uint32_t tid)
{
	struct last *v;
	size_t i;

	for (i = 0; i < g->nr_last; i++)
		if (g->last[i].proc == proc && g->last[i].tid == tid)
			return &g->last[i];
	v = realloc(g->last, (g->nr_last + 1) * sizeof(*v));
	if (!v)
		return NULL;
	g->last = v;
	v[g->nr_last] = (struct last){ proc, tid, 0 };
	return &v[g->nr_last++];
}

static struct node *child_of(struct node *n, const char *name)
{
	struct node *c;

	for (c = n->child; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;
	}
	c->next = n->child;
	n->child = c;
	return c;
}

static int add_stack(struct cg_event *e, const struct utrace__tf_process *proc,
		     const uint64_t *ips, uint32_t nr)
{
	struct node *n = &e->root;
	uint32_t i;

	e->stacked++;
	n->count++;
	for (i = 0; i < nr; i++) {
		char name[512];

		utrace__stack_frame_name(proc, ips[i], false, name, sizeof(name));
		n = child_of(n, name);
		if (!n)
			return -ENOMEM;
		n->count++;
	}
	return 0;
}

static void node_free(struct node *n)
{
	struct node *c = n->child, *next;

	for (; c; c = next) {
		next = c->next;
		node_free(c);
		free(c->name);
		free(c);
	}
}

static int cmp_nodes(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* n's children, most frequent first (then by name). */
static struct node **sorted(const struct node *n, size_t *nr)
{
	struct node **v, *c;
	size_t k = 0;

	for (c = n->child; c; c = c->next)
		k++;
	v = calloc(k ? k : 1, sizeof(*v));
	if (!v)
		return NULL;
	k = 0;
	for (c = n->child; c; c = c->next)
		v[k++] = c;
	qsort(v, k, sizeof(*v), cmp_nodes);
	*nr = k;
	return v;
}

/*
 * perf's graph: a node's only child goes on the next line under it; with
 * several, each branch is "|--P%--name" (P of the event's stacks), the
 * branch's own callers below it, indented past the "|--P%--".
 */
static int print_callers(FILE *out, const struct node *n, const char *prefix, uint64_t total)
{
	struct node **v;
	size_t nr, i;
	int e = 0;

	v = sorted(n, &nr);
	if (!v)
		return -ENOMEM;
	if (nr == 1 && v[0]->count == n->count) {
		fprintf(out, "%s%s\n", prefix, v[0]->name);
		e = print_callers(out, v[0], prefix, total);
		free(v);
		return e;
	}
	for (i = 0; i < nr && !e; i++) {
		char head[32], *np;
		size_t plen = strlen(prefix);
		int hl;

		hl = snprintf(head, sizeof(head), "|--%.2f%%--",
			      100.0 * (double)v[i]->count / (double)total);
		fprintf(out, "%s|\n%s%s%s\n", prefix, prefix, head, v[i]->name);
		np = malloc(plen + (size_t)hl + 2);
		if (!np) {
			e = -ENOMEM;
			break;
		}
		memcpy(np, prefix, plen);
		/* a later sibling's bar goes on down; the last one's does not */
		np[plen] = i + 1 < nr ? '|' : ' ';
		memset(np + plen + 1, ' ', (size_t)hl - 1);
		np[plen + (size_t)hl] = '\0';
		e = print_callers(out, v[i], np, total);
		free(np);
	}
	if (!e && nr) {
		size_t k = strlen(prefix);

		while (k && prefix[k - 1] == ' ')
			k--;
		fprintf(out, "%.*s\n", (int)k, prefix);
	}
	free(v);
	return e;
}

static int print_event(FILE *out, const struct cg_event *e)
{
	struct node **v;
	size_t nr, i;
	int r = 0;

	fprintf(out, "# Samples: %" PRIu64 " of event '%s:%s', %" PRIu64 " with a call stack\n",
		e->events, e->system, e->name, e->stacked);
	fprintf(out, "#\n# Overhead  Symbol\n# ........  ......\n#\n");
	v = sorted(&e->root, &nr);
	if (!v)
		return -ENOMEM;
	for (i = 0; i < nr && !r; i++) {
		fprintf(out, "%10.2f%%  %s\n            |\n            ---%s\n",
			100.0 * (double)v[i]->count / (double)e->stacked, v[i]->name, v[i]->name);
		r = print_callers(out, v[i], "               ", v[i]->count);
		fprintf(out, "\n");
	}
	free(v);
	return r;
}

int utrace__callgraph_file(struct utrace__tf *tf, const struct utrace__print_opts *select,
			   FILE *out)
{
	const char *fname = utrace__tf_name(tf);
	struct utrace__tf_iter *it = NULL;
	struct utrace__tf_item item;
	struct cg g = { 0 };
	bool any = false;
	size_t i;
	int e;

	if (!utrace__tf_readable(tf))
		return 1;
	e = utrace__tf_iter_new(tf, &it);
	while (e >= 0 && (e = utrace__tf_iter_next(it, &item)) > 0) {
		enum utrace__stack_kind kind;
		const uint64_t *ips;
		struct last *l;
		uint32_t nr, tid;

		if (item.kind != UTRACE__TF_EVENT || !item.format || item.kernel)
			continue;
		tid = item.thread ? item.thread->tid : item.proc->pid;
		l = last_of(&g, item.proc, tid);
		if (!l) {
			e = -ENOMEM;
			break;
		}
		kind = utrace__stack_kind(item.format->system, item.format->name);
		if (kind == UTRACE__STACK_NONE && !strcmp(item.format->system, "ftrace") &&
		    !strcmp(item.format->name, "user_stack")) {
			/* the stacktrace trigger's: 8 slots, 0 after the last */
			uint64_t v[8];

			for (nr = 0; nr < 8 && 16 + 8 * (nr + 1) <= item.len; nr++) {
				memcpy(&v[nr], item.rec + 16 + 8 * nr, 8);
				if (!v[nr])
					break;
			}
			if (l->ev) {
				e = add_stack(&g.evs[l->ev - 1], item.proc, v, nr);
				any = true;
			}
			l->ev = 0;
			continue;
		}
		if (kind != UTRACE__STACK_NONE) {
			e = utrace__stacktab_item(&g.stacks, item.proc, kind, item.rec, item.len,
						  &ips, &nr);
			if (e == 0 && ips && l->ev) {
				e = add_stack(&g.evs[l->ev - 1], item.proc, ips, nr);
				any = true;
			} else if (e == -EINVAL) {
				e = 0;
			}
			l->ev = 0;
			continue;
		}
		if (!strcmp(item.format->system, "ftrace") ||
		    (select && !utrace__print_select(select, item.format->system,
						     item.format->name))) {
			l->ev = 0;
			continue;
		}
		{
			struct cg_event *ce = event_of(&g, item.format->system, item.format->name);

			if (!ce) {
				e = -ENOMEM;
				break;
			}
			ce->events++;
			l->ev = (size_t)(ce - g.evs) + 1;
		}
	}
	if (e >= 0 && !any) {
		utrace__say("utrace: '%s' has no call stacks (record with utrace record -g)\n",
			    fname);
		e = 1;
	}
	for (i = 0; e == 0 && i < g.nr_evs; i++)
		if (g.evs[i].stacked)
			e = print_event(out, &g.evs[i]);
	if (e < 0)
		utrace__say("utrace: '%s': %s\n", fname,
			    e == -ENOMEM ? "out of memory" : "a bad record");
	for (i = 0; i < g.nr_evs; i++)
		node_free(&g.evs[i].root);
	free(g.evs);
	free(g.last);
	utrace__stacktab_free(&g.stacks);
	utrace__tf_iter_free(it);
	return e ? 1 : 0;
}
