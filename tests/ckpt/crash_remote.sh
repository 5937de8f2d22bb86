#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The remote tier catches up after a crash. A writer whose remote tier is throttled to
# 64 KiB/s (remote copies lag behind the local tier) is killed with SIGKILL while a remote
# copy is under way and the local tier holds more versions the remote one lacks than
# versions_to_keep (3). A new process on the same directories must then copy the newest of
# them to the remote tier, remove the killed copy's region files (no manifest), and leave
# each tier holding exactly the newest 3 versions. Every wait is on files the writer leaves,
# never on a fixed delay.
set -euo pipefail
bin=${HETPU_BUILDDIR:-.}/tests/ckpt/crash_writer
rounds=4 keep=3
dir=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-ckpt-crash-remote.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/local" "$dir/remote"
versions() { ls "$1" | sed -n 's/^state\.v\([0-9][0-9]*\)\.manifest$/\1/p' | sort -n; }
# Versions with region files in the remote tier but no manifest: a copy under way (or killed).
remote_orphans() {
  ls "$dir/remote" | sed -n 's/^state\.v\([0-9][0-9]*\)\.[0-9][0-9]*\.dat$/\1/p' | sort -un |
    while read -r v; do [ -e "$dir/remote/state.v$v.manifest" ] || echo "$v"; done
}
# Local versions the remote tier lacks.
missing_remote() { comm -23 <(versions "$dir/local" | sort) <(versions "$dir/remote" | sort) | sort -n; }

killed_mid_copy=0
for i in $(seq 1 "$rounds"); do
  "$bin" write-slow-remote "$dir" 2>"$dir/writer.err" &
  pid=$!
  tries=0
  # Kill once a remote copy is under way and more complete local versions wait for theirs
  # than the tiers keep: the state the crash must not lose, and more than retention allows.
  until [ -n "$(remote_orphans)" ] && [ "$(missing_remote | wc -l)" -ge $((keep + 3)) ]; do
    kill -0 "$pid" 2>/dev/null || { echo "FAIL: the writer exited:"; cat "$dir/writer.err"; exit 1; }
    tries=$((tries + 1))
    [ "$tries" -lt 30000 ] || { kill -9 "$pid"; echo "FAIL: no remote copy under way in round $i"; exit 1; }
    sleep 0.01
  done
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  [ ! -s "$dir/writer.err" ] || { echo "writer failed:"; cat "$dir/writer.err"; exit 1; }
  orphans=$(remote_orphans | tr '\n' ' ')
  pending=$(missing_remote | tr '\n' ' ')
  [ -z "$orphans" ] || killed_mid_copy=$((killed_mid_copy + 1))
  # The newest versions over both tiers: what the remote tier must hold once caught up.
  want=$( (versions "$dir/local"; versions "$dir/remote") | sort -un | tail -n "$keep" | tr '\n' ' ')
  "$bin" catch-up "$dir" 2>"$dir/catch-up.err" || { echo "FAIL: catch-up:"; cat "$dir/catch-up.err"; exit 1; }
  local_now=$(versions "$dir/local" | tr '\n' ' ')
  remote_now=$(versions "$dir/remote" | tr '\n' ' ')
  echo "round $i: killed with local-only versions [ $pending] and a remote copy of [ $orphans] under way;" \
    "after catch-up local [ $local_now] remote [ $remote_now]"
  [ "$remote_now" = "$want" ] || { echo "FAIL: the remote tier holds [ $remote_now], not the newest [ $want]"; exit 1; }
  [ "$local_now" = "$want" ] || { echo "FAIL: the local tier holds [ $local_now], not [ $want]"; exit 1; }
  [ -z "$(remote_orphans)" ] || { echo "FAIL: remote region files without a manifest remain: $(remote_orphans)"; exit 1; }
  out=$("$bin" verify "$dir") || { echo "FAIL after round $i: $out"; exit 1; }
done
[ "$killed_mid_copy" -ge 1 ] || { echo "FAIL: no kill landed during a remote copy"; exit 1; }
echo "PASS: $rounds kills, $killed_mid_copy during a remote copy; each tier caught up within versions_to_keep = $keep"
