#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Data owned by the ranks that use them (HETPU_MPI_PLANNER=per-node, the default of matmul
# and k-means on several ranks): every rank holds and verifies only its share of B's and C's
# columns (of k-means' points), no
# job data passes through rank 0 unless rank 0 is a party of a re-sharing move, and a
# problem larger than what one rank may allocate runs (where the central planner, which
# needs the whole problem on every rank, refuses it clearly). With a backup copy of every
# block, each block's output is still kept once.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/mpi_env.sh"

matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
[ -x "$matmul" ] || fail "$matmul not built"
check_owned() {  # check_owned JSON RANKS N PLANNER
    python3 - "$@" <<'PY'
import json, sys
path, ranks, n, planner = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lines = open(path).read().splitlines()
assert len(lines) == 1, "one JSON line expected, got %d" % len(lines)
r = json.loads(lines[0])
assert r["verified"] is True, r
assert r["mpi_planner"] == planner, r["mpi_planner"]
reps = r["rank_reports"]
assert [x["rank"] for x in reps] == list(range(ranks)), reps
assert sum(x["elements"] for x in reps) == n, reps
sent = sum(x["data_bytes_sent"] for x in reps)
received = sum(x["data_bytes_received"] for x in reps)
assert sent == received, "every byte sent is received once: %d vs %d" % (sent, received)
if planner == "per-node":
    # The shares partition the job, rank by rank.
    end = 0
    for x in reps:
        assert x["share"][0] == end, reps
        end += x["share"][1]
    assert end == n, reps
    if r["moves"] == 0:
        assert sent == 0, "no move, yet %d data bytes crossed the network" % sent
else:
    # The central planner relays: rank 0 sends the inputs of every other rank's blocks.
    col = 8 * 256  # one column of B (k = 256, double)
    remote = sum(x["elements"] for x in reps if x["rank"] != 0)
    assert reps[0]["data_bytes_sent"] >= remote * col, reps
PY
}

for planner in per-node central; do
    json="$STARPU_HOME/owned-$planner.jsonl"
    rm -f "$json"
    hetpu_mpirun -np 3 -x STARPU_SCHED=plb-hac -x HETPU_MPI_PLANNER=$planner "$rank_home" "$matmul" -n 512 -k 256 --verify \
        --json "$json" >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "3 ranks under the $planner planner"; }
    check_owned "$json" 3 512 $planner || fail "record of the $planner run (see above)"
    echo "ok: 3 ranks, $planner planner, verified, data accounted"
done

# Backup copies on every rank (a copy of every block, HETPU_BACKUP_ALL): each rank's runner
# keeps one output per block, so the shares still add up to the job and C verifies.
json="$STARPU_HOME/owned-copies.jsonl"
rm -f "$json"
hetpu_mpirun -np 2 -x STARPU_SCHED=plb-hac -x HETPU_BACKUP_ALL=1 "$rank_home" "$matmul" -n 256 -k 128 --verify \
    --json "$json" >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "2 ranks with backup copies"; }
check_owned "$json" 2 256 per-node || fail "record of the run with backup copies (see above)"
python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).read()); assert r.get("copies", 0) > 0, r' "$json" ||
    fail "no backup copy ran on rank 0 under HETPU_BACKUP_ALL=1"
echo "ok: 2 ranks, per-node planner, a copy of every block, verified"

# A problem larger than one rank may hold: B and C are 2 x 128 x 32768 doubles (64 MiB);
# each of 4 ranks may hold 24 MiB of them (--max-columns-mib) and holds about a quarter.
json="$STARPU_HOME/owned-big.jsonl"
rm -f "$json"
hetpu_mpirun -np 4 -x STARPU_SCHED=greedy "$rank_home" "$matmul" -m 128 -k 128 -n 32768 --max-columns-mib 24 --verify \
    --json "$json" >"$STARPU_HOME/out" 2>&1 ||
    { cat "$STARPU_HOME/out" >&2; fail "a problem larger than one rank may hold, on 4 ranks"; }
python3 - "$json" <<'PY' || fail "record of the large run (see above)"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[0])
assert r["verified"] is True and r["ranks"] == 4, r
for x in r["rank_reports"]:
    assert x["share"][1] <= 32768 * 0.3, "each rank's share is about a quarter: %s" % x
PY
echo "ok: 64 MiB of columns over 4 ranks holding at most 24 MiB each"
hetpu_mpirun -np 4 -x STARPU_SCHED=greedy -x HETPU_MPI_PLANNER=central "$rank_home" "$matmul" -m 128 -k 128 -n 32768 \
    --max-columns-mib 24 >"$STARPU_HOME/out" 2>&1 &&
    fail "the central planner needs the whole problem on every rank: it must refuse"
