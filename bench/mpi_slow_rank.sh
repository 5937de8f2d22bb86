#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A real 3-rank run on this machine where one rank is much slower: ranks 0 and 1 have one
# CPU worker (OpenBLAS), rank 2 only the PoCL OpenCL worker (CLBlast on PoCL, one thread).
# matmul under plb-hac (one planner on rank 0) against a static even split (greedy with
# blocks of n/3: the first wave gives every rank exactly one third) and greedy with small
# blocks. Prints per-rank shares of the columns, each rank's measured speed (columns per
# busy second in the even split) and the makespans (median of REPS runs).
# Usage: bench/mpi_slow_rank.sh BUILD_DIR [N] [REPS]
set -euo pipefail
build=$(cd "${1:?usage: mpi_slow_rank.sh BUILD_DIR [N] [REPS]}" && pwd)
n=${2:-2048}
reps=${3:-3}
matmul=$build/apps/matmul/hetpu-matmul
[ -x "$matmul" ] || { echo "no $matmul" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-slowrank.XXXXXX")
trap 'rm -rf "$work"' EXIT
export STARPU_HOME=$work STARPU_SILENT=1 HETPU_ACCOUNTING=0 POCL_MAX_PTHREAD_COUNT=1
# The central planner: one planner on rank 0 (bench/mpi_planners.sh compares it with per-node).
export HETPU_MPI_PLANNER=central
# Its own hetpu home: PLB-HAC models saved by the user's earlier runs must not shape these
# results, and this script must not write into the user's store (nor ledger, should
# accounting be turned on: the ledger follows HETPU_HOME).
export HETPU_HOME=$work/hetpu-home
# One StarPU home per rank: ranks with different devices would race on the bus
# calibration files of a shared one (see tests/cli/mpi_env.sh).
rank_home=$work/rank_home.sh
printf '%s\n' '#!/bin/sh' 'export STARPU_HOME="$STARPU_HOME/rank${OMPI_COMM_WORLD_RANK:-0}"' \
  'mkdir -p "$STARPU_HOME"' 'exec "$@"' >"$rank_home"
chmod +x "$rank_home"

launch() {  # launch POLICY JSON [extra -x options]
  local policy=$1 json=$2
  shift 2
  timeout 600 mpirun --oversubscribe --bind-to none --allow-run-as-root -q \
    -x STARPU_WORKERS_NOBIND=1 -x STARPU_HOME -x HETPU_HOME -x STARPU_SILENT -x HETPU_ACCOUNTING -x POCL_MAX_PTHREAD_COUNT -x HETPU_MPI_PLANNER \
    -np 2 -x STARPU_SCHED="$policy" -x STARPU_NCPU=1 -x STARPU_NOPENCL=0 "$@" "$rank_home" "$matmul" -n "$n" --verify --json "$json" : \
    -np 1 -x STARPU_SCHED="$policy" -x STARPU_NCPU=0 -x STARPU_NOPENCL=1 -x STARPU_OPENCL_ON_CPUS=1 "$@" \
      "$rank_home" "$matmul" -n "$n" --verify --json "$json" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
}

echo "== warm-up (PoCL compiles CLBlast's kernels once)" >&2
launch greedy "$work/warmup.jsonl" -x HETPU_BLOCK=$((n / 3 + 1))
even=$((n / 3 + (n % 3 > 0)))
small=$((n / 48))
for rep in $(seq 1 "$reps"); do
  echo "== repetition $rep/$reps" >&2
  launch plb-hac "$work/plb-hac.jsonl"
  launch greedy "$work/even.jsonl" -x HETPU_BLOCK=$even
  launch greedy "$work/greedy-small.jsonl" -x HETPU_BLOCK=$small
done
python3 - "$work" "$n" "$even" "$small" <<'PY'
import json, statistics, sys
work, n, even, small = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def load(name):
    return [json.loads(l) for l in open("%s/%s.jsonl" % (work, name))]
runs = {"plb-hac": load("plb-hac"), "static even split (greedy, blocks of %d)" % even: load("even"),
        "greedy, blocks of %d" % small: load("greedy-small")}
for rs in runs.values():
    assert all(r["verified"] is True and r["ranks"] == 3 for r in rs)
def per_rank(r, key):
    out = [0.0, 0.0, 0.0]
    for w in r["workers"]:
        out[w["rank"]] += w[key]
    return out
# Speeds from the even split: each rank got n/3 columns; columns per second of work.
ev = runs["static even split (greedy, blocks of %d)" % even]
speed = [statistics.median(per_rank(r, "elements")[k] / max(per_rank(r, "busy_s")[k], 1e-9) for r in ev) for k in range(3)]
tot = sum(speed)
print("matmul n = %d (double), 3 ranks: ranks 0-1 one CPU worker each, rank 2 one PoCL OpenCL worker" % n)
print("rank speeds measured in the even split (columns per busy second): %s; speed shares: %s" % (
    ", ".join("%.0f" % s for s in speed), ", ".join("%.1f%%" % (100 * s / tot) for s in speed)))
print()
print("| run | makespan (s), median of %d | min | max | columns per rank (median): rank 0 / 1 / 2 | share of rank 2 |" % len(ev))
print("|---|---:|---:|---:|---|---:|")
for name, rs in runs.items():
    ms = [r["makespan_s"] for r in rs]
    cols = [statistics.median(per_rank(r, "elements")[k] for r in rs) for k in range(3)]
    print("| %s | %.3f | %.3f | %.3f | %d / %d / %d | %.1f%% |" % (name, statistics.median(ms), min(ms), max(ms),
          cols[0], cols[1], cols[2], 100 * cols[2] / n))
PY
