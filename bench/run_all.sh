#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Benchmarks, run by `./run bench [SUITE...]` (default: all). Results are JSON lines and
# plots under results/bench/, figures reported as ratios against a baseline measured in
# the same run (the machines are shared and noisy; absolute times mean little).
#   overhead  matmul through StarPU + hetpu on one CPU worker vs direct OpenBLAS
#   plbhac    PLB-HAC: Ipopt solve time, simulated machines A-E (vs optimum, hdss, greedy),
#             and matmul on the real CPU + OpenCL node vs dmda & co, with adaptability
#   pareto    HEPOPTA/HTPOPTA/HPOPTA front computation time for p = 2..16, m = 100..500 at
#             five workloads each, against the previous implementation in the same run, and
#             real profiles: calibrate matmul and fft2d, their fronts and the paper's metrics,
#             matmul under hepopta with HETPU_TRADEOFF=energy vs time
#   accounting  the accounting hook's cost: 20,000 tiny tasks with and without it, same process
#   apps      grn and kmeans on the real CPU + OpenCL node under plb-hac, dmda, eager, greedy, hdss
#   ckpt      checkpoint backend on an RTM-like workload: blocking per checkpoint (async vs
#             synchronous disk vs the memcpy floor) and restore throughput (FIFO vs score
#             eviction with no/one/all hints; reverse, sequential, irregular orders), and
#             peer balancing across 8 simulated GPUs (local-only, greedy vs min-time max-flow);
#             device cache tier vs host tier on two PoCL devices (ckpt_device, and the RTM-like
#             workload with its blocks on the devices: ckpt_rtm_device)
#   mgb       MGB GPU packing: the paper's figures and tables from `hetpu mgb-sim` (W1-W8 on
#             2xP100, 4xV100, 4xH100; sa, cg, mgb, mgb-exact, schedgpu) under results/mgb/, and
#             `hetpu batch` of kmeans + matmul jobs on the two-device PoCL node (sa, cg, mgb)
set -euo pipefail
build=${1:?usage: run_all.sh BUILD_DIR [SUITE...]}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/results/bench
mkdir -p "$out"
export STARPU_SILENT=1
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-bench.XXXXXX")
export STARPU_HOME
# Benchmark runs are charged by the accounting hook (on by default): keep them out of the
# user's ledger, and their summaries off the benchmark output.
export HETPU_LEDGER="$STARPU_HOME/ledger.sqlite" HETPU_ACCOUNTING_QUIET=1
trap 'rm -rf "$STARPU_HOME"' EXIT
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(overhead plbhac pareto accounting apps ckpt mgb)

