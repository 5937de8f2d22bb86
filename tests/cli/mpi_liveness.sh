#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Liveness: a rank stopped (SIGSTOP) for longer than HETPU_MPI_LIVENESS_S ends the job on
# every rank, rank 0 naming the rank and its host, under both planners, well before the
# watchdog; a rank stopped for a small part of the limit and continued (SIGCONT) lets the
# job complete verified. No timing luck: the stopped rank stays stopped until the job has
# ended (however long the machine takes to notice), the 6 s limit is several times the
# longest block a loaded machine runs here (so no running rank looks stuck), and the
# continued rank is stopped for 3 s of a 120 s limit. The stop lands inside the run: the
# planner's trace shows the blocks have begun before the test stops the rank.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
MPI_TIMEOUT=${MPI_TIMEOUT:-240}
. "$(dirname "$0")/mpi_env.sh"

matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
[ -x "$matmul" ] || fail "$matmul not built"
export STARPU_SCHED=plb-hac
out="$STARPU_HOME/out"
# Each rank notes its pid and writes its planner's trace (the first line: its blocks began).
ranks_dir="$STARPU_HOME/ranks"
watched="$STARPU_HOME/watched_rank.sh"
cat >"$watched" <<'SH'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-0}
echo $$ >"$HETPU_TEST_RANKS/rank$r.pid"
HETPU_TRACE="$HETPU_TEST_RANKS/rank$r.trace"
export HETPU_TRACE
exec "$@"
SH
chmod +x "$watched"
# A job long next to the stops (seconds on this machine, however loaded), with small blocks.
job="-m 2048 -k 512 -n 32768"

# wait_for FILE: until FILE exists and is not empty (the launch may have failed: give up then).
wait_for() {
    i=0
    while [ ! -s "$1" ]; do
        kill -0 "$launch" 2>/dev/null || return 1
        i=$((i + 1))
        [ $i -lt 2400 ] || return 1
        sleep 0.1
    done
}

# launch PLANNER LIMIT: the job on 3 ranks in the background ($launch), output in $out.
launch() {
    rm -rf "$ranks_dir"
    mkdir -p "$ranks_dir"
    HETPU_TEST_RANKS="$ranks_dir" HETPU_MPI_PLANNER=$1 HETPU_MPI_LIVENESS_S=$2 \
        hetpu_mpirun -np 3 -x HETPU_TEST_RANKS -x HETPU_MPI_PLANNER -x HETPU_MPI_LIVENESS_S -x STARPU_SCHED \
        "$rank_home" "$watched" "$matmul" $job --verify --json "$STARPU_HOME/run.jsonl" >"$out" 2>&1 &
    launch=$!
}

# Beyond the limit: rank 1 stopped for good; the job must end on its own, naming it.
for planner in per-node central; do
    launch $planner 6
    # Per-node: rank 1's own planner has planned; central: rank 0's (every rank is in the run).
    trace="$ranks_dir/rank1.trace"
    [ $planner = central ] && trace="$ranks_dir/rank0.trace"
    wait_for "$trace" && wait_for "$ranks_dir/rank1.pid" || { wait $launch; cat "$out" >&2; fail "$planner: the run never began"; }
    pid=$(cat "$ranks_dir/rank1.pid")
    kill -STOP "$pid" || fail "$planner: could not stop rank 1"
    wait $launch
    rc=$?
    # Whatever happened, nothing of the job stays behind.
    kill -CONT "$pid" 2>/dev/null
    kill -KILL "$pid" 2>/dev/null
    [ "$rc" -ne 0 ] || { cat "$out" >&2; fail "$planner: the job went on with a rank stopped beyond the limit"; }
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || { cat "$out" >&2; fail "$planner: hung until the watchdog (rc $rc)"; }
    grep -q "hetpu: matmul: rank 1 (host [^)]*) sent no progress for [0-9.]* s, beyond the liveness limit of 6.0 s (HETPU_MPI_LIVENESS_S): the job ends on every rank" "$out" ||
        { cat "$out" >&2; fail "$planner: rank 0 must name rank 1, its host and the limit"; }
    grep -q "hetpu: matmul: rank 2 stops: rank 0 ended the job, rank 1 (host " "$out" ||
        { cat "$out" >&2; fail "$planner: rank 2 must say why it stops"; }
    ! grep -q "verified: yes" "$out" || { cat "$out" >&2; fail "$planner: a rank said verified"; }
    echo "ok: $planner: rank 1 stopped beyond a 6 s limit ends the job (rc $rc), named by rank 0"
done

# Within the limit: rank 1 stopped for 3 s of 120, then continued; the job completes verified.
for planner in per-node central; do
    rm -f "$STARPU_HOME/run.jsonl"
    launch $planner 120
    trace="$ranks_dir/rank1.trace"
    [ $planner = central ] && trace="$ranks_dir/rank0.trace"
    wait_for "$trace" && wait_for "$ranks_dir/rank1.pid" || { wait $launch; cat "$out" >&2; fail "$planner: the run never began"; }
    pid=$(cat "$ranks_dir/rank1.pid")
    kill -STOP "$pid" || fail "$planner: could not stop rank 1"
    sleep 3
    kill -CONT "$pid"
    wait $launch || { cat "$out" >&2; fail "$planner: rank 1 stopped for 3 s of a 120 s limit must continue"; }
    grep -q "verified: yes" "$out" || { cat "$out" >&2; fail "$planner: the continued job must verify"; }
    check_mpi_json "$STARPU_HOME/run.jsonl" 3 32768 || fail "$planner: the continued job's record"
    echo "ok: $planner: rank 1 stopped for 3 s of a 120 s limit, continued, verified"
done
