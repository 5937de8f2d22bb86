#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Scale-out scenarios for `hetpu sim` (bench/mpi_scaling_sim.sh): matrix multiplication on
clusters of 8, 64, 256 and 1024 PUs built from the invented machine types A-E of
gen_scenarios.py (nodes cycle A, B, C, D, E; the last node is cut to reach the PU count),
with the network as part of every remote PU's transfer cost, as PLB-HAC's G_p sees it
under hetpu's StarPU-MPI runner: the planner and the data live on node 0 (rank 0), a block
for another node crosses the network twice (inputs out, results back).

Network model (per block, added to the PU's own PCIe/host transfer): a latency of 200 us
(a control message plus a StarPU-MPI rendezvous) and 6.5 us per element (a 4096-row column
of B in and of C out, 64 KiB, at 10 GB/s). Weak scaling: the workload is sized so that the
optimum takes about 60 s at every size.

Usage: gen_cluster_scaling.py OUT_DIR [PU counts...]   (default 8 64 256 1024)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_scenarios as g  # noqa: E402

NET_LATENCY_S = 200e-6
NET_S_PER_ELEMENT = 6.5e-6
TARGET_S = 60.0


def cluster(pus):
    units, machines, node = [], [], 0
    while len(units) < pus:
        m = "ABCDE"[node % 5]
        machines.append(m)
        for suffix, speed in g.MACHINES[m]:
            if len(units) == pus:
                break
            u = g.unit("mm", m, suffix, speed)
            u["name"] = f"n{node}{m}.{suffix}"
            if node > 0:
                lat, per = u["transfer"]
                u["transfer"] = [round(lat + NET_LATENCY_S, 9), round(per + NET_S_PER_ELEMENT, 12)]
            units.append(u)
        node += 1
    rate = sum(1.0 / (u["profile"][-1][1] / u["profile"][-1][0] + u["transfer"][1]) for u in units)
    workload = int(rate * TARGET_S) // g.GRANULE * g.GRANULE
    return {"workload": workload, "granule": g.GRANULE, "x_init": g.X_INIT, "units": units}, node


def main():
    out = sys.argv[1]
    counts = [int(x) for x in sys.argv[2:]] or [8, 64, 256, 1024]
    os.makedirs(out, exist_ok=True)
    for p in counts:
        sc, nodes = cluster(p)
        g.write(os.path.join(out, f"cluster_mm_{p}pu.json"), sc)
        print(f"cluster_mm_{p}pu.json: {p} PUs on {nodes} nodes, workload {sc['workload']}")


if __name__ == "__main__":
    main()
