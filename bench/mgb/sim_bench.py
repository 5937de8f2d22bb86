#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The MGB paper's evaluation (C. Chen, C. Porter, S. Pande, "Effective GPU Sharing Under
Compiler Guidance", Section V) reproduced with `hetpu mgb-sim` on W1-W8 mixes from
gen_workloads.py, several generator seeds:

  Fig. 5    throughput of SA, the best non-crashing CG (swept over worker counts, as the
            paper did) and MGB (Alg. 3), normalised to SA; 2xP100 (10 workers), 4xV100 (16)
  Table II  CG's crashed jobs (%) per worker count and mix
  Table III MGB's mean turnaround speedup over SA
  Fig. 4    Alg. 3 over Alg. 2 throughput, 4xV100
  Table IV  kernel slowdown (%) of Alg. 2 and Alg. 3 against running alone, 4xV100
  sweep     MGB with 6, 10, 16 workers (normalised to SA)
  NN        8 identical neural-network jobs that fit one V100: MGB vs schedGPU, 4xV100
  H100      W1-W8 on 4xH100 (80 GiB): MGB vs SA

    sim_bench.py HETPU OUT_DIR [--seeds 3] [--gpu-busy F]

Writes OUT_DIR/sim.jsonl (every run), OUT_DIR/summary.json, OUT_DIR/tables.md and gnuplot
PNGs. Every ratio compares runs of the same scenario file (same jobs, same noise draws).
--gpu-busy F runs it all on jobs rescaled to fraction F of GPU-busy time (gen_workloads.py
--gpu-busy; the NN workloads stay as they are).

    sim_bench.py HETPU OUT_DIR --busy-sweep [--seeds 3]

runs only the sensitivity of the 4xV100 results to the jobs' GPU-busy share: SA, the best
non-crashing CG and MGB on W1-W8 for F = 0.1 .. 0.6 and the tabled shapes; writes
OUT_DIR/sim.jsonl, OUT_DIR/busy_sweep.jsonl (one line per F), busy_sweep.md, busy_sweep.png.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree (it may be read-only)
from gen_workloads import gpu_busy_arg  # noqa: E402 (next to this script, not installed)
PLATFORMS = {  # name: (preset, devices, MGB workers (the paper's median), CG worker sweep)
    "2xP100": ("P100", 2, 10, [2, 3, 4, 5, 6]),
    "4xV100": ("V100", 4, 16, [4, 6, 8, 10, 12]),
    "4xH100": ("H100", 4, 16, []),
}
# The paper's numbers, for the tables (Fig. 4/5 bars are only given as averages and ranges).
PAPER = {
    "fig5_mgb_avg": {"2xP100": 2.2, "4xV100": 2.0},
    "fig5_mgb_over_cg": {"2xP100": 1.64, "4xV100": 1.41},
    "fig4_avg": 1.21,
    "table3": {"2xP100": [4.9, 2.3, 4.9, 4.3, 4.6, 3.2, 3.6, 2.0], "4xV100": [2.4, 2.0, 3.5, 2.6, 3.8, 2.9, 2.9, 2.6]},
    "table4_alg2": [-0.3, 1.0, 0.3, 4.1, 2.9, 5.1, 1.1, 0.6],
    "table4_alg3": [-0.7, 0.8, 7.0, 3.1, 2.2, 4.1, 0.4, 2.9],
    # Table II, crashed %, rows: workers 3/6, 4/8, 5/10, 6/12 (P100/V100), columns 1:1 2:1 3:1 5:1
    "table2": {"2xP100": {3: [0, 3, 8, 0], 4: [14, 6, 6, 9], 5: [13, 13, 20, 22], 6: [16, 17, 16, 16]},
               "4xV100": {6: [0, 6, 17, 0], 8: [13, 19, 25, 13], 10: [15, 25, 20, 25], 12: [33, 29, 38, 50]}},
    "nn": {"predict": 1.4, "generate": 2.2, "train": 3.1, "detect": 1.0},
}
MIX = ["1:1", "2:1", "3:1", "5:1"]
BUSY_SWEEP = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, None]  # None: the shapes as tabled in gen_workloads.py


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else float("nan")


