#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# hetpu's MPI scale-out under Slurm: a batch job whose one step runs hetpu-matmul --verify
# on 3 tasks, launched the way README/docs/cluster.md say (srun --mpi=pmix: Debian's Slurm
# and OpenMPI share PMIx). One verified JSON record with ranks 3, one ledger row for the
# job, Slurm's step with 3 tasks. Then srun without a PMI plugin: one task is a plain run,
# several are refused with the fix (OpenMPI would abort in MPI_Init).
. "$HETPU_SLURM_TESTS/job_lib.sh"
srun --mpi=list 2>&1 | grep -qw pmix || fail "this Slurm has no pmix plugin: $(srun --mpi=list 2>&1)"

# Each rank one CPU worker (the shell tests' MPI ranks); --overcommit: 3 tasks on a node
# that may have only 2 cores.
cat >"$d/mpi.sh" <<EOF
#!/bin/sh
export STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SCHED=plb-hac HETPU_PLBHAC_MODELS=off
srun --mpi=pmix -n 3 "$rank_home" "$matmul" -n 384 --verify --json "$d/mpi.jsonl"
EOF
id=$(timeout 600 sbatch --parsable --wait -p cpu -n 3 --overcommit -c 2 --mem=3072 -J mpi-matmul -o "$d/mpi.out" "$d/mpi.sh") ||
    { cat "$d/mpi.out"; fail "3-task matmul (job ${id:-?})"; }
cat "$d/mpi.out"
line=$(sacct_job "$id" "Partition,AllocTRES,State")
IFS='|' read -r partition tres state <<<"$line"
[ "$state" = COMPLETED ] || fail "job $id ended $state"
steps=$(sacct -n -P -j "$id" -o JobID,NTasks,State | grep -E "^$id\.[0-9]+\|" || true)
[ "$steps" = "$id.0|3|COMPLETED" ] || fail "job $id: Slurm shows steps '$steps', expected one of 3 tasks"
python3 - "$d/mpi.jsonl" <<'PY' || fail "JSON record of the 3-task job (see above)"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, "expected one JSON record (rank 0's), got %d" % len(lines)
r = json.loads(lines[0])
assert r["verified"] is True and r["ranks"] == 3, r
assert sorted({w["rank"] for w in r["workers"]}) == [0, 1, 2], r["workers"]
assert sum(w["elements"] for w in r["workers"]) == 384, r["workers"]
for rank in range(3):
    assert sum(w["blocks"] for w in r["workers"] if w["rank"] == rank) >= 1, "rank %d ran no block" % rank
print("  record: ranks %d, verified, elements per rank %s" % (r["ranks"],
      [sum(w["elements"] for w in r["workers"] if w["rank"] == k) for k in range(3)]))
PY
[ "$(grep -c "ledger: recorded as job" "$d/mpi.out")" -eq 1 ] || fail "one accounting summary expected (rank 0's)"
check_ledger "$id" "$partition" "$tres" "$(sacct_step_tres "$id")" || fail "ledger row of the 3-task job $id"
[ "$(sqlite3 "$HETPU_LEDGER" "SELECT COUNT(*) FROM job_workers w JOIN jobs j ON j.id = w.job_id WHERE j.slurm_job_id = '$id'")" -eq 3 ] ||
    fail "the job's row should have one worker row per rank"
ok "3 tasks under srun --mpi=pmix: one verified record with ranks 3, one ledger row for job $id"

# Across nodes (a cluster of several namespaced nodes, see slurm_check.sh): one task per node,
# each rank on its own node with its own hostname, MPI over the nodes' links; the ledger row
# holds the job's node count, and sacct the same nodes.
if [ "${HETPU_SLURM_NODES:-1}" -ge 3 ]; then
    cat >"$d/mpi3.sh" <<JOB
#!/bin/sh
export STARPU_NOPENCL=0 STARPU_NCPU=1 STARPU_SCHED=plb-hac HETPU_PLBHAC_MODELS=off
srun --mpi=pmix -N 3 --ntasks-per-node=1 "$rank_home" "$matmul" -n 384 --verify --json "$d/mpi3.jsonl"
JOB
    id=$(timeout 600 sbatch --parsable --wait -p cpu -N 3 --ntasks-per-node=1 -c 1 --mem=1024 -J mpi-3nodes \
        -o "$d/mpi3.out" "$d/mpi3.sh") || { cat "$d/mpi3.out"; fail "matmul on 3 nodes (job ${id:-?})"; }
    line=$(sacct_job "$id" "Partition,AllocTRES,NNodes,NodeList")
    IFS='|' read -r partition tres nnodes nodelist <<<"$line"
    [ "$nnodes" = 3 ] || fail "job $id: Slurm gave $nnodes nodes ($nodelist), expected 3"
    python3 - "$d/mpi3.jsonl" <<'PY' || fail "JSON record of the 3-node job (see above)"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[0])
assert r["verified"] is True and r["ranks"] == 3, r
hosts = {w["rank"]: w["host"] for w in r["workers"]}
assert len(set(hosts.values())) == 3, "the 3 ranks must run on 3 hosts: %s" % hosts
print("  record: ranks on %s" % ", ".join("%d %s" % kv for kv in sorted(hosts.items())))
PY
    check_ledger "$id" "$partition" "$tres" "$(sacct_step_tres "$id")" || fail "ledger row of the 3-node job $id"
    [ "$(sqlite3 "$HETPU_LEDGER" "SELECT nodes FROM jobs WHERE slurm_job_id = '$id'")" = 3 ] ||
        fail "the ledger row of job $id must count its 3 nodes"
    ok "srun -N 3 --mpi=pmix across nodes $nodelist: verified, one rank per node, a ledger row of 3 nodes"
fi

# srun without --mpi (MpiDefault=none): one task runs as a plain process...
timeout 300 srun -p cpu -n 1 -J nopmi-1 "$matmul" -n 128 --verify >"$d/nopmi1.out" 2>&1 ||
    { cat "$d/nopmi1.out"; fail "srun -n 1 without a PMI plugin"; }
grep -q "verified" "$d/nopmi1.out" || { cat "$d/nopmi1.out"; fail "srun -n 1: no verified result"; }
# ...several are refused, each task saying how to launch them.
if timeout 300 srun -p cpu -n 2 --overcommit -J nopmi-2 "$matmul" -n 128 --verify >"$d/nopmi2.out" 2>&1; then
    cat "$d/nopmi2.out"; fail "srun -n 2 without a PMI plugin must fail"
fi
grep -q "without a PMI plugin, so MPI cannot join them into one job; launch with srun --mpi=pmix" "$d/nopmi2.out" ||
    { cat "$d/nopmi2.out"; fail "srun -n 2 without a PMI plugin: no clear message"; }
ok "srun without --mpi: one task is a plain run, two are refused with the fix"
