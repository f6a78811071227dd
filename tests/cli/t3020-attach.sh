#!/usr/bin/env bash
# Issue 30 item 1: attaching to any running process.  A program built here
# without libutrace, Debian's python3 and memcached (when installed) get
# libutrace loaded by ptrace (utrace attach, probe -p, record -p --probe),
# are probed and recorded, and run on with their own output and exit
# status right: a thread stopped in read() or nanosleep() gets its system
# call's result, signals sent meanwhile all arrive, 100 attaches to busy
# programs keep their SSE registers, programs that live in malloc() never
# hang, a thread inside an rseq critical section is aborted; a process
# under strace is refused with one line, and so is one that ptrace may not
# touch, a utrace without its library, a sanitizer build's library.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 run
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler ($CC) to build a program without libutrace"
[ "$(uname -m)" = x86_64 ] || skip_all "the probe engine is x86-64 only"

# main blocked in read(0) while it is attached to; then five work() calls
# between nanosleeps; exit status 7
cat > plain.c <<'EOF'
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) int work(int x) { return x * 3 + 1; }
int main(void)
{
	char buf[64];
	long sum = 0;
	ssize_t n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	n = read(0, buf, sizeof(buf) - 1);
	if (n < 0) { perror("read"); return 3; }
	buf[n] = 0;
	printf("read %zd '%s'\n", n, strtok(buf, "\n"));
	for (int i = 0; i < 5; i++) {
		struct timespec ts = { 0, 50000000 };
		if (nanosleep(&ts, NULL)) { perror("nanosleep"); return 4; }
		sum += work(i);
	}
	printf("sum %ld\n", sum);
	return 7;
}
EOF
# main asleep 1.5 s in nanosleep() while it is attached to: it must sleep
# the whole time and return 0
cat > sleeper.c <<'EOF'
#include <stdio.h>
#include <time.h>
int main(void)
{
	struct timespec a, b, ts = { 1, 500000000 }, rem = { 0, 0 };
	int r;

	clock_gettime(CLOCK_MONOTONIC, &a);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	r = nanosleep(&ts, &rem);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double el = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("r=%d slept=%s\n", r, el >= 1.5 ? "enough" : "short");
	return r == 0 && el >= 1.5 ? 0 : 1;
}
EOF
# busy: the main thread computes (values held in SSE and general
# registers across the loop: a register not given back changes them), a
# second spins, until SIGUSR1; then the main thread computes it all again
# and compares.  No thread waits in a system call: utrace borrows the main
# one (it prefers a waiting thread)
cat > busy.c <<'EOF'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
static volatile sig_atomic_t stop;
__attribute__((noinline)) long work(long x) { return x * 7 % 1000003; }
__attribute__((noinline)) void tick(long k) { __asm__ volatile("" : : "r"(k)); }
static void *spin(void *arg)
{
	double d = 1;
	while (!stop) { d = d * 1.0000001 + 1e-9; if (d > 1e9) d = 1; }
	return arg;
}
static void on_usr1(int s) { (void)s; stop = 1; }
int main(void)
{
	pthread_t t;
	long sum = 0, k = 0, sum2 = 0;
	double v = 1.0, w = 1.0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR1, on_usr1);
	pthread_create(&t, NULL, spin, NULL);
	printf("ready\n");
	while (!stop) {
		v = v * 1.0000001 + 1e-12;
		if (v > 2)
			v = 1;
		sum += work(k++);
		if (!(k & 0xfffff))
			tick(k);
	}
	for (long i = 0; i < k; i++) {
		w = w * 1.0000001 + 1e-12;
		if (w > 2)
			w = 1;
		sum2 += work(i);
	}
	pthread_join(t, NULL);
	printf("fp %s, sum %s\n", v == w ? "same" : "differs", sum == sum2 ? "same" : "differs");
	return 0;
}
EOF
if ! "$CC" -O1 -g -o plain plain.c 2> err || ! "$CC" -O1 -o sleeper sleeper.c 2>> err ||
   ! "$CC" -O1 -pthread -o busy busy.c 2>> err; then
	skip_all "cannot build the test programs: $(head -1 err)"
fi
check "the programs do not link libutrace" bash -c '! ldd ./plain ./busy | grep -q libutrace'

