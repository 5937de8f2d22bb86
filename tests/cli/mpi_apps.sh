#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# grn and kmeans over 2 and 3 MPI ranks and over heterogeneous ranks (MPMD, one with the
# PoCL OpenCL worker), verified on rank 0 against their serial references under plb-hac,
# hdss and greedy: one JSON line, every rank ran blocks.
# kmeans also checks that every rank follows rank 0's iterations (a rank that decided
# alone would hang the job: the watchdog would fail the test).
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/mpi_env.sh"

grn="$HETPU_BUILDDIR/apps/grn/hetpu-grn"
km="$HETPU_BUILDDIR/apps/kmeans/hetpu-kmeans"
[ -x "$grn" ] && [ -x "$km" ] || fail "grn or kmeans not built"

for ranks in 2 3; do
    for policy in ${MPI_POLICIES-plb-hac hdss greedy}; do
        json="$STARPU_HOME/grn-$ranks-$policy.jsonl"
        hetpu_mpirun -np $ranks -x STARPU_SCHED=$policy "$rank_home" "$grn" --generate 40 --samples 100 --verify --json "$json" \
            >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "grn on $ranks ranks under $policy"; }
        grep -q "verified against the serial reference search: yes" "$STARPU_HOME/out" || fail "grn not verified"
        # 40 genes, k = 2: 780 subsets.
        check_mpi_json "$json" $ranks 780 || fail "grn JSON line on $ranks ranks under $policy"
        echo "ok: grn on $ranks ranks under $policy"

        json="$STARPU_HOME/km-$ranks-$policy.jsonl"
        hetpu_mpirun -np $ranks -x STARPU_SCHED=$policy "$rank_home" "$km" --generate 20000 --dims 4 -k 6 --verify --json "$json" \
            >"$STARPU_HOME/out" 2>&1 || { cat "$STARPU_HOME/out" >&2; fail "kmeans on $ranks ranks under $policy"; }
        grep -q "verified: yes" "$STARPU_HOME/out" || fail "kmeans not verified"
        check_mpi_json "$json" $ranks - || fail "kmeans JSON line on $ranks ranks under $policy"
        echo "ok: kmeans on $ranks ranks under $policy"
    done
done

# Heterogeneous ranks (MPMD): rank 0 is the CPU + PoCL OpenCL node, ranks 1 and 2 one CPU
# worker each; verified under every policy. plb-hac and hdss place every block on a PU, so
# rank 0's OpenCL worker must have run blocks there.
if [ "$have_opencl" = 1 ]; then
    for policy in ${MPI_POLICIES-plb-hac hdss greedy}; do
        ocl=0
        [ "$policy" != greedy ] && ocl=1
        json="$STARPU_HOME/grn-mpmd-$policy.jsonl"
        hetpu_mpirun \
            -np 1 -x STARPU_SCHED=$policy -x STARPU_NOPENCL=1 -x STARPU_OPENCL_ON_CPUS=1 "$rank_home" "$grn" --generate 40 --samples 100 --verify --json "$json" : \
            -np 2 -x STARPU_SCHED=$policy "$rank_home" "$grn" --generate 40 --samples 100 --verify --json "$json" >"$STARPU_HOME/out" 2>&1 ||
            { cat "$STARPU_HOME/out" >&2; fail "grn on heterogeneous ranks under $policy"; }
        grep -q "verified against the serial reference search: yes" "$STARPU_HOME/out" || fail "grn (MPMD) not verified"
        check_mpi_json "$json" 3 780 $ocl || fail "grn JSON line on heterogeneous ranks under $policy"
        json="$STARPU_HOME/km-mpmd-$policy.jsonl"
        hetpu_mpirun \
            -np 1 -x STARPU_SCHED=$policy -x STARPU_NOPENCL=1 -x STARPU_OPENCL_ON_CPUS=1 "$rank_home" "$km" --generate 20000 --dims 4 -k 6 --verify --json "$json" : \
            -np 2 -x STARPU_SCHED=$policy "$rank_home" "$km" --generate 20000 --dims 4 -k 6 --verify --json "$json" >"$STARPU_HOME/out" 2>&1 ||
            { cat "$STARPU_HOME/out" >&2; fail "kmeans on heterogeneous ranks under $policy"; }
        grep -q "verified: yes" "$STARPU_HOME/out" || fail "kmeans (MPMD) not verified"
        check_mpi_json "$json" 3 - $ocl || fail "kmeans JSON line on heterogeneous ranks under $policy"
        echo "ok: grn and kmeans on heterogeneous ranks under $policy"
    done
fi

# fft2d stays single-node: on 2 ranks it refuses clearly instead of running two copies.
fft="$HETPU_BUILDDIR/apps/fft2d/hetpu-fft2d"
if [ -x "$fft" ]; then
    hetpu_mpirun -np 2 -x STARPU_SCHED=greedy "$rank_home" "$fft" -n 64 >"$STARPU_HOME/out" 2>&1 && fail "fft2d on 2 ranks must refuse"
    grep -q "runs on one node only" "$STARPU_HOME/out" || { cat "$STARPU_HOME/out" >&2; fail "fft2d's refusal is not clear"; }
    echo "ok: fft2d refuses several ranks"
fi
