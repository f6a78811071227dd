/* SPDX-License-Identifier: MIT */
/*
 * utrace probe -x (C names through DWARF, as perf probe -x) and -k (the
 * kernel's uprobes for a process without the utrace agent): argument
 * parsing; the work is lib/probe/dwarf.c, lib/probe/kuprobe.c and
 * kuprobes.c (uprobe_events).
 */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "dwarf-names.h"
#include "kuprobe.h"
#include "kuprobes.h"
#include "probe-dwarf.h"
#include "probe.h"

const char probe_dwarf_help[] =
	"       utrace probe -x BINARY -F|--funcs [FILTER]\n"
	"       utrace probe -x BINARY -V|--vars FUNC[:LINE|+OFFS] [--externs]\n"
	"       utrace probe -x BINARY -L|--line FUNC\n"
	"       utrace probe -x BINARY [-n|--dry-run] 'PERF-DEFINITION'...\n"
	"       utrace probe -k [-p PID] [-x BINARY] [-n|--dry-run] 'DEFINITION'...\n"
	"       utrace probe -k -d [GRP/]EVENT...\n"
	"\n"
	"C names, from the DWARF of BINARY (built with -g), as perf probe -x:\n"
	"  -x, --exec BINARY    the program or library to look into\n"
	"  -F, --funcs [FILTER] its functions, matching the glob FILTER (default\n"
	"                       '!_*': those not starting with '_')\n"
	"  -V, --vars POINT     the variables a probe at POINT can fetch\n"
	"      --externs        with --vars: the globals of its file too\n"
	"  -L, --line FUNC      FUNC's source; numbered lines can take a probe\n"
	"  PERF-DEFINITION      [[GRP:]EVENT=]FUNC[:LINE|+OFFS|%return] [[NAME=]ARG[:TYPE]]...\n"
	"                       ARG: a C variable with ->, . and [N] ('r->name:string',\n"
	"                       'arr[2]'), $params, $vars, $retval, or a raw fetcharg\n"
	"                       (%di, $stack1, +8(%si):u32); LINE counts from FUNC's\n"
	"                       first line (see --line).  Printed as raw definitions\n"
	"                       in the kernel's uprobe_events syntax.\n"
	"  -n, --dry-run        print the raw definitions only\n"
	"\n"
	"The kernel's uprobes, for a process without the utrace agent (root):\n"
	"  -k, --kernel         write DEFINITION to the kernel's uprobe_events, after\n"
	"                       checking the site is an instruction boundary (the\n"
	"                       kernel does not check; it would corrupt the program):\n"
	"                       p[:[GRP/]EVENT] [OBJ:]SYMBOL[+OFFS] [FETCHARGS],\n"
	"                       r[:[GRP/]EVENT] [OBJ:]SYMBOL [FETCHARGS], or with -x a\n"
	"                       PERF-DEFINITION.  Record it with 'utrace record\n"
	"                       --kernel-probe DEFINITION -p PID' (which also removes\n"
	"                       it at the end) or 'utrace record -e kernel:GRP:EVENT'\n"
	"  -p, --pid PID        find OBJ (a path, or a name as libc) in this process;\n"
	"                       without OBJ, its executable\n"
	"  -d, --delete         with -k: remove the kernel's uprobes [GRP/]EVENT...\n"
	"                       (group uprobes by default)\n"
	"\n"
	"With -p PID and without -k or -n, the definitions by C name go to the\n"
	"process's agent as raw ones (utrace probe -p PID RAW-DEFINITION...).\n";

static int usage_probe(FILE *f)
{
	fprintf(f, "usage: utrace probe ...\n%s", probe_dwarf_help);
	return f == stdout ? 0 : 129;
}

static const struct option opts[] = {
	{ "exec", required_argument, NULL, 'x' },
	{ "funcs", optional_argument, NULL, 'F' },
	{ "vars", required_argument, NULL, 'V' },
	{ "externs", no_argument, NULL, 'E' },
	{ "line", required_argument, NULL, 'L' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "kernel", no_argument, NULL, 'k' },
	{ "pid", required_argument, NULL, 'p' },
	{ "delete", no_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

bool probe_dwarf_wants(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-x") || !strncmp(a, "--exec", 6) || !strcmp(a, "-k") ||
		    !strcmp(a, "--kernel") || !strncmp(a, "--funcs", 7) || !strcmp(a, "-F") ||
		    !strncmp(a, "--vars", 6) || !strcmp(a, "-V") || !strncmp(a, "--line", 6) ||
		    !strcmp(a, "-L"))
			return true;
	}
	return false;
}