# A sanitizer build's libutrace needs its runtime first in the process:
# loaded into these programs it would kill them, so it is refused
if ldd "$UTRACE_BUILD/lib/libutrace.so.0" 2> /dev/null | grep -q 'libasan\|libtsan'; then
	./sleeper > /dev/null &
	P=$!
	check "a sanitizer build's libutrace: refused in one line, the program unharmed" bash -c '
		"$0" attach "$1" > "$2/san.out" 2>&1; st=$?
		cat "$2/san.out" >&2
		[ $st = 1 ] && [ "$(wc -l < "$2/san.out")" = 1 ] &&
		grep -q "built with a sanitizer" "$2/san.out" && kill -0 "$1"' "$UTRACE" $P "$TMP"
	wait $P
	check "and the program ended well" test $? = 0
	echo "# a sanitizer build: the attaching itself is tested in a plain build"
	done_testing
	exit
fi

# ready FILE: wait until the program wrote "ready" to FILE
ready() { grep -q '^ready' "$1"; }
# probe_on PID EVENT: the process has the probe EVENT and an event on (the
# recorder has switched it on)
probe_on() {
	"$UTRACE" probe -p "$1" -l 2> /dev/null | grep -q "$2" &&
	"$UTRACE" ps 2> /dev/null | awk -v p="$1" '$1 == p && $4 > 0 { f = 1 } END { exit !f }'
}

# --- record -p --probe on a program blocked in read() ---
mkfifo in1
./plain < in1 > plain.out &
P=$!
exec 3> in1
wait_for ready plain.out
"$UTRACE" record -o r.dat -p $P --probe "p:grp/work $TMP/plain:work x=%di:s32" \
	> rec.out 2> err &
R=$!
check "record -p --probe: libutrace was loaded and the agent answers" wait_for traceable $P
wait_for bash -c "grep -q libutrace /proc/$P/maps"
wait_for probe_on $P grp/work
echo hello >&3
exec 3>&-
wait $P
echo "exit $?" >> plain.out
wait $R
check "the recorder ended well" test $? = 0
check "the program's read() got its bytes, its output and exit status are right" \
	same plain.out <(printf "ready\nread 6 'hello'\nsum 35\nexit 7\n")
"$UTRACE" script -i r.dat 2>> err | sed -n 's/.* work: ([0-9a-fx]*) //p' > r.txt
check "the probe's five hits, with their argument" same r.txt <(printf 'x=%d\n' 0 1 2 3 4)

# --- utrace attach, then probe -p / enable / list / detach state ---
mkfifo in2
./plain < in2 > plain2.out &
P=$!
exec 3> in2
wait_for ready plain2.out
check "utrace attach: one line with -v, status 0" bash -c '
	"$0" attach -v "$1" 2> "$2/a.err" && grep -q "stopped for [0-9]* us" "$2/a.err" &&
	[ "$(wc -l < "$2/a.err")" = 1 ]' "$UTRACE" $P "$TMP"
sed -n 's/.*stopped for \([0-9]*\) us.*/\1/p' a.err > attach-us.txt
check "utrace ps lists it" bash -c '"$0" ps | grep -q "^ *$1 plain"' "$UTRACE" $P
check "a second attach leaves it alone" bash -c '
	"$0" attach -v "$1" 2>&1 | grep -q "traceable already"' "$UTRACE" $P
mkdir -m 700 run2
check "a utrace with another runtime directory: one line saying so, status 1" bash -c '
	UTRACE_RUNTIME_DIR="$2/run2" "$0" attach "$1" > "$2/r2.out" 2>&1; st=$?
	cat "$2/r2.out" >&2
	[ $st = 1 ] && [ "$(wc -l < "$2/r2.out")" = 1 ] &&
	grep -q "listens in another runtime directory" "$2/r2.out"' "$UTRACE" $P "$TMP"
check "probe -p places a probe; enable switches it on" bash -c '
	"$0" probe -p "$1" "p:grp/w2 $2/plain:work v=%di:s32" &&
	"$0" enable -p "$1" grp:w2' "$UTRACE" $P "$TMP"
# the mount's files of it
if [ -c /dev/fuse ] && [ -w /dev/fuse ] && command -v fusermount3 > /dev/null &&
   mkdir -p mnt && "$UTRACE" mount mnt 2> mount.err; then
	trap 'fusermount3 -u "$TMP/mnt" 2> /dev/null; rm -rf "$TMP"' EXIT
	check "the mount shows its probe, on" bash -c '
		grep -q "^p:grp/w2 " "mnt/$0/uprobe_events" &&
		[ "$(cat "mnt/$0/events/grp/w2/enable")" = 1 ]' $P
	fusermount3 -u mnt 2> /dev/null || umount -l mnt
