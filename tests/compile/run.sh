#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Compile tests of the tracepoint headers: does an events header build,
# link and run with gcc, clang, g++ and clang++; does -DUTRACE_DISABLE
# remove every trace of utrace; are the usual mistakes rejected with an
# error that names the event?
#
#   run.sh <source-root> <build-dir>
#
# <build-dir>/lib must hold libutrace.a and libutrace.so.  Prints TAP on
# stdout; the output of a failed case follows it as '# ' lines.  Exits
# non-zero if any case failed.  Cases run in parallel, each in a directory
# of its own under a temporary directory in <build-dir>, removed at exit.
#
# Environment:
#   UTC_JOBS=n          parallel jobs (default: number of CPUs, at most 8)
#   UTC_KEEP=1          keep the temporary directory (its path is printed)
#   UTC_EXTRA_CFLAGS    appended to every compilation (for diagnosis only,
#                       e.g. to see what fails after a known header bug)
#
# The cases:
#   sample/...   samples/sample-trace.h through the compat headers: the
#                CREATE_TRACE_POINTS file (ctp.c) and a file that uses
#                every tracepoint (caller.c), -Wall -Wextra -Werror, each
#                compiler and standard, C with C++ both ways, linked with
#                libutrace.a (one case with libutrace.so) and run; what the
#                events print must equal sample-print.expected.
#   kernel/...   two kernel-style headers (include/trace/events/utc_*.h,
#                plain TRACE_SYSTEM, default TRACE_INCLUDE_PATH) in one
#                CREATE_TRACE_POINTS file; run; print = kernel-print.expected.
#   all/...      include/trace/events/utc_all.h: every macro the kernel's
#                include/trace/stages/ knows (utrace's own header; the
#                kernel's GPL-2.0 sample is not copied), kernel-only types
#                (cpumask_t, struct sockaddr) from the program (all_main.c);
#                run; print = all-print.expected, written from the kernel's
#                printing rules (%*pb, __print_array, hex_dump_to_buffer).
#   bare/...     tp-bare.h: bare DECLARE_TRACE()s in a plain header, two of
#                them without arguments (DECLARE_TRACE_NOARGS, TP_PROTO(void)),
#                instantiated by DEFINE_TRACE(name, proto, args) in bare_def.c
#                as the kernel's samples/tracepoints did; bare_main.c probes
#                and fires them; C, C++ and mixed; and with -DUTRACE_DISABLE.
#   disabled/... caller.c (and ctp.c) with -DUTRACE_DISABLE: link without
#                libutrace or urcu, register_* answer -ENOSYS, and nm shows
#                no __tracepoint_ / __traceiter_ symbol.
#   fallback/... include/utrace/fallback.h alone, copied under the four
#                names events headers include (utrace/tracepoint.h,
#                utrace/define_trace.h, linux/tracepoint.h,
#                trace/define_trace.h), no utrace include directory: the
#                sample, kernel and bare headers build (-Wpedantic -Werror),
#                link without libutrace, and behave as -DUTRACE_DISABLE.
#   pedantic/... every header above (sample, kernel, all, bare; enabled and
#                -DUTRACE_DISABLE), both kinds of file (CREATE_TRACE_POINTS
#                and user), with -Wall -Wextra -Wpedantic -Werror, and in C
#                the warnings memcached builds with (-Wmissing-prototypes
#                -Wmissing-declarations -Wredundant-decls -Wstrict-prototypes):
#                kernel-style 'TRACE_EVENT(...);' must warn nowhere.
#   fail/...     must not build, and the compiler's or linker's message
#                must name the event.  These use -Wall -Werror (not
#                -Wextra), and each has a control build that differs only
#                in the mistake and must succeed, so a case cannot pass
#                by failing for another reason.  Mistakes: no
#                CREATE_TRACE_POINTS TU; TP_ARGS not matching TP_PROTO; a
#                probe of the wrong prototype; fixed fields over
#                UTRACE_EVENT_MAX; a DEFINE_EVENT whose TP_PROTO is not its
#                class's.
#   cpp/...      cc -E -P of samples/sample.c.

set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 <source-root> <build-dir>" >&2
	exit 2
fi
SRC=$(cd "$1" && pwd) || exit 2
BUILD=$(cd "$2" && pwd) || exit 2
T=$SRC/tests/compile
LIBA=$BUILD/lib/libutrace.a
LIBDIR=$BUILD/lib

