#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fft2d app on the heterogeneous test node: verified against FFTW's 2D transform on the
# CPU worker alone, on the OpenCL (clFFT) worker alone (so the two implementations agree
# with the same reference to 1e-10 relative), and on both under greedy with JSON lines.
# Which worker takes a greedy block depends on how busy the machine is (a loaded CPU
# worker can take all 32), so the run that must mix both implementations is a plb-hac run
# with its training phase (HETPU_PLBHAC_LADDER=0): that planner hands each worker a training
# block of its own, whatever the load. (The ladder may rightly leave a worker that is slow to
# start with nothing of so small a job: its blocks withdrawn, its probe copied.)
. "$(dirname "$0")/node_env.sh"
fft2d="$HETPU_BUILDDIR/apps/fft2d/hetpu-fft2d"
[ -x "$fft2d" ] || fail "$fft2d not built"
have_clfft=0
grep -q '^#define HETPU_HAVE_CLFFT 1' "$HETPU_BUILDDIR/config.h" && have_clfft=1

run() {  # run LABEL ENV... -- ARGS...
  label=$1; shift
  env "$@" >"$STARPU_HOME/out" 2>"$STARPU_HOME/err" || { cat "$STARPU_HOME/out" "$STARPU_HOME/err" >&2; fail "fft2d ($label) failed"; }
  grep -q "verified" "$STARPU_HOME/out" || fail "fft2d ($label) did not verify: $(cat "$STARPU_HOME/out")"
}
run cpu STARPU_NOPENCL=0 STARPU_SCHED=eager "$fft2d" -m 96 -n 128 --block 16 --verify --json "$STARPU_HOME/cpu.jsonl"
if [ "$have_clfft" = 1 ]; then
  run opencl STARPU_NCPU=0 STARPU_SCHED=eager "$fft2d" -m 96 -n 128 --block 16 --verify --json "$STARPU_HOME/ocl.jsonl"
fi
run both STARPU_SCHED=greedy "$fft2d" -n 128 --block 8 --verify --reps 2 --json "$STARPU_HOME/both.jsonl"
run mixed STARPU_SCHED=plb-hac HETPU_PLBHAC_LADDER=0 "$fft2d" -n 128 --verify --json "$STARPU_HOME/mixed.jsonl"
python3 - "$STARPU_HOME" "$have_clfft" <<'PY' || fail "fft2d JSON lines are wrong (see above)"
import json, os, sys
d, have_clfft = sys.argv[1], sys.argv[2] == "1"
def lines(name):
    return [json.loads(l) for l in open(os.path.join(d, name))]
cpu = lines("cpu.jsonl")[0]
assert cpu["app"] == "fft2d" and cpu["verified"] is True and (cpu["m"], cpu["n"]) == (96, 128), cpu
assert [w["type"] for w in cpu["workers"] if w["elements"]] == ["CPU"], cpu["workers"]
assert sum(w["elements"] for w in cpu["workers"]) == 96 + 128, cpu["workers"]
if have_clfft:
    ocl = lines("ocl.jsonl")[0]
    assert ocl["verified"] is True and [w["type"] for w in ocl["workers"] if w["elements"]] == ["OpenCL"], ocl
both = lines("both.jsonl")
assert len(both) == 2 and all(r["verified"] is True for r in both), both
assert all(sum(w["blocks"] for w in r["workers"]) == 32 for r in both), both
mixed = lines("mixed.jsonl")
assert len(mixed) == 1 and mixed[0]["verified"] is True, mixed
if have_clfft:
    # Blocks of both kinds ran.
    assert sorted(w["type"] for w in mixed[0]["workers"] if w["blocks"] > 0 or w.get("lost_s", 0) > 0) == ["CPU", "OpenCL"], mixed[0]["workers"]
PY
if "$fft2d" -n 16 --block 32 2>"$STARPU_HOME/err"; then fail "--block larger than the matrix accepted"; fi
grep -q -- "--block 32 is larger" "$STARPU_HOME/err" || fail "bad --block message: $(cat "$STARPU_HOME/err")"
echo "fft2d: ok"
