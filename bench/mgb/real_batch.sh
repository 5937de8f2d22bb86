#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu batch` on the real two-device PoCL node (two OpenCL devices with unequal memory
# limits, one CPU worker): a queue of kmeans and matmul jobs of different footprints run
# under sa, cg and mgb, the jobs of one batch sharing the devices through the node-wide
# arbiter. Records per job (JSON lines) and the throughput ratio to sa.
#   bash bench/mgb/real_batch.sh BUILD_DIR OUT_DIR
# The devices are PoCL threads on a 2-core machine: packing can only gain what the cores
# leave idle, so expect a modest ratio (the point here is that no job hangs or fails).
# MGB_NCPU=0 drops the CPU worker (devices only); MGB_DEV0_MIB / MGB_DEV1_MIB set the limits.
set -euo pipefail
build=${1:?usage: real_batch.sh BUILD_DIR OUT_DIR}
out=${2:?usage: real_batch.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
hetpu=$build/tools/hetpu kmeans=$build/apps/kmeans/hetpu-kmeans matmul=$build/apps/matmul/hetpu-matmul
for f in "$hetpu" "$kmeans" "$matmul"; do [ -x "$f" ] || { echo "real_batch.sh: missing $f (make it first)" >&2; exit 1; }; done

# The global limit would override the per-device ones (see docs/design.md, GPU packing).
unset STARPU_LIMIT_OPENCL_MEM
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=${MGB_NCPU:-1} STARPU_NCUDA=0
export POCL_MAX_PTHREAD_COUNT=1 STARPU_LIMIT_OPENCL_0_MEM=${MGB_DEV0_MIB:-32} STARPU_LIMIT_OPENCL_1_MEM=${MGB_DEV1_MIB:-128}
export STARPU_SILENT=1 HETPU_ACCOUNTING=0
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-mgb-batch.XXXXXX")
export STARPU_HOME
arbiter=/hetpu-mgb-bench-$$
export HETPU_MGB_ARBITER=$arbiter
trap 'rm -rf "$STARPU_HOME"; rm -f "/dev/shm${arbiter}"' EXIT

# Footprints from ~3 MiB (small kmeans) to ~50 MiB (matmul 1536: A alone is 18 MiB).
jobs=$out/jobs.txt
cat >"$jobs" <<JOBS
$matmul -n 1536 --verify
$kmeans --generate 1000000 --dims 4 -k 8 --max-iter 20
$matmul -n 1024 --verify
$kmeans --generate 400000 --dims 4 -k 8 --max-iter 20
$matmul -n 768 --verify
$kmeans --generate 2000000 --dims 8 -k 16 --max-iter 10
$matmul -n 1024 --verify
$kmeans --generate 1000000 --dims 4 -k 8 --max-iter 20
$matmul -n 768 --verify
$kmeans --generate 400000 --dims 4 -k 8 --max-iter 20
JOBS

# SA: as many workers as devices (the paper's setting); CG and MGB: 4 at once.
for run in "sa 2" "cg 4" "mgb 4"; do
    set -- $run
    echo "== STARPU_SCHED=$1, $2 workers"
    rc=0
    STARPU_SCHED=$1 "$hetpu" batch --jobs "$jobs" --workers "$2" --timeout "${MGB_TIMEOUT:-300}" --label "$1" \
        --json "$out/$1.jsonl" --log-dir "$out" 2>"$out/$1.progress" | tee "$out/$1.summary" || rc=$?
    [ "$rc" -eq 0 ] || echo "   (some jobs of $1 did not succeed: see $out/$1.jsonl)"
    mkdir -p "$out/logs-$1" && mv "$out"/job-*.out "$out"/job-*.err "$out/logs-$1/" 2>/dev/null || true
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
s = {}
for p in ("sa", "cg", "mgb"):
    s[p] = [json.loads(l) for l in open("%s/%s.jsonl" % (out, p)) if '"summary"' in l][0]
print("| policy | workers | ok | failed | timed out | crashed | makespan s | jobs/min | mean turnaround s | throughput / sa |")
print("|---|---|---|---|---|---|---|---|---|---|")
for p in ("sa", "cg", "mgb"):
    r = s[p]
    print("| %s | %d | %d | %d | %d | %d | %.1f | %.2f | %.1f | %.2f |" % (p, r["workers"], r["ok"], r["failed"], r["timed_out"],
          r["crashed"], r["makespan_s"], r["throughput_jobs_per_min"], r["mean_turnaround_s"],
          r["throughput_jobs_per_min"] / s["sa"]["throughput_jobs_per_min"] if s["sa"]["throughput_jobs_per_min"] else float("nan")))
json.dump(s, open("%s/summary.json" % out, "w"), indent=1)
PY
