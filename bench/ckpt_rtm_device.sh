#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/ckpt_rtm_device on a CPU-only machine: two PoCL OpenCL devices, each its own StarPU
# memory node. Arguments go to the program (--blocks, --block-kib, --steps, --every,
# --cache-fraction, --segments, --json; --help lists them).
set -euo pipefail
. "$(dirname "$0")/ckpt_pocl_node.sh"
exec "$build/bench/ckpt_rtm_device" "$@"
