#!/bin/sh
# grn and kmeans over 2 and 3 MPI ranks, verified on rank 0 against their serial
# references under plb-hac, hdss and greedy: one JSON line, every rank ran blocks.
# kmeans also checks that every rank follows rank 0's iterations (a rank that decided
# alone would hang the job: the watchdog would fail the test).
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/mpi_env.sh"

grn="$HETPU_BUILDDIR/apps/grn/grn"
km="$HETPU_BUILDDIR/apps/kmeans/kmeans"
[ -x "$grn" ] && [ -x "$km" ] || fail "grn or kmeans not built"

for ranks in 2 3; do
    for policy in ${MPI_POLICIES-plb-hac hdss greedy}; do
        json="$STARPU_HOME/grn-$ranks-$policy.jsonl"
        hetpu_mpirun -np $ranks -x STARPU_SCHED=$policy "$grn" --generate 40 --samples 100 --verify --json "$json" \
            >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "grn on $ranks ranks under $policy"; }
        grep -q "verified against the serial reference search: yes" "$STARPU_HOME/out" || fail "grn not verified"
        # 40 genes, k = 2: 780 subsets.
        check_mpi_json "$json" $ranks 780 || fail "grn JSON line on $ranks ranks under $policy"
        echo "ok: grn on $ranks ranks under $policy"

        json="$STARPU_HOME/km-$ranks-$policy.jsonl"
        hetpu_mpirun -np $ranks -x STARPU_SCHED=$policy "$km" --generate 20000 --dims 4 -k 6 --verify --json "$json" \
            >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "kmeans on $ranks ranks under $policy"; }
        grep -q "verified: yes" "$STARPU_HOME/out" || fail "kmeans not verified"
        check_mpi_json "$json" $ranks - || fail "kmeans JSON line on $ranks ranks under $policy"
        echo "ok: kmeans on $ranks ranks under $policy"
    done
done

# fft2d stays single-node: on 2 ranks it refuses clearly instead of running two copies.
fft="$HETPU_BUILDDIR/apps/fft2d/fft2d"
if [ -x "$fft" ]; then
    hetpu_mpirun -np 2 -x STARPU_SCHED=greedy "$fft" -n 64 >"$STARPU_HOME/out" 2>&1 && fail "fft2d on 2 ranks must refuse"
    grep -q "runs on one node only" "$STARPU_HOME/out" || { cat "$STARPU_HOME/out" >&2; fail "fft2d's refusal is not clear"; }
    echo "ok: fft2d refuses several ranks"
fi
