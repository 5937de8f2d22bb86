#!/usr/bin/env python3
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


if __name__ == "__main__":
    main()
