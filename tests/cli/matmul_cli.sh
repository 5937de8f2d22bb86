#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The matmul app end to end on the heterogeneous test node (1 CPU + 1 OpenCL worker on
# PoCL): verified runs under greedy, dmda and eager with JSON lines that parse and show
# both worker kinds at work, and clear failures for bad input and unknown policies.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/node_env.sh"

matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
[ -x "$matmul" ] || fail "$matmul not built"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines (apt-get install python3; ./run installs it)"
have_opencl=0
grep -q '^#define HETPU_HAVE_OPENCL 1' "$HETPU_BUILDDIR/config.h" && have_opencl=1

# Small sizes: PoCL compiles CLBlast's kernels on first use (seconds), then caches them.
for policy in greedy dmda eager; do
    json="$STARPU_HOME/$policy.jsonl"
    STARPU_SCHED=$policy "$matmul" -n 256 --block 32 --verify --json "$json" \
        >"$STARPU_HOME/out" 2>"$STARPU_HOME/err"
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$STARPU_HOME/out" "$STARPU_HOME/err" >&2; fail "matmul under $policy exited $rc"; }
    grep -q "verified: yes" "$STARPU_HOME/out" || fail "no 'verified: yes' in the $policy summary"
    python3 - "$json" "$policy" "$have_opencl" <<'PY' || fail "JSON line of $policy is wrong (see above)"
import json, sys
path, policy, have_opencl = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
lines = open(path).read().splitlines()
assert len(lines) == 1, "expected 1 line, got %d" % len(lines)
r = json.loads(lines[0])
for key in ("app", "policy", "precision", "m", "n", "k", "block", "planner", "rep",
            "makespan_s", "gflops", "verified", "workers"):
    assert key in r, "missing key %s" % key
assert r["app"] == "matmul" and r["policy"] == policy, r
assert (r["m"], r["n"], r["k"], r["block"], r["rep"]) == (256, 256, 256, 32, 0), r
assert r["precision"] == "double" and r["verified"] is True, r
assert r["makespan_s"] > 0 and r["gflops"] > 0, r
assert sum(w["elements"] for w in r["workers"]) == 256, r["workers"]
assert sum(w["blocks"] for w in r["workers"]) == 8, r["workers"]
for w in r["workers"]:
    assert w["type"] in ("CPU", "OpenCL", "CUDA"), w
    assert w["busy_s"] >= 0 and w["name"], w
# Which worker takes which block is the policy's business (greedy: whoever is idle
# first), so the mixed runs only check the totals; the OpenCL-only run below checks the
# CLBlast codelet deterministically.
PY
done

# OpenCL worker only: every block goes through the CLBlast codelet, and is verified, with
# CLBlast's direct GEMM kernel (192 x 32 x 192 is under 128^3, and under its own choice)
# and with its indirect one (from 16^3: padding, offsets and transposition kernels).
if [ "$have_opencl" = 1 ]; then
    for min_indirect in 128 16 0; do
        STARPU_NCPU=0 STARPU_SCHED=greedy "$matmul" -n 192 --block 32 --clblast-min-indirect $min_indirect --verify \
            --json "$STARPU_HOME/ocl$min_indirect.jsonl" >"$STARPU_HOME/out" 2>&1 ||
            { cat "$STARPU_HOME/out" >&2; fail "OpenCL-only run, --clblast-min-indirect $min_indirect"; }
        python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["verified"] is True, r
ocl = [w for w in r["workers"] if w["type"] == "OpenCL"]
assert ocl and sum(w["elements"] for w in ocl) == 192, r["workers"]
' "$STARPU_HOME/ocl$min_indirect.jsonl" || fail "OpenCL-only JSON line, --clblast-min-indirect $min_indirect"
    done
fi

# The planners: plb-hac and hdss choose every block's size and worker. Verified results,
# every column computed once, and plb-hac's per-block trace (HETPU_TRACE) with its phases.
for policy in plb-hac hdss; do
    json="$STARPU_HOME/$policy.jsonl"
    HETPU_TRACE="$STARPU_HOME/$policy.trace" STARPU_SCHED=$policy "$matmul" -n 512 --verify --json "$json" \
        >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "matmul under $policy"; }
    python3 - "$json" "$policy" "$STARPU_HOME/$policy.trace" <<'PY' || fail "$policy JSON line or trace is wrong"
