#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# StarPU's own example programs (Debian's starpu-examples), unmodified and written by other
# people, run under every hetpu policy through the preload library on the test node (1 CPU
# worker + 1 OpenCL worker on PoCL). Each exercises a part of StarPU that hetpu's own
# programs do not: reductions combined by tasks StarPU submits itself (cg,
# minmax_reduction), partitioned data and filters (heat, shadow, nf_partition), several
# scheduling contexts (sched_ctx), end dependencies, prologue callbacks, restartable tags,
# handles made at run time, LU and Cholesky task graphs. Each must exit 0 (the examples
# check their own results) within the time limit, and the MGB family must give back every
# device reservation it granted.
#
# Skipped (77) only when the examples are not there or were built against another StarPU
# than the one hetpu was (a site-built StarPU): preloading hetpu into them would then mix
# two StarPU libraries in one process.
. "$(dirname "$0")/node_env.sh"
examples=${STARPU_EXAMPLES_DIR:-/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/starpu/examples}
preload="$HETPU_BUILDDIR/.libs/libhetpu-preload.so"
[ -f "$preload" ] || fail "missing $preload"
if [ ! -x "$examples/cg" ]; then
    echo "SKIP: StarPU's examples are not installed in $examples (apt-get install starpu-examples)"
    exit 77
fi
theirs=$(ldd "$examples/cg" | awk '/libstarpu-/ {print $3; exit}')
ours=$(ldd "$preload" | awk '/libstarpu-/ {print $3; exit}')
if [ -z "$theirs" ] || [ "$theirs" != "$ours" ]; then
    echo "SKIP: StarPU's examples use ${theirs:-no StarPU}, hetpu was built against ${ours:-no StarPU}"
    exit 77
fi

programs="cg minmax_reduction heat shadow nf_partition sched_ctx task_end_dep prologue tag_restartable
dynamic_handles lu_implicit_example_float cholesky_implicit pipeline incrementer"
policies="greedy plb-hac hdss hepopta htpopta mgb mgb-exact sa cg"
out=$STARPU_HOME/out
grants=$STARPU_HOME/grants.jsonl
for prog in $programs; do
    [ -x "$examples/$prog" ] || fail "$examples/$prog is missing from starpu-examples"
    for p in $policies; do
        rm -f "$grants"
        status=0
        (cd "$STARPU_HOME" && HETPU_MGB_TRACE="$grants" LD_PRELOAD="$preload" STARPU_SCHED="$p" \
            timeout 120 "$examples/$prog" </dev/null >"$out" 2>&1) || status=$?
        [ "$status" -ne 124 ] || { tail -20 "$out"; fail "$prog under $p hung (killed after 120 s)"; }
        [ "$status" -eq 0 ] || { tail -20 "$out"; fail "$prog under $p exited $status"; }
        case $p in mgb | mgb-exact | sa | cg)
            if [ -f "$grants" ]; then
                granted=$(grep -c '"event":"grant"' "$grants") || true
                released=$(grep -c '"event":"release"' "$grants") || true
                [ "$granted" -eq "$released" ] ||
                    fail "$prog under $p: $granted device reservations granted, $released given back"
            fi
            ;;
        esac
    done
    echo "  $prog: ok under $policies"
done

# A task object resubmitted as soon as its tag is released, which StarPU does before it runs
# the task's callback: on two CPU workers the next execution can end, callback included,
# before the previous one's callback has started (tag_restartable: 64 tiny tasks resubmitted
# 256 times). The MGB family, which follows completions through the callback, must neither
# crash nor lose a release there; one run in six crashed when it did. Five runs each.
for p in mgb mgb-exact sa cg; do
    for run in 1 2 3 4 5; do
        rm -f "$grants"
        status=0
        (cd "$STARPU_HOME" && STARPU_NCPU=2 STARPU_NOPENCL=0 HETPU_MGB_TRACE="$grants" LD_PRELOAD="$preload" \
            STARPU_SCHED="$p" timeout 120 "$examples/tag_restartable" </dev/null >"$out" 2>&1) || status=$?
        [ "$status" -eq 0 ] || { tail -20 "$out"; fail "tag_restartable on 2 CPU workers under $p exited $status (run $run)"; }
    done
done
echo "  tag_restartable on 2 CPU workers: ok under mgb mgb-exact sa cg, 5 runs each"
echo "starpu_examples: ok"