for f in "$LIBA" "$LIBDIR/libutrace.so"; do
	if [ ! -e "$f" ]; then
		echo "Bail out! $f not found (build the project first)"
		exit 1
	fi
done

# The runtime reads these; the cases must not inherit them.
unset UTRACE_EVENTS UTRACE_PRINT
export LC_ALL=C

TMP=$(mktemp -d "$BUILD/compile-tests.XXXXXX") || exit 1
if [ "${UTC_KEEP:-0}" = 1 ]; then
	echo "# keeping $TMP"
else
	trap 'rm -rf "$TMP"' EXIT
fi
# On a signal (meson's timeout), stop this script's own jobs, then exit
# through the EXIT trap.
trap 'kill $(jobs -p) 2>/dev/null; wait; exit 130' INT TERM

JOBS=${UTC_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 8 ] && JOBS=8
[ "$JOBS" -lt 1 ] && JOBS=1

read -r -a EXTRA <<<"${UTC_EXTRA_CFLAGS:-}"
INC=(-I "$SRC/include" -I "$SRC/include/utrace/compat" -I "$SRC/samples"
     -I "$T" -I "$T/include" -I "$T/fail")
WARN=(-Wall -Wextra -Werror)
FAILWARN=(-Wall -Werror)
# what a static link of libutrace.a needs: the build's own pkg-config file
# says (liburcu-bp, libelf, and Zydis and libunwind since the probe engine
# and the stacktrace trigger)
URCU_LIBS=(-lurcu-bp -lelf -lpthread -ldl)
if PC=$(PKG_CONFIG_PATH="$BUILD/meson-private" pkg-config --static --libs-only-l utrace 2> /dev/null); then
	read -r -a URCU_LIBS <<<"${PC//-lutrace/} -lpthread"
fi

# ---------------------------------------------------------------------------
# Helpers, run inside a case's directory with output going to its log.

is_cxx() {
	case $1 in *++) return 0 ;; esac
	return 1
}

# Log a command, then run it.
run() {
	echo "\$ $*"
	"$@"
}

# compile <cc> <std> <out.o> <src> [flags...]: C++ compilers get -x c++.
compile() {
	local cc=$1 std=$2 out=$3 src=$4 x=()
	shift 4
	is_cxx "$cc" && x=(-x c++)
	run "$cc" -std="$std" "$@" "${INC[@]}" "${EXTRA[@]}" -c "${x[@]}" "$src" -o "$out"
}

# The driver that links objects of compilers $1 and $2: the C++ one, if any.
linker() {
	if is_cxx "$2"; then echo "$2"; else echo "$1"; fi
}

# Strip the line prefix (comm-pid [cpu] flags time:) from UTRACE_PRINT output.
normalize() {
	sed -E 's/^.*\] [^ ]+ +[0-9]+\.[0-9]+: //' "$1"
}

run_prog() {
	echo "\$ UTRACE_PRINT=$PWD/print.txt $*"
	UTRACE_PRINT=$PWD/print.txt timeout 30 "$@"
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$1 exited with status $rc"
		return 1
	fi
}

check_print() {
	local expected=$1
	normalize print.txt >got.txt
	if ! diff -u "$expected" got.txt; then
		echo "what the events printed differs from $(basename "$expected")"
		return 1
	fi
}

no_tracepoint_syms() {
	local obj=$1 hits
	hits=$(nm "$obj" | grep -E '__tracepoint_|__traceiter_')
	if [ -n "$hits" ]; then
		echo "nm $obj shows tracepoint symbols:"
		echo "$hits"
		return 1
	fi
	echo "nm $obj: no __tracepoint_/__traceiter_ symbol"
}

# expect_fail <ere>... -- <command...>
# The command must fail, and its output (without the '$ command' lines
# that run() logs) must match every ERE given.
expect_fail() {
	local pats=()
	while [ "$1" != -- ]; do
		pats+=("$1")
		shift
	done
	shift
	"$@" >out.txt 2>&1
	local rc=$?
	cat out.txt
	if [ "$rc" -eq 0 ]; then
		echo "^^^ this build succeeded but must fail"
		return 1
	fi
	local p
	for p in "${pats[@]}"; do
		if ! grep -v '^\$ ' out.txt | grep -Eq -- "$p"; then
			echo "^^^ failed as it must, but the output does not match /$p/"
			return 1
		fi
	done
	echo "(failed as expected)"
}

