#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The table of bench/mpi_scaling_sim.sh from its runs.jsonl: per family, PU count and planner,
makespan / bound (median and worst of the seeds), the worst per seed of per-node against central
(or, for the pinned reference, of the mixed cluster against it), the coordinator's charged time
per report and its worst share of the job, the reports rank 0 handles per second and the job
data through rank 0. Usage: mpi_scaling_summary.py RUNS.jsonl"""
import json
import statistics
import sys

LABELS = {"central": "central", "per-node": "per-node, first run", "per-node-known": "per-node, speeds kept"}


def variant(r):
    return "central" if r["mode"] == "central" else ("per-node-known" if r["known_rates"] else "per-node")


def main():
    runs = [json.loads(line) for line in open(sys.argv[1])]
    for r in runs:
        r.setdefault("family", "uniform")
    by = {}
    for r in runs:
        by.setdefault((r["family"], r["pus"], variant(r)), {})[r["seed"]] = r
    print("| family | PUs | nodes | planner | makespan / bound, median | worst | worst vs reference | moves "
          "| coordinator per report (us), charged / measured | coordinator / job, worst | reports / s at rank 0 "
          "| rank 0 data (GB/s) |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    families = sorted({r["family"] for r in runs}, key=lambda f: (f.replace(", pinned", ""), f))
    for family in families:
        for pus in sorted({r["pus"] for r in runs if r["family"] == family}):
            for v in ("central", "per-node", "per-node-known"):
                rs = by.get((family, pus, v))
                if not rs:
                    continue
                runs_v = list(rs.values())
                ratio = [r["makespan_s"] / r["bound_s"] for r in runs_v]
                # per-node against central (same seed); mixed against its pinned reference.
                ref = None
                if family.endswith(", pinned"):
                    ref = by.get((family.replace(", pinned", ""), pus, v))
                    vs = [ref[s]["makespan_s"] / r["makespan_s"] for s, r in rs.items() if ref and s in ref]
                else:
                    ref = by.get((family, pus, "central")) if v != "central" else None
                    vs = [r["makespan_s"] / ref[s]["makespan_s"] for s, r in rs.items() if ref and s in ref]
                reports = [r.get("reports", 0) for r in runs_v]
                per = [1e6 * r["coordinator_s"] / r["reports"] for r in runs_v if r.get("reports")]
                wall = [1e6 * r["coordinator_wall_s"] / r["reports"] for r in runs_v if r.get("reports")]
                share = [r["coordinator_s"] / r["makespan_s"] for r in runs_v]
                print("| %s | %d | %d | %s | %.3f | %.3f | %s | %g | %s | %s | %s | %.2f |" % (
                    family, pus, runs_v[0]["nodes"], LABELS[v], statistics.median(ratio), max(ratio),
                    "%.3f" % max(vs) if vs else "-",
                    statistics.median([r["moves"] for r in runs_v]),
                    "%.2f / %.2f" % (statistics.median(per), statistics.median(wall)) if per else "-",
                    "%.1e" % max(share) if v != "central" else "-",
                    "%.0f" % statistics.median([n / r["makespan_s"] for n, r in zip(reports, runs_v)])
                    if any(reports) else "-",
                    statistics.median([r["rank0_bytes"] / r["makespan_s"] / 1e9 for r in runs_v])))


if __name__ == "__main__":
    main()
