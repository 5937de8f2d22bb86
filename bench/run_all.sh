#!/usr/bin/env bash
# Run every benchmark; called by `./run bench`. Results are JSON lines under
# results/bench/, each figure reported as a ratio against a baseline measured in the
# same run (the machines are shared and noisy; absolute times mean little).
set -euo pipefail
build=${1:?usage: run_all.sh BUILD_DIR [matmul_overhead options]}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/results/bench
mkdir -p "$out"
export STARPU_SILENT=1
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-bench.XXXXXX")
export STARPU_HOME
trap 'rm -rf "$STARPU_HOME"' EXIT

echo "== matmul_overhead: StarPU + hetpu on one CPU worker vs direct single-threaded OpenBLAS"
STARPU_SCHED=${STARPU_SCHED:-greedy} "$build/bench/matmul_overhead" --json "$out/matmul_overhead.jsonl" "$@"
echo "results: $out/"
