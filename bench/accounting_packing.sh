#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# What a packed batch is billed. The four apps (matmul, grn, kmeans, fft2d) start
# at once on a node of two PoCL devices charged as GPUs (HETPU_ACCOUNTING_OPENCL_AS_GPU=1),
# once under mgb (packed: tasks of several processes share a device) and once under sa (one
# task per device at a time), REPS times each, alternating. Every run charges its ledger row;
# the table puts side by side, per job: wall time, the GPU fraction allocated (whole devices,
# the charge where devices are not shared) and the one charged (its share of the devices), the SU billed,
# the SU the allocation would have billed, and its part of the devices' energy.
#
# The energy sensor is the fake NVML library in clock mode (GPU 0 draws a constant 100 W,
# GPU 1 200 W): PoCL devices have no power sensor, so the joules show how the split works,
# not what a real GPU draws. The partition is a GPU node described in a config (16 cores,
# 64 GiB, 2 GPUs of 300 W), so that the GPU fraction is what decides the bill.
#
# Usage: bench/accounting_packing.sh [BUILD_DIR] [OUT_DIR] [REPS]
#        (defaults: _build, results/accounting, 3). Needs python3; gnuplot for the plot.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/_build}" && pwd)
out=${2:-$top/results/accounting}
reps=${3:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fake="$build/tests/fakes/.libs/libfake_nvml.so"
[ -e "$fake" ] || { echo "missing $fake: run make -C $build check TESTS= first" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-packing.XXXXXX")
arbiter=/hetpu-packing-$$
trap 'rm -rf "$work"; rm -f "/dev/shm${arbiter}"' EXIT

cat >"$work/site.toml" <<'EOF'
[partition.gpu]
cores_per_node = 16
mem_gib_per_node = 64
cpu_tdp_w = 100
gpus_per_node = 2
gpu_tdp_w = 300
EOF
export HETPU_PARTITION_CONFIG="$work/site.toml" HETPU_ACCOUNTING_OPENCL_AS_GPU=1
export HETPU_NVML_LIBRARY="$fake" FAKE_NVML_MODE=clock FAKE_NVML_WATTS=100 HETPU_ACCOUNTING_QUIET=1
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1 STARPU_NCUDA=0
export POCL_MAX_PTHREAD_COUNT=1 STARPU_LIMIT_OPENCL_0_MEM=64 STARPU_LIMIT_OPENCL_1_MEM=64 STARPU_SILENT=1
export HETPU_MGB_ARBITER=$arbiter STARPU_HOME="$work/starpu" HETPU_HOME="$work/home"
unset STARPU_LIMIT_OPENCL_MEM HETPU_ACCOUNTING_GPU_SHARE HETPU_ENERGY

# batch POLICY [LEDGER]: the four apps at once, each charged into LEDGER (default
# $work/POLICY.sqlite).
batch() {
    export STARPU_SCHED=$1 HETPU_LEDGER="${2:-$work/$1.sqlite}"
    pids=
    "$build/apps/matmul/hetpu-matmul" -n 1024 --block 128 >"$work/o1" 2>&1 &
    pids="$pids $!"
    "$build/apps/grn/hetpu-grn" --generate 60 --samples 120 --block 60 >"$work/o2" 2>&1 &
    pids="$pids $!"
    "$build/apps/kmeans/hetpu-kmeans" --generate 200000 --dims 3 -k 4 --block 20000 >"$work/o3" 2>&1 &
    pids="$pids $!"
    "$build/apps/fft2d/hetpu-fft2d" -n 512 --block 32 >"$work/o4" 2>&1 &
    pids="$pids $!"
    for p in $pids; do
        wait "$p" || { cat "$work"/o[1-4] >&2; echo "a $1 job failed" >&2; exit 1; }
    done
}

# A discarded batch per policy first: StarPU calibrates its performance models on the first
# runs (in STARPU_HOME), which would weigh on whichever policy went first.
batch mgb "$work/warmup.sqlite"
batch sa "$work/warmup.sqlite"
r=0
while [ "$r" -lt "$reps" ]; do
    batch mgb
    batch sa
    r=$((r + 1))
done

python3 - "$work/mgb.sqlite" "$work/sa.sqlite" "$out" "$reps" <<'PY'
import sqlite3, sys
out, reps = sys.argv[3], int(sys.argv[4])
rows, totals = [], {}
for path in sys.argv[1:3]:
    con = sqlite3.connect(path)
    for (jid, app, policy, wall, fc, fg, fga, fm, weight, su, share) in con.execute(
            "SELECT id, app, policy, wall_s, fc, fg, fg_allocated, fm, weight, su, gpu_share FROM jobs ORDER BY id"):
        dev = con.execute("SELECT SUM(energy_j), SUM(share_h), MAX(peers) FROM job_devices WHERE job_id = ?",
                          (jid,)).fetchone()
        su_alloc = weight * wall / 3600 * max(fc, fga, fm)
        rows.append((policy, app, wall, fga, fg, su, su_alloc, dev[0] or 0.0, dev[1] or 0.0, dev[2] or 0))
        t = totals.setdefault(policy, [0.0] * 4)
        t[0] += su; t[1] += su_alloc; t[2] += dev[0] or 0.0; t[3] += 1
with open(out + "/packing.txt", "w") as f:
    head = "%-6s %-14s %8s %8s %8s %12s %12s %12s %6s" % (
        "policy", "app", "wall s", "fg alloc", "fg used", "SU billed", "SU by alloc", "device J", "peers")
    print(head); f.write(head + "\n")
    for r in rows:
        line = "%-6s %-14s %8.2f %8.3f %8.3f %12.5f %12.5f %12.1f %6d" % (r[0], r[1], r[2], r[3], r[4], r[5], r[6],
                                                                         r[7], r[9])
        print(line); f.write(line + "\n")
    for p in ("mgb", "sa"):
        if p in totals:
            t = totals[p]
            line = "total %-4s %d jobs: %.5f SU billed (%.5f by allocation), %.1f J of device energy" % (
                p, t[3], t[0], t[1], t[2])
            print(line); f.write(line + "\n")
with open(out + "/packing.dat", "w") as f:
    f.write("# app su_mgb su_sa su_alloc_mgb su_alloc_sa joules_mgb joules_sa (sums over %d batches)\n" % reps)
    for app in sorted(set(r[1] for r in rows)):
        def s(policy, i):
            return sum(r[i] for r in rows if r[0] == policy and r[1] == app)
        f.write("%s %.6g %.6g %.6g %.6g %.6g %.6g\n" % (app, s("mgb", 5), s("sa", 5), s("mgb", 6), s("sa", 6),
                                                       s("mgb", 7), s("sa", 7)))
PY

if command -v gnuplot >/dev/null 2>&1; then
    gnuplot <<EOF
set terminal pngcairo size 900,420 noenhanced
set output "$out/packing.png"
set multiplot layout 1,2 title "Four apps at once on two shared devices: mgb (packed) vs sa"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "SU billed"
set key top left
set xtics rotate by -30
set yrange [0:*]
plot "$out/packing.dat" using 2:xtic(1) title "mgb (use)", '' using 3 title "sa (use)", \
     '' using 4 title "mgb, by allocation"
set ylabel "device energy share (J)"
plot "$out/packing.dat" using 6:xtic(1) title "mgb", '' using 7 title "sa"
unset multiplot
EOF
    echo "plot: $out/packing.png"
fi
echo "table: $out/packing.txt"
