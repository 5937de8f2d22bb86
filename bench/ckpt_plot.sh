#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Plots bench/ckpt_rtm's JSON lines: restore throughput per order and mode (grouped bars).
#   bash bench/ckpt_plot.sh results/bench/ckpt_rtm.jsonl [OUT.png]
set -euo pipefail
in=${1:?usage: ckpt_plot.sh CKPT_RTM_JSONL [OUT_PNG]}
out=${2:-${in%.jsonl}_restore.png}
command -v gnuplot >/dev/null || { echo "ckpt_plot.sh: gnuplot not found, no plot" >&2; exit 0; }
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
python3 - "$in" >"$dat" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if r.get("kind") == "restore"]
modes = []
for r in rows:
    m = r["policy"] + "/" + r["hints"]
    if m not in modes: modes.append(m)
print("order " + " ".join(modes))
for order in ["reverse", "sequential", "irregular"]:
    vals = {r["policy"] + "/" + r["hints"]: r["restore_GBps"] for r in rows if r["order"] == order}
    print(order + " " + " ".join("%.3f" % vals.get(m, 0) for m in modes))
PY
ncol=$(head -1 "$dat" | wc -w)
gnuplot <<GP
set terminal pngcairo size 900,450 font ",11" noenhanced
set output "$out"
set title "Restore throughput, host cache = 25% of the checkpoints (bench/ckpt_rtm)"
set style data histogram; set style histogram cluster gap 1; set style fill solid 0.8 border -1
set ylabel "GB/s of application wait"; set yrange [0:*]; set grid ytics
set key top left autotitle columnhead
plot for [c=2:$ncol] "$dat" u c:xtic(1)
GP
echo "plot: $out"
