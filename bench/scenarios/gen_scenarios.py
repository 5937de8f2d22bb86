#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the PLB-HAC simulation scenarios (bench/scenarios/*.json) used by
bench/plbhac_sim.sh. Run from anywhere: python3 bench/scenarios/gen_scenarios.py

The paper's Table 1 (machine configurations) is not in the seed text, so machines A-E
below are invented: plausible, deliberately heterogeneous CPU/GPU(/Xeon Phi) speeds, with
every GPU 5-20x faster than its machine's CPU. Speeds are relative to a reference CPU.

Curve shapes (Fig. 2): MM and GRN are polynomial-shaped in the block size on GPUs
(a concave quadratic occupancy ramp up to a saturation size, linear beyond; small blocks
leave the GPU under-used), milder on CPUs; K-means is linear. Per-element cost never
grows with the block size, so the simulator's optimum (one block per unit, exact at the
granule) really is the best any schedule can do without noise: a convex curve would let
small-block policies beat the "optimum" and make the ratio meaningless.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

GRANULE = 64
X_INIT = 1024  # the paper's initial block size for PLB-HAC, PLB-HeC and HDSS

# name -> list of (unit suffix, relative speed). Invented stand-in for Table 1.
MACHINES = {
    "A": [("cpu", 1.0), ("gpu0", 10.0)],
    "B": [("cpu", 1.2), ("gpu0", 8.0), ("gpu1", 8.0)],
    "C": [("cpu", 0.8), ("gpu0", 15.0)],
    "D": [("cpu", 1.0), ("gpu0", 7.0), ("gpu1", 7.0)],
    "E": [("cpu", 1.6), ("gpu0", 20.0), ("phi0", 4.0)],
}

# Per application: reference-CPU seconds per element at large blocks, the GPU/Phi speed
# multiplier (K-means gains less from GPUs than MM), the occupancy ramp per class
# (beta: extra work at the ramp's top as a multiple of x_s; x_s: saturation size), and
# the target makespan of machine A alone.
APPS = {
    "mm": {"s_per_elem": 1.0 / 1024, "accel": 1.0,
           "ramp": {"gpu": (0.25, 4096), "phi": (0.25, 4096), "cpu": (0.05, 1024)}},
    "grn": {"s_per_elem": 1.0 / 2048, "accel": 0.9,
            "ramp": {"gpu": (0.4, 8192), "phi": (0.3, 8192), "cpu": (0.1, 2048)}},
    "kmeans": {"s_per_elem": 1.0 / 4096, "accel": 0.8,
               "ramp": {"gpu": (0.0, 1), "phi": (0.0, 1), "cpu": (0.0, 1)}},
}
TARGET_A_S = 90.0  # one machine: ~90 s; five machines then take ~12 s
# The paper stresses that larger inputs are the representative ones for GPU clusters (its
# initial phase is then proportionally smaller), and reports 4,096 and 65,536 elements for
# MM. The "_large" scenarios take 5x the input: ~450 s on A alone, ~60 s on five machines.
LARGE_FACTOR = 5

# Transfer [latency_s, s_per_element] and noise per class (CPU data stays in host memory).
TRANSFER = {"gpu": (0.005, 0.05), "phi": (0.010, 0.08), "cpu": (0.0, 0.0)}  # s/elem as a fraction of compute
NOISE = {"gpu": 0.02, "phi": 0.03, "cpu": 0.03}

SIZES = [64 * 2 ** k for k in range(0, 16)]  # 64 .. 2M elements; beyond: linear extension


def unit_class(suffix):
    return suffix.rstrip("0123456789")


def work(x, beta, xs):
    """Equivalent elements of work for a block of x: a quadratic ramp up to xs, whose
    slope falls to 1 at xs (C1 join with the linear part)."""
    u = min(x / xs, 1.0)
    return x + beta * xs * (2 * u - u * u)