else
	n=$((n + 1)); echo "ok $n # SKIP no FUSE mount here"
fi
echo abc >&3
exec 3>&-
wait $P
echo "exit $?" >> plain2.out
check "its output and exit status are right" \
	same plain2.out <(printf "ready\nread 4 'abc'\nsum 35\nexit 7\n")

# --- a thread asleep in nanosleep() ---
./sleeper > sleeper.out &
P=$!
wait_for ready sleeper.out
check "attach to a program asleep in nanosleep()" "$UTRACE" attach $P
wait $P
st=$?
check "its nanosleep() slept the whole time and returned 0" \
	bash -c '[ "$0" = 0 ] && grep -q "r=0 slept=enough" "$1"' $st sleeper.out

# --- signals sent while it is attached to: none lost (real-time signals
# queue: each must reach the handler) ---
cat > sig.c <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static volatile sig_atomic_t got;
static void h(int s) { (void)s; got++; }
int main(void)
{
	struct sigaction sa = { 0 };
	char buf[16];
	ssize_t n;

	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(40, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	n = read(0, buf, sizeof(buf));
	printf("read %zd got %d\n", n, (int)got);
	return 0;
}
EOF
"$CC" -O1 -o sig sig.c
mkfifo in6
./sig < in6 > sig.out &
P=$!
exec 3> in6
wait_for ready sig.out
(for k in $(seq 10000); do kill -40 $P; [ $k = 200 ] && : > sending; done) &
S=$!
wait_for test -e sending
check "attach while 10000 signals come" "$UTRACE" attach $P
wait $S
echo x >&3
exec 3>&-
wait $P
check "each signal reached its handler, read() got its bytes" \
	same sig.out <(printf 'ready\nread 2 got 10000\n')

# --- probes removed at the end of record -p: the process as it was ---
./busy > busy.out &
P=$!
wait_for ready busy.out
ok=0
for i in $(seq 20); do
	"$UTRACE" record -o c.dat -p $P --duration 0.2 \
		--probe "p:grp/c$i $TMP/busy:tick" > /dev/null 2>> err && ok=$((ok + 1))
done
check "20 recordings with a probe of a busy program" test $ok = 20
check "which hit it" bash -c '"$0" script -i c.dat | grep -q " c20: "' "$UTRACE"
check "after them no probe is left" bash -c '[ -z "$("$0" probe -p "$1" -l)" ]' "$UTRACE" $P
kill -USR1 $P
wait $P
check "the busy program's registers were given back (its sums agree)" \
	same busy.out <(printf 'ready\nfp same, sum same\n')

# --- 100 attaches (each a fresh busy program, two threads running) ---
cycles=100
bad=0
: > cycles.err
for i in $(seq $cycles); do
	./busy > b$i.out &
	p=$!
	wait_for ready b$i.out
	"$UTRACE" attach -v $p 2>> cycles.err || bad=$((bad + 1))
	kill -USR1 $p
	wait $p || bad=$((bad + 1))
	grep -qx "fp same, sum same" b$i.out || bad=$((bad + 1))
	rm -f b$i.out
done
sed -n 's/.*stopped for \([0-9]*\) us.*/\1/p' cycles.err > cycles-us.txt
echo "# attach (stopped) time over $cycles attaches, us: $(sort -n cycles-us.txt |
	awk '{ a[NR] = $1 } END { print "median", a[int((NR + 1) / 2)], "max", a[NR] }')"
check "$cycles attaches to busy programs: each attached, each program's registers right" \
	test $bad = 0

