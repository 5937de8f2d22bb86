#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The accounting hook under real allocations: each run's ledger row carries the job id,
# partition, CPUs, GPUs and memory that Slurm reports for the job (sacct, scontrol), one row
# per job step, the charge of the accounting paper's model for that allocation, and an SU
# rate equal to Slurm's own billing under the weights `hetpu su rate` gave (slurm.conf).
. "$HETPU_SLURM_TESTS/job_lib.sh"

sort_tres() { tr ',' '\n' | sort | tr '\n' ' '; }

# check_job ID ROWS NAME: Slurm's record of the job (accounting database and controller
# agree), then its ledger rows against it.
check_job() {
    local id=$1 rows=$2 name=$3 line partition tres state
    line=$(sacct_job "$id" "Partition,AllocTRES,State")
    IFS='|' read -r partition tres state <<<"$line"
    [ "$state" = COMPLETED ] || fail "$name: job $id ended $state"
    scontrol show job -o "$id" >"$d/scontrol.$id"
    if [ "$(field Partition "$d/scontrol.$id")" != "$partition" ] ||
        [ "$(field TRES "$d/scontrol.$id" | sort_tres)" != "$(sort_tres <<<"$tres")" ]; then
        fail "$name: scontrol and sacct disagree on job $id: $(cat "$d/scontrol.$id") / $line"
    fi
    echo "$name: Slurm job $id, partition $partition, AllocTRES $tres, steps: $(sacct_steps "$id" | tr '\n' ' ')"
    mapfile -t runs < <(sacct_step_tres "$id")
    [ ${#runs[@]} -eq "$rows" ] || fail "$name: job $id has ${#runs[@]} steps, expected $rows"
    check_ledger "$id" "$partition" "$tres" "${runs[@]}" || fail "$name: ledger rows of job $id (see above)"
}

# 1. A batch job in the gpu partition holding 2 CPUs, both GPUs and 1 GiB, with two job
#    steps, each a run: two rows, each charged the allocation.
cat >"$d/steps.sh" <<EOF
#!/bin/sh
srun "$matmul" -n 256 --verify
srun "$matmul" -n 256 --verify
EOF
id=$(timeout 600 sbatch --parsable --wait -p gpu -c 2 --gres=gpu:2 --mem=1024 -J acct-steps -o "$d/steps.out" "$d/steps.sh") ||
    { cat "$d/steps.out"; fail "batch job with two steps (job ${id:-?})"; }
[ "$(sacct_steps "$id" | grep -c '|COMPLETED$')" -eq 2 ] || fail "job $id: Slurm shows $(sacct_steps "$id") instead of 2 completed steps"
[ "$(grep -c "held per node (Slurm job $id)" "$d/steps.out")" -eq 2 ] || { cat "$d/steps.out"; fail "summaries of job $id"; }
check_job "$id" 2 "two steps"
ok "a job step is one ledger row, charged the allocation Slurm reports"

# 2. No --mem: Slurm gives the job its default memory (DefMemPerNode unset: the whole
#    node) and sets no SLURM_MEM_PER_* variable; the hook asks Slurm.
printf '#!/bin/sh\nsrun "%s" -n 256 --verify\n' "$matmul" >"$d/nomem.sh"
id=$(timeout 600 sbatch --parsable --wait -p cpu -c 1 -J acct-nomem -o "$d/nomem.out" "$d/nomem.sh") ||
    { cat "$d/nomem.out"; fail "batch job without --mem"; }
check_job "$id" 1 "default memory"
ok "a job without --mem is charged the memory Slurm gave it"

# 3. An allocation made by srun itself: its tasks get no SLURM_MEM_PER_NODE either, even
#    with --mem. The job id is Slurm's (sacct by the job's name), not one the test chose.
timeout 600 srun -p gpu -c 1 --gres=gpu:1 --mem=2048 -J acct-srun "$matmul" -n 256 --verify >"$d/srun.out" 2>&1 ||
    { cat "$d/srun.out"; fail "srun-made allocation"; }
for ((i = 0; i < 600; i++)); do  # slurmdbd hears of the job shortly after it ends
    id=$(sacct -n -X -P --name acct-srun -o JobID 2>/dev/null | tail -n 1)
    [ -n "$id" ] && break
    sleep 0.5
done
[ -n "$id" ] || fail "sacct knows no job acct-srun after 300 s"
check_job "$id" 1 "srun allocation"
ok "an allocation made by srun is charged what Slurm allocated"
