#!/usr/bin/env bash
# Installing utrace leaves a working system (issue 17): a CMake project
# finds it with find_package(utrace), and after a real install a program
# linked with libutrace starts with no ldconfig and no LD_LIBRARY_PATH.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# a sanitizer build's libutrace.so needs its runtime preloaded in programs
san_pre=$(ldd "$UTRACE_BUILD/lib/libutrace.so" 2> /dev/null |
	awk '/lib(a|ub|t)san\.so/ { printf "%s%s", sep, $3; sep = ":" }')
run_linked() {
	if [ -n "$san_pre" ]; then
		env LD_PRELOAD="$san_pre" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 "$@"
	else
		"$@"
	fi
}

# tests/cmake's app-trace.h and app.c are README's example, to the letter.
readme_example() {
	awk '/^```c$/ { inb = 1; n++; next } /^```$/ { inb = 0 }
	     inb && n <= 2 { print > ("'"$TMP"'/readme" n) }' "$UTRACE_SRC/README.md" &&
	diff -u "$UTRACE_SRC/tests/cmake/app-trace.h" "$TMP/readme1" > "$TMP/err" &&
	diff -u "$UTRACE_SRC/tests/cmake/app.c" "$TMP/readme2" >> "$TMP/err"
}
check "README's app-trace.h and app.c are tests/cmake's" readme_example

staged() {
	meson install -C "$UTRACE_BUILD" --no-rebuild --destdir "$TMP/root" --quiet \
		> "$TMP/err" 2>&1 &&
	CFG=$(find "$TMP/root" -name utraceConfig.cmake | head -n 1) && [ -n "$CFG" ] &&
	[ -e "$(dirname "$CFG")/utraceConfigVersion.cmake" ] &&
	PREFIX=$(dirname "$(dirname "$(dirname "$(dirname "$CFG")")")") &&
	case $PREFIX in */lib) PREFIX=$(dirname "$PREFIX") ;; esac &&
	LIBDIR=$(dirname "$(find "$TMP/root" -name 'libutrace.so.0' | head -n 1)")
}
check "meson install --destdir: a CMake package configuration beside utrace.pc" staged

if ! command -v cmake > /dev/null; then
	n=$((n + 1)); echo "ok $n # SKIP find_package(utrace): cmake is not installed"
	n=$((n + 1)); echo "ok $n # SKIP find_package(utrace 9.0): cmake is not installed"
