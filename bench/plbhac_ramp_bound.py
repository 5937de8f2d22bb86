#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a cold start can reach at best: a lower bound on the makespan of any policy that
learns each unit's time curve from the blocks it runs, on a `hetpu sim` scenario.

Such a policy starts every unit at the scenario's x_init and never gives a unit a block
larger than TRUST times the largest block that unit has completed: beyond that its model is
an extrapolation (plb-hac's trust region, HETPU_PLBHAC_TRUST, default 4). The bound grants
it everything else: the exact curves for sizing each unit's last block, no noise, no
slowdowns, no synchronisation, no planning time, and every unit growing its blocks by the
full factor from its first block on. Within a time T a unit then does the most work with
blocks x_init, TRUST x_init, TRUST^2 x_init, ... and a last block that ends at T (the time
curves are concave or linear in the scenarios where this matters, so larger blocks never
cost more per element). The bound is the least T at which the units together can do the
whole workload. Its ratio to the static optimum (one block per unit, `hetpu sim --policy
optimum`) is the part of a cold run's distance to the optimum that the ramp alone costs.

A scenario with slowdowns or speed-ups gets no ramp bound (the curves change). It gets
instead the makespan of a plan that pays them on the work done after each change, every
unit running throughout at the rate of its block in the static optimum (no ramp, no block
costs): the static optimum itself does not pay a slowdown, because the simulator slows the
blocks that start after it and the optimum's single blocks all start at 0. Where a curve is
convex the bounds still hold but are loose.

Usage: bench/plbhac_ramp_bound.py BUILD_DIR SCENARIO.json... [--trust 2,4,8] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def exec_time(profile, x):
    """The simulator's curve (tools/sim/simulated_unit.cpp), taken at its lowest below the
    first point: piecewise linear through the points, extended by the last segment."""
    if x <= 0:
        return 0.0
    if len(profile) == 1:
        return profile[0][1] * x / profile[0][0]
    hi = 1
    while hi + 1 < len(profile) and x > profile[hi][0]:
        hi += 1
    (x0, t0), (x1, t1) = profile[hi - 1], profile[hi]
    line = t0 + (t1 - t0) * (x - x0) / (x1 - x0)
    if x < x0:
        return min(max(line, t0 * x / x0), t0)
    return max(0.0, line)


def block_time(unit, x):
    latency, per_element = (unit.get("transfer") or [0.0, 0.0])[:2]
    return exec_time(unit["profile"], x) + latency + per_element * x


def most_work(unit, x_init, trust, seconds):
    """Elements a unit completes within `seconds` growing its blocks by `trust` from x_init."""
    done, left, largest = 0.0, seconds, 0.0
    while True:
        block = x_init if largest == 0 else trust * largest
        t = block_time(unit, block)
        if t <= left:
            done, left, largest = done + block, left - t, block
            continue
        lo, hi = 0.0, block  # the largest last block that ends in time
        for _ in range(60):
            mid = (lo + hi) / 2
            if block_time(unit, mid) <= left:
                lo = mid
            else:
                hi = mid
        return done + lo


def least_time(done_by):
    """The least T (to ~1e-18 relative) for which done_by(T) holds; done_by is monotone."""
    lo, hi = 0.0, 1.0
    while not done_by(hi):
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if done_by(mid):
            hi = mid
        else:
            lo = mid
    return hi


def ramp_bound(scenario, trust):
    units, workload = scenario["units"], scenario["workload"]
    x_init = scenario.get("x_init") or max(1, workload // (32 * len(units)))
    return least_time(lambda T: sum(most_work(u, x_init, trust, T) for u in units) >= workload)


def fluid_with_changes(scenario, optimum_blocks):
    """Least T at which the units, each at the rate of its optimum block scaled by the
    slowdown factor in force, do the whole workload."""
    units, workload = scenario["units"], scenario["workload"]

    def work_by(unit, T):
        x = optimum_blocks.get(unit["name"], 0)
        if x <= 0:
            return 0.0
        rate = x / block_time(unit, x)
        changes = sorted(unit.get("slowdown") or [])
        edges = [0.0] + [c[0] for c in changes] + [float("inf")]
        factors = [1.0] + [c[1] for c in changes]
        return sum(rate / f * max(0.0, min(edges[i + 1], T) - edges[i]) for i, f in enumerate(factors))

    return least_time(lambda T: sum(work_by(u, T) for u in units) >= workload)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("scenarios", nargs="+")
    parser.add_argument("--trust", default="2,4,8", help="comma-separated growth factors (default 2,4,8)")
    parser.add_argument("--json", action="store_true", help="one JSON object per scenario instead of the table")
    args = parser.parse_args()
    try:
        trusts = [float(t) for t in args.trust.split(",")]
    except ValueError:
        sys.exit(f"--trust must be comma-separated numbers >= 1 (e.g. 2,4,8), not '{args.trust}'")
    if not trusts or any(not t >= 1 for t in trusts):
        sys.exit(f"--trust must be comma-separated numbers >= 1 (e.g. 2,4,8), not '{args.trust}'")
    hetpu = os.path.join(args.build_dir, "tools", "hetpu")
    if not os.access(hetpu, os.X_OK):
        sys.exit(f"{hetpu} not found: build first (make -C {args.build_dir} tools/hetpu)")
    if not args.json:
        print("%-28s %10s  %s  %s" % ("scenario", "optimum_s", "  ".join("trust %-4g" % t for t in trusts),
                                      "with its slowdowns"))
    for path in args.scenarios:
        name = os.path.splitext(os.path.basename(path))[0]
        scenario = json.load(open(path))
        with tempfile.NamedTemporaryFile(suffix=".jsonl") as trace:
            out = subprocess.run([hetpu, "sim", "--scenario", path, "--policy", "optimum", "--json",
                                  "--trace", trace.name], capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"hetpu sim --scenario {path} --policy optimum failed: {out.stderr.strip()}")
            blocks = {}
            for line in open(trace.name):
                b = json.loads(line)
                blocks[b["unit"]] = blocks.get(b["unit"], 0) + b["size"]
        optimum = json.loads(out.stdout)["makespan_s"]
        changes = any(u.get("slowdown") for u in scenario["units"])
        bounds = {t: None if changes else ramp_bound(scenario, t) / optimum for t in trusts}
        fluid = fluid_with_changes(scenario, blocks) / optimum if changes else None
        if args.json:
            print(json.dumps({"scenario": name, "optimum_s": optimum,
                              "ramp_bound_over_optimum": {"%g" % t: b for t, b in bounds.items()},
                              "with_slowdowns_over_optimum": fluid}))
        else:
            cells = "  ".join("%-10s" % ("n/a" if b is None else "%.3f" % b) for b in bounds.values())
            print("%-28s %10.3f  %s  %s" % (name, optimum, cells, "" if fluid is None else "%.3f" % fluid))


if __name__ == "__main__":
    main()