static int open_bin(const char *bin, struct utrace__dw **dw)
{
	char err[UTRACE_DW_ERR_MAX];

	if (utrace__dw_open(bin, dw, err) < 0) {
		fprintf(stderr, "utrace probe: %s\n", err);
		return 1;
	}
	return 0;
}

/* ---- a glob for FUNC ('str*'): one raw definition with the glob ---- */

struct glob_first {
	const char *glob;
	char name[2][256];	/* the first two matches, by address */
	uint64_t at[2];
	size_t n;		/* all matches, one a name */
};

static int glob_first_one(void *arg, const char *name, uint64_t vaddr)
{
	struct glob_first *g = arg;
	size_t l = strcspn(name, "@");
	char buf[256];

	if (l >= sizeof(buf))
		return 0;
	memcpy(buf, name, l);
	buf[l] = '\0';
	if (fnmatch(g->glob, buf, 0))
		return 0;
	g->n++;
	for (int k = 0; k < 2; k++) {
		if (g->name[k][0] && g->at[k] <= vaddr)
			continue;
		if (k == 0 && g->name[0][0]) {
			memcpy(g->name[1], g->name[0], sizeof(g->name[1]));
			g->at[1] = g->at[0];
		}
		snprintf(g->name[k], sizeof(g->name[k]), "%s", buf);
		g->at[k] = vaddr;
		break;
	}
	return 0;
}

/* p->raw of FIRST made the glob's (translate()); the event's name kept
 * only when the definition named it. */
static int glob_raw(struct utrace__dw_probe *p, bool named, const char *first, const char *glob)
{
	char *raw = p->raw, *slash = strchr(raw, '/'), *w1 = strchr(raw, ' '), *colon, *out;
	int n;

	if (!slash || !w1 || slash > w1) {
		free(raw);
		return -EINVAL;
	}
	colon = w1 + 1 + strcspn(w1 + 1, " ");
	while (colon > w1 && *colon != ':')
		colon--;
	if (strncmp(colon + 1, first, strlen(first))) {
		free(raw);
		return -EINVAL;
	}
	n = asprintf(&out, "%.*s%.*s%.*s%s%s", (int)(slash + 1 - raw), raw,
		     named ? (int)(w1 - slash - 1) : 0, slash + 1, (int)(colon + 1 - w1), w1,
		     glob, colon + 1 + strlen(first));
	free(raw);
	p->raw = n < 0 ? NULL : out;
	return n < 0 ? -ENOMEM : 0;
}

/*
 * utrace__dw_translate(), where FUNC may be a glob: then the raw
 * definition keeps the glob (the process, or utrace probe, expands it:
 * utrace__probe_expand()), translated from the first matching function;
 * its arguments must translate the same for the first two (registers,
 * $argN, $retval: not C variables, whose places differ), and FUNC takes
 * no :LINE.  An event the definition names is the event of all; else
 * each is named after its function by the process (p_FUNC_0).
 * *count: the matching functions (0: no glob).
 */
static int translate(struct utrace__dw *dw, const char *binary, const char *def,
		     struct utrace__dw_probe *p, size_t *count, char err[UTRACE_DW_ERR_MAX])
{
	struct glob_first g = { 0 };
	size_t w0 = strcspn(def, " \t"), f0, f1;
	const char *eq = memchr(def, '=', w0);
	char glob[256], *one = NULL, *two = NULL, *sp1, *sp2;
	struct utrace__dw_probe p2;
	int r;

