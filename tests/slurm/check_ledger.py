# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ledger rows of one Slurm job against what Slurm reports for it.

usage: check_ledger.py LEDGER SITE_TOML JOB_ID ROWS PARTITION TRES

TRES is the job's AllocTRES as sacct reports it ("billing=6,cpu=2,gres/gpu=2,mem=1G,node=1").
Checks that the ledger has exactly ROWS rows carrying JOB_ID; that each names PARTITION and
holds per node the CPUs, GPUs and memory of TRES; that its fractions, weight and SU are the
accounting paper's model for that allocation (Eq. 1, 9, 15, computed here from the site's
TOML, not by hetpu); and that the SU per hour equals Slurm's billing (which Slurm truncates
to an integer). Prints one line per row.
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


def main():
    ledger, site, job_id, rows, partition, tres_text = sys.argv[1:7]
    tres = parse_tres(tres_text)
    p = tomllib.load(open(site, "rb"))["partition"][partition]
    C, M, G = p["cores_per_node"], p["mem_gib_per_node"], p.get("gpus_per_node", 0)
    # Eq. 15: C for a CPU partition, (sum of GPU TDPs / sum of CPU TDPs) x C for a GPU one.
    weight = C if G == 0 else G * p["gpu_tdp_w"] / (p.get("cpu_sockets", 1) * p["cpu_tdp_w"]) * C
    nodes = int(tres.get("node", 1))
    cpus, gpus, mem_gib = tres["cpu"] / nodes, tres.get("gres/gpu", 0) / nodes, tres["mem_mib"] / 1024 / nodes
    fc = min(cpus, C) / C
    fg = min(gpus, G) / G if G else 0.0
    fm = math.ceil(min(mem_gib, M) / (M / C) - 1e-9) / C  # Eq. 9: whole per-core shares
    rate = weight * nodes * max(fc, fg, fm)  # SU per hour
    billing = tres["billing"]

    db = sqlite3.connect(ledger)
    got = db.execute(
        "SELECT partition, fraction_source, nodes, cores, gpus, mem_gib, fc, fg, fm, weight, wall_s, su"
        " FROM jobs WHERE slurm_job_id = ? ORDER BY id", (job_id,)).fetchall()
    assert len(got) == int(rows), f"job {job_id}: {len(got)} ledger rows, expected {rows}"
    others = db.execute("SELECT COUNT(*) FROM jobs WHERE slurm_job_id != ?", (job_id,)).fetchone()[0]
    for (part, source, r_nodes, r_cores, r_gpus, r_mem, r_fc, r_fg, r_fm, r_weight, wall_s, su) in got:
        row = f"job {job_id}: partition {part}, {r_cores:g} CPUs, {r_gpus:g} GPUs, {r_mem:.4g} GiB"
        assert part == partition, f"{row}: Slurm ran it in partition {partition}"
        assert source == "slurm", f"{row}: fractions from '{source}', not the Slurm allocation"
        assert r_nodes == nodes, f"{row}: {r_nodes} nodes, Slurm allocated {nodes}"
        assert r_cores == cpus, f"{row}: Slurm allocated {cpus:g} CPUs per node"
        assert r_gpus == gpus, f"{row}: Slurm allocated {gpus:g} GPUs per node"
        assert abs(r_mem - mem_gib) < 1e-9, f"{row}: Slurm allocated {mem_gib:.6g} GiB per node"
        for name, mine, theirs in (("fc", r_fc, fc), ("fg", r_fg, fg), ("fm", r_fm, fm), ("weight", r_weight, weight)):
            assert abs(mine - theirs) < 1e-9, f"{row}: {name} {mine!r}, the paper's model gives {theirs!r}"
        want_su = weight * wall_s / 3600 * nodes * max(fc, fg, fm)
        assert abs(su - want_su) <= 1e-9 * max(1, want_su), f"{row}: SU {su!r}, the model gives {want_su!r}"
        # Slurm's billing is the same rate, truncated to an integer.
        assert billing == math.floor(rate + 1e-9), \
            f"{row}: hetpu charges {rate:g} SU per hour, Slurm bills {billing:g} (TRES {tres_text})"
        print(f"  {row}; fractions c {r_fc:.4g} g {r_fg:.4g} m {r_fm:.4g}; {r_weight:g} SU/node-hour;"
              f" {su:.6g} SU for {wall_s:.2f} s = {rate:g} SU/h; Slurm billing {billing:g}")
    return others


if __name__ == "__main__":
    main()
