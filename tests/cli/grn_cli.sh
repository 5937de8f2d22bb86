#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The grn app end to end on the heterogeneous test node (1 CPU + 1 OpenCL worker on PoCL):
# recovery of a planted network, scores identical to the serial reference on the mixed,
# CPU-only and OpenCL-only nodes, input round trip, and line-numbered errors.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/node_env.sh"

grn="$HETPU_BUILDDIR/apps/grn/hetpu-grn"
[ -x "$grn" ] || fail "$grn not built"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
have_opencl=0
grep -q '^#define HETPU_HAVE_OPENCL 1' "$HETPU_BUILDDIR/config.h" && have_opencl=1
d=$STARPU_HOME

for policy in eager plb-hac; do
    STARPU_SCHED=$policy "$grn" --generate 40 --samples 100 --block 60 --verify --json "$d/$policy.jsonl" \
        --edges "$d/$policy.edges" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "grn under $policy"; }
    python3 - "$d/$policy.jsonl" "$policy" <<'PY' || fail "grn JSON line under $policy"
import json, sys
r = json.loads(open(sys.argv[1]).read())
for key in ("app", "policy", "precision", "block", "planner", "rep", "makespan_s", "gflops", "verified",
            "workers", "genes", "samples", "k", "subsets", "evaluations", "edges", "planted_edges",
            "true_positives", "edge_precision", "edge_recall"):
    assert key in r, "missing " + key
assert r["app"] == "grn" and r["policy"] == sys.argv[2] and r["verified"] is True, r
assert r["subsets"] == 40 * 39 // 2 and r["evaluations"] == r["subsets"] * 38, r
assert sum(w["elements"] for w in r["workers"]) == r["subsets"], r["workers"]
assert r["planted_edges"] == 80 and r["edge_precision"] >= 0.95 and r["edge_recall"] >= 0.95, r
PY
done
[ "$(head -1 "$d/eager.edges")" = "$(printf 'regulator\ttarget\tscore\tpredictors')" ] || fail "edges header"
[ "$(wc -l <"$d/eager.edges")" -eq 81 ] || fail "40 targets x 2 predictors = 80 edges expected"

# CPU-only and OpenCL-only nodes: both identical to the reference, hence to each other.
if [ "$have_opencl" = 1 ]; then
    STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SCHED=eager "$grn" --generate 30 --samples 60 -k 3 --block 500 \
        --verify --edges "$d/cpu.edges" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "grn CPU-only"; }
    STARPU_NCPU=0 STARPU_SCHED=eager "$grn" --generate 30 --samples 60 -k 3 --block 500 \
        --verify --edges "$d/ocl.edges" --json "$d/ocl.jsonl" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "grn OpenCL-only (scores differ from the CPU reference?)"; }
    cmp -s "$d/cpu.edges" "$d/ocl.edges" || fail "CPU and OpenCL edges/scores differ"
    python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["verified"] is True and [w["type"] for w in r["workers"] if w["elements"]] == ["OpenCL"], r
' "$d/ocl.jsonl" || fail "OpenCL-only JSON line"
fi

# The generated table read back (lag 1 given explicitly) infers the same network.
STARPU_SCHED=eager "$grn" --generate 25 --samples 80 --write-data "$d/expr.tsv" --truth "$d/truth.tsv" \
    --edges "$d/gen.edges" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "generate + write"; }
STARPU_SCHED=eager "$grn" --input "$d/expr.tsv" --lag 1 --edges "$d/in.edges" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "--input"; }
cmp -s "$d/gen.edges" "$d/in.edges" || fail "the written table infers another network"
[ "$(wc -l <"$d/truth.tsv")" -eq 51 ] || fail "truth: header + 50 planted edges expected"

check_bad() {
    expect="$1"
    shift
    "$grn" "$@" >/dev/null 2>"$d/err"
    rc=$?
    [ "$rc" -eq 2 ] || fail "grn $* exited $rc, expected 2"
    grep -q -- "$expect" "$d/err" || fail "grn $*: message lacks '$expect': $(cat "$d/err")"
}
printf 'gene\ts1\ts2\ts3\ng1\t1\t2\t3\ng2\t1\t2\n' >"$d/ragged.tsv"
printf 'g1\t1\t2\t3\ng2\t1\tx\t3\ng3\t1\t2\t3\n' >"$d/text.tsv"
: >"$d/empty.tsv"
printf 'g1\t1\t2\t3\ng2\t3\t2\t1\n' >"$d/two.tsv"
check_bad "ragged.tsv:3:" --input "$d/ragged.tsv"
check_bad "text.tsv:2: column 3: 'x'" --input "$d/text.tsv"
check_bad "empty" --input "$d/empty.tsv"
check_bad "at least 3 genes" --input "$d/two.tsv"
check_bad "-k" --input "$d/two.tsv" -k 0
check_bad "-k" --generate 10 -k 4
"$grn" --help | grep -q -- "--max-score" || fail "--help does not describe the options"
echo "grn cli: ok"
