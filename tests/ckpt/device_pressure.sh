#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The device cache tier under device memory pressure beside the MGB policy, on two PoCL
# OpenCL devices with unequal StarPU memory limits (16 and 24 MiB).
set -eu
bin=${HETPU_BUILDDIR:-.}/tests/ckpt/ckpt_pressure_tests
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1
export STARPU_LIMIT_OPENCL_0_MEM=16 STARPU_LIMIT_OPENCL_1_MEM=24 STARPU_SCHED=mgb HETPU_ACCOUNTING=0
# An arbiter segment of this test's own: the user's default one is shared with other runs.
export HETPU_MGB_ARBITER=/hetpu-ckpt-pressure-$$
trap 'rm -f /dev/shm/hetpu-ckpt-pressure-$$' EXIT
# A cache that never gave way would leave the 14 MiB task waiting for ever: fail instead.
timeout 600 "$bin"
