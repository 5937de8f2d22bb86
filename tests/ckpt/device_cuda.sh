#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The device cache tier on real CUDA device memory: capture, restore and (with two GPUs or
# more) peer transfer. An automake SKIP (77), with the reason, in a build without CUDA or on
# a machine without a CUDA device.
set -eu
bin=${HETPU_BUILDDIR:-.}/tests/ckpt/ckpt_cuda_tests
out=$("$bin" 2>&1) && rc=0 || rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || exit "$rc"
if printf '%s\n' "$out" | grep -q '^\[  PASSED  \] 0 tests'; then
  exit 77
fi
exit 0
