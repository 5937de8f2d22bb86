#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/ckpt_device on a CPU-only machine: two PoCL OpenCL devices, each its own StarPU
# memory node. Arguments go to the program (--handles-per-device, --mib, --checkpoints, --json).
set -euo pipefail
. "$(dirname "$0")/ckpt_pocl_node.sh"
exec "$build/bench/ckpt_device" "$@"
