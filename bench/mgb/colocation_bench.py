#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""mgb against one job per GPU (sa) under both co-location models.

    colocation_bench.py HETPU OUT_DIR [--baseline OTHER_HETPU] [--mixes 50] [--node-mixes 10]

Runs `hetpu mgb-sim` (mgb, mgb-exact, sa) on two families of scenarios, under MPS and
time-sliced co-location:

  bench   bound_eval.py's mixes: W1-W8 (tabled and 30% GPU-busy) on 4xV100 and 2xP100, the
          four NN mixes and --mixes random mixes
  nodes   a family drawn here (node_mix below, seeds bound_eval.py does not use): 4 node
          types, --node-mixes mixes each: 8 equal GPUs (8xA100), one large GPU beside small
          ones (H100 + 3xV100), 4xV100, and 2xA100 + 2xP100

Time-sliced, the figure is mgb's makespan over sa's: the geometric mean over the mixes, the
worst mix, and how many mixes mgb is more than 3% slower; MPS, mgb's makespan over the lower
bound (arithmetic mean over the mixes, as in bound_eval.py) and over sa. With --baseline,
the same runs of another hetpu (the one before a change) sit beside, measured in this run.
Crashed or rejected jobs are counted, never left out silently.

Writes OUT_DIR/colocation.jsonl (every run), OUT_DIR/colocation_time_sliced.md and
OUT_DIR/colocation_mps.md (the tables), and OUT_DIR/colocation.md (both, also printed).
"""
import argparse
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import bound_eval as be  # noqa: E402 (next to this script, not installed)
import gen_workloads as gw  # noqa: E402

NODES = [  # (name, devices, workers)
    ("8xA100", ["A100"] * 8, 32),
    ("H100+3xV100", ["H100", "V100", "V100", "V100"], 16),
    ("4xV100", ["V100"] * 4, 16),
    ("2xA100+2xP100", ["A100", "A100", "P100", "P100"], 16),
]
POLICIES = ["mgb", "mgb-exact", "sa"]


def node_mix(node, index):
    """Mix `index` on node type `node` (an index into NODES): Python's random.Random seeded
    with 7000 + 100 * node + index. Jobs: 16-40, from gen_workloads.py's SMALL (45%) and
    LARGE pools, 15% of them LARGE shapes with memory redrawn between 18 GiB and 90% of the
    largest device (when it has more than 18). GPU-busy share per mix: the tabled shapes, or
    20%, 30%, 50% or 80%."""
    name, kinds, workers = NODES[node]
    rng = random.Random(7000 + 100 * node + index)
    largest = max(be.PRESET_GIB[k] for k in kinds)
    busy = rng.choice([None, 0.2, 0.3, 0.5, 0.8])
    jobs = gw.random_jobs(rng, largest, busy, rng.randint(16, 40))
    return {"comment": "bench/mgb/colocation_bench.py node_mix(%s, %d), gpu-busy %s" % (name, index, busy),
            "gpus": [{"preset": k} for k in kinds], "workers": workers, "noise": 0.05, "jobs": jobs}


def scenarios(out, mixes, node_mixes):
    found = [("bench", path) for _, path in be.generate(out)]
    bench_random = []
    be.add_random(out, mixes, bench_random)
    found += [("bench", path) for _, path in bench_random]
    sdir = os.path.join(out, "scenarios", "nodes")
    os.makedirs(sdir, exist_ok=True)
    for node in range(len(NODES)):
        for i in range(node_mixes):
            path = os.path.join(sdir, "%s-%02d.json" % (NODES[node][0], i))
            with open(path, "w") as f:
                json.dump(node_mix(node, i), f, indent=1)
            found.append(("nodes " + NODES[node][0], path))
    return found


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def run_all(hetpus, found, log):
    """{(binary, family, model, policy): [result]} in scenario order."""
    runs = {}
    for family, path in found:
        for model in ("mps", "time-sliced"):
            for label, hetpu in hetpus:
                for p in POLICIES if label == "this" else ["mgb", "sa"]:
                    r = be.sim(hetpu, path, p, model)
                    log.write(json.dumps(dict(r, family=family, binary=label, scenario=path)) + "\n")
                    runs.setdefault((label, family, model, p), []).append(r)
    return runs


def families_of(found):
    fams = []
    for f, _ in found:
        if f not in fams:
            fams.append(f)
    return fams


def gather(runs, label, fams, model, policy):
    return sum((runs[(label, f, model, policy)] for f in fams), [])


def over_sa(runs, label, fams, model, policy):
    a, b = gather(runs, label, fams, model, policy), gather(runs, label, fams, model, "sa")
    return [x["makespan_s"] / y["makespan_s"] for x, y in zip(a, b)]


def lost(rs):
    return sum(r["jobs_crashed"] for r in rs), sum(r["jobs_rejected"] for r in rs)


def time_sliced_table(runs, found, labels):
    fams = families_of(found)
    groups = [(f, [f]) for f in fams] + [("all nodes", [f for f in fams if f.startswith("nodes")]), ("all", fams)]
    head = "| family | mixes | mgb / sa (geomean) | worst | mixes > 1.03 | mgb-exact / sa (geomean) | worst | crashed, rejected (mgb; mgb-exact; sa) |"
    if "before" in labels:
        head += " before: mgb / sa (geomean) | worst | mixes > 1.03 |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, fs in groups:
        m = over_sa(runs, "this", fs, "time-sliced", "mgb")
        e = over_sa(runs, "this", fs, "time-sliced", "mgb-exact")
        losses = "; ".join("%d, %d" % lost(gather(runs, "this", fs, "time-sliced", p)) for p in POLICIES)
        row = "| %s | %d | %.3f | %.3f | %d | %.3f | %.3f | %s |" % (
            name, len(m), geomean(m), max(m), sum(x > 1.03 for x in m), geomean(e), max(e), losses)
        if "before" in labels:
            b = over_sa(runs, "before", fs, "time-sliced", "mgb")
            row += " %.3f | %.3f | %d |" % (geomean(b), max(b), sum(x > 1.03 for x in b))
        lines.append(row)
    return "\n".join(lines) + "\n"


def mps_table(runs, found, labels):
    fams = families_of(found)
    groups = [(f, [f]) for f in fams] + [("all", fams)]
    head = "| family | mixes | mgb / bound (mean) | mgb / sa (geomean) | crashed, rejected (mgb) |"
    if "before" in labels:
        head += " before: mgb / bound (mean) | mgb / sa (geomean) |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, fs in groups:
        rs = gather(runs, "this", fs, "mps", "mgb")
        bound = [r["makespan_over_bound"] for r in rs]
        row = "| %s | %d | %.3f | %.3f | %d, %d |" % (name, len(rs), sum(bound) / len(bound),
                                                      geomean(over_sa(runs, "this", fs, "mps", "mgb")), *lost(rs))
        if "before" in labels:
            b = [r["makespan_over_bound"] for r in gather(runs, "before", fs, "mps", "mgb")]
            row += " %.3f | %.3f |" % (sum(b) / len(b), geomean(over_sa(runs, "before", fs, "mps", "mgb")))
        lines.append(row)
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hetpu")
    ap.add_argument("out")
    ap.add_argument("--baseline", help="another hetpu, run beside (e.g. the build before a change)")
    ap.add_argument("--mixes", type=int, default=50, help="bound_eval.py's random mixes (default 50)")
    ap.add_argument("--node-mixes", type=int, default=10, help="mixes per node type (default 10)")
    args = ap.parse_args()
    if args.mixes < 0 or args.node_mixes < 1:
        ap.error("--mixes must be 0 or more, --node-mixes 1 or more")
    hetpus = [("this", args.hetpu)] + ([("before", args.baseline)] if args.baseline else [])
    labels = [label for label, _ in hetpus]
    os.makedirs(args.out, exist_ok=True)
    found = scenarios(args.out, args.mixes, args.node_mixes)
    with open(os.path.join(args.out, "colocation.jsonl"), "w") as log:
        runs = run_all(hetpus, found, log)
    sliced, mps = time_sliced_table(runs, found, labels), mps_table(runs, found, labels)
    for name, table in (("colocation_time_sliced.md", sliced), ("colocation_mps.md", mps)):
        with open(os.path.join(args.out, name), "w") as f:
            f.write(table)
    text = ("Time-sliced: makespan over sa's, geometric mean over the mixes\n\n" + sliced +
            "\nMPS: makespan over the lower bound, arithmetic mean over the mixes\n\n" + mps)
    with open(os.path.join(args.out, "colocation.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
