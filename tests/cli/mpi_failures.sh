#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Failures of one rank are errors of the whole job, never hangs:
# a rank that cannot start (no usable worker, an unknown policy, a bad command line) and
# ranks given different jobs (-n, k-means's -k, --seed) or different data (k-means's points,
# grn's expression data: their fingerprints) each make the launch exit non-zero
# with a message naming the rank and the reason, well before the watchdog (which would
# turn a hang into rc 124). Options that may differ per rank (--json) do not count.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
# A healthy failure takes seconds; a hang is what this test exists to catch.
MPI_TIMEOUT=${MPI_TIMEOUT:-120}
. "$(dirname "$0")/mpi_env.sh"

matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
kmeans="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
[ -x "$matmul" ] || fail "$matmul not built"
[ -x "$kmeans" ] || fail "$kmeans not built"
out="$STARPU_HOME/out"
export STARPU_SCHED=plb-hac

# expect_failure NAME PATTERN... -- MPIRUN ARGS: the launch fails, not by the watchdog, and
# its output holds every PATTERN (fixed strings) and no raw MPI error.
expect_failure() {
    name=$1
    shift
    patterns=""
    while [ "$1" != "--" ]; do
        patterns="$patterns
$1"
        shift
    done
    shift
    hetpu_mpirun "$@" >"$out" 2>&1
    rc=$?
    [ "$rc" -ne 0 ] || { cat "$out" >&2; fail "$name: the launch must fail"; }
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || { cat "$out" >&2; fail "$name: hung until the watchdog (rc $rc)"; }
    echo "$patterns" | while IFS= read -r p; do
        [ -z "$p" ] || grep -qF -- "$p" "$out" || { cat "$out" >&2; echo "missing: $p" >&2; exit 1; }
    done || fail "$name: the message must say '$(echo "$patterns" | tr '\n' ' ')'"
    ! grep -q "MPI_ERR" "$out" || { cat "$out" >&2; fail "$name: a raw MPI error instead of hetpu's message"; }
    echo "ok: $name (rc $rc)"
}

# Rank 2 has no worker at all; ranks 0 and 1 used to wait forever in
# starpu_mpi_shutdown's barrier.
expect_failure "rank without a worker" "hetpu: rank 2 (host " "cannot start: no usable worker" -- \
    -np 2 "$rank_home" "$matmul" -n 256 : \
    -np 1 -x STARPU_NCPU=0 -x STARPU_NOPENCL=0 "$rank_home" "$matmul" -n 256

# An unknown policy on one rank, then on every rank (each rank then fails by itself).
expect_failure "unknown policy on one rank" "rank 1 'no-such-policy'" -- \
    -np 1 "$rank_home" "$matmul" -n 256 : -np 1 -x STARPU_SCHED=no-such-policy "$rank_home" "$matmul" -n 256
expect_failure "unknown policy everywhere" "hetpu: rank 1 (host " "cannot start: unknown policy 'no-such-policy'" -- \
    -np 2 -x STARPU_SCHED=no-such-policy "$rank_home" "$matmul" -n 256

# A bad command line on one rank: it stops before StarPU starts, and must not leave the
# others waiting for it.
expect_failure "bad command line on one rank" "hetpu: rank 1 (host " "cannot start: invalid command line: -n: 0" -- \
    -np 1 "$rank_home" "$matmul" -n 256 : -np 1 "$rank_home" "$matmul" -n 0

# Data that one rank cannot read (an app that loads its data before StarPU starts).
expect_failure "unreadable data on one rank" "hetpu: rank 1 (host " "cannot start: its data could not be read" -- \
    -np 1 "$rank_home" "$kmeans" --generate 2000 -k 4 : -np 1 "$rank_home" "$kmeans" --input "$STARPU_HOME/none.csv" -k 4

# The ranks must run the same job.
expect_failure "different -n" "hetpu: matmul: rank 2 runs a different job than rank 0: n=512 instead of n=256" -- \
    -np 2 "$rank_home" "$matmul" -n 256 : -np 1 "$rank_home" "$matmul" -n 512