import json, os, sys
r = json.loads(open(sys.argv[1]).read())
assert r["policy"] == sys.argv[2] and r["verified"] is True, r
assert r["planner"] == sys.argv[2] and r["block"] == 0, r
assert sum(w["elements"] for w in r["workers"]) == 512, r["workers"]
# hdss trains both PUs: each ran blocks. plb-hac may rightly leave a PU slow to start with
# nothing of so small a job (its blocks withdrawn before it took them, its probe copied).
if sys.argv[2] == "hdss":
    assert all(w["blocks"] > 0 for w in r["workers"]), "both PUs are trained: %s" % r["workers"]
if sys.argv[2] == "plb-hac":
    trace = [json.loads(l) for l in open(sys.argv[3])]
    # Every column ends once at least: as its block, or as a backup copy of a block whose
    # original had not ended when the job returned; each range is handed out once.
    firsts = sum(t["size"] for t in trace if t["phase"] != "backup")
    assert firsts <= 512 <= sum(t["size"] for t in trace), trace
    for t in trace:
        assert t["measured_s"] > 0 and t["time_s"] > 0, t
        # The measured duration is what StarPU's profiling saw plus the block's unseen rest.
        assert t["exec_s"] > 0 and t["transfer_s"] >= 0 and t["unseen_s"] >= 0, t
        assert abs(t["exec_s"] + t["transfer_s"] + t["unseen_s"] - t["measured_s"]) <= 1e-9 * max(1.0, t["measured_s"]), t
else:
    assert not os.path.exists(sys.argv[3]), "hdss writes no plb-hac trace"
PY
done

# On one PU the phases are deterministic (with two, a fast CPU may finish the whole job
# while the OpenCL PU is still training): training x_init then 2 x_init, then blocks that
# grow by at most the trust region's factor (4) over the largest one run, not cut into
# virtual steps: a lone PU has nothing to balance, and every block pays its fixed cost.
# (HETPU_PLBHAC_MIN_STEP_MS=0: steps are not held back by the job's length either;
# HETPU_PLBHAC_LADDER=0: the training phase, not the ladder of a first run.)
STARPU_NCPU=0 HETPU_PLBHAC_LADDER=0 HETPU_PLBHAC_MIN_STEP_MS=0 HETPU_TRACE="$STARPU_HOME/one.trace" STARPU_SCHED=plb-hac "$matmul" -n 256 --verify \
    >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "plb-hac on one PU"; }
python3 - "$STARPU_HOME/one.trace" <<'PY' || fail "plb-hac phases on one PU"
import json, sys
trace = [json.loads(l) for l in open(sys.argv[1])]
phases = [t["phase"] for t in trace]
assert phases[:2] == ["training", "training"], phases
assert trace[1]["size"] == 2 * trace[0]["size"], trace[:2]
assert "execution" in phases, phases
steps = [t["step"] for t in trace if t["phase"] != "training"]
assert steps == sorted(steps) and steps[0] == 1, steps
for k in range(2, len(trace)):
    # 4x, or 16x while the time has hardly grown with the size (and has not fallen: a
    # first block's kernel compilation is no evidence of a flat curve).
    hi = max(trace[:k], key=lambda t: t["size"])
    lo = [t for t in trace[:k] if t["size"] <= hi["size"] / 2]
    factor = 4
    if lo:
        lo = max(lo, key=lambda t: t["size"])
        if hi["measured_s"] >= 0.8 * lo["measured_s"] and \
                hi["measured_s"] / lo["measured_s"] < (hi["size"] / lo["size"]) ** 0.5:
            factor = 16
    assert trace[k]["size"] <= factor * hi["size"], (k, factor, trace)
assert len(trace) <= 8, "a lone PU cut into steps: %s" % [t["size"] for t in trace]
assert sum(t["size"] for t in trace) == 256
PY

