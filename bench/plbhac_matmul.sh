#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# PLB-HAC on the real CPU + OpenCL node (StarPU, PoCL): matmul under plb-hac, dmda, dmdas,
# eager, greedy and hdss, interleaved so machine noise hits every policy alike; median and
# spread per policy and the ratio of medians to dmda. Then an adaptability run: a
# competing CPU load starts mid-run on one worker's core (LOAD_CORE) and the block-size plot
# shows plb-hac shrinking that PU's blocks.
#   bench/plbhac_matmul.sh BUILD_DIR [OUT_DIR]     (N, ROUNDS, POLICIES, ADAPT_N override;
#   ADAPT_ONLY=1 runs only the adaptability part)
set -euo pipefail
build=${1:?usage: plbhac_matmul.sh BUILD_DIR [OUT_DIR]}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/results/bench/plbhac_matmul}
n=${N:-4096}
rounds=${ROUNDS:-5}
policies=(${POLICIES:-plb-hac dmda dmdas eager greedy hdss})
adapt_n=${ADAPT_N:-8192}
# Core the competing load runs on: 0 slows the CPU worker, 1 the OpenCL worker (PoCL's
# thread). The CPU worker does ~90% of the work, so slowing it 2x moves the balanced split
# by only ~8%; slowing the OpenCL worker halves its share, a change Fig. 6 can show.
load_core=${LOAD_CORE:-1}
matmul=$build/apps/matmul/hetpu-matmul
mkdir -p "$out"
export STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_SILENT=1
export POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
# Pin the CPU worker to core 0 (the OpenCL worker's driver to core 1) so the competing
# load of the adaptability run knows where to go.
export STARPU_WORKERS_CPUID="0 1"
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-bench.XXXXXX")
export STARPU_HOME
load_pid=
cleanup() { [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null; rm -rf "$STARPU_HOME"; }
trap cleanup EXIT

if [ "${ADAPT_ONLY:-0}" != 1 ]; then
runs=$out/runs.jsonl
: >"$runs"
echo "== matmul n=$n double on 1 CPU + 1 OpenCL worker: ${policies[*]}, $rounds interleaved rounds"
# Discarded runs first: PoCL compiles CLBlast's kernels, and dmda/dmdas calibrate their
# history models (in this STARPU_HOME; StarPU wants 10 samples per size and worker type,
# so they get three warm-up runs) so their timed runs are their calibrated best.
for p in "${policies[@]}"; do
  warmups=1
  case "$p" in dm*) warmups=3 ;; esac
  for ((w = 0; w < warmups; w++)); do
    printf 'warm-up %-8s %d/%d\n' "$p" "$((w + 1))" "$warmups"
    STARPU_SCHED=$p "$matmul" -n "$n" --verify >/dev/null 2>&1 || { echo "warm-up under $p failed"; exit 1; }
  done
