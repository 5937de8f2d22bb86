#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Kill a checkpointing process with SIGKILL at random moments, 30 times; after each kill the
# newest complete version must restore with verified checksums and never be older than a
# version the writer was told is durable.
set -euo pipefail
bin=${HETPU_BUILDDIR:-.}/tests/ckpt/crash_writer
dir=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-ckpt-crash.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/local" "$dir/remote"
# The newest version with a manifest on either tier (0 when none).
newest_on_disk() {
  ls "$dir/local" "$dir/remote" 2>/dev/null | sed -n 's/.*\.v\([0-9][0-9]*\)\.manifest$/\1/p' | sort -n | tail -n 1 | grep . || echo 0
}
kills=0
for i in $(seq 1 30); do
  before=$(newest_on_disk)
  "$bin" write "$dir" 2>"$dir/writer.err" &
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
  if [ -s "$dir/writer.err" ]; then echo "writer failed:"; cat "$dir/writer.err"; exit 1; fi
  out=$("$bin" verify "$dir") || { echo "FAIL after kill $i: $out"; exit 1; }
  echo "kill $i: $out"
done
[ "$kills" -ge 25 ] || { echo "only $kills of 30 runs were killed"; exit 1; }
latest=$("$bin" verify "$dir" | awk '{print $2}')
[ "${latest:-0}" -ge 30 ] || { echo "too few versions written ($latest): the test did not exercise much"; exit 1; }
echo "PASS: $kills kills, newest version $latest"