# ---------------------------------------------------------------------------
# The cases.  Each is a function run in its own directory.

# sample <cc-ctp> <std-ctp> <cc-caller> <std-caller> <opt> [shared]
case_sample() {
	local cca=$1 stda=$2 ccb=$3 stdb=$4 opt=$5 kind=${6:-static} ld
	compile "$cca" "$stda" ctp.o "$T/ctp.c" "$opt" "${WARN[@]}" || return 1
	compile "$ccb" "$stdb" caller.o "$T/caller.c" "$opt" "${WARN[@]}" || return 1
	ld=$(linker "$cca" "$ccb")
	if [ "$kind" = shared ]; then
		run "$ld" ctp.o caller.o -L"$LIBDIR" -lutrace \
			-Wl,-rpath,"$LIBDIR" "${URCU_LIBS[@]}" -o prog || return 1
	else
		run "$ld" ctp.o caller.o "$LIBA" "${URCU_LIBS[@]}" -o prog || return 1
	fi
	run_prog ./prog || return 1
	check_print "$T/sample-print.expected"
}

# kernel <cc> <std> <opt>
case_kernel() {
	local cc=$1 std=$2 opt=$3
	compile "$cc" "$std" kern_ctp.o "$T/kern_ctp.c" "$opt" "${WARN[@]}" || return 1
	compile "$cc" "$std" kern_main.o "$T/kern_main.c" "$opt" "${WARN[@]}" || return 1
	run "$cc" kern_ctp.o kern_main.o "$LIBA" "${URCU_LIBS[@]}" -o prog || return 1
	run_prog ./prog || return 1
	check_print "$T/kernel-print.expected"
}

# all <cc> <std>
case_all() {
	local cc=$1 std=$2
	compile "$cc" "$std" all_main.o "$T/all_main.c" -O2 "${WARN[@]}" || return 1
	run "$cc" all_main.o "$LIBA" "${URCU_LIBS[@]}" -o prog || return 1
	run_prog ./prog || return 1
	check_print "$T/all-print.expected"
}

# disabled <cc> <std> <opt> [whole]: no libutrace, no urcu on the link line.
case_disabled() {
	local cc=$1 std=$2 opt=$3 whole=${4:-} objs=(caller.o)
	compile "$cc" "$std" caller.o "$T/caller.c" "$opt" -DUTRACE_DISABLE \
		"${WARN[@]}" || return 1
	no_tracepoint_syms caller.o || return 1
	if [ -n "$whole" ]; then
		compile "$cc" "$std" ctp.o "$T/ctp.c" "$opt" -DUTRACE_DISABLE \
			"${WARN[@]}" || return 1
		no_tracepoint_syms ctp.o || return 1
		objs+=(ctp.o)
	fi
	run "$cc" "${objs[@]}" -o prog || return 1
	run_prog ./prog || return 1
	if [ -s print.txt ]; then
		echo "events printed although tracing is compiled out:"
		cat print.txt
		return 1
	fi
}

# bare <cc-def> <std-def> <cc-main> <std-main> [disabled]
case_bare() {
	local cca=$1 stda=$2 ccb=$3 stdb=$4 dis=${5:-} ld flags=(-O2 "${WARN[@]}")
	[ -n "$dis" ] && flags+=(-DUTRACE_DISABLE)
	compile "$cca" "$stda" bare_def.o "$T/bare_def.c" "${flags[@]}" || return 1
	compile "$ccb" "$stdb" bare_main.o "$T/bare_main.c" "${flags[@]}" || return 1
	ld=$(linker "$cca" "$ccb")
	if [ -n "$dis" ]; then
		no_tracepoint_syms bare_def.o || return 1
		run "$ld" bare_def.o bare_main.o -o prog || return 1
	else
		run "$ld" bare_def.o bare_main.o "$LIBA" "${URCU_LIBS[@]}" -o prog || return 1
	fi
	run_prog ./prog
}

