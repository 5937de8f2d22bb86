#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# PLB-HAC on GPU nodes, in simulation (`hetpu sim`): the testbed of
# bench/scenarios/gen_gpu_nodes.py (the three apps' block costs as the H100/H200 traces
# showed them, 1 or 4 GPUs beside 8-64 CPU workers, jobs of ~0.1 s (100ms), 1, 10 and 100 s) under
#   plb-hac        cold: no saved models;
#   plb-hac-warm   the same job again, from the models the cold run saved;
#   plb-hac-starpu a first run on a node StarPU calibrated (dmda ran the job before): from
#                  the units' mean execution time at the fixed block (--starpu-calibrated);
#   hdss, greedy   (fixed blocks of x_init);
#   best-single-kind  the optimum over the fastest unit kind alone (the GPUs alone);
#   optimum-noisy  the optimum's distribution under the same noise.
# Prints, per job length, plb-hac / best-single-kind and plb-hac / optimum-noisy (geometric
# mean and worst of the scenarios' median over seeds) and how often plb-hac is more than 2%
# behind the better of hdss and greedy. Writes OUT_DIR/runs.jsonl and OUT_DIR/summary.md.
# Usage: bench/plbhac_gpu_node_sim.sh BUILD_DIR [OUT_DIR]   (SEEDS=5 JOBS=nproc; LENGTHS='100ms 1s'
#        restricts the job lengths, APPS='mm grn' the apps; PLANNING_TIME=0 leaves the planners' wall
#        time out of the simulated time: deterministic, for comparing planner versions on a busy host)
set -euo pipefail
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}  # see plbhac_sim.sh: planning time is charged
build=${1:?usage: plbhac_gpu_node_sim.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/plbhac_gpu_node_sim}
seeds=${SEEDS:-5}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
lengths=${LENGTHS:-100ms 1s 10s 100s}
apps=${APPS:-mm kmeans grn}
PLANNING_TIME=${PLANNING_TIME:-1}
hetpu=$(cd "$build" && pwd)/tools/hetpu
[ -x "$hetpu" ] || { echo "plbhac_gpu_node_sim.sh: no $hetpu (make -C $build tools/hetpu)" >&2; exit 1; }
mkdir -p "$out/scenarios" "$out/models" "$out/runs"
python3 "$top/bench/scenarios/gen_gpu_nodes.py" "$out/scenarios" >/dev/null
rm -f "$out/runs/"*.json
jobfile=$out/jobs
: >"$jobfile"
for f in "$out/scenarios"/*.json; do
  name=$(basename "$f" .json)
  app=${name#gpunode_}; app=${app%%_*}
  length=${name##*_}
  case " $apps " in *" $app "*) ;; *) continue ;; esac
  case " $lengths " in *" $length "*) ;; *) continue ;; esac
  for seed in $(seq 1 "$seeds"); do
    for policy in plb-hac hdss greedy best-single-kind optimum-noisy; do
      echo "$name $policy $seed" >>"$jobfile"
    done
  done
done
run_one() {  # scenario policy seed
  local name=$1 policy=$2 seed=$3 f="$out/scenarios/$1.json" r="$out/runs/$1.$2.$3" charge=()
  [ "$PLANNING_TIME" != 0 ] || charge=(--no-planning-time)
  if [ "$policy" = plb-hac ]; then
    # Cold, saving models into a store of this seed's own; then warm from them.
    local models="$out/models/$name.$seed"
    rm -rf "$models"
    "$hetpu" sim --scenario "$f" --policy plb-hac --seed "$seed" --json "${charge[@]}" --models "$models" >"$r.json"
    "$hetpu" sim --scenario "$f" --policy plb-hac --seed "$seed" --json "${charge[@]}" --models "$models" |
      sed 's/"policy":"plb-hac"/"policy":"plb-hac-warm"/' >"$r.warm.json"
    "$hetpu" sim --scenario "$f" --policy plb-hac --seed "$seed" --json "${charge[@]}" --starpu-calibrated |
      sed 's/"policy":"plb-hac"/"policy":"plb-hac-starpu"/' >"$r.starpu.json"
  else
    "$hetpu" sim --scenario "$f" --policy "$policy" --seed "$seed" --json "${charge[@]}" >"$r.json"
  fi
}
export -f run_one
export out hetpu PLANNING_TIME
total=$(wc -l <"$jobfile")
echo "plbhac_gpu_node_sim: $total runs on $jobs jobs" >&2
xargs -P "$jobs" -L 1 bash -c 'run_one "$@"' _ <"$jobfile"
for r in "$out/runs/"*.json; do
  n=$(basename "$r"); n=${n%%.*}
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["scenario"]=sys.argv[2]; print(json.dumps(d))' "$r" "$n"
done >"$out/runs.jsonl"
python3 - "$out/runs.jsonl" <<'PY' | tee "$out/summary.md"
import collections, json, math, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
by = collections.defaultdict(list)
for r in runs:
    pol = r["policy"].split(":")[0]
    by[(r["scenario"], pol)].append(r["makespan_s"])
med = {k: statistics.median(v) for k, v in by.items()}
scen = sorted({r["scenario"] for r in runs})
def gm(xs): return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
print("| length | plb-hac / best single kind (cold, warm, from StarPU) | plb-hac / optimum-noisy (cold, warm, from StarPU) | worst row (cold) | rows > 2% behind hdss or greedy (cold, warm, from StarPU) |")
print("|---|---|---|---|---|")
for length in ("100ms", "1s", "10s", "100s"):
    ss = [s for s in scen if s.endswith("_" + length)]
    if not ss:
        continue
    line = []
    worst = ("", 0)
    behind = [0, 0, 0]
    pols = ("plb-hac", "plb-hac-warm", "plb-hac-starpu")
    for ref in ("best-single-kind", "optimum-noisy"):
        vals = {}
        for pol in pols:
            rs = [med[(s, pol)] / med[(s, ref)] for s in ss if (s, pol) in med and (s, ref) in med]
            vals[pol] = rs
        line.append(", ".join("%.3f (max %.3f)" % (gm(vals[p]), max(vals[p])) if vals[p] else "-" for p in pols))
    for s in ss:
        ref = "best-single-kind" if length == "100ms" else "optimum-noisy"
        x = med[(s, "plb-hac")] / med[(s, ref)]
        if x > worst[1]:
            worst = (s, x)
        other = min(med[(s, "hdss")], med[(s, "greedy")])
        for i, p in enumerate(pols):
            behind[i] += (s, p) in med and med[(s, p)] > 1.02 * other
    print("| %s | %s | %s | %s %.3f | %d, %d, %d of %d |" % (length, line[0], line[1], worst[0], worst[1], behind[0], behind[1], behind[2], len(ss)))
print()
print("| scenario | plb-hac | warm | from StarPU | hdss | greedy | best single kind | optimum-noisy |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for s in scen:
    print("| %s | %s |" % (s, " | ".join("%.4g" % med.get((s, p), float("nan")) for p in
                                           ("plb-hac", "plb-hac-warm", "plb-hac-starpu", "hdss", "greedy", "best-single-kind", "optimum-noisy"))))
PY