	*count = 0;
	f0 = eq ? (size_t)(eq - def) + 1 : 0;
	f1 = f0 + strcspn(def + f0, ":+%@ \t");
	if (f1 - f0 >= sizeof(glob) ||
	    (!memchr(def + f0, '*', f1 - f0) && !memchr(def + f0, '?', f1 - f0) &&
	     !memchr(def + f0, '[', f1 - f0)))
		return utrace__dw_translate(dw, def, UTRACE_DW_SITE_SYMBOL, p, err);
	memcpy(glob, def + f0, f1 - f0);
	glob[f1 - f0] = '\0';
	if (def[f1] == ':' || def[f1] == '@') {
		snprintf(err, UTRACE_DW_ERR_MAX, "a glob ('%s') takes no :LINE or @FILE", glob);
		return -EINVAL;
	}
	g.glob = glob;
	r = utrace__probe_files.functions(NULL, binary, glob_first_one, &g);
	if (r < 0 || !g.n) {
		snprintf(err, UTRACE_DW_ERR_MAX, "no function of %s matches '%s'", binary, glob);
		return -ENOENT;
	}
	if (asprintf(&one, "%.*s%s%s", (int)f0, def, g.name[0], def + f1) < 0)
		return -ENOMEM;
	r = utrace__dw_translate(dw, one, UTRACE_DW_SITE_SYMBOL, p, err);
	if (r < 0) {
		free(one);
		return r;
	}
	sp1 = strchr(p->raw, ' ');
	sp1 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (g.name[1][0]) {
		if (asprintf(&two, "%.*s%s%s", (int)f0, def, g.name[1], def + f1) < 0)
			two = NULL;
		if (!two || utrace__dw_translate(dw, two, UTRACE_DW_SITE_SYMBOL, &p2, err) < 0) {
			snprintf(err, UTRACE_DW_ERR_MAX, "'%s' (for %s, the glob's second function) "
				 "does not translate", two ? two : def, g.name[1]);
			free(one);
			free(two);
			free(p->raw);
			return -EINVAL;
		}
		sp2 = strchr(p2.raw, ' ');
		sp2 = sp2 ? strchr(sp2 + 1, ' ') : NULL;
		if (strcmp(sp1 ? sp1 : "", sp2 ? sp2 : "")) {
			snprintf(err, UTRACE_DW_ERR_MAX, "with a glob the arguments must be the same in "
				 "every function (registers, $argN, $retval), not C variables: %.40s has "
				 "'%.50s', %.40s '%.50s'", g.name[0], sp1 ? sp1 + 1 : "", g.name[1],
				 sp2 ? sp2 + 1 : "");
			free(p2.raw);
			free(one);
			free(two);
			free(p->raw);
			return -EINVAL;
		}
		free(p2.raw);
		free(two);
	}
	free(one);
	/* "p:GRP/EVENT BIN:FIRST[+OFFS] ARGS" -> "p:GRP/[EVENT] BIN:GLOB[+OFFS] ARGS" */
	r = glob_raw(p, eq != NULL, g.name[0], glob);
	if (r < 0) {
		snprintf(err, UTRACE_DW_ERR_MAX, "'%s': cannot make the raw definition", def);
		return r;
	}
	*count = g.n;
	return 0;
}

int probe_dwarf_defs(const char *who, const char *binary, char *const *defs, size_t nr,
		     char ***raw)
{
	char err[UTRACE_DW_ERR_MAX];
	struct utrace__dw *dw;
	size_t i;

	*raw = calloc(nr ? nr : 1, sizeof(**raw));
	if (!*raw) {
		fprintf(stderr, "%s: out of memory\n", who);
		return 1;
	}
	if (utrace__dw_open(binary, &dw, err) < 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		free(*raw);
		*raw = NULL;
		return 1;
	}
	for (i = 0; i < nr; i++) {
		struct utrace__dw_probe p;
		size_t count;

		if (translate(dw, binary, defs[i], &p, &count, err) < 0) {
			fprintf(stderr, "%s: '%s': %s\n", who, defs[i], err);
			while (i--)
				free((*raw)[i]);
			free(*raw);
			*raw = NULL;
			utrace__dw_close(dw);
			return 1;
		}
		(*raw)[i] = p.raw;
	}
	utrace__dw_close(dw);
	return 0;
}

/* -k: each definition to uprobe_events (or printed with -n). */
static int kernel_defs(const char *bin, long pid, bool dry, char **defs, int nr)
{
	char err[UTRACE_DW_ERR_MAX], kerr[4096];
	struct utrace__dw *dw = NULL;
	int i, status = 0;

	if (!dry && kup_unavailable()) {
		fprintf(stderr, "utrace probe: %s\n", kup_unavailable());
		return 1;
	}
	if (bin && open_bin(bin, &dw))
		return 1;
	for (i = 0; i < nr; i++) {
		struct utrace__dw_probe p = { 0 };
		struct utrace__kup k;
		const char *def = defs[i];

		if (dw && !utrace__kup_is_raw(def)) {
			if (utrace__dw_translate(dw, def, UTRACE_DW_SITE_FILEOFF, &p, err) < 0) {
				fprintf(stderr, "utrace probe: '%s': %s\n", def, err);
				status = 1;
				continue;
			}
			def = p.raw;
		}
		if (utrace__kup_translate(def, (pid_t)pid, bin ? utrace__dw_path(dw) : NULL, NULL,
					  &k, err) < 0) {
			fprintf(stderr, "utrace probe: %s\n", err);
			free(p.raw);
			status = 1;
			continue;
		}
		free(p.raw);
		if (dry) {
			printf("%s\n", k.line);
		} else if (kup_write(k.line, kerr, sizeof(kerr)) < 0) {
			fprintf(stderr, "utrace probe: %s\n", kerr);
			status = 1;
		} else {
			printf("%s\n", k.line);
			fprintf(stderr, "utrace probe: added kernel uprobe %s/%s; record it with "
				"'utrace record -e kernel:%s:%s -p PID', remove it with 'utrace "
				"probe -k -d %s/%s'\n", k.group, k.event, k.group, k.event, k.group,
				k.event);
		}
		utrace__kup_free(&k);
	}
	utrace__dw_close(dw);
	return status;
}

