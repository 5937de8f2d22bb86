#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# plb-hac against the real node's physical limit: matmul (n = 3072 and 4096),
# grn and kmeans under plb-hac, eager, ws and calibrated dmda, and each part of the node
# alone (eager on the CPU workers only, eager on the GPU worker only) in the same
# interleaved rounds. The node is the CPU + OpenCL one (NODE_GPU=opencl, default) or a CPU +
# CUDA one (NODE_GPU=cuda; see real_node_apps.sh). The node's limit is the sum of the two
# standalone throughputs: as a makespan, 1 / (1 / median_cpu_alone + 1 / median_gpu_alone).
# Reports per app the median, min and max makespan of each configuration, its ratio to the
# limit (limit makespan / makespan, 1.0 = the node's limit) and to eager, ws and dmda
# (median / median; below 1 is faster).
# Every run is verified (matmul and fft2d: --verify; grn: precision/recall; kmeans: inertia).
#   bench/plbhac_node_limit.sh BUILD_DIR [OUT_DIR]
# Environment: ROUNDS (3), APPS ("mm3072 mm4096 grn kmeans"; mmN is matmul of order N, fftN fft2d
# of an N x N matrix),
# POLICIES ("plb-hac eager ws dmda"; plb-hac-prev = plb-hac without the trust region and
# without saved models; plb-hac-ipopt = plb-hac solving every step with Ipopt;
# plb-hac-nohedge = plb-hac without the straggle hedge; plb-hac-starpu = a first run started
# from StarPU's calibrated model; plb-hac-cold = a first run that trains), NODE_GPU,
# NODE_NCPU, GRN_GENES (250), KM_N (500000), KM_ITERS (20). plb-hac's models persist across
# the runs in a private HETPU_HOME (its warm-up run trains and saves them), as for a user's
# repeated runs; HETPU_PLBHAC_MODELS=off measures it training every run. TRACES=1: every
# measured plb-hac run also writes its per-block trace (HETPU_TRACE) to
# OUT_DIR/traces/APP.CONFIG.rROUND.jsonl, so that one bench on a borrowed node also says where
# the time went.
set -euo pipefail
build=${1:?usage: plbhac_node_limit.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/plbhac_node_limit}
rounds=${ROUNDS:-3}
apps=(${APPS:-mm3072 mm4096 grn kmeans})
policies=(${POLICIES:-plb-hac eager ws dmda})
. "$top/bench/real_node_apps.sh"
for app in "${apps[@]}"; do real_node_cmd "$app"; done
mkdir -p "$out"
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-bench.XXXXXX")
export STARPU_HOME HETPU_HOME=$STARPU_HOME/hetpu-home HETPU_LEDGER=$STARPU_HOME/ledger.sqlite
trap 'rm -rf "$STARPU_HOME"' EXIT

