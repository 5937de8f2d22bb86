#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The main demonstration: matmul on a heterogeneous node (1 CPU worker + 1 OpenCL worker)
# under hetpu's and StarPU's policies, every run verified, then a comparison table and a
# plot. Called by `./run demo`, which sets up the node's environment.
#   tools/demo.sh BUILD_DIR      (DEMO_N, DEMO_BLOCK, DEMO_REPS, DEMO_POLICIES override)
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
top=$(cd "$(dirname "$0")/.." && pwd)
n=${DEMO_N:-3072}
block=${DEMO_BLOCK:-256}
reps=${DEMO_REPS:-3}
policies=${DEMO_POLICIES:-"plb-hac hdss greedy dmda eager ws"}
out=$top/results/demo
mkdir -p "$out"
jsonl=$out/matmul_policies.jsonl
: >"$jsonl"

echo "hetpu demo: C = A x B, n=$n double precision, best of $reps runs; plb-hac and hdss choose"
echo "their block sizes, the other policies get fixed blocks of $block columns"
echo "node: 1 CPU worker + 1 OpenCL worker (PoCL on the CPU), StarPU home $STARPU_HOME"
echo
for policy in $policies; do
  printf '%-8s ' "$policy"
  trace=
  [ "$policy" = plb-hac ] && trace=$out/plbhac_trace.jsonl && rm -f "$trace"
  if ! HETPU_TRACE=$trace STARPU_SCHED=$policy "$build/apps/matmul/hetpu-matmul" -n "$n" --block "$block" --reps "$reps" --verify \
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
  if [ -s "$out/plbhac_trace.jsonl" ]; then
    # The last run of the trace (its clock restarts with every run): block size over time,
    # one data file per worker kind (0: CPU, 1: accelerator).
    rm -f "$out"/plbhac_blocks_*.dat
    awk '
      function field(s, name) { if (match(s, "\"" name "\":[^,}]*")) { v = substr(s, RSTART + length(name) + 3, RLENGTH - length(name) - 3); gsub(/"/, "", v); return v } return "" }
      { t = field($0, "time_s") + 0; if (t < last) { n = 0 } last = t
        rows[++n] = t " " field($0, "size") " " (field($0, "worker_name") ~ /^CPU/ ? 0 : 1) " " field($0, "phase") }
      END { for (i = 1; i <= n; i++) { split(rows[i], f, " "); print rows[i] > (out "/plbhac_blocks_" f[3] ".dat") } }' \
      out="$out" "$out/plbhac_trace.jsonl"
    gnuplot <<GP
set terminal pngcairo size 900,480 noenhanced
set output "$out/plbhac_block_sizes.png"
set title "plb-hac: block size over time on 1 CPU + 1 OpenCL worker (matmul n=$n, last run)"
set xlabel "time since the run started (s)"
set ylabel "block size (columns)"
set key outside below horizontal
plot "$out/plbhac_blocks_0.dat" using 1:2 with linespoints pt 7 title "CPU worker", \
     "$out/plbhac_blocks_1.dat" using 1:2 with linespoints pt 5 title "accelerator (OpenCL) worker"
GP
    echo "plot: $out/plbhac_block_sizes.png"
  fi
fi
echo "results: $jsonl"

# The other two applications of the PLB-HAC paper, one short verified run each under
# plb-hac: GRN inference recovering a planted network, and k-means recovering planted
# centres (a few seconds each).
echo
echo "grn and kmeans under plb-hac (each checked against its serial reference):"
apps_json=$out/apps_plbhac.jsonl
: >"$apps_json"
if ! STARPU_SCHED=plb-hac "$build/apps/grn/hetpu-grn" --generate 120 --samples 80 --max-score 0.6 --verify \
     --json "$apps_json" --edges "$out/grn_edges.tsv" >"$out/grn.log" 2>&1; then
  echo "grn FAILED (see $out/grn.log)"; cat "$out/grn.log"; exit 1
fi
if ! STARPU_SCHED=plb-hac "$build/apps/kmeans/hetpu-kmeans" --generate 200000 --dims 4 -k 8 --verify \
     --json "$apps_json" --centroids "$out/kmeans_centroids.csv" >"$out/kmeans.log" 2>&1; then
  echo "kmeans FAILED (see $out/kmeans.log)"; cat "$out/kmeans.log"; exit 1
fi
python3 - "$apps_json" <<'PY' 2>/dev/null || cat "$out/grn.log" "$out/kmeans.log"
import json, sys
for r in map(json.loads, open(sys.argv[1])):
    share = {w["type"]: w["elements"] for w in r["workers"]}
    total = sum(share.values()) or 1
    split = ", ".join("%s %.0f%%" % (t, 100.0 * e / total) for t, e in share.items())
    if r["app"] == "grn":
        print("  grn    %d genes: %.3f s, planted network recovered with precision %.2f, recall %.2f, verified %s (%s)"
              % (r["genes"], r["makespan_s"], r["edge_precision"], r["edge_recall"], r["verified"], split))
    else:
        print("  kmeans %d points: %.3f s over %d iterations, centres found within %.3f, verified %s (%s)"
              % (r["n"], r["makespan_s"], r["iterations"], r["centre_error"], r["verified"], split))
PY
echo "results: $apps_json"

# MGB GPU packing on a node of two OpenCL devices limited to 8 and 96 MiB, with tasks of
# 12 MiB: StarPU's eager places a task on the small device and retries eviction forever
# (stopped here after 10 s); mgb never does, and two processes share the devices through
# the node-wide arbiter without ever reserving more than a device holds.
echo
echo "MGB GPU packing: 12 MiB tasks on two OpenCL devices of 8 and 96 MiB:"
(
  unset STARPU_LIMIT_OPENCL_MEM
  export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1
  export STARPU_LIMIT_OPENCL_0_MEM=8 STARPU_LIMIT_OPENCL_1_MEM=96 HETPU_ACCOUNTING=0
  export HETPU_MGB_ARBITER=/hetpu-mgb-demo-$$
  prog=$build/tests/programs/mgb_overflow_hetpu
  if STARPU_SCHED=eager timeout 10 "$prog" --tasks 16 >"$out/mgb_eager.log" 2>&1; then
    echo "  eager: completed (this time no task landed on the small device)"
  else
    echo "  eager: no result after 10 s (hung: StarPU retries eviction on a device the task cannot fit)"
  fi
  trace=$out/mgb_trace.jsonl
  : >"$trace"
  start=$(date +%s.%N)
  STARPU_SCHED=mgb HETPU_MGB_TRACE=$trace "$prog" --tasks 16 --sleep-ms 20 >"$out/mgb_a.log" 2>&1 &
  a=$!
  STARPU_SCHED=mgb HETPU_MGB_TRACE=$trace "$prog" --tasks 16 --sleep-ms 20 >"$out/mgb_b.log" 2>&1
  rb=$?
  wait $a; ra=$?
  rm -f "/dev/shm/hetpu-mgb-demo-$$"
  [ $ra -eq 0 ] && [ $rb -eq 0 ] || { echo "  mgb FAILED"; cat "$out/mgb_a.log" "$out/mgb_b.log"; exit 1; }
  python3 - "$trace" "$start" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
grants = [l for l in lines if l["event"] == "grant"]
devices = sorted({l["device"] for l in grants})
peak = max(l["reserved_bytes"] for l in lines)
cap = max(l["capacity"] for l in lines)
print("  mgb:   2 processes x 16 tasks verified in %.1f s; %d grants, all on %s; node-wide peak %.0f of %.0f MiB"
      % (lines[-1]["t"] - float(sys.argv[2]), len(grants), ", ".join(devices), peak / 2**20, cap / 2**20))
PY
  # Node-wide reservation of the large device over time, against its capacity.
  python3 - "$trace" >"$out/mgb_reserved.dat" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
t0 = lines[0]["t"]
for l in lines:
    print("%.6f %.3f %.3f %d" % (l["t"] - t0, l["reserved_bytes"] / 2**20, l["capacity"] / 2**20, l["pid"]))
PY
  if command -v gnuplot >/dev/null; then
    gnuplot <<GP 2>/dev/null && echo "  plot:  $out/mgb_reserved.png (node-wide reservation over time)"
set terminal pngcairo size 900,450
set output "$out/mgb_reserved.png"
set title "mgb: node-wide reservation on the 96 MiB device, two processes"
set xlabel "time (s)"; set ylabel "MiB"; set key bottom right
plot "$out/mgb_reserved.dat" using 1:2 with steps lw 2 title "reserved (both processes)", \
     "" using 1:3 with lines dt 2 lw 2 title "capacity"
GP
  fi
  echo "  trace: $trace (one JSON line per grant/release)"
)