class Runner:
    def __init__(self, hetpu, out):
        self.hetpu, self.out = hetpu, out
        self.log = open(os.path.join(out, "sim.jsonl"), "w")
        self.rows = []

    def run(self, scenario, policy, workers, tags, cg_ratio=None, seed=1):
        cmd = [self.hetpu, "mgb-sim", "--scenario", scenario, "--policy", policy, "--workers", str(workers),
               "--seed", str(seed), "--json", "--allow-rejected"]
        if cg_ratio:
            cmd += ["--cg-ratio", str(cg_ratio)]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        r.update(tags)
        self.log.write(json.dumps(r) + "\n")
        self.rows.append(r)
        return r


def gen(args, platform, seed, nn=False, gpu_busy=None):
    preset, count, workers, _ = PLATFORMS[platform]
    tag = "-nn" if nn else ("-busy%g" % gpu_busy if gpu_busy is not None else "")
    d = os.path.join(args.out, "scenarios", "%s-seed%d%s" % (platform, seed, tag))
    cmd = [sys.executable, os.path.join(HERE, "gen_workloads.py"), "--gpu", preset, "--count", str(count),
           "--workers", str(workers), "--seed", str(seed), "--out", d] + (["--nn"] if nn else [])
    if gpu_busy is not None:
        cmd += ["--gpu-busy", repr(gpu_busy)]
    subprocess.run(cmd, check=True)
    return d


def jobs_busy(scenario):
    """Mean standalone GPU-busy share of a scenario's jobs (kernel / (host + kernel) time),
    at the scenario's own kernel times."""
    with open(scenario) as f:
        jobs = json.load(f)["jobs"]
    shares = []
    for j in jobs:
        gpu = sum(k["seconds"] * k["repeat"] for k in j["kernels"])
        host = j["cpu_seconds"] + sum(k["host_seconds"] * k["repeat"] for k in j["kernels"])
        shares.append(gpu / (gpu + host))
    return mean(shares)


def device_busy(row):
    """Mean share of the makespan the devices had a kernel running, in %."""
    return mean(g["busy_pct"] for g in row["gpus"])


def best_cg(res, key, sweep):
    """Throughput of the best CG run without a crash (0 if every worker count crashed)."""
    ok = [res[key + ("cg%d" % cw,)]["throughput_jobs_per_hour"] for cw in sweep
          if res[key + ("cg%d" % cw,)]["jobs_crashed"] == 0]
    return max(ok) if ok else 0.0


