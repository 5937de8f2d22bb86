#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""PLB-HAC on machines nobody tuned it for: random `hetpu sim` scenarios.

Each scenario (deterministic per number) draws 1-16 units (CPU, GPU or Phi class) with
time curves that may carry a fixed cost per block, an occupancy ramp (cheaper per element
on larger blocks), or a convex part past a memory size (dearer per element on larger
blocks); transfer costs; 0-10% timing noise; sometimes a slowdown or a speed-up during the
run; granules of 1-256; x_init from one granule up; jobs of about 0.5 s to 200 s, and a few
of only a handful of granules. Every scenario runs under plb-hac, hdss and greedy (SEEDS
seeds each) and the static optimum; each run is stopped after TIMEOUT seconds.

The static optimum (one block per unit, noise and slowdowns left out) is not a bound where
a unit is convex or speeds up, so the table also compares plb-hac with the better of hdss
and greedy. Flagged: errors, timeouts, and plb-hac more than 2% behind that baseline.

Usage: bench/plbhac_random_sim.py BUILD_DIR [OUT_DIR]
       (COUNT=40 FIRST=0 SEEDS=2 TIMEOUT=300 JOBS=nproc in the environment)
Writes OUT_DIR/scenarios/*.json, OUT_DIR/runs.jsonl and OUT_DIR/summary.txt.
"""
import concurrent.futures as cf
import json
import os
import random
import subprocess
import sys


def curve(kind, per_element, rng):
    """Profile points (elements, seconds) from 64 to 2^27, non-decreasing in time."""
    fixed = rng.choice([0, 0, 1e-3, 0.01, 0.05, 0.2]) if kind != "cpu" else rng.choice([0, 0, 1e-4, 1e-3])
    ramp = rng.choice([1, 256, 4096, 65536, 1 << 20]) if kind != "cpu" else rng.choice([1, 64, 1024])
    ramp_cost = rng.uniform(0.5, 3)
    convex_from = rng.choice([None, None, None, 1 << 18, 1 << 22]) if kind != "cpu" else None
    points, x = [], 64
    while x <= 1 << 27:
        t = fixed + per_element * x * (1 + ramp / (x + ramp) * ramp_cost if ramp > 1 else 1)
        if convex_from and x > convex_from:
            t *= (x / convex_from) ** 0.3
        points.append([x, t])
        x *= 2
    for i in range(1, len(points)):
        points[i][1] = max(points[i][1], points[i - 1][1] * 1.0001)
    return points


def scenario(number):
    rng = random.Random(number)
    n = rng.choice([1, 2, 2, 3, 4, 6, 8, 12, 16])
    units = []
    for i in range(n):
        kind = rng.choice(["cpu", "gpu", "gpu", "phi"])
        per_element = rng.uniform(1e-6, 1e-4) * (1 if kind == "cpu" else rng.choice([0.02, 0.1, 0.5, 1, 2]))
        u = {
            "name": f"u{i}.{kind}",
            "class": kind,
            "profile": curve(kind, per_element, rng),
            "transfer": [0, 0] if kind == "cpu" else [rng.choice([0, 1e-4, 5e-3]), rng.choice([0, 1e-8, 1e-7, 1e-6])],
            "noise": rng.choice([0, 0.01, 0.03, 0.05, 0.1]),
        }
        if rng.random() < 0.15:
            u["slowdown"] = [[rng.uniform(0.5, 20), rng.choice([0.5, 2, 4])]]
        units.append(u)
    granule = rng.choice([1, 16, 64, 256])
    x_init = granule * rng.choice([1, 4, 16, 64])
    rate = sum(u["profile"][10][0] / u["profile"][10][1] for u in units)
    workload = max(granule, int(rate * rng.choice([0.5, 2, 10, 50, 200])) // granule * granule)
    if rng.random() < 0.1:
        workload = granule * rng.randint(1, n * 3)
    return {"workload": workload, "granule": granule, "x_init": min(x_init, workload), "units": units}


def run(hetpu, path, policy, seed, timeout):
    cmd = [hetpu, "sim", "--scenario", path, "--policy", policy, "--seed", str(seed), "--json"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {timeout} s"}
    if p.returncode != 0:
        return {"error": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
    return json.loads(p.stdout)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    hetpu = os.path.join(os.path.abspath(sys.argv[1]), "tools", "hetpu")
    if not os.access(hetpu, os.X_OK):
        sys.exit(f"plbhac_random_sim.py: no {hetpu} (build it: make -C {sys.argv[1]} tools/hetpu)")
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(top, "results", "bench", "plbhac_random_sim")
    # Planning time is charged and is wall time: OpenBLAS's threads, spinning for ~0.1 s
    # after it loads, would share a core with the planner (see bench/plbhac_sim.sh).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    count, first = int(os.environ.get("COUNT", 40)), int(os.environ.get("FIRST", 0))
    seeds, timeout = int(os.environ.get("SEEDS", 2)), float(os.environ.get("TIMEOUT", 300))
    jobs = int(os.environ.get("JOBS", os.cpu_count() or 2))
    os.makedirs(os.path.join(out, "scenarios"), exist_ok=True)
    paths = {}
    for k in range(first, first + count):
        paths[k] = os.path.join(out, "scenarios", f"random{k:04d}.json")
        with open(paths[k], "w") as f:
            json.dump(scenario(k), f)
    todo = [(k, "optimum", 1) for k in paths]
    todo += [(k, p, s) for k in paths for p in ("plb-hac", "hdss", "greedy") for s in range(1, seeds + 1)]
    results, done = {}, 0
    with cf.ThreadPoolExecutor(jobs) as ex, open(os.path.join(out, "runs.jsonl"), "w") as log:
        futures = {ex.submit(run, hetpu, paths[k], p, s, timeout): (k, p, s) for k, p, s in todo}
        for f in cf.as_completed(futures):
            k, p, s = futures[f]
            results[(k, p, s)] = r = f.result()
            log.write(json.dumps({"scenario": k, "policy": p, "seed": s, **r}) + "\n")
            done += 1
            if done % 20 == 0 or done == len(todo):
                print(f"[{done}/{len(todo)} runs]", file=sys.stderr, flush=True)
    lines = ["scenario   units  optimum_s  plb-hac  hdss    greedy  (mean makespan / optimum)  plb-hac / best baseline"]
    flagged = 0
    for k in paths:
        runs = {p: [results[(k, p, s)] for s in range(1, seeds + 1)] for p in ("plb-hac", "hdss", "greedy")}
        opt = results[(k, "optimum", 1)]
        errors = [f"{p}: {r['error']}" for p, rs in runs.items() for r in rs if "error" in r]
        if "error" in opt:
            errors.append(f"optimum: {opt['error']}")
        name = f"random{k:04d}"
        if errors:
            flagged += 1
            lines.append(f"{name}  FLAGGED " + "; ".join(errors))
            continue
        mean = {p: sum(r["makespan_s"] for r in rs) / seeds for p, rs in runs.items()}
        base = min(mean["hdss"], mean["greedy"])
        behind = mean["plb-hac"] / base
        flag = "  FLAGGED" if behind > 1.02 else ""
        flagged += bool(flag)
        units = len(scenario(k)["units"])
        lines.append(f"{name}  {units:5d}  {opt['makespan_s']:9.3f}  {mean['plb-hac'] / opt['makespan_s']:7.3f}  "
                     f"{mean['hdss'] / opt['makespan_s']:6.3f}  {mean['greedy'] / opt['makespan_s']:6.3f}"
                     f"{'':28s}{behind:6.3f}{flag}")
    lines.append(f"{flagged} of {count} scenarios flagged (an error, a timeout, or plb-hac > 1.02x the better of hdss and greedy)")
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
