#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Debian's StarPU has no CUDA workers, so the MGB glue's `#ifdef STARPU_USE_CUDA` paths
# (SM counts, per-SM limits and PCI bus ids from cudaDeviceProp) are compiled by nobody in
# a normal build. Compile them here against the CUDA toolkit's headers, as a StarPU built
# with CUDA would, so they cannot rot unnoticed. Skipped (77) where no toolkit is installed.
src=$(cd "$(dirname "$0")/../.." && pwd)
: "${HETPU_BUILDDIR:?HETPU_BUILDDIR must point at the build directory}"
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda_runtime.h" ]; then
    echo "SKIP: no CUDA toolkit headers in $cuda/include (set CUDA_HOME)"; exit 77
fi
starpu_cflags=$(pkg-config --cflags starpu-1.4 2>/dev/null || pkg-config --cflags starpu-1.3) || {
    echo "FAIL: no StarPU pkg-config file" >&2; exit 1; }
for f in node_arbiter/device_discovery.cpp sched_policies/mgb/mgb_scheduler.cpp; do
    # shellcheck disable=SC2086
    ${CXX:-g++} -std=c++17 -Wall -Wextra -Werror -fsyntax-only -DSTARPU_USE_CUDA -I"$cuda/include" \
        -I"$src" -I"$src/include" -I"$HETPU_BUILDDIR" $starpu_cflags "$src/$f" || { echo "FAIL: $f with CUDA" >&2; exit 1; }
done
echo "mgb_cuda_syntax: ok"