# pedantic <cc> <std>: every file of every header, warnings as errors.
case_pedantic() {
	local cc=$1 std=$2 f d flags=(-O2 -Wall -Wextra -Wpedantic -Werror)
	is_cxx "$cc" || flags+=(-Wmissing-prototypes -Wmissing-declarations
				-Wredundant-decls -Wstrict-prototypes)
	for f in ctp.c caller.c kern_ctp.c kern_main.c all_main.c bare_def.c bare_main.c; do
		compile "$cc" "$std" "${f%.c}.o" "$T/$f" "${flags[@]}" || return 1
	done
	for f in ctp.c caller.c bare_def.c bare_main.c; do
		compile "$cc" "$std" "${f%.c}-off.o" "$T/$f" -DUTRACE_DISABLE \
			"${flags[@]}" || return 1
	done
	echo "no warning with ${flags[*]}"
}

# fallback <cc> <std>: the one header a project copies where utrace is
# not installed, under the names its events headers include.
case_fallback() {
	local cc=$1 std=$2 n flags=(-O2 -Wall -Wextra -Wpedantic -Werror)
	local INC=(-I "$PWD/fb" -I "$SRC/samples" -I "$T" -I "$T/include")
	is_cxx "$cc" || flags+=(-Wmissing-prototypes -Wmissing-declarations
				-Wredundant-decls -Wstrict-prototypes)
	mkdir -p fb/utrace fb/linux fb/trace || return 1
	for n in utrace/tracepoint.h utrace/define_trace.h linux/tracepoint.h \
		 trace/define_trace.h; do
		cp "$SRC/include/utrace/fallback.h" "fb/$n" || return 1
	done
	compile "$cc" "$std" ctp.o "$T/ctp.c" "${flags[@]}" || return 1
	compile "$cc" "$std" caller.o "$T/caller.c" "${flags[@]}" || return 1
	compile "$cc" "$std" kern_ctp.o "$T/kern_ctp.c" "${flags[@]}" || return 1
	compile "$cc" "$std" bare_def.o "$T/bare_def.c" "${flags[@]}" || return 1
	compile "$cc" "$std" bare_main.o "$T/bare_main.c" "${flags[@]}" || return 1
	for n in ctp.o caller.o kern_ctp.o bare_def.o; do
		no_tracepoint_syms "$n" || return 1
	done
	run "$cc" ctp.o caller.o -o prog || return 1
	run_prog ./prog || return 1
	run "$cc" bare_def.o bare_main.o -o bare || return 1
	run_prog ./bare || return 1
	if [ -s print.txt ]; then
		echo "events printed with the fallback header:"
		cat print.txt
		return 1
	fi
}

# fail/nodef <cc> <std>: trace_foo_plain() but no CREATE_TRACE_POINTS.
case_fail_nodef() {
	local cc=$1 std=$2
	compile "$cc" "$std" nodef.o "$T/fail/nodef.c" -O0 "${FAILWARN[@]}" || return 1
	expect_fail '(__tracepoint_|__traceiter_)foo_plain' -- \
		run "$cc" nodef.o "$LIBA" "${URCU_LIBS[@]}" -o prog || return 1
	echo "control: the same program with ctp.o must link"
	compile "$cc" "$std" ctp.o "$T/ctp.c" -O0 "${FAILWARN[@]}" || return 1
	run "$cc" nodef.o ctp.o "$LIBA" "${URCU_LIBS[@]}" -o prog
}

# fail/<what> <cc> <std> <src> <ere>... -- [flags...]: compile must fail,
# and with -DUTC_CONTROL must succeed.
case_fail_compile() {
	local cc=$1 std=$2 src=$3 pats=()
	shift 3
	while [ "$1" != -- ]; do
		pats+=("$1")
		shift
	done
	shift
	expect_fail "${pats[@]}" -- compile "$cc" "$std" out.o "$T/fail/$src" \
		-O0 "${FAILWARN[@]}" "$@" || return 1
	echo "control: with -DUTC_CONTROL it must compile"
	compile "$cc" "$std" ctl.o "$T/fail/$src" -O0 "${FAILWARN[@]}" \
		-DUTC_CONTROL "$@"
}

case_fail_badargs() {
	case_fail_compile "$1" "$2" badargs.c 'utc_badargs' \
		'too few arguments|no matching function' -- "${@:3}"
}

case_fail_badprobe() {
	local cc=$1 std=$2 extra=()
	is_cxx "$cc" || extra=(-Werror=incompatible-pointer-types)
	case_fail_compile "$cc" "$std" badprobe.c 'register_trace_utc_pair' \
		'incompatible (function )?pointer type|invalid conversion|no matching function' \
		-- "${extra[@]}" "${@:3}"
}

