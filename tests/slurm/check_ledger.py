# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ledger rows of one Slurm job against what Slurm reports for it.

usage: check_ledger.py LEDGER SITE_TOML JOB_ID PARTITION JOB_TRES [RUN_TRES...]

JOB_TRES is the job's AllocTRES as sacct reports it ("billing=6,cpu=2,gres/gpu=2,mem=1G,node=1");
each RUN_TRES what one run held: the AllocTRES of the job step it ran in, or the job's for a
run outside any step (salloc's shell); none: one run, holding the job's.
Checks that the ledger has exactly one row per run carrying JOB_ID; that each names
PARTITION and holds per node the CPUs, GPUs and memory of one RUN_TRES (matched as a
multiset); that its fractions, weight and SU are the accounting paper's model for that
allocation (Eq. 1, 9, 15, computed here from the site's TOML, not by hetpu); and, for a run
holding the whole job, that the SU per hour equals Slurm's billing of the job (which Slurm
truncates to an integer). Prints one line per row.
"""
import math
import sqlite3
import sys
import tomllib


def parse_tres(text):
    out = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        if key == "mem":
            unit = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[value[-1]]
            out["mem_mib"] = float(value[:-1]) * unit
        elif key:
            out[key] = float(value)
    return out


def holdings(tres):
    nodes = int(tres.get("node", 1))
    return nodes, tres["cpu"] / nodes, tres.get("gres/gpu", 0) / nodes, tres["mem_mib"] / 1024 / nodes


def main():
    ledger, site, job_id, partition, job_text = sys.argv[1:6]
    runs = sys.argv[6:] or [job_text]
    job = parse_tres(job_text)
    p = tomllib.load(open(site, "rb"))["partition"][partition]
    C, M, G = p["cores_per_node"], p["mem_gib_per_node"], p.get("gpus_per_node", 0)
    # Eq. 15: C for a CPU partition, (sum of GPU TDPs / sum of CPU TDPs) x C for a GPU one.
    weight = C if G == 0 else G * p["gpu_tdp_w"] / (p.get("cpu_sockets", 1) * p["cpu_tdp_w"]) * C

    db = sqlite3.connect(ledger)
    got = db.execute(
        "SELECT partition, fraction_source, nodes, cores, gpus, mem_gib, fc, fg, fm, weight, wall_s, su"
        " FROM jobs WHERE slurm_job_id = ? ORDER BY id", (job_id,)).fetchall()
    assert len(got) == len(runs), f"job {job_id}: {len(got)} ledger rows, expected {len(runs)} (one per run)"
    left = [parse_tres(t) for t in runs]
    for (part, source, r_nodes, r_cores, r_gpus, r_mem, r_fc, r_fg, r_fm, r_weight, wall_s, su) in got:
        row = f"job {job_id}: partition {part}, {r_nodes} node(s), {r_cores:g} CPUs, {r_gpus:g} GPUs, {r_mem:.4g} GiB"
        assert part == partition, f"{row}: Slurm ran it in partition {partition}"
        assert source == "slurm", f"{row}: fractions from '{source}', not the Slurm allocation"
        match = [t for t in left if holdings(t)[:3] == (r_nodes, r_cores, r_gpus) and abs(holdings(t)[3] - r_mem) < 1e-9]
        assert match, f"{row}: Slurm allocated none of its runs that: {runs}"
        tres = match[0]
        left.remove(tres)
        nodes, cpus, gpus, mem_gib = holdings(tres)
        fc = min(cpus, C) / C
        fg = min(gpus, G) / G if G else 0.0
        fm = math.ceil(min(mem_gib, M) / (M / C) - 1e-9) / C  # Eq. 9: whole per-core shares
        rate = weight * nodes * max(fc, fg, fm)  # SU per hour
        for name, mine, theirs in (("fc", r_fc, fc), ("fg", r_fg, fg), ("fm", r_fm, fm), ("weight", r_weight, weight)):
            assert abs(mine - theirs) < 1e-9, f"{row}: {name} {mine!r}, the paper's model gives {theirs!r}"
        want_su = weight * wall_s / 3600 * nodes * max(fc, fg, fm)
        assert abs(su - want_su) <= 1e-9 * max(1, want_su), f"{row}: SU {su!r}, the model gives {want_su!r}"
        note = ""
        if holdings(tres) == holdings(job):
            # Slurm's billing of the job is the same rate, truncated to an integer.
            assert job["billing"] == math.floor(rate + 1e-9), \
                f"{row}: hetpu charges {rate:g} SU per hour, Slurm bills {job['billing']:g} (TRES {job_text})"
            note = f" = Slurm's billing {job['billing']:g}"
        else:
            note = f" (a step holding part of the job, billed {job['billing']:g} as a whole)"
        print(f"  {row}; fractions c {r_fc:.4g} g {r_fg:.4g} m {r_fm:.4g}; {r_weight:g} SU/node-hour;"
              f" {su:.6g} SU for {wall_s:.2f} s: {rate:g} SU/h{note}")


if __name__ == "__main__":
    main()
