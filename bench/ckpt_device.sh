#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/ckpt_device on a CPU-only machine: two PoCL OpenCL devices, each its own StarPU
# memory node. Arguments go to the program (--handles-per-device, --mib, --checkpoints, --json).
set -euo pipefail
build=${BUILD_DIR:-$(cd "$(dirname "$0")/.." && pwd)/_build}
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCUDA=0
export STARPU_NCPU=${STARPU_NCPU:-1}
export STARPU_SILENT=1
exec "$build/bench/ckpt_device" "$@"
