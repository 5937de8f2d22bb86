#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The four apps (matmul, grn, kmeans, fft2d) under the MGB policies, each run verified by
# the app itself (--verify, "verified": true in its JSON line):
#   1. mgb on the CPU + OpenCL test node (1 CPU worker + 1 PoCL device);
#   2. mgb on the two-device node (two PoCL devices limited to 16 and 64 MiB, one CPU
#      worker), with the grant trace checked: no device ever reserved beyond its limit;
#   3. mgb-exact and mgb with the OpenCL devices alone, where every matmul block must be
#      granted a device: the grants carry the needs matmul's codelet declares (CLBlast's
#      scratch, 4 blocks of 8 warps), proof that the callbacks reach the scheduler.
# Which worker runs which block is the policy's business: only totals are checked.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/node_env.sh"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
grn="$HETPU_BUILDDIR/apps/grn/hetpu-grn"
kmeans="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
fft2d="$HETPU_BUILDDIR/apps/fft2d/hetpu-fft2d"
for f in "$matmul" "$grn" "$kmeans" "$fft2d"; do [ -x "$f" ] || fail "$f not built"; done
grep -q '^#define HETPU_HAVE_OPENCL 1' "$HETPU_BUILDDIR/config.h" || { echo "no OpenCL codelets: skipped"; exit 77; }

# A segment of our own for the node-wide arbiter, so that parallel test runs never share one.
arbiter=/hetpu-mgb-test-$$
export HETPU_MGB_ARBITER=$arbiter
trap 'rm -rf "$STARPU_HOME"; rm -f "/dev/shm${arbiter}"' EXIT
export POCL_MAX_PTHREAD_COUNT=1
# StarPU's global limit would override the per-device ones (see the design notes).
unset STARPU_LIMIT_OPENCL_MEM
d=$STARPU_HOME

# run LABEL APP ELEMENTS ARGS...: one verified run of APP under $STARPU_SCHED; ELEMENTS is
# what its workers must have done in all (divisible elements summed over the run's jobs;
# "-" when the app's record does not make that a fixed number).
run() {
    label=$1 app=$2 elements=$3
    shift 3
    json="$d/$label.jsonl"
    rm -f "$json"
    # A hang (StarPU evicting forever for a task that does not fit) fails with 124.
    timeout 300 "$app" "$@" --verify --json "$json" >"$d/out" 2>"$d/err"
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$d/out" "$d/err" >&2; fail "$label: $(basename "$app") $* under $STARPU_SCHED exited $rc"; }
    python3 - "$json" "$STARPU_SCHED" "$elements" <<'PY' || fail "$label: JSON line (see above)"
import json, sys
path, policy, elements = sys.argv[1], sys.argv[2], sys.argv[3]
for r in (json.loads(l) for l in open(path)):
    assert r["policy"] == policy and r["verified"] is True, r
    if elements != "-":
        assert sum(w["elements"] for w in r["workers"]) == int(elements), r["workers"]
PY
}

# The four apps at small sizes. grn: C(30, 2) = 435 subsets; kmeans: 3000 points per pass
# (passes vary with convergence, so no total); fft2d: 128 rows then 128 columns.
apps() {
    tag=$1
    run "$tag-matmul" "$matmul" 256 -n 256 --block 32
    run "$tag-grn" "$grn" 435 --generate 30 --samples 60 --block 60
    run "$tag-kmeans" "$kmeans" - --generate 3000 --dims 3 -k 4 --block 500
    run "$tag-fft2d" "$fft2d" 256 -n 128 --block 16
}

# Grant-trace invariants: a device's node-wide reservation never above its capacity, no task
# granted a device smaller than itself, every grant released.
check_trace() {
    python3 - "$1" <<'PY' || fail "grant trace $1 (see above)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])] if __import__("os").path.exists(sys.argv[1]) else []
grants = [l for l in lines if l["event"] == "grant"]
for l in lines:
    assert l["reserved_bytes"] <= l["capacity"], l
    assert not (l["event"] == "grant" and l["bytes"] > l["capacity"]), l
assert sum(1 for l in lines if l["event"] == "release") == len(grants), "a grant never released"
PY
}

# 1. The CPU + OpenCL node of node_env.sh.
export STARPU_SCHED=mgb
apps node1

# 2. Two OpenCL devices with unequal limits (MiB), one CPU worker.
export POCL_DEVICES="pthread pthread" STARPU_OPENCL_ON_CPUS=1 STARPU_NOPENCL=2 STARPU_NCPU=1
export STARPU_LIMIT_OPENCL_0_MEM=16 STARPU_LIMIT_OPENCL_1_MEM=64
trace=$d/trace
export HETPU_MGB_TRACE=$trace
rm -f "$trace"
apps node2
check_trace "$trace"

# 3. The OpenCL devices alone: every one of matmul's 8 blocks (n = 256, block 32, double) is
#    granted a device. Its declared needs: CLBlast's padded copies of A, B and C, each
#    256 x 128 or more, as scratch ((256*256 + 2*256*128) * 8 bytes = 1 MiB, the data not
#    yet on the device comes on top), and 4 x 1 tiles of 64: 4 blocks of 256 threads (8
#    warps), 32 warps (a task without declared needs weighs a whole device: 64 warps per
#    compute unit).
export STARPU_NCPU=0
for policy in mgb-exact mgb; do
    rm -f "$trace"
    export STARPU_SCHED=$policy
    run "node2-ocl-$policy-matmul" "$matmul" 256 -n 256 --block 32
    check_trace "$trace"
    python3 - "$trace" "$policy" <<'PY' || fail "matmul's declared needs under $policy (see above)"
import json, sys
grants = [json.loads(l) for l in open(sys.argv[1])]
grants = [g for g in grants if g["event"] == "grant"]
assert len(grants) == 8, "8 blocks, %d grants" % len(grants)
for g in grants:
    assert g["policy"] == sys.argv[2], g
    assert g["bytes"] >= 1 << 20, "the declared scratch is missing: %s" % g
    assert g["warps"] == 32, "not the declared launch (4 blocks of 8 warps): %s" % g
PY
done
echo "mgb apps: ok"