grep -q "cannot hold the whole job for the central planner" "$STARPU_HOME/out" ||
    { cat "$STARPU_HOME/out" >&2; fail "no clear message when a rank cannot hold the job"; }
echo "ok: the central planner refuses it clearly"

# k-means holds its points the same way: each rank generates (or reads from a binary file)
# only its share, keeps it from pass to pass, and the ranks sum their partial totals.
# 2,000,000 points x 4 dims are 61 MiB; each of 4 ranks may hold 24 MiB of them.
km="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
[ -x "$km" ] || fail "$km not built"
json="$STARPU_HOME/kmeans-big.jsonl"
rm -f "$json"
hetpu_mpirun -np 4 -x STARPU_SCHED=greedy "$rank_home" "$km" --generate 2000000 --dims 4 -k 8 --max-iter 4 \
    --max-points-mib 24 --verify --json "$json" --centroids "$STARPU_HOME/c4.csv" >"$STARPU_HOME/out" 2>&1 ||
    { cat "$STARPU_HOME/out" >&2; fail "k-means larger than one rank may hold, on 4 ranks"; }
python3 - "$json" <<'PY' || fail "record of the large k-means run (see above)"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[0])
assert r["verified"] is True and r["ranks"] == 4 and r["mpi_planner"] == "per-node", r
end = 0
for x in r["rank_reports"]:
    assert x["share"][0] == end and 0 < x["share"][1] <= 2000000 * 0.3, "a quarter of the points each: %s" % x
    end += x["share"][1]
assert end == 2000000, r["rank_reports"]
PY
echo "ok: 61 MiB of k-means points over 4 ranks holding at most 24 MiB each, verified"
# The same clustering as one process holding everything (to rounding: the ranks add their
# sums in another order).
"$km" --generate 2000000 --dims 4 -k 8 --max-iter 4 --centroids "$STARPU_HOME/c1.csv" >"$STARPU_HOME/out" 2>&1 ||
    { cat "$STARPU_HOME/out" >&2; fail "k-means in one process"; }
python3 - "$STARPU_HOME/c1.csv" "$STARPU_HOME/c4.csv" <<'PY' || fail "4 ranks and one process disagree"
import sys
rows = [[list(map(float, l.split(","))) for l in open(f).read().splitlines()[1:]] for f in sys.argv[1:]]
assert len(rows[0]) == len(rows[1]) == 8, rows
for a, b in zip(*rows):
    for x, y in zip(a, b):
        assert abs(x - y) <= 1e-9 * (1 + abs(x)), (a, b)
PY
echo "ok: the 4 ranks' centroids are one process's"
hetpu_mpirun -np 4 -x STARPU_SCHED=greedy -x HETPU_MPI_PLANNER=central "$rank_home" "$km" --generate 2000000 --dims 4 \
    -k 8 --max-points-mib 24 >"$STARPU_HOME/out" 2>&1 &&
    fail "the central planner needs every point on every rank: it must refuse"
grep -q "rank 0's 2000000 points take 61.0 MiB, more than --max-points-mib 24" "$STARPU_HOME/out" ||
    { cat "$STARPU_HOME/out" >&2; fail "no clear message when a rank cannot hold the points"; }
echo "ok: the central planner refuses it clearly"

# A bad planner name is refused at start-up, naming the variable.
HETPU_MPI_PLANNER=nearest hetpu_mpirun -np 2 -x HETPU_MPI_PLANNER -x STARPU_SCHED=plb-hac "$rank_home" "$matmul" -n 64 \
    >"$STARPU_HOME/out" 2>&1 && fail "HETPU_MPI_PLANNER=nearest must be refused"
grep -q "HETPU_MPI_PLANNER" "$STARPU_HOME/out" || { cat "$STARPU_HOME/out" >&2; fail "the message must name HETPU_MPI_PLANNER"; }
echo "ok: a bad HETPU_MPI_PLANNER is refused"

# Ranks that disagree on the planner are refused, naming the variable (they would otherwise
# run different protocols and wait for each other forever).
hetpu_mpirun -np 1 -x STARPU_SCHED=plb-hac -x HETPU_MPI_PLANNER=central "$rank_home" "$matmul" -n 256 : \
    -np 1 -x STARPU_SCHED=plb-hac -x HETPU_MPI_PLANNER=per-node "$rank_home" "$matmul" -n 256 \
    >"$STARPU_HOME/out" 2>&1 && fail "ranks with different HETPU_MPI_PLANNER must be refused"
grep -q "HETPU_MPI_PLANNER=per-node instead of HETPU_MPI_PLANNER=central\|HETPU_MPI_PLANNER=central instead of" \
    "$STARPU_HOME/out" || { cat "$STARPU_HOME/out" >&2; fail "the message must name HETPU_MPI_PLANNER"; }
echo "ok: ranks with different planners are refused"