def unit(app, machine, suffix, speed, slowdown=None):
    a = APPS[app]
    cls = unit_class(suffix)
    s = speed * (a["accel"] if cls != "cpu" else 1.0)
    spe = a["s_per_elem"] / s  # seconds per element at full occupancy
    beta, xs = a["ramp"][cls]
    profile = [[x, round(work(x, beta, xs) * spe, 9)] for x in SIZES]
    lat, frac = TRANSFER[cls]
    u = {"name": f"{machine}.{suffix}", "profile": profile,
         "transfer": [lat, round(frac * spe, 12)], "noise": NOISE[cls]}
    if slowdown:
        u["slowdown"] = slowdown
    return u


def throughput(app, machines):
    """Elements per second of the machines at full occupancy (workload sizing only)."""
    a = APPS[app]
    total = 0.0
    for m in machines:
        for suffix, speed in MACHINES[m]:
            cls = unit_class(suffix)
            s = speed * (a["accel"] if cls != "cpu" else 1.0)
            total += s / a["s_per_elem"] / (1 + TRANSFER[cls][1])
    return total


def write(path, scenario):
    with open(path, "w") as f:
        json.dump(scenario, f, indent=None, separators=(",", ": "))
        f.write("\n")


def main():
    names = "ABCDE"
    for app in APPS:
        # Same input for 1..5 machines, as in Fig. 4: sized so machine A alone takes ~90 s.
        workload = int(throughput(app, "A") * TARGET_A_S) // GRANULE * GRANULE
        for n in range(1, 6):
            ms = names[:n]
            sc = {"workload": workload, "granule": GRANULE, "x_init": X_INIT,
                  "units": [unit(app, m, suf, sp) for m in ms for suf, sp in MACHINES[m]]}
            write(os.path.join(HERE, f"{app}_m{n}.json"), sc)
            write(os.path.join(HERE, f"{app}_m{n}_large.json"), dict(sc, workload=workload * LARGE_FACTOR))
    # Adaptability (Fig. 6): MM on A, B, C for ~100 s; from t = 40 s a competing process
    # makes A.gpu0 2.5x slower.
    ms = "ABC"
    workload = int(throughput("mm", ms) * 100.0) // GRANULE * GRANULE
    units = []
    for m in ms:
        for suf, sp in MACHINES[m]:
            slow = [[40.0, 2.5]] if f"{m}.{suf}" == "A.gpu0" else None
            units.append(unit("mm", m, suf, sp, slow))
    write(os.path.join(HERE, "adapt_mm_m3.json"),
          {"workload": workload, "granule": GRANULE, "x_init": X_INIT, "units": units})


# ---------------------------------------------------------------------------------------
# Few-PU nodes: where most StarPU users run, one node with one CPU and one or two
# GPUs. Unlike the paper-like machines above, the workload is given in elements of a fixed
# cost (a CPU does 50,000 per second) and x_init is the planner's own default
# (workload / (32 * PUs), written out so that greedy and hdss use the same first block).
#
#   node_r{2,5,10,20,50}_{short,long}  1 CPU + 1 GPU that is r times faster on large
#                                      blocks (MM-like occupancy ramp, 5 ms latency);
#   node_grow{20,50}_{short,long}      1 CPU + 1 GPU whose advantage grows with the block
#                                      size: 0.9x per element on the paper's x_init = 1024
#                                      (used here as in the paper-like scenarios), 1.5x on
#                                      4096, r on large blocks (the job has millions to
#                                      hundreds of millions of elements), so the ratio seen
#                                      in training is wrong by an order of magnitude;
#   node_cpu2gpu_r10_{short,long}      1 CPU + 2 GPUs, each 10x;
#   node_equal2_{short,long}           2 PUs of equal speed (a CPU and a GPU whose large-
#                                      block speed equals the CPU's).
# short: ~5 s at the optimum; long: ~100 s.
NODE_CPU_S = 1.0 / 50000  # seconds per element on the node's CPU
NODE_TARGETS = {"short": 5.0, "long": 100.0}


def node_cpu(name="A.cpu"):
    beta, xs = 0.05, 1024
    profile = [[x, round(work(x, beta, xs) * NODE_CPU_S, 9)] for x in SIZES_NODE]
    return {"name": name, "profile": profile, "transfer": [0.0, 0.0], "noise": NOISE["cpu"]}


