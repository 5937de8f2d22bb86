#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# hetpu-heat on the heterogeneous test node (1 CPU + 1 OpenCL worker on PoCL): the blocks on
# the OpenCL device and, with no OpenCL, on the CPU workers, each run bit-identical to the
# host sweep (--verify) and to the other (the digests); uneven blocks; checkpoints on the
# host tier when the blocks are in main memory; --help and the errors for bad options.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/node_env.sh"
export HETPU_MGB_ARBITER=off

heat="$HETPU_BUILDDIR/apps/heat/hetpu-heat"
[ -x "$heat" ] || fail "$heat not built"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
d=$STARPU_HOME

"$heat" --help >"$d/help" || fail "--help exited non-zero"
for opt in --rows --cols --blocks --iterations --checkpoint-every --checkpoint-dir --restart --verify --output; do
  grep -q -- "$opt" "$d/help" || fail "--help lacks $opt"
done
check_bad() {  # check_bad EXPECTED ARGS...: status 2, the message names the problem
  expect="$1"
  shift
  "$heat" "$@" >/dev/null 2>"$d/err" && fail "heat $* succeeded"
  rc=$?
  [ "$rc" -eq 2 ] || fail "heat $*: status $rc, want 2"
  grep -q -- "$expect" "$d/err" || fail "heat $*: message lacks '$expect': $(cat "$d/err")"
}
check_bad "--rows" --rows 2
check_bad "--iterations" --iterations -1
check_bad "every block needs a row" --rows 4 --blocks 5
check_bad "needs --checkpoint-dir" --checkpoint-every 3
check_bad "alone does nothing" --checkpoint-dir "$d/ck"

grid="--rows 97 --cols 61 --blocks 5 --iterations 40 --seed 3 --verify"
# shellcheck disable=SC2086
"$heat" $grid --json "$d/opencl.jsonl" --output "$d/opencl.bin" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "OpenCL run"; }
# shellcheck disable=SC2086
STARPU_NOPENCL=0 STARPU_NCPU=2 "$heat" $grid --json "$d/cpu.jsonl" --output "$d/cpu.bin" >"$d/out" 2>&1 ||
  { cat "$d/out" >&2; fail "CPU run"; }
cmp -s "$d/opencl.bin" "$d/cpu.bin" || fail "the OpenCL and CPU codelets' final grids differ"
[ "$(wc -c <"$d/cpu.bin")" -eq $((97 * 61 * 4)) ] || fail "--output is not the grid's 97 x 61 floats"

# Host tier: the blocks in main memory (CPU workers), a checkpoint every 10 sweeps, then a
# restart that continues to 55 sweeps.
# shellcheck disable=SC2086
STARPU_NOPENCL=0 STARPU_NCPU=2 "$heat" $grid --checkpoint-every 10 --checkpoint-dir "$d/ck" --json "$d/host.jsonl" \
  >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "checkpointing CPU run"; }
STARPU_NOPENCL=0 STARPU_NCPU=2 "$heat" --rows 97 --cols 61 --blocks 5 --seed 3 --iterations 55 --verify --restart --checkpoint-every 10 \
  --checkpoint-dir "$d/ck" --json "$d/host_restart.jsonl" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "CPU restart"; }

python3 - "$d" <<'PY' || fail "JSON lines"
import json, sys
d = sys.argv[1]
rec = {k: json.loads(open("%s/%s.jsonl" % (d, k)).read()) for k in ("opencl", "cpu", "host", "host_restart")}
ocl, cpu, host, again = rec["opencl"], rec["cpu"], rec["host"], rec["host_restart"]
for k, r in rec.items():
    assert r["app"] == "heat" and r["verified"] is True, (k, r)
assert [w["type"] for w in ocl["workers"]] == ["OpenCL"] and ocl["workers"][0]["blocks"] == 5, ocl["workers"]
assert sum(w["elements"] for w in ocl["workers"]) == 97 * 61, ocl["workers"]
assert {w["type"] for w in cpu["workers"]} == {"CPU"} and sum(w["blocks"] for w in cpu["workers"]) == 5, cpu["workers"]
assert ocl["digest"] == cpu["digest"] == host["digest"], (ocl["digest"], cpu["digest"], host["digest"])
assert ocl["checkpoint_tier"] is None and ocl["checkpoints"] == 0, ocl
assert host["checkpoint_tier"] == "host" and host["checkpoints"] == 4 and host["device_path_captures"] == 0, host
assert again["restarted_from"] == 40 and again["sweeps"] == 15 and again["checkpoints"] == 1, again
print("heat: OpenCL and CPU codelets equal to the host sweep (digest %s); host-tier restart from 40 to 55" % ocl["digest"])
PY
echo "heat cli: ok"