# Blocks are whole GEMM tiles (--granule, 32 columns by default once n holds 32 of them):
# every plb-hac block of a 1,040-column job is a multiple of 32 but the last, which holds
# the 16 columns left; with --granule 1 the planner's widths are its own.
for granule in default 1; do
    extra=
    [ "$granule" = default ] || extra="--granule $granule"
    rm -f "$STARPU_HOME/tiles.trace" "$STARPU_HOME/tiles.jsonl"
    HETPU_TRACE="$STARPU_HOME/tiles.trace" STARPU_SCHED=plb-hac "$matmul" -n 1040 $extra --verify \
        --json "$STARPU_HOME/tiles.jsonl" >"$STARPU_HOME/out" 2>&1 ||
        { cat "$STARPU_HOME/out" >&2; fail "plb-hac, --granule $granule"; }
    python3 - "$STARPU_HOME/tiles.jsonl" "$STARPU_HOME/tiles.trace" "$granule" <<'PY' || fail "blocks of --granule $granule"
import json, sys
r = json.loads(open(sys.argv[1]).read())
trace = [json.loads(l) for l in open(sys.argv[2])]
sizes = [t["size"] for t in trace]  # backup copies have their block's size
firsts = sum(t["size"] for t in trace if t["phase"] != "backup")
assert r["verified"] is True and firsts <= 1040 <= sum(sizes), (r, trace)
if sys.argv[3] == "default":
    assert r["granule"] == 32, r
    assert sum(1 for s in sizes if s % 32) <= 1, sizes
    assert all(s % 32 == 0 or s % 32 == 1040 % 32 for s in sizes), sizes
else:
    assert r["granule"] == 1, r
PY
done
check_granule_rejected() {
    if "$matmul" "$@" >/dev/null 2>"$STARPU_HOME/err"; then fail "matmul $* accepted"; fi
    grep -q -- "--granule" "$STARPU_HOME/err" || fail "matmul $*: --granule not named: $(cat "$STARPU_HOME/err")"
}
check_granule_rejected -n 64 --granule 128
check_granule_rejected -n 1024 --granule 64 --block 100

# Bad planner settings are reported, not ignored.
if HETPU_PLBHAC_ALPHA=2 STARPU_SCHED=plb-hac "$matmul" -n 64 >"$STARPU_HOME/out" 2>&1; then fail "HETPU_PLBHAC_ALPHA=2 accepted"; fi
grep -q "HETPU_PLBHAC_ALPHA" "$STARPU_HOME/out" || fail "bad HETPU_PLBHAC_ALPHA not named: $(cat "$STARPU_HOME/out")"

# Single precision, rectangular, two repetitions: one JSON line each.
STARPU_SCHED=eager "$matmul" -m 96 -n 80 -k 48 --precision single --block 16 --reps 2 --verify \
    --json "$STARPU_HOME/single.jsonl" >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "single precision run"; }
python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["rep"] for r in rows] == [0, 1], rows
assert all(r["precision"] == "single" and r["verified"] is True for r in rows), rows
' "$STARPU_HOME/single.jsonl" || fail "single precision JSON lines"

# Unknown policy: non-zero exit, and the valid names are listed.
if STARPU_SCHED=nonexistent "$matmul" -n 64 >/dev/null 2>"$STARPU_HOME/err"; then
    fail "STARPU_SCHED=nonexistent accepted"
fi
grep -q "greedy" "$STARPU_HOME/err" || fail "unknown policy: greedy not listed"
grep -q "dmda" "$STARPU_HOME/err" || fail "unknown policy: dmda not listed"

# Bad input: exit 2 before StarPU starts, with a message naming the problem.
check_bad() {
    expect="$1"
    shift
    "$matmul" "$@" >/dev/null 2>"$STARPU_HOME/err"
    rc=$?
    [ "$rc" -eq 2 ] || fail "matmul $* exited $rc, expected 2"
    grep -q -- "$expect" "$STARPU_HOME/err" || fail "matmul $*: message lacks '$expect': $(cat "$STARPU_HOME/err")"
}
check_bad "-n" -n 0
check_bad "--block 999999" -n 64 --block 999999
check_bad "half" -n 64 --precision half
check_bad "not expected: --bogus" -n 64 --bogus

"$matmul" --help | grep -q -- "--precision" || fail "--help does not describe the options"
echo "matmul cli: ok"
