#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# 1. `hetpu batch` inside an allocation (salloc): its jobs run as job steps (srun --exact)
#    or in the allocation's shell; one ledger row each, with the job id salloc was granted.
# 2. scancel of a running hetpu job (k-means under the MGB policy, checkpointing every
#    iteration): no ledger row for the cancelled run, no reservation left in the node-wide
#    MGB arbiter, and the checkpoints restart: the restarted job ends with the centroids of
#    an uninterrupted run.
. "$HETPU_SLURM_TESTS/job_lib.sh"
. "$HETPU_SLURM_TESTS/../cli/catch_run.sh"

# --- 1. hetpu batch in salloc ---------------------------------------------------------------
cat >"$d/jobs" <<EOF
srun --exact -n 1 -c 1 --mem=1024 $matmul -n 256 --verify
srun --exact -n 1 -c 1 --mem=1024 $matmul -n 256 --verify
$matmul -n 256 --verify
EOF
mkdir -p "$d/batch-logs"
timeout 600 salloc -p cpu -c 2 --mem=2048 -J hetpu-batch \
    "$hetpu" batch --jobs "$d/jobs" --workers 2 --timeout 300 --json "$d/batch.jsonl" --log-dir "$d/batch-logs" \
    >"$d/batch.out" 2>"$d/batch.err" || { cat "$d/batch.out" "$d/batch.err" "$d"/batch-logs/*; fail "hetpu batch in salloc"; }
id=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$d/batch.err")
[ -n "$id" ] || { cat "$d/batch.err"; fail "salloc granted no allocation"; }
grep -q "3 jobs, 2 workers: 3 ok" "$d/batch.out" || { cat "$d/batch.out"; fail "hetpu batch summary"; }
line=$(sacct_job "$id" "Partition,AllocTRES,State")
IFS='|' read -r partition tres state <<<"$line"
[ "$(sacct_steps "$id" | grep -c '|COMPLETED$')" -eq 2 ] || fail "job $id: steps $(sacct_steps "$id"), expected 2 completed"
echo "hetpu batch: Slurm job $id, partition $partition, AllocTRES $tres"
# Two runs in steps of their own (1 CPU, 1 GiB each), one in the allocation's shell (all of it).
mapfile -t runs < <(sacct_step_tres "$id")
check_ledger "$id" "$partition" "$tres" "${runs[@]}" "$tres" || fail "ledger rows of the batch in job $id"
ok "hetpu batch in salloc: 3 jobs ok, 3 ledger rows carrying job $id"

# --- 2. scancel of a running job, then its restart ------------------------------------------
# kmeans_restart.sh's run: fixed blocks, so the centroids are a pure function of the data
# and a restart reproduces them bit for bit.
run="--generate 50000 --dims 2 -k 50 --blobs 50 --sigma 25 --seed 5 --block 5000 --tol 0 --max-iter 3000"
export STARPU_SCHED=mgb HETPU_MGB_ARBITER=/hetpu-mgb-slurm-test-$$ HETPU_MGB_TRACE=$d/mgb.trace
trap 'rm -f "/dev/shm$HETPU_MGB_ARBITER"' EXIT
ck=$d/ckpt
shopt -s nullglob
cat >"$d/km.sh" <<EOF
#!/bin/sh
srun "$kmeans" $run --checkpoint-every 1 --checkpoint-dir "$ck" "\$@"
EOF
id=$(timeout 900 sbatch --parsable --wait -p gpu --gres=gpu:1 -c 2 --mem=2048 -J km-full -o "$d/full.out" \
    --wrap "srun $kmeans $run --centroids $d/c_full.csv") || { cat "$d/full.out"; fail "uninterrupted k-means"; }
ledger_rows() { sqlite3 "$HETPU_LEDGER" "SELECT COUNT(*) FROM jobs WHERE slurm_job_id = '$1'"; }
[ "$(ledger_rows "$id")" -eq 1 ] || fail "uninterrupted k-means (job $id): no ledger row"
rm -f "$HETPU_MGB_TRACE"

# The run to cancel stops itself before it starts (its pid in km.pid), so this test can run
# it in slices with catch_run and cancel it while it is held mid-run, however loaded or fast
# the machine is (the nodes are this machine's processes).
cat >"$d/km_held.sh" <<EOF
#!/bin/sh
srun sh -c 'echo \$\$ >"$d/km.pid"; kill -STOP \$\$; exec "$kmeans" $run --checkpoint-every 1 --checkpoint-dir "$ck" --centroids "$d/c_cancel.csv"'
EOF
id=$(sbatch --parsable -p gpu --gres=gpu:1 -c 2 --mem=2048 -J km-cancel -o "$d/cancel.out" "$d/km_held.sh")
wait_state "$id" R 300
for ((i = 0; ; i++)); do
    [ -s "$d/km.pid" ] && break
    [ "$(squeue -h -j "$id" -o %t)" = R ] || { cat "$d/cancel.out"; fail "job $id ended before its run started"; }
    [ $i -lt 3000 ] || fail "job $id: its run did not start in 300 s"
    sleep 0.1
done
held=$(cat "$d/km.pid")
signal_run() { signal_pid "$held" "$1"; }
# Events: a device granted through the arbiter, then two complete checkpoint versions (so the
# cancel does not always hit the first), and the arbiter's status readable (a run stopped
# while it held the arbiter's lock makes the status reader give up: the next slice frees it).
# The arbiter is this test's own: its one process must be the held run.
ready_to_cancel() {
    manifests=("$ck"/kmeans.v*.manifest)
    grep -q '"event":"grant"' "$HETPU_MGB_TRACE" 2>/dev/null && [ "${#manifests[@]}" -ge 2 ] || return 1
    "$hetpu" mgb status --json >"$d/status.before" 2>"$d/status.err" || return 1
    pid=$(python3 -c "import json; s = json.load(open('$d/status.before')); print(*[p['pid'] for p in s['processes']])")
    [ "$pid" = "$held" ]
}
catch_run signal_run ready_to_cancel || {
    cat "$d/cancel.out" "$d/status.before" "$d/status.err" 2>/dev/null
    fail "job $id: its run ended, or had no grant, two checkpoints and a place alone in the arbiter, before the cancel"
}
scancel "$id"
line=$(sacct_job "$id" "State")
case "$line" in CANCELLED*) ;; *) fail "job $id: Slurm says $line after scancel" ;; esac
for ((i = 0; i < 600; i++)); do
    [ -z "$(squeue -h -j "$id" 2>/dev/null)" ] && ! kill -0 "$pid" 2>/dev/null && break
    sleep 0.2
done
! kill -0 "$pid" 2>/dev/null || fail "k-means (pid $pid) outlived scancel of job $id"
[ ! -e "$d/c_cancel.csv" ] || fail "the cancelled run wrote its centroids: it was not cancelled mid-run"
[ "$(ledger_rows "$id")" -eq 0 ] || fail "the cancelled job $id has a ledger row"
"$hetpu" mgb status --json >"$d/status.after"
python3 - "$d/status.after" "$pid" <<'PY' || { cat "$d/status.after"; fail "stale MGB reservation after scancel"; }
import json, sys
s = json.load(open(sys.argv[1]))
assert all(d["reserved_bytes"] == 0 and d["tasks"] == 0 for d in s["devices"]), s["devices"]
assert not any(p["pid"] == int(sys.argv[2]) for p in s["processes"]), s["processes"]
PY
manifests=("$ck"/kmeans.v*.manifest)
ok "scancel of job $id (${#manifests[@]} checkpoint versions on disk): no ledger row, no MGB reservation left"

id=$(timeout 900 sbatch --parsable --wait -p gpu --gres=gpu:1 -c 2 --mem=2048 -J km-restart -o "$d/restart.out" \
    "$d/km.sh" --restart --centroids "$d/c_restart.csv") || { cat "$d/restart.out"; fail "restart of the cancelled job"; }
grep -q "restarted from the checkpoint of iteration" "$d/restart.out" || { cat "$d/restart.out"; fail "--restart did not resume"; }
cmp -s "$d/c_full.csv" "$d/c_restart.csv" || fail "restarted centroids differ from the uninterrupted run's"
line=$(sacct_job "$id" "Partition,AllocTRES,State")
IFS='|' read -r partition tres state <<<"$line"
[ "$state" = COMPLETED ] || fail "restarted job $id ended $state"
check_ledger "$id" "$partition" "$tres" "$(sacct_step_tres "$id")" || fail "ledger row of the restarted job $id"
ok "the cancelled job's checkpoints restart (job $id): centroids identical to the uninterrupted run"
