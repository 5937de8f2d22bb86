#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""How far the makespan lower bound is from the best schedule found on small mixes.

    small_exact.py HETPU OUT_DIR [--mixes 10] [--colocation mps]

Each mix (small_mix() below: 4-8 jobs, 2 devices, one worker per job so that the queue
order never binds) is run under mgb, and under mgb with every job pinned to one device, for
every one of the 2^n pinnings (the scenario's per-job "devices"). The best pinned makespan is
a schedule the simulated node can run, so the optimum lies between the bound and it:
bound <= optimum <= best pinned. Printed per mix: bound, best pinned, mgb, and the ratios:
best pinned / bound is the most the bound can be below the optimum, mgb / best pinned at
least how far mgb is from it. (Pinning fixes devices, not the order within a device: the
optimum may be below the best pinning.) Writes OUT_DIR/small_exact.md.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hetpu")
    ap.add_argument("out")
    ap.add_argument("--mixes", type=int, default=10)
    ap.add_argument("--colocation", default="mps")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lines = ["| mix | devices | jobs | bound s | best pinned s | mgb s | mgb / bound | best pinned / bound | "
             "mgb / best pinned |", "|---|---|---|---|---|---|---|---|---|"]
    for i in range(args.mixes):
        mix = small_mix(i)
        path = os.path.join(args.out, "small%02d.json" % i)
        with open(path, "w") as f:
            json.dump(mix, f)
        mgb = sim(args.hetpu, path, "mgb", args.colocation)
        bound = mgb["lower_bound_s"]
        best = None
        n = len(mix["jobs"])
        pinned_path = os.path.join(args.out, "pinned.json")
        for pins in range(1 << n):
            pinned = copy.deepcopy(mix)
            for j, job in enumerate(pinned["jobs"]):
                job["devices"] = [(pins >> j) & 1]
            with open(pinned_path, "w") as f:
                json.dump(pinned, f)
            r = sim(args.hetpu, pinned_path, "mgb", args.colocation)
            if r["jobs_completed"] == n and (best is None or r["makespan_s"] < best):
                best = r["makespan_s"]
        best = min(best, mgb["makespan_s"]) if best is not None else mgb["makespan_s"]
        lines.append("| %d | %s | %d | %.1f | %.1f | %.1f | %.3f | %.3f | %.3f |" % (
            i, "+".join(g["preset"] for g in mix["gpus"]), n, bound, best, mgb["makespan_s"],
            mgb["makespan_s"] / bound, best / bound, mgb["makespan_s"] / best))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "small_exact.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