def node_gpu(name, r):
    beta, xs = 0.25, 4096
    spe = NODE_CPU_S / r
    profile = [[x, round(work(x, beta, xs) * spe, 9)] for x in SIZES_NODE]
    return {"name": name, "profile": profile, "transfer": [0.005, round(0.05 * spe, 12)], "noise": NOISE["gpu"]}


def node_grow_gpu(name, r):
    """Per element, r times the CPU's speed on large blocks but 0.9x on 1,024 elements (the
    paper's x_init, used here as in the paper-like scenarios) and 1.5x on 4,096: an
    occupancy ramp (work()) with a steep beta = 12 up to 4,096 elements, then a fixed cost
    that large blocks amortise (11x at 64k, ~r from 1M on). Concave, so the static optimum
    stays exact; the fixed cost is ~1% of the short job per block."""
    beta, xs = 12.0, 4096
    spe = NODE_CPU_S / r
    profile = [[x, round(work(x, beta, xs) * spe, 9)] for x in SIZES_NODE]
    return {"name": name, "profile": profile, "transfer": [0.005, round(0.05 * spe, 12)], "noise": NOISE["gpu"]}


SIZES_NODE = [64 * 2 ** k for k in range(0, 22)]  # 64 .. 134M elements


def static_optimum(units, workload):
    """Makespan of the best static split (bisection on T over piecewise-linear profiles)."""
    def t(u, x):
        if x <= 0:
            return 0.0
        p = u["profile"]
        hi = 1
        while hi + 1 < len(p) and x > p[hi][0]:
            hi += 1
        (x0, t0), (x1, t1) = p[hi - 1], p[hi]
        lat, pe = u["transfer"]
        return t0 + (t1 - t0) * (x - x0) / (x1 - x0) + lat + pe * x

    def cap(u, T):
        lo, hi = 0.0, float(workload)
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if t(u, mid) <= T else (lo, mid)
        return lo

    lo, hi = 0.0, 1e7
    for _ in range(80):
        T = (lo + hi) / 2
        lo, hi = (lo, T) if sum(cap(u, T) for u in units) >= workload else (T, hi)
    return hi


def node_workload(make_units, target_s):
    """The workload whose static optimum takes about target_s (units may depend on it)."""
    lo, hi = 1.0, 1e10
    for _ in range(60):
        w = (lo * hi) ** 0.5
        lo, hi = (w, hi) if static_optimum(make_units(w), w) < target_s else (lo, w)
    return int(lo) // GRANULE * GRANULE