# --- attach time of an idle program (coreutils' sleep), for the notes;
# attached to as soon as it is started, so at times as the shell's child
# execs it: utrace then attaches to the new program (PTRACE_O_TRACEEXEC;
# unseen, the calls would go to the old program's addresses and the old
# program's registers be put back into the new one) ---
: > idle.err
bad=0
for i in $(seq 20); do
	sleep 30 &
	p=$!
	# (attached once it has exec'd: an attach made whole just before the
	# exec leaves no agent in the new program, and nothing can tell an
	# exec is coming; attaches that meet the exec are t3021's)
	for _ in $(seq 200); do
		[ "$(readlink /proc/$p/exe 2> /dev/null)" = "$(readlink -f "$(command -v sleep)")" ] && break
		sleep 0.01
	done
	"$UTRACE" attach -v $p 2>> idle.err || bad=$((bad + 1))
	grep -q libutrace /proc/$p/maps || bad=$((bad + 1))
	kill -0 $p || bad=$((bad + 1))
	kill $p
	wait $p 2> /dev/null
done
sed -n 's/.*stopped for \([0-9]*\) us.*/\1/p' idle.err > idle-us.txt
grep -v "stopped for" idle.err >> err
echo "# attach (stopped) time of an idle sleep, 20 attaches, us: $(sort -n idle-us.txt |
	awk '{ a[NR] = $1 } END { print "median", a[int((NR + 1) / 2)], "max", a[NR] }')"
check "20 attaches to a coreutils sleep just started: each in the new program" \
	test "$(wc -l < idle-us.txt) $bad" = "20 0"

# --- a program that lives in malloc(): never borrowed while a thread of
# it holds the arena's lock, which the loader would wait for forever.  In
# mall the thread waiting in read() is borrowed (5 of 10 attaches hung
# when the main thread was); mall2 has none, and its main thread is run
# to its return into the program (9 of 10 hung when it was only stopped
# again until it was out of the C library: with MALLOC_PERTURB_ it never
# is) ---
cat > mall.c <<'EOF'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static volatile sig_atomic_t stop;
static void on_usr1(int s) { (void)s; stop = 1; }
static void *eof(void *arg)
{
	char c;
	while (read(0, &c, 1) > 0)
		;
	stop = 1;
	return arg;
}
static void *spin(void *arg)
{
	double d = 1;
	while (!stop) { d = d * 1.0000001; if (d > 1e9) d = 1; }
	return arg;
}
int main(void)
{
	pthread_t e;
	unsigned long n = 5000, k = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR1, on_usr1);
	/* a second thread: malloc() takes its locks */
	pthread_create(&e, NULL, WAITER ? eof : spin, NULL);
	printf("ready\n");
	while (!stop) {
		/* beyond the thread cache: the arena's lock each time */
		char *p = malloc(n), *q = malloc(n / 2 + 2000);
		p[0] = q[0] = 1;
		free(p);
		free(q);
		n = (n * 7 + 13) % 60000 + 2000;
		k++;
	}
	pthread_join(e, NULL);
	printf("done %s\n", k ? "yes" : "no");
	return 0;
}
EOF
"$CC" -O1 -pthread -DWAITER=1 -o mall mall.c
"$CC" -O1 -pthread -DWAITER=0 -o mall2 mall.c
for prog in mall mall2; do
	bad=0
	for i in $(seq 8); do
		mkfifo m$i
		MALLOC_PERTURB_=77 ./$prog < m$i > m$i.out &
		p=$!
		exec 4> m$i
		wait_for ready m$i.out
		timeout 60 "$UTRACE" attach $p 2>> err || bad=$((bad + 1))
		kill -USR1 $p
		exec 4>&-
		wait $p
		grep -qx "done yes" m$i.out || bad=$((bad + 1))
		rm -f m$i m$i.out
	done
	check "8 attaches to $prog, which lives in malloc(): none hung" test $bad = 0
done

