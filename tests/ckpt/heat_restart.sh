#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# hetpu-heat's checkpoints of device-resident blocks, killed and restarted. On two PoCL
# OpenCL devices (default), or with HEAT_NODE=cuda on the machine's CUDA devices as the
# caller's StarPU variables give them (bench/gpu_node.sh):
#   1. a run checkpointing every 5 sweeps, given more sweeps than it can ever reach, is
#      killed with SIGKILL once two versions are complete in the directory (observed, not
#      timed) while it keeps sweeping and checkpointing;
#   2. --restart continues from the newest complete version up to N sweeps, N set only now
#      (past every version the killed run wrote), checkpointing on;
#   3. an uninterrupted run of N sweeps; the two final grids must be equal byte for byte, and
#      the restarted one equal to the host sweep (--verify);
#   4. the restarted run's checkpoints were all captured from device memory: every block of
#      every version on the device path, none from main memory, no byte copied to the host
#      before the sweeps resumed.
# Then the refusals: a restart with another grid, a fresh run into the used directory.
# An automake SKIP (77) when StarPU has no accelerator with hetpu's kernels.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
# node_env.sh sets the CPU + OpenCL test node's workers: a CUDA run keeps the caller's.
caller_ncuda=${STARPU_NCUDA-} caller_nopencl=${STARPU_NOPENCL-} caller_ncpu=${STARPU_NCPU-}
. "$(dirname "$0")/../cli/node_env.sh"
if [ "${HEAT_NODE:-pocl}" = pocl ]; then
  export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1 STARPU_NCUDA=0
else
  export STARPU_NOPENCL="${caller_nopencl:-0}" STARPU_NCPU="${caller_ncpu:-1}"
  if [ -n "$caller_ncuda" ]; then export STARPU_NCUDA="$caller_ncuda"; else unset STARPU_NCUDA; fi
fi
# The tiers alone: the device caches take no reservations in the MGB arbiter (the killed
# run's would otherwise be reclaimed, with a message, by the next run).
export HETPU_MGB_ARBITER=off

heat="$HETPU_BUILDDIR/apps/heat/hetpu-heat"
[ -x "$heat" ] || fail "$heat not built"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
d=$STARPU_HOME
ck="$d/ckpt"
grid="--rows 256 --cols 200 --blocks 4 --seed 9"

# Accelerators with hetpu's kernels, or a skip.
# shellcheck disable=SC2086
"$heat" $grid --iterations 2 --json "$d/probe.jsonl" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "probe run"; }
python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read()); sys.exit(0 if all(w["type"] != "CPU" for w in r["workers"]) else 1)' \
  "$d/probe.jsonl" || { echo "SKIP: StarPU has no OpenCL or CUDA device with hetpu's kernels here"; exit 77; }

newest_version() {
  ls "$ck" 2>/dev/null | sed -n 's/^heat\.v\([0-9][0-9]*\)\.manifest$/\1/p' | sort -n | tail -n 1
}

# shellcheck disable=SC2086
"$heat" $grid --iterations 1000000000 --checkpoint-every 5 --checkpoint-dir "$ck" --output "$d/killed.bin" \
  >"$d/killed.out" 2>&1 &
pid=$!
# Waits for events, not times: a first complete version, then a later one. The bound (30000
# polls, at least 5 minutes) only turns a hang into a failure.
tries=0 first=""
while :; do
  v=$(newest_version)
  if [ -n "$v" ] && [ -z "$first" ]; then first=$v; fi
  [ -n "$v" ] && [ "$v" != "$first" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$d/killed.out" >&2; fail "the checkpointing run ended before the kill"; }
  tries=$((tries + 1))
  [ "$tries" -lt 30000 ] || { kill -9 "$pid"; fail "no second checkpoint version in $ck"; }
  sleep 0.01
done
kill -9 "$pid" || fail "the checkpointing run ended before the kill"
wait "$pid" 2>/dev/null
[ ! -e "$d/killed.bin" ] || fail "the killed run wrote its grid: it was not killed mid-run"
# Past every version on disk now (the killed process wrote no more after the kill), and not a
# multiple of 5: the restarted run ends between checkpoints.
last=$(newest_version)
total=$((last + 23))

# shellcheck disable=SC2086
"$heat" $grid --iterations "$total" --checkpoint-every 5 --checkpoint-dir "$ck" --restart --verify \
  --output "$d/restart.bin" --json "$d/restart.jsonl" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "--restart run"; }
grep -q "restarted from the checkpoint of sweep" "$d/out" || fail "--restart does not say where it resumed"
# shellcheck disable=SC2086
"$heat" $grid --iterations "$total" --output "$d/full.bin" --json "$d/full.jsonl" >"$d/out" 2>&1 ||
  { cat "$d/out" >&2; fail "uninterrupted run"; }
cmp -s "$d/full.bin" "$d/restart.bin" || fail "the restarted run's final grid differs from the uninterrupted run's"
python3 - "$d/full.jsonl" "$d/restart.jsonl" "$first" "$last" "$total" <<'PY' || fail "JSON lines of the runs"
import json, sys
full, restart = (json.loads(open(p).read()) for p in sys.argv[1:3])
first, last, total = (int(x) for x in sys.argv[3:6])
assert full["restarted_from"] is None and full["checkpoints"] == 0 and full["sweeps"] == total, full
r = restart["restarted_from"]
# The newest complete version: at least the second one seen, at most the newest on disk.
assert isinstance(r, int) and r % 5 == 0 and first < r <= last, (r, first, last)
assert restart["verified"] is True and restart["digest"] == full["digest"], (restart, full)
assert restart["sweeps"] == total - r, restart
taken = total // 5 - r // 5
assert restart["checkpoints"] == taken and taken >= 4, restart
assert restart["checkpoint_tier"] == "device", restart
blocks = restart["blocks"]
assert restart["device_path_captures"] == taken * blocks, ("device-path captures", restart["device_path_captures"], taken * blocks)
assert restart["host_path_captures"] == 0, ("captures from main memory", restart["host_path_captures"])
assert restart["device_to_host_at_capture_bytes"] == 0, ("bytes to the host before resuming", restart)
print("killed after version %d, restarted from sweep %d to %d: final grids equal (digest %s), %d checkpoints, "
      "%d blocks captured from device memory, none from main memory"
      % (last, r, total, full["digest"], taken, restart["device_path_captures"]))
PY

check_refused() {
  expect="$1"
  shift
  "$heat" "$@" >/dev/null 2>"$d/err" && fail "heat $* succeeded, expected a refusal"
  grep -q -- "$expect" "$d/err" || fail "heat $*: message lacks '$expect': $(cat "$d/err")"
}
# shellcheck disable=SC2086
check_refused "already holds heat checkpoints" $grid --iterations 10 --checkpoint-every 5 --checkpoint-dir "$ck"
check_refused "restart with the same --blocks" --rows 256 --cols 200 --blocks 8 --seed 9 --iterations "$total" \
  --restart --checkpoint-dir "$ck"
check_refused "restart with the same --seed" --rows 256 --cols 200 --blocks 4 --seed 10 --iterations "$total" \
  --restart --checkpoint-dir "$ck"
# shellcheck disable=SC2086
check_refused "past --iterations" $grid --iterations 5 --restart --checkpoint-dir "$ck"
mkdir "$d/empty"
# shellcheck disable=SC2086
check_refused "no complete heat checkpoint" $grid --restart --checkpoint-dir "$d/empty"
# shellcheck disable=SC2086
check_refused "no checkpoint directory" $grid --restart --checkpoint-dir "$d/missing"
echo "heat restart: ok"
