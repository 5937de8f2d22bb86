#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""PLB-HAC's first (cold) run on GPU nodes, in simulation: the testbed of
bench/scenarios/gen_gpu_nodes.py (3 apps, 1 or 4 GPUs beside 8-64 CPU workers, jobs of ~0.1,
1, 10 and 100 s) and its CPU-only and GPU-only variants (the same scenarios with one kind of
unit), run by `hetpu sim` under
  plb-hac         cold: no saved models;
  plb-hac-warm    the same job again, from the models the cold run saved;
  plb-hac-stale   (--stale) a warm start from models saved on the node twice as fast: the
                  node is 2x slower than its saved models;
  best-single-kind  the GPUs alone (the optimum over the fastest kind of unit);
  optimum, optimum-noisy  the static optimum, and its makespan under the same noise.
Each run is one line of OUT_DIR/runs.jsonl. With --today RUNS.jsonl (the same command run by
an unmodified build) the table compares the two.

Usage: plbhac_cold_start_sim.py HETPU OUT_DIR [--today RUNS [--today-label L]] [--sim-flags '...']
         [--lengths 100ms,1s,10s,100s] [--apps mm,kmeans,grn] [--variants node,cpu,gpu] [--seeds 3]
Environment: JOBS (parallel runs, default 1).
"""
import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def variant(scenario, kind):
    """The scenario with only the units of one kind (`cpu`, `gpu`); `node`: all of them."""
    if kind == "node":
        return scenario
    s = dict(scenario)
    s["units"] = [u for u in scenario["units"] if u["name"].split(".")[-1].startswith(kind)]
    s["x_init"] = max(s["granule"], s["workload"] // (32 * len(s["units"])) // s["granule"] * s["granule"])
    return s


def scenarios(out, lengths, apps, variants):
    src = os.path.join(out, "testbed")
    os.makedirs(src, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(TOP, "bench/scenarios/gen_gpu_nodes.py"), src], check=True,
                   stdout=subprocess.DEVNULL)
    found = []
    for path in sorted(glob.glob(os.path.join(src, "*.json"))):
        name = os.path.basename(path)[:-5]
        _, app, shape, length = name.split("_")
        if app not in apps or length not in lengths:
            continue
        base = json.load(open(path))
        for v in variants:
            if v == "node":
                found.append((name, path))
                continue
            vname = "gpunode_%s_%s-%s-only_%s" % (app, shape, v, length)
            vpath = os.path.join(out, "variants", vname + ".json")
            os.makedirs(os.path.dirname(vpath), exist_ok=True)
            json.dump(variant(base, v), open(vpath, "w"))
            found.append((vname, vpath))
    return found


def run(hetpu, args):
    p = subprocess.run([hetpu, "sim"] + args + ["--json"], capture_output=True, text=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if p.returncode != 0:
        raise RuntimeError("hetpu sim %s: %s" % (" ".join(args), p.stderr.strip()))
    return json.loads(p.stdout)


def twice_as_fast(out, name, path):
    """The scenario on a node twice as fast, under the same file name (the saved models are
    found by it)."""
    s = json.load(open(path))
    for u in s["units"]:
        u["profile"] = [[x, t / 2] for x, t in u["profile"]]
        if "transfer" in u:
            u["transfer"] = [t / 2 for t in u["transfer"]]
    fast = os.path.join(out, "fast", os.path.basename(path))
    os.makedirs(os.path.dirname(fast), exist_ok=True)
    # Runs of several seeds (JOBS) write the same file: each writes it whole under another
    # name first, so that none ever reads it half written.
    tmp = "%s.%d.%d" % (fast, os.getpid(), threading.get_ident())
    with open(tmp, "w") as f:
        json.dump(s, f)
    os.replace(tmp, fast)
    return fast


def one(job):
    hetpu, out, name, path, seed, flags, stale = job
    rows = []
    models = os.path.join(out, "models", "%s.%d" % (name, seed))
    shutil.rmtree(models, ignore_errors=True)
    plan = [("plb-hac", ["--models", models] + flags), ("plb-hac-warm", ["--models", models] + flags),
            ("best-single-kind", flags), ("optimum-noisy", flags)]
    if stale:
        stale_models = models + ".fast"
        shutil.rmtree(stale_models, ignore_errors=True)
        run(hetpu, ["--scenario", twice_as_fast(out, name, path), "--policy", "plb-hac", "--seed", str(seed),
                    "--models", stale_models] + flags)
        plan.append(("plb-hac-stale", ["--models", stale_models] + flags))
    if seed == 1:
        plan.append(("optimum", []))
    for label, extra in plan:
        policy = "plb-hac" if label.startswith("plb-hac") else label
        r = run(hetpu, ["--scenario", path, "--policy", policy, "--seed", str(seed)] + extra)
        rows.append({"scenario": name, "seed": seed, "policy": label, "makespan_s": r["makespan_s"],
                     "busy_end_s": r.get("busy_end_s", r["makespan_s"]), "copies": r.get("copies", 0),
                     "planning_s": r.get("planning_s", 0), "blocks": r["blocks"]})
    return rows


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def medians(rows):
    by = {}
    for r in rows:
        by.setdefault((r["scenario"], r["policy"]), []).append(r)
    return {k: {f: statistics.median(r[f] for r in v) for f in ("makespan_s", "busy_end_s", "copies")}
            for k, v in by.items()}


def cell(xs):
    return "%.3f (worst %.3f)" % (gm(xs), max(xs)) if xs else "-"


def then_cell(xs):
    return "(%.3f, worst %.3f)" % (gm(xs), max(xs)) if xs else ""


def table(rows, today, label="before"):
    new, old = medians(rows), medians(today) if today else {}
    names = sorted({r["scenario"] for r in rows})
    lines = [("| rows | length | plb-hac / GPUs alone (%s) | plb-hac / optimum-noisy (%s) | plb-hac / optimum | "
              "busy end / makespan | cold: now / %s | warm: now / %s | warm / optimum-noisy | "
              "stale models / optimum |") % (label, label, label, label),
             "|---|---|---|---|---|---|---|---|---|---|"]
    for v in ("node", "cpu", "gpu"):
        for length in ("100ms", "1s", "10s", "100s"):
            ss = [s for s in names if s.endswith("_" + length) and (("-%s-only_" % v) in s if v != "node" else "-only" not in s)]
            ss = [s for s in ss if (s, "plb-hac") in new]
            if not ss:
                continue
            ratio = lambda a, b, src=new: [src[(s, a)]["makespan_s"] / src[(s, b)]["makespan_s"] for s in ss
                                           if (s, a) in src and (s, b) in src]
            busy = [new[(s, "plb-hac")]["busy_end_s"] / new[(s, "plb-hac")]["makespan_s"] for s in ss]
            vs_today = {p: [new[(s, p)]["makespan_s"] / old[(s, p)]["makespan_s"] for s in ss
                            if (s, p) in old and (s, p) in new] for p in ("plb-hac", "plb-hac-warm")}
            label = {"node": "GPU node", "cpu": "CPUs only", "gpu": "GPUs only"}[v]
            then = lambda b: [old[(s, "plb-hac")]["makespan_s"] / new[(s, b)]["makespan_s"] for s in ss
                              if (s, "plb-hac") in old and (s, b) in new]
            lines.append("| %s (%d) | %s | %s %s | %s %s | %s | %s | %s | %s | %s | %s |" % (
                label, len(ss), length, cell(ratio("plb-hac", "best-single-kind")), then_cell(then("best-single-kind")),
                cell(ratio("plb-hac", "optimum-noisy")), then_cell(then("optimum-noisy")),
                cell(ratio("plb-hac", "optimum")), cell(busy), cell(vs_today["plb-hac"]),
                cell(vs_today["plb-hac-warm"]), cell(ratio("plb-hac-warm", "optimum-noisy")),
                cell(ratio("plb-hac-stale", "optimum"))))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hetpu")
    ap.add_argument("out")
    ap.add_argument("--today", help="runs.jsonl of the same command by an unmodified build")
    ap.add_argument("--today-label", default="before", help="what --today's build is, for the table's headers")
    ap.add_argument("--sim-flags", default="", help="extra `hetpu sim` flags (planning cost)")
    ap.add_argument("--lengths", default="100ms,1s,10s,100s")
    ap.add_argument("--apps", default="mm,kmeans,grn")
    ap.add_argument("--variants", default="node")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--stale", action="store_true", help="also warm starts from a 2x faster node's models")
    ap.add_argument("--summarize", action="store_true", help="no runs: the table of OUT_DIR/runs.jsonl")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.summarize:
        rows = [json.loads(l) for l in open(os.path.join(a.out, "runs.jsonl"))]
        today_rows = [json.loads(l) for l in open(a.today)] if a.today else None
        text = table(rows, today_rows, a.today_label)
        open(os.path.join(a.out, "summary.md"), "w").write(text + "\n")
        print(text)
        return
    flags = a.sim_flags.split()
    found = scenarios(a.out, a.lengths.split(","), a.apps.split(","), a.variants.split(","))
    jobs = [(a.hetpu, a.out, n, p, seed, flags, a.stale) for n, p in found for seed in range(1, a.seeds + 1)]
    rows = []
    with ThreadPoolExecutor(int(os.environ.get("JOBS", "1"))) as pool:
        for rs in pool.map(one, jobs):
            rows.extend(rs)
    with open(os.path.join(a.out, "runs.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    today = [json.loads(l) for l in open(a.today)] if a.today else None
    text = table(rows, today, a.today_label)
    open(os.path.join(a.out, "summary.md"), "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
