#!/usr/bin/env bash
# Install what utrace needs to build and test on Debian 12 (as root, or
# through sudo).  Pass --bench to add the peers the benchmarks compare
# against (LTTng-UST, valgrind), --tests to add what the whole test suite
# also runs (the kernel's ftracetest, from Debian's kernel source; protoc).
set -euo pipefail

pkgs=(
	meson ninja-build pkg-config gcc g++ clang python3 libzydis-dev
	liburcu-dev libtraceevent-dev libtracefs-dev libelf-dev libfuse3-dev fuse3 libsqlite3-dev libseccomp-dev libunwind-dev util-linux trace-cmd tmux cmake
	libcurl4-openssl-dev zlib1g-dev
	libdw-dev
	dpkg-dev debhelper fakeroot lintian
)
for arg in "$@"; do
	case $arg in
	--bench) pkgs+=(valgrind liblttng-ust-dev lttng-tools binutils babeltrace2) ;;
	# the kernel's own ftracetest, run by t0032 (from the kernel source);
	# t0046: the html export in headless Chromium, the trace.dat export in
	# KernelShark under Xvfb, their screenshots read with PIL
	# t0043, t0044: the readers of the CTF and SQLite exports
	# protoc decodes the Perfetto export (t0042), GNU time measures the
	# exports' memory (t0041, t0042)
	# gdb, linux-perf: t0090 compares the DWARF locations utrace probe -x
	# finds with gdb's 'info scope', its output with perf probe's
	# iputils-ping: ftracetest's inter-event tests run ping (t0032)
	# memcached, strace: t3020 attaches to a memcached from apt, and is
	# refused a process under strace
	--tests) pkgs+=(linux-source binutils chromium xvfb xauth kernelshark imagemagick python3-pil
		babeltrace2 sqlite3 protobuf-compiler python3-protobuf time gdb linux-perf iputils-ping
		memcached strace) ;;
	*) echo "setup-debian.sh: unknown option '$arg' (--bench, --tests)" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all packages present"
	exit 0
fi
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