case_fail_big() {
	case_fail_compile "$1" "$2" big.c \
		"event class .?'utc_big_class.?' exceed UTRACE_EVENT_MAX" --
}

case_fail_badclass() {
	local cc=$1 std=$2 extra=()
	is_cxx "$cc" || extra=(-Werror=incompatible-pointer-types)
	case_fail_compile "$cc" "$std" badclass.c 'utc_wrongproto' \
		'incompatible (function )?pointer type|invalid conversion|cannot initialize' \
		-- "${extra[@]}"
}

case_cpp() {
	run cc -E -P "${INC[@]}" "$SRC/samples/sample.c" >sample.i || return 1
	if ! grep -q 'trace_event_raw_foo_bar' sample.i; then
		echo "the expansion has no trace_event_raw_foo_bar"
		return 1
	fi
	echo "expansion: $(wc -l <sample.i) lines, contains trace_event_raw_foo_bar"
}

# ---------------------------------------------------------------------------
# The list of cases: name, then the function and its arguments.

NAMES=()
CMDS=()
SKIPS=()
add() {
	local name=$1 skip=
	shift
	local w
	for w in "$@"; do
		case $w in
		gcc|g++|clang|clang++)
			command -v "$w" >/dev/null 2>&1 || skip="$w not found" ;;
		esac
	done
	NAMES+=("$name")
	CMDS+=("$*")
	SKIPS+=("$skip")
}

C_CONFIGS="gcc:c11 gcc:c17 clang:c11 clang:c17"
CXX_CONFIGS="g++:c++17 clang++:c++17"

for cfg in $C_CONFIGS $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "sample/$cc -std=$std -O2: ctp + caller, link libutrace.a, run" \
		case_sample "$cc" "$std" "$cc" "$std" -O2
done
add "sample/gcc -std=c11 -O0: ctp + caller, link libutrace.a, run" \
	case_sample gcc c11 gcc c11 -O0
add "sample/g++ -std=c++17 -O0: ctp + caller, link libutrace.a, run" \
	case_sample g++ c++17 g++ c++17 -O0
add "sample/gcc -std=c17 -O2: ctp + caller, link libutrace.so, run" \
	case_sample gcc c17 gcc c17 -O2 shared
add "sample/mixed: ctp in C (gcc c17), caller in C++ (g++ c++17), run" \
	case_sample gcc c17 g++ c++17 -O2
add "sample/mixed: ctp in C++ (g++ c++17), caller in C (gcc c17), run" \
	case_sample g++ c++17 gcc c17 -O2
add "sample/mixed: ctp in C (clang c11), caller in C++ (clang++ c++17), run" \
	case_sample clang c11 clang++ c++17 -O2
add "sample/mixed: ctp in C++ (clang++ c++17), caller in C (clang c11), run" \
	case_sample clang++ c++17 clang c11 -O2

for cfg in $C_CONFIGS $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "kernel/$cc -std=$std: two trace/events headers in one CREATE_TRACE_POINTS TU, run" \
		case_kernel "$cc" "$std" -O2
done

for cfg in $C_CONFIGS $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "all/$cc -std=$std: every field kind and helper of the kernel's stages, run" \
		case_all "$cc" "$std"
done

for cfg in $C_CONFIGS $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "bare/$cc -std=$std: DECLARE_TRACE(_NOARGS), DEFINE_TRACE(name, proto, args) in a .c, run" \
		case_bare "$cc" "$std" "$cc" "$std"
done
add "bare/mixed: DEFINE_TRACE in C (gcc c17), probes and calls in C++ (g++ c++17), run" \
	case_bare gcc c17 g++ c++17
add "bare/mixed: DEFINE_TRACE in C++ (clang++ c++17), probes and calls in C (clang c11), run" \
	case_bare clang++ c++17 clang c11
add "bare/gcc -std=c17 -DUTRACE_DISABLE: no libutrace, -ENOSYS, nothing fires, nm clean" \
	case_bare gcc c17 gcc c17 disabled
add "bare/clang++ -std=c++17 -DUTRACE_DISABLE: no libutrace, -ENOSYS, nothing fires, nm clean" \
	case_bare clang++ c++17 clang++ c++17 disabled