expect_failure "different --seed" "hetpu: matmul: rank 1 runs a different job than rank 0: seed=7 instead of seed=42" -- \
    -np 1 "$rank_home" "$matmul" -n 256 : -np 1 "$rank_home" "$matmul" -n 256 --seed 7
expect_failure "different kmeans -k" "hetpu: kmeans: rank 1 runs a different job than rank 0: k=5 instead of k=4" -- \
    -np 1 "$rank_home" "$kmeans" --generate 2000 -k 4 : -np 1 "$rank_home" "$kmeans" --generate 2000 -k 5

# Ranks that read different data under the same name (each its own copy, here each rank in
# its own directory; same sizes, so the same header) stop together, rank 0 naming the rank
# and the file, never "verified" with exit 0; the same bytes under another name are the
# same job.
grn="$HETPU_BUILDDIR/apps/grn/hetpu-grn"
[ -x "$grn" ] || fail "$grn not built"
mkdir -p "$STARPU_HOME/d0" "$STARPU_HOME/d1"
"$kmeans" --generate 2000 --dims 3 -k 4 --seed 1 --write-points "$STARPU_HOME/d0/points.bin" >"$out" 2>&1 &&
    "$kmeans" --generate 2000 --dims 3 -k 4 --seed 2 --write-points "$STARPU_HOME/d1/points.bin" >>"$out" 2>&1 &&
    cp "$STARPU_HOME/d0/points.bin" "$STARPU_HOME/d0/same points.bin" &&
    "$grn" --generate 30 --samples 60 --seed 1 --write-data "$STARPU_HOME/d0/expr.tsv" >>"$out" 2>&1 &&
    "$grn" --generate 30 --samples 60 --seed 2 --write-data "$STARPU_HOME/d1/expr.tsv" >>"$out" 2>&1 ||
    { cat "$out" >&2; fail "writing the data files of the different-data cases"; }
expect_failure "different kmeans points" \
    "hetpu: kmeans: rank 1 read different data than rank 0: its 'points.bin' (fingerprint " "is not rank 0's 'points.bin'" -- \
    -np 1 -wdir "$STARPU_HOME/d0" "$rank_home" "$kmeans" --input points.bin -k 4 --verify : \
    -np 1 -wdir "$STARPU_HOME/d1" "$rank_home" "$kmeans" --input points.bin -k 4 --verify
! grep -q "verified: yes" "$out" || fail "different kmeans points: a rank said verified"
expect_failure "different grn expression data" "hetpu: grn: rank 2 read different data than rank 0: its 'expr.tsv'" -- \
    -np 2 -wdir "$STARPU_HOME/d0" "$rank_home" "$grn" --input expr.tsv --verify : \
    -np 1 -wdir "$STARPU_HOME/d1" "$rank_home" "$grn" --input expr.tsv --verify
! grep -q "verified: yes" "$out" || fail "different grn data: a rank said verified"
hetpu_mpirun -np 1 "$rank_home" "$kmeans" --input "$STARPU_HOME/d0/points.bin" -k 4 --verify : \
    -np 1 "$rank_home" "$kmeans" --input "$STARPU_HOME/d0/same points.bin" -k 4 --verify >"$out" 2>&1 &&
    grep -q "verified: yes" "$out" || { cat "$out" >&2; fail "the same points under another name must run"; }
echo "ok: the same points under another name are the same job"

# What may differ per rank does not count: a JSON path given to one rank only.
json="$STARPU_HOME/ok.jsonl"
hetpu_mpirun -np 1 "$rank_home" "$matmul" -n 128 --verify --json "$json" : -np 1 "$rank_home" "$matmul" -n 128 --verify \
    >"$out" 2>&1 || { cat "$out" >&2; fail "a --json path on rank 0 only must not make the jobs differ"; }
check_mpi_json "$json" 2 128 || fail "JSON line of the run with --json on rank 0 only"
echo "ok: per-rank options (--json) are not part of the job"