for suite in "${suites[@]}"; do
  case "$suite" in
    overhead)
      echo "== matmul_overhead: StarPU + hetpu on one CPU worker vs direct single-threaded OpenBLAS"
      STARPU_SCHED=${STARPU_SCHED:-greedy} "$build/bench/matmul_overhead" --json "$out/matmul_overhead.jsonl" ;;
    plbhac)
      echo "== plbhac_solve_speed: model evaluation (Ipopt solve) per virtual step"
      "$build/bench/plbhac_solve_speed" | tee "$out/plbhac_solve_speed.txt"
      echo "== curve_select_speed: a PU's curve choice, the default screen vs a converged one"
      "$build/bench/curve_select_speed" | tee "$out/curve_select_speed.txt"
      echo "== plbhac_sim: simulated machines A-E"
      bash "$top/bench/plbhac_sim.sh" "$build" "$out/plbhac_sim"
      echo "== plbhac_ramp_bound: what a cold start can reach under the trust region"
      python3 "$top/bench/plbhac_ramp_bound.py" "$build" "$top"/bench/scenarios/*.json | tee "$out/plbhac_ramp_bound.txt"
      echo "== plbhac_models_sim: second runs from persisted models"
      bash "$top/bench/plbhac_models_sim.sh" "$build" "$out/plbhac_models_sim"
      echo "== plbhac_random_sim: random machines (curves, noise, slowdowns) against hdss and greedy"
      python3 "$top/bench/plbhac_random_sim.py" "$build" "$out/plbhac_random_sim"
      echo "== plbhac_node_family: few-PU nodes the bench scenarios do not hold"
      python3 "$top/bench/plbhac_node_family.py" "$build" "$out/plbhac_node_family" | tee "$out/plbhac_node_family.txt"
      echo "== plbhac_matmul: the real CPU + OpenCL node"
      bash "$top/bench/plbhac_matmul.sh" "$build" "$out/plbhac_matmul"
      echo "== plbhac_node_limit: plb-hac vs the node's limit (sum of standalone throughputs)"
      bash "$top/bench/plbhac_node_limit.sh" "$build" "$out/plbhac_node_limit"
      echo "== plbhac_static_split: plb-hac vs the best fixed split of the real node"
      bash "$top/bench/plbhac_static_split.sh" "$build" "$out/plbhac_static_split" ;;
    pareto)
      echo "== pareto_speed: exact Pareto fronts"
      "$build/bench/pareto_speed" | tee "$out/pareto_speed.txt"
      echo "== pareto_real: calibrated profiles of the real CPU + OpenCL node"
      bash "$top/bench/pareto_real.sh" "$build" "$out/pareto_real" ;;
    accounting)
      echo "== accounting_overhead: 20,000 tiny tasks with and without the accounting hook (target ratio < 1.02)"
      "$build/bench/accounting_overhead" --tasks 20000 --reps 21 --json "$out/accounting_overhead.jsonl" ;;
    apps)
      echo "== apps_policies: grn and kmeans on the real CPU + OpenCL node"
      bash "$top/bench/apps_policies.sh" "$build" "$out/apps_policies" ;;
    ckpt)
      echo "== ckpt_rtm: RTM-like forward/backward checkpointing"
      "$build/bench/ckpt_rtm" --json "$out/ckpt_rtm.jsonl" | tee "$out/ckpt_rtm.txt"
      bash "$top/bench/ckpt_plot.sh" "$out/ckpt_rtm.jsonl" "$out/ckpt_rtm_restore.png"
      echo "== ckpt_peer: peer balancing across 8 simulated GPUs"
      "$build/bench/ckpt_peer" --json "$out/ckpt_peer.jsonl" | tee "$out/ckpt_peer.txt"
      echo "== ckpt_peer_schedule_speed: the peer schedule's worst time and heap, bandwidth ratios 1 to 1e12"
      "$build/bench/ckpt_peer_schedule_speed" --json "$out/ckpt_peer_schedule_speed.jsonl" |
        tee "$out/ckpt_peer_schedule_speed.txt"
      echo "== ckpt_device: device cache tier vs host tier, two PoCL OpenCL devices"
      BUILD_DIR="$build" bash "$top/bench/ckpt_device.sh" --json "$out/ckpt_device.jsonl" | tee "$out/ckpt_device.txt"
      echo "== ckpt_rtm_device: the RTM-like workload with its blocks on two PoCL OpenCL devices"
      BUILD_DIR="$build" bash "$top/bench/ckpt_rtm_device.sh" --json "$out/ckpt_rtm_device.jsonl" |
        tee "$out/ckpt_rtm_device.txt" ;;
    mgb)
      echo "== mgb_sim: the MGB paper's Fig. 4-6 and Tables II-IV with hetpu mgb-sim (results/mgb/)"
      python3 "$top/bench/mgb/sim_bench.py" "$build/tools/hetpu" "$top/results/mgb"
      echo "== mgb_bound: every policy as a multiple of the makespan lower bound (results/mgb-bound/)"
      python3 "$top/bench/mgb/bound_eval.py" "$build/tools/hetpu" "$top/results/mgb-bound"
      echo "== mgb_colocation: mgb against one job per GPU, MPS and time-sliced (results/mgb-colocation/)"
      python3 "$top/bench/mgb/colocation_bench.py" "$build/tools/hetpu" "$top/results/mgb-colocation" \
        ${MGB_BASELINE_HETPU:+--baseline "$MGB_BASELINE_HETPU"}
      echo "== mgb_small: the bound against the best pinning on small mixes (results/mgb-small/)"
      python3 "$top/bench/mgb/small_exact.py" "$build/tools/hetpu" "$top/results/mgb-small"
      echo "== mgb_arrivals: Poisson arrivals at 50-95% load, mean turnaround (results/mgb-arrivals/)"
      python3 "$top/bench/mgb/arrivals.py" "$build/tools/hetpu" "$top/results/mgb-arrivals"
      echo "== mgb_batch: hetpu batch of kmeans and matmul jobs on the two-device PoCL node"
      bash "$top/bench/mgb/real_batch.sh" "$build" "$top/results/mgb/batch" ;;
    *)
      echo "run_all.sh: unknown suite '$suite' (overhead, plbhac, pareto, accounting, apps, ckpt, mgb)" >&2; exit 2 ;;
  esac
done
echo "results: $out/"