# --- a thread stopped inside a restartable sequence (rseq): glibc >= 2.35
# registers one per thread; this critical section never commits, it spins
# until the kernel aborts it (a signal does).  The kernel forgets the
# section while utrace's calls run outside it: put back without an abort,
# the thread spun on through every signal (5 of 6 attaches) ---
cat > rseq.c <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <sys/rseq.h>
static volatile sig_atomic_t sigs;
static void on_usr1(int s) { (void)s; sigs++; }
static void spin_in_cs(void)
{
	char *tp;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	__asm__ volatile(
		"leaq 4f(%%rip), %%rax\n\t"
		"movq %%rax, 8(%0)\n\t"      /* rseq->rseq_cs = &cs */
		"1:\n\t"
		"jmp 1b\n\t"
		"2:\n\t"
		".long 0x53053053\n\t"       /* glibc's RSEQ_SIG before abort_ip */
		"3:\n\t"
		".pushsection .data, \"aw\"\n\t"
		".balign 32\n\t"
		"4: .long 0, 0\n\t"
		".quad 1b, 2b - 1b, 3b\n\t"  /* start_ip, post_commit_offset, abort_ip */
		".popsection\n\t"
		: : "r"(tp + __rseq_offset) : "rax", "memory");
}
int main(int argc, char **argv)
{
	(void)argv;
	if (!__rseq_size || argc > 1) {
		printf("%s\n", __rseq_size ? "rseq" : "no rseq");
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	while (sigs < 3)
		spin_in_cs();
	printf("done\n");
	return 0;
}
EOF
if "$CC" -O1 -o rseqp rseq.c 2> /dev/null && [ "$(./rseqp check)" = rseq ]; then
	bad=0
	for i in $(seq 5); do
		./rseqp > rs$i.out &
		p=$!
		wait_for ready rs$i.out
		"$UTRACE" attach $p 2>> err || bad=$((bad + 1))
		for k in $(seq 100); do
			kill -USR1 $p 2> /dev/null || break
			sleep 0.05
			grep -q done rs$i.out && break
		done
		grep -q done rs$i.out || { bad=$((bad + 1)); kill -9 $p; }
		wait $p
	done
	check "5 attaches to a thread inside an rseq critical section: each aborted it" \
		test $bad = 0
else
	n=$((n + 1)); echo "ok $n # SKIP no rseq here (glibc < 2.35, or the kernel's or glibc's rseq off)"
fi

# --- refused: a process under strace ---
if command -v strace > /dev/null; then
	mkfifo in4
	strace -o /dev/null ./plain < in4 > plain4.out &
	S=$!
	exec 3> in4
	wait_for ready plain4.out
	P=$(pgrep -n -P $S plain)
	check "a process under strace: refused in one line naming its tracer, status 1" bash -c '
		"$0" attach "$1" 2> "$2/s.err"; st=$?
		cat "$2/s.err" >&2
		[ $st = 1 ] && [ "$(wc -l < "$2/s.err")" = 1 ] &&
		grep -q "is being traced by process [0-9]* (strace)" "$2/s.err"' "$UTRACE" "$P" "$TMP"
	check "probe -p is refused the same way" bash -c '
		"$0" probe -p "$1" "p:grp/x $2/plain:work" 2>&1 | grep -q "is being traced by"
		' "$UTRACE" "$P" "$TMP"
	echo x >&3
	exec 3>&-
	wait $S
	check "the strace'd program ended well" grep -q "^sum 35" plain4.out
else
	n=$((n + 1)); echo "ok $n # SKIP no strace"
fi

# --- refused: ptrace not allowed ---
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2> /dev/null || echo none)
sleep 30 &
P=$!
if [ "$(id -u)" != 0 ] && [ "$scope" != none ] && [ "$scope" != 0 ]; then
	check "Yama refuses: the message names ptrace_scope and the way out" bash -c '
		"$0" attach "$1" 2>&1 | grep -q "yama/ptrace_scope is $2.*sysctl"' "$UTRACE" $P "$scope"