for cfg in $C_CONFIGS $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "fallback/$cc -std=$std: utrace/fallback.h alone builds every header, no libutrace, as disabled" \
		case_fallback "$cc" "$std"
done

for cfg in $C_CONFIGS $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "pedantic/$cc -std=$std: 'TRACE_EVENT(...);' headers, -Wpedantic -Werror, no warning" \
		case_pedantic "$cc" "$std"
done

for cfg in $C_CONFIGS $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "disabled/$cc -std=$std -O2: caller links without libutrace, -ENOSYS, nm clean" \
		case_disabled "$cc" "$std" -O2
done
add "disabled/gcc -std=c11 -O0: caller links without libutrace, -ENOSYS, nm clean" \
	case_disabled gcc c11 -O0
add "disabled/clang++ -std=c++17 -O0: caller links without libutrace, -ENOSYS, nm clean" \
	case_disabled clang++ c++17 -O0
add "disabled/gcc -std=c17: ctp + caller both disabled, link without libutrace" \
	case_disabled gcc c17 -O2 whole
add "disabled/g++ -std=c++17: ctp + caller both disabled, link without libutrace" \
	case_disabled g++ c++17 -O2 whole

for cc in gcc clang++; do
	std=c11
	is_cxx "$cc" && std=c++17
	add "fail/$cc: trace_foo_plain() with no CREATE_TRACE_POINTS TU fails to link, naming foo_plain" \
		case_fail_nodef "$cc" "$std"
done
for cfg in gcc:c11 clang:c17 $CXX_CONFIGS; do
	cc=${cfg%%:*} std=${cfg#*:}
	add "fail/$cc: TP_ARGS(a) for TP_PROTO(int a, int b) fails, naming utc_badargs" \
		case_fail_badargs "$cc" "$std"
	add "fail/$cc: ... also in the CREATE_TRACE_POINTS TU" \
		case_fail_badargs "$cc" "$std" -DUTC_CTP
	add "fail/$cc: probe (void *, long) for TP_PROTO(int a, int b) is rejected, naming utc_pair" \
		case_fail_badprobe "$cc" "$std"
	add "fail/$cc: ... also with -DUTRACE_DISABLE" \
		case_fail_badprobe "$cc" "$std" -DUTRACE_DISABLE
	add "fail/$cc: __array(char, big, 5000) fails the static assertion naming utc_big_class" \
		case_fail_big "$cc" "$std"
	add "fail/$cc: DEFINE_EVENT whose TP_PROTO differs from its class's fails, naming utc_wrongproto" \
		case_fail_badclass "$cc" "$std"
done

add "cpp/cc -E -P samples/sample.c exits 0 and shows trace_event_raw_foo_bar" case_cpp

# ---------------------------------------------------------------------------
# Run everything, JOBS at a time; report in order.

start_job() { # dir command...
	local d=$1
	shift
	mkdir -p "$d"
	(
		cd "$d" || exit 1
		eval "$*" >log 2>&1
		echo $? >rc
	) &
}

throttle() {
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n
	done
}

for i in "${!CMDS[@]}"; do
	[ -n "${SKIPS[$i]}" ] && continue
	throttle
	start_job "$TMP/case$i" "${CMDS[$i]}"
done
wait

MAXLOG=80
failed=0
echo "1..${#CMDS[@]}"
for i in "${!CMDS[@]}"; do
	n=$((i + 1))
	if [ -n "${SKIPS[$i]}" ]; then
		echo "ok $n - ${NAMES[$i]} # SKIP ${SKIPS[$i]}"
		continue
	fi
	d=$TMP/case$i
	rc=$(cat "$d/rc" 2>/dev/null || echo 1)
	if [ "$rc" = 0 ]; then
		echo "ok $n - ${NAMES[$i]}"
	else
		failed=$((failed + 1))
		echo "not ok $n - ${NAMES[$i]}"
		lines=$(wc -l <"$d/log")
		head -n "$MAXLOG" "$d/log" | sed 's/^/# /'
		if [ "$lines" -gt "$MAXLOG" ]; then
			echo "# ... ($((lines - MAXLOG)) more lines; UTC_KEEP=1 keeps $d/log)"
		fi
	fi
done

if [ $failed -ne 0 ]; then
	echo "# $failed of ${#CMDS[@]} failed"
	exit 1
fi
exit 0
