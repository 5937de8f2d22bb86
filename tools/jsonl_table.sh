#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Summarize app result files (JSON lines, one object per run) as a table: per policy,
# the best run (smallest makespan), its GFLOP/s, verification, and how the columns were
# shared among worker types.
#   jsonl_table.sh FILE.jsonl          human table
#   jsonl_table.sh --data FILE.jsonl   whitespace table for gnuplot
set -euo pipefail
mode=table
if [ "${1:-}" = "--data" ]; then mode=data; shift; fi
file=${1:?usage: jsonl_table.sh [--data] FILE.jsonl}
[ -s "$file" ] || { echo "jsonl_table: $file is missing or empty" >&2; exit 1; }

awk -v mode="$mode" '
function field(s, name,    m) {
  if (match(s, "\"" name "\":(\"[^\"]*\"|[^,}\\]]*)")) {
    m = substr(s, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
    gsub(/"/, "", m); return m
  }
  return ""
}
{
  line = $0
  p = field(line, "policy")
  ms = field(line, "makespan_s") + 0
  if (!(p in best) || ms < best[p]) {
    best[p] = ms; gf[p] = field(line, "gflops"); ver[p] = field(line, "verified")
    # Per worker type: blocks and elements, summed over workers of that type.
    cpu_b[p] = cpu_e[p] = acc_b[p] = acc_e[p] = 0
    rest = line; sub(/.*"workers":\[/, "", rest)
    n = split(rest, ws, /\},?/)
    for (i = 1; i <= n; i++) {
      t = field(ws[i], "type"); if (t == "") continue
      if (t == "CPU") { cpu_b[p] += field(ws[i], "blocks"); cpu_e[p] += field(ws[i], "elements") }
      else { acc_b[p] += field(ws[i], "blocks"); acc_e[p] += field(ws[i], "elements") }
    }
    if (!(p in seen)) { order[++np] = p; seen[p] = 1 }
  }
  runs[p]++
}
END {
  if (mode == "table") {
    printf "%-10s %5s %12s %9s %18s %18s %9s\n", "policy", "runs", "makespan_s", "GFLOP/s", "CPU blocks/cols", "accel blocks/cols", "verified"
    for (i = 1; i <= np; i++) {
      p = order[i]
      printf "%-10s %5d %12.4f %9.2f %18s %18s %9s\n", p, runs[p], best[p], gf[p], cpu_b[p] "/" cpu_e[p], acc_b[p] "/" acc_e[p], ver[p]
    }
  } else {
    print "# policy makespan_s gflops cpu_share_percent"
    for (i = 1; i <= np; i++) {
      p = order[i]; tot = cpu_e[p] + acc_e[p]
      printf "%s %.6f %.3f %.1f\n", p, best[p], gf[p], tot ? 100 * cpu_e[p] / tot : 0
    }
  }
}' "$file"