elif [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	check "another user's process: refused in one line, status 1" bash -c '
		setpriv --reuid=65534 --regid=65534 --clear-groups env UTRACE_RUNTIME_DIR= \
			"$0" attach "$1" > "$2/p.out" 2>&1; st=$?
		cat "$2/p.out" >&2
		[ $st = 1 ] && [ "$(wc -l < "$2/p.out")" = 1 ] && grep -q "not allowed" "$2/p.out"
		' "$UTRACE" $P "$TMP"
else
	n=$((n + 1)); echo "ok $n # SKIP neither Yama (scope $scope, not root) nor root with setpriv"
fi
kill $P 2> /dev/null

# --- refused: no library to load ---
mkdir -p alone
cp "$UTRACE" alone/utrace
sleep 30 &
P=$!
if [ ! -e "$(dirname "$UTRACE")/../../lib/libutrace.so.0" ] ||
   ls /usr/local/lib*/libutrace.so.0 /usr/lib*/libutrace.so.0 \
	/usr/local/lib/*/libutrace.so.0 /usr/lib/*/libutrace.so.0 > /dev/null 2>&1; then
	n=$((n + 1)); echo "ok $n # SKIP libutrace is installed: a copied utrace finds it"
else
	check "no libutrace.so.0 to load: refused in one line" bash -c '
		"$0" attach "$1" > "$2/l.out" 2>&1; st=$?
		cat "$2/l.out" >&2
		[ $st = 1 ] && [ "$(wc -l < "$2/l.out")" = 1 ] &&
		grep -q "cannot find libutrace.so.0" "$2/l.out"' alone/utrace $P "$TMP"
fi
kill $P 2> /dev/null

# --- refused: a libutrace built with AddressSanitizer (a stand-in here) ---
if "$CC" -fsanitize=address -shared -fPIC -o fake.so -x c - <<< 'int f(void) { return 1; }' \
	2> /dev/null; then
	mkdir -p asan/tools/utrace asan/lib
	cp "$UTRACE" asan/tools/utrace/utrace
	cp fake.so asan/lib/libutrace.so.0
	sleep 30 &
	P=$!
	check "an ASan libutrace and a program without ASan: refused in one line" bash -c '
		"$0" attach "$1" > "$2/as.out" 2>&1; st=$?
		cat "$2/as.out" >&2
		[ $st = 1 ] && [ "$(wc -l < "$2/as.out")" = 1 ] &&
		grep -q "built with a sanitizer (libasan.so)" "$2/as.out" && kill -0 "$1"
		' asan/tools/utrace/utrace $P "$TMP"
	kill $P
else
	n=$((n + 1)); echo "ok $n # SKIP no -fsanitize=address here"
fi

# --- Debian's python3 ---
PY=/usr/bin/python3
if [ -x $PY ]; then
	mkfifo in5
	$PY -c 'import sys
print("ready", flush=True)
for l in sys.stdin: print(sum(int(x) for x in l.split()), flush=True)' < in5 > py.out &
	P=$!
	exec 3> in5
	wait_for ready py.out
	"$UTRACE" record -o py.dat -p $P --probe "p:grp/wr libc.so.6:write fd=%di:s32" \
		> /dev/null 2>> err &
	R=$!
	wait_for probe_on $P grp/wr
	echo "1 2 3" >&3
	echo "10 20" >&3
	wait_for grep -q 30 py.out
	kill -INT $R
	wait $R
	check "python3: recorded with a probe on libc's write" bash -c '
		"$0" script -i py.dat | grep -q " wr: .* fd=1"' "$UTRACE"
	exec 3>&-
	wait $P
	check "python3 answered right and ended with 0" bash -c '[ $0 = 0 ] &&
		[ "$(cat "$1")" = "$(printf "ready\n6\n30")" ]' $? py.out
else
	n=$((n + 1)); echo "ok $n # SKIP no $PY"
fi

# --- memcached, when installed (scripts/setup-debian.sh --tests) ---
MC=$(command -v memcached || true)
if [ -n "$MC" ]; then
	port=$((20000 + $$ % 20000))
	"$MC" -l 127.0.0.1 -p $port -U 0 -t 2 $( [ "$(id -u)" = 0 ] && echo -u root ) &
	P=$!
	mc() {
		python3 - "$port" "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
s.sendall(sys.argv[2].encode().replace(b"|", b"\r\n"))
out = b""
while not out.endswith((b"END\r\n", b"STORED\r\n")):
    d = s.recv(4096)
    if not d: break
    out += d
print(out.decode().replace("\r\n", "|"))
EOF
	}
	wait_for bash -c "exec 5<>/dev/tcp/127.0.0.1/$port" 2> /dev/null
	"$UTRACE" record -o mc.dat -p $P --probe "p:grp/rd libc.so.6:read fd=%di:s32" \
		> /dev/null 2>> err &
	R=$!
	wait_for probe_on $P grp/rd
	a=$(mc "set k 0 0 5|hello|")
	b=$(mc "get k|")
	kill -INT $R
	wait $R
	check "memcached: set and get answered right while probed" \
		test "$a $b" = "STORED| VALUE k 0 5|hello|END|"
	check "memcached: its reads recorded" bash -c '
		"$0" script -i mc.dat | grep -q " rd: "' "$UTRACE"
	c=$(mc "get k|")
	check "memcached: still right after the recording" test "$c" = "VALUE k 0 5|hello|END|"
	kill $P
	wait $P
else
	n=$((n + 1)); echo "ok $n # SKIP no memcached"
fi

done_testing
