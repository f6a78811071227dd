#!/bin/sh
# Run by `meson install` (meson.build): a program linked with libutrace must
# start right after an install, without the user running ldconfig.  Nothing
# to do for a staged install (DESTDIR: packages run ldconfig themselves).
# $1: the library directory, as meson's libdir option has it.
[ -n "${DESTDIR:-}" ] && exit 0
case $1 in
/*) libdir=$1 ;;
*) libdir=${MESON_INSTALL_PREFIX:?}/$1 ;;
esac
if [ "$(id -u)" -ne 0 ]; then
	echo "utrace: installed as a user: programs find libutrace.so.0 in '$libdir' with LD_LIBRARY_PATH='$libdir'"
	exit 0
fi
command -v ldconfig > /dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin
ldconfig || { echo "utrace: ldconfig failed: run it once as root" >&2; exit 0; }
if ! ldconfig -p | grep -qF "=> $libdir/libutrace.so.0"; then
	echo "utrace: '$libdir' is not searched by the dynamic loader: add it to /etc/ld.so.conf.d/ and run ldconfig, or set LD_LIBRARY_PATH='$libdir'"
fi
exit 0
