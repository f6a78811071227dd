/* SPDX-License-Identifier: MIT */
/*
 * Jump-label call sites, seen from the inside (t0093): the program reads
 * the bytes at its own sites, its library's and a dlopen()ed C++
 * module's, while probes come and go.
 *
 *   nopsite-demo MODULE sites    the steps below, one line each
 *   nopsite-demo MODULE fire     fire every event a few times (for
 *                                UTRACE_EVENTS / UTRACE_PRINT)
 *   nopsite-demo MODULE stress N 4 threads fire nop_main while another
 *                                attaches and detaches a probe N times (and
 *                                one more does the same on nop_odd), with
 *                                a SIGTRAP handler of the program's own
 *   nopsite-demo MODULE wait     print "ready", then wait to be killed
 *   nopsite-demo MODULE closefds FILE  close every descriptor above 2, as
 *                                a daemon does, open FILE (which takes a
 *                                freed number), then switch nop_main on:
 *                                FILE stays empty
 *   nopsite-demo MODULE refused  code writes refused (seccomp: pwrite64
 *                                fails with EPERM, as where a policy
 *                                forbids them) before the module is
 *                                loaded: its sites keep the load and
 *                                branch, and its event still fires
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nopsite-lib-events.h"
#define CREATE_TRACE_POINTS
#include "nopsite-events.h"
#include "nopsite-sites.h"

void nopsite_lib_fire(int n);
void nopsite_lib_sites(FILE *f);

static atomic_long hits;

static void on_event(void *data, int n)
{
	(void)data;
	(void)n;
	atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
}

static void show(const char *step)
{
	printf("%s:", step);
	nopsite_print(stdout, "main");
	nopsite_lib_sites(stdout);
	printf(" hits=%ld\n", atomic_load(&hits));
	fflush(stdout);
}

static void fire_main(int n)
{
	for (int i = 0; i < n; i++) {
		trace_nop_main(i);
		trace_nop_odd(i);
		trace_nop_lib(i);
	}
}

/* The C++ module and its three functions; NULL (said why) if not. */
static void *load_module(const char *module, void (**fire)(int),
			 void (**sites)(FILE *), int (**probe)(int))
{
	void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return NULL;
	}
	*(void **)fire = dlsym(h, "nopsite_mod_fire");
	*(void **)sites = dlsym(h, "nopsite_mod_sites");
	*(void **)probe = dlsym(h, "nopsite_mod_probe");
	if (!*fire || !*sites || !*probe) {
		fprintf(stderr, "%s: no nopsite_mod_* functions\n", module);
		return NULL;
	}
	return h;
}