int utrace_probe_dwarf_main(int argc, char **argv, struct probe_dwarf_raw *agent)
{
	const char *bin = NULL, *vars = NULL, *line = NULL, *funcs = NULL;
	bool want_funcs = false, externs = false, dry = false, kernel = false;
	char err[UTRACE_DW_ERR_MAX];
	struct utrace__dw *dw;
	bool del = false;
	int c, r = 0;
	long pid = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "x:FV:L:nkp:dh", opts, NULL)) != -1) {
		switch (c) {
		case 'x':
			bin = optarg;
			break;
		case 'F':
			want_funcs = true;
			funcs = optarg;
			break;
		case 'V':
			vars = optarg;
			break;
		case 'E':
			externs = true;
			break;
		case 'L':
			line = optarg;
			break;
		case 'n':
			dry = true;
			break;
		case 'k':
			kernel = true;
			break;
		case 'p': {
			char *end;

			pid = strtol(optarg, &end, 10);
			if (*end || pid <= 0)
				return usage_error("probe", "bad pid '%s'", optarg);
			break;
		}
		case 'd':
			del = true;
			break;
		case 'h':
			return usage_probe(stdout);
		default:
			return usage_probe(stderr);
		}
	}
	/* --funcs FILTER: the optional argument may come as the next word */
	if (want_funcs && !funcs && optind < argc && argv[optind][0] != '-')
		funcs = argv[optind++];
	if (del) {
		int i;

		if (!kernel)
			return usage_error("probe", "%s", "-d with -x: remove the agent's probes "
					   "with 'utrace probe -p PID -d EVENT'");
		if (optind >= argc)
			return usage_error("probe", "%s", "which event?");
		for (i = optind; i < argc; i++) {
			char ge[256], kerr[1024];

			snprintf(ge, sizeof(ge), "%s%s", strchr(argv[i], '/') ? "" : "uprobes/",
				 argv[i]);
			if (kup_remove(ge, kerr, sizeof(kerr)) < 0) {
				fprintf(stderr, "utrace probe: %s\n", kerr);
				r = 1;
			}
		}
		return r;
	}
	if (kernel) {
		if (want_funcs || vars || line)
			return usage_error("probe", "%s lists need no -k", "--funcs/--vars/--line");
		if (optind >= argc)
			return usage_error("probe", "%s: no definition", "-k");
		return kernel_defs(bin, pid, dry, argv + optind, argc - optind);
	}
	if (!bin && !want_funcs && !vars && !line)
		return usage_error("probe", "%s", "no binary: give -x BINARY (or -k)");
	if (!bin)
		return usage_error("probe", "%s", "--funcs, --vars and --line need -x BINARY");
	if ((want_funcs + !!vars + !!line) > 1)
		return usage_error("probe", "%s", "one of --funcs, --vars, --line at a time");
	if (open_bin(bin, &dw))
		return 1;
	if (want_funcs)
		r = utrace__dw_list_funcs(dw, funcs, stdout, err);
	else if (vars)
		r = utrace__dw_list_vars(dw, vars, externs, stdout, err);
	else if (line)
		r = utrace__dw_list_lines(dw, line, stdout, err);
	else if (optind >= argc) {
		utrace__dw_close(dw);
		return usage_error("probe", "%s", "no definition (or --funcs, --vars, --line)");
	}
	else if (pid && !dry) {
		/* the raw definitions, for cmd-probe.c to send to the
		 * process's agent */
		utrace__dw_close(dw);
		agent->pid = pid;
		agent->nr = argc - optind;
		return probe_dwarf_defs("utrace probe", bin, argv + optind, (size_t)agent->nr,
					&agent->raw);
	} else {
		int i;

		for (i = optind; i < argc; i++) {
			struct utrace__dw_probe p;
			size_t count;

			if (translate(dw, bin, argv[i], &p, &count, err) < 0) {
				fprintf(stderr, "utrace probe: '%s': %s\n", argv[i], err);
				r = 1;
				continue;
			}
			printf("%s\n", p.raw);
			if (count)
				fprintf(stderr, "utrace probe: '%s': %zu function%s of %s match%s\n",
					argv[i], count, count == 1 ? "" : "s", bin, count == 1 ? "es" : "");
			free(p.raw);
		}
		utrace__dw_close(dw);
		return r;
	}
	utrace__dw_close(dw);
	if (r < 0) {
		fprintf(stderr, "utrace probe: %s\n", err);
		return 1;
	}
	return 0;
}
