#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kill a checkpointing process with SIGKILL at random moments, 30 times; after each kill the
# newest complete version must restore with verified checksums and never be older than a
# version the writer was told is durable.
#   crash.sh          the writer checkpoints host buffers, 30 kills
#   crash.sh device   the writer's data lives on two OpenCL devices (PoCL) and is captured by
#                     the device cache tier, 10 kills
set -euo pipefail
bin=${HETPU_BUILDDIR:-.}/tests/ckpt/crash_writer
mode=write rounds=30
if [ "${1:-}" = device ]; then
  mode=write-device rounds=10
  export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1
  export STARPU_LIMIT_OPENCL_0_MEM=32 STARPU_LIMIT_OPENCL_1_MEM=32
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-ckpt-crash.XXXXXX")
# The device cache reserves its chunks with the MGB arbiter: a segment of this test's own.
export HETPU_MGB_ARBITER=/hetpu-ckpt-crash-$$
trap 'rm -rf "$dir"; rm -f /dev/shm/hetpu-ckpt-crash-$$' EXIT
mkdir "$dir/local" "$dir/remote"
# The newest version with a manifest on either tier (0 when none).
newest_on_disk() {
  ls "$dir/local" "$dir/remote" 2>/dev/null | sed -n 's/.*\.v\([0-9][0-9]*\)\.manifest$/\1/p' | sort -n | tail -n 1 | grep . || echo 0
}
kills=0 reclaims=0
for i in $(seq 1 "$rounds"); do
  before=$(newest_on_disk)
  "$bin" "$mode" "$dir" 2>"$dir/writer.err" &
  pid=$!
  # Each round first waits for an event, a version newer than any before it (so every round
  # makes progress, however loaded the machine), then 0..199 ms more: the kill lands
  # anywhere in capture, flush, manifest, remote copy or retention of the versions after it.
  tries=0
  while [ "$(newest_on_disk)" -le "$before" ] && kill -0 "$pid" 2>/dev/null; do
    tries=$((tries + 1))
    [ "$tries" -lt 30000 ] || { kill -9 "$pid"; echo "FAIL: no new version in round $i"; exit 1; }
    sleep 0.01
  done
  sleep "0.$(printf '%03d' $((RANDOM % 200)))"
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null || true
  # A writer after a kill reclaims the killed one's device cache reservations in the MGB
  # arbiter and says so, and repairs the arbiter's ledger when the kill landed while the
  # killed writer held its lock: both expected, anything else on stderr is a failure.
  reclaimed=$(grep -c 'released [0-9]* grant(s) of processes that exited' "$dir/writer.err" || true)
  reclaims=$((reclaims + reclaimed))
  if grep -qv -e 'released [0-9]* grant(s) of processes that exited' \
    -e 'a process died while holding the lock; ledger repaired' "$dir/writer.err"; then
    echo "writer failed:"; cat "$dir/writer.err"; exit 1
  fi
  out=$("$bin" verify "$dir") || { echo "FAIL after kill $i: $out"; exit 1; }
  echo "kill $i: $out"
done
[ "$kills" -ge $((rounds * 5 / 6)) ] || { echo "only $kills of $rounds runs were killed"; exit 1; }
latest=$("$bin" verify "$dir" | awk '{print $2}')
[ "${latest:-0}" -ge "$rounds" ] || { echo "too few versions written ($latest): the test did not exercise much"; exit 1; }
echo "PASS: $kills kills, newest version $latest, $reclaims reclaims of a killed writer's arbiter reservations"
