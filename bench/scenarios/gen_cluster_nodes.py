#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Clusters for `hetpu cluster-sim` (bench/mpi_scaling_sim.sh): matrix multiplication on
nodes of 16 PUs built from the units of gen_scenarios.py, the network charged.

Node types (16 PUs each): G4 = 12 CPUs + 4 GPUs, G2 = 14 faster CPUs + 2 faster GPUs, C16 =
16 CPUs; nodes cycle G4, G2, C16. Every 16th node (from node 5) runs 3x slower than its type
(another job on it); with --failures, every 64th node (from node 11) stops at 40% of the
optimum. Links: 100 Gb/s (12.5 GB/s) and 5 us per node, rank 0's the same. A column of B in
and of C out (4096 doubles each, 32 KiB) per element. Weak scaling: the workload is sized so
that the network-free optimum takes about 60 s at every size.

Mixed family (--mixed), clusters as they are: nodes of GPUs and CPUs (GM: 3/4 CPUs + 1/4 GPUs),
of CPUs only (CM: faster CPUs) and older CPU nodes (OM: CPUs 2.5x slower), cycling GM, CM, OM;
node 1 runs 3x slower than its type (another job on it) and the last node sits behind a link
1000x slower (12.5 MB/s, 5 ms). Nodes of 4 PUs up to 64 PUs, of 16 beyond (at least 4 nodes).
--pinned writes the same clusters with the slow-link node kept out of every move (the reference
the re-sharing is held to: moving work over that link must not cost more than it gains).

Usage: gen_cluster_nodes.py OUT_DIR [--failures | --mixed [--pinned]] [PU counts...]   (default 16 ... 16384)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_scenarios as g  # noqa: E402

TARGET_S = 60.0
LINK = [5e-6, 12.5e9]
BYTES = 4096 * 8
TYPES = {
    "G4": [("cpu", 1.0)] * 12 + [("gpu", 10.0)] * 4,
    "G2": [("cpu", 1.2)] * 14 + [("gpu", 15.0)] * 2,
    "C16": [("cpu", 1.6)] * 16,
}
CYCLE = ["G4", "G2", "C16"]
MIXED_CYCLE = ["GM", "CM", "OM"]
SLOW_LINK = [5e-3, 12.5e6]


def mixed_types(per_node):
    gpus = per_node // 4
    return {
        "GM": [("cpu", 1.0)] * (per_node - gpus) + [("gpu", 10.0)] * gpus,
        "CM": [("cpu", 1.6)] * per_node,
        "OM": [("cpu", 0.4)] * per_node,
    }


def units(kind, types=TYPES):
    out = []
    for i, (cls, speed) in enumerate(types[kind]):
        u = g.unit("mm", kind, cls + str(i), speed)
        u["name"] = f"{cls}{i}"
        out.append(u)
    return out


def rate(u):
    return 1.0 / (u["profile"][-1][1] / u["profile"][-1][0] + u["transfer"][1])


def cluster(pus, failures):
    types = {k: {"link": LINK, "units": units(k)} for k in TYPES}
    nodes, total_rate = [], 0.0
    for n in range(max(1, pus // 16)):
        kind = CYCLE[n % len(CYCLE)]
        node = {"type": kind}
        slow = n % 16 == 5
        if slow:
            node["slowdown"] = 3.0
        if failures and n % 64 == 11:
            node["fail_at"] = round(0.4 * TARGET_S, 3)
        nodes.append(node)
        total_rate += sum(rate(u) for u in types[kind]["units"])
    workload = int(total_rate * TARGET_S) // g.GRANULE * g.GRANULE
    return {"workload": workload, "granule": g.GRANULE, "x_init": g.X_INIT, "bytes_in": BYTES, "bytes_out": BYTES,
            "rank0_link": LINK, "node_types": types, "nodes": nodes}


def mixed_cluster(pus, pinned):
    per_node = 4 if pus <= 64 else 16
    kinds = mixed_types(per_node)
    types = {k: {"link": LINK, "units": units(k, kinds)} for k in kinds}
    types["GM_far"] = {"link": SLOW_LINK, "units": types["GM"]["units"]}
    count = max(4, pus // per_node)
    nodes, total_rate = [], 0.0
    for n in range(count):
        kind = MIXED_CYCLE[n % len(MIXED_CYCLE)]
        node = {"type": kind}
        if n == 1:
            node["slowdown"] = 3.0
        if n == count - 1:
            node = {"type": "GM_far"}
            if pinned:
                node["moves"] = False
        nodes.append(node)
        total_rate += sum(rate(u) for u in types[kind]["units"])
    workload = int(total_rate * TARGET_S) // g.GRANULE * g.GRANULE
    return {"workload": workload, "granule": g.GRANULE, "x_init": g.X_INIT, "bytes_in": BYTES, "bytes_out": BYTES,
            "rank0_link": LINK, "node_types": types, "nodes": nodes}


def main():
    args = sys.argv[1:]
    out = args.pop(0)
    failures = "--failures" in args
    mixed = "--mixed" in args
    pinned = "--pinned" in args
    counts = [int(x) for x in args if not x.startswith("--")] or [16, 64, 256, 1024, 4096, 16384]
    os.makedirs(out, exist_ok=True)
    for p in counts:
        if mixed:
            c = mixed_cluster(p, pinned)
            name = f"mixed_{p}pu{'_pinned' if pinned else ''}.json"
            g.write(os.path.join(out, name), c)
            print(f"{name}: {len(c['nodes'])} nodes, workload {c['workload']}")
            continue
        c = cluster(p, failures)
        name = f"cluster_{p}pu{'_failures' if failures else ''}.json"
        g.write(os.path.join(out, name), c)
        print(f"{name}: {len(c['nodes'])} nodes, workload {c['workload']}")


if __name__ == "__main__":
    main()
