#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""MGB and its baselines as multiples of the makespan lower bound.

    bound_eval.py HETPU OUT_DIR [--mixes 50] [--colocation mps,time-sliced]

Runs `hetpu mgb-sim` on every scenario of these families and reports, per family and
co-location model, the mean and largest makespan / lower bound (`lower_bound_s`, see
tools/mgb_sim/makespan_bound.h) of mgb, mgb-exact, sa, CG and schedGPU. A run that crashed or
rejected a job did less work than the others and is left out of its policy's mean and
largest; beside them, how many mixes that left out and the jobs crashed and rejected:

  W-tabled    W1-W8 (gen_workloads.py, generator seed 1) on 4xV100 (16 workers) and 2xP100
              (10 workers), the shapes as tabled (15-76% GPU-busy)
  W-busy0.3   the same mixes rescaled to 30% GPU-busy (gen_workloads.py --gpu-busy 0.3)
  NN          the four neural-network mixes (8 identical jobs) on 4xV100
  random      --mixes random mixes from random_mix() below (documented, deterministic)

CG runs at its default ratio (jobs per device: the workers over the devices, the paper's
"cores per GPU"), the one a user gets; its crashes are what that ratio costs.

Writes OUT_DIR/scenarios/*.json, OUT_DIR/bound_eval.jsonl (every run) and
OUT_DIR/bound_eval.md (the table, also printed).
"""
import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import gen_workloads as gw  # noqa: E402 (next to this script, not installed)

POLICIES = ["mgb", "mgb-exact", "sa", "cg", "schedgpu"]
PRESET_GIB = {"P100": 16, "V100": 16, "A100": 40, "H100": 80}


def random_mix(index):
    """Mix number `index`: a seeded draw, the same on every run and platform (Python's
    random.Random with seed 1000 + index).

    Devices: every fifth mix (index % 5 == 0) is 2xA100 + 2xV100; the others draw 2-8
    devices, each a P100, V100, A100 or H100. Workers: 4 per device (the paper's 16 for 4
    GPUs). Jobs: 16-32, each drawn from gen_workloads.py's SMALL pool (45%), its LARGE pool
    (40%), or (15%) a LARGE shape whose memory is redrawn between 18 GiB and 90% of the
    largest device, so that it fits only the devices with more than 16 GiB (when the node
    has none, a LARGE job instead). GPU-busy share: one per mix, the tabled shapes or 20%,
    30% or 50% (gen_workloads.with_gpu_busy). Kernel seconds are V100 times on every device:
    the simulator gives a kernel one standalone time (it models SMs and memory, not clocks).
    """
    rng = random.Random(1000 + index)
    if index % 5 == 0:
        kinds = ["A100", "A100", "V100", "V100"]
    else:
        kinds = [rng.choice(["P100", "V100", "A100", "H100"]) for _ in range(rng.randint(2, 8))]
    largest = max(PRESET_GIB[k] for k in kinds)
    busy = rng.choice([None, 0.2, 0.3, 0.5])
    small = [gw.with_gpu_busy(e, busy) if busy else e for e in gw.SMALL]
    large = [gw.with_gpu_busy(e, busy) if busy else e for e in gw.LARGE]
    jobs = []
    for _ in range(rng.randint(16, 32)):
        u = rng.random()
        if u < 0.45:
            entry = rng.choice(small)
        else:
            entry = rng.choice(large)
            if u >= 0.85 and largest > 18:
                name, _, cpu, kernels = entry
                entry = (name + "-xl", round(rng.uniform(18, 0.9 * largest), 2), cpu, kernels)
        jobs.append(gw.job(entry, 1.0))
    gpus = [{"preset": k} for k in kinds]
    return {"comment": "bench/mgb/bound_eval.py random_mix(%d), gpu-busy %s" % (index, busy), "gpus": gpus,
            "workers": 4 * len(kinds), "noise": 0.05, "jobs": jobs}


def generate(out):
    """(family, scenario path) for every scenario, written under out/scenarios."""
    sdir = os.path.join(out, "scenarios")
    os.makedirs(sdir, exist_ok=True)
    found = []
    for platform, gpu, count, workers in [("4xV100", "V100", 4, 16), ("2xP100", "P100", 2, 10)]:
        for family, extra in [("W-tabled", []), ("W-busy0.3", ["--gpu-busy", "0.3"])]:
            d = os.path.join(sdir, "%s-%s" % (family, platform))
            subprocess.run([sys.executable, os.path.join(HERE, "gen_workloads.py"), "--gpu", gpu, "--count", str(count),
                            "--workers", str(workers), "--seed", "1", "--out", d] + extra, check=True)
            found += [(family, os.path.join(d, "W%d.json" % w)) for w in range(1, 9)]
    d = os.path.join(sdir, "NN-4xV100")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_workloads.py"), "--nn", "--out", d], check=True)
    found += [("NN", os.path.join(d, "nn-%s.json" % k)) for k in sorted(gw.NN)]
    return found


def add_random(out, mixes, found):
    sdir = os.path.join(out, "scenarios", "random")
    os.makedirs(sdir, exist_ok=True)
    for i in range(mixes):
        path = os.path.join(sdir, "mix%02d.json" % i)
        with open(path, "w") as f:
            json.dump(random_mix(i), f, indent=1)
        found.append(("random", path))


def sim(hetpu, scenario, policy, colocation):
    cmd = [hetpu, "mgb-sim", "--scenario", scenario, "--policy", policy, "--colocation", colocation, "--json",
           "--allow-rejected"]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def evaluate(hetpu, found, models, log):
    """{(family, model): {policy: [(ratio, crashed, rejected)]}}."""
    table = {}
    for family, path in found:
        for model in models:
            row = table.setdefault((family, model), {})
            for p in POLICIES:
                r = sim(hetpu, path, p, model)
                log.write(json.dumps(dict(r, family=family)) + "\n")
                row.setdefault(p, []).append((r["makespan_over_bound"], r["jobs_crashed"], r["jobs_rejected"]))
    return table


def cell(runs):
    """Mean / max over the runs that completed every job; the others beside."""
    whole = [x[0] for x in runs if x[1] == 0 and x[2] == 0]
    text = "%.3f / %.3f" % (sum(whole) / len(whole), max(whole)) if whole else "-"
    left = len(runs) - len(whole)
    if left:
        crashed, rejected = sum(x[1] for x in runs), sum(x[2] for x in runs)
        what = ", ".join(w for w in ("%d crashed" % crashed if crashed else "", "%d rejected" % rejected if rejected else "") if w)
        text += " (%d mixes out: %s)" % (left, what)
    return text


def render(table, models):
    cols = POLICIES
    lines = ["| family | co-location | mixes | " + " | ".join("%s mean / max" % c for c in cols) + " |",
             "|---|---|---|" + "---|" * len(cols)]
    families = []
    for family, _ in table:
        if family not in families:
            families.append(family)
    for family in families + ["all"]:
        for model in models:
            if family == "all":
                rows = [table[(f, model)] for f in families]
                merged = {c: sum((r[c] for r in rows), []) for c in cols}
            else:
                merged = table[(family, model)]
            n = len(merged["mgb"])
            lines.append("| %s | %s | %d | %s |" % (family, model, n, " | ".join(cell(merged[c]) for c in cols)))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hetpu")
    ap.add_argument("out")
    ap.add_argument("--mixes", type=int, default=50, help="random mixes (default 50)")
    ap.add_argument("--colocation", default="mps,time-sliced", help="models to run, comma-separated")
    args = ap.parse_args()
    if args.mixes < 0:
        ap.error("--mixes must be 0 or more")
    models = [m for m in args.colocation.split(",") if m]
    os.makedirs(args.out, exist_ok=True)
    found = generate(args.out)
    add_random(args.out, args.mixes, found)
    with open(os.path.join(args.out, "bound_eval.jsonl"), "w") as log:
        table = evaluate(args.hetpu, found, models, log)
    text = render(table, models)
    with open(os.path.join(args.out, "bound_eval.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
