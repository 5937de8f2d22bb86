#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# kmeans --checkpoint-every / --restart on the heterogeneous test node (1 CPU + 1 OpenCL
# worker on PoCL): a run checkpointing every iteration is killed with SIGKILL once a
# checkpoint has reached the directory, restarted with --restart, and must end with the
# byte-identical centroids, iteration count and inertia of an uninterrupted run. Then the
# refusals: no checkpoint, another k, other data, a fresh run into a used directory.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/node_env.sh"
. "$(dirname "$0")/catch_run.sh"

km="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
[ -x "$km" ] || fail "$km not built"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed to parse the JSON lines"
d=$STARPU_HOME
ck="$d/ckpt"

# Fixed blocks (eager + --block) so every pass sums in the same order on either worker:
# the centroids are then a pure function of the data, and a restart can reproduce them bit
# for bit. Wide overlapping blobs and --tol 0 make Lloyd take many iterations, so the kill
# lands mid-run; --tol 0 converges only when no centroid moves at all.
export STARPU_SCHED=eager
run="--generate 50000 --dims 2 -k 50 --blobs 50 --sigma 25 --seed 5 --block 5000 --tol 0 --max-iter 3000"

# shellcheck disable=SC2086
"$km" $run --centroids "$d/c_full.csv" --json "$d/full.jsonl" >"$d/out" 2>&1 \
    || { cat "$d/out" >&2; fail "uninterrupted run"; }

# The same run checkpointing every iteration, killed once a second version is complete on
# disk (so the kill does not always hit the first version). catch_run holds the run stopped
# while it looks, so the kill lands mid-run however loaded or fast the machine is.
# shellcheck disable=SC2086
"$km" $run --checkpoint-every 1 --checkpoint-dir "$ck" --centroids "$d/c_killed.csv" >"$d/killed.out" 2>&1 &
pid=$!
signal_run() { signal_pid "$pid" "$1"; }
two_versions() { [ "$(ls "$ck"/kmeans.v*.manifest 2>/dev/null | wc -l)" -ge 2 ]; }
catch_run signal_run two_versions || {
    kill -9 "$pid" 2>/dev/null
    cat "$d/killed.out" >&2
    fail "the checkpointing run ended, or wrote no second checkpoint version in $ck, before the kill"
}
kill -9 "$pid"
wait "$pid" 2>/dev/null
[ ! -e "$d/c_killed.csv" ] || fail "the killed run wrote its centroids: it was not killed mid-run"

# shellcheck disable=SC2086
"$km" $run --checkpoint-every 1 --checkpoint-dir "$ck" --restart --centroids "$d/c_restart.csv" \
    --json "$d/restart.jsonl" >"$d/out" 2>&1 || { cat "$d/out" >&2; fail "--restart run"; }
grep -q "restarted from the checkpoint of iteration" "$d/out" || fail "--restart does not say where it resumed"
cmp -s "$d/c_full.csv" "$d/c_restart.csv" || fail "restarted run's centroids differ from the uninterrupted run's"
python3 - "$d/full.jsonl" "$d/restart.jsonl" <<'PY' || fail "JSON lines of the uninterrupted and restarted runs"
import json, sys
full, restart = (json.loads(open(p).read()) for p in sys.argv[1:3])
assert full["restarted_from"] is None and full["checkpoints"] == 0, full
assert full["converged"] and full["iterations"] >= 50, ("too short a run for the test", full)
r = restart["restarted_from"]
assert isinstance(r, int) and 1 <= r < full["iterations"], restart
for key in ("iterations", "inertia", "converged"):
    assert restart[key] == full[key], (key, full[key], restart[key])
# The restarted process ran only the passes after the checkpoint, and kept checkpointing.
assert restart["passes"] == full["iterations"] - r + 1, restart
assert restart["checkpoints"] == full["iterations"] - r, restart
print("killed and restarted from iteration %d of %d" % (r, full["iterations"]))
PY

# Refusals: exit non-zero with the problem named.
check_refused() {
    expect="$1"
    shift
    "$km" "$@" >/dev/null 2>"$d/err" && fail "kmeans $* succeeded, expected a refusal"
    grep -q -- "$expect" "$d/err" || fail "kmeans $*: message lacks '$expect': $(cat "$d/err")"
}
mkdir "$d/empty"
small="--generate 3000 --dims 2 -k 4"
# shellcheck disable=SC2086
check_refused "no complete kmeans checkpoint" $small --restart --checkpoint-dir "$d/empty"
# shellcheck disable=SC2086
check_refused "no checkpoint directory" $small --restart --checkpoint-dir "$d/missing"
# shellcheck disable=SC2086
check_refused "already holds kmeans checkpoints" $small --checkpoint-every 1 --checkpoint-dir "$ck"
# shellcheck disable=SC2086
check_refused "restart with the same -k" $(echo "$run" | sed "s/-k 50/-k 51/") --restart --checkpoint-dir "$ck"
# Same n, d, k and seed but other points (another --sigma): only the hash of the points differs.
# shellcheck disable=SC2086
check_refused "other points" $(echo "$run" | sed 's/--sigma 25/--sigma 24/') --restart --checkpoint-dir "$ck"
echo "kmeans restart: ok"