done
for ((r = 0; r < rounds; r++)); do
  # Rotate the order each round so no policy always runs right after the same one.
  for ((i = 0; i < ${#policies[@]}; i++)); do
    p=${policies[$(((i + r) % ${#policies[@]}))]}
    printf 'round %d/%d %-8s ' "$((r + 1))" "$rounds" "$p"
    STARPU_SCHED=$p "$matmul" -n "$n" --verify --json "$runs" >"$out/last.log" 2>&1 || { cat "$out/last.log"; exit 1; }
    tail -1 "$runs" | python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print("%.3f s %s" % (r["makespan_s"], "verified" if r["verified"] else "WRONG"))'
  done
done

python3 - "$runs" "$out/summary.txt" "$out/summary.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["policy"], []).append(r)
ref = statistics.median(r["makespan_s"] for r in by["dmda"]) if "dmda" in by else None
lines = ["%-8s %5s %10s %10s %10s %9s %12s %9s" % ("policy", "runs", "median_s", "min_s", "max_s", "GFLOP/s", "vs dmda", "verified")]
with open(sys.argv[3], "w") as js:
    for p, rs in by.items():
        ms = [r["makespan_s"] for r in rs]
        med = statistics.median(ms)
        ratio = med / ref if ref else float("nan")
        ok = all(r["verified"] for r in rs)
        gf = statistics.median(r["gflops"] for r in rs)
        lines.append("%-8s %5d %10.3f %10.3f %10.3f %9.2f %12.3f %9s" % (p, len(rs), med, min(ms), max(ms), gf, ratio, ok))
        js.write(json.dumps({"policy": p, "runs": len(rs), "median_s": med, "min_s": min(ms), "max_s": max(ms),
                             "median_gflops": gf, "median_over_dmda": ratio, "all_verified": ok}) + "\n")
lines.append("(vs dmda: median makespan / dmda's median makespan; below 1 is faster)")
text = "\n".join(lines)
print(text)
open(sys.argv[2], "w").write(text + "\n")
PY

fi

echo
echo "== adaptability: plb-hac, matmul n=$adapt_n; a competing load starts on core $load_core mid-run"
trace=$out/adapt_trace.jsonl
rm -f "$trace"
HETPU_TRACE=$trace STARPU_SCHED=plb-hac "$matmul" -n "$adapt_n" --verify --json "$out/adapt_run.jsonl" >"$out/adapt.log" 2>&1 &
app=$!
# Start the load once the execution phase has run a few blocks; its start time, in the
# trace's clock, is taken from the last block completed before it.
while kill -0 "$app" 2>/dev/null; do
  if [ -f "$trace" ] && [ "$(grep -c -E '"phase":"(execution|tail)"' "$trace" || true)" -ge 4 ]; then break; fi
  sleep 0.05
done
kill -0 "$app" 2>/dev/null || { echo "the run ended before its execution phase; use a larger ADAPT_N"; exit 1; }
load_at=$(tail -1 "$trace" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["time_s"])')
taskset -c "$load_core" sh -c 'while :; do :; done' &
load_pid=$!
echo "competing load started at t=${load_at}s on core $load_core"
wait "$app"
kill "$load_pid" 2>/dev/null || true
load_pid=
grep -q "verified: yes" "$out/adapt.log" || { cat "$out/adapt.log"; echo "adaptability run not verified"; exit 1; }
python3 - "$trace" "$load_at" "$out/adapt_summary.txt" <<'PY'
import json, sys
trace = [json.loads(l) for l in open(sys.argv[1])]
load_at = float(sys.argv[2])
out = []
for w in sorted({t["worker_name"] for t in trace}):
    mine = [t for t in trace if t["worker_name"] == w and t["phase"] in ("execution", "tail", "gap")]
    before = [t["size"] for t in mine if t["time_s"] <= load_at]
    after = [t["size"] for t in mine if t["time_s"] > load_at and t["phase"] in ("execution", "tail")]
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
    out.append("%-20s execution blocks before load: mean %.0f cols (%d blocks); after (execution + tail): mean %.0f cols (%d blocks)"
               % (w[:20], mean(before), len(before), mean(after), len(after)))
# Each PU's share of a virtual step (its block / all blocks of that step): the tail shrinks
# every block of a step alike, so the share shows the rebalancing alone.
steps = {}
for t in trace:
    if t["phase"] in ("execution", "tail") and t["step"] > 0:
        steps.setdefault(t["step"], {})[t["worker_name"]] = (t["size"], t["time_s"])
out.append("share of each virtual step (completion time of the PU's block in brackets):")
for k in sorted(steps):
    blocks = steps[k]
    if len(blocks) < 2:
        continue
    total = sum(sz for sz, _ in blocks.values())
    out.append("  step %2d: " % k + ", ".join("%s %.1f%% (%.1f s)" % (w[:10], 100.0 * sz / total, ts)
                                             for w, (sz, ts) in sorted(blocks.items())))
text = "\n".join(out)
print(text)
open(sys.argv[3], "w").write(text + "\n")
PY
if command -v gnuplot >/dev/null; then
  python3 - "$trace" "$out" <<'PY'
import json, sys
trace = [json.loads(l) for l in open(sys.argv[1])]
names = sorted({t["worker_name"] for t in trace})
for i, w in enumerate(names):
    with open("%s/adapt_pu%d.dat" % (sys.argv[2], i), "w") as f:
        f.write("# %s\n" % w)
        for t in trace:
            if t["worker_name"] == w:
                f.write("%.4f %d\n" % (t["time_s"], t["size"]))
PY
  gnuplot <<GP
set terminal pngcairo size 900,480 noenhanced
set output "$out/adapt_block_sizes.png"
set title "plb-hac on 1 CPU + 1 OpenCL worker: block size over time (matmul n=$adapt_n)"
set xlabel "time since the run started (s)"
set ylabel "block size (columns)"
set key outside below horizontal
set arrow from $load_at, graph 0 to $load_at, graph 1 nohead dashtype 2 lc rgb "red"
set label "competing CPU load starts" at $load_at, graph 0.95 offset 0.5,0 tc rgb "red"
plot "$out/adapt_pu0.dat" using 1:2 with linespoints pt 7 title "$(head -1 "$out/adapt_pu0.dat" | cut -c3-)", \
     "$out/adapt_pu1.dat" using 1:2 with linespoints pt 5 title "$(head -1 "$out/adapt_pu1.dat" | cut -c3-)"
GP
  echo "plot: $out/adapt_block_sizes.png"
fi
echo "results: $out/"
