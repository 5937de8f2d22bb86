#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""W1-W8 job mixes of the MGB paper (C. Chen, C. Porter, S. Pande, "Effective GPU Sharing
Under Compiler Guidance", Table I) as `hetpu mgb-sim` scenarios, and the neural-network
workloads of its Section V-E.

    gen_workloads.py --gpu V100 --count 4 --workers 16 --seed 1 --out DIR

writes DIR/W1.json .. DIR/W8.json (16 and 32 jobs; 1:1, 2:1, 3:1, 5:1 large:small), the jobs
drawn at random (seeded) from the pools below; `--nn` writes DIR/nn-{predict,generate,train,
detect}.json instead (8 identical jobs each). The shapes are Rodinia-like, not measured:
see bench/README.md ("MGB: GPU packing"). Kernel seconds are
standalone times on a V100; on a P100 they are 1.5x longer (fewer SMs, lower clock and
bandwidth), on an H100 0.5x. Host seconds do not change with the GPU.

    gen_workloads.py --gpu-busy 0.3 ...

rescales every W1-W8 job so that its kernels take fraction 0.3 of its standalone run time
(host + kernels) on a V100: the job's host work (cpu_seconds and every host_seconds) is
multiplied by one factor per job, its kernels are left as they are. Jobs busier than the
fraction get more host work, jobs less busy get less, so every job ends up at the fraction
exactly. Without the option the shapes are the tables' own (from 15% to 76% GPU-busy).
The fraction is defined on V100 kernel times so that host seconds stay the same on every
GPU: on a P100 the same job is busier (0.3 on a V100 is 0.39 on a P100), on an H100 less.
The neural-network workloads are never rescaled.
"""
import argparse
import json
import os
import random

# name, memory GiB, cpu_seconds (host work before the GPU part: input generation or
# reading, setup), kernels: (blocks, threads per block, seconds, host seconds after each
# launch, launches). A "kernel" with many launches stands for an iteration loop.
SMALL = [  # 1-4 GiB: all benchmarks but lavaMD
    ("backprop-s", 1.5, 4.0, [(65536, 256, 0.6, 2.5, 1), (65536, 256, 0.8, 1.5, 1)]),
    ("srad_v1-s", 2.0, 3.0, [(16384, 512, 0.06, 0.02, 200)]),
    ("srad_v2-s", 3.0, 2.5, [(65536, 256, 0.09, 0.03, 150)]),
    ("needle-s", 1.2, 6.0, [(512, 16, 0.012, 0.004, 1000)]),
    ("dwt2d-s", 1.8, 5.0, [(4096, 192, 0.25, 0.8, 8)]),
    ("bfs-s", 2.5, 9.0, [(8192, 512, 0.04, 0.05, 60)]),
    ("bfs-m", 3.8, 14.0, [(16384, 512, 0.07, 0.08, 80)]),
]
LARGE = [  # over 4 GiB: all benchmarks but bfs; the largest a ~13 GB lavaMD
    ("lavaMD-a", 12.5, 6.0, [(1000000, 128, 28.0, 3.0, 1)]),
    ("lavaMD-b", 7.5, 4.0, [(512000, 128, 16.0, 2.0, 1)]),
    ("lavaMD-c", 5.0, 3.0, [(343000, 128, 11.0, 1.5, 1)]),
    ("backprop-l", 6.0, 14.0, [(262144, 256, 2.2, 9.0, 1), (262144, 256, 3.0, 6.0, 1)]),
    ("backprop-xl", 9.0, 20.0, [(393216, 256, 3.3, 13.0, 1), (393216, 256, 4.5, 9.0, 1)]),
    ("srad_v1-l", 6.5, 8.0, [(65536, 512, 0.2, 0.05, 200)]),
    ("srad_v2-l", 10.0, 7.0, [(262144, 256, 0.3, 0.08, 150)]),
    ("needle-l", 4.8, 16.0, [(1024, 16, 0.03, 0.008, 1000)]),
    ("needle-xl", 8.5, 28.0, [(1024, 16, 0.05, 0.012, 1200)]),
    ("dwt2d-l", 5.5, 12.0, [(16384, 192, 0.8, 2.4, 8)]),
]
# Section V-E: four kinds of neural-network jobs, 0.5-1.5 GiB each, so that 8 always fit
# one V100. Darknet-like: training a small CIFAR-10 net (device-filling conv kernels, little
# host work), ImageNet prediction (large kernels, image loading between them), RNN text
# generation (small sequential kernels), real-time detection (light kernels, mostly host
# work: the paper saw at most 25% GPU utilization).
NN = {
    "train": ("nn-train", 1.0, 2.0, [(4096, 256, 0.02, 0.004, 3000)]),
    "predict": ("nn-predict", 1.5, 3.0, [(4096, 256, 0.05, 0.04, 600)]),
    "generate": ("nn-generate", 0.8, 1.0, [(64, 256, 0.008, 0.002, 5000)]),
    "detect": ("nn-detect", 0.5, 1.0, [(2048, 256, 0.004, 0.012, 5000)]),
}
KERNEL_SCALE = {"V100": 1.0, "P100": 1.5, "A100": 0.7, "H100": 0.5}
MIXES = [(16, 1), (16, 2), (16, 3), (16, 5), (32, 1), (32, 2), (32, 3), (32, 5)]  # W1..W8


def with_gpu_busy(entry, frac):
    """The job with its host work scaled so that its kernels take fraction frac of its
    standalone run time (host + kernels) at the tables' V100 kernel times.

    One factor for all of a job's host work keeps its shape (how the host time splits between
    setup and the gaps between launches). The kernels stay as they are: their times and
    launch shapes are what the simulator's co-location model acts on.
    """
    name, gib, cpu, kernels = entry
    gpu = sum(s * r for (_, _, s, _, r) in kernels)
    host = cpu + sum(h * r for (_, _, _, h, r) in kernels)
    if gpu <= 0 or host <= 0:
        raise ValueError("%s: a job needs both kernel and host time to be rescaled" % name)
    k = gpu * (1.0 - frac) / (frac * host)  # solves gpu / (gpu + k * host) == frac
    return (name, gib, cpu * k, [(b, t, s, h * k, r) for (b, t, s, h, r) in kernels])


def gpu_busy_arg(text):
    try:
        f = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number: %r" % text)
    if not 0.0 < f < 1.0:  # 0 and 1 would need infinite host work or none at all
        raise argparse.ArgumentTypeError("must be strictly between 0 and 1, got %s" % text)
    return f


def job(entry, scale):
    # Rounded so that rescaled host times stay readable; the tabled values have fewer
    # decimals, so their scenarios are unchanged by it.
    name, gib, cpu, kernels = entry
    return {"name": name, "memory_gib": gib, "cpu_seconds": round(cpu, 6),
            "kernels": [{"blocks": b, "threads_per_block": t, "seconds": round(s * scale, 6),
                         "host_seconds": round(h, 6), "repeat": r} for (b, t, s, h, r) in kernels]}


def random_jobs(rng, largest, busy, count):
    """`count` jobs drawn by `rng`: a SMALL shape (45%) or a LARGE one, 15% of them LARGE with
    memory redrawn between 18 GiB and 90% of the `largest` device (when it has more than 18),
    every shape at the GPU-busy share `busy` (None: as tabled)."""
    small = [with_gpu_busy(e, busy) if busy else e for e in SMALL]
    large = [with_gpu_busy(e, busy) if busy else e for e in LARGE]
    jobs = []
    for _ in range(count):
        u = rng.random()
        entry = rng.choice(small) if u < 0.45 else rng.choice(large)
        if u >= 0.85 and largest > 18:
            name, _, cpu, kernels = entry
            entry = (name + "-xl", round(rng.uniform(18, 0.9 * largest), 2), cpu, kernels)
        jobs.append(job(entry, 1.0))
    return jobs


def scenario(args, jobs):
    sc = {"comment": "generated by bench/mgb/gen_workloads.py", "gpus": [{"preset": args.gpu, "count": args.count}],
          "workers": args.workers, "noise": args.noise, "jobs": jobs}
    if args.gpu_busy is not None:
        sc["comment"] += " --gpu-busy %g (V100 kernel time / standalone run time of every job)" % args.gpu_busy
    return sc


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpu", default="V100", choices=sorted(KERNEL_SCALE))
    p.add_argument("--count", type=int, default=4)
    p.add_argument("--workers", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--noise", type=float, default=0.05)
    p.add_argument("--nn", action="store_true", help="the neural-network workloads instead of W1-W8")
    p.add_argument("--gpu-busy", type=gpu_busy_arg, metavar="F",
                   help="rescale each W1-W8 job's host work so that its kernels are fraction F (0 < F < 1) "
                        "of its standalone run time on a V100; default: the shapes as tabled")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    if args.nn and args.gpu_busy is not None:
        p.error("--gpu-busy applies to the W1-W8 mixes only, not to --nn")
    os.makedirs(args.out, exist_ok=True)
    scale = KERNEL_SCALE[args.gpu]
    if args.nn:
        for kind, entry in NN.items():
            with open(os.path.join(args.out, "nn-%s.json" % kind), "w") as f:
                json.dump(scenario(args, [job(entry, scale)] * 8), f, indent=1)
        return
    large, small = LARGE, SMALL
    if args.gpu_busy is not None:
        # Rescaled before the draws, and the pools keep their order: for a given seed every
        # F draws the same jobs in the same queue order as the tabled shapes.
        large = [with_gpu_busy(e, args.gpu_busy) for e in LARGE]
        small = [with_gpu_busy(e, args.gpu_busy) for e in SMALL]
    rng = random.Random(args.seed)
    for w, (n, ratio) in enumerate(MIXES, 1):
        n_large = round(n * ratio / (ratio + 1))
        picks = [rng.choice(large) for _ in range(n_large)] + [rng.choice(small) for _ in range(n - n_large)]
        rng.shuffle(picks)  # the queue order: large and small interleaved at random
        with open(os.path.join(args.out, "W%d.json" % w), "w") as f:
            json.dump(scenario(args, [job(e, scale) for e in picks]), f, indent=1)


if __name__ == "__main__":
    main()
