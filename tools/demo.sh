#!/usr/bin/env bash
# The main demonstration: matmul on a heterogeneous node (1 CPU worker + 1 OpenCL worker)
# under hetpu's and StarPU's policies, every run verified, then a comparison table and a
# plot. Called by `./run demo`, which sets up the node's environment.
#   tools/demo.sh BUILD_DIR      (DEMO_N, DEMO_BLOCK, DEMO_REPS, DEMO_POLICIES override)
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
n=${DEMO_N:-1536}
block=${DEMO_BLOCK:-128}
reps=${DEMO_REPS:-3}
policies=${DEMO_POLICIES:-"greedy eager dmda ws random"}
out=$top/results/demo
mkdir -p "$out"
jsonl=$out/matmul_policies.jsonl
: >"$jsonl"

echo "hetpu demo: C = A x B, n=$n double precision, fixed blocks of $block columns, best of $reps runs"
echo "node: 1 CPU worker + 1 OpenCL worker (PoCL on the CPU), StarPU home $STARPU_HOME"
echo
for policy in $policies; do
  printf '%-8s ' "$policy"
  if ! STARPU_SCHED=$policy "$build/apps/matmul/matmul" -n "$n" --block "$block" --reps "$reps" --verify \
       --json "$jsonl" >"$out/$policy.log" 2>&1; then
    echo "FAILED (see $out/$policy.log)"; cat "$out/$policy.log"; exit 1
  fi
  echo "done"
done
echo
"$top/tools/jsonl_table.sh" "$jsonl" | tee "$out/matmul_policies.txt"

if command -v gnuplot >/dev/null; then
  "$top/tools/jsonl_table.sh" --data "$jsonl" >"$out/matmul_policies.dat"
  gnuplot <<GP
set terminal pngcairo size 900,480 noenhanced
set output "$out/matmul_policies.png"
set title "matmul n=$n on 1 CPU + 1 OpenCL worker: best of $reps runs"
set key outside below horizontal
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "GFLOP/s"
set y2label "share of columns on the CPU worker (%)"
set y2range [0:100]
set ytics nomirror
set y2tics
set yrange [0:*]
plot "$out/matmul_policies.dat" using 3:xtic(1) title "GFLOP/s", '' using 4 axes x1y2 title "CPU share of columns (%)"
GP
  echo "plot: $out/matmul_policies.png"
fi
echo "results: $jsonl"
