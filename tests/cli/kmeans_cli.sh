#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The kmeans app end to end on the heterogeneous test node (1 CPU + 1 OpenCL worker on
# PoCL): runs that match the serial reference under fixed-block policies and plb-hac,
# bit-identical results from the CPU-only and OpenCL-only nodes, the binary format, and
# clear line-numbered errors for bad input.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/node_env.sh"

km="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
[ -x "$km" ] || fail "$km not built"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
have_opencl=0
grep -q '^#define HETPU_HAVE_OPENCL 1' "$HETPU_BUILDDIR/config.h" && have_opencl=1
d=$STARPU_HOME

# Mixed node, fixed blocks and the planner: the reference agrees, the planted centres are found.
for policy in eager plb-hac; do
    STARPU_SCHED=$policy "$km" --generate 6000 --dims 3 -k 5 --block 700 --verify --json "$d/$policy.jsonl" \
        >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "kmeans under $policy"; }
    python3 - "$d/$policy.jsonl" "$policy" <<'PY' || fail "kmeans JSON line under $policy"
import json, sys
r = json.loads(open(sys.argv[1]).read())
for key in ("app", "policy", "precision", "block", "planner", "rep", "makespan_s", "gflops", "verified",
            "workers", "n", "d", "k", "iterations", "passes", "converged", "inertia", "reference_inertia",
            "centre_error"):
    assert key in r, "missing " + key
assert r["app"] == "kmeans" and r["policy"] == sys.argv[2] and r["verified"] is True, r
assert r["converged"] and r["passes"] == r["iterations"] + 1, r
assert abs(r["inertia"] - r["reference_inertia"]) <= 1e-9 * r["reference_inertia"], r
assert r["centre_error"] < 0.2, r   # blobs of sigma 1, 1200 points each
assert sum(w["elements"] for w in r["workers"]) == 6000 * r["passes"], r["workers"]
if sys.argv[2] == "plb-hac":
    assert r["planner"] == "plb-hac" and r["block"] == 0, r
PY
done

# CPU-only and OpenCL-only nodes with the same blocks: identical centroids and labels
# (blocks of 2900 points: partial results summed over several chunks, kmeans_kernels.h).
if [ "$have_opencl" = 1 ]; then
    STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SCHED=eager "$km" --generate 12000 --dims 4 -k 6 --block 2900 \
        --centroids "$d/c_cpu.csv" --assignments "$d/a_cpu.txt" --json "$d/cpu.jsonl" >"$d/out" 2>&1 \
        || { cat "$d/out" >&2; fail "CPU-only run"; }
    STARPU_NCPU=0 STARPU_SCHED=eager "$km" --generate 12000 --dims 4 -k 6 --block 2900 \
        --centroids "$d/c_ocl.csv" --assignments "$d/a_ocl.txt" --json "$d/ocl.jsonl" >"$d/out" 2>&1 \
        || { cat "$d/out" >&2; fail "OpenCL-only run"; }
    cmp -s "$d/c_cpu.csv" "$d/c_ocl.csv" || fail "CPU and OpenCL centroids differ"
    cmp -s "$d/a_cpu.txt" "$d/a_ocl.txt" || fail "CPU and OpenCL assignments differ"
    python3 -c '
import json, sys
c, o = (json.loads(open(p).read()) for p in sys.argv[1:3])
assert c["inertia"] == o["inertia"] and c["iterations"] == o["iterations"], (c, o)
assert [w["type"] for w in o["workers"] if w["elements"]] == ["OpenCL"], o["workers"]
assert [w["type"] for w in c["workers"] if w["elements"]] == ["CPU"], c["workers"]
' "$d/cpu.jsonl" "$d/ocl.jsonl" || fail "CPU vs OpenCL JSON lines"
fi

# Binary and CSV copies of the generated points give the same clustering.
STARPU_SCHED=eager "$km" --generate 3000 --dims 2 -k 4 --write-points "$d/p.bin" --truth "$d/truth.csv" \
    --centroids "$d/c_gen.csv" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "generate + write"; }
STARPU_SCHED=eager "$km" --input "$d/p.bin" -k 4 --centroids "$d/c_bin.csv" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "binary input"; }
cmp -s "$d/c_gen.csv" "$d/c_bin.csv" || fail "binary input gives other centroids"
[ "$(wc -l <"$d/truth.csv")" -eq 5 ] || fail "truth file should hold a header and 4 centres"

# Bad input: exit 2 with the problem (and line) named.
check_bad() {
    expect="$1"
    shift
    "$km" "$@" >/dev/null 2>"$d/err"
    rc=$?
    [ "$rc" -eq 2 ] || fail "kmeans $* exited $rc, expected 2"
    grep -q -- "$expect" "$d/err" || fail "kmeans $*: message lacks '$expect': $(cat "$d/err")"
}
printf 'x,y\n1,2\n3,4\n5\n' >"$d/ragged.csv"
printf '1,2\n3,abc\n' >"$d/text.csv"
: >"$d/empty.csv"
printf '1,2\n3,4\n' >"$d/two.csv"
head -c 100 "$d/p.bin" >"$d/cut.bin"
check_bad "ragged.csv:4:" --input "$d/ragged.csv" -k 2
check_bad "text.csv:2: column 2: 'abc'" --input "$d/text.csv" -k 1
check_bad "empty" --input "$d/empty.csv" -k 1
check_bad "k = 3 is larger than the 2 points" --input "$d/two.csv" -k 3
check_bad "-k: 0 is not" --input "$d/two.csv" -k 0
check_bad "truncated" --input "$d/cut.bin" -k 2
check_bad "cannot open" --input "$d/missing.csv" -k 2
"$km" --help | grep -q -- "--checkpoint-every" || fail "--help does not describe checkpointing"
"$km" --help | grep -q -- "--assignments" || fail "--help does not describe the options"
echo "kmeans cli: ok"
