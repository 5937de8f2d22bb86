#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# grn and kmeans on the real CPU + OpenCL node (StarPU, PoCL) under plb-hac, dmda, eager,
# greedy and hdss: runs interleaved (each round rotates the policy order, apps alternate)
# so machine noise hits every policy alike; median and spread per app and policy, and the
# ratio of medians to dmda's. Makespan = time inside hetpu's divisible jobs (kmeans: summed
# over its iterations' assignment passes).
#   bench/apps_policies.sh BUILD_DIR [OUT_DIR]
# Environment: ROUNDS (5), POLICIES, GRN_GENES (250), GRN_SAMPLES (100), KM_N (500000),
# KM_ITERS (20); SUMMARY_ONLY=1 recomputes the summary from OUT_DIR/runs.jsonl.
set -euo pipefail
build=${1:?usage: apps_policies.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/apps_policies}
rounds=${ROUNDS:-5}
policies=(${POLICIES:-plb-hac dmda eager greedy hdss})
grn_genes=${GRN_GENES:-250}
grn_samples=${GRN_SAMPLES:-100}
km_n=${KM_N:-500000}
km_iters=${KM_ITERS:-20}
grn=$build/apps/grn/hetpu-grn
km=$build/apps/kmeans/hetpu-kmeans
[ -x "$grn" ] && [ -x "$km" ] || { echo "build first: make -C $build apps/grn/hetpu-grn apps/kmeans/hetpu-kmeans" >&2; exit 1; }
mkdir -p "$out"
export STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_SILENT=1
export POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-bench.XXXXXX")
export STARPU_HOME
trap 'rm -rf "$STARPU_HOME"' EXIT

# grn: a planted network (precision/recall recorded); kmeans: 16 clusters over 6
# overlapping blobs in 8 dimensions, a fixed number of Lloyd iterations (--tol 0).
run_app() {  # app policy [json]
  local json=${3:+--json $3}
  case "$1" in
    grn) STARPU_SCHED=$2 "$grn" --generate "$grn_genes" --samples "$grn_samples" --max-score 0.6 $json ;;
    kmeans) STARPU_SCHED=$2 "$km" --generate "$km_n" --dims 8 -k 16 --blobs 6 --sigma 10 --tol 0 \
              --max-iter "$km_iters" $json ;;
  esac
}

runs=$out/runs.jsonl
if [ -z "${SUMMARY_ONLY:-}" ]; then
: >"$runs"
echo "== grn ($grn_genes genes x $grn_samples samples, k = 2) and kmeans ($km_n points, d = 8, k = 16," \
     "$km_iters iterations) on 1 CPU + 1 OpenCL worker: ${policies[*]}; $rounds interleaved rounds"
# Discarded runs first: PoCL compiles the kernels, dmda calibrates its history models
# (three runs: StarPU wants several samples per size and worker type).
for app in grn kmeans; do
  for p in "${policies[@]}"; do
    warmups=1
    case "$p" in dm*) warmups=3 ;; esac
    for ((w = 0; w < warmups; w++)); do
      printf 'warm-up %-6s %-8s %d/%d\n' "$app" "$p" "$((w + 1))" "$warmups"
      run_app "$app" "$p" >"$out/last.log" 2>&1 || { cat "$out/last.log"; echo "warm-up $app under $p failed"; exit 1; }
    done
  done
done
for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < ${#policies[@]}; i++)); do
    p=${policies[$(((i + r) % ${#policies[@]}))]}
    for app in grn kmeans; do
      printf 'round %d/%d %-6s %-8s ' "$((r + 1))" "$rounds" "$app" "$p"
      run_app "$app" "$p" "$runs" >"$out/last.log" 2>&1 || { cat "$out/last.log"; exit 1; }
      tail -1 "$runs" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print("%.3f s" % r["makespan_s"])'
    done
  done
done
fi

python3 - "$runs" "$out/summary.txt" "$out/summary.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
lines = ["%-7s %-8s %5s %10s %10s %10s %9s %7s  %s" % ("app", "policy", "runs", "median_s", "min_s", "max_s",
                                                      "vs dmda", "OpenCL", "result")]
def opencl_share(r):
    total = sum(w["elements"] for w in r["workers"]) or 1
    return sum(w["elements"] for w in r["workers"] if w["type"] == "OpenCL") / total
with open(sys.argv[3], "w") as js:
    for app in ("grn", "kmeans"):
        mine = [r for r in rows if r["app"] == app]
        by = {}
        for r in mine:
            by.setdefault(r["policy"], []).append(r)
        ref = statistics.median(r["makespan_s"] for r in by["dmda"]) if "dmda" in by else None
        for p, rs in by.items():
            ms = [r["makespan_s"] for r in rs]
            med = statistics.median(ms)
            ratio = med / ref if ref else float("nan")
            if app == "grn":
                result = "precision %.3f recall %.3f" % (min(r["edge_precision"] for r in rs), min(r["edge_recall"] for r in rs))
            else:
                inertia = [r["inertia"] for r in mine]
                spread = (max(inertia) - min(inertia)) / min(inertia)
                result = "inertia %.9g (all runs within %.1e)" % (statistics.median(r["inertia"] for r in rs), spread)
            share = statistics.median(opencl_share(r) for r in rs)
            lines.append("%-7s %-8s %5d %10.3f %10.3f %10.3f %9.3f %6.0f%%  %s" % (app, p, len(rs), med, min(ms), max(ms),
                                                                                 ratio, 100 * share, result))
            js.write(json.dumps({"app": app, "policy": p, "runs": len(rs), "median_s": med, "min_s": min(ms),
                                 "max_s": max(ms), "median_over_dmda": ratio, "opencl_share": share}) + "\n")
lines.append("(vs dmda: median makespan / dmda's median for the same app; below 1 is faster."
             " OpenCL: median share of the elements the OpenCL worker processed)")
text = "\n".join(lines)
print(text)
open(sys.argv[2], "w").write(text + "\n")
PY

# Median makespan per policy, min-max as error bars, one panel per app.
if command -v gnuplot >/dev/null; then
  python3 - "$out/summary.jsonl" "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for app in ("grn", "kmeans"):
    with open("%s/%s.dat" % (sys.argv[2], app), "w") as f:
        for r in rows:
            if r["app"] == app:
                f.write("%s %.4f %.4f %.4f\n" % (r["policy"], r["median_s"], r["min_s"], r["max_s"]))
PY
  gnuplot <<GP
set terminal pngcairo size 1000,450 noenhanced
set output "$out/apps_policies.png"
set multiplot layout 1,2 title "grn and kmeans on 1 CPU + 1 OpenCL worker: median makespan, min-max bars"
set style fill solid 0.6 border -1
set boxwidth 0.6
set yrange [0:*]
set ylabel "makespan (s)"
set xtics rotate by -30
set title "grn ($grn_genes genes, k = 2)"
plot "$out/grn.dat" using 0:2:xtic(1) with boxes notitle, '' using 0:2:3:4 with yerrorbars pt 0 lc rgb "black" notitle
set title "kmeans ($km_n points, $km_iters iterations)"
plot "$out/kmeans.dat" using 0:2:xtic(1) with boxes notitle, '' using 0:2:3:4 with yerrorbars pt 0 lc rgb "black" notitle
unset multiplot
GP
  echo "plot: $out/apps_policies.png"
fi
echo "results: $out/"
