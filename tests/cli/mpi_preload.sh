#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# An unmodified StarPU-MPI program (starpu_mpi_init_conf, linked against StarPU-MPI only)
# runs on 2 ranks under LD_PRELOAD=libhetpu-preload.so with a hetpu policy on every rank;
# ranks asking for different policies stop the job with a message naming them.
HETPU_BUILDDIR=${HETPU_BUILDDIR:-${abs_top_builddir:-.}}
export HETPU_BUILDDIR
. "$(dirname "$0")/mpi_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/plain_starpu_mpi"
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
[ -x "$prog" ] || fail "missing $prog"
[ -f "$preload" ] || fail "missing $preload"
if ldd "$prog" | grep -q libhetpu; then fail "plain_starpu_mpi must not be linked against hetpu"; fi

out=$STARPU_HOME/out
hetpu_mpirun -np 2 -x HETPU_TEST_PRELOAD="$preload" -x STARPU_SCHED=plb-hac -x HETPU_VERBOSE=1 "$rank_home" "$prog" >"$out" 2>&1 ||
    { cat "$out" >&2; fail "plain StarPU-MPI program under the preload library"; }
[ "$(grep -c 'hetpu: policy plb-hac on' "$out")" -eq 2 ] || { cat "$out" >&2; fail "both ranks must run plb-hac"; }
grep -q "rank 0: x\[0\] = 10" "$out" || { cat "$out" >&2; fail "the program's result"; }
echo "ok: StarPU-MPI program under the preload library on 2 ranks"

hetpu_mpirun -np 1 -x HETPU_TEST_PRELOAD="$preload" -x STARPU_SCHED=plb-hac "$rank_home" "$prog" : \
    -np 1 -x HETPU_TEST_PRELOAD="$preload" -x STARPU_SCHED=dmda "$rank_home" "$prog" >"$out" 2>&1 && fail "different policies must stop the job"
grep -q "the ranks run different policies: rank 0 'plb-hac' rank 1 'dmda'" "$out" || { cat "$out" >&2; fail "no clear message"; }
echo "ok: different policies under the preload library refused"
