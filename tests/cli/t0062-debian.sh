#!/usr/bin/env bash
# Debian packages (issue 17): dpkg-buildpackage builds libutrace0,
# libutrace-reader0, libutrace-dev and utrace from this tree; lintian finds
# no error in them; installed with dpkg (root), a program built against
# them with pkg-config starts, and utrace records and prints its events.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

need=
for c in dpkg-buildpackage dh lintian fakeroot; do
	command -v "$c" > /dev/null || need="$need $c"
done
if [ -n "$need" ]; then
	for what in "dpkg-buildpackage builds the packages" "lintian finds no error" \
		    "the installed packages build and trace a program"; do
		n=$((n + 1)); echo "ok $n # SKIP $what: missing$need (scripts/setup-debian.sh installs them)"
	done
	done_testing
	exit
fi

build_pkgs() {
	mkdir -p "$TMP/src/utrace" &&
	# this tree as it is: tracked files and new ones, not the ignored
	if git -C "$UTRACE_SRC" rev-parse --git-dir > /dev/null 2>&1; then
		(cd "$UTRACE_SRC" && git ls-files -co --exclude-standard -z |
			tar --null -cf - -T - 2> /dev/null) | tar -xf - -C "$TMP/src/utrace"
	else
		(cd "$UTRACE_SRC" && tar --exclude='./build*' -cf - .) | tar -xf - -C "$TMP/src/utrace"
	fi &&
	(cd "$TMP/src/utrace" && dpkg-buildpackage -us -uc -b) > "$TMP/build.log" 2>&1 ||
		{ tail -n 30 "$TMP/build.log" > "$TMP/err"; return 1; }
	for p in libutrace0 libutrace-reader0 libutrace-dev utrace; do
		[ -e "$TMP/src/${p}_0.1.0_amd64.deb" ] || { echo "no $p package" > "$TMP/err"; return 1; }
	done
	dpkg-deb -c "$TMP/src/libutrace-dev_0.1.0_amd64.deb" > "$TMP/dev.list" &&
	grep -q 'usr/lib/x86_64-linux-gnu/pkgconfig/utrace.pc$' "$TMP/dev.list" &&
	grep -q 'usr/lib/x86_64-linux-gnu/cmake/utrace/utraceConfig.cmake$' "$TMP/dev.list" &&
	grep -q 'usr/share/man/man3/libutrace.3.gz$' "$TMP/dev.list" &&
	dpkg-deb -c "$TMP/src/utrace_0.1.0_amd64.deb" | grep -q 'usr/share/man/man1/utrace-record.1.gz$'
}
check "dpkg-buildpackage builds the four packages, with pc, CMake config and man pages" build_pkgs

lintian_clean() {
	lintian --fail-on error "$TMP"/src/utrace_0.1.0_amd64.changes > "$TMP/err" 2>&1
}
check "lintian finds no error" lintian_clean

installed_before=$(dpkg-query -W -f='${Status}\n' libutrace0 libutrace-reader0 libutrace-dev utrace 2> /dev/null |
	grep -c 'install ok installed')
if [ "$(id -u)" -ne 0 ]; then
	n=$((n + 1)); echo "ok $n # SKIP the installed packages build and trace a program: dpkg -i needs root"
elif [ "$installed_before" -ne 0 ]; then
	n=$((n + 1)); echo "ok $n # SKIP the installed packages build and trace a program: utrace packages are installed already"
else
	remove_pkgs() {
		dpkg --purge utrace libutrace-dev libutrace-reader0 libutrace0 > /dev/null 2>&1
	}
	trap 'remove_pkgs; rm -rf "$TMP"' EXIT
	use_pkgs() {
		dpkg -i "$TMP"/src/libutrace0_0.1.0_amd64.deb "$TMP"/src/libutrace-reader0_0.1.0_amd64.deb \
			"$TMP"/src/libutrace-dev_0.1.0_amd64.deb "$TMP"/src/utrace_0.1.0_amd64.deb \
			> "$TMP/err" 2>&1 &&
		mkdir -p "$TMP/app" && cp "$UTRACE_SRC"/tests/cmake/hello* "$TMP/app/" &&
		(cd "$TMP/app" && cc hello.c $(pkg-config --cflags --libs utrace) -o hello) \
			> "$TMP/err" 2>&1 &&
		env -u LD_LIBRARY_PATH UTRACE_EVENTS='hello:*' UTRACE_PRINT=stdout "$TMP/app/hello" \
			> "$TMP/out" 2> "$TMP/err" &&
		[ "$(grep -c ': hello_world: n=[123]$' "$TMP/out")" -eq 3 ] &&
		/usr/bin/utrace record -o "$TMP/app/h.dat" -- "$TMP/app/hello" > /dev/null 2> "$TMP/err" &&
		/usr/bin/utrace script -i "$TMP/app/h.dat" > "$TMP/out" 2> "$TMP/err" &&
		[ "$(grep -c ': hello_world: n=[123]$' "$TMP/out")" -eq 3 ]
	}
	check "dpkg -i: a program built with pkg-config starts, utrace records and prints it" use_pkgs
	remove_pkgs
fi

done_testing
