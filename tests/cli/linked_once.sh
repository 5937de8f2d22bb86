#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Each piece of code is linked into one shared library only: no function or variable is
# defined (strongly) by two of hetpu's libraries. A program that loads libhetpu and
# libhetpu_ckpt then has one node arbiter, one share clock and one settings table, which
# libhetpu_common and libhetpu_node_arbiter provide to both. (Inline functions and template
# instances are weak symbols, shared by the loader: they are not counted.)
: "${HETPU_BUILDDIR:?HETPU_BUILDDIR must point at the build directory}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v nm >/dev/null || fail "nm (binutils) is needed"
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-linked-once.XXXXXX")
trap 'rm -rf "$work"' EXIT

for lib in .libs/libhetpu.so .libs/libhetpu_ckpt.so .libs/libhetpu-preload.so \
    common/.libs/libhetpu_common.so node_arbiter/.libs/libhetpu_node_arbiter.so; do
    [ -f "$HETPU_BUILDDIR/$lib" ] || fail "$lib is not built"
    # Strong definitions only: code (T), data (D, B), read-only data (R).
    nm -D --defined-only "$HETPU_BUILDDIR/$lib" | awk -v lib="$lib" '$2 ~ /^[TDBR]$/ {print $3 "\t" lib}'
done | sort >"$work/defined"
cut -f1 "$work/defined" | uniq -d >"$work/twice"
if [ -s "$work/twice" ]; then
    echo "defined in two libraries (link the code into one, and the other against it):" >&2
    grep -F -w -f "$work/twice" "$work/defined" | head -40 >&2
    exit 1
fi
grep -q "	common/.libs/libhetpu_common.so$" "$work/defined" || fail "libhetpu_common defines nothing"
grep -q "	node_arbiter/.libs/libhetpu_node_arbiter.so$" "$work/defined" || fail "libhetpu_node_arbiter defines nothing"
echo "linked_once: $(wc -l <"$work/defined") symbols, each defined by one library"
