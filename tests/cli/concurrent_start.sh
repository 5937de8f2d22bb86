#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Five threads of an unmodified StarPU program call starpu_init() at once, 100 rounds,
# under libhetpu-preload.so: every round must run the policy named in STARPU_SCHED (it
# once fell back to StarPU's lws in about half of the rounds), for a hetpu policy and a
# StarPU built-in alike.
. "$(dirname "$0")/node_env.sh"
prog="$HETPU_BUILDDIR/tests/programs/concurrent_init"
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
[ -x "$prog" ] || fail "missing $prog"
[ -f "$preload" ] || fail "missing $preload"
# CPU workers only: the race is in the start-up path, and 100 OpenCL start-ups would
# only make the test slow.
export STARPU_NOPENCL=0 STARPU_NCPU=1
for policy in greedy plb-hac dmda; do
    LD_PRELOAD=$preload STARPU_SCHED=$policy "$prog" 100 5 >"$STARPU_HOME/out" 2>"$STARPU_HOME/err" \
        || { cat "$STARPU_HOME/err" >&2; fail "$policy: concurrent_init failed"; }
    [ "$(cat "$STARPU_HOME/out")" = "$policy 100" ] \
        || fail "$policy: rounds per running policy: $(cat "$STARPU_HOME/out")"
done
echo "concurrent start: ok"
