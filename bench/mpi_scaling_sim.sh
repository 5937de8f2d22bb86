#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Scale-out in simulation: one planner on rank 0 for clusters of 8, 64, 256 and 1024 PUs
# (bench/scenarios/gen_cluster_scaling.py: nodes of the invented machine types A-E, network
# latency and bandwidth in every remote PU's transfer cost). For plb-hac, hdss and greedy:
# makespan over the exact static optimum, and the planner's own time (hetpu sim charges it
# to the units, as the real runner does), per virtual step for plb-hac.
# Usage: bench/mpi_scaling_sim.sh BUILD_DIR [OUT_DIR] [PU counts...]
set -euo pipefail
# The planner's time is charged to the simulated units, and it is wall time. OpenBLAS
# (GSL's and Ipopt's BLAS on Debian) starts a thread per core when it loads, and each spins
# for about 0.1 s: a whole short simulation, on a core the planner then shares (measured:
# 1.46 CPUs busy instead of 0.98, planning time x1.3-1.6 on 16 PUs). The planner's BLAS
# problems are tiny and single-threaded, and StarPU codelets run single-threaded BLAS.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
build=${1:?usage: mpi_scaling_sim.sh BUILD_DIR [OUT_DIR] [PU counts...]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/mpi_scaling_sim}
shift $(( $# >= 2 ? 2 : 1 ))
counts=${*:-8 64 256 1024}
hetpu=$(cd "$build" && pwd)/tools/hetpu
[ -x "$hetpu" ] || { echo "mpi_scaling_sim.sh: no $hetpu (make -C $build tools/hetpu)" >&2; exit 1; }
mkdir -p "$out"
# shellcheck disable=SC2086
python3 "$top/bench/scenarios/gen_cluster_scaling.py" "$out" $counts
: >"$out/runs.jsonl"
for p in $counts; do
  sc=$out/cluster_mm_${p}pu.json
  for policy in optimum plb-hac hdss greedy; do
    extra=()
    [ "$policy" = plb-hac ] && extra=(--plan-trace "$out/plan_${p}pu.jsonl") && : >"$out/plan_${p}pu.jsonl"
    start=$(date +%s.%N)
    "$hetpu" sim --scenario "$sc" --policy "$policy" --json "${extra[@]}" >"$out/run.json"
    end=$(date +%s.%N)
    python3 - "$out/run.json" "$p" "$(echo "$end - $start" | bc)" "$out/plan_${p}pu.jsonl" >>"$out/runs.jsonl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["pus"] = int(sys.argv[2])
r["sim_wall_s"] = float(sys.argv[3])
steps = 0
if r["policy"] == "plb-hac":
    for line in open(sys.argv[4]):
        steps = max(steps, json.loads(line).get("step", 0))
r["virtual_steps"] = steps
r.pop("units", None)
print(json.dumps(r))
PY
    echo "  $p PUs, $policy done" >&2
  done
done
python3 - "$out/runs.jsonl" <<'PY' | tee "$out/summary.txt"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
opt = {r["pus"]: r["makespan_s"] for r in runs if r["policy"] == "optimum"}
print("| PUs | policy | makespan (s) | / optimum | blocks | planner time (s) | virtual steps | planner time per step (ms) |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for r in runs:
    if r["policy"] == "optimum":
        print("| %d | optimum | %.2f | 1.000 | %d | - | - | - |" % (r["pus"], r["makespan_s"], r["blocks"]))
        continue
    per = "%.1f" % (1000 * r["planning_s"] / r["virtual_steps"]) if r["virtual_steps"] else "-"
    print("| %d | %s | %.2f | %.3f | %d | %.3f | %s | %s |" % (r["pus"], r["policy"], r["makespan_s"],
          r["makespan_s"] / opt[r["pus"]], r["blocks"], r["planning_s"], r["virtual_steps"] or "-", per))
PY
