#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A build without MPI (configure --without-mpi) under a launcher: a
# one-task launch (srun -n1 sets SLURM_STEP_NUM_TASKS=1, mpirun -np 1 OMPI_COMM_WORLD_SIZE=1)
# is a plain run; several tasks are refused with the reason and the fix instead of each
# running the whole job alone. The launchers' variables are set by hand: without MPI there
# is nothing else a launcher gives the program. Builds with MPI test the same decision in
# the unit tests (LaunchDecision) and launch for real in mpi_*.sh.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/node_env.sh"
if grep -q '^#define HETPU_HAVE_MPI 1' "$HETPU_BUILDDIR/config.h"; then
    echo "SKIP: built with MPI (this test is for configure --without-mpi)"
    exit 77
fi
matmul="$HETPU_BUILDDIR/apps/matmul/hetpu-matmul"
[ -x "$matmul" ] || fail "$matmul not built"
out="$STARPU_HOME/out"

for launch in SLURM_STEP_NUM_TASKS=1 OMPI_COMM_WORLD_SIZE=1 PMI_SIZE=1; do
    env "$launch" timeout 300 "$matmul" -n 128 --verify >"$out" 2>&1 ||
        { cat "$out" >&2; fail "a one-task launch ($launch) must run as a plain run"; }
    grep -q "^matmul rep" "$out" || { cat "$out" >&2; fail "no summary from the one-task launch ($launch)"; }
    echo "ok: one task ($launch) runs"
done

for launch in SLURM_STEP_NUM_TASKS=3 OMPI_COMM_WORLD_SIZE=2 PMIX_RANK=0; do
    env "$launch" timeout 300 "$matmul" -n 128 >"$out" 2>&1 && { cat "$out" >&2; fail "several tasks ($launch) must be refused"; }
    grep -qF "hetpu was built without MPI support (configure --without-mpi)" "$out" &&
        grep -qF "run one task, or rebuild with StarPU-MPI" "$out" ||
        { cat "$out" >&2; fail "several tasks ($launch): no clear message"; }
    ! grep -q "Function not implemented" "$out" || { cat "$out" >&2; fail "several tasks ($launch): a raw errno"; }
    echo "ok: several tasks ($launch) refused"
done
