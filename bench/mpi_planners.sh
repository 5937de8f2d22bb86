#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real 4-rank run of two node shapes, one much slower: ranks 0, 1 and 3 have one CPU
# worker, rank 2 only the PoCL OpenCL worker (CLBlast on one PoCL thread, several times
# slower). matmul under plb-hac, verified, the per-node planner (each rank plans its share
# of data it owns, rank 0 re-shares) and the central planner (one planner on rank 0,
# every block's data relayed through it) interleaved, REPS times each, and the per-node
# planner without the node speeds kept from earlier runs (re-sharing at work). Prints the median
# makespans, the columns per rank, re-sharing moves and the job data through rank 0.
# Usage: bench/mpi_planners.sh BUILD_DIR [N] [REPS]
set -euo pipefail
build=$(cd "${1:?usage: mpi_planners.sh BUILD_DIR [N] [REPS]}" && pwd)
n=${2:-2048}
reps=${3:-5}
matmul=$build/apps/matmul/hetpu-matmul
[ -x "$matmul" ] || { echo "no $matmul" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-planners.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Nothing from earlier runs (saved models, node speeds) and nothing written to the user's
# store: every rank its own StarPU and hetpu home under the temporary directory.
export STARPU_HOME=$work STARPU_SILENT=1 HETPU_ACCOUNTING=0 POCL_MAX_PTHREAD_COUNT=1 STARPU_SCHED=plb-hac
rank_home=$work/rank_home.sh
printf '%s\n' '#!/bin/sh' 'r=${OMPI_COMM_WORLD_RANK:-0}' 'export STARPU_HOME="$STARPU_HOME/rank$r"' \
  'export HETPU_HOME="$STARPU_HOME/hetpu"' 'mkdir -p "$STARPU_HOME"' 'exec "$@"' >"$rank_home"
chmod +x "$rank_home"

launch() {  # launch PLANNER JSON
  local args=(-n "$n" --verify --json "$2")
  HETPU_MPI_PLANNER=$1 timeout 600 mpirun --oversubscribe --bind-to none --allow-run-as-root -q \
    -x STARPU_WORKERS_NOBIND=1 -x STARPU_HOME -x STARPU_SILENT -x HETPU_ACCOUNTING -x POCL_MAX_PTHREAD_COUNT \
    -x STARPU_SCHED -x HETPU_MPI_PLANNER \
    -np 2 -x STARPU_NCPU=1 -x STARPU_NOPENCL=0 "$rank_home" "$matmul" "${args[@]}" : \
    -np 1 -x STARPU_NCPU=0 -x STARPU_NOPENCL=1 -x STARPU_OPENCL_ON_CPUS=1 "$rank_home" "$matmul" "${args[@]}" : \
    -np 1 -x STARPU_NCPU=1 -x STARPU_NOPENCL=0 "$rank_home" "$matmul" "${args[@]}" >"$work/out" 2>&1 ||
    { cat "$work/out" >&2; exit 1; }
}

echo "== warm-up (PoCL compiles CLBlast's kernels; each planner learns the ranks once)" >&2
launch per-node "$work/warmup.jsonl"
launch central "$work/warmup.jsonl"
for rep in $(seq 1 "$reps"); do
  echo "== repetition $rep/$reps" >&2
  launch per-node "$work/per-node.jsonl"
  launch central "$work/central.jsonl"
  # The same without the node speeds kept from earlier runs: shares by worker counts, then
  # re-sharing moves the slow rank's tail while the job runs.
  rm -f "$work"/rank*/hetpu/node_rates.txt
  launch per-node "$work/per-node-cold.jsonl"
done
python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
print("| planner | makespan (s), median | min-max | columns per rank (median) | moves | job data through rank 0 (MiB) |")
print("|---|---:|---:|---|---:|---:|")
medians = {}
for planner in ("per-node", "per-node-cold", "central"):
    rs = [json.loads(l) for l in open("%s/%s.jsonl" % (work, planner))]
    assert all(r["verified"] is True and r["ranks"] == 4 and planner.startswith(r["mpi_planner"]) for r in rs)
    ms = [r["makespan_s"] for r in rs]
    medians[planner] = statistics.median(ms)
    cols = [statistics.median([r["rank_reports"][k]["elements"] for r in rs]) for k in range(4)]
    rank0 = statistics.median([(r["rank_reports"][0]["data_bytes_sent"] + r["rank_reports"][0]["data_bytes_received"]) / 2**20 for r in rs])
    moves = statistics.median([r["moves"] for r in rs])
    print("| %s | %.3f | %.3f-%.3f | %s | %g | %.1f |" % (planner, medians[planner], min(ms), max(ms),
          " / ".join("%d" % c for c in cols), moves, rank0))
print("\nper-node / central (medians): %.3f; per-node without kept speeds / central: %.3f"
      % (medians["per-node"] / medians["central"], medians["per-node-cold"] / medians["central"]))
PY
