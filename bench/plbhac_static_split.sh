#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the real CPU + OpenCL node can reach with two workers at work together, against the
# sum of their standalone throughputs (the node limit of plbhac_node_limit.sh): every job
# split once between the two workers, one block each, at fixed CPU fractions swept around
# the split the standalone throughputs give, interleaved with plb-hac and each worker alone.
# The best fraction's median makespan is what a plan with perfect knowledge of the node
# under load (interference of the two workers, serial work between jobs) reaches; plb-hac
# learns its split as it runs.
#
# The fixed splits run under STARPU_SCHED=hepopta with HETPU_TRADEOFF=time and a profile
# written for the purpose: linear times whose time-optimal split of a job gives the CPU
# worker the fraction f (t_cpu = (1 - f) x, t_opencl = f x), so the exact planner hands each
# worker its share as one block. The profile has a point at every multiple of the app's
# step, so every split in steps is a candidate.
#   bench/plbhac_static_split.sh BUILD_DIR [OUT_DIR]
# Environment: ROUNDS (3), APPS ("kmeans grn mm3072"; mm4096 too), SPAN (0.10: fractions
# from f* - SPAN to f* + SPAN), STEP (0.02), GRN_GENES (250), KM_N (500000), KM_ITERS (20).
set -euo pipefail
build=${1:?usage: plbhac_static_split.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/plbhac_static_split}
rounds=${ROUNDS:-3}
apps=(${APPS:-kmeans grn mm3072})
span=${SPAN:-0.10}
fstep=${STEP:-0.02}
. "$top/bench/real_node_apps.sh"
[ "$node_gpu" = opencl ] || { echo "$(basename "$0"): the CPU + OpenCL node only (NODE_GPU=opencl)" >&2; exit 2; }
for app in "${apps[@]}"; do real_node_cmd "$app"; done
mkdir -p "$out"
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-bench.XXXXXX")
export STARPU_HOME HETPU_HOME=$STARPU_HOME/hetpu-home HETPU_LEDGER=$STARPU_HOME/ledger.sqlite HETPU_FRONT_CACHE=0
mkdir -p "$HETPU_HOME/profiles"
trap 'rm -rf "$STARPU_HOME"' EXIT

# The job name (profile file), job size in elements and profile step of each app.
job_of() {
  case "$1" in
    kmeans) echo "kmeans $km_n 2500" ;;
    grn) echo "grn $((grn_genes * (grn_genes - 1) / 2)) 125" ;;  # k = 2 subsets of the other genes
    mm3072) echo "matmul 3072 32" ;;
    mm4096) echo "matmul 4096 32" ;;
  esac
}

write_profile() {  # app fraction
  read -r job n step <<<"$(job_of "$1")"
  python3 - "$n" "$step" "$2" "$HETPU_HOME/profiles/$job.csv" <<'PY'
import sys
n, step, f, path = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
with open(path, "w") as o:
    o.write("processor,size,time_s,energy_j\n")
    for proc, rate in (("cpu0", 1 - f), ("opencl0", f)):
        for s in range(step, n - n % step + 1, step):
            o.write(f"{proc},{s},{s * rate * 1e-6:.12g},{s * rate * 1e-5:.12g}\n")
PY
}

run() {  # app config [json]; config: plb-hac, cpu-alone, opencl-alone or split=F
  local app=$1 config=$2 json=${3:+--json $3} sched=$2 ncpu=1 nocl=1
  case "$config" in
    cpu-alone) sched=eager nocl=0 ;;
    opencl-alone) sched=eager ncpu=0 ;;
    split=*) sched=hepopta; write_profile "$app" "${config#split=}" ;;
  esac
  export STARPU_NCPU=$ncpu STARPU_NOPENCL=$nocl STARPU_SCHED=$sched HETPU_TRADEOFF=time
  real_node_cmd "$app" || return 1
  "${app_cmd[@]}" $json
}

makespan() {  # app config [runs file] -> seconds (appends the run to the runs file, runs.jsonl by default)
  run "$1" "$2" "$out/one.json" >"$out/last.log" 2>&1 || { cat "$out/last.log" >&2; echo "$1 under $2 failed" >&2; exit 1; }
  if grep -q "falling back" "$out/last.log"; then cat "$out/last.log" >&2; echo "$1 under $2: no fixed split" >&2; exit 1; fi
  python3 - "$out/one.json" "$1" "$2" "${3:-$out/runs.jsonl}" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
r["bench_app"], r["config"] = sys.argv[2], sys.argv[3]
open(sys.argv[4], "a").write(json.dumps(r) + "\n")
print("%.3f" % r["makespan_s"])
PY
  rm -f "$out/one.json"
}
warm() { makespan "$1" "$2" "$out/warmup.jsonl"; }

