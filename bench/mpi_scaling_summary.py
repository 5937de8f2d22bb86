#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The table of bench/mpi_scaling_sim.sh from its runs.jsonl: per family, PU count and planner,
makespan / bound (median and worst of the seeds), the worst per seed of per-node against central
(or, for the pinned reference, of the mixed cluster against it), the coordinator's charged time
per report and its worst share of the job, the reports rank 0 handles per second and the job
data through rank 0. Usage: mpi_scaling_summary.py RUNS.jsonl
With --compare BEFORE.jsonl AFTER.jsonl: one row per family and size, makespan / bound of
another build's runs (a baseline) beside this one's (median, worst of the seeds), per-node
against central and the mixed family against its pinned reference (worst), and the
coordinator's share of the job (bench/README.md's recorded table); one-node clusters left out."""
import json
import statistics
import sys

LABELS = {"central": "central", "per-node": "per-node, first run", "per-node-known": "per-node, speeds kept"}


def variant(r):
    return "central" if r["mode"] == "central" else ("per-node-known" if r["known_rates"] else "per-node")


def load(path):
    runs = [json.loads(line) for line in open(path)]
    for r in runs:
        r.setdefault("family", "uniform")
    return runs


def ratios(runs, family, pus, v):
    rs = [r["makespan_s"] / r["bound_s"] for r in runs if r["family"] == family and r["pus"] == pus and variant(r) == v]
    return rs


def cell(rs):
    return "%.2f / %.2f" % (statistics.median(rs), max(rs)) if rs else "-"


def compare(before_path, after_path):
    before, after = load(before_path), load(after_path)
    print("| family | PUs | nodes | seeds | central | first run, before | first run | speeds kept, before | speeds kept "
          "| per-node / central, worst | vs pinned, worst | coordinator / job, worst |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    # A one-node cluster has nothing to re-share: left out.
    keys = sorted({(r["family"], r["pus"]) for r in after if not r["family"].endswith(", pinned") and r["nodes"] > 1})
    for family, pus in keys:
        mine = [r for r in after if r["family"] == family and r["pus"] == pus]
        central = {r["seed"]: r["makespan_s"] for r in mine if r["mode"] == "central"}
        per_node = [r for r in mine if r["mode"] != "central"]
        vs_central = [r["makespan_s"] / central[r["seed"]] for r in per_node if r["seed"] in central]
        pinned = {(r["seed"], r["known_rates"]): r["makespan_s"] for r in after
                  if r["family"] == family + ", pinned" and r["pus"] == pus}
        vs_pinned = [r["makespan_s"] / pinned[(r["seed"], r["known_rates"])] for r in per_node
                     if (r["seed"], r["known_rates"]) in pinned]
        print("| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            family, pus, mine[0]["nodes"], len({r["seed"] for r in per_node}),
            cell(ratios(after, family, pus, "central")),
            cell(ratios(before, family, pus, "per-node")), cell(ratios(after, family, pus, "per-node")),
            cell(ratios(before, family, pus, "per-node-known")), cell(ratios(after, family, pus, "per-node-known")),
            "%.2f" % max(vs_central) if vs_central else "-", "%.3f" % max(vs_pinned) if vs_pinned else "-",
            "%.1e" % max(r["coordinator_s"] / r["makespan_s"] for r in per_node) if per_node else "-"))


def main():
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
        return
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
