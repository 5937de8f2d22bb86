#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# kmeans checkpoints on 3 MPI ranks: each rank checkpoints into <dir>/rank<r>, rank 0 writes
# the global record once a version is durable on every rank. The whole mpirun (launcher
# and ranks) is killed with SIGKILL mid-run; --restart on 3 ranks resumes from the global
# record's version and ends with the byte-identical centroids of an uninterrupted run;
# --restart on 2 ranks is refused with a clear message.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/mpi_env.sh"
. "$(dirname "$0")/catch_run.sh"

km="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
[ -x "$km" ] || fail "$km not built"
command -v setsid >/dev/null 2>&1 && command -v pkill >/dev/null 2>&1 || { echo "SKIP: no setsid or pkill"; exit 77; }
d=$STARPU_HOME
ck="$d/ckpt"
# Fixed blocks (greedy + --block) under the central planner: sums in block order on rank 0,
# so the centroids are a pure function of the data and a restart reproduces them bit for bit
# (see kmeans_restart.sh). Under the per-node planner each rank sums its own blocks, so the
# bits depend on the shares and on any range re-shared while a pass runs.
export HETPU_MPI_PLANNER=central
run="--generate 50000 --dims 2 -k 50 --blobs 50 --sigma 25 --seed 5 --block 5000 --tol 0 --max-iter 3000"

# shellcheck disable=SC2086
hetpu_mpirun -np 3 -x HETPU_MPI_PLANNER -x STARPU_SCHED=greedy "$rank_home" "$km" $run --centroids "$d/c_full.csv" --json "$d/full.jsonl" \
    >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "uninterrupted 3-rank run"; }

# Its own session, so one kill reaches the launcher and every rank (mpirun puts each rank
# in its own process group, but they stay in the session).
# shellcheck disable=SC2086
setsid timeout -k 10 "$MPI_TIMEOUT" mpirun --oversubscribe --bind-to none --allow-run-as-root -q \
    -x STARPU_WORKERS_NOBIND=1 -x STARPU_HOME -x STARPU_SILENT -x HETPU_LEDGER -x HETPU_MPI_PLANNER -x STARPU_SCHED=greedy \
    -np 3 "$rank_home" "$km" $run --checkpoint-every 1 --checkpoint-dir "$ck" --centroids "$d/c_killed.csv" >"$d/killed.out" 2>&1 &
pid=$!
# catch_run holds every process of the session stopped while it looks, so the kill lands
# mid-run however loaded or fast the machine is. Ready once the global record has moved past
# the first version it showed, so the kill does not always hit the first version.
signal_run() { pkill -"$1" -s "$pid" 2>/dev/null && ps -o stat= -s "$pid" 2>/dev/null | grep -qv '^Z'; }
first=
second_version() {
    v=$(sed -n 's/^version //p' "$ck/global" 2>/dev/null)
    [ -n "$v" ] || return 1
    [ -n "$first" ] || first=$v
    [ "$v" != "$first" ]
}
catch_run signal_run second_version || {
    pkill -KILL -s "$pid"
    cat "$d/killed.out" >&2
    fail "the checkpointing run ended, or its global record did not pass one version in $ck, before the kill"
}
pkill -KILL -s "$pid"
wait "$pid" 2>/dev/null
tries=0
while pgrep -s "$pid" >/dev/null 2>&1; do  # until every rank is gone
    tries=$((tries + 1))
    [ "$tries" -lt 500 ] || fail "ranks of the killed run still alive"
    sleep 0.01
done
[ ! -e "$d/c_killed.csv" ] || fail "the killed run wrote its centroids: it was not killed mid-run"
version=$(sed -n 's/^version //p' "$ck/global")
echo "killed; global record at version $version"

# A different number of ranks: a clear refusal on every rank.
# shellcheck disable=SC2086
hetpu_mpirun -np 2 -x HETPU_MPI_PLANNER -x STARPU_SCHED=greedy "$rank_home" "$km" $run --checkpoint-every 1 --checkpoint-dir "$ck" --restart \
    >"$d/out" 2>&1 && fail "--restart with 2 ranks of a 3-rank run must fail"
grep -q "taken by 3 ranks, this run has 2" "$d/out" || { cat "$d/out" >&2; fail "no clear message for another rank count"; }

# shellcheck disable=SC2086
hetpu_mpirun -np 3 -x HETPU_MPI_PLANNER -x STARPU_SCHED=greedy "$rank_home" "$km" $run --checkpoint-every 1 --checkpoint-dir "$ck" --restart \
    --centroids "$d/c_restart.csv" --json "$d/restart.jsonl" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "--restart on 3 ranks"; }
grep -q "restarted from the checkpoint of iteration $version" "$d/out" || { cat "$d/out" >&2; fail "--restart did not resume from the global record's version $version"; }
cmp -s "$d/c_full.csv" "$d/c_restart.csv" || fail "restarted 3-rank run's centroids differ from the uninterrupted run's"
python3 - "$d/full.jsonl" "$d/restart.jsonl" <<'PY' || fail "JSON lines of the uninterrupted and restarted runs"
import json, sys
full, restart = (json.loads(open(p).read()) for p in sys.argv[1:3])
assert full["ranks"] == 3 and restart["ranks"] == 3, (full["ranks"], restart["ranks"])
r = restart["restarted_from"]
assert isinstance(r, int) and 1 <= r < full["iterations"], restart
for key in ("iterations", "inertia", "converged"):
    assert restart[key] == full[key], (key, full[key], restart[key])
PY
echo "ok: 3-rank kmeans killed with SIGKILL and restarted: same centroids"
