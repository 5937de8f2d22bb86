#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the GPU-node simulation testbed (`hetpu sim` scenarios) into OUT_DIR: the three
apps' block costs as the H100 and H200 nodes' traces showed them (bench/README.md, "GPU
nodes"), on nodes of 1 or 4 GPUs beside 8-64 CPU workers, at job lengths of about 0.1 s,
1 s, 10 s and 100 s at the static optimum.

Per app (seconds per element, per-block fixed cost; from gen_scenarios.py's wide node):
  matmul (columns of 32, n = 4096 rows): CPU 2.75e-3 s per column + 0.1 ms, GPU 1.6e-5 + 0.5 ms,
    transfers 0.2 ms + 2e-6 s per column;
  kmeans (points, 8 dims, 16 clusters): CPU 2.2e-7 + 0.02 ms, GPU 8e-9 + 0.3 ms, transfers
    1 ms + 8e-9 s per point;
  grn (subsets, 600 genes): CPU 1.15e-4 + 0.02 ms, GPU 6.7e-7 + 0.4 ms, transfers 0.2 ms.
What the traces showed beyond the profiled times is added to every scenario: a GPU block
starts no sooner than 6.5 ms after it is handed out, a CPU block 0.5 ms ("unseen"); CPU
blocks scatter by 20%, GPU blocks by 2%; one GPU block in 500 stalls 0.25 s.

Usage: gen_gpu_nodes.py OUT_DIR   (prints the scenario names, one per line)
"""
import json
import os
import sys

LENGTHS = {"100ms": 0.1, "1s": 1.0, "10s": 10.0, "100s": 100.0}
SHAPES = [(8, 1), (16, 1), (64, 1), (8, 4), (16, 4), (64, 4)]  # (CPU workers, GPUs)

APPS = {
    # granule, CPU (s/elem, s/block), GPU (s/elem, s/block), GPU transfer (s/block, s/elem)
    "mm": (32, (2.75e-3, 1e-4), (1.6e-5, 5e-4), (2e-4, 2e-6)),
    "kmeans": (64, (2.2e-7, 2e-5), (8e-9, 3e-4), (1e-3, 8e-9)),
    "grn": (1, (1.15e-4, 2e-5), (6.7e-7, 4e-4), (2e-4, 1e-9)),
}


def profile(per_elem, fixed, granule, largest):
    sizes, x = [], granule
    while x < largest:
        sizes.append(x)
        x *= 2
    sizes.append(largest)
    return [[s, round(per_elem * s + fixed, 12)] for s in sizes]


def units_for(app, cpus, gpus, largest):
    granule, cpu, gpu, transfer = APPS[app]
    units = [{"name": f"A.cpu{i}", "profile": profile(cpu[0], cpu[1], granule, largest), "transfer": [0.0, 0.0],
              "noise": 0.2, "unseen": 0.0005} for i in range(cpus)]
    units += [{"name": f"A.gpu{i}", "profile": profile(gpu[0], gpu[1], granule, largest), "transfer": list(transfer),
               "noise": 0.02, "unseen": 0.0065, "stall": [0.002, 0.25]} for i in range(gpus)]
    return units


def workload_for(app, cpus, gpus, target_s):
    """The workload whose static optimum takes target_s: every profile is linear, so a unit
    finishing at T takes (T - fixed) / per-element elements."""
    granule, cpu, gpu, transfer = APPS[app]
    w = cpus * max(0.0, (target_s - cpu[1]) / cpu[0])
    w += gpus * max(0.0, (target_s - gpu[1] - transfer[0]) / (gpu[0] + transfer[1]))
    return max(granule, int(w) // granule * granule)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for app in APPS:
        granule = APPS[app][0]
        for cpus, gpus in SHAPES:
            for length, target in LENGTHS.items():
                w = workload_for(app, cpus, gpus, target)
                units = units_for(app, cpus, gpus, w)
                n = len(units)
                name = f"gpunode_{app}_c{cpus}g{gpus}_{length}"
                scenario = {"workload": w, "granule": granule,
                            "x_init": max(granule, w // (32 * n) // granule * granule), "units": units}
                with open(os.path.join(out, name + ".json"), "w") as f:
                    json.dump(scenario, f)
                print(name)


if __name__ == "__main__":
    main()