def busy_sweep(args, R, seeds):
    """MGB and the best safe CG over SA on 4xV100 as the jobs' GPU-busy share varies: the
    gain depends on how much of a job's life its GPU sits idle, so one F alone says little."""
    platform = "4xV100"
    _, count, workers, cg_sweep = PLATFORMS[platform]
    lines, rows = [], []
    for f in BUSY_SWEEP:
        res, busy = {}, []
        for seed in seeds:
            d = gen(args, platform, seed, gpu_busy=f)
            for w in range(1, 9):
                sc = os.path.join(d, "W%d.json" % w)
                busy.append(jobs_busy(sc))
                tags = {"platform": platform, "workload": "W%d" % w, "gen_seed": seed, "gpu_busy": f}
                res[w, seed, "sa"] = R.run(sc, "sa", count, dict(tags, experiment="sa"), seed=seed)
                res[w, seed, "mgb"] = R.run(sc, "mgb", workers, dict(tags, experiment="mgb"), seed=seed)
                for cw in cg_sweep:
                    res[w, seed, "cg%d" % cw] = R.run(sc, "cg", cw, dict(tags, experiment="cg"), seed=seed)
        thr = lambda r: r["throughput_jobs_per_hour"]
        mgb_w = [mean(thr(res[w, s, "mgb"]) / thr(res[w, s, "sa"]) for s in seeds) for w in range(1, 9)]
        cg_w = [mean(best_cg(res, (w, s), cg_sweep) / thr(res[w, s, "sa"]) for s in seeds) for w in range(1, 9)]
        runs = [res[w, s, k] for w in range(1, 9) for s in seeds for k in ("sa", "mgb")]
        line = {"platform": platform, "gpu_busy": f, "jobs_busy_mean": mean(busy), "seeds": len(seeds),
                "mgb_over_sa": mgb_w, "mgb_over_sa_avg": mean(mgb_w), "mgb_over_sa_min": min(mgb_w),
                "cg_best_over_sa": cg_w, "cg_best_over_sa_avg": mean(cg_w),
                "alg3_kernel_slowdown_pct_avg": mean(res[w, s, "mgb"]["mean_kernel_slowdown_pct"]
                                                      for w in range(1, 9) for s in seeds),
                "device_busy_pct_sa": mean(device_busy(res[w, s, "sa"]) for w in range(1, 9) for s in seeds),
                "device_busy_pct_mgb": mean(device_busy(res[w, s, "mgb"]) for w in range(1, 9) for s in seeds),
                "mgb_crashed": sum(r["jobs_crashed"] for r in runs if r["policy"] == "mgb"),
                "max_sim_wall_s_32_jobs": max(r["sim_wall_s"] for r in res.values() if r["jobs"] == 32)}
        lines.append(line)
        label = "%g" % f if f is not None else "tabled"
        rows.append((label, [1.0, line["cg_best_over_sa_avg"], line["mgb_over_sa_avg"]]))
    with open(os.path.join(args.out, "busy_sweep.jsonl"), "w") as out:
        for line in lines:
            out.write(json.dumps(line) + "\n")
    plot(args.out, "busy_sweep", "4xV100, W1-W8, %d seeds: throughput / SA by the jobs' GPU-busy share F" % len(seeds),
         "throughput / SA (mean W1-W8)", ["SA", "CG (best non-crashing)", "MGB (Alg. 3)"], rows,
         extra="set xlabel \"F (V100 kernel time / standalone run time); tabled: the shapes as listed, mean F %.2f\"\n"
               "set arrow from graph 0, first 2 to graph 1, first 2 nohead dt 2 lc rgb 'gray40'" % lines[-1]["jobs_busy_mean"])
    md = ["| jobs' GPU-busy share F (V100) | MGB / SA mean (min) W1-W8 | best CG / SA | MGB / best CG "
          "| Alg. 3 kernel slowdown % | device busy % SA / MGB | MGB crashes |", "|---|---|---|---|---|---|---|"]
    for line in lines:
        md.append("| %s | %.2fx (%.2f) | %.2fx | %.2fx | %.1f | %.0f / %.0f | %d |" % (
            "%g" % line["gpu_busy"] if line["gpu_busy"] is not None else "tabled shapes (mean %.2f)" % line["jobs_busy_mean"],
            line["mgb_over_sa_avg"], line["mgb_over_sa_min"], line["cg_best_over_sa_avg"],
            line["mgb_over_sa_avg"] / line["cg_best_over_sa_avg"], line["alg3_kernel_slowdown_pct_avg"],
            line["device_busy_pct_sa"], line["device_busy_pct_mgb"], line["mgb_crashed"]))
    with open(os.path.join(args.out, "busy_sweep.md"), "w") as out:
        out.write("\n".join(md) + "\n")
    print("\n".join(md))


