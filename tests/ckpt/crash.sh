#!/usr/bin/env bash
# Kill a checkpointing process with SIGKILL at random moments, 30 times; after each kill the
# newest complete version must restore with verified checksums and never be older than a
# version the writer was told is durable.
set -euo pipefail
bin=${HETPU_BUILDDIR:-.}/tests/ckpt/crash_writer
dir=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-ckpt-crash.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/local" "$dir/remote"
kills=0
for i in $(seq 1 30); do
  "$bin" write "$dir" 2>"$dir/writer.err" &
  pid=$!
  # 20..219 ms: lands anywhere in capture, flush, manifest, remote copy or retention.
  sleep "0.$(printf '%03d' $((20 + RANDOM % 200)))"
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills + 1)); fi
  wait "$pid" 2>/dev/null || true
  if [ -s "$dir/writer.err" ]; then echo "writer failed:"; cat "$dir/writer.err"; exit 1; fi
  out=$("$bin" verify "$dir") || { echo "FAIL after kill $i: $out"; exit 1; }
  echo "kill $i: $out"
done
[ "$kills" -ge 25 ] || { echo "only $kills of 30 runs were killed"; exit 1; }
latest=$("$bin" verify "$dir" | awk '{print $2}')
[ "${latest:-0}" -gt 30 ] || { echo "too few versions written ($latest): the test did not exercise much"; exit 1; }
echo "PASS: $kills kills, newest version $latest"