# config: a policy on the whole node, or cpu-alone / <gpu>-alone (eager on one part).
gpu_alone=$node_gpu-alone
run() {  # app config [json [trace]]
  local app=$1 config=$2 json=${3:+--json $3} sched=$2 part=whole
  local prev=()
  case "$config" in
    cpu-alone) sched=eager part=cpu ;;
    "$gpu_alone") sched=eager part=gpu ;;
    # The planner without its learning aids: no trust region, no models read or saved (it trains
    # every run; k-means still shares models between its iterations in one process).
    plb-hac-prev) sched=plb-hac prev=(HETPU_PLBHAC_TRUST=0 HETPU_PLBHAC_MODELS=off) ;;
    # plb-hac with Ipopt for every step's solve, as the paper (HETPU_PLBHAC_SOLVER=ipopt).
    plb-hac-ipopt) sched=plb-hac prev=(HETPU_PLBHAC_SOLVER=ipopt) ;;
    # plb-hac whose final shares end together as predicted, without the straggle hedge.
    plb-hac-nohedge) sched=plb-hac prev=(HETPU_PLBHAC_HEDGE=0) ;;
    # A first run of plb-hac on a node dmda has calibrated: no models of its own, started
    # from StarPU's history of the block codelet (dmda's warm-ups calibrate it).
    plb-hac-starpu) sched=plb-hac prev=(HETPU_PLBHAC_MODELS=off) ;;
    # A first run with nothing to start from: it trains.
    plb-hac-cold) sched=plb-hac prev=(HETPU_PLBHAC_MODELS=off HETPU_PLBHAC_STARPU_MODELS=off) ;;
  esac
  node_workers "$part"
  export STARPU_SCHED=$sched
  unset HETPU_PLBHAC_TRUST HETPU_PLBHAC_MODELS HETPU_PLBHAC_SOLVER HETPU_PLBHAC_HEDGE HETPU_PLBHAC_STARPU_MODELS
  [ ${#prev[@]} -eq 0 ] || export "${prev[@]}"
  real_node_cmd "$app" || return 1
  if [ -n "${4:-}" ]; then HETPU_TRACE=$4 "${app_cmd[@]}" $json; else "${app_cmd[@]}" $json; fi
}

# The standalone parts first: a bench cut short still has the limit to compare with.
# SKIP_CPU_ALONE=1 (long jobs on a GPU node, where the CPUs alone would take minutes): no
# limit, the policies compared with the GPU alone.
configs=(cpu-alone "$gpu_alone" "${policies[@]}")
[ -z "${SKIP_CPU_ALONE:-}" ] || configs=("$gpu_alone" "${policies[@]}")
runs=$out/runs.jsonl
if [ -z "${SUMMARY_ONLY:-}" ]; then
  : >"$runs"
  echo "== node limit ($node_gpu node, $node_ncpu CPU workers): ${apps[*]} under ${configs[*]}; $rounds interleaved rounds"
  # Discarded runs: PoCL compiles the kernels; dmda calibrates its history models (three
  # runs); plb-hac trains once and saves its models (later runs start from them). The CUDA
  # kernels are compiled ahead and their libraries load in every process alike, so there the
  # configurations that learn nothing (eager, ws, the standalone parts) need none.
  for app in "${apps[@]}"; do
    for c in "${configs[@]}"; do
      warmups=1
      case "$c" in
        dm*) warmups=3 ;;
        plb-hac*) ;;
        *) [ "$node_gpu" = opencl ] || warmups=0 ;;
      esac
      for ((w = 0; w < warmups; w++)); do
        printf 'warm-up %-7s %-13s %d/%d\n' "$app" "$c" "$((w + 1))" "$warmups"
        run "$app" "$c" >"$out/last.log" 2>&1 || { cat "$out/last.log"; echo "warm-up $app under $c failed"; exit 1; }
      done
    done
  done
  for ((r = 0; r < rounds; r++)); do
    for ((i = 0; i < ${#configs[@]}; i++)); do
      c=${configs[$(((i + r) % ${#configs[@]}))]}
      for app in "${apps[@]}"; do
        printf 'round %d/%d %-7s %-13s ' "$((r + 1))" "$rounds" "$app" "$c"
        trace=
        case "$c" in plb-hac*) [ -z "${TRACES:-}" ] || { mkdir -p "$out/traces"; trace=$out/traces/$app.$c.r$((r + 1)).jsonl; } ;; esac
        run "$app" "$c" "$out/one.json" ${trace:+"$trace"} >"$out/last.log" 2>&1 || { cat "$out/last.log"; exit 1; }
        python3 - "$out/one.json" "$app" "$c" "$runs" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
r["bench_app"], r["config"] = sys.argv[2], sys.argv[3]
open(sys.argv[4], "a").write(json.dumps(r) + "\n")
print("%.3f s" % r["makespan_s"])
PY
        rm -f "$out/one.json"
      done
    done
  done
fi

PYTHONPATH="$top/bench" python3 - "$runs" "$out/summary.txt" "$node_gpu_name" "${configs[@]}" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
gpu_name, configs = sys.argv[3], sys.argv[4:]
gpu_alone = [c for c in configs if c.endswith("-alone") and c != "cpu-alone"][0]
lines = []
from real_node_verified import verified as ok
for app in dict.fromkeys(r["bench_app"] for r in rows):
    mine = [r for r in rows if r["bench_app"] == app]
    med = {c: st.median(r["makespan_s"] for r in mine if r["config"] == c) for c in configs
           if any(r["config"] == c for r in mine)}
    if gpu_alone not in med:  # an interrupted run: nothing to compare with
        lines += [f"== {app}: {gpu_alone} never ran", ""]
        continue
    # No CPU-alone runs (SKIP_CPU_ALONE): no limit; the GPU alone is the reference.
    limit = 1.0 / (1.0 / med["cpu-alone"] + 1.0 / med[gpu_alone]) if "cpu-alone" in med else None
    inertia = [r["inertia"] for r in mine if "inertia" in r]
    head = (f"node limit {limit:.3f} s (CPU alone {med['cpu-alone']:.3f} s, {gpu_name} alone {med[gpu_alone]:.3f} s, "
            "medians)") if limit else f"no limit measured ({gpu_name} alone {med[gpu_alone]:.3f} s, median)"
    lines.append(f"== {app}: {head}"
                 + (f"; inertia spread {(max(inertia) - min(inertia)) / min(inertia):.1e}" if inertia else ""))
    lines.append("%-13s %4s %9s %9s %9s %9s %8s %8s %8s %8s %s" % ("config", "runs", "median_s", "min_s", "max_s",
                 "vs_limit", "vs_gpu", "vs_eager", "vs_ws", "vs_dmda", "verified"))
    for c in configs:
        ms = [r["makespan_s"] for r in mine if r["config"] == c]
        if not ms:
            continue
        m = st.median(ms)
        rel = lambda p: ("%8.3f" % (m / med[p])) if p in med else "       -"
        lines.append("%-13s %4d %9.3f %9.3f %9.3f %9s %s %s %s %s %s" % (
            c, len(ms), m, min(ms), max(ms), "%.3f" % (limit / m) if limit else "-", rel(gpu_alone), rel("eager"),
            rel("ws"), rel("dmda"), all(ok(r) for r in mine if r["config"] == c)))
    lines.append("")
lines.append("vs_limit: node-limit makespan / median makespan (1.0 = the sum of the standalone throughputs);"
             " vs_gpu, vs_X: median / the GPU alone's or X's median (below 1 is faster)")
text = "\n".join(lines)
print(text)
open(sys.argv[2], "w").write(text + "\n")
PY
echo "results: $out/"
