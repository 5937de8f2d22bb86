#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Whole `hetpu pareto` processes, as a user runs them: one random profile CSV with
# p processors of m noisy, non-monotone points (sizes drawn from 1..2m, t = a x (0.6..1.4),
# e = b x (0.6..1.4), a and b spread 1:8, fixed seed), workloads at 20, 40, 60, 80 and 100%
# of the capacity (the sum of the largest sizes), best wall time of 3 runs each.
# Usage: bash bench/pareto_cli_speed.sh BUILD_DIR [P] [M] [OBJECTIVE]   (default _build 8 500 dynamic)
set -euo pipefail
build=${1:-_build}; p=${2:-8}; m=${3:-500}; objective=${4:-dynamic}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
capacity=$(python3 "$(dirname "$0")/random_profile.py" "$dir/profile.csv" "$p" "$m" 7)
printf '%-5s %7s %10s\n' load n best_s
for pct in 20 40 60 80 100; do
  n=$((capacity * pct / 100))
  best=
  for _ in 1 2 3; do
    /usr/bin/time -o "$dir/time" -f %e "$build/tools/hetpu" pareto --profiles "$dir/profile.csv" --workload "$n" \
      --objective "$objective" --base-power 50 --format json >/dev/null
    s=$(cat "$dir/time")
    best=$(python3 -c "import sys; print(min(float(v) for v in sys.argv[1:]))" $best $s)
  done
  printf '%-5s %7d %10s\n' "$pct%" "$n" "$best"
done