static int sites(const char *module)
{
	void *h;
	void (*mod_fire)(int);
	void (*mod_sites)(FILE *);
	int (*mod_probe)(int);
	pid_t pid;
	long base;
	int st;

	show("start");
	register_trace_nop_main(on_event, NULL);
	show("main-on");
	fire_main(3);
	show("main-fired");
	unregister_trace_nop_main(on_event, NULL);
	register_trace_nop_odd(on_event, NULL);
	show("odd-on");
	fire_main(4);           /* 1 and 3 pass TP_CONDITION */
	unregister_trace_nop_odd(on_event, NULL);
	register_trace_nop_lib(on_event, NULL);
	show("lib-on");
	fire_main(2);
	nopsite_lib_fire(7);
	unregister_trace_nop_lib(on_event, NULL);
	show("lib-off");

	h = load_module(module, &mod_fire, &mod_sites, &mod_probe);
	if (!h)
		return 1;
	printf("mod-loaded:");
	mod_sites(stdout);
	mod_probe(1);
	printf("\nmod-on:");
	mod_sites(stdout);
	mod_fire(1);
	mod_fire(2);
	printf(" hits=%d", mod_probe(0));
	printf("\nmod-off:");
	mod_sites(stdout);
	printf("\n");
	fflush(stdout);
	if (dlclose(h))
		return 1;

	/* Sites of the closed module are gone from the table: this change
	 * must not write into where it was. */
	register_trace_nop_main(on_event, NULL);
	show("after-dlclose");
	base = atomic_load(&hits);
	pid = fork();
	if (pid == 0) {
		fire_main(2);
		show("child");
		unregister_trace_nop_main(on_event, NULL);
		show("child-off");
		fire_main(2);
		_exit(atomic_load(&hits) == base + 2 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return 1;
	unregister_trace_nop_main(on_event, NULL);
	show("end");
	return 0;
}

static int fire(const char *module)
{
	void *h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
	void (*mod_fire)(int);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&mod_fire = dlsym(h, "nopsite_mod_fire");
	if (!mod_fire)
		return 1;
	fire_main(5);
	nopsite_lib_fire(10);
	mod_fire(20);
	dlclose(h);
	return 0;
}

/* pwrite64 fails with EPERM from now on (libutrace writes code with it). */
static int refuse_code_writes(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return -1;
	}
	return 0;
}

static int refused(const char *module)
{
	void (*mod_fire)(int);
	void (*mod_sites)(FILE *);
	int (*mod_probe)(int);
	void *h;

	show("before");
	if (refuse_code_writes())
		return 3;
	h = load_module(module, &mod_fire, &mod_sites, &mod_probe);
	if (!h)
		return 1;
	mod_probe(1);
	printf("refused-mod-on:");
	mod_sites(stdout);
	mod_fire(1);
	mod_fire(2);
	mod_fire(3);
	printf(" hits=%d\n", mod_probe(0));
	return 0;
}

static int closefds(const char *file)
{
	FILE *f;

	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	f = fopen(file, "w");
	if (!f)
		return 1;
	register_trace_nop_main(on_event, NULL);
	fire_main(2);
	show("closefds-on");
	unregister_trace_nop_main(on_event, NULL);
	show("closefds-off");
	fclose(f);
	return 0;
}

/* --- stress --- */

#define FIRERS 4

static atomic_int stop_firing, stop_odd;
static atomic_long calls[FIRERS];
static pthread_barrier_t bar;

static void *firer(void *arg)
{
	long id = (long)arg, n = 0;

	while (!atomic_load_explicit(&stop_firing, memory_order_relaxed)) {
		trace_nop_main((int)n);
		n++;
	}
	atomic_store(&calls[id], n);
	/* the checked phase: the probe stays attached */
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	for (int i = 0; i < 100000; i++)
		trace_nop_main(i);
	pthread_barrier_wait(&bar);
	return NULL;
}

/* Another thread rewriting other sites all along: a rewrite of ours must
 * not return before its change is in the code, whoever does it. */
static void *odd_toggler(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_odd)) {
		register_trace_nop_odd(on_event, NULL);
		unregister_trace_nop_odd(on_event, NULL);
	}
	return NULL;
}

/* The program's own SIGTRAP handler, set after libutrace's: the
 * transient int3s of a rewrite must still reach libutrace. */
static atomic_int own_traps;

static void on_own_trap(int sig)
{
	(void)sig;
	atomic_fetch_add(&own_traps, 1);
}

static int stress(int rounds)
{
	pthread_t t[FIRERS], odd;
	long total = 0, before;

	signal(SIGTRAP, on_own_trap);

	pthread_barrier_init(&bar, NULL, FIRERS + 1);
	for (long i = 0; i < FIRERS; i++)
		if (pthread_create(&t[i], NULL, firer, (void *)i))
			return 1;
	if (pthread_create(&odd, NULL, odd_toggler, NULL))
		return 1;
	for (int i = 0; i < rounds; i++) {
		if (register_trace_nop_main(on_event, NULL) ||
		    unregister_trace_nop_main(on_event, NULL))
			return 1;
	}
	atomic_store(&stop_firing, 1);
	if (register_trace_nop_main(on_event, NULL))
		return 1;
	pthread_barrier_wait(&bar);
	for (int i = 0; i < FIRERS; i++)
		total += atomic_load(&calls[i]);
	before = atomic_load(&hits);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	for (int i = 0; i < FIRERS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&stop_odd, 1);
	pthread_join(odd, NULL);
	printf("toggles=%d calls=%ld hits-while-toggling<=calls=%s checked=%ld own-traps=%d\n",
	       rounds, total, before <= total ? "yes" : "no",
	       atomic_load(&hits) - before, atomic_load(&own_traps));
	show("stress-end");
	unregister_trace_nop_main(on_event, NULL);
	return before <= total ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[2], "sites"))
		return sites(argv[1]);
	if (argc == 3 && !strcmp(argv[2], "fire"))
		return fire(argv[1]);
	if (argc == 4 && !strcmp(argv[2], "stress"))
		return stress(atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[2], "closefds"))
		return closefds(argv[3]);
	if (argc == 3 && !strcmp(argv[2], "refused"))
		return refused(argv[1]);
	if (argc == 3 && !strcmp(argv[2], "wait")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: nopsite-demo MODULE sites|fire|stress N|wait|refused|closefds FILE\n");
	return 2;
}
