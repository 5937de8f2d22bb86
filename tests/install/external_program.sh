#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# make installcheck: an application outside the tree, built from the installed headers and
# libraries through pkg-config alone (`pkg-config --cflags --libs hetpu`), runs under
# plb-hac and computes the right answer. Also checks hetpu-ckpt.pc and that the programs
# are installed under their hetpu- names.
#   external_program.sh DESTDIR LIBDIR BINDIR EXAMPLE.c
# DESTDIR may be empty (a real install, as in distcheck); with a staging DESTDIR the .pc
# files are copied with their prefix moved under it, as a packager's sysroot would do.
set -eu
destdir=$1 libdir=$2 bindir=$3 example=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v pkg-config >/dev/null || fail "pkg-config is needed (apt-get install pkg-config)"
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-installcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT

pcdir=$destdir$libdir/pkgconfig
[ -f "$pcdir/hetpu.pc" ] || fail "$pcdir/hetpu.pc not installed"
[ -f "$pcdir/hetpu-ckpt.pc" ] || fail "$pcdir/hetpu-ckpt.pc not installed"
if [ -n "$destdir" ]; then
    mkdir "$work/pc"
    for pc in "$pcdir"/*.pc; do
        prefix=$(sed -n 's/^prefix=//p' "$pc")
        sed "s|^prefix=.*|prefix=$destdir$prefix|" "$pc" >"$work/pc/$(basename "$pc")"
    done
    pcdir=$work/pc
fi
PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
pkg-config --exists hetpu-ckpt || fail "pkg-config cannot resolve hetpu-ckpt: $(pkg-config --print-errors hetpu-ckpt 2>&1)"

for app in hetpu hetpu-matmul hetpu-grn hetpu-kmeans hetpu-fft2d hetpu-heat; do
    [ -x "$destdir$bindir/$app" ] || fail "$bindir/$app not installed"
done

# shellcheck disable=SC2046
${CC:-cc} -Wall -Wextra -Werror -o "$work/saxpy" "$example" $(pkg-config --cflags --libs hetpu) ||
    fail "the example does not build against the installed hetpu"
export STARPU_HOME="$work" HETPU_HOME="$work/hetpu-home" HETPU_LEDGER="$work/ledger.sqlite"
export STARPU_SILENT=1 STARPU_NCPU=2 STARPU_NOPENCL=0 STARPU_NCUDA=0 STARPU_SCHED=plb-hac
export LD_LIBRARY_PATH="$destdir$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=$("$work/saxpy" 200000 2>"$work/err") || { cat "$work/err" >&2; fail "the example failed under plb-hac"; }
echo "$out"
case $out in
*"planner plb-hac"*", 0 wrong"*) ;;
*) fail "expected plb-hac to plan every block and no wrong element, got: $out" ;;
esac
# The installed front finds hetpu-starpu in $(pkglibexecdir) for the commands that need StarPU.
if [ -z "$destdir" ]; then
    "$bindir/hetpu" version | grep -q "^hetpu " || fail "installed hetpu version"
    "$bindir/hetpu" policies | grep -q "^  plb-hac " || fail "installed hetpu policies (through hetpu-starpu)"
fi
echo "installcheck: ok"
