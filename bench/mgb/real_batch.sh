#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `hetpu batch` on real devices: a queue of kmeans and matmul jobs of different footprints run
# under sa, cg and mgb, the jobs of one batch sharing the devices through the node-wide
# arbiter. ROUNDS rounds, the policies' order rotated each round; a policy's figure is the
# median over rounds of its throughput over sa's in the same round, so load that comes and
# goes between rounds cancels out. Every job must succeed: a job that fails, times out or runs
# out of device memory is counted beside its policy.
#   bash bench/mgb/real_batch.sh BUILD_DIR OUT_DIR
# NODE_GPU=opencl (the default): the two-device PoCL node (two OpenCL devices with unequal
#   memory limits, MGB_DEV0_MIB / MGB_DEV1_MIB, 32 and 128 by default, and MGB_NCPU (1) CPU
#   workers). OpenCL devices take turns between processes, so mgb runs with
#   HETPU_MGB_COLOCATION unset (auto: time-sliced). The devices are PoCL threads on the
#   machine's cores: packing gains only what the cores leave idle.
# NODE_GPU=cuda: the machine's CUDA devices, each limited to MGB_DEV_MIB (640) so that a few
#   jobs fill one; the jobs are sized for it. The rounds run twice: without MPS (time-sliced)
#   and, where nvidia-cuda-mps-control can start a daemon, with one (mps); HETPU_MGB_COLOCATION
#   stays unset, so the policies detect the model themselves.
# Environment: ROUNDS (3), MGB_TIMEOUT (300 s per job), MGB_WORKERS (jobs at once under cg and
# mgb; default twice the devices, at least 4; sa runs one per device, as in the MGB paper).
# Writes OUT_DIR/<model>/<round>/<policy>.jsonl (hetpu batch's records), OUT_DIR/runs.jsonl (one
# line per batch), OUT_DIR/summary.txt (the table) and summary.json. Exits 1 when a job failed.
set -euo pipefail
build=${1:?usage: real_batch.sh BUILD_DIR OUT_DIR}
out=${2:?usage: real_batch.sh BUILD_DIR OUT_DIR}
node_gpu=${NODE_GPU:-opencl}
rounds=${ROUNDS:-3}
mkdir -p "$out"
hetpu=$build/tools/hetpu kmeans=$build/apps/kmeans/hetpu-kmeans matmul=$build/apps/matmul/hetpu-matmul
for f in "$hetpu" "$kmeans" "$matmul"; do [ -x "$f" ] || { echo "real_batch.sh: missing $f (make it first)" >&2; exit 1; }; done
command -v python3 >/dev/null || { echo "real_batch.sh needs python3" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-mgb-batch.XXXXXX")
arbiter=/hetpu-mgb-bench-$$
mps_started=
stop_mps() {
  [ -n "$mps_started" ] || return 0
  echo quit | nvidia-cuda-mps-control >/dev/null 2>&1 || true
  mps_started=
}
trap 'stop_mps; rm -rf "$work"; rm -f "/dev/shm${arbiter}"' EXIT
export STARPU_HOME=$work/starpu STARPU_SILENT=1 HETPU_ACCOUNTING=0 HETPU_MGB_ARBITER=$arbiter
mkdir -p "$STARPU_HOME"
# The global limits would override the per-device ones (see docs/design.md, GPU packing).
unset STARPU_LIMIT_OPENCL_MEM STARPU_LIMIT_CUDA_MEM HETPU_MGB_COLOCATION

jobs=$out/jobs.txt
case "$node_gpu" in
  opencl)
    devices=2
    export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=${MGB_NCPU:-1}
    export STARPU_NCUDA=0 POCL_MAX_PTHREAD_COUNT=1
    export STARPU_LIMIT_OPENCL_0_MEM=${MGB_DEV0_MIB:-32} STARPU_LIMIT_OPENCL_1_MEM=${MGB_DEV1_MIB:-128}
    models=(time-sliced)
    # Footprints from ~3 MiB (small kmeans) to ~50 MiB (matmul 1536: A alone is 18 MiB).
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
    ;;
  cuda)
    devices=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    [ "${devices:-0}" -gt 0 ] || { echo "real_batch.sh: NODE_GPU=cuda but nvidia-smi lists no GPU" >&2; exit 1; }
    export STARPU_NCUDA=$devices STARPU_NOPENCL=0 STARPU_NCPU=${MGB_NCPU:-1}
    for ((d = 0; d < devices; ++d)); do export "STARPU_LIMIT_CUDA_${d}_MEM=${MGB_DEV_MIB:-640}"; done
    models=(time-sliced)
    if command -v nvidia-cuda-mps-control >/dev/null; then models+=(mps); else
      echo "real_batch.sh: no nvidia-cuda-mps-control here: time-sliced rounds only" >&2
    fi
    # Footprints of ~100-400 MiB (matmul 4096: three 128 MiB matrices) under a 640 MiB limit.
    cat >"$jobs" <<JOBS
