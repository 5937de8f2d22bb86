#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Jobs that arrive over time: mean turnaround of mgb against sa and a lower bound.

    arrivals.py HETPU OUT_DIR [--seeds 3] [--jobs 64] [--colocation mps,time-sliced]

Each scenario is W1-W8's job shapes (gen_workloads.py's SMALL and LARGE pools, half each, at
30% GPU-busy) on 4xV100 with 16 workers, the jobs arriving as a Poisson process at a load of
50%, 80% or 95%: the arrival rate is load x 4 devices / the mean time a job holds its device
alone (its kernels and the host work between them), so that at 100% one job per device (sa)
would just keep up on average. Jobs are drawn and timed with
Python's random.Random(seed), the same on every run.

Reported per load and co-location model, as a ratio of means over the seeds: mgb's mean
turnaround (end - arrival of completed jobs) over sa's, and over the turnaround lower bound
(every job at least its standalone time after it arrives: the mean standalone time), with
the jobs each policy crashed or rejected. Writes OUT_DIR/arrivals.jsonl and
OUT_DIR/arrivals.md.
"""
import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import gen_workloads as gw  # noqa: E402 (next to this script, not installed)
from small_exact import sim  # noqa: E402 (one mgb-sim run, JSON, rejections allowed)

LOADS = [0.5, 0.8, 0.95]
DEVICES = 4


def device_s(job):
    return sum(k.get("repeat", 1) * (k["seconds"] + k.get("host_seconds", 0)) for k in job["kernels"])


def standalone_s(job):
    return job.get("cpu_seconds", 0) + device_s(job)


def scenario(seed, load, njobs):
    rng = random.Random(seed)
    small = [gw.with_gpu_busy(e, 0.3) for e in gw.SMALL]
    large = [gw.with_gpu_busy(e, 0.3) for e in gw.LARGE]
    jobs = [gw.job(rng.choice(small if rng.random() < 0.5 else large), 1.0) for _ in range(njobs)]
    mean = sum(standalone_s(j) for j in jobs) / len(jobs)
    rate = load * DEVICES / (sum(device_s(j) for j in jobs) / len(jobs))
    t = 0.0
    for j in jobs:
        j["arrive_s"] = round(t, 6)
        t += rng.expovariate(rate)
    return {"comment": "bench/mgb/arrivals.py seed %d load %.2f" % (seed, load),
            "gpus": [{"preset": "V100", "count": DEVICES}], "workers": 16, "jobs": jobs}, mean


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hetpu")
    ap.add_argument("out")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=64)
    ap.add_argument("--colocation", default="mps,time-sliced")
    args = ap.parse_args()
    if args.seeds < 1 or args.jobs < 1:
        ap.error("--seeds and --jobs must be 1 or more")
    models = [m for m in args.colocation.split(",") if m]
    os.makedirs(os.path.join(args.out, "scenarios"), exist_ok=True)
    lines = ["| load | co-location | mgb / sa (turnaround) | mgb / bound | sa / bound | crashed, rejected (mgb; sa) |",
             "|---|---|---|---|---|---|"]
    with open(os.path.join(args.out, "arrivals.jsonl"), "w") as log:
        for load in LOADS:
            paths = []
            for seed in range(1, args.seeds + 1):
                s, mean = scenario(seed, load, args.jobs)
                path = os.path.join(args.out, "scenarios", "load%02d-seed%d.json" % (round(load * 100), seed))
                with open(path, "w") as f:
                    json.dump(s, f, indent=1)
                paths.append((path, mean))
            for model in models:
                sums = {"mgb": 0.0, "sa": 0.0}
                faults = {"mgb": [0, 0], "sa": [0, 0]}
                bound = 0.0
                for path, mean in paths:
                    bound += mean
                    for p in sums:
                        r = sim(args.hetpu, path, p, model)
                        log.write(json.dumps(dict(r, load=load)) + "\n")
                        sums[p] += r["mean_turnaround_s"]
                        faults[p][0] += r["jobs_crashed"]
                        faults[p][1] += r["jobs_rejected"]
                lines.append("| %d%% | %s | %.3f | %.3f | %.3f | %d, %d; %d, %d |" % (
                    round(load * 100), model, sums["mgb"] / sums["sa"], sums["mgb"] / bound, sums["sa"] / bound,
                    *faults["mgb"], *faults["sa"]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "arrivals.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
