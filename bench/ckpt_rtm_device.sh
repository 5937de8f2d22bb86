#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/ckpt_rtm_device on a CPU-only machine: two PoCL OpenCL devices, each its own StarPU
# memory node. Arguments go to the program (--blocks, --block-kib, --steps, --every,
# --cache-fraction, --segments, --json; --help lists them).
set -euo pipefail
build=${BUILD_DIR:-$(cd "$(dirname "$0")/.." && pwd)/_build}
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCUDA=0
export STARPU_NCPU=${STARPU_NCPU:-1}
export STARPU_SILENT=1
# The tiers alone: no MGB runs here, so the cache's chunks need no arbiter reservations (and
# the user's default segment, which other runs share, is left alone).
export HETPU_MGB_ARBITER=${HETPU_MGB_ARBITER:-off}
exec "$build/bench/ckpt_rtm_device" "$@"
