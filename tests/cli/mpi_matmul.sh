#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# matmul over 2 and 3 MPI ranks on this machine: one planner on rank 0, blocks run on every
# rank, results verified on rank 0 against the reference product, one JSON line with
# "ranks" and each worker's rank and host. Also heterogeneous ranks (an MPMD launch whose
# rank 0 has the PoCL OpenCL worker) and a clear error when the ranks ask for different
# policies.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/mpi_env.sh"

matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
[ -x "$matmul" ] || fail "$matmul not built"

run_case() {  # run_case RANKS POLICY N
    json="$STARPU_HOME/np$1-$2.jsonl"
    rm -f "$json"
    hetpu_mpirun -np "$1" -x STARPU_SCHED="$2" "$rank_home" "$matmul" -n "$3" --verify --json "$json" \
        >"$STARPU_HOME/out" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || { cat "$STARPU_HOME/out" >&2; fail "matmul on $1 ranks under $2 exited $rc"; }
    [ "$(grep -c '^matmul rep' "$STARPU_HOME/out")" -eq 1 ] || { cat "$STARPU_HOME/out" >&2; fail "expected one summary (rank 0's)"; }
    check_mpi_json "$json" "$1" "$3" || fail "JSON line of matmul on $1 ranks under $2 (see above)"
    echo "ok: matmul on $1 ranks under $2"
}

for policy in ${MPI_POLICIES-greedy plb-hac hdss}; do
    run_case 2 "$policy" 384
    run_case 3 "$policy" 384
done
run_case 3 dmda 256

# Heterogeneous ranks (MPMD): rank 0 is the CPU + PoCL OpenCL node, ranks 1 and 2 one CPU
# worker each. Every PU of the job, the OpenCL one included, gets blocks.
if [ "$have_opencl" = 1 ]; then
    for policy in plb-hac hdss greedy; do
        json="$STARPU_HOME/mpmd-$policy.jsonl"
        # -x options of an MPMD launch belong to one part each: every part names the policy.
        hetpu_mpirun \
            -np 1 -x STARPU_SCHED=$policy -x STARPU_NOPENCL=1 -x STARPU_OPENCL_ON_CPUS=1 "$rank_home" "$matmul" -n 384 --verify --json "$json" : \
            -np 2 -x STARPU_SCHED=$policy "$rank_home" "$matmul" -n 384 --verify --json "$json" >"$STARPU_HOME/out" 2>&1 ||
            { cat "$STARPU_HOME/out" >&2; fail "heterogeneous (MPMD) run under $policy"; }
        # plb-hac and hdss place every block on a PU, so the OpenCL worker must have run some;
        # under greedy the rank's own policy places them (first idle worker).
        ocl_must_work=0
        [ "$policy" != greedy ] && ocl_must_work=1
        check_mpi_json "$json" 3 384 $ocl_must_work || fail "JSON line of the heterogeneous run under $policy"
        echo "ok: heterogeneous ranks under $policy"
    done
fi

# Different policies on different ranks: a clear error on every rank, no hang.
hetpu_mpirun -np 1 -x STARPU_SCHED=plb-hac "$rank_home" "$matmul" -n 64 : -np 1 -x STARPU_SCHED=dmda "$rank_home" "$matmul" -n 64 \
    >"$STARPU_HOME/out" 2>&1 && fail "ranks with different policies must fail"
grep -q "different policies" "$STARPU_HOME/out" || { cat "$STARPU_HOME/out" >&2; fail "no clear message for mismatched policies"; }
grep -q "rank 1 'dmda'" "$STARPU_HOME/out" || { cat "$STARPU_HOME/out" >&2; fail "the message must name the ranks' policies"; }
echo "ok: mismatched policies refused"

# Accounting: exactly one ledger row for the 3-rank job, written by rank 0, with each
# rank's workers named after their rank and the energy of all ranks summed. The run is cold
# (no saved models): the 3-rank run above saved plb-hac's models for these workers, and a
# warm start may rightly give a remote rank no block of so small a job, while training sends
# every PU one.
ledger="$STARPU_HOME/mpi-ledger.sqlite"
HETPU_LEDGER="$ledger" hetpu_mpirun -np 3 -x STARPU_SCHED=plb-hac -x HETPU_PLBHAC_MODELS=off "$rank_home" "$matmul" -n 256 --verify \
    >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "accounted 3-rank run"; }
[ "$(grep -c 'ledger: recorded as job' "$STARPU_HOME/out")" -eq 1 ] || { cat "$STARPU_HOME/out" >&2; fail "one accounting summary expected (rank 0's)"; }
python3 - "$ledger" <<'PY' || fail "ledger of the 3-rank job (see above)"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
jobs = db.execute("SELECT id, energy_j, policy FROM jobs").fetchall()
assert len(jobs) == 1, "expected one ledger row for the MPI job, got %d" % len(jobs)
rows = db.execute("SELECT worker_type, tasks, energy_j FROM job_workers WHERE job_id = ?", (jobs[0][0],)).fetchall()
names = sorted(r[0] for r in rows)
assert names == ["rank0/cpu", "rank1/cpu", "rank2/cpu"], names
assert all(r[1] >= 1 for r in rows), rows  # every rank ran tasks
assert abs(sum(r[2] for r in rows) - jobs[0][1]) <= 1e-9 * max(1.0, jobs[0][1]), (rows, jobs)
assert jobs[0][2] == "plb-hac", jobs
PY
echo "ok: one ledger row for the 3-rank job"
