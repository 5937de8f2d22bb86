#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The device cache tier on a node with two OpenCL devices, each its own StarPU memory node
# (PoCL pthread devices) with a 32 MiB StarPU memory limit.
set -eu
bin=${HETPU_BUILDDIR:-.}/tests/ckpt/ckpt_device_tests
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1
export STARPU_LIMIT_OPENCL_0_MEM=32 STARPU_LIMIT_OPENCL_1_MEM=32
# The cache reserves its chunks with the MGB arbiter: a segment of this test's own, not the
# user's (other runs on the node share that one).
export HETPU_MGB_ARBITER=/hetpu-ckpt-device-$$
trap 'rm -f /dev/shm/hetpu-ckpt-device-$$' EXIT
"$bin"
