#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# One prepared command for a borrowed GPU machine (run it whenever one is available; it
# explores nothing): builds what it needs, then measures in phases, each timed and each
# skippable, and writes OUT_DIR/summary.md and OUT_DIR/summary.json.
#   build  StarPU with CUDA (STARPU_PREFIX, else TOP/_starpu-cuda, else ./run cuda-check's
#          cached build) and hetpu against it in BUILD_DIR (default _build-gpu); NODE_GPU=opencl:
#          ./run build. A lent GPU machine reaches no network, so bring the StarPU build along:
#          `cp -r ~/.cache/hetpu/starpu-cuda-* _starpu-cuda` here (about 6 MB) and carry
#          `_starpu-cuda` with the command.
#   apps   matmul, grn and k-means at two job lengths (short ~0.2 s, long ~5 s on one
#          H100/H200 beside 15 CPU workers, sized from the recorded traces' rates) under
#          plb-hac (from its saved models, and plb-hac-starpu: a first run from StarPU's
#          calibration), hdss, calibrated dmda, eager and ws, the GPU alone and the CPUs alone
#          (the CPUs alone on the short jobs only: on a long job they would take minutes;
#          the long table then compares with the GPU alone and dmda), interleaved, every
#          run verified (bench/plbhac_node_limit.sh does the runs).
#   ckpt   the checkpoint device tier against the host tier (bench/ckpt_device: application
#          blocking per checkpoint of device-resident data, device to device vs device to host;
#          bench/ckpt_rtm_device: the RTM-like workload with its blocks computed on the GPUs;
#          tests/ckpt/heat_restart.sh: hetpu-heat killed and restarted from device-tier checkpoints).
#   mgb    MGB batches on the real devices (bench/mgb/real_batch.sh): sa, cg and mgb, time-sliced
#          and, where an MPS daemon can be started, under MPS.
# Usage: bench/gpu_node.sh [--dry-run] [OUT_DIR]
#   --dry-run  prints every command instead of running it.
# Environment: NODE_GPU (cuda, default; opencl: the CPU + OpenCL node of this repo's tests),
#   PHASES ("build apps ckpt mgb"), LENGTHS ("short long"), ROUNDS (2), BUILD_DIR, STARPU_PREFIX,
#   JOBS (make -j, default nproc). Budget: under 8 minutes on a 16-core, 1-GPU machine; when
#   it runs over, lower ROUNDS before dropping apps.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dry=
if [ "${1:-}" = --dry-run ]; then dry=1; shift; fi
out=${1:-$top/results/bench/gpu_node}
node_gpu=${NODE_GPU:-cuda}
phases=${PHASES:-build apps ckpt mgb}
lengths=${LENGTHS:-short long}
rounds=${ROUNDS:-2}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
case "$node_gpu" in
  cuda) build=${BUILD_DIR:-$top/_build-gpu} ;;
  opencl) build=${BUILD_DIR:-$top/_build} ;;
  *) echo "gpu_node.sh: NODE_GPU must be cuda or opencl, not '$node_gpu'" >&2; exit 2 ;;
esac
mkdir -p "$out"
timings=$out/phases.tsv
[ -n "$dry" ] || : >"$timings"

cmd() {  # runs (or, with --dry-run, prints) one command
  if [ -n "$dry" ]; then
    printf '%q ' "$@"
    echo
  else
    "$@"
  fi
}
phase() {  # phase NAME FUNCTION: runs it timed; a failed phase is reported, the next ones still run
  local name=$1 fn=$2 t0=$SECONDS rc=0
  case " $phases " in *" $name "*) ;; *) echo "== $name: skipped (PHASES)"; return 0 ;; esac
  echo "== $name (at $((SECONDS))s)"
  "$fn" || rc=$?
  [ -n "$dry" ] || printf '%s\t%d\t%d\n' "$name" "$((SECONDS - t0))" "$rc" >>"$timings"
  [ "$rc" -eq 0 ] || echo "== $name FAILED (exit $rc): see above; the other phases go on"
}

build_phase() {
  if [ "$node_gpu" = opencl ]; then
    cmd "$top/run" build
    return
  fi
  local prefix=${STARPU_PREFIX:-}
  [ -n "$prefix" ] || [ ! -f "$top/_starpu-cuda/.hetpu-complete" ] || prefix=$top/_starpu-cuda
  if [ -z "$prefix" ]; then
    if [ -n "$dry" ]; then
      prefix='$(.ci/cuda-check.sh TOP JOBS --starpu-only)'
      cmd "$top/.ci/cuda-check.sh" "$top" "$jobs" --starpu-only
    else
      prefix=$("$top/.ci/cuda-check.sh" "$top" "$jobs" --starpu-only | tail -1)
    fi
  fi
  [ -x "$top/configure" ] || (cd "$top" && cmd autoreconf -fi)
  cmd mkdir -p "$build"
  [ -n "$dry" ] && echo "cd $build" || cd "$build"
  cmd "$top/configure" --with-starpu="$prefix" --with-cuda="${CUDA_HOME:-/usr/local/cuda}" --without-mpi
  cmd make -j"$jobs"
  cd "$top"
}