def node_x_init(workload, n_units):
    return max(GRANULE, workload // (32 * n_units) // GRANULE * GRANULE)


def write_node(name, make_units, n_units, x_init=None):
    for length, target in NODE_TARGETS.items():
        w = node_workload(make_units, target)
        write(os.path.join(HERE, f"node_{name}_{length}.json"),
              {"workload": w, "granule": GRANULE, "x_init": x_init or node_x_init(w, n_units), "units": make_units(w)})


def nodes():
    for r in (2, 5, 10, 20, 50):
        write_node(f"r{r}", lambda w, r=r: [node_cpu(), node_gpu("A.gpu0", r)], 2)
    for r in (20, 50):
        write_node(f"grow{r}", lambda w, r=r: [node_cpu(), node_grow_gpu("A.gpu0", r)], 2, X_INIT)
    write_node("cpu2gpu_r10", lambda w: [node_cpu(), node_gpu("A.gpu0", 10), node_gpu("A.gpu1", 10)], 3)
    write_node("equal2", lambda w: [node_cpu(), node_gpu("A.gpu0", 1)], 2)


# A wide node, as measured on a 16-core host with one H100 (StarPU 1.3 with CUDA, 15 CPU
# workers and the CUDA worker): one k-means pass of 2M points (8 dimensions, 16 clusters),
# the job k-means runs once per iteration. Per point a CPU worker takes 2.2e-7 s, the GPU
# 8e-9 s plus 0.3 ms per block and as much again in transfers: the whole pass is ~16 ms at
# the optimum, so the planner's own time per step weighs as much as the blocks.
#   node_c15g1_kmeans_pass   15 CPUs + 1 GPU, one 2M-point pass.
def wide_node():
    w = 2_000_000
    cpu = [[x, round(2.2e-7 * x + 2e-5, 12)] for x in SIZES_NODE]
    gpu = [[x, round(8e-9 * x + 3e-4, 12)] for x in SIZES_NODE]
    units = [{"name": f"A.cpu{i}", "profile": cpu, "transfer": [0.0, 0.0], "noise": NOISE["cpu"]} for i in range(15)]
    units.append({"name": "A.gpu0", "profile": gpu, "transfer": [0.001, 8e-9], "noise": NOISE["gpu"]})
    write(os.path.join(HERE, "node_c15g1_kmeans_pass.json"),
          {"workload": w, "granule": GRANULE, "x_init": node_x_init(w, len(units)), "units": units})
    # The same pass with what the H200 node's traces showed beyond the profiled times
    # (HETPU_TRACE's unseen_s): a GPU block could start only ~6.5 ms after it was handed
    # out (dispatch, its points copied in; hidden behind a running block, as StarPU
    # prefetches), a CPU block 0.5 ms, and the CPU blocks scattered from half to 2.6x
    # their predictions (noise 20%).
    #   node_c15g1_kmeans_unseen   that pass with unseen times and noisy CPUs.
    noisy = [dict(u, noise=0.2, unseen=0.0005) for u in units[:-1]]
    noisy.append(dict(units[-1], unseen=0.0065))
    write(os.path.join(HERE, "node_c15g1_kmeans_unseen.json"),
          {"workload": w, "granule": GRANULE, "x_init": node_x_init(w, len(noisy)), "units": noisy})
    # matmul n = 4096 on that node (one H200, 15 CPU workers), in columns of 32: a CPU
    # takes 88 ms for its smallest block, the GPU ~75 ms for the whole job. The best static
    # distribution leaves every CPU out.
    cols = [32 * 2 ** k for k in range(0, 8)]  # 32 .. 4096 columns
    cpu = [[x, round(2.75e-3 * x + 1e-4, 12)] for x in cols]
    gpu = [[x, round(1.6e-5 * x + 5e-4, 12)] for x in cols]
    units = [{"name": f"A.cpu{i}", "profile": cpu, "transfer": [0.0, 0.0], "noise": NOISE["cpu"]} for i in range(15)]
    units.append({"name": "A.gpu0", "profile": gpu, "transfer": [2e-4, 2e-6], "noise": NOISE["gpu"]})
    write(os.path.join(HERE, "node_c15g1_mm4096.json"), {"workload": 4096, "granule": 32, "x_init": 32, "units": units})
    # grn with 600 genes on that node (179,700 elements of granule 1), as its traces showed:
    # the GPU 6.7e-7 s per element plus 0.4 ms per block (the whole job ~0.12 s alone), a CPU
    # 1.15e-4 s per element, its blocks scattering by 20% (the 15 CPUs add ~8% to the GPU).
    # One block per PU at the optimum means the slowest of 15 noisy CPU blocks ends the job.
    #   node_c15g1_grn600   15 noisy CPUs beside a GPU 170x faster.
    w = 179_700
    sizes = [2 ** k for k in range(0, 19)]  # 1 .. 262k elements
    cpu = [[x, round(1.15e-4 * x + 2e-5, 12)] for x in sizes]
    gpu = [[x, round(6.7e-7 * x + 4e-4, 12)] for x in sizes]
    units = [{"name": f"A.cpu{i}", "profile": cpu, "transfer": [0.0, 0.0], "noise": 0.2} for i in range(15)]
    units.append({"name": "A.gpu0", "profile": gpu, "transfer": [2e-4, 1e-9], "noise": NOISE["gpu"]})
    write(os.path.join(HERE, "node_c15g1_grn600.json"), {"workload": w, "granule": 1, "x_init": w // (32 * len(units)), "units": units})


if __name__ == "__main__":
    main()
    nodes()
    wide_node()