else
	# (no target_include_directories: utrace::utrace finds README's
	# header beside CMakeLists.txt, as pkg-config's -iquote . does)
	cmake_user() {
		cmake -S "$UTRACE_SRC/tests/cmake" -B "$TMP/cm" -DCMAKE_PREFIX_PATH="$PREFIX" \
			-DCMAKE_C_COMPILER="${CC:-cc}" > "$TMP/err" 2>&1 &&
		cmake --build "$TMP/cm" >> "$TMP/err" 2>&1 &&
		UTRACE_EVENTS='app:*' UTRACE_PRINT=stdout LD_LIBRARY_PATH="$LIBDIR" \
			run_linked "$TMP/cm/app" > "$TMP/out" 2>> "$TMP/err" &&
		[ "$(grep -c ': req_start: id=[123] path=/' "$TMP/out")" -eq 3 ] &&
		UTRACE_EVENTS='hello:*' UTRACE_PRINT=stdout LD_LIBRARY_PATH="$LIBDIR" \
			run_linked "$TMP/cm/hello" > "$TMP/out" 2>> "$TMP/err" &&
		[ "$(grep -c ': hello_world: n=[123]$' "$TMP/out")" -eq 3 ] &&
		LD_LIBRARY_PATH="$LIBDIR" run_linked "$TMP/cm/readver" > "$TMP/out" 2>> "$TMP/err" &&
		[ "$(cat "$TMP/out")" = "$("$UTRACE" --version | awk '{ print $2 }')" ]
	}
	check "find_package(utrace): an out-of-tree CMake program with events, and a reader" cmake_user

	cmake_too_new() {
		mkdir -p "$TMP/new" &&
		sed 's/find_package(utrace 0.1 REQUIRED)/find_package(utrace 9.0 REQUIRED)/' \
			"$UTRACE_SRC/tests/cmake/CMakeLists.txt" > "$TMP/new/CMakeLists.txt" &&
		cp "$UTRACE_SRC"/tests/cmake/*.[ch] "$TMP/new/" &&
		! cmake -S "$TMP/new" -B "$TMP/new/b" -DCMAKE_PREFIX_PATH="$PREFIX" \
			> "$TMP/err" 2>&1 &&
		grep -q 'version: 0\.1\.0' "$TMP/err"
	}
	check "find_package(utrace 9.0) refuses version 0.1.0" cmake_too_new
fi

# README's private prefix: PKG_CONFIG_PATH finds utrace.pc, LD_LIBRARY_PATH
# the library (a staged tree is not at the prefix it was built for:
# --define-variable says where it is).
private_prefix() {
	local pcdir
	pcdir=$(dirname "$(find "$TMP/root" -name utrace.pc | head -n 1)") &&
	mkdir -p "$TMP/pp" && cp "$UTRACE_SRC"/tests/cmake/app* "$TMP/pp/" &&
	(cd "$TMP/pp" && cc app.c $(PKG_CONFIG_PATH="$pcdir" pkg-config --define-variable=prefix="$PREFIX" \
		--cflags --libs utrace) -o app) > "$TMP/err" 2>&1 &&
	UTRACE_EVENTS='app:*' UTRACE_PRINT=stdout LD_LIBRARY_PATH="$LIBDIR" \
		run_linked "$TMP/pp/app" > "$TMP/out" 2>> "$TMP/err" &&
	[ "$(grep -c ': req_start: id=[123] path=/' "$TMP/out")" -eq 3 ]
}
check "a private prefix: PKG_CONFIG_PATH and LD_LIBRARY_PATH (README), pkg-config's build" private_prefix

# A real install into the system (as a user does it: root, no DESTDIR),
# then removed again.  Only as root, only from a plain build, and never
# over an install that was there before.
installed_before=$(ls /usr/local/lib/libutrace.so* /usr/local/lib/*/libutrace.so* 2> /dev/null)
if [ "$(id -u)" -ne 0 ]; then
	n=$((n + 1)); echo "ok $n # SKIP a real install starts programs: needs root"
elif [ -n "$san_pre" ]; then
	n=$((n + 1)); echo "ok $n # SKIP a real install starts programs: a sanitizer build"
elif [ -n "$installed_before" ] || [ "$(meson introspect "$UTRACE_BUILD" --buildoptions |
	python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"][0])')" != /usr/local ]; then
	n=$((n + 1)); echo "ok $n # SKIP a real install starts programs: utrace is installed in /usr/local already, or the prefix is not /usr/local"
else
	real_install() {
		find /usr/local -type d > "$TMP/dirs-before"
		meson install -C "$UTRACE_BUILD" --no-rebuild > "$TMP/inst.out" 2>&1 || {
			cp "$TMP/inst.out" "$TMP/err"; return 1; }
		cp "$UTRACE_BUILD/meson-logs/install-log.txt" "$TMP/installed"
		# the tour's way: pkg-config, then run, with no ldconfig by hand
		cp "$UTRACE_SRC"/tests/cmake/hello* "$TMP/" &&
		(cd "$TMP" && cc hello.c $(pkg-config --cflags --libs utrace) -o hello-pc) \
			> "$TMP/err" 2>&1 &&
		env -u LD_LIBRARY_PATH UTRACE_EVENTS='hello:*' UTRACE_PRINT=stdout \
			"$TMP/hello-pc" > "$TMP/out" 2>> "$TMP/err" &&
		[ "$(grep -c ': hello_world: n=[123]$' "$TMP/out")" -eq 3 ]
	}
	uninstall() {
		[ -e "$TMP/installed" ] || return 0
		grep -v '^#' "$TMP/installed" | while read -r f; do
			case $f in /usr/local/*) [ -d "$f" ] || rm -f "$f" ;; esac
		done
		# the directories the install made, deepest first
		find /usr/local -type d | sort -r | while read -r d; do
			grep -qxF "$d" "$TMP/dirs-before" || rmdir "$d" 2> /dev/null
		done
		ldconfig
	}
	trap 'uninstall; rm -rf "$TMP"' EXIT
	check "after 'meson install', a program linked with libutrace starts (no ldconfig by hand)" real_install
	uninstall
	rm -f "$TMP/installed"
fi

done_testing