# Sizes per length: the GPU alone takes ~0.2 s (short) or ~5 s (long) on one H100/H200 at the
# rates the traces showed (matmul 1.6e-5 s per column at n = 4096, growing as n^2; grn 6.7e-7 s
# per gene pair; k-means 8e-9 s per point and pass). On the OpenCL node the short sizes only.
app_settings() {  # app_settings LENGTH: sets the array `settings` (environment of plbhac_node_limit.sh)
  case "$node_gpu:$1" in
    cuda:short) settings=(APPS="mm6144 grn kmeans" GRN_GENES=800 KM_N=2000000 KM_ITERS=11) ;;
    cuda:long) settings=(APPS="mm16384 grn kmeans" GRN_GENES=4000 KM_N=10000000 KM_ITERS=60 SKIP_CPU_ALONE=1) ;;
    opencl:*) settings=(APPS="mm2048 grn kmeans" GRN_GENES=150 KM_N=200000 KM_ITERS=5) ;;
  esac
}

apps_phase() {
  local length rc=0 settings
  for length in $lengths; do
    [ "$node_gpu" = opencl ] && [ "$length" != short ] && continue
    app_settings "$length"
    cmd env "${settings[@]}" ROUNDS="$rounds" POLICIES="plb-hac plb-hac-starpu hdss dmda eager ws" NODE_GPU="$node_gpu" \
      bash "$top/bench/plbhac_node_limit.sh" "$build" "$out/apps-$length" || rc=1
  done
  return $rc
}

ckpt_phase() {
  [ -n "$dry" ] || [ -x "$build/bench/ckpt_device" ] || { echo "no $build/bench/ckpt_device: nothing to measure"; return 0; }
  cmd mkdir -p "$out/ckpt"
  if [ "$node_gpu" = opencl ]; then
    cmd env BUILD_DIR="$build" bash "$top/bench/ckpt_device.sh" --json "$out/ckpt/ckpt_device.json"
    cmd env BUILD_DIR="$build" bash "$top/bench/ckpt_rtm_device.sh" --json "$out/ckpt/ckpt_rtm_device.json"
  else
    # Every CUDA device of the machine, each its own memory node: the device cache tier
    # against the host tier on real device memory (16 MiB handles, as many as the PoCL run).
    cmd env STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SILENT=1 "$build/bench/ckpt_device" --mib 16 \
      --json "$out/ckpt/ckpt_device.json"
    # The RTM-like workload with its blocks on the GPUs (CUDA step and imaging kernels): 4 blocks
    # of 16 MiB per GPU, 8 versions, one segment of the four runs (device/host tier, hints or not).
    local gpus rc=0
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    [ "${gpus:-0}" -gt 0 ] || gpus=1
    cmd env STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SILENT=1 HETPU_MGB_ARBITER=off "$build/bench/ckpt_rtm_device" \
      --blocks $((4 * gpus)) --block-kib 16384 --steps 32 --every 4 --segments 1 \
      --json "$out/ckpt/ckpt_rtm_device.json" || rc=1
    # The device tier's GPU test on this machine's real device memory: capture, restore and,
    # with two GPUs or more, the peer transfer (one GPU: that part says it is skipped).
    cmd make -C "$build" -j"$jobs" tests/ckpt/ckpt_cuda_tests
    cmd env STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SILENT=1 HETPU_BUILDDIR="$build" \
      sh "$top/tests/ckpt/device_cuda.sh" || return 1
    # hetpu-heat, its blocks on the GPUs (CUDA codelets): killed with SIGKILL after two
    # checkpoints, restarted, byte-exact, every capture from device memory.
    cmd env STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SILENT=1 HETPU_BUILDDIR="$build" HEAT_NODE=cuda \
      sh "$top/tests/ckpt/heat_restart.sh" || return 1
    return $rc
  fi
}

mgb_phase() {
  cmd env NODE_GPU="$node_gpu" ROUNDS="$rounds" bash "$top/bench/mgb/real_batch.sh" "$build" "$out/mgb"
}

echo "gpu_node.sh: NODE_GPU=$node_gpu, phases: $phases, lengths: $lengths, $rounds rounds, build $build"
phase build build_phase
phase apps apps_phase
phase ckpt ckpt_phase
phase mgb mgb_phase
[ -z "$dry" ] || exit 0

python3 - "$out" "$timings" <<'PY'
import json, os, sys
out, timings = sys.argv[1], sys.argv[2]
phases = [dict(zip(("phase", "seconds", "exit"), l.split("\t"))) for l in open(timings).read().splitlines()]
for p in phases:
    p["seconds"], p["exit"] = int(p["seconds"]), int(p["exit"])
summary = {"phases": phases, "tables": {}}
md = ["# GPU node results", "", "| phase | seconds | exit |", "|---|---:|---:|"]
md += ["| %s | %d | %d |" % (p["phase"], p["seconds"], p["exit"]) for p in phases]
for name in sorted(os.listdir(out)):
    path = os.path.join(out, name, "summary.txt")
    if os.path.isfile(path):
        text = open(path).read()
        summary["tables"][name] = text
        md += ["", "## " + name, "", "```", text.rstrip(), "```"]
    for extra in ("ckpt_device.json", "ckpt_rtm_device.json"):  # a phase's own JSON records, kept whole
        path = os.path.join(out, name, extra)
        if os.path.isfile(path):
            records = [json.loads(l) for l in open(path) if l.strip()]
            summary.setdefault("records", {}).setdefault(name, []).extend(records)
            md += ["", "## " + name, "", "`%s/%s`: %d record(s)" % (name, extra, len(records))]
open(os.path.join(out, "summary.md"), "w").write("\n".join(md) + "\n")
open(os.path.join(out, "summary.json"), "w").write(json.dumps(summary, indent=1) + "\n")
print("\n".join(md))
PY
echo "results: $out/summary.md, $out/summary.json"