: >"$out/runs.jsonl"
: >"$out/warmup.jsonl"
for app in "${apps[@]}"; do
  echo "== $app: warm-up (PoCL builds its kernels, plb-hac trains and saves its models)"
  for c in cpu-alone opencl-alone plb-hac; do warm "$app" "$c" >/dev/null; done
  cpu=$(warm "$app" cpu-alone) ocl=$(warm "$app" opencl-alone)
  fractions=$(python3 -c "
c, o, span, step = $cpu, $ocl, $span, $fstep
f = (1 / c) / (1 / c + 1 / o)
k = round(span / step)
print(' '.join('%.3f' % min(0.995, max(0.005, f + i * step)) for i in range(-k, k + 1)))")
  echo "   standalone CPU $cpu s, OpenCL $ocl s: CPU fractions $fractions"
  configs=(plb-hac cpu-alone opencl-alone)
  for f in $fractions; do configs+=("split=$f"); done
  for ((r = 0; r < rounds; r++)); do
    for ((i = 0; i < ${#configs[@]}; i++)); do
      c=${configs[$(((i + r) % ${#configs[@]}))]}
      printf 'round %d/%d %-7s %-13s %s s\n' "$((r + 1))" "$rounds" "$app" "$c" "$(makespan "$app" "$c")"
    done
  done
done

PYTHONPATH="$top/bench" python3 - "$out/runs.jsonl" "$out/summary.txt" <<'PY'
import json, statistics as st, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
lines = []
from real_node_verified import verified as ok
for app in dict.fromkeys(r["bench_app"] for r in rows):
    mine = [r for r in rows if r["bench_app"] == app]
    by = {}
    for r in mine:
        by.setdefault(r["config"], []).append(r)
    med = {c: st.median(x["makespan_s"] for x in rs) for c, rs in by.items()}
    limit = 1.0 / (1.0 / med["cpu-alone"] + 1.0 / med["opencl-alone"])
    splits = sorted((c for c in med if c.startswith("split=")), key=lambda c: float(c[6:]))
    best = min(splits, key=lambda c: med[c])
    lines.append(f"== {app}: node limit {limit:.3f} s (CPU alone {med['cpu-alone']:.3f} s, OpenCL alone "
                 f"{med['opencl-alone']:.3f} s); best fixed split {best[6:]} of the CPU: {med[best]:.3f} s "
                 f"({limit / med[best]:.3f} of the limit)")
    lines.append("%-13s %4s %9s %9s %9s %9s %9s %s" % ("config", "runs", "median_s", "min_s", "max_s", "vs_limit",
                 "vs_best", "verified"))
    for c in ["plb-hac"] + splits + ["cpu-alone", "opencl-alone"]:
        ms = [x["makespan_s"] for x in by[c]]
        lines.append("%-13s %4d %9.3f %9.3f %9.3f %9.3f %9.3f %s" % (c, len(ms), med[c], min(ms), max(ms),
                     limit / med[c], med[c] / med[best], all(ok(x) for x in by[c])))
    lines.append("")
lines.append("vs_limit: node-limit makespan / median (1.0 = the sum of the standalone throughputs); "
             "vs_best: median / the best fixed split's median (plb-hac above 1 is slower than the best split)")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY

# One PNG per app: median makespan of each fixed split (min-max bars) against the CPU
# fraction, with plb-hac's median and the node limit as lines.
if command -v gnuplot >/dev/null; then
  python3 - "$out/runs.jsonl" "$out" <<'PY'
import json, statistics as st, sys, os
rows = [json.loads(l) for l in open(sys.argv[1])]
out = sys.argv[2]
for app in dict.fromkeys(r["bench_app"] for r in rows):
    by = {}
    for r in rows:
        if r["bench_app"] == app:
            by.setdefault(r["config"], []).append(r["makespan_s"])
    med = {c: st.median(v) for c, v in by.items()}
    limit = 1.0 / (1.0 / med["cpu-alone"] + 1.0 / med["opencl-alone"])
    with open(os.path.join(out, f"{app}_splits.dat"), "w") as o:
        for c in sorted((c for c in by if c.startswith("split=")), key=lambda c: float(c[6:])):
            o.write(f"{c[6:]} {med[c]!r} {min(by[c])!r} {max(by[c])!r}\n")
    with open(os.path.join(out, f"{app}_splits.gp"), "w") as o:
        o.write(f"""set terminal pngcairo size 800,500
set output '{out}/{app}_splits.png'
set title '{app}: one block per worker per job at a fixed CPU fraction (median, min-max)'
set xlabel 'fraction of each job on the CPU worker'
set ylabel 'makespan (s)'
set key top center
plot '{out}/{app}_splits.dat' using 1:2:3:4 with yerrorlines title 'fixed split', \\
     {med['plb-hac']!r} with lines dashtype 2 title 'plb-hac (median)', \\
     {limit!r} with lines dashtype 3 title 'node limit (sum of standalone throughputs)'
""")
PY
  for gp in "$out"/*_splits.gp; do gnuplot "$gp" && echo "plot: ${gp%.gp}.png"; done
fi
