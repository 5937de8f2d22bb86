#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Start-up time of whole `hetpu` processes: `hetpu version`, `hetpu pareto` on
# a tiny profile (2 processors, 10 points: start-up only) and on p=8, m=500 at half the
# capacity (the largest case of bench/pareto_speed). Each program is run RUNS times per command,
# interleaved with the others so that a loaded machine slows them alike; prints the
# median and the best wall time (perf_counter around a subprocess, fork/exec included).
# Usage: python3 bench/hetpu_startup.py [--runs N] HETPU [HETPU ...]
#   e.g.  python3 bench/hetpu_startup.py _build/tools/hetpu /tmp/old/hetpu
# Run installed or .libs/ binaries, not libtool's wrappers (a bash script per start).
import argparse, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
from random_profile import write_profile as profile  # noqa: E402 (next to this script)

ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=50)
ap.add_argument("programs", nargs="+")
args = ap.parse_args()

tmp = tempfile.mkdtemp()


small, big = os.path.join(tmp, "small.csv"), os.path.join(tmp, "big.csv")
small_n = profile(small, 2, 10, 1) // 2
big_n = profile(big, 8, 500, 7) // 2
commands = {
    "version": ["version"],
    "pareto p=2 m=10": ["pareto", "--profiles", small, "--workload", str(small_n), "--format", "json"],
    "pareto p=8 m=500": ["pareto", "--profiles", big, "--workload", str(big_n), "--format", "json"],
}
times = {(prog, name): [] for prog in args.programs for name in commands}
for _ in range(args.runs):
    for name, argv in commands.items():
        for prog in args.programs:
            t0 = time.perf_counter()
            subprocess.run([prog] + argv, stdout=subprocess.DEVNULL, check=True)
            times[(prog, name)].append(time.perf_counter() - t0)
print("%-18s %-40s %9s %9s" % ("command", "program", "median_ms", "best_ms"))
for name in commands:
    for prog in args.programs:
        t = times[(prog, name)]
        print("%-18s %-40s %9.1f %9.1f" % (name, prog[-40:], 1e3 * statistics.median(t), 1e3 * min(t)))