def plot(out, name, title, ylabel, columns, rows, extra=""):
    """Grouped bars: rows = [(label, [values...])], one bar per column."""
    if not shutil.which("gnuplot"):
        return
    dat = os.path.join(out, name + ".dat")
    with open(dat, "w") as f:
        f.write("x " + " ".join('"%s"' % c for c in columns) + "\n")
        for label, vals in rows:
            f.write('"%s" ' % label + " ".join("%.4f" % v for v in vals) + "\n")
    using = ", ".join("'%s' using %d:xtic(1) title columnhead(%d)" % (dat, i + 2, i + 2) for i in range(len(columns)))
    script = """set terminal pngcairo size 900,420 font ",11" noenhanced
set output "%s"
set title "%s"
set style data histogram; set style histogram cluster gap 1; set style fill solid 0.85 border -1
set ylabel "%s"; set yrange [0:*]; set grid ytics; set key outside right top
%s
plot %s
""" % (os.path.join(out, name + ".png"), title, ylabel, extra, using)
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def write_tables(args, S, f4, wait_ratio, t4a2, t4a3):
    """tables.md: the paper's figures beside ours (also printed)."""
    md = []
    f2 = lambda xs: " ".join("%.2f" % x for x in xs)
    md.append("Jobs: %s.\n" % ("rescaled to %g GPU-busy on a V100 (gen_workloads.py --gpu-busy)" % args.gpu_busy
                                if args.gpu_busy is not None else "the shapes as tabled in gen_workloads.py"))
    md.append("| | paper | ours |\n|---|---|---|")
    for platform in ("2xP100", "4xV100"):
        s = S[platform]
        md.append("| Fig. 5 MGB / SA, %s, mean W1-W8 | %.1fx | %.2fx (per W: %s) |" % (platform, PAPER["fig5_mgb_avg"][platform], s["fig5_mgb_avg"], f2(s["fig5_mgb"])))
        md.append("| Fig. 5 best non-crashing CG / SA, %s | (below MGB; < 1 on some W) | %.2fx (per W: %s) |" % (platform, s["fig5_cg_best_avg"], f2(s["fig5_cg_best"])))
        md.append("| MGB / best non-crashing CG, %s | %.2fx | %.2fx |" % (platform, PAPER["fig5_mgb_over_cg"][platform], s["mgb_over_best_cg_avg"]))
        md.append("| jobs' standalone GPU-busy share (mean), %s | ~0.3 (introduction) | %.2f |" % (platform, s["jobs_busy_mean"]))
        md.append("| device busy %% of the makespan, SA / MGB, %s | - | %.0f / %.0f |" % (platform, s["device_busy_pct_sa"], s["device_busy_pct_mgb"]))
        md.append("| Table III turnaround speedup, %s, W1-W8 | %s | %s |" % (platform, f2(PAPER["table3"][platform]), f2(s["table3"])))
        for cw, vals in s["table2"].items():
            paper = PAPER["table2"][platform].get(cw)
            md.append("| Table II CG crashed %%, %s, %d workers (1:1 2:1 3:1 5:1) | %s | %s |" % (
                platform, cw, " ".join("%d" % v for v in paper) if paper else "-", " ".join("%.0f" % v for v in vals)))
        md.append("| MGB / SA by workers 6 / 10 / 16, %s (mean W1-W8) | (6 ~ 16 workers; 10 ~10%% faster on P100 W2) | %s (W2: %s) |" % (
            platform, f2(s["sweep"][k] for k in (6, 10, 16)), f2(s["sweep_W2"][k] for k in (6, 10, 16))))
    md.append("| Fig. 4 Alg. 3 / Alg. 2, 4xV100 | %.2fx | %.2fx (per W: %s) |" % (PAPER["fig4_avg"], S["fig4"]["avg"], f2(f4)))
    md.append("| Alg. 2 wait for a device / Alg. 3's | 1.3x | %.1fx |" % wait_ratio)
    md.append("| Table IV kernel slowdown %%, Alg. 2, W1-W8 (avg) | %s (1.8) | %s (%.1f) |" % (f2(PAPER["table4_alg2"]), f2(t4a2), S["table4"]["alg2_avg"]))
    md.append("| Table IV kernel slowdown %%, Alg. 3, W1-W8 (avg) | %s (2.5) | %s (%.1f) |" % (f2(PAPER["table4_alg3"]), f2(t4a3), S["table4"]["alg3_avg"]))
    for k in ("predict", "generate", "train", "detect"):
        md.append("| Fig. 6 MGB / schedGPU, %s | %.1fx | %.2fx |" % (k, PAPER["nn"][k], S["nn"][k]["mgb_over_schedgpu"]))
    md.append("| 4xH100 MGB / SA, 16 / 32 workers (mean W1-W8) | - | %.2fx / %.2fx |" % (S["4xH100"]["mgb16_avg"], S["4xH100"]["mgb32_avg"]))
    md.append("| crashed jobs under mgb and mgb-exact, all %d runs | 0 | %d |" % (S["runs"], S["crashed_mgb_family"]))
    md.append("| slowest 32-job simulation | - | %.4f s |" % S["max_sim_wall_s_32_jobs"])
    with open(os.path.join(args.out, "tables.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))



def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("hetpu")
    p.add_argument("out")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--gpu-busy", type=gpu_busy_arg, metavar="F",
                   help="jobs rescaled to fraction F of GPU-busy time (see gen_workloads.py); default: as tabled")
    p.add_argument("--busy-sweep", action="store_true", help="only the 4xV100 sensitivity to F (busy_sweep.*)")
    args = p.parse_args()
    if args.busy_sweep and args.gpu_busy is not None:
        p.error("--busy-sweep sets F itself; leave out --gpu-busy")
    os.makedirs(args.out, exist_ok=True)
    R = Runner(args.hetpu, args.out)
    seeds = range(1, args.seeds + 1)
    if args.busy_sweep:
        busy_sweep(args, R, seeds)
        R.log.close()
        return
    res = {}  # (platform, W, seed, key) -> row
    dirs = {}  # (platform, seed) -> scenario directory

    for platform, (preset, count, workers, cg_sweep) in PLATFORMS.items():
        for seed in seeds:
            d = dirs[platform, seed] = gen(args, platform, seed, gpu_busy=args.gpu_busy)
            for w in range(1, 9):
                sc = os.path.join(d, "W%d.json" % w)
                tags = {"platform": platform, "workload": "W%d" % w, "gen_seed": seed}
                res[platform, w, seed, "sa"] = R.run(sc, "sa", count, dict(tags, experiment="sa"), seed=seed)
                res[platform, w, seed, "mgb"] = R.run(sc, "mgb", workers, dict(tags, experiment="mgb"), seed=seed)
                if platform == "4xH100":
                    res[platform, w, seed, "mgb32"] = R.run(sc, "mgb", 32, dict(tags, experiment="mgb32"), seed=seed)
                    continue
                res[platform, w, seed, "exact"] = R.run(sc, "mgb-exact", workers, dict(tags, experiment="mgb-exact"), seed=seed)
                for cw in cg_sweep:
                    res[platform, w, seed, "cg%d" % cw] = R.run(sc, "cg", cw, dict(tags, experiment="cg"), seed=seed)
                for sw in (6, 10, 16):
                    res[platform, w, seed, "sweep%d" % sw] = R.run(sc, "mgb", sw, dict(tags, experiment="sweep"), seed=seed)
    nn_dir = gen(args, "4xV100", 1, nn=True)
    nn = {}
    for kind in ("predict", "generate", "train", "detect"):
        sc = os.path.join(nn_dir, "nn-%s.json" % kind)
        for pol in ("mgb", "schedgpu", "sa"):
            nn[kind, pol] = R.run(sc, pol, 4 if pol == "sa" else 8, {"platform": "4xV100", "workload": "nn-" + kind,
                                                                      "experiment": "nn"})
    R.log.close()

    thr = lambda r: r["throughput_jobs_per_hour"]
    S = {"seeds": args.seeds, "gpu_busy": args.gpu_busy, "paper": PAPER}
    # Fig. 5 and the CG sweep.
    for platform in ("2xP100", "4xV100"):
        sweep = PLATFORMS[platform][3]
        cg_best, mgb_r, exact_r, mgb_over_cg, cg_none = [], [], [], [], 0
        for w in range(1, 9):
            cgs, ms = [], []
            for seed in seeds:
                sa = thr(res[platform, w, seed, "sa"])
                best = best_cg(res, (platform, w, seed), sweep)
                cg_none += best == 0.0
                cgs.append(best / sa)
                ms.append(thr(res[platform, w, seed, "mgb"]) / sa)
                if best > 0:
                    mgb_over_cg.append(thr(res[platform, w, seed, "mgb"]) / best)
            cg_best.append(mean(cgs))
            mgb_r.append(mean(ms))
        S[platform] = {"jobs_busy_mean": mean(jobs_busy(os.path.join(dirs[platform, s], "W%d.json" % w))
                                              for s in seeds for w in range(1, 9)),
                       "device_busy_pct_sa": mean(device_busy(res[platform, w, s, "sa"]) for w in range(1, 9) for s in seeds),
                       "device_busy_pct_mgb": mean(device_busy(res[platform, w, s, "mgb"]) for w in range(1, 9) for s in seeds),
                       "fig5_cg_best": cg_best, "fig5_mgb": mgb_r, "fig5_mgb_avg": mean(mgb_r), "fig5_cg_best_avg": mean(cg_best),
                       "mgb_over_best_cg_avg": mean(mgb_over_cg), "cg_runs_without_a_safe_ratio": cg_none}
        plot(args.out, "fig5_%s" % platform, "Throughput normalised to SA, %s (mean of %d seeds)" % (platform, args.seeds),
             "throughput / SA", ["SA", "CG (best non-crashing)", "MGB (Alg. 3)"],
             [("W%d" % w, [1.0, cg_best[w - 1], mgb_r[w - 1]]) for w in range(1, 9)])
        # Table II: crashed % per worker count, pooled over 16/32 jobs and seeds per mix.
        t2 = {}
        for cw in sweep:
            t2[cw] = []
            for m in range(4):
                rows = [res[platform, w, seed, "cg%d" % cw] for w in (m + 1, m + 5) for seed in seeds]
                t2[cw].append(100.0 * sum(r["jobs_crashed"] for r in rows) / sum(r["jobs"] for r in rows))
        S[platform]["table2"] = t2
        # Table III.
        t3 = [mean(res[platform, w, seed, "sa"]["mean_turnaround_s"] / res[platform, w, seed, "mgb"]["mean_turnaround_s"]
                   for seed in seeds) for w in range(1, 9)]
        S[platform]["table3"] = t3
        # Worker sweep.
        S[platform]["sweep"] = {sw: mean(thr(res[platform, w, seed, "sweep%d" % sw]) / thr(res[platform, w, seed, "sa"])
                                         for w in range(1, 9) for seed in seeds) for sw in (6, 10, 16)}
        S[platform]["sweep_W2"] = {sw: mean(thr(res[platform, 2, seed, "sweep%d" % sw]) / thr(res[platform, 2, seed, "sa"])
                                            for seed in seeds) for sw in (6, 10, 16)}
    plot(args.out, "workers_sweep", "MGB throughput / SA by worker count (mean over W1-W8 and seeds)", "throughput / SA",
         ["2xP100", "4xV100"], [("%d workers" % sw, [S["2xP100"]["sweep"][sw], S["4xV100"]["sweep"][sw]]) for sw in (6, 10, 16)])
    # Fig. 4 and Table IV on 4xV100.
    f4 = [mean(thr(res["4xV100", w, s, "mgb"]) / thr(res["4xV100", w, s, "exact"]) for s in seeds) for w in range(1, 9)]
    # A ratio of means: Alg. 3's wait is 0 on some light mixes.
    wait_ratio = mean(res["4xV100", w, s, "exact"]["mean_gpu_wait_s"] for w in range(1, 9) for s in seeds) / \
        max(1e-9, mean(res["4xV100", w, s, "mgb"]["mean_gpu_wait_s"] for w in range(1, 9) for s in seeds))
    t4a2 = [mean(res["4xV100", w, s, "exact"]["mean_kernel_slowdown_pct"] for s in seeds) for w in range(1, 9)]
    t4a3 = [mean(res["4xV100", w, s, "mgb"]["mean_kernel_slowdown_pct"] for s in seeds) for w in range(1, 9)]
    S["fig4"] = {"alg3_over_alg2": f4, "avg": mean(f4), "alg2_wait_over_alg3_wait": wait_ratio}
    S["table4"] = {"alg2": t4a2, "alg3": t4a3, "alg2_avg": mean(t4a2), "alg3_avg": mean(t4a3)}
    plot(args.out, "fig4_alg3_vs_alg2", "Alg. 3 throughput normalised to Alg. 2, 4xV100, 16 workers", "throughput / Alg. 2",
         ["Alg. 2", "Alg. 3"], [("W%d" % w, [1.0, f4[w - 1]]) for w in range(1, 9)])
    plot(args.out, "table4_slowdown", "Kernel slowdown vs running alone, 4xV100 (ours; paper: 1.8% / 2.5% on average)",
         "slowdown %", ["Alg. 2 (mgb-exact)", "Alg. 3 (mgb)"], [("W%d" % w, [t4a2[w - 1], t4a3[w - 1]]) for w in range(1, 9)])
    # H100.
    S["4xH100"] = {"mgb16": [mean(thr(res["4xH100", w, s, "mgb"]) / thr(res["4xH100", w, s, "sa"]) for s in seeds) for w in range(1, 9)],
                   "mgb32": [mean(thr(res["4xH100", w, s, "mgb32"]) / thr(res["4xH100", w, s, "sa"]) for s in seeds) for w in range(1, 9)]}
    S["4xH100"]["mgb16_avg"], S["4xH100"]["mgb32_avg"] = mean(S["4xH100"]["mgb16"]), mean(S["4xH100"]["mgb32"])
    plot(args.out, "h100", "4xH100 (80 GiB): MGB throughput normalised to SA", "throughput / SA",
         ["SA", "MGB 16 workers", "MGB 32 workers"],
         [("W%d" % w, [1.0, S["4xH100"]["mgb16"][w - 1], S["4xH100"]["mgb32"][w - 1]]) for w in range(1, 9)])
    # NN.
    S["nn"] = {k: {"mgb_over_schedgpu": thr(nn[k, "mgb"]) / thr(nn[k, "schedgpu"]), "mgb_over_sa": thr(nn[k, "mgb"]) / thr(nn[k, "sa"]),
                   "schedgpu_slowdown_pct": nn[k, "schedgpu"]["mean_kernel_slowdown_pct"]}
               for k in ("predict", "generate", "train", "detect")}
    plot(args.out, "nn_schedgpu", "8 identical NN jobs, 4xV100: throughput normalised to schedGPU", "throughput / schedGPU",
         ["schedGPU", "MGB"], [(k, [1.0, S["nn"][k]["mgb_over_schedgpu"]]) for k in ("predict", "generate", "train", "detect")])
    # Safety and speed.
    S["crashed_mgb_family"] = sum(r["jobs_crashed"] for r in R.rows if r["policy"] in ("mgb", "mgb-exact"))
    S["rejected_all"] = sum(r["jobs_rejected"] for r in R.rows)
    S["max_sim_wall_s_32_jobs"] = max(r["sim_wall_s"] for r in R.rows if r["jobs"] == 32)
    S["runs"] = len(R.rows)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(S, f, indent=1)

    write_tables(args, S, f4, wait_ratio, t4a2, t4a3)


if __name__ == "__main__":
    main()
