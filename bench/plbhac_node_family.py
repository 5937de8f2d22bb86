#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""PLB-HAC on few-PU nodes the bench scenarios do not hold: a generalisation check.

`bench/scenarios/node_*` fixed one set of few-PU nodes (1 CPU + 1 GPU r = 2-50 times
faster, two GPUs whose advantage grows with the block size, 1 CPU + 2 GPUs, 2 equal PUs)
and two job lengths. This script writes the same kinds of node with other parameters and
other lengths, made by the same generator (`bench/scenarios/gen_scenarios.py`), and runs
them: 1 CPU + 1 GPU r = 3, 7, 15, 35 times faster; a GPU whose advantage grows to r = 5,
10, 35, 100 (slower than the CPU on the paper's x_init, so the ratio seen in training is
wrong by up to an order of magnitude); 1 CPU + 2 unequal GPUs (5x and 20x); 2 CPUs + 1 GPU
(8x); 3 PUs of equal speed; 1 CPU + a growing GPU (30x) + a plain one (10x). Each node at
jobs of 2 s, 10 s and 40 s at the optimum: 36 scenarios.

Each scenario runs under plb-hac (cold, planning time not charged: `--no-planning-time`),
hdss and greedy, SEEDS seeds each, and the static optimum (one block per PU, noise-free).
The ramp bound (`bench/plbhac_ramp_bound.py`, trust 4) is what any policy that grows a
PU's blocks at most 4x at a time from x_init must lose to the ramp alone. Flagged, as in
the targets of bench/plbhac_sim.sh: plb-hac more than 5% off the optimum, or more than 2% behind the better
of hdss and greedy.

Usage: bench/plbhac_node_family.py BUILD_DIR OUT_DIR   (SEEDS=5 JOBS=nproc in the environment)
Writes OUT_DIR/scenarios/*.json, OUT_DIR/runs.jsonl (one JSON object per scenario) and
prints the table (~1 min on 2 cores with 5 seeds).
"""
import concurrent.futures as cf
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "scenarios"))
sys.path.insert(0, HERE)
import gen_scenarios as gen  # noqa: E402  the bench scenarios' own generator
from plbhac_ramp_bound import ramp_bound  # noqa: E402

LENGTHS = {"s2": 2.0, "s10": 10.0, "l40": 40.0}


def nodes():
    """(name, units(workload), number of PUs, x_init or None for the planner's default)."""
    cpu, gpu, grow = gen.node_cpu, gen.node_gpu, gen.node_grow_gpu
    for r in (3, 7, 15, 35):
        yield f"r{r}", lambda w, r=r: [cpu(), gpu("A.gpu0", r)], 2, None
    for r in (5, 10, 35, 100):
        yield f"grow{r}", lambda w, r=r: [cpu(), grow("A.gpu0", r)], 2, gen.X_INIT
    yield "cpu2gpu_5_20", lambda w: [cpu(), gpu("A.gpu0", 5), gpu("A.gpu1", 20)], 3, None
    yield "cpu2_gpu8", lambda w: [cpu("A.cpu0"), cpu("A.cpu1"), gpu("A.gpu0", 8)], 3, None
    yield "equal3", lambda w: [cpu(), gpu("A.gpu0", 1), gpu("A.gpu1", 1)], 3, None
    yield "cpu_grow30_gpu10", lambda w: [cpu(), grow("A.gpu0", 30), gpu("A.gpu1", 10)], 3, gen.X_INIT


def write_scenarios(directory):
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, make_units, n_units, x_init in nodes():
        for length, target in LENGTHS.items():
            w = gen.node_workload(make_units, target)
            scenario = {"workload": w, "granule": gen.GRANULE, "x_init": x_init or gen.node_x_init(w, n_units),
                        "units": make_units(w)}
            path = os.path.join(directory, f"{name}_{length}.json")
            with open(path, "w") as f:
                json.dump(scenario, f)
            paths.append(path)
    return paths


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench/plbhac_node_family.py BUILD_DIR OUT_DIR")
    build, out = sys.argv[1:]
    hetpu = os.path.join(build, "tools", "hetpu")
    if not os.access(hetpu, os.X_OK):
        sys.exit(f"{hetpu} not found: build first (make -C {build} tools/hetpu)")
    try:
        seeds = int(os.environ.get("SEEDS", "5"))
        jobs = int(os.environ.get("JOBS", str(os.cpu_count() or 1)))
    except ValueError:
        sys.exit("SEEDS and JOBS must be whole numbers")
    if seeds < 1 or jobs < 1:
        sys.exit("SEEDS and JOBS must be at least 1")
    paths = write_scenarios(os.path.join(out, "scenarios"))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")

    def run(path, policy, seed):
        cmd = [hetpu, "sim", "--scenario", path, "--policy", policy, "--seed", str(seed), "--json"]
        if policy == "plb-hac":
            cmd.append("--no-planning-time")
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
        return json.loads(done.stdout)["makespan_s"]

    policies = ("plb-hac", "hdss", "greedy")
    with cf.ThreadPoolExecutor(jobs) as pool:
        futures = {}
        for path in paths:
            futures[(path, "optimum", 1)] = pool.submit(run, path, "optimum", 1)
            for policy in policies:
                for seed in range(1, seeds + 1):
                    futures[(path, policy, seed)] = pool.submit(run, path, policy, seed)
        print(f"{'scenario':24s} {'plb-hac':>8s} {'sd':>6s} {'hdss':>7s} {'greedy':>7s} {'ramp4':>6s}  targets")
        flagged, logs = 0, []
        with open(os.path.join(out, "runs.jsonl"), "w") as runs:
            for done, path in enumerate(paths, 1):
                name = os.path.splitext(os.path.basename(path))[0]
                optimum = futures[(path, "optimum", 1)].result()
                ratios = {p: [futures[(path, p, s)].result() / optimum for s in range(1, seeds + 1)] for p in policies}
                mean = {p: sum(r) / len(r) for p, r in ratios.items()}
                sd = math.sqrt(sum((r - mean["plb-hac"]) ** 2 for r in ratios["plb-hac"]) / max(1, seeds - 1))
                with open(path) as f:
                    bound = ramp_bound(json.load(f), 4.0) / optimum
                targets = []
                if mean["plb-hac"] > 1.05:
                    targets.append(">5% off the optimum")
                if mean["plb-hac"] > 1.02 * min(mean["hdss"], mean["greedy"]):
                    targets.append(">2% behind hdss or greedy")
                flagged += bool(targets)
                logs.append(math.log(mean["plb-hac"]))
                runs.write(json.dumps({"scenario": name, "optimum_s": optimum, "over_optimum": ratios,
                                       "ramp_bound_trust4": bound}) + "\n")
                print(f"{name:24s} {mean['plb-hac']:8.3f} {sd:6.3f} {mean['hdss']:7.3f} {mean['greedy']:7.3f} "
                      f"{bound:6.3f}  {', '.join(targets) or 'ok'}", flush=True)
                print(f"[{done}/{len(paths)}]", file=sys.stderr, flush=True)
    print(f"{flagged} of {len(paths)} flagged; plb-hac / optimum geometric mean "
          f"{math.exp(sum(logs) / len(logs)):.4f} ({seeds} seeds)")


if __name__ == "__main__":
    main()
