# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by bench/ckpt_device.sh and bench/ckpt_rtm_device.sh: the checkpoint benchmarks'
# node on a CPU-only machine, two PoCL OpenCL devices, each its own StarPU memory node. Sets
# `build` (BUILD_DIR, default _build beside bench/).
build=${BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/_build}
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCUDA=0
export STARPU_NCPU=${STARPU_NCPU:-1}
export STARPU_SILENT=1
# The tiers alone: no MGB runs here, so the cache's chunks need no arbiter reservations (and
# the user's default segment, which other runs share, is left alone).
export HETPU_MGB_ARBITER=${HETPU_MGB_ARBITER:-off}
