#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""How far the makespan lower bound is from the best schedule found on small mixes.

    small_exact.py HETPU OUT_DIR [--mixes 10] [--colocation mps,time-sliced]

Each mix (small_mix() below: 4-8 jobs, 2 devices, one worker per job so that the queue
order never binds) is run under mgb, and under mgb with every job pinned to one device, for
every one of the 2^n pinnings (the scenario's per-job "devices"). The best pinned makespan is
a schedule the simulated node can run, so the optimum lies between the bound and it:
bound <= optimum <= best pinned. Printed per mix: bound, best pinned, mgb, and the ratios:
best pinned / bound is the most the bound can be below the optimum, mgb / best pinned at
least how far mgb is from it (sa's too). (Pinning fixes devices, not the order within a
device: the optimum may be below the best pinning.) Each co-location model in turn; the last
rows: the arithmetic mean over the mixes of mgb / best pinned and sa / best pinned. Writes
OUT_DIR/small_exact.md.
"""
import argparse
import copy
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import gen_workloads as gw  # noqa: E402

PRESET_GIB = {"P100": 16, "V100": 16, "A100": 40, "H100": 80}


def small_mix(index):
    """Seeded (random.Random(2000 + index)): two devices, each a P100, V100, A100 or H100; 4-8
    jobs from gen_workloads.py's SMALL (45%) and LARGE pools, a LARGE shape with its memory
    redrawn between 18 GiB and 90% of the larger device in 15% of draws (when that device
    has more than 18 GiB); one GPU-busy share per mix (tabled, 20%, 30% or 50%)."""
    rng = random.Random(2000 + index)
    kinds = [rng.choice(sorted(PRESET_GIB)) for _ in range(2)]
    largest = max(PRESET_GIB[k] for k in kinds)
    busy = rng.choice([None, 0.2, 0.3, 0.5])
    jobs = gw.random_jobs(rng, largest, busy, rng.randint(4, 8))
    return {"comment": "bench/mgb/small_exact.py small_mix(%d)" % index, "gpus": [{"preset": k} for k in kinds],
            "workers": len(jobs), "noise": 0.0, "jobs": jobs}


def sim(hetpu, path, policy, colocation):
    out = subprocess.run([hetpu, "mgb-sim", "--scenario", path, "--policy", policy, "--colocation", colocation,
                          "--json", "--allow-rejected"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def best_pinned(hetpu, mix, out, colocation):
    """The shortest makespan over every pinning of the mix's jobs to its two devices."""
    best = None
    n = len(mix["jobs"])
    pinned_path = os.path.join(out, "pinned.json")
    for pins in range(1 << n):
        pinned = copy.deepcopy(mix)
        for j, job in enumerate(pinned["jobs"]):
            job["devices"] = [(pins >> j) & 1]
        with open(pinned_path, "w") as f:
            json.dump(pinned, f)
        r = sim(hetpu, pinned_path, "mgb", colocation)
        if r["jobs_completed"] == n and (best is None or r["makespan_s"] < best):
            best = r["makespan_s"]
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hetpu")
    ap.add_argument("out")
    ap.add_argument("--mixes", type=int, default=10)
    ap.add_argument("--colocation", default="mps,time-sliced", help="models, separated by commas")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    models = args.colocation.split(",")
    lines = ["| mix | devices | jobs | co-location | bound s | best pinned s | mgb s | mgb / bound | "
             "best pinned / bound | mgb / best pinned | sa / best pinned |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios = {m: [] for m in models}
    sa_ratios = {m: [] for m in models}
    for i in range(args.mixes):
        mix = small_mix(i)
        path = os.path.join(args.out, "small%02d.json" % i)
        with open(path, "w") as f:
            json.dump(mix, f)
        for model in models:
            mgb = sim(args.hetpu, path, "mgb", model)
            sa = sim(args.hetpu, path, "sa", model)
            bound = mgb["lower_bound_s"]
            best = best_pinned(args.hetpu, mix, args.out, model)
            # mgb's and sa's own runs are schedules too.
            best = min(x for x in (best, mgb["makespan_s"], sa["makespan_s"]) if x is not None)
            ratios[model].append(mgb["makespan_s"] / best)
            sa_ratios[model].append(sa["makespan_s"] / best)
            lines.append("| %d | %s | %d | %s | %.1f | %.1f | %.1f | %.3f | %.3f | %.3f | %.3f |" % (
                i, "+".join(g["preset"] for g in mix["gpus"]), len(mix["jobs"]), model, bound, best,
                mgb["makespan_s"], mgb["makespan_s"] / bound, best / bound, ratios[model][-1], sa_ratios[model][-1]))
    for model in models:
        lines.append("| mean | | | %s | | | | | | %.3f | %.3f |" % (
            model, sum(ratios[model]) / len(ratios[model]), sum(sa_ratios[model]) / len(sa_ratios[model])))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "small_exact.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