$matmul -n 4096 --verify
$kmeans --generate 4000000 --dims 8 -k 16 --max-iter 20
$matmul -n 3072 --verify
$kmeans --generate 2000000 --dims 8 -k 16 --max-iter 20
$matmul -n 2048 --verify
$kmeans --generate 8000000 --dims 4 -k 16 --max-iter 10
$matmul -n 3072 --verify
$kmeans --generate 4000000 --dims 4 -k 8 --max-iter 20
JOBS
    ;;
  *) echo "real_batch.sh: NODE_GPU must be opencl or cuda, not '$node_gpu'" >&2; exit 2 ;;
esac
workers=${MGB_WORKERS:-$((2 * devices > 4 ? 2 * devices : 4))}

start_mps() {  # a private MPS daemon; false when it cannot start (not root, devices in use...)
  export CUDA_MPS_PIPE_DIRECTORY=$work/mps-pipe CUDA_MPS_LOG_DIRECTORY=$work/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  nvidia-cuda-mps-control -d || return 1
  mps_started=1
  for _ in 1 2 3 4 5 6 7 8 9 10; do [ -S "$CUDA_MPS_PIPE_DIRECTORY/control" ] && return 0; sleep 0.5; done
  echo "real_batch.sh: the MPS daemon did not open its control socket" >&2
  return 1
}

runs=$out/runs.jsonl
: >"$runs"
policies=(sa cg mgb)
failed=0
for model in "${models[@]}"; do
  if [ "$model" = mps ]; then
    start_mps || { echo "real_batch.sh: could not start an MPS daemon: no mps rounds" >&2; stop_mps; continue; }
  fi
  for ((r = 0; r < rounds; ++r)); do
    dir=$out/$model/$r
    mkdir -p "$dir"
    for ((k = 0; k < ${#policies[@]}; ++k)); do
      policy=${policies[$(((k + r) % ${#policies[@]}))]}
      n=$workers
      [ "$policy" != sa ] || n=$devices
      echo "== $model, round $((r + 1))/$rounds: STARPU_SCHED=$policy, $n jobs at once" >&2
      rm -f "/dev/shm${arbiter}"
      rc=0
      STARPU_SCHED=$policy "$hetpu" batch --jobs "$jobs" --workers "$n" --timeout "${MGB_TIMEOUT:-300}" \
        --label "$policy" --json "$dir/$policy.jsonl" --log-dir "$dir" 2>"$dir/$policy.progress" >"$dir/$policy.summary" ||
        rc=$?
      [ "$rc" -eq 0 ] || { echo "   some jobs of $policy did not succeed: see $dir/$policy.jsonl" >&2; failed=1; }
      mkdir -p "$dir/logs-$policy" && mv "$dir"/job-*.out "$dir"/job-*.err "$dir/logs-$policy/" 2>/dev/null || true
      python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][0]
print(json.dumps({"model": sys.argv[2], "round": int(sys.argv[3]), "policy": sys.argv[4], "workers": s["workers"],
                  "ok": s["ok"], "failed": s["failed"], "timed_out": s["timed_out"], "crashed": s["crashed"],
                  "makespan_s": s["makespan_s"], "throughput_jobs_per_min": s["throughput_jobs_per_min"],
                  "mean_turnaround_s": s["mean_turnaround_s"]}))' "$dir/$policy.jsonl" "$model" "$r" "$policy" >>"$runs"
    done
  done
  [ "$model" != mps ] || stop_mps
done

python3 - "$out" "$node_gpu" <<'PY'
import json, statistics, sys
out, node = sys.argv[1], sys.argv[2]
runs = [json.loads(l) for l in open(out + "/runs.jsonl")]
rows, summary = [], []
rows.append("%s node: median over rounds of throughput / sa's in the same round" % node)
rows.append("")
rows.append("| co-location | policy | jobs at once | rounds | ok | failed, timed out, crashed | makespan s (median) | throughput / sa (median) | per round |")
rows.append("|---|---|---|---|---|---|---|---|---|")
for model in dict.fromkeys(r["model"] for r in runs):
    sa = {r["round"]: r for r in runs if r["model"] == model and r["policy"] == "sa"}
    for policy in ("sa", "cg", "mgb"):
        rs = [r for r in runs if r["model"] == model and r["policy"] == policy]
        if not rs:
            continue
        ratios = [r["throughput_jobs_per_min"] / sa[r["round"]]["throughput_jobs_per_min"]
                  for r in rs if r["round"] in sa and sa[r["round"]]["throughput_jobs_per_min"] > 0]
        median = statistics.median(ratios) if ratios else float("nan")
        bad = (sum(r["failed"] for r in rs), sum(r["timed_out"] for r in rs), sum(r["crashed"] for r in rs))
        rows.append("| %s | %s | %d | %d | %d | %d, %d, %d | %.1f | %.2f | %s |" % (
            model, policy, rs[0]["workers"], len(rs), sum(r["ok"] for r in rs), *bad,
            statistics.median(r["makespan_s"] for r in rs), median, " ".join("%.2f" % x for x in ratios)))
        summary.append({"model": model, "policy": policy, "rounds": len(rs), "throughput_over_sa_median": median,
                        "ratios": ratios, "failed_timed_out_crashed": bad})
text = "\n".join(rows) + "\n"
open(out + "/summary.txt", "w").write(text)
json.dump(summary, open(out + "/summary.json", "w"), indent=1)
sys.stdout.write(text)
PY
exit $failed
