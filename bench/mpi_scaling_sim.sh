#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Scale-out in simulation, the network charged (`hetpu cluster-sim`), weak scaling (~60 s),
# two families of clusters (bench/scenarios/gen_cluster_nodes.py):
#   uniform  nodes of 16 PUs of three types, every 16th node 3x slower, 100 Gb/s links;
#   mixed    GPU nodes, CPU nodes and older CPU nodes (2.5x slower), one node 3x slower, the
#            last node behind a link 1000x slower; "mixed, pinned" is the same cluster with
#            that node kept out of every move (the reference for pricing moves by their link).
# A 32 KiB column in and out per element. For each size:
#   central   one plb-hac planner for every PU, every block's data through rank 0's link
#             (run up to 1,024 PUs: beyond, the relay is hopeless and slow to simulate);
#   per-node  a plb-hac planner per node and the coordinator at the runner's report cadence,
#             shares from the nodes' units and their kinds (a first run) and from the nodes'
#             speeds (a later run: the runner keeps them).
# Planning is charged from the cost model (deterministic per seed); the measured wall time of
# the coordinator is printed beside it. Prints makespan / bound (median and worst of the
# seeds), per-node against central, the coordinator's modelled and measured time per report,
# its share of the job, the reports rank 0 handles per second and the job data through rank 0.
# Usage: bench/mpi_scaling_sim.sh BUILD_DIR [OUT_DIR] [SEEDS] [PU counts...]
#   FAMILIES="uniform mixed" (default both); PINNED=0 skips the pinned reference, CENTRAL=0 the
#   central planner; HETPU=path runs another build's hetpu (a baseline).
set -euo pipefail
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
build=${1:?usage: mpi_scaling_sim.sh BUILD_DIR [OUT_DIR] [SEEDS] [PU counts...]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/mpi_scaling_sim}
seeds=${3:-3}
shift $(( $# >= 3 ? 3 : $# ))
counts=${*:-16 64 256 1024 4096 16384}
families=${FAMILIES:-uniform mixed}
hetpu=${HETPU:-$(cd "$build" && pwd)/tools/hetpu}
[ -x "$hetpu" ] || { echo "mpi_scaling_sim.sh: no $hetpu (make -C $build tools/hetpu)" >&2; exit 1; }
mkdir -p "$out"
# shellcheck disable=SC2086
{
  python3 "$top/bench/scenarios/gen_cluster_nodes.py" "$out" $counts
  python3 "$top/bench/scenarios/gen_cluster_nodes.py" "$out" --mixed $counts
  python3 "$top/bench/scenarios/gen_cluster_nodes.py" "$out" --mixed --pinned $counts
} >&2
: >"$out/runs.jsonl"
for family in $families; do
  for p in $counts; do
    for seed in $(seq 1 "$seeds"); do
      files=("$family:$out/cluster_${p}pu.json")
      [ "$family" = mixed ] && files=("mixed:$out/mixed_${p}pu.json")
      [ "$family" = mixed ] && [ "${PINNED:-1}" = 1 ] && files+=("mixed, pinned:$out/mixed_${p}pu_pinned.json")
      for entry in "${files[@]}"; do
        label=${entry%%:*} file=${entry#*:}
        for variant in central per-node per-node-known; do
          [ "$variant" = central ] && { [ "$p" -gt 1024 ] || [ "$label" = "mixed, pinned" ] || [ "${CENTRAL:-1}" = 0 ]; } && continue
          mode=${variant%-known}
          extra=()
          [ "$variant" = per-node-known ] && extra=(--known-rates)
          nice "$hetpu" cluster-sim --cluster "$file" --policy plb-hac --mode "$mode" --seed "$seed" \
            --json "${extra[@]}" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); r["family"]=sys.argv[1]; print(json.dumps(r))' "$label" >>"$out/runs.jsonl"
        done
      done
      echo "  $family, $p PUs, seed $seed done" >&2
    done
  done
done
python3 "$top/bench/mpi_scaling_summary.py" "$out/runs.jsonl" | tee "$out/summary.txt"
