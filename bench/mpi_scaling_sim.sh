#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Scale-out in simulation, the network charged (`hetpu cluster-sim`): nodes of 16 PUs of
# three types, every 16th node 3x slower, 100 Gb/s links, a 32 KiB column in and out per
# element (bench/scenarios/gen_cluster_nodes.py), weak scaling (~60 s). For each size:
#   central   one plb-hac planner for every PU, every block's data through rank 0's link
#             (run up to 1,024 PUs: beyond, the relay is hopeless and slow to simulate);
#   per-node  a plb-hac planner per node and the coordinator, shares by PU count (a first
#             run) and by the nodes' speeds (a later run: the runner keeps them).
# Prints makespan / bound (median and worst of the seeds), the coordinator's time per
# decision and its share of the job, and the job data through rank 0 per second.
# Usage: bench/mpi_scaling_sim.sh BUILD_DIR [OUT_DIR] [SEEDS] [PU counts...]
set -euo pipefail
# Planning time is charged to the simulated units as measured wall time: OpenBLAS's
# threads spinning on the planner's core would inflate it (see bench/README).
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
build=${1:?usage: mpi_scaling_sim.sh BUILD_DIR [OUT_DIR] [SEEDS] [PU counts...]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/mpi_scaling_sim}
seeds=${3:-5}
shift $(( $# >= 3 ? 3 : $# ))
counts=${*:-16 64 256 1024 4096 16384}
hetpu=$(cd "$build" && pwd)/tools/hetpu
[ -x "$hetpu" ] || { echo "mpi_scaling_sim.sh: no $hetpu (make -C $build tools/hetpu)" >&2; exit 1; }
mkdir -p "$out"
# shellcheck disable=SC2086
python3 "$top/bench/scenarios/gen_cluster_nodes.py" "$out" $counts >&2
: >"$out/runs.jsonl"
for p in $counts; do
  for seed in $(seq 1 "$seeds"); do
    for variant in central per-node per-node-known; do
      [ "$variant" = central ] && [ "$p" -gt 1024 ] && continue
      mode=${variant%-known}
      extra=()
      [ "$variant" = per-node-known ] && extra=(--known-rates)
      "$hetpu" cluster-sim --cluster "$out/cluster_${p}pu.json" --policy plb-hac --mode "$mode" --seed "$seed" \
        --json "${extra[@]}" >>"$out/runs.jsonl"
    done
    echo "  $p PUs, seed $seed done" >&2
  done
done
python3 - "$out/runs.jsonl" <<'PY' | tee "$out/summary.txt"
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
print("| PUs | nodes | planner | makespan / bound, median | worst | moves | coordinator per decision (us) | coordinator / job | rank 0 data (GB/s) |")
print("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
for pus in sorted({r["pus"] for r in runs}):
    for variant in ("central", "per-node", "per-node-known"):
        rs = [r for r in runs if r["pus"] == pus and r["mode"] == variant.replace("-known", "")
              and r["known_rates"] == variant.endswith("known")]
        if not rs:
            continue
        ratio = [r["makespan_s"] / r["bound_s"] for r in rs]
        per = [1e6 * r["coordinator_s"] / r["coordinator_calls"] for r in rs if r["coordinator_calls"]]
        share = [r["coordinator_s"] / r["makespan_s"] for r in rs]
        label = {"central": "central", "per-node": "per-node, first run", "per-node-known": "per-node, speeds kept"}[variant]
        print("| %d | %d | %s | %.3f | %.3f | %g | %s | %s | %.2f |" % (
            pus, rs[0]["nodes"], label, statistics.median(ratio), max(ratio),
            statistics.median([r["moves"] for r in rs]),
            "%.1f" % statistics.median(per) if per else "-",
            "%.1e" % max(share) if variant != "central" else "-",
            statistics.median([r["rank0_bytes"] / r["makespan_s"] / 1e9 for r in rs])))
PY
