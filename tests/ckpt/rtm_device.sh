#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/ckpt_rtm_device on a small instance (two PoCL OpenCL devices, through
# bench/ckpt_rtm_device.sh): 4 blocks of 256 KiB, 8 versions, caches holding 2 of them,
# --await-prefetch so that where restores are served from does not depend on timing.
# Asserts: the device-tier forward passes captured every block from device memory with no
# device-to-host copy before resuming; every restored block of every run equals the forward
# state (the program checks each version's digests and exits 1 otherwise); with hints every
# restore is served from the device cache, without hints fewer are and the rest come from
# disk. An automake SKIP (77) when StarPU has no OpenCL device.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${HETPU_BUILDDIR:-.}
out=$(mktemp -d /tmp/hetpu-rtm-device.XXXXXX)
trap 'rm -rf "$out"' EXIT
bench() { BUILD_DIR=$build bash "$top/bench/ckpt_rtm_device.sh" "$@"; }

# A bad option is an error that names it (status 2), before StarPU starts.
if bench --block-kib 100 2>"$out/err"; then
  echo "FAIL: --block-kib 100 accepted" >&2; exit 1
else
  rc=$?
fi
[ "$rc" -eq 2 ] && grep -q 'multiple of 64' "$out/err" || { echo "FAIL: --block-kib 100: status $rc" >&2; cat "$out/err" >&2; exit 1; }

rc=0
bench --blocks 4 --block-kib 256 --steps 16 --every 2 --segments 1 --cache-fraction 0.25 --await-prefetch \
  --dir "$out/ckpt" --json "$out/rtm.jsonl" || rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] || { echo "FAIL: ckpt_rtm_device exited $rc" >&2; exit 1; }

python3 - "$out/rtm.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fwd = next(r for r in recs if r["kind"] == "forward")
back = {(r["tier"], r["hints"]): r for r in recs if r["kind"] == "backward"}
ver = next(r for r in recs if r["kind"] == "verify")
fails = []
def want(cond, what):
    if not cond:
        fails.append(what)
versions, blocks = fwd["versions"], fwd["blocks"]
want(versions == 8 and blocks == 4, "8 versions of 4 blocks, got %d of %d" % (versions, blocks))
# Two device-tier runs (with and without hints), every block of every version from device memory.
want(fwd["device_path_captures"] == 2 * versions * blocks,
     "device-path captures %d, want %d" % (fwd["device_path_captures"], 2 * versions * blocks))
want(fwd["host_path_captures"] == 0, "host-path captures in device-tier runs: %d" % fwd["host_path_captures"])
want(fwd["device_to_host_at_capture_bytes"] == 0,
     "device-to-host bytes before resuming: %d" % fwd["device_to_host_at_capture_bytes"])
want(ver["mismatches"] == 0 and ver["restored_blocks"] == 4 * versions * blocks, "verification: %s" % ver)
for key, r in back.items():
    served = r["block_restores_from_device"] + r["block_restores_from_host"] + r["block_restores_from_disk"]
    want(served == r["block_restores"] == versions * blocks, "%s: %d of %d block restores served" % (key, served, r["block_restores"]))
hinted, plain = back[("device", "all")], back[("device", "none")]
want(hinted["block_restores_from_device"] == versions * blocks,
     "device tier with hints: %d of %d block restores from the device cache" % (hinted["block_restores_from_device"], versions * blocks))
want(plain["block_restores_from_device"] < hinted["block_restores_from_device"],
     "device tier without hints: %d device-cache restores, not fewer than with hints" % plain["block_restores_from_device"])
want(plain["block_restores_from_disk"] > 0, "device tier without hints: nothing read from disk (caches hold 2 of 8 versions)")
want(back[("host", "none")]["block_restores_from_device"] == 0, "host tier: restores from a device cache")
if fails:
    print("FAIL:\n  " + "\n  ".join(fails), file=sys.stderr)
    sys.exit(1)
print("ok: %d device-path captures, no device-to-host bytes, %d restored blocks verified; with hints %d/%d "
      "device-cache restores, without %d" % (fwd["device_path_captures"], ver["restored_blocks"],
      hinted["block_restores_from_device"], versions * blocks, plain["block_restores_from_device"]))
PY
