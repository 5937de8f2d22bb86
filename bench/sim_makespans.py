#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every bench scenario x seeds 1-3 x plb-hac, hdss, greedy (x_init blocks) and the optimum in
# `hetpu sim` with planning time not charged (deterministic): one line "scenario policy seed
# makespan_repr blocks" each. Run it before and after a refactoring of a planner and diff the
# two outputs: an empty diff proves the plans bit-identical.
#   python3 bench/sim_makespans.py _build/tools/hetpu bench/scenarios > before.txt   (JOBS=2)
# POLICIES="plb-hac optimum" restricts the policies; SUMMARY=1 ends with the mean of
# plb-hac / optimum over the scenarios (each the mean over seeds), and the worst.
import glob
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

if len(sys.argv) != 3:
    sys.exit("usage: sim_makespans.py HETPU_BINARY SCENARIO_DIR")
hetpu, folder = sys.argv[1], sys.argv[2]
env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
jobs = []
for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
    name = os.path.basename(path)[:-5]
    x_init = json.load(open(path))["x_init"]
    for policy in os.environ.get("POLICIES", "plb-hac hdss greedy optimum").split():
        for seed in [1, 2, 3]:
            extra = ["--block", str(x_init)] if policy == "greedy" else []
            cmd = [hetpu, "sim", "--scenario", path, "--policy", policy, "--seed", str(seed), "--no-planning-time",
                   "--json"] + extra
            jobs.append((name, policy, seed, cmd))


def run(job):
    name, policy, seed, cmd = job
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return "%s %s %d ERROR %s" % (name, policy, seed, out.stderr.strip()[:200])
    r = json.loads(out.stdout)
    return "%s %s %d %r %d" % (name, policy, seed, r["makespan_s"], r["blocks"])


lines = []
with ThreadPoolExecutor(int(os.environ.get("JOBS", "2"))) as pool:
    for line in pool.map(run, jobs):
        print(line, flush=True)
        lines.append(line.split())
if os.environ.get("SUMMARY") == "1":
    runs = {}
    for name, policy, seed, makespan, *_ in lines:
        if makespan != "ERROR":
            runs.setdefault((name, policy), []).append(float(makespan))
    ratios = {n: sum(runs[(n, "plb-hac")]) / sum(runs[(n, "optimum")]) for n, p in runs
              if p == "plb-hac" and (n, "optimum") in runs}
    worst = max(ratios, key=ratios.get)
    print("mean plb-hac / optimum over %d scenarios: %.3f (worst %s %.3f)" %
          (len(ratios), sum(ratios.values()) / len(ratios), worst, ratios[worst]))
